"""Activations: softmax, log_softmax, softplus, silu, gelu, leaky_relu, elu and the others
(relu and sigmoid are in _elementwise), each one node as in PyTorch; the rows of
functrans/primitives/activations.py state PyTorch's derivatives beside JAX's."""

from __future__ import annotations

import numpy as np

import functrans.nn as ft_nn
from functrans.primitives import activations as AP
from functrans.primitives import elementwise as E
from functrans.torch import _dtype
from functrans.torch._ops import _prim, as_tensor, named, unary, unary_float
from functrans.torch._record import composite
from functrans.torch._tensor import _dim


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


def _hardsigmoid(x):
    # x / 6 + 1/2 strictly between -3 and 3; a NaN stays NaN with no gradient (x * 0)
    c = lambda v: np.asarray(v, x.dtype)  # noqa: E731
    outside = E.select(E.le(x, c(-3)), c(0), E.select(E.ge(x, c(3)), c(1), E.mul(x, c(0))))
    return E.select(E.and_(E.gt(x, c(-3)), E.lt(x, c(3))), E.add(E.div(x, c(6)), c(0.5)), outside)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_SOFTPLUS = {"beta": 1.0, "threshold": 20.0}
# (name, node, function of an array and the params, the params with their defaults, PyTorch's
# kernel (named when it refuses integers), what it computes)
_ACTIVATIONS = (
    ("softplus", "SoftplusBackward0", AP.softplus, _SOFTPLUS, "softplus_cpu",
     "log(1 + exp(beta * x)) / beta; x itself above threshold"),
    ("elu", "EluBackward0", AP.elu, {"alpha": 1.0}, "elu_cpu",
     "x for x > 0, alpha * (exp(x) - 1) otherwise"),
    ("celu", "CeluBackward0", lambda x, alpha: AP.elu(x, alpha, input_scale=1 / alpha),
     {"alpha": 1.0}, "elu_cpu", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))"),
    ("selu", "EluBackward0", lambda x: AP.elu(x, SELU_ALPHA, SELU_SCALE), {}, "elu_cpu",
     "scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), PyTorch's constants"),
    ("silu", "SiluBackward0", ft_nn.silu, {}, "silu_cpu", "x * sigmoid(x)"),
    ("mish", "MishBackward0", lambda x: E.mul(x, E.tanh(AP.softplus(x, **_SOFTPLUS))), {},
     "mish_cpu", "x * tanh(softplus(x))"),
    ("logsigmoid", "LogSigmoidBackward0", lambda x: E.neg(AP.softplus(E.neg(x), **_SOFTPLUS)),
     {}, "log_sigmoid_cpu", "log(sigmoid(x)), computed stably as -softplus(-x)"),
    ("hardswish", "HardswishBackward0", AP.hard_swish, {}, "hardswish_cpu",
     "x * relu6(x + 3) / 6"),
    ("hardsigmoid", "HardsigmoidBackward0", _hardsigmoid, {}, "hardsigmoid_cpu",
     "relu6(x + 3) / 6"),
    ("leaky_relu", "LeakyReluBackward0", lambda x, negative_slope: E.leaky_relu_p.bind(
        x, slope=negative_slope), {"negative_slope": 0.01}, "leaky_relu_cpu",
     "x for x > 0, negative_slope * x otherwise"),
    ("gelu", "GeluBackward0", lambda x, approximate: ft_nn.gelu(x, approximate == "tanh"),
     {"approximate": "none"}, "GeluKernelImpl",
     "x * Phi(x), or its tanh approximation (approximate='tanh')"),
)


def _activation(name, node, fn, defaults, kernel, what):
    op = composite(node)(fn)

    def activation(input, *args, inplace=False, **kwargs):
        params = dict(defaults, **dict(zip(defaults, args)), **kwargs)
        if len(params) > len(defaults):
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"'{next(k for k in kwargs if k not in defaults)}'")
        params = {k: v if isinstance(v, str) else float(v) for k, v in params.items()}
        return unary(op, _floats(input, kernel), params)
    return named(activation, name, f"torch.nn.functional.{name}: {what}.")


for _row in _ACTIVATIONS:
    globals()[_row[0]] = _activation(*_row)
_hardtanh = _prim("hard_tanh", "HardtanhBackward0")  # the row states PyTorch's kink rule


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
