"""torch.nn.functional's convolutions, pools and pad: each one node named as PyTorch names it,
computed by functrans.convolution (the implementation behind functrans.lax's convolutions),
with PyTorch's argument forms, output sizes and messages."""

from __future__ import annotations

import math
import operator

import numpy as np

import functrans.numpy as fnp
from functrans.core.ownership import owned
from functrans.convolution import conv_general_dilated, reduce_window, window_slices
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape_ops import broadcast_in_dim, pad as pad_prim, transpose
from functrans.torch import _ops as O
from functrans.torch import _shape as S
from functrans.torch._dtype import cpp_name, kind
from functrans.torch._record import composite, run
from functrans.torch._tensor import warn_once, wrap

__all__ = ["conv1d", "conv2d", "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "pad"]


def _tuple(value, n: int) -> tuple:
    """An int repeated n times, or the ints of a sequence (PyTorch's _single/_pair)."""
    if isinstance(value, (list, tuple)):
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),) * n


def _sizes(values) -> str:
    return " x ".join(map(str, values))


# --- convolution ---------------------------------------------------------------------------

@composite("ConvolutionBackward0")
def _convolution(x, w, *bias, stride, padding, dilation, groups):
    y = conv_general_dilated(x, w, stride, padding, rhs_dilation=dilation,
                             feature_group_count=groups)
    if bias:
        y = E.add(y, broadcast_in_dim(bias[0], y.shape, (1,)))
    return y


def _conv(name, n, input, weight, bias, stride, padding, dilation, groups):
    x, w = O.as_tensor(input), O.as_tensor(weight)
    xv, wv = x._value, w._value
    if xv.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(xv.shape)}")
    dims = wv.ndim - 2
    stride, dilation = _tuple(stride, n), _tuple(dilation, n)
    for label, values in (("stride", stride), ("dilation", dilation)):
        if len(values) != dims:
            raise RuntimeError(f"expected {label} to be a single integer value or a list of "
                               f"{dims} values to match the convolution dimensions, but got "
                               f"{label}={list(values)}")
        if any(v <= 0 for v in values):
            raise RuntimeError(f"non-positive {label} is not supported")
    if wv.ndim != xv.ndim + (xv.ndim == n + 1):
        raise RuntimeError(f"Expected {wv.ndim}-dimensional input for {wv.ndim}-dimensional "
                           f"weight {list(wv.shape)}, but got {xv.ndim}-dimensional input of "
                           f"size {list(xv.shape)} instead")
    kernel = [(k - 1) * d + 1 for k, d in zip(wv.shape[2:], dilation)]
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = tuple(((k - 1) // 2, k - 1 - (k - 1) // 2) if padding == "same" else (0, 0)
                     for k in kernel)
        if any(lo != hi for lo, hi in pads):
            warn_once("conv_same_asymmetric", "Using padding='same' with even kernel lengths "
                      "and odd dilation may require a zero-padded copy of the input be created",
                      3)
    else:
        padding = _tuple(padding, n)
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((p, p) for p in padding)
    unbatched = xv.ndim == n + 1
    batched = (1,) + xv.shape if unbatched else xv.shape
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if wv.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(wv.shape)}] instead")
    if batched[1] != wv.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(wv.shape)}, expected "
                           f"input{list(batched)} to have {wv.shape[1] * groups} channels, but "
                           f"got {batched[1]} channels instead")
    padded = [s + lo + hi for s, (lo, hi) in zip(batched[2:], pads)]
    if any(p < k for p, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                           f"Kernel size: ({_sizes(kernel)}). Kernel size can't be greater "
                           "than actual input size")
    if xv.dtype != wv.dtype:
        raise RuntimeError(f"expected scalar type {kind(xv.dtype)} but found {kind(wv.dtype)}")
    args = (x, w)
    if bias is not None:
        b = O.as_tensor(bias)
        if b._value.ndim != 1 or b._value.shape[0] != wv.shape[0]:
            raise RuntimeError(f"Given weight of size {list(wv.shape)}, expected bias to be "
                               f"1-dimensional with {wv.shape[0]} elements, but got bias of "
                               f"size {list(b._value.shape)} instead")
        if b._value.dtype != xv.dtype:
            raise RuntimeError(f"Input type ({cpp_name(xv.dtype)}) and bias type "
                               f"({cpp_name(b._value.dtype)}) should be the same")
        args = (x, w, b)
    if unbatched:
        args = (S.unsqueeze(x, 0),) + args[1:]
    params = {"stride": stride, "padding": pads, "dilation": dilation, "groups": int(groups)}
    y = run(_convolution, args, tuple(t._value for t in args), params)
    return S.squeeze(y, 0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv1d: a cross-correlation over the last axis of (N, C, L) or
    (C, L) input with (out, C / groups, k) filters; padding an int, 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d: a cross-correlation over the last two axes of (N, C, H, W)
    or (C, H, W) input with (out, C / groups, kH, kW) filters.

    >>> import functrans.torch as torch
    >>> x = torch.ones(1, 1, 3, 3, requires_grad=True)
    >>> y = torch.nn.functional.conv2d(x, torch.ones(1, 1, 2, 2))
    >>> y.tolist(), type(y.grad_fn).__name__
    ([[[[4.0, 4.0], [4.0, 4.0]]]], 'ConvolutionBackward0')
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# --- pooling -------------------------------------------------------------------------------

def _pool_sizes(name, shape, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooling output sizes and the (low, high) padding that gives them, with its
    checks and messages (pool2d_shape_check)."""
    n = len(kernel)
    if len(kernel) != 2 and name.endswith("2d") or not kernel:
        raise RuntimeError(f"{name}: kernel_size must either be a single int, or a tuple of "
                           "two ints")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(padding)}")
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    outs, pads = [], []
    for size, k, s, p, d in zip(shape[-n:], kernel, stride, padding, dilation):
        out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= size + p:
            out -= 1
        outs.append(out)
        pads.append((p, (out - 1) * s + d * (k - 1) + 1 - size - p if out > 0 else 0))
    if any(o < 1 for o in outs):
        planes = shape[-n - 1] if len(shape) > n else 1
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (planes, *shape[-n:])))}). "
                           f"Calculated output size: ({'x'.join(map(str, (planes, *outs)))}). "
                           "Output size is too small")
    return outs, tuple(pads)


def _pool_args(kernel_size, stride, padding, dilation, n):
    kernel = _tuple(kernel_size, n)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, n)
    return kernel, stride, _tuple(padding, n), _tuple(dilation, n)


@composite("MaxPool2DWithIndicesBackward0")
def _max_pool(x, *, kernel, stride, pads, dilation):
    lead = x.ndim - len(kernel)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return reduce_window(x, np.asarray(fill, x.dtype), E.max, (1,) * lead + kernel,
                         (1,) * lead + stride, ((0, 0),) * lead + pads,
                         window_dilation=(1,) * lead + dilation)


def _max_indices(v, kernel, stride, pads, dilation):
    """Where each window's first maximum lies, as a flat index into the input's last axes
    (PyTorch's return_indices); NaN wins, as in its kernel."""
    lead = v.ndim - len(kernel)
    flat = np.arange(math.prod(v.shape[lead:]), dtype=np.int64).reshape(v.shape[lead:])
    config = tuple((0, 0, 0) for _ in range(lead)) + tuple((lo, hi, 0) for lo, hi in pads)
    padded = pad_prim(v.astype(np.float64), np.asarray(-np.inf), config)
    where = pad_prim(np.broadcast_to(flat, v.shape), np.asarray(-1, np.int64), config)
    best = idx = None
    for val, at in zip(window_slices(padded, kernel, stride, dilation),
                       window_slices(where, kernel, stride, dilation)):
        if best is None:
            best, idx = val.copy(), at.copy()
            continue
        take = (val > best) | np.isnan(val)
        best, idx = np.where(take, val, best), np.where(take, at, idx)
    return idx


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool2d over the last two axes of (N, C, H, W) or (C, H, W)
    input; the gradient of each window goes to its first maximum, as PyTorch sends it."""
    x = O.as_tensor(input)
    xv = x._value
    if xv.ndim not in (3, 4) or 0 in xv.shape[1:]:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, 2)
    _, pads = _pool_sizes("max_pool2d", xv.shape, kernel, stride, padding, dilation, ceil_mode)
    params = {"kernel": kernel, "stride": stride, "pads": pads, "dilation": dilation}
    y = run(_max_pool, (x,), (xv,), params)
    if return_indices:
        return y, wrap(_max_indices(xv, kernel, stride, pads, dilation))
    return y


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool1d: max_pool2d on the input with a unit axis put before
    its last (PyTorch's composition: Unsqueeze, MaxPool2DWithIndices, Squeeze)."""
    x = O.as_tensor(input)
    if x._value.ndim not in (2, 3):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(x._value.shape)}")
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation, 1)
    if kernel[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got "
                           f"{kernel[0]}")
    if stride[0] <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got "
                           f"{stride[0]}")
    if padding[0] > kernel[0] // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={padding[0]} and kernel_size={kernel[0]}")
    size = x._value.shape[-1]
    out = (size + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1 +
           (stride[0] - 1 if ceil_mode else 0)) // stride[0] + 1
    if ceil_mode and (out - 1) * stride[0] >= size + padding[0]:
        out -= 1
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    res = max_pool2d(S.unsqueeze(x, -2), (1, kernel[0]), (1, stride[0]), (0, padding[0]),
                     (1, dilation[0]), ceil_mode, return_indices)
    if return_indices:
        return S.squeeze(res[0], -2), S.squeeze(res[1], -2)
    return S.squeeze(res, -2)


def _avg_divisor(shape, kernel, stride, padding, outs, count_include_pad, divisor_override):
    """PyTorch's divisor of each window: its size within the padded input (windows of a
    ceil_mode edge are cut at the padding), or within the input itself, or the override."""
    if divisor_override:
        return None
    factors = []
    for size, k, s, p, o in zip(shape, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        with_pad = end - start
        inside = np.minimum(end, size) - np.maximum(start, 0)
        factors.append(with_pad if count_include_pad else inside)
    grid = factors[0]
    for f in factors[1:]:
        grid = np.multiply.outer(grid, f)
    return grid


@composite("AvgPool2DBackward0")
def _avg_pool(x, *, kernel, stride, pads, divisor):
    lead = x.ndim - len(kernel)
    total = reduce_window(x, np.zeros((), x.dtype), E.add, (1,) * lead + kernel,
                          (1,) * lead + stride, ((0, 0),) * lead + pads)
    d = np.asarray(divisor, x.dtype)
    if d.ndim:
        d = broadcast_in_dim(d, total.shape, tuple(range(total.ndim - d.ndim, total.ndim)))
    return E.div(total, d)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """torch.nn.functional.avg_pool2d over the last two axes of (N, C, H, W) or (C, H, W)
    input, with PyTorch's divisor (count_include_pad, ceil_mode windows, divisor_override)."""
    x = O.as_tensor(input)
    xv = x._value
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 2)
    if xv.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-xv.ndim}, "
                         f"{xv.ndim - 1}], but got -3)")
    if xv.ndim > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(xv.shape)}")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    outs, pads = _pool_sizes("avg_pool2d", xv.shape, kernel, stride, padding, (1, 1),
                             ceil_mode)
    grid = _avg_divisor(xv.shape[-2:], kernel, stride, padding, outs, count_include_pad,
                        divisor_override)
    # the divisor is a param: a nested tuple (hashable, so it keys the backward program)
    divisor = int(divisor_override) if grid is None else tuple(map(tuple, grid.tolist()))
    params = {"kernel": kernel, "stride": stride, "pads": pads, "divisor": divisor}
    return run(_avg_pool, (x,), (xv,), params)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """torch.nn.functional.avg_pool1d: avg_pool2d on the input with a unit axis put before its
    last (Unsqueeze, AvgPool2D, Squeeze, as PyTorch records it)."""
    x = O.as_tensor(input)
    if x._value.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x._value.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding, 1, 1)
    y = avg_pool2d(S.unsqueeze(x, -2), (1, kernel[0]), (1, stride[0]), (0, padding[0]),
                   ceil_mode, count_include_pad)
    return S.squeeze(y, -2)


def _adaptive_matrix(size: int, out: int) -> np.ndarray:
    """(out, size): row i averages input[floor(i * size / out) : ceil((i + 1) * size / out)]."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


@composite("AdaptiveAvgPool2DBackward0")
def _adaptive_avg_pool(x, *, out_size):
    # y = A_h x A_w^T on the last two axes: linear, so its derivative is the same products
    for axis, out in zip((x.ndim - 2, x.ndim - 1), out_size):
        a = np.asarray(_adaptive_matrix(x.shape[axis], out), x.dtype)
        y = dot_general(x, a, (((axis,), (1,)), ((), ())))  # the new axis comes last
        perm = list(range(x.ndim - 1))
        perm.insert(axis, x.ndim - 1)
        x = transpose(y, tuple(perm))
    return x


@composite("MeanBackward1")
def _mean_last_two(x):
    axes = (x.ndim - 2, x.ndim - 1)
    total = R.reduce_sum(x, axes)
    mean = E.div(total, np.asarray(x.shape[-2] * x.shape[-1], x.dtype))
    return broadcast_in_dim(mean, mean.shape + (1, 1), tuple(range(mean.ndim)))


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d: each output cell the mean of its input window
    (PyTorch's floor/ceil window bounds); an output of 1 x 1 is a mean, as PyTorch takes it."""
    x = O.as_tensor(input)
    xv = x._value
    if xv.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(xv.shape)}")
    for axis in range(xv.ndim - 3, xv.ndim):
        if axis >= 0 and xv.shape[axis] == 0 and (axis > 0 or xv.ndim == 3):
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size "
                               "for non-batch dimensions, but input has sizes "
                               f"{list(xv.shape)} with dimension {axis} being empty")
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * 2
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out = tuple(int(xv.shape[xv.ndim - 2 + i]) if s is None else operator.index(s)
                for i, s in enumerate(sizes))
    if out == (1, 1):
        return run(_mean_last_two, (x,), (xv,))
    return run(_adaptive_avg_pool, (x,), (xv,), {"out_size": out})


def adaptive_avg_pool1d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool1d: adaptive_avg_pool2d on the input with a unit
    axis put before its last."""
    x = O.as_tensor(input)
    if x._value.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x._value.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    out = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    return S.squeeze(adaptive_avg_pool2d(S.unsqueeze(x, -2), (1, out)), -2)


# --- pad -----------------------------------------------------------------------------------

@composite("ConstantPadNdBackward0")
def _constant_pad(x, *, config, value):
    # with nothing to pad, pad gives x itself: a copy then, as PyTorch's result is new
    return owned(pad_prim(x, np.asarray(value, x.dtype), config), x)


_MODE_PADS = {"reflect": ("reflect", "ReflectionPad{}DBackward0"),
              "replicate": ("edge", "ReplicationPad{}DBackward0"),
              "circular": ("wrap", "CopySlices")}
_MODE_OPS: dict = {}  # one Op per (mode, dims): a handful, never evicted


def _mode_op(mode: str, dims: int):
    op = _MODE_OPS.get((mode, dims))
    if op is None:
        np_mode, name = _MODE_PADS[mode]

        def fn(x, *, widths):
            return fnp.pad(x, widths, mode=np_mode)
        op = _MODE_OPS.setdefault((mode, dims), composite(name.format(dims))(fn))
    return op


_NON_CONSTANT = ("Supported combinations for non-constant padding:\n"
                 "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                 "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                 "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):  # noqa: A002  (PyTorch's names)
    """torch.nn.functional.pad: `pad` lists (low, high) pairs from the last axis backwards;
    mode 'constant' (negative widths crop), 'reflect', 'replicate' or 'circular'.

    >>> import functrans.torch as torch
    >>> torch.nn.functional.pad(torch.tensor([1.0, 2.0]), (1, 2), value=9.0).tolist()
    [9.0, 1.0, 2.0, 9.0, 9.0]
    """
    x = O.as_tensor(input)
    xv = x._value
    widths = [operator.index(p) for p in pad]
    if len(widths) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(widths) // 2 > xv.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(widths)} and input "
                           f"of dimension {xv.ndim}")
    pairs = [(widths[2 * i], widths[2 * i + 1]) for i in range(len(widths) // 2)][::-1]
    lead = xv.ndim - len(pairs)
    if mode == "constant":
        config = tuple((0, 0, 0) for _ in range(lead)) + tuple((lo, hi, 0) for lo, hi in pairs)
        if any(d + lo + hi < 0 for d, (lo, hi, _) in zip(xv.shape, config)):
            raise RuntimeError("narrow(): length must be non-negative.")
        params = {"config": config, "value": 0.0 if value is None else value}
        return run(_constant_pad, (x,), (xv,), params)
    if mode not in _MODE_PADS:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pairs)
    if dims not in (1, 2, 3) or xv.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(f"Padding size {len(widths)} is not supported for "
                                  f"{xv.ndim}D input tensor.\n{_NON_CONSTANT}")
    for axis, (lo, hi) in zip(range(lead, xv.ndim), pairs):
        if mode == "reflect" and (lo >= xv.shape[axis] or hi >= xv.shape[axis]):
            raise RuntimeError("Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {axis} of input {list(xv.shape)}")
        if mode == "circular" and (lo > xv.shape[axis] or hi > xv.shape[axis]):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo < 0 or hi < 0:
            raise NotImplementedError(f"pad: negative widths with mode={mode!r} are not "
                                      "supported by functrans.torch; crop with slicing first.")
    full = tuple((0, 0) for _ in range(lead)) + tuple(pairs)
    return run(_mode_op(mode, dims), (x,), (xv,), {"widths": full})
