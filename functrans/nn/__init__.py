"""Activation functions and helpers of neural networks, as `jax.nn`: the same formulas as
JAX's, so values and derivatives agree with JAX's, kinks included (relu'(0) = 0,
relu6' is 0 at 0 and 6, hard_tanh' is 1 at +-1, leaky_relu'(0) = 1, elu'(0) = alpha,
celu'(0) = 1). Each is written with functrans.numpy, so it traces under every transform.

>>> import functrans as ft
>>> float(ft.grad(ft.nn.relu)(0.0)), float(ft.nn.relu(2.0))
(0.0, 2.0)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.core.avals import ndim_of
from functrans.nn import initializers  # noqa: F401
from functrans.primitives.ad_control import stop_gradient
from functrans.primitives.elementwise import erf
from functrans.scipy.special import expit as _expit
from functrans.scipy.special import logsumexp

__all__ = ["relu", "relu6", "gelu", "silu", "swish", "elu", "selu", "celu", "softplus",
           "sigmoid", "log_sigmoid", "soft_sign", "hard_tanh", "leaky_relu", "softmax",
           "log_softmax", "logsumexp", "one_hot", "standardize", "initializers"]

def _float(x):
    """x as an inexact array (integers and Python numbers become float64, as JAX with x64)."""
    x = fnp.asarray(x)
    return x if np.issubdtype(x.dtype, np.inexact) else x.astype(np.float64)


def _zero(x):
    return np.zeros((), x.dtype)


def relu(x: Any) -> Any:
    """max(x, 0). Its derivative is 1 where x > 0 and 0 elsewhere, 0 at x = 0 as in JAX.

    >>> import functrans as ft
    >>> float(ft.nn.relu(-1.5)), float(ft.grad(ft.nn.relu)(0.0))
    (0.0, 0.0)
    """
    x = _float(x)
    # outside x > 0 the value max(x, 0) (NaN stays NaN, as jnp.maximum) with derivative 0
    return fnp.where(x > 0, x, stop_gradient(fnp.maximum(x, _zero(x))))


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6). Its derivative is 1 on 0 < x < 6 and 0 elsewhere, 0 at both kinks,
    as in JAX.

    >>> import functrans as ft
    >>> float(ft.nn.relu6(7.0)), float(ft.grad(ft.nn.relu6)(6.0))
    (6.0, 0.0)
    """
    x = _float(x)
    inside = (x > 0) & (x < 6)
    # outside, the clipped value (NaN stays NaN, as in JAX's min(max(x, 0), 6)), derivative 0
    return fnp.where(inside, x, stop_gradient(fnp.clip(x, _zero(x), np.asarray(6, x.dtype))))


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit x * Phi(x). With approximate=True (the default, as JAX)
    Phi is 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); with False it is the exact normal
    CDF 0.5 (1 + erf(x / sqrt(2))).

    The exact form is computed with erf (JAX uses erfc(-x / sqrt(2)), which functrans has no
    primitive for): its absolute error stays near 1e-16 |x|, but in the far negative tail,
    where the value is tiny, the relative error grows (about 1e-6 at x = -7) and the value
    rounds to 0 below about x = -8.3 (JAX gives -7.6e-23 at x = -10).

    >>> import functrans as ft
    >>> round(float(ft.nn.gelu(1.0, approximate=False)), 6)
    0.841345
    """
    x = _float(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + fnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return (x * cdf).astype(x.dtype)
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return (0.5 * x * (1.0 + erf(x * sqrt_half))).astype(x.dtype)


def sigmoid(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x)).

    >>> import functrans as ft
    >>> float(ft.nn.sigmoid(0.0))
    0.5
    """
    return _expit(_float(x))


def silu(x: Any) -> Any:
    """x * sigmoid(x) (the SiLU, also named swish).

    >>> import functrans as ft
    >>> round(float(ft.nn.silu(1.0)), 6)
    0.731059
    """
    x = _float(x)
    return x * sigmoid(x)


swish = silu


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), computed as logaddexp(x, 0).

    >>> import functrans as ft
    >>> round(float(ft.nn.softplus(0.0)), 6)
    0.693147
    """
    x = _float(x)
    return fnp.logaddexp(x, _zero(x))


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)), computed as -softplus(-x).

    >>> import functrans as ft
    >>> round(float(ft.nn.log_sigmoid(0.0)), 6)
    -0.693147
    """
    x = _float(x)
    return -softplus(-x)


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1).

    >>> import functrans as ft
    >>> float(ft.nn.soft_sign(1.0))
    0.5
    """
    x = _float(x)
    return x / (fnp.abs(x) + 1)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x where x > 0, alpha (exp(x) - 1) elsewhere; the derivative at 0 is alpha, as in JAX.

    >>> import functrans as ft
    >>> float(ft.nn.elu(2.0)), float(ft.grad(ft.nn.elu)(0.0))
    (2.0, 1.0)
    """
    x = _float(x)
    positive = x > 0
    return fnp.where(positive, x, alpha * fnp.expm1(fnp.where(positive, _zero(x), x)))


def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalising constants alpha = 1.6732632423543772
    and scale = 1.0507009873554805.

    >>> import functrans as ft
    >>> round(float(ft.nn.selu(1.0)), 6)
    1.050701
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha (exp(min(x, 0) / alpha) - 1); the derivative at 0 is 1, as in JAX.

    >>> import functrans as ft
    >>> float(ft.grad(ft.nn.celu)(0.0))
    1.0
    """
    x = _float(x)
    return fnp.maximum(x, _zero(x)) + alpha * fnp.expm1(fnp.minimum(x, _zero(x)) / alpha)


def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1]; the derivative is 1 on [-1, 1] (ends included, as JAX) and 0
    outside.

    >>> import functrans as ft
    >>> float(ft.nn.hard_tanh(3.0)), float(ft.grad(ft.nn.hard_tanh)(1.0))
    (1.0, 1.0)
    """
    x = _float(x)
    one = np.ones((), x.dtype)
    return fnp.where(x > 1, one, fnp.where(x < -1, -one, x))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x where x >= 0, negative_slope * x elsewhere; the derivative at 0 is 1, as in JAX.

    >>> import functrans as ft
    >>> float(ft.nn.leaky_relu(-2.0)), float(ft.grad(ft.nn.leaky_relu)(0.0))
    (-0.02, 1.0)
    """
    x = _float(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def _max_initial(x, axis, where):
    """max over `axis` (keepdims), -inf where `where` leaves nothing (JAX's initial=-inf)."""
    if where is None:
        return fnp.max(x, axis=axis, keepdims=True)
    masked = fnp.where(where, x, np.asarray(-np.inf, x.dtype))
    return fnp.max(masked, axis=axis, keepdims=True)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (the last by default, as JAX), shifted by the
    maximum so large inputs do not overflow. Entries outside `where` are 0 and take no part.

    >>> import functrans as ft, numpy as np
    >>> np.round(ft.nn.softmax(np.array([0.0, np.log(3.0)])), 6).tolist()
    [0.25, 0.75]
    """
    x = _float(x)
    x_max = _max_initial(x, axis, where)
    x_safe = x if where is None else fnp.where(where, x, np.asarray(-np.inf, x.dtype))
    unnormalized = fnp.exp(x_safe - stop_gradient(x_max))
    total = fnp.sum(unnormalized, axis=axis, keepdims=True)
    result = unnormalized / total
    return result if where is None else fnp.where(where, result, _zero(x))


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along `axis` (the last by default), shifted by the maximum so large
    inputs do not overflow. Entries outside `where` are -inf and take no part.

    >>> import functrans as ft, numpy as np
    >>> np.round(np.exp(ft.nn.log_softmax(np.array([0.0, np.log(3.0)]))), 6).tolist()
    [0.25, 0.75]
    """
    x = _float(x)
    x_max = _max_initial(x, axis, where)
    x_safe = x if where is None else fnp.where(where, x, np.asarray(-np.inf, x.dtype))
    shifted = x_safe - stop_gradient(x_max)
    shifted_logsumexp = fnp.log(fnp.sum(fnp.exp(shifted), axis=axis, keepdims=True))
    result = shifted - shifted_logsumexp
    return result if where is None else fnp.where(where, result, np.asarray(-np.inf, x.dtype))


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """A one-hot encoding of the integer array `x`: a new axis of length `num_classes` at
    position `axis`, 1 where its index equals x and 0 elsewhere (indices outside
    [0, num_classes) give all zeros). dtype defaults to float64 (functrans' default float).

    >>> import functrans as ft
    >>> ft.nn.one_hot([0, 2], 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"one_hot: num_classes must be a concrete Python int, got "
                        f"{type(num_classes).__name__}. Pass the number of classes as an "
                        "int (it sets the output shape).") from None
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    x = fnp.asarray(x)
    out_ndim = ndim_of(x) + 1
    if not -out_ndim <= axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for an output of {out_ndim} "
                         f"dimensions. Pass an axis in [{-out_ndim}, {out_ndim}).")
    axis = axis % out_ndim
    rhs_shape = [1] * out_ndim
    rhs_shape[axis] = num_classes
    classes = np.arange(num_classes).reshape(rhs_shape)
    return (fnp.expand_dims(x, axis) == classes).astype(dtype)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None) -> Any:
    """(x - mean) / sqrt(variance + epsilon) along `axis`, the mean and variance computed
    over the entries in `where` unless given; the variance as mean(x^2) - mean(x)^2 clipped
    at 0 (JAX's default "fast" algorithm).

    >>> import functrans as ft, numpy as np
    >>> np.round(ft.nn.standardize(np.array([1.0, 3.0]), epsilon=0.0), 6).tolist()
    [-1.0, 1.0]
    """
    x = _float(x)
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = (fnp.mean(fnp.square(x), axis=axis, keepdims=True, where=where)
                    - fnp.square(mean))
        variance = fnp.clip(variance, 0)
    return (x - mean) / fnp.sqrt(variance + epsilon)
