"""torch.nn.functional: activations and losses, each one node named as in PyTorch."""

from __future__ import annotations

import warnings

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives.registry import REGISTRY
from functrans.torch import _activations as A
from functrans.torch import _creation as C
from functrans.torch import _elementwise as EW
from functrans.torch import _linalg as LA
from functrans.torch import _ops as O
from functrans.torch import _reductions as RD
from functrans.torch import _shape as S
from functrans.torch import _inplace as I
from functrans.torch._activations import (  # noqa: F401
    gelu,
    logsigmoid,
    softplus,
    softsign,
    tanhshrink,
)
from functrans.torch._dtype import result_type
from functrans.torch._elementwise import sigmoid, tanh  # noqa: F401
from functrans.torch._linalg import cosine_similarity, pairwise_distance  # noqa: F401
from functrans.torch.nn._embedding import embedding  # noqa: F401
from functrans.torch.nn._normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    rms_norm,
    standardize,
)
from functrans.torch._record import composite, run
from functrans.torch._tensor import Tensor
from functrans.torch.nn._convolution import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    max_pool1d,
    max_pool2d,
    pad,
)

__all__ = ["celu", "elu", "gelu", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
           "logsigmoid", "mish", "relu6", "selu", "silu", "softplus", "softsign", "tanhshrink",
           "relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss", "l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
           "cross_entropy", "linear", "bilinear", "huber_loss",
           "smooth_l1_loss", "cosine_similarity", "pairwise_distance", "dropout", "relu_", "elu_",
           "celu_", "selu_", "leaky_relu_", "hardtanh_", "softmin", "threshold",
           "threshold_", "normalize", "one_hot", "layer_norm", "conv1d", "conv2d",
           "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "pad",
           "batch_norm", "instance_norm", "group_norm", "embedding", "prelu", "rms_norm"]

_REDUCTIONS = ("mean", "sum", "none")


def _in_place_or_not(fn, name):
    """fn(input), or with inplace=True the same values written into input (the in-place form
    records as PyTorch's does: one node, input's version bumped)."""
    def activation(input, inplace=False):
        return I.inplace(input, fn) if inplace else fn(input)
    activation.__name__ = activation.__qualname__ = name
    activation.__doc__ = f"torch.nn.functional.{name}; inplace=True writes into input."
    return activation


relu = _in_place_or_not(EW.relu, "relu")
relu6 = _in_place_or_not(A.relu6, "relu6")
silu = _in_place_or_not(A.silu, "silu")
mish = _in_place_or_not(A.mish, "mish")
selu = _in_place_or_not(A.selu, "selu")
hardswish = _in_place_or_not(A.hardswish, "hardswish")
hardsigmoid = _in_place_or_not(A.hardsigmoid, "hardsigmoid")


def _maybe_in_place(fn, input, inplace, *args):
    return I.inplace(input, fn, *args) if inplace else fn(input, *args)


def elu(input, alpha=1.0, inplace=False):
    """torch.nn.functional.elu: x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _maybe_in_place(A.elu, input, inplace, alpha)


def celu(input, alpha=1.0, inplace=False):
    """torch.nn.functional.celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return _maybe_in_place(A.celu, input, inplace, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """torch.nn.functional.leaky_relu: x for x > 0, negative_slope * x otherwise."""
    return _maybe_in_place(A.leaky_relu, input, inplace, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """torch.nn.functional.hardtanh: x clipped to [min_val, max_val]."""
    return _maybe_in_place(A.hardtanh, input, inplace, min_val, max_val)


def _in_place(fn):
    name = fn.__name__ + "_"
    return O.named(lambda input, *args: fn(input, *args, inplace=True), name,
                   f"torch.nn.functional.{name}: {fn.__name__} with inplace=True.")


relu_, elu_, celu_, selu_, leaky_relu_, hardtanh_ = map(_in_place, (
    relu, elu, celu, selu, leaky_relu, hardtanh))


def dropout(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout: in training, each entry zeroed with probability p and the
    others scaled by 1 / (1 - p), the mask drawn from PyTorch's generator as its CPU dropout
    draws it (bernoulli_(1 - p) on a tensor like input); the input itself otherwise."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        noise = C.zeros((), dtype=input.dtype)
    else:
        noise = C.empty_like(input).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(noise) if inplace else EW.mul(input, noise)


def _softmax_dim(name, ndim, stacklevel):
    """PyTorch's implicit dim (deprecated, with a warning): 0 for 0-, 1- and 3-D input, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """torch.nn.functional.softmax: torch.softmax, with PyTorch's deprecated implicit dim."""
    if dim is None:
        dim = _softmax_dim("softmax", O.as_tensor(input)._value.ndim, _stacklevel)
    return A.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """torch.nn.functional.log_softmax: torch.log_softmax, with the implicit dim too."""
    if dim is None:
        dim = _softmax_dim("log_softmax", O.as_tensor(input)._value.ndim, _stacklevel)
    return A.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """torch.nn.functional.softmin: softmax(-input) along dim."""
    if dim is None:
        dim = _softmax_dim("softmin", O.as_tensor(input)._value.ndim, _stacklevel)
    return A.softmax(EW.neg(input), dim, dtype=dtype)


_THRESHOLD = composite("ThresholdBackward0")(
    lambda x, *, threshold, value: E.select(E.gt(x, threshold), x, np.asarray(value, x.dtype)))


def threshold(input, threshold, value, inplace=False):
    """torch.nn.functional.threshold: input where input > threshold, else value."""
    def fn(x):
        return O.unary(_THRESHOLD, x, {"threshold": float(threshold), "value": float(value)})
    return I.inplace(input, fn) if inplace else fn(input)


threshold_ = O.named(lambda input, threshold_, value: threshold(input, threshold_, value, True),
                     "threshold_", "torch.nn.functional.threshold_: threshold in place.")


@composite("PreluKernelBackward0")
def _prelu(x, w):
    # one slope for every entry, or one per channel (axis 1)
    w = fnp.reshape(w, () if w.size == 1 else (1, w.size) + (1,) * (x.ndim - 2))
    return E.select(E.gt(x, np.zeros((), x.dtype)), x, fnp.multiply(w, x))


def prelu(input, weight):
    """torch.nn.functional.prelu: x for x > 0, weight * x otherwise; weight holds one slope,
    or one per channel (axis 1 of input)."""
    x, w = O.as_tensor(input), O.as_tensor(weight)
    if w._value.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w._value.ndim}")
    channels = x._value.shape[1] if x._value.ndim >= 2 else 1
    if w._value.size != 1 and w._value.size != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {w._value.size} and channel size = "
                           f"{channels}.")
    dt = result_type(x, w)
    return run(_prelu, (x, w), (O._operand(x, dt), O._operand(w, dt)))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """torch.nn.functional.normalize: input / max(||input||_p along dim, eps)."""
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by functrans.torch")
    denom = RD.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return EW.div(input, denom)


def one_hot(tensor, num_classes=-1):
    """torch.nn.functional.one_hot: an int64 tensor with one more axis, 1 at each class."""
    v = O.as_tensor(tensor)._value
    if v.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if v.size and v.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(v.max()) + 1 if v.size else 0
    elif v.size and v.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return O.wrap((v[..., None] == np.arange(num_classes)).astype(np.int64))


def _layer_norm(x, *args, axes, eps, affine):
    y = standardize(x, axes, eps)
    for kind, arg in zip(affine, args):
        y = fnp.multiply(y, arg) if kind == "weight" else fnp.add(y, arg)
    return y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm: over the last len(normalized_shape) axes, (x - mean) /
    sqrt(biased variance + eps), times weight and plus bias where given."""
    x = O.as_tensor(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(int(d) for d in normalized_shape)
    if tuple(x.shape[len(x.shape) - len(shape):]) != shape or len(shape) > x.dim():
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(x.shape)}")
    axes = tuple(range(x.dim() - len(shape), x.dim()))
    extra = [(k, t) for k, t in (("weight", weight), ("bias", bias)) if t is not None]
    args = (x, *[O.as_tensor(t) for _, t in extra])
    if any(t._value.dtype != x._value.dtype for t in args):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return run(_LAYER_NORM, args, tuple(t._value for t in args),
               {"axes": axes, "eps": float(eps), "affine": tuple(k for k, _ in extra)})


_LAYER_NORM = composite("NativeLayerNormBackward0")(_layer_norm)


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(x, reduction):
    if reduction == "none":
        return x
    s = R.reduce_sum(x, tuple(range(x.ndim)))
    return s if reduction == "sum" else E.div(s, np.asarray(max(x.size, 1), x.dtype))


def _pair(input, target, mismatch="warn"):
    """input and target broadcast to one shape; a shape mismatch warns (mse, l1) or raises
    (binary cross entropy), with PyTorch's messages."""
    x, t = O.as_tensor(input), O.as_tensor(target)
    dt = result_type(x, t)
    if x._value.shape != t._value.shape:
        sizes = f"target size ({t.shape!r}) that is different to the input size ({x.shape!r})"
        if mismatch == "warn":
            warnings.warn(f"Using a {sizes}. This will likely lead to incorrect results due to "
                          "broadcasting. Please ensure they have the same size.", UserWarning,
                          stacklevel=3)
        elif mismatch == "bce":
            raise ValueError(f"Using a {sizes} is deprecated. Please ensure they have the same "
                             "size.")
        else:
            raise ValueError(f"Target size ({t.shape!r}) must be the same as input size "
                             f"({x.shape!r})")
        shape = np.broadcast_shapes(x._value.shape, t._value.shape)
        x, t = S.expand(x, shape), S.expand(t, shape)
    return x, t, dt


@composite("MseLossBackward0")
def _mse(x, t, *, reduction):
    d = E.sub(x, t)
    return _reduce(E.mul(d, d), reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.mse_loss: the squared error, averaged, summed or kept."""
    _check_reduction(reduction)
    x, t, dt = _pair(input, target)
    return run(_mse, (x, t), (O._operand(x, dt), O._operand(t, dt)), {"reduction": reduction})


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch.nn.functional.l1_loss: the absolute error, averaged, summed or kept."""
    _check_reduction(reduction)
    x, t, _ = _pair(input, target)
    d = EW.abs(EW.sub(x, t))
    return d if reduction == "none" else (RD.sum(d) if reduction == "sum" else RD.mean(d))


@composite("HuberLossBackward0")
def _huber(x, t, *, reduction, delta):
    # 0.5 d^2 where |d| < delta, delta (|d| - delta / 2) elsewhere (d = x - t)
    d = E.sub(x, t)
    half, dl = np.asarray(0.5, d.dtype), np.asarray(delta, d.dtype)
    inner = E.mul(half, E.mul(d, d))
    outer = E.mul(dl, E.sub(E.abs(d), E.mul(half, dl)))
    return _reduce(E.select(E.lt(E.abs(d), dl), inner, outer), reduction)


@composite("SmoothL1LossBackward0")
def _smooth_l1(x, t, *, reduction, beta):
    # 0.5 d^2 / beta where |d| < beta, |d| - beta / 2 elsewhere (d = x - t)
    d = E.sub(x, t)
    half, b = np.asarray(0.5, d.dtype), np.asarray(beta, d.dtype)
    inner = E.div(E.mul(half, E.mul(d, d)), b)
    outer = E.sub(E.abs(d), E.mul(half, b))
    return _reduce(E.select(E.lt(E.abs(d), b), inner, outer), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """torch.nn.functional.huber_loss: squared error below delta, delta-scaled absolute error
    above, averaged, summed or kept."""
    _check_reduction(reduction)
    x, t, dt = _pair(input, target)
    if weight is not None:
        return _weighted(EW.mul(huber_loss(x, t, "none", delta), weight), reduction)
    params = {"reduction": reduction, "delta": float(delta)}
    return run(_huber, (x, t), (O._operand(x, dt), O._operand(t, dt)), params)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """torch.nn.functional.smooth_l1_loss: squared error / beta below beta, absolute error
    above (l1_loss when beta is 0)."""
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    x, t, dt = _pair(input, target)
    params = {"reduction": reduction, "beta": float(beta)}
    return run(_smooth_l1, (x, t), (O._operand(x, dt), O._operand(t, dt)), params)


@composite("BinaryCrossEntropyBackward0")
def _bce(p, t, *, reduction):
    floor = np.asarray(-100.0, p.dtype)
    one = np.ones((), p.dtype)
    log_p = E.max(E.log(p), floor)           # PyTorch clamps the logs at -100
    log_q = E.max(E.log(E.sub(one, p)), floor)
    loss = E.neg(E.add(E.mul(t, log_p), E.mul(E.sub(one, t), log_q)))
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """torch.nn.functional.binary_cross_entropy of probabilities (logs clamped at -100)."""
    _check_reduction(reduction)
    x, t, dt = _pair(input, target, "bce")
    if weight is not None:
        return _weighted(EW.mul(binary_cross_entropy(x, t, reduction="none"), weight), reduction)
    return run(_bce, (x, t), (O._operand(x, dt), O._operand(t, dt)), {"reduction": reduction})


def _softplus_neg(x):
    """log(1 + exp(-x)) as log1p(exp(-|x|)) + relu(-x), each kink decided by one select so
    that the derivative at x = 0 is -sigmoid(0) = -1/2 (no tie of max or abs to split)."""
    zero = np.zeros((), x.dtype)
    pos = E.ge(x, zero)
    neg_abs = E.select(pos, E.neg(x), x)
    return E.add(E.log1p(E.exp(neg_abs)), E.select(pos, zero, E.neg(x)))


@composite("BinaryCrossEntropyWithLogitsBackward0")
def _bce_logits(x, t, *, reduction):
    # (1 - t) x + log(1 + exp(-x)), written to stay finite
    one = np.ones((), x.dtype)
    soft = _softplus_neg(x)
    return _reduce(E.add(E.mul(E.sub(one, t), x), soft), reduction)


@composite("BinaryCrossEntropyWithLogitsBackward0")
def _bce_logits_pos(x, t, pw, *, reduction):
    one = np.ones((), x.dtype)
    soft = _softplus_neg(x)
    scale = E.add(one, E.mul(E.sub(pw, one), t))
    return _reduce(E.add(E.mul(E.sub(one, t), x), E.mul(scale, soft)), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """torch.nn.functional.binary_cross_entropy_with_logits: BCE of sigmoid(input), stably."""
    _check_reduction(reduction)
    x, t, dt = _pair(input, target, "logits")
    if weight is not None:
        loss = binary_cross_entropy_with_logits(x, t, reduction="none", pos_weight=pos_weight)
        return _weighted(EW.mul(loss, weight), reduction)
    if pos_weight is not None:
        pw = O.as_tensor(pos_weight)
        return run(_bce_logits_pos, (x, t, pw), (O._operand(x, dt), O._operand(t, dt),
                                                 O._operand(pw, dt)),
                   {"reduction": reduction})
    return run(_bce_logits, (x, t), (O._operand(x, dt), O._operand(t, dt)),
               {"reduction": reduction})


def _weighted(loss, reduction):
    return loss if reduction == "none" else (RD.sum(loss) if reduction == "sum"
                                             else RD.mean(loss))


@composite("NllLossBackward0")
def _nll(logp, target, weight, *, reduction, ignore_index):
    # weight: one per class (a constant of the node: PyTorch does not differentiate it)
    n = logp.shape[0]
    flat = REGISTRY["reshape"].bind(logp, new_sizes=(logp.size,))
    keep = E.ne(target, np.asarray(ignore_index, target.dtype))
    safe = E.select(keep, target, np.zeros((), target.dtype))
    pos = E.add(E.mul(np.arange(n, dtype=np.int64), np.asarray(logp.shape[1], np.int64)), safe)
    w = E.select(keep, REGISTRY["gather"].bind(weight, safe, axis=0), np.zeros((), logp.dtype))
    picked = E.mul(REGISTRY["gather"].bind(flat, pos, axis=0), w)
    loss = E.neg(picked)
    if reduction == "none":
        return loss
    total = R.reduce_sum(loss, (0,))
    if reduction == "sum":
        return total
    return E.div(total, R.reduce_sum(w, (0,)))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """torch.nn.functional.nll_loss: minus the log-probability of each target class."""
    _check_reduction(reduction)
    x = O.as_tensor(input)
    tgt = O.as_tensor(target)._value.astype(np.int64)
    if x._value.ndim != 2 or tgt.ndim != 1:
        raise ValueError(f"nll_loss: expected input of shape (N, C) and target of shape (N,), "
                         f"got {tuple(x._value.shape)} and {tuple(tgt.shape)}")
    c = x._value.shape[1]
    bad = (tgt != ignore_index) & ((tgt < 0) | (tgt >= c))
    if bad.any():
        raise IndexError(f"Target {int(tgt[bad][0])} is out of bounds.")
    w = np.ones(c, x._value.dtype) if weight is None else \
        O.as_tensor(weight)._value.astype(x._value.dtype)
    if w.shape != (c,):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           "classes but got weight tensor of shape: "
                           f"[{', '.join(map(str, w.shape))}]")
    params = {"reduction": reduction, "ignore_index": int(ignore_index)}
    return run(_nll, (x, None, None), (x._value, tgt, w), params)


_DIV_SCALAR = O._prim("div", "DivBackward1")  # PyTorch's div(Tensor, Scalar), as C++ calls it


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """PyTorch's cross_entropy, composed as PyTorch composes it: class indices (NllLoss,
    with label smoothing an added smoothing term) or class probabilities."""
    _check_reduction(reduction)
    logp = A.log_softmax(input, 1)
    t = O.as_tensor(target)
    c = logp._value.shape[1]
    w = None if weight is None else S.reshape(O.as_tensor(weight), (c,) + (1,) * (
        logp._value.ndim - 2))
    if t._value.dtype.kind == "f":  # probabilities, one per class
        if label_smoothing:
            t = EW.add(EW.mul(t, 1 - label_smoothing), label_smoothing / c)
        prod = EW.mul(logp, t) if w is None else EW.mul(EW.mul(logp, t), w)
        if reduction == "none":
            return EW.neg(RD.sum(prod, 1))
        if reduction == "sum":
            return EW.neg(RD.sum(prod))
        return O.nary(_DIV_SCALAR, (EW.neg(RD.sum(prod)), logp._value.size / c),
                      scalar_overload=True)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    ignored = EW.eq(t, ignore_index)
    smooth = EW.neg(RD.sum(logp if w is None else EW.mul(logp, w), 1))
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "sum":
        smooth = RD.sum(smooth)
    elif reduction == "mean":
        kept = t._value[~ignored._value]
        den = float(len(kept)) if weight is None else \
            float(O.as_tensor(weight)._value[kept].sum())
        smooth = O.nary(_DIV_SCALAR, (RD.sum(smooth), den), scalar_overload=True)
    return EW.add(EW.mul(nll, 1 - label_smoothing), EW.mul(smooth, label_smoothing / c))


@composite("AddmmBackward0")
def _addmm(bias, x, wt):
    out = REGISTRY["dot_general"].bind(x, wt, dimension_numbers=(((1,), (0,)), ((), ())))
    return E.add(out, REGISTRY["broadcast_in_dim"].bind(
        bias, shape=out.shape, broadcast_dimensions=tuple(
            range(out.ndim - bias.ndim, out.ndim))) if bias.shape != out.shape else bias)


def linear(input, weight, bias=None):
    """input @ weight.T + bias (AddmmBackward0 for a matrix input, as PyTorch records it)."""
    x, w = O.as_tensor(input), O.as_tensor(weight)
    wt = S.t(w)
    if bias is None:
        return LA.matmul(x, wt)
    b = O.as_tensor(bias)
    if x._value.ndim == 2 and isinstance(b, Tensor) and b._value.ndim <= 2:
        return run(_addmm, (b, x, wt), (b._value, x._value, wt._value))
    if x._value.ndim >= 1 and isinstance(b, Tensor) and b._value.ndim <= 1:
        # PyTorch flattens the leading dimensions, runs addmm and views the result back
        rows = S.reshape(x, (-1, x._value.shape[-1]))
        out = run(_addmm, (b, rows, wt), (b._value, rows._value, wt._value))
        return S.view(out, tuple(x._value.shape[:-1]) + (wt._value.shape[-1],))
    return EW.add(LA.matmul(x, wt), b)


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T A_o x2 + b_o for weight A of shape (out, in1, in2), over any leading
    dimensions of the inputs."""
    x1, x2, w = O.as_tensor(input1), O.as_tensor(input2), O.as_tensor(weight)
    if w._value.ndim != 3 or x1._value.shape[-1:] != w._value.shape[1:2] or \
            x2._value.shape[-1:] != w._value.shape[2:3] or \
            x1._value.shape[:-1] != x2._value.shape[:-1]:
        raise RuntimeError(f"bilinear(): input shapes {tuple(x1.shape)} and {tuple(x2.shape)} "
                           f"do not fit a weight of shape {tuple(w.shape)}; expected "
                           "(..., in1_features), (..., in2_features) and (out_features, "
                           "in1_features, in2_features)")
    out = LA.einsum("...i,oij,...j->...o", x1, w, x2)
    return out if bias is None else EW.add(out, bias)
