"""Dead-code elimination: drop equations whose outputs no output depends on."""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr, Jaxpr, Var


def dce_jaxpr(jaxpr: Jaxpr, used_outputs=None) -> Jaxpr:
    """A copy of `jaxpr` without dead equations (primitives are pure, so any unused one is
    dead, except those with the fact `effectful`). `used_outputs` (booleans) keeps only some
    outputs."""
    outvars = jaxpr.outvars if used_outputs is None else \
        [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or "effectful" in eqn.primitive.facts:
            kept.append(eqn)
            live.update(v for v in eqn.invars if isinstance(v, Var))
    kept.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, kept)


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """DCE over a ClosedJaxpr, also dropping constants nothing reads any more. Returns `closed`
    itself when nothing is dead."""
    jaxpr = dce_jaxpr(closed.jaxpr)
    used = {v for e in jaxpr.eqns for v in e.invars if isinstance(v, Var)}
    used.update(v for v in jaxpr.outvars if isinstance(v, Var))
    pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in used]
    if len(jaxpr.eqns) == len(closed.jaxpr.eqns) and len(pairs) == len(closed.consts):
        return closed
    jaxpr = Jaxpr([v for v, _ in pairs], jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    out = ClosedJaxpr(jaxpr, [c for _, c in pairs])
    out.out_tree = closed.out_tree
    return out
