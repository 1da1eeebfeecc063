"""Evaluating a Jaxpr by re-binding each equation, so it runs under whatever trace is active."""

from __future__ import annotations

from functrans.core.ir import Jaxpr, Literal
from functrans.core.trace import bind


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Run `jaxpr` on `args`: eagerly on arrays, or transformed when `args` are tracers."""
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"eval_jaxpr: the program takes {len(jaxpr.invars)} inputs, "
                        f"got {len(args)}.")
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a):
        return a.val if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        outs = bind(eqn.primitive, *map(read, eqn.invars), **eqn.params)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, outs):
                env[v] = x
        else:
            env[eqn.outvars[0]] = outs
    return [read(v) for v in jaxpr.outvars]
