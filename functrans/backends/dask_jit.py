"""`jit` over chunked dask arrays of points: one fused task per chunk, dask tree reductions.

A jitted function called with dask arrays (chunked along axis 0, the points axis) does not run
its program equation by equation on dask (one task per equation per chunk). The program is
split on the IR instead:

- a pass over the jaxpr marks each variable per-point (it carries the points axis of some input,
  at a known position) or parameter-sized, and finds where per-point values are reduced over
  the points axis (a sum or max/min over it, a contraction over it such as the X^T @ delta of a
  weight gradient);
- the per-point part becomes ONE program per chunk (the same jitted numpy code, staged at the
  chunk's shape), which returns the partial results of the reductions, packed into one vector
  per kind of reduction, and the per-point outputs of the program;
- dask's tree reductions (`sum`/`max`/`min`/... over the stacked partials) combine the chunks;
- the rest of the program (parameter-sized) runs as one task on the reduced values.

A program whose reduced values feed more per-point work (x / sum(x)) runs in passes, one per
level of reductions. The call returns dask arrays (lazy); `compute(tree)` computes a pytree of
them in one `dask.compute`. A program that mixes points across chunks (a sort, a cumulative sum
or a slice along the points axis, a parameter-sized operand that spans the points axis, such as
closed-over collocation points) cannot be split: it runs as one task on the points rechunked
to one chunk (correct, not parallel) with a `dask.array.PerformanceWarning` naming the equation.

This module imports dask only when called with dask arrays; `import functrans` never does.
"""

from __future__ import annotations

import functools
import sys
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.cache import LRUCache
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from functrans.core.staging import trace_to_jaxpr
from functrans.core.trace import bind, find_top_trace
from functrans.errors import ArgumentTypeError
from functrans.primitives.registry import REGISTRY
from functrans.transforms.jit.codegen import compile_program
from functrans.transforms.jit.facts import fact
from functrans.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["compute", "holds_dask", "split_plan", "SplitPlan"]


# --- recognising dask inputs -----------------------------------------------------------------

def _is_dask_array(x) -> bool:
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)


def holds_dask(args, kwargs) -> bool:
    """Whether a pytree of arguments holds a dask array (cheap when dask is not imported)."""
    if "dask.array" not in sys.modules:
        return False
    return any(_is_dask_array(x) for x in tree_flatten((args, kwargs))[0])


def compute(tree, **kwargs):
    """Compute every dask array in a pytree in one `dask.compute` (one graph, shared work
    computed once), leaving other leaves as they are; `kwargs` go to `dask.compute`.

    `compute(jit(value_and_grad(loss))(params, points))` is one training step on chunked
    points (docs/scale.md); leaves that are not dask arrays come back as they are:

    >>> from functrans.backends.dask_jit import compute
    >>> compute({"lr": 0.1, "steps": [1, 2]})
    {'lr': 0.1, 'steps': [1, 2]}
    """
    leaves, treedef = tree_flatten(tree)
    pos = [i for i, x in enumerate(leaves) if _is_dask_array(x)]
    if not pos:
        return tree
    import dask
    # a jitted program's parameter-sized results are one task's outputs: compute that task
    # (one result travels back) rather than a task per result
    wanted, tasks = [], {}
    for i in pos:
        found = _RESULTS.peek(leaves[i].name)
        if found is None:
            wanted.append(leaves[i])
        else:
            tasks.update((d.key, d) for d in found[0])
    values = dask.compute(*wanted, *tasks.values(), **kwargs)
    by_key = dict(zip(tasks, values[len(wanted):]))
    it = iter(values[:len(wanted)])
    leaves = list(leaves)
    for i in pos:
        found = _RESULTS.peek(leaves[i].name)
        leaves[i] = next(it) if found is None else \
            found[1]([by_key[d.key] for d in found[0]])
    return tree_unflatten(treedef, leaves)


# --- the split rules: how each primitive treats the points axis ------------------------------

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


# --- staging a part of the program at the chunk's shape --------------------------------------

def _chunk_aval(plan, v, rows):
    """`v`'s aval in a chunk: `rows` maps each number of points to the chunk's rows."""
    if rows is None or v not in plan.points:
        return v.aval
    size, axis = plan.points[v]
    shape = list(v.aval.shape)
    shape[axis] = rows[size]
    return ShapedArray(tuple(shape), v.aval.dtype, getattr(v.aval, "weak_type", False))


def _params_at(plan, i, eqn, rows):
    """The equation's params for a chunk of `rows` points (None: the whole program)."""
    rewrite = plan.rewrite.get(i)
    if rows is None or rewrite is None:
        return eqn.params
    return rewrite(eqn.params, rows[plan.points[eqn.outvars[0]][0]])


def _stage(plan, invars, outvars, eqn_ids, rows, name) -> ClosedJaxpr:
    jaxpr, consts = plan.closed.jaxpr, plan.closed.consts

    def run(*vals):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(invars, vals))

        def read(a):
            return a.val if type(a) is Literal else env[a]

        for i in eqn_ids:
            eqn = jaxpr.eqns[i]
            out = bind(eqn.primitive, *map(read, eqn.invars), **_params_at(plan, i, eqn, rows))
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
        return [read(v) for v in outvars]

    avals = [_chunk_aval(plan, v, rows) for v in invars]
    return trace_to_jaxpr(run, avals, name=name, capture_consts=True)


# --- tasks: staged programs that travel to the workers ---------------------------------------

def _portable(value):
    """`value` with every primitive replaced by its name (primitives hold rule functions that
    do not pickle); `_restore` undoes it in the worker process."""
    if isinstance(value, ClosedJaxpr):
        return ("closed", _portable(value.jaxpr), list(value.consts))
    if isinstance(value, Jaxpr):
        eqns = [(e.primitive.name, e.invars, e.outvars,
                 {k: _portable(p) for k, p in e.params.items()}) for e in value.eqns]
        return ("jaxpr", value.constvars, value.invars, value.outvars, eqns)
    if isinstance(value, tuple | list):
        return type(value)(_portable(p) for p in value)
    return value


def _restore(value):
    if isinstance(value, tuple) and value and value[0] == "closed":
        return ClosedJaxpr(_restore(value[1]), value[2])
    if isinstance(value, tuple) and value and value[0] == "jaxpr":
        _, constvars, invars, outvars, eqns = value
        return Jaxpr(constvars, invars, outvars,
                     [Eqn(REGISTRY[n], i, o, {k: _restore(p) for k, p in params.items()})
                      for n, i, o, params in eqns])
    if isinstance(value, tuple | list):
        return type(value)(_restore(p) for p in value)
    return value


_COMPILED = LRUCache(64, name="dask chunk programs")


class _Task:
    """A staged program run on numpy blocks: reduced inputs arrive packed (one vector per kind
    of reduction), partial outputs leave packed; compiled once per process (the program travels
    as names and arrays, the compiled code never does)."""

    def __init__(self, closed, unpack, pack):
        self.closed = closed
        self.unpack = unpack    # per reduced input: (packed vector index, offset, shape)
        self.pack = pack        # per packed output: indices of the program outputs it holds
        self.token = uuid.uuid4().hex  # names the program in the worker's cache
        self._program = None

    def __dask_tokenize__(self):
        return self.token

    def __getstate__(self):
        if self._program is None:  # built once, on the first trip out
            self._program = _portable(self.closed)
        return {"program": self._program, "unpack": self.unpack, "pack": self.pack,
                "token": self.token}

    def __setstate__(self, state):
        self.closed = None
        self._program = state["program"]
        self.unpack, self.pack, self.token = state["unpack"], state["pack"], state["token"]

    def _fn(self):
        # with a workspace (buffers reused from call to call, as jit's own entries), safe
        # under threads: a call finding it busy runs on fresh arrays
        if self.closed is None:
            return _COMPILED.get_or_build(
                self.token, lambda: compile_program(_restore(self._program), workspace=True).fn)
        return compile_program(self.closed, workspace=True).fn

    def __call__(self, n_plain, *args):
        plain, packed = list(args[:n_plain]), args[n_plain:]
        for j, off, shape in self.unpack:
            size = int(np.prod(shape))
            plain.append(np.asarray(packed[j]).reshape(-1)[off:off + size].reshape(shape))
        outs = self._fn()(*[np.asarray(x) for x in plain])
        packed_outs = [np.concatenate([np.ravel(outs[k]) for k in idx])[None]
                       for idx in self.pack]
        used = {k for idx in self.pack for k in idx}
        return (*packed_outs, *[o for k, o in enumerate(outs) if k not in used])


# --- building the dask graph -----------------------------------------------------------------

@dataclass
class _Layout:
    """Where each reduced var sits: packed vectors keyed by (level, combine, dtype)."""
    keys: list = field(default_factory=list)
    where: dict = field(default_factory=dict)     # var -> (key index, offset, shape)
    sizes: list = field(default_factory=list)

    def add(self, key, v):
        if key not in self.keys:
            self.keys.append(key)
            self.sizes.append(0)
        j = self.keys.index(key)
        self.where[v] = (j, self.sizes[j], tuple(v.aval.shape))
        self.sizes[j] += int(np.prod(v.aval.shape))


def _layout(plan) -> _Layout:
    layout = _Layout()
    jaxpr = plan.closed.jaxpr
    for i, rule in plan.reduce.items():
        v = jaxpr.eqns[i].outvars[0]
        layout.add((plan.level[v] - 1, rule.combine, np.dtype(v.aval.dtype).str), v)
    return layout


def _task(plan, layout, invars, outvars, eqns, rows, name):
    closed = _stage(plan, invars, outvars, eqns, rows, name)
    plain = [v for v in invars if v not in layout.where]
    reduced = [v for v in invars if v in layout.where]
    # the staged program's inputs: plain ones first, then the reduced ones in `reduced` order
    closed = _reorder_inputs(closed, [invars.index(v) for v in plain + reduced])
    keys = sorted({layout.where[v][0] for v in reduced})
    unpack = [(keys.index(j), off, shape) for j, off, shape in map(layout.where.get, reduced)]
    return closed, plain, unpack, keys


def _reorder_inputs(closed, order):
    j = closed.jaxpr
    out = ClosedJaxpr(Jaxpr(j.constvars, [j.invars[k] for k in order], j.outvars, j.eqns),
                      closed.consts)
    return out


class _Lowering:
    """A program's plan with its tasks, per chunk size (built once per program and layout)."""

    def __init__(self, closed, in_sizes):
        self.plan = split_plan(closed, in_sizes)
        self.layout = _layout(self.plan) if self.plan.reason is None else None
        self.tasks = LRUCache(16, name="dask chunk tasks", register=False)

    def pass_task(self, k, rows):
        def build():
            p = self.plan.passes[k]
            outvars = p.partials + p.outs
            closed, plain, unpack, keys = _task(self.plan, self.layout, p.invars, outvars,
                                                p.eqns, rows, f"dask chunk {k}")
            groups = {}
            for m, v in enumerate(p.partials):
                groups.setdefault(self.layout.where[v][0], []).append(m)
            pack_keys = sorted(groups)
            return (_Task(closed, unpack, [groups[g] for g in pack_keys]), plain, keys,
                    pack_keys)
        return self.tasks.get_or_build((k, tuple(sorted(rows.items()))), build)

    def post_task(self):
        def build():
            jaxpr = self.plan.closed.jaxpr
            outs = [v for v in jaxpr.outvars if type(v) is Var and v not in self.plan.points]
            outs = list(dict.fromkeys(outs))
            _, need = _needed(jaxpr, outs, set(self.plan.reduced))
            invars = [v for v in jaxpr.invars if v in need]
            invars += [v for v in self.plan.reduced if v in need]
            closed, plain, unpack, keys = _task(self.plan, self.layout, invars, outs,
                                                self.plan.post_eqns, None, "dask post")
            return _Task(closed, unpack, []), plain, keys, outs
        return self.tasks.get_or_build("post", build)


def _lowering(closed: ClosedJaxpr, in_sizes) -> _Lowering:
    return closed.derived.get_or_build(("dask split", tuple(in_sizes)),
                                       lambda: _Lowering(closed, in_sizes))


def _placeholder(x):
    """A numpy stand-in with the shape and dtype of dask array `x`, holding no memory: jit
    traces on it."""
    return np.broadcast_to(np.zeros((), x.dtype), x.shape)


def call(entry_for, args, kwargs):
    """Run a jitted function on arguments holding dask arrays; returns dask arrays.

    `entry_for(args, kwargs) -> (entry, leaves)` is the jitted function's traced program for
    the arguments (see functrans.transforms.jit.api)."""

    stand_in = {}

    def swap(x):
        if _is_dask_array(x):
            p = _placeholder(x)
            stand_in[id(p)] = (p, x)
            return p
        return x

    entry, leaves = entry_for(*tree_map(swap, (args, kwargs)))
    if entry.closure or find_top_trace(leaves) is not None:
        raise ArgumentTypeError(
            f"jit({entry.name}): called with dask arrays under an outer transform (grad, vmap, "
            "jit) whose traced values it takes or closes over; a jitted program runs on dask "
            "chunks only as the outermost transform. Apply jit outermost: "
            "jit(grad(f))(params, points), not grad(jit(f)).")
    flat = [stand_in[id(x)][1] if id(x) in stand_in and stand_in[id(x)][0] is x else x
            for x in leaves]
    points = [x if _is_dask_array(x) and x.ndim >= 1 else None for x in flat]
    flat = [np.asarray(x.compute()) if _is_dask_array(x) and x.ndim == 0 else x
            for x in flat]
    in_sizes = tuple(None if p is None else int(p.shape[0]) for p in points)
    low = _lowering(entry.jaxpr, in_sizes)
    if low.plan.reason is not None:
        outs = _run_unsplit(low, entry.jaxpr, flat, points, entry.name)
    else:
        outs = _run_split(low, flat, points)
    return tree_unflatten(entry.out_tree, outs)


def _common_chunks(points):
    """Every array of points chunked whole along its other axes, the arrays of one length
    alike (the first one's row chunks), and every length in as many chunks as the first array
    (chunk c of each is one task). Chunked that way already, nothing moves."""
    first = next(x for x in points if x is not None)
    n = first.numblocks[0]
    chunks = {}
    out = []
    for x in points:
        if x is None:
            out.append(None)
            continue
        size = x.shape[0]
        if size not in chunks:
            own = x.chunks[0]
            chunks[size] = own if len(own) == n else _even(size, n)
        want = (chunks[size], *[(s,) for s in x.shape[1:]])
        out.append(x if x.chunks == want else x.rechunk(want))
    return out, chunks


def _even(size, n):
    base, extra = divmod(size, n)
    return tuple(base + (c < extra) for c in range(n))


# the dask arrays a program's results come back as -> (the Delayed tasks computing them,
# how their values make the result): `compute` runs those tasks (a program's results share
# them) instead of a task per result and per piece
_RESULTS = LRUCache(256, name="dask program results", register=False)


def _run_split(low, flat, points):
    import dask
    import dask.array as da

    plan, layout = low.plan, low.layout
    jaxpr = plan.closed.jaxpr
    points, chunks = _common_chunks(points)
    n_chunks = len(next(iter(chunks.values())))
    blocks = {v: x.to_delayed().ravel() for v, x in zip(jaxpr.invars, points)
              if x is not None}
    value = {v: x for v, x in zip(jaxpr.invars, flat) if _is_plain(x)}
    totals = {}        # packed key index -> Delayed of the combined partials
    outs_by_var = {}   # var -> dask array
    for k, p in enumerate(plan.passes):
        parts = {}
        for c in range(n_chunks):
            rows = {size: rs[c] for size, rs in chunks.items()}
            task, plain, keys, pack_keys = low.pass_task(k, rows)
            args = [blocks[v][c] if v in blocks else value[v] for v in plain]
            packed = [totals[j] for j in keys]
            call_ = dask.delayed(task, pure=False, nout=len(pack_keys) + len(p.outs))
            res = call_(len(plain), *args, *packed, dask_key_name=f"functrans-chunk-{c}-"
                        f"{uuid.uuid4().hex}")
            for m, key in enumerate(pack_keys):
                parts.setdefault(key, []).append(
                    da.from_delayed(res[m], (1, layout.sizes[key]),
                                    dtype=np.dtype(layout.keys[key][2])))
            for m, v in enumerate(p.outs):
                shape = _chunk_aval(plan, v, rows).shape
                parts.setdefault(v, []).append((res[len(pack_keys) + m], shape))
        for key, pieces in parts.items():
            if isinstance(key, Var):
                axis = plan.points[key][1]
                x = da.concatenate([da.from_delayed(d, shape, dtype=key.aval.dtype)
                                    for d, shape in pieces], axis=axis)
                _RESULTS.put(x.name, ([d for d, _ in pieces],
                                      functools.partial(_concatenate, axis=axis)))
                outs_by_var[key] = x
            else:  # dask's tree reduction of the stacked partials
                combine = layout.keys[key][1]
                total = getattr(da.concatenate(pieces, axis=0), combine)(axis=0)
                # as one Delayed, shared by every consumer. Optimising its graph fuses each
                # chunk's task with its partial sum (one task per chunk) but renames the
                # chunk's task: only right when nothing else reads that task
                alone = len(parts) == 1
                totals[key] = total.to_delayed(optimize_graph=alone).ravel()[0]
    task, plain, keys, gouts = low.post_task()
    if gouts:
        args = [value[v] for v in plain]
        packed = [totals[j] for j in keys]
        res = dask.delayed(task, pure=False, nout=len(gouts))(
            len(plain), *args, *packed, dask_key_name=f"functrans-post-{uuid.uuid4().hex}")
        for m, v in enumerate(gouts):
            outs_by_var[v] = _result(res, m, v.aval)
    return [np.array(v.val, dtype=v.aval.dtype) if type(v) is Literal else outs_by_var[v]
            for v in jaxpr.outvars]


def _result(res, m, aval):
    import dask.array as da
    x = da.from_delayed(res[m], aval.shape, dtype=aval.dtype)
    _RESULTS.put(x.name, ([res], lambda values: np.asarray(values[0][m])))
    return x


def _concatenate(values, axis):
    return np.concatenate([np.asarray(v) for v in values], axis=axis)


def _is_plain(x):
    return x is not None and not _is_dask_array(x)


def _run_unsplit(low, closed, flat, points, name):
    """The whole program as one task on the points rechunked to one chunk."""
    import dask
    import dask.array as da
    warnings.warn(
        f"jit({name}) on dask arrays: the program cannot run chunk by chunk "
        f"({low.plan.reason}); it runs as one task on the points rechunked to one chunk. Pass "
        "collocation points as arguments (not closed over) and keep operations that mix "
        "points (sort, cumsum, slices along the points axis) out of the jitted function to "
        "run one task per chunk.", da.PerformanceWarning, stacklevel=4)
    args = [x.rechunk(x.shape) if p is not None else x for x, p in zip(flat, points)]
    task = low.tasks.get_or_build("whole", lambda: _Task(closed, [], []))
    n = len(closed.jaxpr.outvars)
    res = dask.delayed(task, pure=False, nout=n)(
        len(args), *args, dask_key_name=f"functrans-program-{uuid.uuid4().hex}")
    return [_result(res, m, v.aval) for m, v in enumerate(closed.jaxpr.outvars)]
