"""numpy's shape functions over the shape primitives."""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray
from functrans.primitives import shape_ops as S

__all__ = ['reshape', 'transpose', 'stack']


def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported.")
    a = asarray(a)
    shape = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}.")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
        shape = tuple(a.size // known if s == -1 else s for s in shape)
    return S.reshape(a, shape)


def transpose(a, axes=None):
    a = asarray(a)
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(x % a.ndim for x in axes)
    return S.transpose(a, axes)


def stack(arrays, axis=0):
    raise NotImplementedError("stack lands with the shape-op surface")
