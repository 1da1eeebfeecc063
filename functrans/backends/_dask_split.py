"""Splitting a program for chunked points: which values are per-point, where they are reduced.

The pass behind functrans.backends.dask_jit (its docstring says what the split is for). Each
equation with a per-point operand gets a split rule: row-wise (the points axis goes through, at
a known output position, maybe with its params naming the chunk's size), a reduction over the
points (a sum, max, min, ... whose chunk partials combine), or unsplittable (it mixes points
across chunks). Levels count the reductions a value waits for: one pass over the chunks per
level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrans.core.ir import ClosedJaxpr, Var
from functrans.transforms.toolkit.facts import fact


class Unsplittable(Exception):
    """An equation that mixes points across chunks (the program falls back to one chunk)."""


@dataclass(frozen=True)
class _Rowwise:
    out_axis: int            # where the points axis sits in the output
    # (params, rows) -> the params for a chunk of `rows` points, where they name a size
    rewrite: Any = None


def _shape_params(full, axis):
    """Params that hold the output shape get its points entry set to the chunk's rows."""
    full = tuple(full)

    def rewrite(params, rows):
        small = tuple(rows if k == axis else s for k, s in enumerate(full))
        return {k: (small if isinstance(p, tuple | list) and tuple(p) == full else p)
                for k, p in params.items()}
    return rewrite


@dataclass(frozen=True)
class _Reduce:
    combine: str             # how chunk partials combine: "sum", "max", "min", "prod", "all", "any"


def _shape(a) -> tuple:
    return tuple(a.aval.shape)


def _elementwise_rule(eqn, axes, n):
    # numpy broadcasting, aligned from the right: every per-point operand must put the points
    # axis at the same output position, and no parameter-sized operand may span it
    rank = len(_shape(eqn.outvars[0]))
    out = {a + rank - len(_shape(v)) for v, a in zip(eqn.invars, axes) if a is not None}
    if len(out) != 1:
        raise Unsplittable("its per-point operands put the points axis at different positions")
    k = out.pop()
    for v, a in zip(eqn.invars, axes):
        p = k - (rank - len(_shape(v)))
        if a is None and 0 <= p < len(_shape(v)) and _shape(v)[p] != 1:
            raise Unsplittable(f"a parameter-sized operand of shape {_shape(v)} spans the "
                               "points axis")
    return _Rowwise(k)


def _contraction_rule(eqn, axes, n):
    (lc, rc), (lb, rb) = fact(eqn.primitive, "contraction")(eqn.params)
    al, ar = axes
    lhs_free = [d for d in range(len(_shape(eqn.invars[0]))) if d not in lc and d not in lb]
    rhs_free = [d for d in range(len(_shape(eqn.invars[1]))) if d not in rc and d not in rb]
    if al is not None and ar is not None:
        if al in lc and ar in rc and lc.index(al) == rc.index(ar):
            return _Reduce("sum")  # X^T @ delta: partial products per chunk, summed
        if al in lb and ar in rb and lb.index(al) == rb.index(ar):
            return _Rowwise(lb.index(al))
        raise Unsplittable("it pairs every point with every other point")
    if al is not None:
        if al not in lhs_free:
            raise Unsplittable("its other operand is parameter-sized along the points axis")
        return _Rowwise(len(lb) + lhs_free.index(al))
    if ar not in rhs_free:
        raise Unsplittable("its other operand is parameter-sized along the points axis")
    return _Rowwise(len(lb) + len(lhs_free) + rhs_free.index(ar))


def _axes_reduction(combine):
    def rule(eqn, axes, n):
        red = tuple(int(a) for a in eqn.params["axes"])
        a = axes[0]
        if a in red:
            return _Reduce(combine)
        return _Rowwise(a - sum(r < a for r in red))
    return rule


def _sum_rule(eqn, axes, n):
    red = tuple(fact(eqn.primitive, "sum_axes")(eqn.params))
    a = axes[0]
    return _Reduce("sum") if a in red else _Rowwise(a - sum(r < a for r in red))


def _reshape_like_rule(eqn, axes, n):
    # row-major order is kept: the points axis survives where the sizes before and after it
    # match on both sides (the chunk is then the same rows of the output)
    src, dst = _shape(eqn.invars[0]), _shape(eqn.outvars[0])
    a = axes[0]
    before, after = int(np.prod(src[:a])), int(np.prod(src[a + 1:]))
    for k in range(len(dst)):
        if dst[k] == n and int(np.prod(dst[:k])) == before \
                and int(np.prod(dst[k + 1:])) == after:
            return _Rowwise(k, _shape_params(dst, k))
    raise Unsplittable(f"it folds the points axis into others ({src} -> {dst})")


def _broadcast_rule(eqn, axes, n):
    _, dims = fact(eqn.primitive, "broadcast")(eqn.params)
    k = dims[axes[0]]
    return _Rowwise(k, _shape_params(_shape(eqn.outvars[0]), k))


def _transpose_rule(eqn, axes, n):
    return _Rowwise(tuple(eqn.params["permutation"]).index(axes[0]))


def _concatenate_rule(eqn, axes, n):
    if len(set(axes)) != 1 or axes[0] is None or axes[0] == eqn.params["dimension"]:
        raise Unsplittable("it joins arrays along the points axis or mixes per-point and "
                           "parameter-sized operands")
    return _Rowwise(axes[0])


def _slice_rule(eqn, axes, n):
    a, p = axes[0], eqn.params
    if p["start_indices"][a] == 0 and p["limit_indices"][a] == n \
            and (p["strides"] is None or p["strides"][a] == 1):
        def rewrite(params, rows):
            limit = tuple(rows if k == a else s for k, s in enumerate(p["limit_indices"]))
            return {**params, "limit_indices": limit}
        return _Rowwise(a, rewrite)
    raise Unsplittable("it slices the points axis")


# Reductions other than the sum, and shape operations no jit fact describes, by name: the
# split rule is a property of how an operation indexes its operands, which the table's facts
# state for the elementwise, contraction, sum, broadcast and reshape-like rows only.
_RULES_BY_NAME = {
    "reduce_max": _axes_reduction("max"), "reduce_min": _axes_reduction("min"),
    "reduce_prod": _axes_reduction("prod"), "reduce_and": _axes_reduction("all"),
    "reduce_or": _axes_reduction("any"), "transpose": _transpose_rule,
    "concatenate": _concatenate_rule, "slice": _slice_rule,
}


def _split_rule(eqn, axes, n):
    prim = eqn.primitive
    if prim.multiple_results or fact(prim, "effectful"):
        raise Unsplittable("it has several results or an effect")
    if "elementwise" in prim.props:
        return _elementwise_rule(eqn, axes, n)
    if fact(prim, "contraction") is not None:
        return _contraction_rule(eqn, axes, n)
    if fact(prim, "sum_axes") is not None:
        return _sum_rule(eqn, axes, n)
    if fact(prim, "broadcast") is not None:
        return _broadcast_rule(eqn, axes, n)
    if fact(prim, "reshape_like"):
        return _reshape_like_rule(eqn, axes, n)
    rule = _RULES_BY_NAME.get(prim.name)
    if rule is None:
        raise Unsplittable("no split rule says how it indexes the points axis")
    return rule(eqn, axes, n)


def _promoted_broadcast(eqn, sizes):
    """A parameter-sized value broadcast along a new axis of a points-axis length (the
    transpose of a mean does this): per-point along it, the same rows in every chunk."""
    bc = fact(eqn.primitive, "broadcast")
    if bc is None:
        return None
    shape, dims = bc(eqn.params)
    src = _shape(eqn.invars[0])
    for k, size in enumerate(shape):
        if size in sizes and size > 1 and (k not in dims or src[dims.index(k)] == 1):
            return size, k
    return None


# --- the plan --------------------------------------------------------------------------------

@dataclass
class _Pass:
    """One chunked pass: the per-point program at one level of reductions (chunk c of every
    array of points is one task)."""
    level: int
    invars: list                   # inputs: parameter-sized, points, reduced vars
    partials: list                 # reduction results computed per chunk
    outs: list                     # per-point program outputs of this level
    eqns: list                     # indices into the program's equations, in order


@dataclass
class SplitPlan:
    """How a program runs on chunked points (see the module docstring). `reason` is None when
    it splits; otherwise the equation that mixes points across chunks, and why."""
    closed: ClosedJaxpr
    points: dict = field(default_factory=dict)     # var -> (group size, points axis)
    level: dict = field(default_factory=dict)      # var -> level of reductions before it
    reduce: dict = field(default_factory=dict)     # eqn index -> _Reduce
    rewrite: dict = field(default_factory=dict)    # eqn index -> (params, rows) -> params
    passes: list = field(default_factory=list)
    post_eqns: list = field(default_factory=list)
    reduced: list = field(default_factory=list)    # vars that hold reductions over the points
    reason: str | None = None

    @property
    def chunk_eqns(self) -> int:
        """Equations run per chunk, over all passes."""
        return sum(len(p.eqns) for p in self.passes)


def _level_of(plan, a):
    return plan.level.get(a, 0) if type(a) is Var else 0


def split_plan(closed: ClosedJaxpr, in_sizes) -> SplitPlan:
    """Split `closed` for inputs that are per-point along axis 0 (`in_sizes[i]` their number
    of points) or parameter-sized (`in_sizes[i]` None)."""
    plan = SplitPlan(closed)
    jaxpr = closed.jaxpr
    for v, n in zip(jaxpr.invars, in_sizes):
        if n is not None:
            plan.points[v] = (n, 0)
    sizes = {n for n in in_sizes if n is not None}
    for i, eqn in enumerate(jaxpr.eqns):
        level = max((_level_of(plan, a) for a in eqn.invars), default=0)
        info = [plan.points.get(a) if type(a) is Var else None for a in eqn.invars]
        groups = {g[0] for g in info if g is not None}
        if not groups:
            promoted = _promoted_broadcast(eqn, sizes)
            if promoted is not None:
                plan.points[eqn.outvars[0]] = promoted
                plan.rewrite[i] = _shape_params(_shape(eqn.outvars[0]), promoted[1])
            for v in eqn.outvars:
                plan.level[v] = level
            continue
        try:
            if len(groups) > 1:
                raise Unsplittable(f"it mixes points of arrays of {sorted(groups)} rows")
            n = groups.pop()
            rule = _split_rule(eqn, [g and g[1] for g in info], n)
        except Unsplittable as e:
            plan.reason = f"equation {i} ({eqn.primitive.name}): {e}"
            return plan
        if isinstance(rule, _Reduce):
            plan.reduce[i] = rule
            plan.reduced.append(eqn.outvars[0])
            plan.level[eqn.outvars[0]] = level + 1
        else:
            plan.points[eqn.outvars[0]] = (n, rule.out_axis)
            plan.level[eqn.outvars[0]] = level
            if rule.rewrite is not None:
                plan.rewrite[i] = rule.rewrite
    _make_passes(plan)
    return plan


def _needed(jaxpr, outs, cut):
    """Indices of the equations computing `outs` from `cut` (and the inputs), and the cut and
    input vars they read."""
    need = {v for v in outs if type(v) is Var}
    eqns = []
    for i in range(len(jaxpr.eqns) - 1, -1, -1):
        eqn = jaxpr.eqns[i]
        if not any(v in need and v not in cut for v in eqn.outvars):
            continue
        eqns.append(i)
        need.update(a for a in eqn.invars if type(a) is Var)
    eqns.reverse()
    return eqns, need


def _make_passes(plan):
    jaxpr = plan.closed.jaxpr
    red_eqn = {jaxpr.eqns[i].outvars[0]: i for i in plan.reduce}
    point_outs = [v for v in jaxpr.outvars if type(v) is Var and v in plan.points]
    levels = {plan.level[v] - 1 for v in red_eqn} | {plan.level[v] for v in point_outs}
    for level in sorted(levels):
        partials = [v for v in red_eqn if plan.level[v] == level + 1]
        outs = list(dict.fromkeys(v for v in point_outs if plan.level[v] == level))
        cut = {v for v in plan.reduced if plan.level[v] <= level}
        eqns, need = _needed(jaxpr, partials + outs, cut - set(partials))
        invars = [v for v in jaxpr.invars if v in need]
        invars += [v for v in plan.reduced if v in need and v in cut and v not in partials]
        plan.passes.append(_Pass(level, invars, partials, outs, eqns))
    glob_outs = [v for v in jaxpr.outvars if type(v) is Var and v not in plan.points]
    plan.post_eqns, _ = _needed(jaxpr, glob_outs, set(plan.reduced))
