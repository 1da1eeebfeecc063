"""Transposition: run a linear program backwards, from output cotangents to input cotangents.

Each equation's transpose rule receives the cotangent of its output and, for each input, either
its known value or `UndefinedPrimal` (a linear input). Cotangents of a variable used several
times are summed.
"""

from __future__ import annotations

from functrans.core.ir import Jaxpr, Literal, Var
from functrans.core.primitive import lookup
from functrans.core.symbolic import UndefinedPrimal, Zero
from functrans.core.trace import bind
from functrans.primitives.elementwise import add_tangents


def backward_pass(jaxpr: Jaxpr, consts, cts_out, linear_in=None) -> list:
    """Cotangents of `jaxpr.invars` given cotangents of its outputs. Inputs flagged False in
    `linear_in` are known values passed in `consts` order after the constvars (none by
    default); equations reading only known values are evaluated forward first."""
    env: dict[Var, object] = dict(zip(jaxpr.constvars, consts))
    linear: set[Var] = set(jaxpr.invars)
    if linear_in is not None:
        known_vals = iter(consts[len(jaxpr.constvars):])
        for v, lin in zip(jaxpr.invars, linear_in):
            if not lin:
                env[v] = next(known_vals)
                linear.discard(v)

    # Literals hash by identity, so `v in linear` needs no type test
    lin_eqns = []
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if v in linear:
                lin_eqns.append(eqn)
                linear.update(eqn.outvars)
                break
        else:
            outs = bind(eqn.primitive, *[v.val if type(v) is Literal else env[v]
                                         for v in eqn.invars], **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, outs))
            else:
                env[eqn.outvars[0]] = outs

    ct_env: dict[Var, object] = {}

    def write_ct(v, ct):
        if ct is not None and type(ct) is not Zero and v in linear:
            prev = ct_env.get(v)
            ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    for eqn in reversed(lin_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in cts):
                continue
            ct = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        else:
            ct = ct_env.pop(eqn.outvars[0], None)
            if ct is None:
                continue
        args = [UndefinedPrimal(v.aval) if v in linear else
                v.val if type(v) is Literal else env[v] for v in eqn.invars]
        rule = prim.rules.get("transpose") or lookup(prim, "transpose")
        for v, ct_in in zip(eqn.invars, rule(ct, *args, **eqn.params)):
            write_ct(v, ct_in)
    return [ct_env.pop(v, Zero(v.aval)) if v in linear else None for v in jaxpr.invars]
