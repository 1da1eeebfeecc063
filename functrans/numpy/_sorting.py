"""Sorting and searching: sort and argsort (the `sort` / `argsort` primitives), and nonzero,
flatnonzero and argwhere, whose result shapes depend on the values: they need concrete values,
or a static `size=` (as in JAX) under a trace."""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.trace import Tracer, install_array_methods
from functrans.errors import ConcretizationTypeError
from functrans.numpy._core import asarray
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives import sorting as P
from functrans.primitives.indexing import scatter_add
from functrans.primitives.shape_ops import slice_

__all__ = ["sort", "argsort", "partition", "nonzero", "flatnonzero", "argwhere"]


def _check_kind(name, kind, order):
    if order is not None:
        raise NotImplementedError(f"{name}: order= (structured arrays) is not supported.")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"{name}: unknown kind {kind!r}.")


def _flat_or_axis(a, axis):
    a = asarray(a)
    if axis is None:
        return S.reshape(a, (a.size,)), 0
    if a.ndim == 0:
        raise ValueError("sort/argsort: axis must be None for a 0-d array (numpy: 'axis 0 is "
                         "out of bounds'); use axis=None.")
    ax = operator.index(axis)
    if not -a.ndim <= ax < a.ndim:
        from numpy.exceptions import AxisError
        raise AxisError(f"axis {ax} is out of bounds for an array of dimension {a.ndim}.")
    return a, ax % a.ndim


def sort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """numpy.sort (stable; NaN last). Its derivative moves each tangent with its value.

    >>> import functrans.numpy as fnp
    >>> fnp.sort(fnp.array([3.0, 1.0, 2.0])).tolist()
    [1.0, 2.0, 3.0]
    """
    _check_kind("sort", kind, order)
    a, ax = _flat_or_axis(a, axis)
    out = P.sort(a, ax)
    # as jax.numpy: the ascending sort reversed (tied entries come out in reverse order)
    return S.rev(out, (ax,)) if descending else out


def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """numpy.argsort: the indices that sort `a` (stable: ties keep their order; int64, no
    derivative). descending=True (as in jax.numpy) keeps ties in input order too."""
    _check_kind("argsort", kind, order)
    a, ax = _flat_or_axis(a, axis)
    if not descending:
        return P.argsort(a, ax)
    # a stable ascending sort of the reversed array, reversed: largest first, ties in order
    n = a.shape[ax]
    j = P.argsort(S.rev(a, (ax,)), ax)
    return S.rev(E.sub(np.asarray(n - 1, j.dtype), j), (ax,))


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """numpy.partition: each `kth` entry in its sorted place, smaller ones before it and larger
    ones after. Returned fully sorted along `axis` (a valid partition; numpy leaves the order
    within each side unspecified, and jax.numpy's differs from numpy's there too), so the
    derivative is sort's.

    >>> import functrans.numpy as fnp
    >>> float(fnp.partition(fnp.array([3.0, 1.0, 2.0]), 1)[1])
    2.0
    """
    if order is not None:
        raise NotImplementedError("partition: order= (structured arrays) is not supported.")
    a, ax = _flat_or_axis(a, axis)
    n = a.shape[ax]
    for k in np.atleast_1d(np.asarray(kth)).tolist():
        if not isinstance(k, int) or not -n <= k < n:
            raise ValueError(f"partition: kth={k!r} is out of bounds for an axis of length "
                             f"{n}; give integers in [{-n}, {n}).")
    return P.sort(a, ax)


# --- nonzero and friends ---------------------------------------------------------------------

def _concrete(a, name, size):
    if isinstance(a, Tracer):
        val = a.concrete_value()
        if val is None and size is None:
            raise ConcretizationTypeError(
                f"{name}: the number of nonzero entries of the traced {a.aval.str_short()} "
                f"decides the result's shape, which must be known while tracing (for "
                f"`{a._trace.main.name}`). Pass a static size: {name}(x, size=n, "
                "fill_value=...) as in JAX, or use where(mask, x, y) to keep the shape.")
        return val
    return np.asarray(a)


def _traced_nonzero(a, size, fill_value):
    """The flat positions of the first `size` nonzero entries of `a`, padded with `fill_value`
    (one per axis may be given): each hit scatters its position to slot rank = (running count
    - 1); misses and hits past `size` go to an extra slot that is dropped."""
    n = a.size
    flat = S.reshape(a, (n,))
    hit = flat if flat.dtype == np.bool_ else E.ne(flat, np.zeros((), flat.dtype))
    count = R.cumsum(S.convert_element_type(hit, np.int64), 0)
    slot = E.select(hit, E.sub(count, np.ones((), np.int64)), np.asarray(size, np.int64))
    slot = E.min(slot, np.asarray(size, np.int64))
    pos = scatter_add(np.zeros(size + 1, np.int64), slot, np.arange(n, dtype=np.int64), axis=0)
    pos = slice_(pos, (0,), (size,))
    total = R.reduce_sum(S.convert_element_type(hit, np.int64), (0,))
    filled = E.lt(np.arange(size, dtype=np.int64), total)
    fills = np.broadcast_to(np.asarray(0 if fill_value is None else fill_value, np.int64),
                            (max(a.ndim, 1),))
    out = []
    for axis, stride in enumerate(np.cumprod((a.shape + (1,))[::-1])[::-1][1:]):
        coord = E.rem(E.floor_divide(pos, np.asarray(stride, np.int64)),
                      np.asarray(a.shape[axis], np.int64))
        out.append(E.select(filled, coord, np.asarray(fills[axis], np.int64)))
    return tuple(out)


def nonzero(a, *, size=None, fill_value=None):
    """numpy.nonzero: one index array per axis. A traced `a` needs a static `size` (as in JAX):
    the first `size` hits, padded with `fill_value` (default 0)."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("nonzero: calling nonzero on 0d arrays is not allowed (numpy); use "
                         "atleast_1d(x).nonzero() instead.")
    val = _concrete(a, "nonzero", size)
    if val is None:
        return _traced_nonzero(a, operator.index(size), fill_value)
    idx = np.nonzero(val)
    if size is None:
        return idx
    size = operator.index(size)
    fills = np.broadcast_to(np.asarray(0 if fill_value is None else fill_value), (a.ndim,))
    return tuple(np.concatenate([i[:size], np.full(max(size - i.size, 0), f, i.dtype)])
                 for i, f in zip(idx, fills))


def flatnonzero(a, *, size=None, fill_value=None):
    """numpy.flatnonzero: indices of the nonzero entries of the raveled array."""
    a = asarray(a)
    return nonzero(S.reshape(a, (a.size,)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """numpy.argwhere: the indices of nonzero entries, one row per entry, shape (N, a.ndim)."""
    a = asarray(a)
    if a.ndim == 0:
        val = _concrete(a, "argwhere", size)
        if val is None:
            return np.zeros((operator.index(size), 0), np.int64)
        return np.argwhere(val) if size is None else np.zeros((operator.index(size), 0),
                                                                np.int64)
    idx = nonzero(a, size=size, fill_value=fill_value)
    if all(isinstance(i, np.ndarray) for i in idx):
        return np.stack(idx, axis=1)
    return S.concatenate([S.reshape(i, (i.shape[0], 1)) for i in idx], 1)


install_array_methods({
    # x.sort() returns the sorted array, as in JAX (tracers are immutable)
    "sort": lambda self, axis=-1, kind=None, order=None, *, stable=True, descending=False:
        sort(self, axis, kind, order, stable=stable, descending=descending),
    "argsort": lambda self, axis=-1, kind=None, order=None, *, stable=True, descending=False:
        argsort(self, axis, kind, order, stable=stable, descending=descending),
    "nonzero": lambda self, *, size=None, fill_value=None: nonzero(
        self, size=size, fill_value=fill_value),
})
