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

import numpy as np

from functrans.backends._dask_split import SplitPlan, Unsplittable, _needed, split_plan
from functrans.backends._dask_tasks import _chunk_aval, _stage, _Task
from functrans.core.cache import LRUCache
from functrans.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from functrans.core.trace import find_top_trace
from functrans.errors import ArgumentTypeError
from functrans.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["compute", "holds_dask", "split_plan", "SplitPlan", "Unsplittable"]


# --- recognising dask inputs -----------------------------------------------------------------

def _is_dask_array(x) -> bool:
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)


def holds_dask(args, kwargs) -> bool:
    """Whether a pytree of arguments holds a dask array with a points axis (cheap when dask
    is not imported). 0-d dask arrays alone have no chunks to split over: jit runs them as a
    program compiled for dask (functrans.backends.dask), lazily."""
    if "dask.array" not in sys.modules:
        return False
    return any(_is_dask_array(x) and x.ndim >= 1 for x in tree_flatten((args, kwargs))[0])


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
