"""torch.nn.functional: activations and losses over functrans.torch's ops."""

from __future__ import annotations

from functrans.torch import _ops as O
from functrans.torch._ops import (  # noqa
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    out = O.matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else O.add(out, bias)


def _reduce(x, reduction):
    if reduction == "mean":
        return O.mean(x)
    if reduction == "sum":
        return O.sum(x)
    if reduction == "none":
        return x
    raise ValueError(f"{reduction} is not a valid value for reduction")


def mse_loss(input, target, reduction="mean"):
    d = O.sub(input, target)
    return _reduce(O.mul(d, d), reduction)


def l1_loss(input, target, reduction="mean"):
    return _reduce(O.abs(O.sub(input, target)), reduction)


def nll_loss(input, target, reduction="mean"):
    from functrans.torch._shape import gather
    picked = gather(input, 1, target.unsqueeze(1)).squeeze(1)
    return _reduce(O.neg(picked), reduction)


def cross_entropy(input, target, reduction="mean"):
    return nll_loss(log_softmax(input, 1), target, reduction)


def binary_cross_entropy(input, target, reduction="mean"):
    one_minus = O.rsub(input, 1.0)
    loss = O.neg(O.add(O.mul(target, O.clamp(O.log(input), min=-100.0)),
                       O.mul(O.rsub(target, 1.0), O.clamp(O.log(one_minus), min=-100.0))))
    return _reduce(loss, reduction)
