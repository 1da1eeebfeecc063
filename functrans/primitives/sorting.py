"""Sorting along one axis: `sort` (values, differentiable) and `argsort` (integer indices).

Both are stable and order as numpy does: NaN last, -0.0 and 0.0 equal (kept in input order).
The derivative of sort moves the tangent with the values: t_out = t gathered by argsort(x)
along the axis, so at ties the entries keep their input order, as JAX's sort does.
"""

from __future__ import annotations

import math

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.symbolic import Zero
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import add, mul
from functrans.primitives.indexing import gather
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import reshape


def sort(x, axis: int = -1):
    """`x` sorted along `axis`."""
    return sort_p.bind(x, axis=int(axis) % max(ndim_of(x), 1))


def argsort(x, axis: int = -1, index_dtype=np.int64):
    """The indices that sort `x` along `axis` (stable), as `index_dtype`."""
    return argsort_p.bind(x, axis=int(axis) % max(ndim_of(x), 1),
                          index_dtype=np.dtype(index_dtype))


def take_along(x, indices, axis: int):
    """x[..., indices[..., i, ...], ...] along `axis` for integer `indices` of x's shape (numpy's
    take_along_axis), as one gather on the raveled x: a row-major flat position is the entry's
    own position with its `axis` coordinate replaced by the index."""
    shape = tuple(shape_of(x))
    size = math.prod(shape)
    stride = math.prod(shape[axis + 1:])
    coords = np.arange(size, dtype=np.dtype(indices.dtype)).reshape(shape)
    base = coords - (coords // stride) % shape[axis] * stride if size else coords
    pos = add(base, mul(indices, np.asarray(stride, indices.dtype)))
    return reshape(gather(reshape(x, (size,)), pos, axis=0), shape)


def _check_axis(name, x, axis):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"{name}: axis {axis} is out of range for an operand of shape "
                         f"{x.shape}; sorting needs an operand of rank >= 1 (reshape 0-d values "
                         "to (1,)).")
    if x.dtype.kind == "c":
        raise DTypeError(f"{name}: complex operands are not supported; sort the real and "
                         "imaginary parts as keys yourself.")


def _sort_abstract(x, *, axis):
    _check_axis("sort", x, axis)
    return ShapedArray(x.shape, x.dtype)


def _sort_jvp(primals, tangents, *, axis):
    x, = primals
    t, = tangents
    out = sort_p.bind(x, axis=axis)
    return out, take_along(t, argsort(x, axis), axis)


def _axis_batch(prim):
    """The sorted axis steps over the batch axis, which stays where it is."""
    def rule(vals, dims, *, axis, **params):
        x, = vals
        d, = dims
        return prim.bind(x, axis=axis + (d <= axis), **params), d
    return rule


sort_p = define("sort", impl=lambda x, *, axis: xp.sort(x, axis=axis, kind="stable"),
                abstract=_sort_abstract, jvp=_sort_jvp, torch_name="SortBackward0")
sort_p.rules["batch"] = _axis_batch(sort_p)


def _argsort_abstract(x, *, axis, index_dtype):
    _check_axis("argsort", x, axis)
    if not np.issubdtype(index_dtype, np.integer):
        raise DTypeError(f"argsort: index_dtype must be an integer dtype, got {index_dtype}.")
    return ShapedArray(x.shape, index_dtype)


def _argsort_impl(x, *, axis, index_dtype):
    return xp.argsort(x, axis=axis, kind="stable").astype(index_dtype)


def _argsort_jvp(primals, tangents, *, axis, index_dtype):
    # integer indices: no derivative (a symbolic zero, as for argmax)
    out = argsort_p.bind(*primals, axis=axis, index_dtype=index_dtype)
    return out, Zero(ShapedArray(shape_of(out), out.dtype))


argsort_p = define("argsort", impl=_argsort_impl, abstract=_argsort_abstract,
                   jvp=_argsort_jvp)
argsort_p.rules["batch"] = _axis_batch(argsort_p)
