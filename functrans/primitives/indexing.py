"""Indexing primitives: static slices, and (integer-array) gather with its dual scatter-add."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray
from functrans.errors import ShapeError
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import linear_jvp, moveaxis

M = "indexing"


# --- slice: x[start:limit:stride] per axis, all static ---------------------------------------

def slice_(x, start_indices, limit_indices, strides=None):
    nd = np.ndim(x)
    strides = tuple(strides) if strides is not None else (1,) * nd
    if tuple(start_indices) == (0,) * nd and tuple(limit_indices) == tuple(np.shape(x)) and \
            strides == (1,) * nd:
        return x
    return slice_p.bind(x, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices), strides=strides)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    return x[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    ok = len(start_indices) == len(limit_indices) == len(strides) == x.ndim and all(
        0 <= s <= l <= d and st >= 1
        for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape))
    if not ok:
        raise ShapeError(f"slice: start {start_indices}, limit {limit_indices}, strides "
                         f"{strides} do not fit an operand of shape {x.shape}.")
    shape = tuple(max(0, -(-(l - s) // st))
                  for s, l, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    from functrans.primitives.shape_ops import pad
    shape = x.aval.shape
    out_shape = np.shape(ct)
    config = []
    for s, st, d, n in zip(start_indices, strides, shape, out_shape):
        # element i of the slice sits at s + i*st; interior padding st-1 spaces them out
        used = s + (n - 1) * st + 1 if n else s
        config.append((s, d - used if n else d - s, st - 1 if n else 0))
    return [pad(ct, np.zeros((), ct.dtype), tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    x = moveaxis(vals[0], dims[0], 0)
    return slice_p.bind(x, start_indices=(0, *start_indices),
                        limit_indices=(x.shape[0], *limit_indices),
                        strides=(1, *strides)), 0


slice_p = define("slice", module=M, impl=_slice_impl, abstract=_slice_abstract,
                 transpose=_slice_transpose, batch=_slice_batch, props=("linear",),
                 torch_name="SliceBackward0")
slice_p.rules["jvp"] = linear_jvp(slice_p)
