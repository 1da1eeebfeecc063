"""Indexing primitives: (integer-array) gather with its dual scatter-add. (Static slices are
in shape_ops.)

`gather(operand, indices, axis=a)` takes along one axis with an integer index array of any
shape: the result has shape operand.shape[:a] + indices.shape + operand.shape[a+1:], like
`numpy.take(operand, indices, axis=a)`. `scatter_add(operand, indices, updates, axis=a)` is its
dual, `numpy.add.at(operand.copy(), (slice(None),) * a + (indices,), updates)`. Each is the
other's transpose. Indices are a non-differentiable operand that may itself be traced.

Out-of-range indices are clamped into [0, n - 1] by both primitives (so they stay each other's
transposes), as JAX clamps traced indices. Negative indices are clamped to 0 here too: the numpy
layer (functrans.numpy) wraps negative indices before it binds, and rejects out-of-range indices
it can see at trace time, as numpy does. Multi-axis integer indexing `x[i, j]` is lowered by the
numpy layer to one gather on a reshaped operand with the raveled index `i * n + j`.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import add, gt_p, lt_p, mul, select
from functrans.primitives.layout import bdim_at, instantiate, moveaxis, reshape
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import iota


# --- gather / scatter_add: take along one axis with an integer index array -------------------

def gather(operand, indices, *, axis: int):
    """The entries of `operand` at integer `indices` along `axis` (take_along_axis's layout)."""
    return gather_p.bind(operand, indices, axis=int(axis))


def scatter_add(operand, indices, updates, *, axis: int):
    """`operand` with `updates` added at `indices` along `axis` (repeated indices add up)."""
    return scatter_add_p.bind(operand, indices, updates, axis=int(axis))


def clamp_index(i, n: int):
    """Integer indices clamped into [0, n - 1] with primitives (so they may be traced)."""
    lo, hi = np.zeros((), i.dtype), np.asarray(max(n - 1, 0), i.dtype)
    return select(gt_p.bind(i, hi), hi, select(lt_p.bind(i, lo), lo, i))


def _gathered_shape(name, x, i, axis):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"{name}: axis {axis} is out of range for an operand of shape "
                         f"{x.shape}.")
    if not np.issubdtype(i.dtype, np.integer):
        raise DTypeError(f"{name}: indices must have an integer dtype, got {i.dtype.name}. "
                         "Convert them with .astype(int) (booleans: use nonzero() on a concrete "
                         "mask, or functrans.numpy.where).")
    if x.shape[axis] == 0 and i.size:
        raise ShapeError(f"{name}: cannot index {i.shape} positions along axis {axis} of shape "
                         f"{x.shape}, which is empty.")
    return x.shape[:axis] + i.shape + x.shape[axis + 1:]


def _gather_impl(x, i, *, axis):
    return xp.take(x, i, axis=axis, mode="clip")


def _gather_abstract(x, i, *, axis):
    return ShapedArray(_gathered_shape("gather", x, i, axis), x.dtype)


def _gather_jvp(primals, tangents, *, axis):
    x, i = primals
    x_dot, _ = tangents  # integer indices have no tangent
    out = gather(x, i, axis=axis)
    return out, gather(x_dot, i, axis=axis)


def _gather_transpose(ct, x, i, *, axis):
    if is_undefined(i):
        raise TypeError("gather: the indices cannot be a linear input; only the operand is.")
    zeros = instantiate(Zero(x.aval))
    return [scatter_add(zeros, i, ct, axis=axis), None]


def _merge_batch_into_axis(x, axis, i, idd):
    """x with its batch axis (at `axis`, just before the indexed axis) merged into that axis,
    and indices (batch axis at `idd`) offset to the merged positions: the per-example take
    becomes one gather. Indices are clamped per example first so an out-of-range index never
    reaches a neighbouring example."""
    size, n = x.shape[axis], x.shape[axis + 1]
    x = reshape(x, x.shape[:axis] + (size * n,) + x.shape[axis + 2:])
    offsets = mul(iota(i.dtype, i.shape, idd), np.asarray(n, i.dtype))
    return x, add(clamp_index(i, n), offsets)


def _gather_batch(vals, dims, *, axis):
    # the gathered index axes replace `axis`; a batch axis of the indices lands among them
    x, i = vals
    xd, idd = dims
    if idd is None:
        axis = axis + (axis >= xd)
        return gather(x, i, axis=axis), xd if xd < axis else xd - 1 + ndim_of(i)
    if xd is not None:
        x, i = _merge_batch_into_axis(moveaxis(x, xd, axis), axis, i, idd)
    return gather(x, i, axis=axis), axis + idd


gather_p = define("gather", impl=_gather_impl, abstract=_gather_abstract,
                  jvp=_gather_jvp, transpose=_gather_transpose, batch=_gather_batch,
                  props=("linear",), torch_name="IndexBackward0")


def _scatter_add_impl(x, i, u, *, axis):
    out = xp.array(x, copy=True)
    n = out.shape[axis]
    xp.add.at(out, (slice(None),) * axis + (xp.clip(i, 0, max(n - 1, 0)),), u)
    return out


def _scatter_add_abstract(x, i, u, *, axis):
    want = _gathered_shape("scatter_add", x, i, axis)
    if u.shape != want or u.dtype != x.dtype:
        raise ShapeError(f"scatter_add: updates {u} must have shape operand.shape[:axis] + "
                         f"indices.shape + operand.shape[axis+1:] = {want} and the operand's "
                         f"dtype {x.dtype.name} (operand {x}, indices {i}, axis {axis}). "
                         "Broadcast or convert the updates first.")
    return ShapedArray(x.shape, x.dtype)


def _scatter_add_jvp(primals, tangents, *, axis):
    x, i, u = primals
    x_dot, _, u_dot = tangents
    out = scatter_add(x, i, u, axis=axis)
    if type(u_dot) is Zero:
        return out, x_dot
    return out, scatter_add(instantiate(x_dot), i, u_dot, axis=axis)


def _scatter_add_transpose(ct, x, i, u, *, axis):
    if is_undefined(i):
        raise TypeError("scatter_add: the indices cannot be a linear input.")
    return [ct if is_undefined(x) else None, None,
            gather(ct, i, axis=axis) if is_undefined(u) else None]


def _scatter_add_batch(vals, dims, *, axis):
    x, i, u = vals
    xd, idd, ud = dims
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    if idd is None:
        # the operand keeps its batch axis (an unbatched one gets it first); the updates'
        # batch axis goes where the operand's lands in the gathered shape
        xd = 0 if xd is None else xd
        x_axis = axis + (axis >= xd)
        u_bd = xd if xd < x_axis else xd - 1 + ndim_of(i)
        x, u = bdim_at(x, dims[0], size, xd), bdim_at(u, ud, size, u_bd)
        return scatter_add(x, i, u, axis=x_axis), xd
    x = bdim_at(x, xd, size, axis)
    shape = x.shape
    x, i = _merge_batch_into_axis(x, axis, i, idd)
    out = scatter_add(x, i, bdim_at(u, ud, size, axis + idd), axis=axis)
    return reshape(out, shape), axis


scatter_add_p = define("scatter_add", impl=_scatter_add_impl,
                       abstract=_scatter_add_abstract, jvp=_scatter_add_jvp,
                       transpose=_scatter_add_transpose, batch=_scatter_add_batch,
                       props=("linear",), torch_name="IndexPutBackward0")
