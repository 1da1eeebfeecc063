"""Array creation: array, zeros, ones, full, arange, linspace, eye, ...

These return concrete numpy arrays (constants to any trace). The `*_like` functions read only
the shape and dtype of their argument, so on a tracer they return a broadcast constant (a
`broadcast_in_dim` of a scalar when staged). `linspace` with traced endpoints is computed with
primitives, so it is differentiable in `start` and `stop`.
"""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.ownership import unaliased
from functrans.core.trace import Tracer
from functrans.errors import ConcretizationTypeError
from functrans.core.array import Array, as_arrays
from functrans.numpy._core import asarray as _asarray
from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.primitives.shape_ops import broadcast_to
from functrans.backend import adapter_of
from functrans.backends import call_traced
from functrans.numpy._results import foreign_adapter

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity", "tri", "tril",
           "triu", "diag", "diagflat", "meshgrid"]


def asarray(a, dtype=None):
    """numpy.asarray, as functrans's `Array`: no copy where numpy makes none (a numpy array
    comes back as an `Array` view of the same memory; an `Array` of the dtype asked is
    returned itself); a list holding tracers stacks them into a traced array.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a = np.arange(3.0)
    >>> b = fnp.asarray(a)
    >>> np.shares_memory(a, b), fnp.asarray(b) is b
    (True, True)
    """
    if type(a) is Array and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    if (adapter := foreign_adapter((a,))) is not None:  # a dask or CuPy array (or a list)
        return _library_array(asarray, adapter, a, dtype, copy=False)
    return as_arrays(_asarray(a, dtype))


asarray.returns_arrays = True


def array(object, dtype=None, *, copy=True, ndmin=0):
    """numpy.array, as functrans's `Array` (a copy unless copy=False); a list containing
    tracers stacks them into a traced array."""
    if (adapter := foreign_adapter((object,))) is not None:  # a dask or CuPy array
        out = _library_array(array, adapter, object, dtype, copy=copy)
        return out if out.ndim >= ndmin else out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    out = _asarray(object, dtype)
    if isinstance(out, np.ndarray) and copy and isinstance(object, np.ndarray) \
            and np.may_share_memory(out, object):
        out = out.copy()
    if out.ndim < ndmin:
        from functrans.primitives.shape_ops import reshape
        out = reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return as_arrays(out)


array.returns_arrays = True


def _library_array(fn, adapter, a, dtype, copy):
    """asarray/array of an array of another library: that library's array (converted to
    `dtype`; copied where `copy` asks and the library's arrays are mutable)."""
    if adapter_of(a) is None:  # a list holding such arrays: stacked, on that library
        return call_traced(fn, adapter, (a,), {"dtype": dtype})
    from functrans.backend import using
    with using(adapter):
        return adapter.namespace()["array" if copy else "asarray"](a, dtype=dtype)


def _shape_arg(shape, name):
    try:
        return tuple(operator.index(d) for d in shape) if np.iterable(shape) \
            else (operator.index(shape),)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got {shape!r}. "
                        "Shapes are static: read them from .shape, never from array values.") \
            from None


def zeros(shape, dtype=None):
    """numpy.zeros: an array of zeros (a constant, so no derivative flows from it)."""
    return np.zeros(_shape_arg(shape, "zeros"), dtype)


def ones(shape, dtype=None):
    """numpy.ones: an array of ones (a constant)."""
    return np.ones(_shape_arg(shape, "ones"), dtype)


def empty(shape, dtype=None):
    """Like numpy.empty but zero-filled: uninitialised memory is never useful to a trace."""
    return np.zeros(_shape_arg(shape, "empty"), dtype)


def full(shape, fill_value, dtype=None):
    """numpy.full: `fill_value` broadcast to `shape`; a traced fill value stays differentiable."""
    if isinstance(fill_value, Tracer):
        fill_value = _asarray(fill_value, dtype)
        return broadcast_to(fill_value, np.broadcast_shapes(_shape_arg(shape, "full"),
                                                            fill_value.shape))
    return np.full(_shape_arg(shape, "full"), fill_value, dtype)


def _like(name, a, fill, dtype, shape):
    if isinstance(a, Tracer):
        dtype = a.dtype if dtype is None else np.dtype(dtype)
        shape = a.shape if shape is None else _shape_arg(shape, name)
        if isinstance(fill, Tracer):
            return broadcast_to(_asarray(fill, dtype), shape)
        return broadcast_to(np.asarray(fill, dtype), shape)
    a = np.asarray(a)
    shape = a.shape if shape is None else _shape_arg(shape, name)
    if isinstance(fill, Tracer):
        return broadcast_to(_asarray(fill, a.dtype if dtype is None else dtype), shape)
    return np.full(shape, fill, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    """numpy.zeros_like: zeros with the shape (and dtype) of `a`; never depends on `a`'s values."""
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    """numpy.ones_like: ones with the shape (and dtype) of `a`; never depends on `a`'s values."""
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    """numpy.empty_like, filled with zeros so that traced and eager runs agree."""
    return _like("empty_like", a, 0, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    """numpy.full_like: `fill_value` with the shape (and dtype) of `a`."""
    return _like("full_like", a, fill_value, dtype, shape)


def _static(x, fname, what):
    if isinstance(x, Tracer):
        val = x.concrete_value()
        if val is None:
            raise ConcretizationTypeError(
                f"{fname}: `{what}` is a traced value {x.aval.str_short()}, but it decides the "
                "shape of the result, which must be known while tracing. Pass a Python number "
                "(mark the argument static with static_argnums).")
        return np.asarray(val)[()]
    return x


def arange(start, stop=None, step=None, dtype=None):
    """numpy.arange; `start`, `stop` and `step` must be concrete (they fix the shape)."""
    start = _static(start, "arange", "start")
    stop = _static(stop, "arange", "stop")
    step = _static(step, "arange", "step")
    if stop is None:
        return np.arange(start, step=step if step is not None else 1, dtype=dtype)
    return np.arange(start, stop, step if step is not None else 1, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace; differentiable in traced `start` and `stop`.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> float(ft.grad(lambda b: fnp.sum(fnp.linspace(0.0, b, 5)))(1.0))
    2.5
    """
    num = operator.index(_static(num, "linspace", "num"))
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative.")
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                           axis=axis)
    return _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis)


def _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis):
    from functrans.numpy import _elementwise as E
    from functrans.numpy._core import result_dtype
    from functrans.numpy._shape import moveaxis, reshape
    start, stop = _asarray(start), _asarray(stop)
    dt = result_dtype(start, stop, 1.0)
    start, stop = _asarray(start, dt), _asarray(stop, dt)
    div = (num - 1) if endpoint else num
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    delta = E.subtract(stop, start)
    step = E.true_divide(delta, div) if div > 0 else delta * np.nan
    frac = np.arange(num, dtype=dt).reshape((num,) + (1,) * len(shape))
    if div > 0:
        frac = frac / div
    out = E.add(reshape(start, (1, *shape)), E.multiply(frac, reshape(delta, (1, *shape))))
    if endpoint and num > 1:  # numpy makes the last sample exactly `stop`
        last = np.zeros((num,) + (1,) * len(shape), bool)
        last[-1] = True
        out = E.where(last, reshape(stop, (1, *shape)), out)
    out = moveaxis(out, 0, axis)
    if dtype is not None:
        out = _asarray(out, dtype)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=float):
    """numpy.eye: ones on the `k`-th diagonal of an `N` x `M` array (a constant)."""
    return np.eye(N, M, k=k, dtype=dtype)


def identity(n, dtype=None):
    """numpy.identity: the `n` x `n` identity matrix (a constant)."""
    return np.identity(n, dtype)


def tri(N, M=None, k=0, dtype=float):
    """numpy.tri: ones at and below the `k`-th diagonal (a constant)."""
    return np.tri(N, M, k=k, dtype=dtype)


def _triangle(m, k, name, lower):
    m = _asarray(m)
    if m.ndim == 0:
        raise ValueError(f"{name}: input must be at least 1-d, got a 0-d array.")
    if m.ndim == 1:  # numpy repeats a vector as the rows of a square matrix
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    n, cols = m.shape[-2:]
    k = operator.index(k)
    keep = np.tri(n, cols, k, dtype=bool) if lower else ~np.tri(n, cols, k - 1, dtype=bool)
    return E.select(keep, m, np.zeros((), m.dtype))


def tril(m, k=0):
    """numpy.tril: entries above the k-th diagonal set to zero (last two axes)."""
    return _triangle(m, k, "tril", lower=True)


def triu(m, k=0):
    """numpy.triu: entries below the k-th diagonal set to zero (last two axes)."""
    return _triangle(m, k, "triu", lower=False)


def diag(v, k=0):
    """numpy.diag: a 1-d `v` placed on the k-th diagonal of a square matrix, or the k-th
    diagonal of a 2-d `v`.

    >>> import functrans.numpy as fnp
    >>> fnp.diag(fnp.array([1, 2]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    v = _asarray(v)
    k = operator.index(k)
    if v.ndim == 2:
        from functrans.numpy._shape import diagonal
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {v.shape}. For the "
                         "diagonals of a stack of matrices use diagonal(a, axis1=-2, axis2=-1).")
    n = v.shape[0]
    m = n + abs(k)
    # in the raveled (m, m) matrix the diagonal is a run with stride m + 1: one pad spaces v
    # out with interior zeros (linear in v, so no multiply by an identity: inf stays inf)
    if n == 0:
        flat = S.pad(v, np.zeros((), v.dtype), ((0, m * m, 0),))
    else:
        start = k if k >= 0 else -k * m
        used = start + (n - 1) * (m + 1) + 1
        flat = S.pad(v, np.zeros((), v.dtype), ((start, m * m - used, m),))
    return S.reshape(flat, (m, m))


def diagflat(v, k=0):
    """numpy.diagflat: `v` raveled onto the k-th diagonal."""
    v = _asarray(v)
    return diag(S.reshape(v, (v.size,)), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy.meshgrid: coordinate arrays from 1-d coordinate vectors (each input is raveled).
    indexing='xy' (Cartesian, numpy's default) swaps the first two output axes; 'ij' does not.

    >>> import functrans.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.zeros(2), fnp.zeros(3))]
    [(3, 2), (3, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}.")
    xs = [_asarray(x) for x in xi]
    xs = [S.reshape(x, (x.size,)) if x.ndim != 1 else x for x in xs]
    nd = len(xs)
    sizes = [x.shape[0] for x in xs]
    axes = list(range(nd))
    if indexing == "xy" and nd > 1:
        axes[0], axes[1] = 1, 0   # x varies along axis 1, y along axis 0
    shape = [0] * nd
    for size, ax in zip(sizes, axes):
        shape[ax] = size
    out = []
    for x, ax in zip(xs, axes):
        if sparse:
            out.append(S.reshape(x, tuple(s if i == ax else 1 for i, s in enumerate(shape))))
        else:
            out.append(S.broadcast_in_dim(x, tuple(shape), (ax,)))
    if copy:  # new, writable arrays, as numpy's (else views, read-only as numpy's are)
        out = unaliased(out, xs)
    return tuple(out)
