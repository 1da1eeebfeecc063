"""Order statistics and histograms: quantile, percentile, median (and their NaN-skipping
forms), histogram. Quantiles sort along the reduced axes (the `sort` primitive) and gather
the neighbouring order statistics, so their derivatives are those of sort and gather: the
tangent of the chosen entries, interpolated, as in jax.numpy.

>>> import functrans.numpy as fnp
>>> float(fnp.median([3.0, 1.0, 2.0, 10.0]))
2.5
"""

from __future__ import annotations

import numpy as np

from functrans.core.trace import Tracer
from functrans.errors import ArgumentError
from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype
from functrans.numpy._creation import linspace
from functrans.numpy._indexing import take_along_axis
from functrans.numpy._reductions import any as _any
from functrans.numpy._reductions import max as _max
from functrans.numpy._reductions import min as _min
from functrans.numpy._reductions import normalize_axes
from functrans.numpy._reductions import sum as _sum
from functrans.numpy._shape import broadcast_to, moveaxis, reshape
from functrans.numpy._sorting import sort
from functrans.primitives.ad_control import stop_gradient

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "histogram"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _check_q(q, name, scale):
    if isinstance(q, Tracer):
        return q
    qa = np.asarray(q, dtype=np.float64 if np.asarray(q).dtype.kind in "biu" else None)
    if not np.all((qa >= 0) & (qa <= scale)):
        what = "Quantiles must be in the range [0, 1]" if scale == 1 else \
            "Percentiles must be in the range [0, 100]"
        raise ValueError(f"{name}: {what} (numpy's rule); got {q!r}.")
    return qa


def _quantile(name, a, q, axis, method, keepdims, skip_nan):
    if method not in _METHODS:
        raise ArgumentError(f"{name}: method {method!r} is not supported; use one of "
                            f"{', '.join(_METHODS)}.")
    a = asarray(a)
    dtype = result_dtype(a, 1.0)
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: complex input is not ordered; take abs() or the real part.")
    a = asarray(a, dtype)
    q = asarray(q)
    q = asarray(q, np.result_type(q.dtype, dtype) if q.dtype.kind == "f" else dtype)
    axes = normalize_axes(axis, a.ndim, name)
    kept = [d for d in range(a.ndim) if d not in axes]
    x = moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim))) if axes else a
    batch = tuple(a.shape[d] for d in kept)
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    if n == 0:
        raise ValueError(f"{name}: the reduced axes {axes} of shape {a.shape} hold no "
                         "entries; a quantile needs at least one.")
    x = reshape(x, batch + (n,))
    xs = sort(x, axis=-1)  # NaN sorts last
    m = int(q.size)
    qf = reshape(q, (m,))
    if skip_nan:
        count = _sum(E.logical_not(E.isnan(x)), axis=-1, keepdims=True)
        last = E.subtract(count, 1)
        pos = E.multiply(qf, E.maximum(last, 0).astype(dtype))
    else:
        last = np.asarray(n - 1)
        pos = E.multiply(qf, np.asarray(n - 1, dtype))
    pos = broadcast_to(pos, batch + (m,))
    lo = E.floor(stop_gradient(pos))
    frac = E.subtract(pos, lo)
    lo_i = lo.astype(np.int64)
    hi_i = E.minimum(E.add(lo_i, 1), broadcast_to(last, batch + (m,)) if skip_nan else n - 1)
    hi_i = E.maximum(hi_i, 0)
    lo_v = take_along_axis(xs, lo_i, axis=-1)
    hi_v = take_along_axis(xs, hi_i, axis=-1)
    if method == "linear":
        diff = E.subtract(hi_v, lo_v)
        # numpy's _lerp: from the nearer end, so q = 1 gives the maximum exactly
        out = E.where(E.greater_equal(frac, 0.5), E.subtract(hi_v, E.multiply(diff, E.subtract(
            1, frac))), E.add(lo_v, E.multiply(diff, frac)))
    elif method == "lower":
        out = lo_v
    elif method == "higher":
        out = E.where(E.greater(frac, 0), hi_v, lo_v)
    elif method == "midpoint":
        out = E.where(E.greater(frac, 0), E.multiply(E.add(lo_v, hi_v), 0.5), lo_v)
    else:  # nearest: round half to even, as numpy.around
        up = E.greater(frac, 0.5) | (E.equal(frac, 0.5) & E.equal(E.remainder(lo, 2), 1))
        out = E.where(up, hi_v, lo_v)
    if skip_nan:
        out = E.where(E.equal(broadcast_to(count, batch + (m,)), 0), np.nan, out)
    else:
        out = E.where(broadcast_to(_any(E.isnan(x), axis=-1, keepdims=True), batch + (m,)),
                      np.nan, out)
    out = asarray(out, dtype)
    if keepdims:
        full = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
        out = reshape(moveaxis(out, -1, 0), (m,) + full)
    else:
        out = reshape(moveaxis(out, -1, 0), (m,) + batch)
    return reshape(out, tuple(q.shape) + tuple(out.shape[1:]))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """numpy.quantile (methods linear, lower, higher, nearest, midpoint); differentiable in
    `a` (and in a traced `q`), through sort and gather.

    >>> import functrans.numpy as fnp
    >>> fnp.quantile([1.0, 2.0, 3.0, 4.0], [0.25, 0.5]).tolist()
    [1.75, 2.5]
    """
    _no_extras("quantile", out, weights)
    return _quantile("quantile", a, _check_q(q, "quantile", 1), axis, method, keepdims, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """numpy.percentile: quantile(a, q / 100)."""
    _no_extras("percentile", out, weights)
    q = _check_q(q, "percentile", 100)
    return _quantile("percentile", a, E.true_divide(q, 100), axis, method, keepdims, False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.median: quantile 0.5 (the mean of the middle two for an even count)."""
    _no_extras("median", out, None)
    return _quantile("median", a, np.asarray(0.5), axis, "linear", keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """numpy.nanquantile: quantile of the entries that are not NaN (NaN where all are)."""
    _no_extras("nanquantile", out, weights)
    q = _check_q(q, "nanquantile", 1)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """numpy.nanpercentile: nanquantile(a, q / 100)."""
    _no_extras("nanpercentile", out, weights)
    q = _check_q(q, "nanpercentile", 100)
    return _quantile("nanpercentile", a, E.true_divide(q, 100), axis, method, keepdims, True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy.nanmedian: the median of the entries that are not NaN (NaN where all are)."""
    _no_extras("nanmedian", out, None)
    return _quantile("nanmedian", a, np.asarray(0.5), axis, "linear", keepdims, True)


def _no_extras(name, out, weights):
    if out is not None:
        raise ArgumentError(f"{name}: out= is not supported (arrays are immutable); use the "
                            "returned array.")
    if weights is not None:
        raise ArgumentError(f"{name}: weights= is not supported; use method='inverted_cdf' "
                            "in numpy, or weight the data yourself.")


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram: (hist, bin_edges). The counts have no derivative (they are integers,
    or sums of `weights`, which are differentiable); with traced data and no `range`, the
    edges span min(a)..max(a) and follow them, as in jax.numpy.

    >>> import functrans.numpy as fnp
    >>> fnp.histogram([0.0, 0.5, 1.0, 1.0], bins=2)[0].tolist()
    [1, 3]
    """
    traced = any(isinstance(v, Tracer) for v in (a, bins, range, weights))
    if not traced:
        return np.histogram(np.asarray(a), bins=bins, range=range, density=density,
                            weights=None if weights is None else np.asarray(weights))
    a = asarray(a)
    a = reshape(a, (a.size,))
    dtype = result_dtype(a, 1.0)
    if np.ndim(bins) == 0:
        nbins = int(bins)
        if nbins < 1:
            raise ValueError(f"histogram: `bins` must be positive, got {bins}.")
        if range is None:
            lo, hi = _min(a).astype(dtype), _max(a).astype(dtype)
        else:
            lo, hi = (asarray(r, dtype) for r in range)
        same = E.equal(lo, hi)
        lo, hi = E.where(same, E.subtract(lo, 0.5), lo), E.where(same, E.add(hi, 0.5), hi)
        edges = linspace(lo, hi, nbins + 1)
    else:
        edges = asarray(bins, dtype)
        nbins = edges.shape[0] - 1
    x = stop_gradient(a)
    e = stop_gradient(edges)
    # searchsorted(edges, x, 'right') - 1, the last edge closing the last bin
    idx = E.subtract(_sum(E.less_equal(e[None, :], x[:, None]), axis=1), 1)
    idx = E.where(E.equal(x, e[-1]), nbins - 1, idx)
    inside = E.logical_and(E.greater_equal(x, e[0]), E.less_equal(x, e[-1]))
    onehot = E.logical_and(E.equal(idx[:, None], np.arange(nbins)[None, :]), inside[:, None])
    if weights is None:
        hist = _sum(onehot, axis=0).astype(np.int64)
    else:
        w = reshape(asarray(weights), (a.size,))
        hist = _sum(E.where(onehot, w[:, None], 0), axis=0)
    if density:
        widths = E.subtract(edges[1:], edges[:-1])
        hist = E.true_divide(E.true_divide(hist, widths), _sum(hist))
    return hist, edges
