"""Creating tensors: tensor, zeros, ones, full, arange, linspace, eye, randn, ... dtypes are
inferred as PyTorch does (Python floats: the default dtype, ints: int64; numpy arrays keep
theirs); random numbers are PyTorch's CPU generator's, bit for bit (see _random)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from functrans.torch import _dtype, _ops
from functrans.torch import _random as R
from functrans.torch._devices import require_cpu
from functrans.torch._inplace import write
from functrans.torch._ops import named
from functrans.torch._random import Generator
from functrans.torch._tensor import Tensor, wrap


def _finish(value, requires_grad, device=None):
    require_cpu(device)
    t = wrap(value)
    if requires_grad:
        if value.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data`.

    >>> import functrans.torch as torch
    >>> torch.tensor([1., 2.]), torch.tensor([1, 2]).dtype
    (tensor([1., 2.]), torch.int64)
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                      ".requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    return _finish(_dtype.tensor_value(data, dtype), requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: data as a tensor, sharing memory with a tensor or array of that dtype."""
    require_cpu(device)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _dtype.to_numpy(dtype)):
        return wrap(data)
    return _ops.as_tensor(data, dtype)


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray`."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return wrap(ndarray)


def _size(size, name, kw=None):
    """The sizes given to factory `name` (ints, or one sequence), checked with PyTorch's errors."""
    if kw is not None:
        if size:
            raise TypeError("pass the size positionally or as size=, not both")
        size = (kw,)
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = tuple(size[0])
    out = []
    for s in size:
        s = s.item() if isinstance(s, Tensor) else s
        if not isinstance(s, numbers.Integral):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(s).__name__}")
        if s < 0:
            raise RuntimeError("zeros: Dimension size must be non-negative." if name == "zeros"
                               else f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _float_dtype(dtype) -> np.dtype:
    return _dtype.to_numpy(dtype) if dtype is not None else _dtype.get_default_dtype().dtype


def _like(input, dtype):
    v = input._value if isinstance(input, Tensor) else np.asarray(input)
    return v.shape, (_dtype.to_numpy(dtype) if dtype is not None else v.dtype)


def _filled(name, fill):
    """torch.zeros / ones / empty (zeros here) and their _like forms."""
    def factory(*shape, size=None, dtype=None, device=None, requires_grad=False, out=None):
        return _finish(np.full(_size(shape, name, size), fill, _float_dtype(dtype)),
                       requires_grad, device)

    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        return full_like(input, fill, dtype=dtype, device=device, requires_grad=requires_grad)
    return (named(factory, name, f"torch.{name}: a tensor of the given size filled with {fill}."),
            named(like, f"{name}_like", f"torch.{name}_like: a tensor shaped like input filled "
                  f"with {fill}."))


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    """torch.full: a tensor of the given size (a sequence, unlike zeros') filled with fill_value."""
    if not isinstance(size, tuple | list):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_dtype.type_name(size)}")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _dtype.to_numpy(dtype) if dtype is not None else _dtype.infer_dtype(fill_value)
    shape = _size(tuple(size), "full")
    return _finish(np.full(shape, fill_value, dt), requires_grad, device)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    """torch.full_like: a tensor shaped like input filled with fill_value."""
    shape, dt = _like(input, dtype)
    return _finish(np.full(shape, fill_value, dt), requires_grad, device)


(zeros, zeros_like), (ones, ones_like), (empty, empty_like) = (
    _filled("zeros", 0), _filled("ones", 1), _filled("empty", 0))


def _items(*xs):
    return (x.item() if isinstance(x, Tensor) else x for x in xs)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None):
    """Values from `start` up to (not including) `end`; float if any bound is a float."""
    start, end, step = _items(0 if end is None else start, start if end is None else end, step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(int(math.ceil((end - start) / step)), 0)
    if dtype is not None:
        dt = _dtype.to_numpy(dtype)
    elif all(isinstance(x, numbers.Integral) for x in (start, end, step)):
        dt = np.dtype(np.int64)
    else:
        dt = _dtype.get_default_dtype().dtype
    values = start + np.arange(n, dtype=np.float64 if dt.kind in "fc" else np.int64) * step
    return _finish(values.astype(dt), requires_grad, device)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    """`steps` evenly spaced values from start to end, computed as PyTorch does: from the start
    for the first half and from the end for the second."""
    dt = _float_dtype(dtype)
    start, end = _items(start, end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps == 1:
        return _finish(np.full(1, start, dt), requires_grad, device)
    work = dt if dt.kind in "fc" else np.dtype(np.float64)
    s, e = work.type(start), work.type(end)
    step = (e - s) / work.type(max(steps - 1, 1))
    idx = np.arange(steps)
    lo = s + step * idx.astype(work)
    hi = e - step * (steps - idx - 1).astype(work)
    return _finish(np.where(idx < steps // 2, lo, hi).astype(dt), requires_grad, device)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """torch.logspace: steps points from base ** start to base ** end, evenly in the exponent."""
    lin = linspace(start, end, steps, dtype=_dtype.float64)
    return _finish((base ** lin._value).astype(_float_dtype(dtype)), requires_grad, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """torch.eye: the n x m identity matrix."""
    return _finish(np.eye(n, n if m is None else m, dtype=_float_dtype(dtype)), requires_grad,
                   device)


# --- random: tensors from PyTorch's CPU generator (_random), as its factories build them ---

default_generator = R.default_generator


def manual_seed(seed) -> Generator:
    """torch.manual_seed: seed the default generator; returns it.

    >>> import functrans.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.rand(3)
    tensor([0.4963, 0.7682, 0.0885])
    """
    return default_generator.manual_seed(seed)


# torch.seed, torch.initial_seed and torch.get_rng_state: the default generator's methods
seed, initial_seed = default_generator.seed, default_generator.initial_seed
get_rng_state = default_generator.get_state


def set_rng_state(new_state) -> None:
    """torch.set_rng_state: restore the default generator from `get_rng_state()`."""
    default_generator.set_state(new_state)


def _random_dtype(dtype, out, who=None, complex_ok=False) -> np.dtype:
    """The dtype samples are drawn in (out's when only out= is given); `who` names PyTorch's
    kernel that refuses a non-float dtype, None for integer samples (int64 by default)."""
    dtype = dtype if dtype is not None or out is None else out.dtype
    if who is None:
        return _dtype.to_numpy(dtype) if dtype is not None else np.dtype(np.int64)
    dt = _float_dtype(dtype)
    if dt.kind not in ("fc" if complex_ok else "f"):
        raise NotImplementedError(f"\"{who}\" not implemented for '{_dtype.kind(dt)}'")
    return dt


def _into(out, values, shape, dt, requires_grad=False, device=None) -> Tensor:
    """The samples as a tensor, or written into `out` (out=)."""
    result = _finish(np.asarray(values, dt).reshape(shape), requires_grad, device)
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"out= has shape {list(out.shape)} but the result has shape "
                           f"{list(result.shape)}; pass an out tensor of the result's shape")
    write(out, result._value)
    return out


def _sampler(name, who, draw, what):
    """torch.rand / randn: samples of the default float dtype, PyTorch's for the same seed."""
    def factory(*shape, size=None, generator=None, out=None, dtype=None, layout=None,
                device=None, requires_grad=False, pin_memory=False) -> Tensor:
        shape = _size(shape, name, size)
        require_cpu(device)
        dt = _random_dtype(dtype, out, who, complex_ok=True)
        g, n = R.resolve(generator), math.prod(shape)
        if dt.kind == "c":  # PyTorch samples the (re, im) pairs: randn's with variance 1/2 each
            part = np.finfo(dt).dtype
            pairs = R.normal(g, 2 * n, part, 0.0, math.sqrt(0.5)) if draw is R.normal else \
                draw(g, 2 * n, part)
            return _into(out, np.asarray(pairs, part).view(dt), shape, dt, requires_grad, device)
        return _into(out, draw(g, n, dt), shape, dt, requires_grad, device)
    return named(factory, name, f"torch.{name}: {what}, PyTorch's values for the same seed.")


rand = _sampler("rand", "check_uniform_bounds", R.uniform, "uniform samples on [0, 1)")
randn = _sampler("randn", "normal_kernel_cpu", R.normal, "standard normal samples")


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False) -> Tensor:
    """torch.randint: integers uniform on [low, high), PyTorch's values for the same seed."""
    if size is None:
        if high is None or not isinstance(high, tuple | list):
            raise TypeError("randint() missing required argument 'size' (pos 2): pass "
                            "randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    elif high is None:
        raise TypeError("randint() missing required argument 'high'")
    low, high = (int(x) for x in _items(low, high))
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    require_cpu(device)
    shape, dt = _size(tuple(size), "randint"), _random_dtype(dtype, out)
    values = R.random_from_to(R.resolve(generator), math.prod(shape), low, high, dt)
    return _into(out, values, shape, dt, requires_grad, device)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False) -> Tensor:
    """torch.randperm: a random permutation of 0 .. n-1, PyTorch's for the same seed."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    require_cpu(device)
    dt = _random_dtype(dtype, out)
    return _into(out, R.randperm(R.resolve(generator), n), (n,), dt, requires_grad, device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """torch.normal: N(mean, std ** 2) samples; mean and std may be tensors (then PyTorch draws
    standard normals and scales them: out * std + mean, in two roundings as it does)."""
    g = R.resolve(generator)
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (tm or ts):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with float "
                            "mean and std, pass size=")
        shape = _size(tuple(size), "normal")
        require_cpu(device)
        dt = _random_dtype(dtype, out, "normal_kernel_cpu")
        values = R.normal(g, math.prod(shape), dt, float(mean), float(std))
        return _into(out, values, shape, dt, requires_grad, device)
    m = mean._value if tm else np.asarray(float(mean))
    s = std._value if ts else np.asarray(float(std))
    if ts and np.any(s < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    dt = (m if tm else s).dtype  # the result's: mean's when it is a tensor
    if dt.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_dtype.kind(dt)}'")
    shape = np.broadcast_shapes(m.shape, s.shape) if tm and ts else (m if tm else s).shape
    if tm and not ts:      # normal_(0, std) then add_(mean)
        z = R.normal(g, math.prod(shape), dt, 0.0, float(std)).reshape(shape)
        return _into(out, z + m.astype(dt), shape, dt)
    z = R.normal(g, math.prod(shape), dt).reshape(shape)  # normal_(0, 1), mul_(std), add_(mean)
    return _into(out, (z * s.astype(dt)).astype(dt) + m.astype(dt), shape, dt)


def _sampler_like(sampler):
    def factory(input, *, generator=None, dtype=None, layout=None, device=None,
                requires_grad=False, memory_format=None) -> Tensor:
        shape, dt = _like(input, dtype)
        return sampler(shape, generator=generator, dtype=_dtype.from_numpy(dt), device=device,
                       requires_grad=requires_grad)
    name = sampler.__name__
    return named(factory, f"{name}_like", f"torch.{name}_like: {name}'s samples shaped like input.")


rand_like, randn_like = _sampler_like(rand), _sampler_like(randn)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None) -> Tensor:
    """torch.randint_like: integers on [low, high) shaped like input (input's dtype)."""
    low, high = (0, low) if high is None else (low, high)
    shape, dt = _like(input, dtype)
    return randint(low, high, shape, generator=generator, dtype=_dtype.from_numpy(dt),
                   device=device, requires_grad=requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None) -> Tensor:
    """torch.bernoulli: 1 with probability input (or p when given), PyTorch's draws."""
    v, g = input._value, R.resolve(generator)
    if p is None:
        if v.dtype.kind != "f":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{_dtype.kind(v.dtype)}'")
        if np.any((v < 0) | (v > 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        return _into(out, R.bernoulli_tensor(g, v), v.shape, v.dtype)
    if not 0 <= float(p) <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p)}")
    return _into(out, R.bernoulli_scalar(g, math.prod(v.shape), float(p)), v.shape, v.dtype)
