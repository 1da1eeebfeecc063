"""Rows of the activation functions whose derivative JAX and PyTorch state differently: elu
(with the constants of celu and selu), softplus with PyTorch's threshold, and hard_swish. Each
row's `jvp` is JAX's derivative (jax.nn's function), its `torch_jvp` PyTorch's (the kernel's
backward in derivatives.yaml); docs/conventions.md lists the points where they differ."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.primitives.broadcasting import REAL_FLOAT, nary_aval, unary_batch
from functrans.primitives.elementwise import add, div, eq, exp, gt, le, logistic, lt, mul, select
from functrans.primitives.registry import define


def _c(x, v):
    return np.asarray(v, x.dtype)


def _jvp_of(prim, deriv):
    """The JVP t * deriv(x, **params) of a unary row with params."""
    def jvp(primals, tangents, **params):
        x, = primals
        t, = tangents
        return prim.bind(x, **params), mul(t, deriv(x, **params))
    return jvp


def _row(name, impl, deriv, torch_deriv, torch_name):
    prim = define(name, impl=impl, abstract=nary_aval(name, kinds=REAL_FLOAT),
                  props=("elementwise",), torch_name=torch_name)
    prim.rules.update(jvp=_jvp_of(prim, deriv), torch_jvp=_jvp_of(prim, torch_deriv),
                      batch=unary_batch(prim))
    return prim


# elu: scale x above 0, scale alpha expm1(input_scale x) elsewhere (PyTorch's kernel: elu,
# celu with input_scale = 1/alpha, selu with its constants). Both conventions take the lower
# branch's derivative at 0. JAX's (jax.nn.elu's where(x > 0, ...)) is that branch's function
# there, so its second derivative at 0 is the lower branch's; PyTorch's elu_backward tests
# x <= 0 but elu_double_backward x < 0, so at 0 the derivative is a constant (second derivative
# 0), and at NaN it is scale (neither test holds), where JAX's is NaN.
def _elu_impl(x, *, alpha, scale, input_scale):
    safe = xp.where(x < 0, x, _c(x, 0))  # no overflow in the branch not taken
    lower = _c(x, scale * alpha) * xp.expm1(safe * _c(x, input_scale))
    at_zero = _c(x, scale * alpha * input_scale) * x  # 0 with x's sign
    return xp.where(x < 0, lower, xp.where(x == 0, at_zero, _c(x, scale) * x))


def _elu_lower(x, safe, alpha, scale, input_scale):
    # scale alpha input_scale exp(input_scale x), of `safe`: x where this branch is taken
    return mul(_c(x, scale * alpha * input_scale), exp(mul(safe, _c(x, input_scale))))


def _elu_d(x, *, alpha, scale, input_scale):
    above = gt(x, _c(x, 0))
    safe = select(above, _c(x, 0), x)  # NaN stays NaN
    return select(above, _c(x, scale), _elu_lower(x, safe, alpha, scale, input_scale))


def _elu_d_torch(x, *, alpha, scale, input_scale):
    below = lt(x, _c(x, 0))
    at_zero = select(eq(x, _c(x, 0)), _c(x, scale * alpha * input_scale), _c(x, scale))
    safe = select(below, x, _c(x, 0))
    return select(below, _elu_lower(x, safe, alpha, scale, input_scale), at_zero)


elu_p = _row("elu", _elu_impl, _elu_d, _elu_d_torch, "EluBackward0")


# softplus: log1p(exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's kernel;
# threshold=inf gives the smooth function, jax.nn.softplus at beta = 1). The derivative is 1
# above the threshold and sigmoid(beta x) below it under both conventions; they differ in what
# they compute it from: JAX's rule reads sigmoid (logistic), PyTorch's softplus_backward
# z / (z + 1) with z = exp(beta x), so a derivative built with create_graph holds PyTorch's ops.
def _softplus_impl(x, *, beta, threshold):
    bx = x * _c(x, beta)
    over = bx > threshold
    soft = xp.log1p(xp.exp(xp.where(over, _c(x, 0), bx))) / _c(x, beta)
    return xp.where(over, x, soft)


def _softplus_d(x, *, beta, threshold, torch=False):
    bx = mul(x, _c(x, beta))
    over = gt(bx, _c(x, threshold))
    if not torch:
        return select(over, _c(x, 1), logistic(bx))
    z = exp(select(over, _c(x, 0), bx))  # no overflow in the branch not taken
    return select(over, _c(x, 1), div(z, add(z, _c(z, 1))))


softplus_p = _row("softplus", _softplus_impl, _softplus_d,
                  lambda x, **params: _softplus_d(x, **params, torch=True),
                  "SoftplusBackward0")


# hard_swish: 0 up to -3, x (x + 3) / 6 between, x from 3 on (and at NaN). Both conventions
# take x / 3 + 1/2 strictly between -3 and 3, 0 at and below -3 and 1 from 3 on; at NaN JAX's
# (jax.nn.hard_swish, x relu6(x + 3) / 6) is NaN, PyTorch's hardswish_backward 1.
def _hard_swish_impl(x):
    inside = (x > -3) & (x < 3)
    xs = xp.where(inside, x, _c(x, 0))  # no overflow in the branch not taken
    inner = xs * (xs + _c(x, 3)) / _c(x, 6)
    return xp.where(x <= -3, _c(x, 0), xp.where(x < 3, inner, x))


def _hard_swish_d(x, torch):
    inner = add(div(x, _c(x, 3)), _c(x, 0.5))
    top = select(lt(x, _c(x, 3)), inner, _c(x, 1))  # 1 from 3 on, and at NaN
    if not torch:  # JAX's: NaN at NaN
        top = select(eq(x, x), top, _c(x, np.nan))
    return select(le(x, _c(x, -3)), _c(x, 0), top)


hard_swish_p = _row("hard_swish", _hard_swish_impl, lambda x: _hard_swish_d(x, False),
                    lambda x: _hard_swish_d(x, True), "HardswishBackward0")


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """Bind the elu row: scale x above 0, scale alpha expm1(input_scale x) elsewhere."""
    return elu_p.bind(x, alpha=float(alpha), scale=float(scale), input_scale=float(input_scale))


def softplus(x, beta=1.0, threshold=float("inf")):
    """Bind the softplus row: log1p(exp(beta x)) / beta, x where beta x > threshold."""
    return softplus_p.bind(x, beta=float(beta), threshold=float(threshold))


def hard_swish(x):
    """Bind the hard_swish row: x relu6(x + 3) / 6."""
    return hard_swish_p.bind(x)
