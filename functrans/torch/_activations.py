"""Activations: softmax, log_softmax, softplus, silu, gelu, leaky_relu, elu and the others
(relu and sigmoid are in _elementwise), each one node as in PyTorch."""

from __future__ import annotations

import numpy as np

import functrans.nn as ft_nn
from functrans.primitives import elementwise as E
from functrans.torch import _dtype
from functrans.torch._ops import _prim, as_tensor, named, unary, unary_float
from functrans.torch._record import composite
from functrans.torch._tensor import _dim


def _c(value, x):
    return np.asarray(value, x.dtype)


def _floats(input, kernel):
    """The tensor of `input`, refused as PyTorch's float-only kernels refuse integers."""
    x = as_tensor(input)
    if x._value.dtype.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype.kind(x._value.dtype)}'")
    return x


def _normalizer(name, op, what):
    def fn(input, dim=None, dtype=None):
        if dim is None:  # torch.softmax and Tensor.softmax have no implicit dim (F.softmax has)
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        x = as_tensor(input, dtype)
        d = _dim(dim, x._value.ndim)  # checks the range; a 0-d tensor takes dim 0 or -1
        return unary_float(op, x, {"dim": d if x._value.ndim else ()})
    return named(fn, name, f"torch.{name}: {what} along dim, computed stably.")


softmax = _normalizer("softmax", composite("SoftmaxBackward0")(
    lambda x, *, dim: ft_nn.softmax(x, axis=dim)), "exp(input) normalised to sum to one")
log_softmax = _normalizer("log_softmax", composite("LogSoftmaxBackward0")(
    lambda x, *, dim: ft_nn.log_softmax(x, axis=dim)), "log(softmax(input))")


def _softplus_of(x, beta=1.0, threshold=20.0):
    # PyTorch's: x above the threshold, else log1p(exp(beta x)) / beta, whose exp sees 0 there
    # (no overflow, and no inf * 0 in its derivative)
    bx = E.mul(x, _c(beta, x))
    over = E.gt(bx, _c(threshold, x))
    soft = E.div(E.log1p(E.exp(E.select(over, _c(0, x), bx))), _c(beta, x))
    return E.select(over, x, soft)


def _elu_family(x, alpha, scale, input_scale):
    """PyTorch's elu kernels: scale * x above 0, scale * alpha * expm1(input_scale * x) below;
    at 0 the first derivative is the lower branch's and the second is 0 (elu_backward tests
    x <= 0, elu_double_backward x < 0)."""
    neg = E.lt(x, _c(0, x))
    safe = E.select(neg, x, _c(0, x))  # expm1 of large x would overflow, of NaN leak a NaN
    lower = E.mul(_c(scale * alpha, x), E.expm1(E.mul(safe, _c(input_scale, x))))
    at_zero = E.mul(_c(scale * alpha * input_scale, x), x)
    return E.select(neg, lower, E.select(E.eq(x, _c(0, x)), at_zero, E.mul(_c(scale, x), x)))


def _hardswish(x):
    # x (x + 3) / 6 between -3 and 3; 0 at and below -3; x from 3 up (and at NaN)
    inside = E.and_(E.gt(x, _c(-3, x)), E.lt(x, _c(3, x)))
    xs = E.select(inside, x, _c(0, x))  # no NaN leaking from the branch not taken
    inner = E.div(E.mul(xs, E.add(xs, _c(3, x))), _c(6, x))
    return E.select(E.le(x, _c(-3, x)), _c(0, x), E.select(E.lt(x, _c(3, x)), inner, x))


def _hardsigmoid(x):
    # x / 6 + 1/2 strictly between -3 and 3; a NaN stays NaN with no gradient (x * 0)
    inner = E.add(E.div(x, _c(6, x)), _c(0.5, x))
    outside = E.select(E.le(x, _c(-3, x)), _c(0, x),
                       E.select(E.ge(x, _c(3, x)), _c(1, x), E.mul(x, _c(0, x))))
    return E.select(E.and_(E.gt(x, _c(-3, x)), E.lt(x, _c(3, x))), inner, outside)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_softplus = composite("SoftplusBackward0")(_softplus_of)
_elu = composite("EluBackward0")(lambda x, *, alpha: _elu_family(x, alpha, 1.0, 1.0))
_celu = composite("CeluBackward0")(lambda x, *, alpha: _elu_family(x, alpha, 1.0, 1.0 / alpha))
_gelu = composite("GeluBackward0")(lambda x: ft_nn.gelu(x, approximate=False))
_gelu_tanh = composite("GeluBackward0")(lambda x: ft_nn.gelu(x, approximate=True))
# the leaky_relu and hard_tanh rows state PyTorch's derivatives at the kinks beside JAX's
_leaky_relu = _prim("leaky_relu", "LeakyReluBackward0")
_hardtanh = _prim("hard_tanh", "HardtanhBackward0")


def softplus(input, beta=1.0, threshold=20.0):
    """torch.nn.functional.softplus: log(1 + exp(beta * x)) / beta; x itself above threshold."""
    return unary(_softplus, _floats(input, "softplus_cpu"),
                 {"beta": float(beta), "threshold": float(threshold)})


def gelu(input, approximate="none"):
    """torch.nn.functional.gelu: x * Phi(x), or its tanh approximation (approximate='tanh')."""
    return unary(_gelu_tanh if approximate == "tanh" else _gelu, _floats(input, "GeluKernelImpl"))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """torch.nn.functional.leaky_relu: x for x > 0, negative_slope * x otherwise."""
    return unary(_leaky_relu, _floats(input, "leaky_relu_cpu"), {"slope": float(negative_slope)})


def elu(input, alpha=1.0, inplace=False):
    """torch.nn.functional.elu: x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return unary(_elu, _floats(input, "elu_cpu"), {"alpha": float(alpha)})


def celu(input, alpha=1.0, inplace=False):
    """torch.celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return unary(_celu, _floats(input, "elu_cpu"), {"alpha": float(alpha)})


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """torch.nn.functional.hardtanh: x clipped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return unary(_hardtanh, input, {"lo": float(min_val), "hi": float(max_val)})


def relu6(input, inplace=False):
    """torch.nn.functional.relu6: x clipped to [0, 6]."""
    return hardtanh(input, 0.0, 6.0)


def softsign(input):
    """torch.nn.functional.softsign: x / (1 + |x|)."""
    x = as_tensor(input)
    return x / (x.abs() + 1)


def tanhshrink(input):
    """torch.nn.functional.tanhshrink: x - tanh(x)."""
    x = as_tensor(input)
    return x - x.tanh()


def _unary_activation(name, node, fn, kernel, what):
    op = composite(node)(fn)
    return named(lambda input, inplace=False: unary(op, _floats(input, kernel)), name,
                 f"torch.nn.functional.{name}: {what}.")


silu = _unary_activation("silu", "SiluBackward0", ft_nn.silu, "silu_cpu", "x * sigmoid(x)")
mish = _unary_activation("mish", "MishBackward0", lambda x: E.mul(x, E.tanh(_softplus_of(x))),
                         "mish_cpu", "x * tanh(softplus(x))")
logsigmoid = _unary_activation("logsigmoid", "LogSigmoidBackward0",  # -softplus(-x)
                               lambda x: E.neg(_softplus_of(E.neg(x))), "log_sigmoid_cpu",
                               "log(sigmoid(x)), computed stably")
selu = _unary_activation("selu", "EluBackward0",
                         lambda x: _elu_family(x, SELU_ALPHA, SELU_SCALE, 1.0), "elu_cpu",
                         "scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), PyTorch's "
                         "constants")
hardswish = _unary_activation("hardswish", "HardswishBackward0", _hardswish, "hardswish_cpu",
                              "x * relu6(x + 3) / 6")
hardsigmoid = _unary_activation("hardsigmoid", "HardsigmoidBackward0", _hardsigmoid,
                                "hardsigmoid_cpu", "relu6(x + 3) / 6")
