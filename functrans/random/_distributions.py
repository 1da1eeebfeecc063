"""Samplers built on the key's random bits, each as JAX derives it (jax.random), so that the
same key gives the same values: uniform floats from the mantissa bits, normals by erf_inv,
integers by a double-width modulus, permutations by sorting on random keys, gamma by
Marsaglia and Tsang's rejection loop per key.

Draws are constants to differentiation; parameters (minval, maxval, mean, cov, logits ...)
differentiate as in JAX.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans.core.avals import ndim_of, shape_of
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.ad_control import stop_gradient
from functrans.transforms.custom import custom_jvp
from functrans.primitives import xla_math
from functrans.primitives.bits import bitcast_convert_type, shift_right_logical
from functrans.primitives.elementwise import erf, erf_inv, xla_exp, xla_log, xla_pow
from functrans.random._keys import canonical_shape, random_bits, split_data, unwrap

__all__ = ["uniform", "normal", "truncated_normal", "randint", "bernoulli", "choice",
           "permutation", "categorical", "gumbel", "gamma", "loggamma", "beta", "dirichlet",
           "exponential", "laplace", "logistic", "multivariate_normal", "orthogonal"]


# --- argument checks -------------------------------------------------------------------------

def _float_dtype(dtype, name: str) -> np.dtype:
    dtype = np.dtype(np.float64 if dtype is None else dtype)  # functrans' default float
    if dtype.kind != "f":
        raise DTypeError(f"{name}: dtype must be a float dtype, got {dtype}.")
    return dtype


def _check_shape(name: str, shape: tuple, *param_shapes) -> None:
    if param_shapes:
        try:
            joined = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            joined = None
        if joined != shape:
            raise ShapeError(f"{name}: parameter shapes {list(param_shapes)} must broadcast to "
                             f"the shape argument {shape}. Pass shape=None to take the "
                             "parameters' broadcast shape, or reshape the parameters.")


def _shape_or(shape, name: str, *params) -> tuple[int, ...]:
    shapes = [tuple(shape_of(p)) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*shapes))
    shape = canonical_shape(shape, name)
    _check_shape(name, shape, *shapes)
    return shape


def _as(x, dtype):
    """x (a Python number, an array or a tracer) as an array of `dtype`."""
    return fnp.asarray(x).astype(dtype)


def _fma(a, b, c):
    """a * b + c rounded once, as XLA's fused multiply-add."""
    return xla_math.fused_multiply_add(fnp, a, b, c)


def _erf(x):
    """erf with JAX's float32 values (XLA's own approximation) and the erf row's derivative."""
    e = erf(x)
    if fnp.asarray(x).dtype != np.float32:
        return e
    return xla_math.erf_float32(fnp, stop_gradient(x)) + (e - stop_gradient(e))


def _log1p(x):
    """log1p as XLA computes it, so that draws built on it equal JAX's."""
    return xla_math.log1p(fnp, x, _log)


def _log(x):
    """log as XLA computes it (its own float32 polynomial, the C library's float64 log)."""
    return xla_log(fnp.asarray(x))


def _exp(x):
    """exp as XLA computes it (its own polynomials)."""
    return xla_exp(fnp.asarray(x))


# --- uniform and normal ----------------------------------------------------------------------

def _uniform(data, shape, dtype, minval, maxval):
    """Floats in [minval, maxval): random mantissa bits under exponent 0 give [1, 2), less 1."""
    finfo = np.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    uint = np.dtype(f"uint{nbits}")
    word = random_bits(data, nbits, shape)
    mantissa = shift_right_logical(word, np.asarray(nbits - nmant, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = bitcast_convert_type(fnp.bitwise_or(mantissa, one_bits), dtype) - dtype.type(1)
    minval, maxval = _as(minval, dtype), _as(maxval, dtype)
    span = maxval - minval
    scaled = floats * span + minval
    if not _exact_product(span):
        # XLA contracts this multiply-add into one fused (singly rounded) operation: take the
        # fused value, and the derivative of the plain expression
        fused = _fma(floats, stop_gradient(span), stop_gradient(minval))
        scaled = fused + (scaled - stop_gradient(scaled))
    return fnp.maximum(minval, scaled)


def _exact_product(span) -> bool:
    """Whether floats * span is exact for floats in [0, 1): span a concrete power of two
    (then fused and plain multiply-add round alike)."""
    if hasattr(span, "aval"):
        return False
    mantissa, _ = np.frexp(np.asarray(span))
    return bool(np.all((mantissa == 0.5) | (span == 0)))


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval) of `shape` (default dtype float64).

    >>> import functrans as ft
    >>> u = ft.random.uniform(ft.random.PRNGKey(0), (3,))
    >>> u.shape, bool(((0 <= u) & (u < 1)).all())
    ((3,), True)
    """
    data, _ = unwrap(key, "uniform")
    shape = canonical_shape(shape, "uniform")
    _check_shape("uniform", shape, tuple(shape_of(minval)), tuple(shape_of(maxval)))
    return _uniform(data, shape, _float_dtype(dtype, "uniform"), minval, maxval)


def _normal(data, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(data, shape, dtype, lo, 1.0)
    return np.array(np.sqrt(2), dtype) * erf_inv(u)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal floats of `shape`: sqrt(2) erfinv(u) for u uniform in (-1, 1).

    >>> import functrans as ft
    >>> ft.random.normal(ft.random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    data, _ = unwrap(key, "normal")
    return _normal(data, canonical_shape(shape, "normal"), _float_dtype(dtype, "normal"))


def _next_toward(x, direction: float):
    """The float after x toward +inf (direction > 0) or -inf, elementwise (numpy's nextafter
    for concrete values; the bit pattern one step on for traced ones)."""
    if not hasattr(x, "aval"):
        x = np.asarray(x)
        return np.nextafter(x, np.asarray(direction, x.dtype))
    int_dtype = np.dtype(f"int{x.dtype.itemsize * 8}")
    ix = bitcast_convert_type(x, int_dtype)
    up = (x >= 0) if direction > 0 else (x < 0)   # moving away from zero adds to the bits
    step = fnp.where(up, np.asarray(1, int_dtype), np.asarray(-1, int_dtype))
    out = bitcast_convert_type(ix + step, x.dtype)
    tiny = np.asarray(np.copysign(np.finfo(x.dtype).smallest_subnormal, direction), x.dtype)
    return fnp.where(x == 0, tiny, out)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Normal floats truncated to the open interval (lower, upper), by inverting the normal
    CDF over [Phi(lower), Phi(upper)).

    >>> import functrans as ft
    >>> x = ft.random.truncated_normal(ft.random.PRNGKey(0), -1.0, 1.0, (100,))
    >>> bool((abs(x) < 1).all())
    True
    """
    data, _ = unwrap(key, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    shape = _shape_or(shape, "truncated_normal", lower, upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower, upper = _as(lower, dtype), _as(upper, dtype)
    # XLA turns the division by the constant into a product with its reciprocal
    inv_sqrt2 = np.array(1, dtype) / sqrt2
    a, b = _erf(lower * inv_sqrt2), _erf(upper * inv_sqrt2)
    out = sqrt2 * erf_inv(_uniform(data, shape, dtype, a, b))
    # rounding (or u == a) may land on a bound: clamp into the open interval
    lo = _next_toward(stop_gradient(lower), np.inf)
    hi = _next_toward(stop_gradient(upper), -np.inf)
    return fnp.clip(out, lo, hi)


# --- integers --------------------------------------------------------------------------------

def _convert_and_clip(val, dtype):
    """Integer `val` as integer `dtype`, clipped to the range both dtypes hold (no wrap)."""
    dtype, src = np.dtype(dtype), fnp.asarray(val).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    return fnp.clip(val, np.asarray(lo, src), np.asarray(hi, src)).astype(dtype)


def _randint(data, shape, minval, maxval, dtype):
    minval, maxval = fnp.asarray(minval), fnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(int)
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(int)
    # maxval beyond dtype's max (randint(key, s, 0, 256, uint8)): the span grows by one
    top = _convert_and_clip(np.asarray(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = maxval > top
    minval, maxval = _convert_and_clip(minval, dtype), _convert_and_clip(maxval, dtype)
    nbits = np.iinfo(dtype).bits
    # twice the bits a value needs, reduced modulo the span (the bias shrinks with 2**-nbits)
    k1, k2 = split_data(data, (2,))
    higher_bits, lower_bits = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    unsigned = np.dtype(f"uint{nbits}")
    span = (maxval - minval).astype(unsigned)
    one = np.ones((), unsigned)
    span = fnp.where(maxval <= minval, one, span)    # an empty range returns minval
    span = fnp.where(maxval_out_of_range & (maxval > minval), span + one, span)
    # (hi * 2**nbits + lo) % span, with 2**nbits % span as ((2**(nbits/2) % span)**2) % span
    multiplier = fnp.remainder(np.asarray(2 ** (nbits // 2), unsigned), span)
    multiplier = fnp.remainder(multiplier * multiplier, span)
    offset = fnp.remainder(higher_bits, span) * multiplier + fnp.remainder(lower_bits, span)
    offset = fnp.remainder(offset, span)
    return minval + offset.astype(dtype)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any,
            dtype: Any = None) -> Any:
    """Uniform integers in [minval, maxval) of `shape` (default dtype int64).

    >>> import functrans as ft
    >>> ft.random.randint(ft.random.PRNGKey(0), (3,), 0, 10).dtype
    dtype('int64')
    """
    data, _ = unwrap(key, "randint")
    dtype = np.dtype(int if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise DTypeError(f"randint: dtype must be an integer dtype, got {dtype}.")
    shape = canonical_shape(shape, "randint")
    _check_shape("randint", shape, tuple(shape_of(minval)), tuple(shape_of(maxval)))
    info = np.iinfo(dtype)
    if info.bits < 32:   # sample in 32 bits to keep the bias small, as JAX
        minval = fnp.clip(fnp.asarray(minval).astype("int32"), int(info.min), int(info.max))
        maxval = fnp.clip(fnp.asarray(maxval).astype("int32"), int(info.min),
                          int(info.max) + 1)
        return _randint(data, shape, minval, maxval, np.dtype("int32")).astype(dtype)
    return _randint(data, shape, minval, maxval, dtype)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None) -> Any:
    """Booleans that are True with probability p.

    >>> import functrans as ft
    >>> ft.random.bernoulli(ft.random.PRNGKey(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    data, _ = unwrap(key, "bernoulli")
    p = fnp.asarray(p)
    dtype = p.dtype
    if dtype.kind != "f":
        raise DTypeError(f"bernoulli: the probability p must have a float dtype, got {dtype}.")
    shape = _shape_or(shape, "bernoulli", p)
    return _uniform(data, shape, dtype, 0.0, 1.0) < p


# --- permutations and choices ----------------------------------------------------------------

def _shuffle(data, x, axis: int):
    """x with its entries along `axis` permuted: sorted (stably) on fresh 32-bit random keys,
    in as many rounds as make ties negligible."""
    exponent = 3
    size = int(np.prod(shape_of(x)))
    rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = split_data(data, (2,))
        data, sub = keys[0], keys[1]
        sort_keys = random_bits(sub, 32, tuple(shape_of(x)))
        order = fnp.argsort(sort_keys, axis=axis, kind="stable")
        x = fnp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of arange(x) (an int x), or of x's entries along `axis` (whole
    slices together unless `independent`).

    >>> import functrans as ft
    >>> sorted(ft.random.permutation(ft.random.PRNGKey(0), 5).tolist())
    [0, 1, 2, 3, 4]
    """
    data, _ = unwrap(key, "permutation")
    if not ndim_of(x):
        if hasattr(x, "aval") or not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("permutation: x must be a concrete int (the length of arange) or "
                            "an array of at least one dimension.")
        return _shuffle(data, fnp.arange(int(x)), 0)
    x = fnp.asarray(x)
    return _permute(data, x, axis % x.ndim, independent)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True,
           p: Any = None, axis: int = 0) -> Any:
    """A random sample of `shape` from a's entries along `axis` (or from arange(a) for an int
    a), with or without replacement, optionally weighted by probabilities p.

    >>> import functrans as ft
    >>> ft.random.choice(ft.random.PRNGKey(0), 5, (3,), replace=False).shape
    (3,)
    """
    data, _ = unwrap(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a sequence, got {shape!r}.")
    shape = canonical_shape(shape, "choice")
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        if hasattr(a, "aval"):
            raise TypeError("choice: an int `a` must be concrete (it sets the output range).")
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken.")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                         f"population (size {n_inputs}) when replace=False.")
    if p is None:
        if replace:
            ind = _randint(data, shape, 0, n_inputs, np.dtype(int))
            result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
        else:
            perm = _shuffle(data, fnp.arange(n_inputs), 0) if arr.ndim == 0 else (
                _permute(data, arr, axis))
            result = perm[(slice(None),) * (axis if arr.ndim else 0) + (slice(n_draws),)]
    else:
        p_arr = fnp.asarray(p)
        if p_arr.dtype.kind not in "fc":
            p_arr = p_arr.astype(float)
        if tuple(shape_of(p_arr)) != (n_inputs,):
            raise ShapeError(f"choice: p must be None or a 1D vector with the size of "
                             f"a.shape[axis]; p has shape {tuple(shape_of(p_arr))} and "
                             f"a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = fnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - _uniform(data, shape, p_cuml.dtype, 0.0, 1.0))
            # searchsorted(p_cuml, r), side left: how many cumulative weights lie below r
            ind = fnp.sum(p_cuml < fnp.expand_dims(r, -1), axis=-1).astype(int)
        else:
            g = _gumbel(data, (n_inputs,), p_arr.dtype) + _log(p_arr)
            ind = _top_k_indices(g, n_draws).astype(int)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis)
    return fnp.reshape(result, shape if arr.ndim == 0 else
                       arr.shape[:axis] + shape + arr.shape[axis + 1:])


def _permute(data, x, axis, independent=False):
    """x's slices along `axis` in a random order (each line on its own if `independent`)."""
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    return fnp.take(x, _shuffle(data, fnp.arange(x.shape[axis]), 0), axis=axis)


def _top_k_indices(x, k: int):
    """Indices of the k largest entries along the last axis, largest first; among equal
    values the lower index first (lax.top_k's order)."""
    return fnp.argsort(-x, axis=-1, kind="stable")[..., :k]


# --- extreme values, categories --------------------------------------------------------------

def _gumbel(data, shape, dtype):
    u = _uniform(data, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return -_log(-_log(u))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Gumbel floats: -log(-log(u)) for u uniform in [tiny, 1).

    >>> import functrans as ft
    >>> ft.random.gumbel(ft.random.PRNGKey(0), (2,)).shape
    (2,)
    """
    data, _ = unwrap(key, "gumbel")
    return _gumbel(data, canonical_shape(shape, "gumbel"), _float_dtype(dtype, "gumbel"))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True) -> Any:
    """Category indices drawn with probabilities softmax(logits) along `axis` (the Gumbel-max
    trick); without replacement, the Gumbel top-k trick.

    >>> import functrans as ft, numpy as np
    >>> ft.random.categorical(ft.random.PRNGKey(0), np.log(np.ones((2, 3)) / 3)).shape
    (2,)
    """
    data, _ = unwrap(key, "categorical")
    logits = fnp.asarray(logits)
    if logits.dtype.kind != "f":
        logits = logits.astype(float)
    axis = axis % logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis, logits.shape[axis])
        g = _gumbel(data, (*prefix, *logits_shape), logits.dtype)
        expanded = fnp.reshape(logits, (1,) * len(prefix) + logits.shape)
        return fnp.argmax(g + expanded, axis=axis + len(prefix))
    logits = logits + _gumbel(data, logits.shape, logits.dtype)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"categorical: the number of samples without replacement ({k}) "
                         f"cannot exceed the number of categories ({logits.shape[axis]}).")
    indices = _top_k_indices(fnp.moveaxis(logits, axis, -1), k).astype(np.int32)  # top_k's
    # batch_shape + (k,) -> prefix + batch_shape
    indices = fnp.moveaxis(indices, -1, 0)
    return fnp.reshape(indices, shape)


# --- continuous families from one uniform ----------------------------------------------------

def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential floats (rate 1): -log1p(-u).

    >>> import functrans as ft
    >>> bool((ft.random.exponential(ft.random.PRNGKey(0), (5,)) >= 0).all())
    True
    """
    data, _ = unwrap(key, "exponential")
    dtype = _float_dtype(dtype, "exponential")
    u = _uniform(data, canonical_shape(shape, "exponential"), dtype, 0.0, 1.0)
    return -_log1p(-u)


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Laplace floats (scale 1): sign(u) log1p(-|u|) for u uniform in (-1, 1).

    >>> import functrans as ft
    >>> ft.random.laplace(ft.random.PRNGKey(0), (3,)).shape
    (3,)
    """
    data, _ = unwrap(key, "laplace")
    dtype = _float_dtype(dtype, "laplace")
    u = _uniform(data, canonical_shape(shape, "laplace"), dtype,
                 -1.0 + np.finfo(dtype).epsneg, 1.0)
    return fnp.sign(u) * _log1p(-fnp.abs(u))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard logistic floats: log(u) - log1p(-u).

    >>> import functrans as ft
    >>> ft.random.logistic(ft.random.PRNGKey(0), (3,)).shape
    (3,)
    """
    data, _ = unwrap(key, "logistic")
    dtype = _float_dtype(dtype, "logistic")
    x = _uniform(data, canonical_shape(shape, "logistic"), dtype, np.finfo(dtype).tiny, 1.0)
    return _log(x) - _log1p(-x)


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """Normal vectors with mean `mean` (..., n) and covariance `cov` (..., n, n): mean plus
    the Cholesky factor times standard normals.

    >>> import functrans as ft, numpy as np
    >>> ft.random.multivariate_normal(ft.random.PRNGKey(0), np.zeros(2), np.eye(2), (4,)).shape
    (4, 2)
    """
    data, _ = unwrap(key, "multivariate_normal")
    if method != "cholesky":
        raise ValueError(f"multivariate_normal: method {method!r} is not available; use "
                         "method='cholesky'.")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    if mean.dtype.kind != "f":
        mean = mean.astype(float)
    if cov.dtype.kind != "f":
        cov = cov.astype(float)
    dtype = _float_dtype(dtype if dtype is not None else fnp.result_type(mean, cov),
                         "multivariate_normal")
    if mean.ndim < 1 or cov.ndim < 2:
        raise ShapeError(f"multivariate_normal needs mean.ndim >= 1 and cov.ndim >= 2, got "
                         f"{mean.ndim} and {cov.ndim}.")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ShapeError(f"multivariate_normal needs cov.shape == (..., {n}, {n}) for a mean "
                         f"of length {n}, got {cov.shape}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = canonical_shape(shape, "multivariate_normal")
        _check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = fnp.linalg.cholesky(cov)
    z = _normal(data, shape + (n,), dtype)
    if dtype == np.float32:
        # XLA's float32 dot of this shape sums the products along the row in its own loop,
        # not a BLAS matmul: the same values for small n (equal for n = 3; measured)
        return mean + fnp.sum(factor * fnp.expand_dims(z, -2), axis=-1)
    return mean + fnp.einsum("...ij,...j->...i", factor, z)


# --- gamma and the families built on it ------------------------------------------------------

def _gamma_one(data, alpha, log_space: bool):
    """One Gamma(alpha) draw from one key: Marsaglia and Tsang's rejection method ("A simple
    method for generating gamma variables", 2000), with alpha < 1 boosted to alpha + 1 and
    corrected by u**(1/alpha) (in log space when asked: no underflow for tiny alpha)."""
    from functrans.lax import while_loop
    dtype = alpha.dtype
    zero, one = np.zeros((), dtype), np.ones((), dtype)
    minus_one, two = np.asarray(-1, dtype), np.asarray(2, dtype)
    half, third, squeeze = np.asarray(0.5, dtype), np.asarray(1 / 3, dtype), \
        np.asarray(0.0331, dtype)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = fnp.where(boost_mask, alpha, alpha + one)
    d = alpha - third
    c = third * (one / fnp.sqrt(d))   # XLA rewrites third / sqrt(d) so: JAX's roundings

    def cond_fn(state):
        _, x, v, u = state
        # XLA fuses the multiply-adds here and below (one rounding each), as JAX's values show
        return (u >= _fma(-squeeze, x * x, one)) & \
            (_log(u) >= x * half + d * (one - v + _log(v)))

    def body_fn(state):
        k = state[0]
        keys = split_data(k, (3,))
        k, x_key, u_key = keys[0], keys[1], keys[2]

        def next_xv(kxv):
            keys = split_data(kxv[0], (2,))
            x = _normal(keys[1], (), dtype)
            return keys[0], x, _fma(x, c, one)

        _, x, v = while_loop(lambda kxv: kxv[2] <= zero, next_xv, (x_key, zero, minus_one))
        return k, x * x, v * v * v, _uniform(u_key, (), dtype, 0.0, 1.0)

    keys = split_data(data, (2,))
    _, _, v, _ = while_loop(cond_fn, body_fn, (keys[0], zero, one, two))
    subkey = keys[1]
    if log_space:
        log_samples = _log1p(-_uniform(subkey, (), dtype, 0.0, 1.0))   # -exponential
        log_boost = fnp.where(boost_mask | (log_samples == 0), zero,
                              log_samples * (one / alpha_orig))
        return _log(d) + _log(v) + log_boost
    samples = one - _uniform(subkey, (), dtype, 0.0, 1.0)
    boost = fnp.where(boost_mask, one, xla_pow(samples, one / alpha_orig))   # XLA's pow
    return d * v * boost


def _gamma(data, a, shape, dtype, log_space):
    from functrans.transforms.vmap import vmap
    a = fnp.broadcast_to(_as(a, dtype), shape)
    n = math.prod(shape)
    keys = split_data(data, (n,))
    # one key per element, each running its own rejection loop (vmap masks the loops)
    draw = vmap(lambda k, al: _gamma_one(k, al, log_space))
    return fnp.reshape(draw(keys, fnp.reshape(a, (n,))), shape) if n else \
        fnp.zeros(shape, dtype)


def _gamma_checked(key, a, shape, dtype, name, log_space):
    data, _ = unwrap(key, name)
    dtype = _float_dtype(dtype, name)
    shape = _shape_or(shape, name, a)
    return _gamma(data, _no_derivative_in(a, name), shape, dtype, log_space)


def _no_derivative_in(a, name):
    """Gamma draws depend on their shape parameter through an implicit (reparameterised)
    derivative that is not implemented here: differentiating through `a` raises rather than
    returning a zero."""
    return _refuse_derivative(fnp.asarray(a))


@custom_jvp
def _refuse_derivative(a):
    return a


@_refuse_derivative.defjvp
def _refuse_derivative_jvp(primals, tangents):
    raise NotImplementedError(
        "gamma, loggamma, beta, dirichlet: the derivative of the samples with respect to the "
        "shape parameter is "
        "not implemented (JAX uses an implicit reparameterisation gradient). Pass the "
        "parameter through functrans.lax.stop_gradient if its derivative is not needed.")


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) floats (shape parameter a).

    >>> import functrans as ft
    >>> ft.random.gamma(ft.random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    return _gamma_checked(key, a, shape, dtype, "gamma", False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) draws, computed in log space (accurate for small a).

    >>> import functrans as ft
    >>> ft.random.loggamma(ft.random.PRNGKey(0), 0.01, (2,)).shape
    (2,)
    """
    return _gamma_checked(key, a, shape, dtype, "loggamma", True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None,
         dtype: Any = None) -> Any:
    """Beta(a, b) floats: Ga / (Ga + Gb) from two log-gamma draws.

    >>> import functrans as ft
    >>> ft.random.beta(ft.random.PRNGKey(0), 2.0, 3.0, (3,)).shape
    (3,)
    """
    data, _ = unwrap(key, "beta")
    dtype = _float_dtype(dtype, "beta")
    shape = _shape_or(shape, "beta", a, b)
    a, b = _no_derivative_in(a, "beta"), _no_derivative_in(b, "beta")
    keys = split_data(data, (2,))
    log_a = _gamma(keys[0], a, shape, dtype, True)
    log_b = _gamma(keys[1], b, shape, dtype, True)
    log_max = fnp.maximum(log_a, log_b)
    ga, gb = _exp(log_a - log_max), _exp(log_b - log_max)
    return ga / (ga + gb)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Dirichlet(alpha) vectors along the last axis: softmax of log-gamma draws.

    >>> import functrans as ft, numpy as np
    >>> ft.random.dirichlet(ft.random.PRNGKey(0), np.ones(3), (2,)).shape
    (2, 3)
    """
    data, _ = unwrap(key, "dirichlet")
    dtype = _float_dtype(dtype, "dirichlet")
    if ndim_of(alpha) < 1:
        raise ShapeError(f"dirichlet needs alpha.ndim >= 1, got {ndim_of(alpha)}.")
    alpha = _no_derivative_in(alpha, "dirichlet")
    batch = tuple(shape_of(alpha))[:-1]
    if shape is None:
        shape = batch
    else:
        shape = canonical_shape(shape, "dirichlet")
        _check_shape("dirichlet", shape, batch)
    log_g = _gamma(data, alpha, shape + tuple(shape_of(alpha))[-1:], dtype, True)
    # softmax along the last axis, as jax.nn.softmax
    e = _exp(log_g - fnp.max(log_g, axis=-1, keepdims=True))
    return e / fnp.sum(e, axis=-1, keepdims=True)


# --- orthogonal matrices ---------------------------------------------------------------------

def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """A matrix drawn uniformly from the orthogonal group O(n) (Haar measure), of shape
    (*shape, n, m); for m != n, semi-orthogonal (orthonormal rows or columns). As JAX: the Q
    of a QR factorisation of a normal matrix, with R's diagonal made positive.

    >>> import functrans as ft, numpy as np
    >>> q = ft.random.orthogonal(ft.random.PRNGKey(0), 3)
    >>> bool(np.allclose(q @ q.T, np.eye(3)))
    True
    """
    data, _ = unwrap(key, "orthogonal")
    dtype = _float_dtype(dtype, "orthogonal")
    shape = canonical_shape(shape, "orthogonal")
    m = n if m is None else m
    n, m = operator.index(n), operator.index(m)
    z = _normal(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = fnp.linalg.qr(z)      # LAPACK's Householder QR, as JAX's
    d = fnp.diagonal(r, 0, -2, -1)
    q = q * fnp.expand_dims(d / fnp.abs(d), -2)
    return fnp.swapaxes(q, -1, -2) if n < m else q
