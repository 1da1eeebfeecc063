"""torch.nn.functional's batch_norm, instance_norm and group_norm: each one node named as
PyTorch names it (instance_norm is batch_norm on a view, as PyTorch composes it), built from
functrans.numpy calls, so every derivative comes from the primitive table. The running
statistics are updated outside the graph, as PyTorch's kernels update them."""

from __future__ import annotations

import warnings

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.torch import _dtype
from functrans.torch import _ops as O
from functrans.torch import _shape as S
from functrans.torch._grad_mode import no_grad
from functrans.torch._record import composite, run
from functrans.torch._tensor import Tensor

__all__ = ["batch_norm", "instance_norm", "group_norm", "rms_norm", "standardize",
           "verify_batch_size"]


def standardize(x, axes: tuple, eps: float):
    """(x - mean) / sqrt(biased variance + eps) over `axes`, the variance of the centred values
    (two passes, as PyTorch's CPU kernels compute it)."""
    centred = fnp.subtract(x, fnp.mean(x, axis=axes, keepdims=True))
    var = fnp.mean(fnp.multiply(centred, centred), axis=axes, keepdims=True)
    return fnp.multiply(centred, E.rsqrt(fnp.add(var, np.asarray(eps, x.dtype))))


def _per_channel(v, ndim: int):
    """A (C,) vector shaped to broadcast along axis 1 of an ndim-D input."""
    return fnp.reshape(v, (1, v.shape[0]) + (1,) * (ndim - 2))


def _scale_shift(y, args, affine):
    for kind, arg in zip(affine, args):
        arg = _per_channel(arg, y.ndim)
        y = fnp.multiply(y, arg) if kind == "weight" else fnp.add(y, arg)
    return y


@composite("NativeBatchNormBackward0")
def _batch_norm(x, *args, eps, running, affine):
    # running: normalise with the given mean and variance (constants of the node) instead of
    # the batch's
    axes = (0, *range(2, x.ndim))
    if running:
        mean, var = (_per_channel(v, x.ndim) for v in args[:2])
        y = fnp.multiply(fnp.subtract(x, mean),
                         E.rsqrt(fnp.add(var, np.asarray(eps, x.dtype))))
        return _scale_shift(y, args[2:], affine)
    return _scale_shift(standardize(x, axes, eps), args, affine)


@composite("NativeGroupNormBackward0")
def _group_norm(x, *args, groups, eps, affine):
    n, c = x.shape[:2]
    y = standardize(fnp.reshape(x, (n, groups, -1)), (2,), eps)
    return _scale_shift(fnp.reshape(y, x.shape), args, affine)


def verify_batch_size(size) -> None:
    """PyTorch's refusal to normalise one value per channel in training."""
    if size[0] * int(np.prod(size[2:], dtype=np.int64)) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {size!r}")


def _vector(name: str, t, c: int, dtype):
    """The array of a per-channel tensor (weight, bias, running stats), PyTorch's checks."""
    v = t._value
    if v.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {v.size}")
    if v.dtype != dtype:
        if dtype == np.float32:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return v.reshape(c)


def _update_running(running_mean, running_var, x: np.ndarray, momentum: float) -> None:
    """running <- (1 - momentum) running + momentum * batch statistic, the variance unbiased;
    written into the buffers' storage off the graph (PyTorch's kernel bumps no version)."""
    axes = (0, *range(2, x.ndim))
    n = x.size // x.shape[1]
    wide = x.astype(np.float64)
    mean = wide.mean(axis=axes)
    var = ((wide - mean.reshape((1, -1) + (1,) * (x.ndim - 2))) ** 2).sum(axis=axes) / (n - 1)
    for buf, stat in ((running_mean, mean), (running_var, var)):
        if buf is not None:
            dst = buf._value
            new = (1 - momentum) * dst.reshape(-1).astype(np.float64) + momentum * stat
            np.copyto(dst, new.reshape(dst.shape), casting="unsafe")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5) -> Tensor:
    """torch.nn.functional.batch_norm: each channel (axis 1) normalised by the batch's mean
    and biased variance in training (and the running statistics, when given, moved toward
    the batch's with the unbiased variance), by running_mean and running_var otherwise; then
    times weight and plus bias where given."""
    x = O.as_tensor(input)
    if training:
        verify_batch_size(x.size())
        if eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    v = x._value
    c = v.shape[1] if v.ndim > 1 else 0
    dtype = v.dtype
    extra = [(k, O.as_tensor(t)) for k, t in (("weight", weight), ("bias", bias))
             if t is not None]
    vals = [_vector(k, t, c, dtype) for k, t in extra]
    stats = [] if running_mean is None else [
        _vector(k, O.as_tensor(t), c, dtype)
        for k, t in (("running_mean", running_mean), ("running_var", running_var))]
    if training and stats:
        _update_running(running_mean, running_var, v, momentum)
    use_running = not training
    consts = stats if use_running else []
    inputs = (x, *[None] * len(consts), *[t for _, t in extra])
    params = {"eps": float(eps), "running": use_running, "affine": tuple(k for k, _ in extra)}
    # the running statistics are copied: the node keeps their values, not the buffers
    return run(_batch_norm, inputs, (v, *[s.copy() for s in consts], *vals), params)


def _verify_spatial_size(size) -> None:
    if int(np.prod(size[2:], dtype=np.int64)) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{size!r}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5) -> Tensor:
    """torch.nn.functional.instance_norm: each channel of each sample normalised over its
    spatial axes; PyTorch's composition (batch_norm of the input viewed as one sample of
    N * C channels, the running statistics averaged over the samples)."""
    x = O.as_tensor(input)
    if use_input_stats:
        _verify_spatial_size(x.size())
    shape = tuple(x.shape)
    n, c = shape[:2]

    def repeated(t):
        return None if t is None else O.as_tensor(t).repeat(n)

    rm, rv = repeated(running_mean), repeated(running_var)
    out = batch_norm(S.reshape(x, (1, n * c) + shape[2:]), rm, rv, repeated(weight),
                     repeated(bias), use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            for buf, moved in ((running_mean, rm), (running_var, rv)):
                if buf is not None:
                    buf.copy_(moved.view(n, c).mean(0))
    return S.view(out, shape)


def group_norm(input, num_groups: int, weight=None, bias=None, eps=1e-5) -> Tensor:
    """torch.nn.functional.group_norm: the channels split into num_groups groups, each
    sample's group normalised by its mean and biased variance; then times weight and plus bias
    (one per channel) where given."""
    x = O.as_tensor(input)
    v = x._value
    if v.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{v.ndim}")
    n, c = v.shape[:2]
    verify_batch_size([n * c // num_groups, num_groups, *v.shape[2:]])
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(v.shape)} and "
                           f"num_groups={num_groups}")
    extra = [(k, O.as_tensor(t)) for k, t in (("weight", weight), ("bias", bias))
             if t is not None]
    for k, t in extra:
        if t._value.ndim != 1 or t._value.size != c:
            raise RuntimeError(f"Expected {k} to be a vector of size equal to the number of "
                               f"channels in input, but got {k} of shape "
                               f"{list(t._value.shape)} and input of shape {list(v.shape)}")
        if t._value.dtype != v.dtype:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    params = {"groups": int(num_groups), "eps": float(eps),
              "affine": tuple(k for k, _ in extra)}
    return run(_group_norm, (x, *[t for _, t in extra]),
               (v, *[t._value for _, t in extra]), params)


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None) -> Tensor:
    """torch.nn.functional.rms_norm: input / sqrt(mean(input^2) + eps) over the last
    len(normalized_shape) axes, times weight where given; eps defaults to the dtype's machine
    epsilon. Composed of tensor ops as PyTorch's CPU kernel composes it (its nodes: Mul, Rsqrt,
    Add, Mean, Pow)."""
    x = O.as_tensor(input)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(d) for d in normalized_shape)
    if len(shape) > x.dim() or tuple(x.shape[x.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(x.shape)}")
    if eps is None:
        eps = float(np.finfo(x._value.dtype).eps)
    dims = tuple(range(x.dim() - len(shape), x.dim()))
    y = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is None:
        return y
    w = O.as_tensor(weight)
    if w._value.dtype != x._value.dtype:
        warnings.warn("Mismatch dtype between input and weight: input dtype = "
                      f"{_dtype.cpp_name(x._value.dtype)}, weight dtype = "
                      f"{_dtype.cpp_name(w._value.dtype)}, Cannot dispatch to fused "
                      "implementation.", UserWarning, stacklevel=2)
    return y * w
