"""numpy's reductions (axis, keepdims) over the reduction primitives."""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray
from functrans.primitives import reductions as R
from functrans.primitives.shape_ops import convert_element_type, reshape

__all__ = ['sum', 'mean']


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}.")
    return tuple(sorted(a % max(ndim, 1) for a in axes))


def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return reshape(out, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def sum(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    if dtype is None and (a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer)):
        dtype = np.sum(np.zeros(0, a.dtype)).dtype  # numpy's default accumulator
    if dtype is not None:
        a = convert_element_type(a, dtype)
    axes = _axes(axis, a.ndim)
    return _keep(R.reduce_sum(a, axes), a.shape, axes, keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    a = asarray(a)
    if not np.issubdtype(a.dtype, np.inexact):
        a = convert_element_type(a, np.float64 if dtype is None else dtype)
    axes = _axes(axis, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    from functrans.numpy._elementwise import true_divide
    return true_divide(sum(a, axes, dtype, keepdims), n)
