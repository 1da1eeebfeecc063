"""numpy's index tricks: `r_` and `c_` (arrays built by concatenating slices, scalars and
arrays along an axis) and `unravel_index` (flat indices to coordinates). Traced items are
joined with the `concatenate` primitive, so the result is differentiable in them.

>>> import functrans.numpy as fnp
>>> fnp.r_[1:4, 0, fnp.zeros(2)].tolist()
[1.0, 2.0, 3.0, 0.0, 0.0, 0.0]
>>> fnp.c_[[1, 2], [3, 4]].tolist()
[[1, 3], [2, 4]]
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from functrans.core.trace import Tracer
from functrans.errors import ArgumentError
from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype
from functrans.numpy._creation import arange, linspace
from functrans.numpy._shape import concatenate, reshape, transpose

__all__ = ["r_", "c_", "unravel_index"]


def _ndmin(a, ndmin: int):
    """`a` with leading length-one axes added up to `ndmin` axes (numpy.array's ndmin)."""
    return reshape(a, (1,) * (ndmin - a.ndim) + tuple(a.shape)) if a.ndim < ndmin else a


class _AxisConcatenator:
    """numpy's AxisConcatenator: `obj[items]` joins the items along `axis` (slices become
    arange/linspace, a leading string 'axis[,ndmin[,trans1d]]' sets the layout)."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self._name, self._axis, self._ndmin, self._trans1d = name, axis, ndmin, trans1d

    def __repr__(self):
        return f"functrans.numpy.{self._name}"

    def __len__(self):
        return 0

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        objs, typed = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ArgumentError(f"{self._name}: the directive {item!r} must be the "
                                        "first item (numpy's rule), as in r_['0,2', a, b].")
                if item in ("r", "c"):
                    raise ArgumentError(f"{self._name}: the matrix directives 'r' and 'c' "
                                        "build numpy.matrix, which functrans does not have; "
                                        "use '0,2' (rows) or '1,2' (columns) instead.")
                try:
                    vec = [int(x) for x in item.split(",")]
                except ValueError:
                    raise ArgumentError(f"{self._name}: unknown directive {item!r}; give "
                                        "'axis', 'axis,ndmin' or 'axis,ndmin,trans1d' as "
                                        "integers.") from None
                axis = vec[0]
                if len(vec) > 1:
                    ndmin = vec[1]
                if len(vec) > 2:
                    trans1d = vec[2]
                continue
            if isinstance(item, slice):
                new = self._from_slice(item)
                if ndmin > 1:
                    new = _ndmin(new, ndmin)
                    if trans1d != -1:
                        new = transpose(new, _swapped(new.ndim, -1, trans1d))
                typed.append(new)
            elif isinstance(item, numbers.Number | np.generic | bool):
                new = _ndmin(asarray(item), ndmin)
                typed.append(item)  # a Python scalar takes part in promotion as numpy's does
            else:
                a = asarray(item)
                item_ndim = a.ndim
                new = _ndmin(a, ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k2 = ndmin - item_ndim
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    axes = list(range(ndmin))
                    new = transpose(new, axes[:k1] + axes[k2:] + axes[k1:k2])
                typed.append(new)
            objs.append(new)
        if not objs:
            return np.array([])
        dtype = result_dtype(*typed)
        objs = [asarray(o, dtype) for o in objs]
        return concatenate(objs, axis=axis)

    def _from_slice(self, item: slice):
        start = 0 if item.start is None else item.start
        step = 1 if item.step is None else item.step
        if any(isinstance(v, Tracer) for v in (start, item.stop, step)):
            raise ArgumentError(f"{self._name}: a slice's start, stop and step fix the "
                                "result's length, so they must be concrete; pass a traced "
                                "array as an item instead of a slice.")
        if isinstance(step, complex | np.complexfloating):
            return linspace(start, item.stop, num=int(abs(step)))
        return arange(start, item.stop, step)


def _swapped(ndim, i, j):
    axes = list(range(ndim))
    axes[i], axes[j] = axes[j], axes[i]
    return axes


r_ = _AxisConcatenator("r_", axis=0, ndmin=1, trans1d=-1)
r_.__doc__ = """numpy.r_: slices, scalars and arrays joined along the first axis."""
c_ = _AxisConcatenator("c_", axis=-1, ndmin=2, trans1d=0)
c_.__doc__ = """numpy.c_: 1-d items as columns, joined along the last axis."""


def unravel_index(indices, shape, order: str = "C"):
    """numpy.unravel_index: a tuple of coordinate arrays for flat `indices` into `shape`.

    Concrete indices out of range raise ValueError as in numpy; traced ones are clipped to
    [-size, size - 1] and negative ones wrap, as jax.numpy does (no error can be raised on a
    traced value). Integer results: no derivative.

    >>> import functrans.numpy as fnp
    >>> [int(i) for i in fnp.unravel_index(7, (2, 4))]
    [1, 3]
    """
    if order not in ("C", "F"):
        raise ArgumentError(f"unravel_index: order must be 'C' or 'F', got {order!r}.")
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else \
        tuple(operator.index(s) for s in shape)
    if not isinstance(indices, Tracer):
        return np.unravel_index(indices, shape, order=order)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {indices.dtype}; cast "
                        "them with .astype(int) first.")
    size = int(np.prod(shape, dtype=np.int64))
    dims = shape if order == "C" else shape[::-1]
    idx = E.clip(indices, -size, size - 1)
    idx = E.where(E.less(idx, 0), E.add(idx, size), idx)
    out = []
    for d in reversed(dims):
        out.append(E.remainder(idx, d) if d else idx)
        idx = E.floor_divide(idx, d) if d else idx
    out = out[::-1]
    return tuple(out if order == "C" else out[::-1])
