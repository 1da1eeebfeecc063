"""Inlining calls: a call equation (a nested jit) is replaced by the equations of its program,
with fresh variables, so the other passes and the code generator see one flat program."""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr, Literal, Var
from functrans.transforms.toolkit.facts import fact
from functrans.transforms.toolkit.rewrite import ProgramBuilder


def splice(b: ProgramBuilder, inner: ClosedJaxpr, args) -> list:
    """Append the equations of `inner` applied to the atoms `args`; returns its output atoms."""
    env: dict = {}
    for v, c in zip(inner.jaxpr.constvars, inner.consts):
        env[v] = b.add_const(c, v.aval)
    env.update(zip(inner.jaxpr.invars, args))

    def read(a):
        return a if type(a) is Literal else env[a]

    for eqn in inner.jaxpr.eqns:
        outs = [Var(v.aval) for v in eqn.outvars]
        b.append(eqn.primitive, [read(a) for a in eqn.invars], outs, eqn.params)
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in inner.jaxpr.outvars]


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replace every call equation (primitives with a `call_param` fact) by its program."""
    b = ProgramBuilder(closed)
    for eqn in closed.jaxpr.eqns:
        ins = [b.read(a) for a in eqn.invars]
        param = fact(eqn.primitive, "call_param")
        if param is None:
            b.keep(eqn, ins)
            continue
        b.bind_outputs(eqn, splice(b, inline_calls(eqn.params[param]), ins))
    return b.finish(closed.jaxpr.outvars) if b.changed else closed
