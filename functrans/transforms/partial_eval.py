"""Partial evaluation of a program: split it into the part computable from known inputs and
the part that needs the unknown ones, joined by residuals.

Primitives holding sub-programs (jit, control flow) use it in their JVP rules: the JVP program
of the body splits into a primal call (known) and a tangent call (unknown, linear), so the
tangent call alone lands in a linearized program.
"""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr, Jaxpr, Var


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns, instantiate=False):
    """Split `closed` by which inputs are unknown.

    Returns (known, unknown, out_unknowns, num_res):
      known:   known inputs -> (known outputs..., residuals...)
      unknown: (residuals..., unknown inputs...) -> unknown outputs
    `instantiate` (bool or one per output) forces outputs into the unknown program.
    """
    jaxpr = closed.jaxpr
    unknown_vars: set[Var] = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        if any(type(v) is Var and v in unknown_vars for v in eqn.invars):
            unknown_eqns.append(eqn)
            unknown_vars.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
    n_out = len(jaxpr.outvars)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    out_unknowns = [(type(v) is Var and v in unknown_vars) or i
                    for v, i in zip(jaxpr.outvars, inst)]

    # residuals: known variables the unknown side reads (in first-use order, no duplicates)
    residuals: list[Var] = []
    seen: set[Var] = set()

    def need(v):
        if type(v) is Var and v not in unknown_vars and v not in seen:
            seen.add(v)
            residuals.append(v)

    for eqn in unknown_eqns:
        for v in eqn.invars:
            need(v)
    for v, u in zip(jaxpr.outvars, out_unknowns):
        if u:
            need(v)

    known_in = [v for v, u in zip(jaxpr.invars, unknowns) if not u]
    known_out = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known = ClosedJaxpr(Jaxpr(jaxpr.constvars, known_in, known_out + residuals, known_eqns),
                        closed.consts)
    # the unknown side gets fresh binders for residuals so the two programs share no binders
    fresh = {v: Var(v.aval) for v in residuals}
    unknown_in = [v for v, u in zip(jaxpr.invars, unknowns) if u]

    def rename(a):
        return fresh.get(a, a) if type(a) is Var else a

    eqns = [e._replace(invars=[rename(a) for a in e.invars]) for e in unknown_eqns]
    unknown = ClosedJaxpr(
        Jaxpr([], [fresh[v] for v in residuals] + unknown_in,
              [rename(v) for v, u in zip(jaxpr.outvars, out_unknowns) if u], eqns), [])
    return known, unknown, out_unknowns, len(residuals)
