"""`x[...]` for tracers: basic indexing (ints, slices, None, Ellipsis) through slice/reshape."""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray
from functrans.primitives.indexing import slice_
from functrans.primitives.shape_ops import reshape, squeeze

__all__ = []


def getitem(x, idx):
    x = asarray(x)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if any(i is Ellipsis for i in idx):
        k = idx.index(Ellipsis)
        n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        idx = idx[:k] + (slice(None),) * (x.ndim - n_real) + idx[k + 1:]
    n_real = sum(1 for i in idx if i is not None)
    if n_real > x.ndim:
        raise IndexError(f"too many indices for an array of shape {x.shape}: {idx}")
    idx = idx + (slice(None),) * (x.ndim - n_real)
    starts, limits, strides, squeezed, out_shape = [], [], [], [], []
    axis = 0
    flips = []
    for i in idx:
        if i is None:
            out_shape.append(1)
            continue
        d = x.shape[axis]
        if isinstance(i, slice):
            s, l, st = i.indices(d)
            if st < 0:
                n = len(range(s, l, st))
                s_new = s + (n - 1) * st if n else 0
                starts.append(s_new)
                limits.append(s + 1 if n else 0)
                strides.append(-st)
                flips.append(axis)
                out_shape.append(n)
            else:
                n = len(range(s, l, st))
                starts.append(s)
                limits.append(max(s, l) if n else s)
                strides.append(st)
                out_shape.append(n)
        elif isinstance(i, int | np.integer):
            i = int(i)
            if not -d <= i < d:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {d}")
            i %= d
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeezed.append(axis)
        else:
            raise NotImplementedError(f"index {i!r} of type {type(i).__name__} lands with the "
                                      "indexing surface")
        axis += 1
    out = slice_(x, starts, limits, strides)
    if flips:
        raise NotImplementedError("negative strides land with the indexing surface")
    out = squeeze(out, squeezed) if squeezed else out
    return reshape(out, tuple(out_shape)) if len(out_shape) != out.ndim else out
