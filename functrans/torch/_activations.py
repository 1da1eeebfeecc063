"""Activations: softmax, log_softmax, softplus, silu, gelu, leaky_relu, elu (relu and sigmoid
are in _elementwise), each one node as in PyTorch."""

from __future__ import annotations

import math

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.torch._ops import _float_value, as_tensor, unary_float
from functrans.torch._record import composite, run
from functrans.torch._tensor import _dim

# --- activation functions --------------------------------------------------------------------

@composite("SoftmaxBackward0")
def _softmax(x, *, dim):
    z = E.sub(x, S.broadcast_in_dim(R.reduce_max(x, (dim,)), x.shape, _kept(x.ndim, dim)))
    e = E.exp(z)
    s = R.reduce_sum(e, (dim,))
    return E.div(e, S.broadcast_in_dim(s, x.shape, _kept(x.ndim, dim)))


@composite("LogSoftmaxBackward0")
def _log_softmax(x, *, dim):
    z = E.sub(x, S.broadcast_in_dim(R.reduce_max(x, (dim,)), x.shape, _kept(x.ndim, dim)))
    lse = E.log(R.reduce_sum(E.exp(z), (dim,)))
    return E.sub(z, S.broadcast_in_dim(lse, x.shape, _kept(x.ndim, dim)))


def _kept(ndim, dim):
    return tuple(i for i in range(ndim) if i != dim)


def _require_dim(name, dim):
    if dim is None:  # torch.softmax and Tensor.softmax have no implicit dim (F.softmax has)
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


def softmax(input, dim=None, dtype=None):
    _require_dim("softmax", dim)
    x = as_tensor(input, dtype)
    if x._value.ndim == 0:
        return unary_float(_softmax_scalar, x)
    d = _dim(dim, x._value.ndim)
    return run(_softmax, (x,), (_float_value(x),), {"dim": d}, (d,))


def log_softmax(input, dim=None, dtype=None):
    _require_dim("log_softmax", dim)
    x = as_tensor(input, dtype)
    d = _dim(dim, x._value.ndim)
    return run(_log_softmax, (x,), (_float_value(x),), {"dim": d}, (d,))


@composite("SoftmaxBackward0")
def _softmax_scalar(x):
    return E.exp(E.sub(x, x))




@composite("SoftplusBackward0")
def _softplus(x, *, beta, threshold):
    bx = E.mul(x, np.asarray(beta, x.dtype))
    soft = E.div(E.log1p(E.exp(E.neg(E.abs(bx)))), np.asarray(beta, x.dtype))
    soft = E.add(soft, E.div(E.max(bx, np.zeros((), x.dtype)), np.asarray(beta, x.dtype)))
    return E.select(E.gt(bx, np.asarray(threshold, x.dtype)), x, soft)


def softplus(input, beta=1.0, threshold=20.0):
    x = as_tensor(input)
    return run(_softplus, (x,), (_float_value(x),), {"beta": float(beta),
                                                      "threshold": float(threshold)},
               (float(beta), float(threshold)))


@composite("SiluBackward0")
def _silu(x):
    return E.mul(x, E.logistic(x))


def silu(input):
    return unary_float(_silu, input)


@composite("GeluBackward0")
def _gelu(x):
    half = np.asarray(0.5, x.dtype)
    return E.mul(E.mul(half, x),
                 E.add(np.ones((), x.dtype), E.erf(E.mul(x, np.asarray(0.5 ** 0.5, x.dtype)))))


@composite("GeluBackward0")
def _gelu_tanh(x):
    c = np.asarray(math.sqrt(2 / math.pi), x.dtype)
    inner = E.mul(c, E.add(x, E.mul(np.asarray(0.044715, x.dtype), E.integer_pow(x, 3))))
    return E.mul(E.mul(np.asarray(0.5, x.dtype), x), E.add(np.ones((), x.dtype), E.tanh(inner)))


def gelu(input, approximate="none"):
    return unary_float(_gelu_tanh if approximate == "tanh" else _gelu, input)


@composite("LeakyReluBackward0")
def _leaky_relu(x, *, slope):
    return E.select(E.gt(x, np.zeros((), x.dtype)), x, E.mul(x, np.asarray(slope, x.dtype)))


def leaky_relu(input, negative_slope=0.01):
    x = as_tensor(input)
    return run(_leaky_relu, (x,), (x._value,), {"slope": float(negative_slope)},
               (float(negative_slope),))


@composite("EluBackward0")
def _elu(x, *, alpha):
    zero = np.zeros((), x.dtype)
    return E.select(E.gt(x, zero), x, E.mul(np.asarray(alpha, x.dtype), E.expm1(x)))


def elu(input, alpha=1.0):
    x = as_tensor(input)
    return run(_elu, (x,), (x._value,), {"alpha": float(alpha)}, (float(alpha),))


