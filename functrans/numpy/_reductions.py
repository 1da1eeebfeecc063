"""numpy's reductions (axis, keepdims, numpy's accumulator dtypes) over the reduction
primitives: sum, mean, var, std, prod, max/min, argmax/argmin, cumsum/cumprod, all/any,
count_nonzero, average, ptp.

>>> import functrans.numpy as fnp
>>> import numpy as np
>>> x = np.array([[1, 5, 2], [4, 0, 6]])
>>> fnp.sum(x, axis=0), float(fnp.mean(x)), fnp.argmax(x, axis=1)
(array([5, 5, 8]), 3.0, array([1, 2]))
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from functrans.core.array import Array
from functrans.core.trace import trace_state as _trace_state  # read only: the eager test
from functrans.core.trace import install_array_methods
from functrans.core.ownership import owned
from functrans.errors import ShapeError
from functrans.numpy._core import asarray, promote
from functrans.backends import call_traced
from functrans.numpy._results import foreign_adapter, like_inputs
from functrans.primitives import elementwise as E
from functrans.primitives.ad_control import stop_gradient
from functrans.primitives import reductions as R
from functrans.primitives.shape_ops import (broadcast_to, convert_element_type, expand_dims,
                                            pad, reshape, slice_)

__all__ = ['sum', 'mean', 'var', 'std', 'prod', 'max', 'min', 'amax', 'amin', 'ptp', 'argmax',
           'argmin', 'cumsum', 'cumprod', 'all', 'any', 'count_nonzero', 'average', 'diff']


# --- axes and dtypes -------------------------------------------------------------------------

def normalize_axes(axis, ndim, name="reduction"):
    """numpy's `axis` argument (None, int or tuple of ints) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int | np.integer):
        axes = (axis,)
    elif isinstance(axis, tuple | list):
        axes = tuple(axis)
    else:
        raise TypeError(f"{name}: axis must be None, an integer or a tuple of integers, got "
                        f"{axis!r}.")
    for a in axes:
        if not isinstance(a, int | np.integer):
            raise TypeError(f"{name}: axis entries must be integers, got {a!r}.")
        if not -ndim <= a < ndim and not (ndim == 0 and a in (0, -1)):
            raise np.exceptions.AxisError(
                f"{name}: axis {a} is out of bounds for an array of dimension {ndim}; use an "
                f"axis in [{-ndim}, {ndim}).")
    out = tuple(sorted(int(a) % ndim for a in axes)) if ndim else ()
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: duplicate value in 'axis' ({axis!r}); name each axis once.")
    return out


def single_axis(axis, ndim, name):
    """numpy's `axis` for functions that take exactly one (argmax, cumsum): a non-negative int.
    A 0-d array counts as 1-d here, as in numpy (it is searched or scanned as one element)."""
    if not isinstance(axis, int | np.integer):
        raise TypeError(f"{name}: axis must be a single integer (or None), got {axis!r}; "
                        f"{name} works along one axis, so reshape to merge several first.")
    return normalize_axes(axis, builtins.max(ndim, 1), name)[0]


def _keep(out, shape, axes, keepdims):
    if not keepdims:
        return out
    return reshape(out, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _reduced(res, a, axes):
    """`res`, the reduction of `a` over `axes`, as a new array when `axes` is empty and
    nothing was computed (numpy's reductions over no axes return a copy)."""
    return res if axes else owned(res, a)


def _accumulator(dtype):
    """numpy's default accumulator for sum/prod/cumsum: small ints and bools widen."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        return np.add.reduce(np.zeros(0, dtype)).dtype
    return dtype


def _prepare(a, dtype, default):
    a = asarray(a)
    dtype = default(a.dtype) if dtype is None else np.dtype(dtype)
    return convert_element_type(a, dtype)


def _no_out(out, name):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (arrays are immutable here); use the "
                        "return value.")


def _count(shape, axes):
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


# --- sums and moments ------------------------------------------------------------------------

_AXES_ALL = {n: tuple(range(n)) for n in range(8)}


def _eager_float(a, dtype, out) -> bool:
    """A plain float array, no conversion asked, nothing traced: the primitive's impl will do
    (the same test `bind` makes, read directly: a call here costs as much as a small sum)."""
    return ((type(a) is np.ndarray or type(a) is Array) and dtype is None and out is None
            and a.dtype.kind == "f" and _trace_state.dynamic.level == 0)


def _masked(a, where, fill):
    """a with the entries where `where` is False replaced by `fill` (broadcast as numpy does:
    the mask may not change a's shape)."""
    a = asarray(a)
    where = asarray(where)
    if where.dtype != np.bool_:
        raise TypeError(f"where= must be a boolean mask, got dtype {where.dtype.name}.")
    if np.broadcast_shapes(where.shape, a.shape) != a.shape:
        raise ShapeError(f"where= mask of shape {where.shape} does not broadcast to the "
                         f"array's shape {a.shape}.")
    return E.select(where, a, np.asarray(fill, a.dtype)), broadcast_to(where, a.shape)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """numpy.sum: ints and bools accumulate in numpy's default integer; `where=` masks
    entries out (they count as zero), `initial` is added."""
    if axis is None and not keepdims and _eager_float(a, dtype, out) and a.ndim in _AXES_ALL \
            and initial is None and where is None:  # a numpy scalar
        plain = a if type(a) is np.ndarray else a.view(np.ndarray)  # ufuncs: faster on plain
        return R.reduce_sum_p.impl(plain, axes=_AXES_ALL[a.ndim])
    if (adapter := foreign_adapter((a, where))) is not None:  # a dask or CuPy array
        return call_traced(sum, adapter, (a, axis, dtype, out, keepdims, initial, where), {})
    return like_inputs(_sum(a, axis, dtype, out, keepdims, initial, where), (a,))


sum.returns_arrays = True  # see functrans/numpy/_results.py


def _sum(a, axis, dtype, out, keepdims, initial, where):
    _no_out(out, "sum")
    a = _prepare(a, dtype, _accumulator)
    if where is not None:
        a, _ = _masked(a, where, 0)
    if initial is not None:
        res = _sum(a, axis, None, None, keepdims, None, None)
        return E.add(res, convert_element_type(asarray(initial), res.dtype))
    axes = normalize_axes(axis, a.ndim, "sum")
    return _reduced(_keep(R.reduce_sum(a, axes), a.shape, axes, keepdims), a, axes)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """numpy.prod; its derivative is exact where entries are zero."""
    _no_out(out, "prod")
    a = _prepare(a, dtype, _accumulator)
    axes = normalize_axes(axis, a.ndim, "prod")
    return _reduced(_keep(R.reduce_prod(a, axes), a.shape, axes, keepdims), a, axes)


def _mean_dtype(dtype):
    return np.dtype(np.float64) if not np.issubdtype(dtype, np.inexact) else np.dtype(dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """numpy.mean: ints and bools give float64; float16 accumulates in float32. With `where=`,
    the mean of the entries the mask selects (nan where it selects none, as numpy)."""
    if where is None and axis is None and not keepdims and _eager_float(a, dtype, out) \
            and a.ndim in _AXES_ALL and a.dtype != np.float16 and a.size:  # a numpy scalar
        plain = a if type(a) is np.ndarray else a.view(np.ndarray)
        return E.div_p.impl(R.reduce_sum_p.impl(plain, axes=_AXES_ALL[a.ndim]),
                            np.asarray(a.size, a.dtype))
    if (adapter := foreign_adapter((a, where))) is not None:  # a dask or CuPy array
        return call_traced(mean, adapter, (a, axis, dtype, out, keepdims), {"where": where})
    return like_inputs(_mean(a, axis, dtype, out, keepdims, where), (a,))


mean.returns_arrays = True  # see functrans/numpy/_results.py


def _mean(a, axis, dtype, out, keepdims, where):
    if where is not None:
        _no_out(out, "mean")
        a = asarray(a)
        out_dtype = _mean_dtype(a.dtype) if dtype is None else np.dtype(dtype)
        a, mask = _masked(convert_element_type(a, out_dtype), where, 0)
        axes = normalize_axes(axis, a.ndim, "mean")
        count = R.reduce_sum(convert_element_type(mask, out_dtype), axes)
        return _keep(E.div(R.reduce_sum(a, axes), count), a.shape, axes, keepdims)
    _no_out(out, "mean")
    a = asarray(a)
    out_dtype = _mean_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    work = np.dtype(np.float32) if out_dtype == np.float16 else out_dtype
    a = convert_element_type(a, work)
    axes = normalize_axes(axis, a.ndim, "mean")
    n = _count(a.shape, axes)
    total = R.reduce_sum(a, axes)
    res = E.div(total, np.asarray(n, work)) if np.issubdtype(work, np.inexact) else \
        convert_element_type(E.div(convert_element_type(total, np.float64),
                                   np.asarray(n, np.float64)), work)
    return _keep(convert_element_type(res, out_dtype), a.shape, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """numpy.var: mean squared deviation, divided by N - ddof (`correction` is ddof's alias)."""
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    a = asarray(a)
    work = _mean_dtype(a.dtype) if dtype is None else np.dtype(dtype)
    a = convert_element_type(a, work)
    axes = normalize_axes(axis, a.ndim, "var")
    n = _count(a.shape, axes)
    centered = E.sub(a, mean(a, axes, keepdims=True))
    # complex input: |x - mean|^2 = re(conj(d) d), a real result as numpy's
    squares = E.real(E.mul(E.conj(centered), centered)) if work.kind == "c" else \
        E.mul(centered, centered)
    ssq = R.reduce_sum(squares, axes)
    # numpy divides by max(N - ddof, 0): a zero divisor gives inf/nan, with numpy's warning
    res = E.div(ssq, np.asarray(builtins.max(n - ddof, 0), ssq.dtype))
    return _keep(res, a.shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """numpy.std: the square root of var (so its derivative is nan at zero spread, as in JAX),
    except over one element per result, where std is identically 0 (nan for a non-finite
    entry) and so has derivative 0, as autograd gives (JAX's is nan there)."""
    _no_out(out, "std")
    a = asarray(a)
    if _count(a.shape, normalize_axes(axis, a.ndim, "std")) == 1:
        a = stop_gradient(a)  # constant in a: no sqrt'(0) * 0 = nan
    return E.sqrt_p.bind(var(a, axis, dtype, None, ddof, keepdims, correction=correction))


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """numpy.average: the mean, or sum(a * w) / sum(w) along `axis` with 1-d or full weights."""
    a = asarray(a)
    axes = normalize_axes(axis, a.ndim, "average")
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scl = np.asarray(_count(a.shape, axes), avg.dtype)
    else:
        w = asarray(weights)
        dtype = np.result_type(a.dtype, w.dtype, np.float64)
        a, w = promote(a, w, dtype=dtype)
        if w.shape != a.shape:
            if axis is None:
                raise TypeError(f"average: weights of shape {w.shape} differ from the data's "
                                f"shape {a.shape}; pass axis= when the weights are 1-d.")
            if w.shape != tuple(a.shape[i] for i in axes):
                raise ShapeError(f"average: weights of shape {w.shape} do not match the data "
                                 f"shape {a.shape} along axis {axis}.")
            from functrans.primitives.layout import broadcast_in_dim
            w = broadcast_in_dim(w, a.shape, axes)
        scl = R.reduce_sum(w, axes)
        concrete = scl if isinstance(scl, np.ndarray | np.generic) else None
        if concrete is not None and np.any(concrete == 0):
            raise ZeroDivisionError("average: weights sum to zero, can't be normalized; give "
                                    "weights with a nonzero sum.")
        avg = _keep(E.div(R.reduce_sum(E.mul(a, w), axes), scl), a.shape, axes, keepdims)
        scl = _keep(scl, a.shape, axes, keepdims)
    if returned:
        return avg, broadcast_to(scl, np.shape(avg)) if np.shape(scl) != np.shape(avg) else scl
    return avg


# --- order statistics ------------------------------------------------------------------------

def _combine_initial(prim, res, initial):
    """max/min of `res` and a scalar `initial`, as one more reduction over a new leading axis
    (so a tie with `initial` shares the derivative, as JAX's max(res, initial) does)."""
    init = np.asarray(initial, res.dtype)
    stacked = pad(expand_dims(res, (0,)), init, ((1, 0, 0),) + ((0, 0, 0),) * np.ndim(res))
    return prim.bind(stacked, axes=(0,))


def _order_stat(prim, name):
    def fn(a, axis=None, out=None, keepdims=False, initial=None):
        _no_out(out, name)
        a = asarray(a)
        axes = normalize_axes(axis, a.ndim, name)
        empty = builtins.any(a.shape[i] == 0 for i in axes)
        if empty and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             f"identity (shape {a.shape}, axis {axis}); pass initial= or reduce "
                             "a non-empty axis.")
        if empty:
            shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
            res = broadcast_to(np.asarray(initial, a.dtype), shape)
        else:
            res = prim.bind(a, axes=axes) if axes else a
            if initial is not None:
                res = _combine_initial(prim, res, initial)
        return _reduced(_keep(res, a.shape, axes, keepdims), a, axes)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"numpy.{name}; the derivative is shared equally among tied extrema "
                  "(as in JAX).")
    return fn


max = amax = _order_stat(R.reduce_max_p, "max")
min = amin = _order_stat(R.reduce_min_p, "min")


def ptp(a, axis=None, out=None, keepdims=False):
    """numpy.ptp: max - min along `axis`."""
    return E.sub(max(a, axis, out, keepdims), min(a, axis, None, keepdims))


def _arg_stat(reduce, name):
    def fn(a, axis=None, out=None, *, keepdims=False):
        _no_out(out, name)
        a = asarray(a)
        shape = a.shape
        if axis is None:
            a = reshape(a, (a.size,))
            ax = 0
        else:
            ax = single_axis(axis, a.ndim, name)
        if a.ndim == 0:
            a = reshape(a, (1,))
        if a.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence (shape {shape}); "
                             "search a non-empty axis.")
        res = reduce(a, ax, np.int64)
        if keepdims:
            res = reshape(res, (1,) * len(shape) if axis is None else
                          tuple(1 if i == ax else s for i, s in enumerate(shape)))
        return res
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"numpy.{name}: int64 indices, the first of any ties; axis=None searches "
                  "the flattened array.")
    return fn


argmax = _arg_stat(R.argmax, "argmax")
argmin = _arg_stat(R.argmin, "argmin")


# --- scans -----------------------------------------------------------------------------------

def _scan(scan, name):
    def fn(a, axis=None, dtype=None, out=None):
        _no_out(out, name)
        a = _prepare(a, dtype, _accumulator)
        if axis is None:
            a = reshape(a, (a.size,))
            axis = 0
        ax = single_axis(axis, a.ndim, name)
        if a.ndim == 0:
            return owned(reshape(a, (1,)), a)  # a new array, as numpy's
        return scan(a, ax)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: axis=None scans the flattened array."
    return fn


cumsum = _scan(R.cumsum, "cumsum")
cumprod = _scan(R.cumprod, "cumprod")


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """numpy.diff: the n-th forward difference a[1:] - a[:-1] along `axis` (not_equal for
    booleans), after joining `prepend` / `append` (scalars broadcast to one slice).

    >>> import functrans.numpy as fnp
    >>> fnp.diff(fnp.array([1, 4, 9, 16]), n=2).tolist()
    [2, 2]
    """
    from functrans.numpy._shape import concatenate
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n={n} must be non-negative.")
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional.")
    ax = single_axis(axis, a.ndim, "diff")
    if n == 0:
        return a
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        extra = asarray(extra)
        if extra.ndim == 0:
            shape = list(a.shape)
            shape[ax] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if len(parts) > 1:
        a = concatenate(parts, axis=ax)
    for _ in range(n):
        m = a.shape[ax]
        if m == 0:
            break
        lo = [0] * a.ndim
        hi = list(a.shape)
        hi[ax] = m - 1
        head = slice_(a, lo, hi)
        lo[ax], hi[ax] = 1, m
        tail = slice_(a, lo, hi)
        a = E.ne(tail, head) if a.dtype == np.bool_ else E.sub(tail, head)
    return a


# --- boolean reductions ----------------------------------------------------------------------

def _truth(a):
    a = asarray(a)
    if a.dtype == np.bool_:
        return a
    return E.ne_p.bind(a, np.zeros((), a.dtype))


def all(a, axis=None, out=None, keepdims=False):
    """numpy.all (bool result, no derivative)."""
    _no_out(out, "all")
    a = _truth(a)
    axes = normalize_axes(axis, a.ndim, "all")
    return _reduced(_keep(R.reduce_and(a, axes) if axes else a, a.shape, axes, keepdims), a,
                    axes)


def any(a, axis=None, out=None, keepdims=False):
    """numpy.any (bool result, no derivative)."""
    _no_out(out, "any")
    a = _truth(a)
    axes = normalize_axes(axis, a.ndim, "any")
    return _reduced(_keep(R.reduce_or(a, axes) if axes else a, a.shape, axes, keepdims), a,
                    axes)


def count_nonzero(a, axis=None, *, keepdims=False):
    """numpy.count_nonzero, as an int64 array (0-d when axis is None)."""
    return sum(_truth(a), axis, dtype=np.int64, keepdims=keepdims)


# --- array methods (plain functions bind `self` as the array) -------------------------------

install_array_methods({
    "sum": sum, "prod": prod, "mean": mean, "var": var, "std": std, "max": max, "min": min,
    "ptp": ptp, "argmax": argmax, "argmin": argmin, "cumsum": cumsum, "cumprod": cumprod,
    "all": all, "any": any,
})
