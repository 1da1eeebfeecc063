"""Tensor's operators and math methods, installed onto the Tensor class (as functrans.numpy
installs its operators onto tracers): each method is the torch function of the same name."""

from __future__ import annotations

import numpy as np

from functrans.torch import _activations as AC
from functrans.torch import _creation as C
from functrans.torch import _dtype
from functrans.torch import _elementwise as EW
from functrans.torch import _indexing as IX
from functrans.torch import _inplace as I
from functrans.torch import _linalg as LA
from functrans.torch import _ops as O
from functrans.torch import _reductions as RD
from functrans.torch import _scatter as SC
from functrans.torch import _shape as S
from functrans.torch import _random as R
from functrans.torch._devices import NO_ACCELERATOR, NO_CUDA, is_device_like, require_cpu
from functrans.torch._grad_mode import MODE
from functrans.torch._legacy import as_dtype, new
from functrans.torch._record import apply_primitive
from functrans.torch._tensor import TapeTrace, Tensor, is_inference
from functrans.torch.autograd import backward as _autograd_backward


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad."""
    _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _named(module, names: str) -> dict:
    """The functions of `module` called `names` (space-separated), by name."""
    return {name: getattr(module, name) for name in names.split()}


def _swap(f):
    return lambda self, other: f(other, self)


def _inplace_of(fn):
    def method(self, *args, **kwargs):
        return I.inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


def _to(self, *args, dtype=None, copy=False, non_blocking=False, memory_format=None, **kwargs):
    """to(dtype) / to(device) / to(device, dtype) / to(other): a converted tensor (self when
    nothing changes); a device other than the CPU raises PyTorch's CPU-build error."""
    devices = [kwargs.pop("device")] if "device" in kwargs else []
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtype.dtype | Tensor):
            dtype = a if isinstance(a, _dtype.dtype) else a.dtype
        elif is_device_like(a):
            devices.append(a)
        elif not isinstance(a, bool):  # bools: the positional non_blocking / copy flags
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}); pass a dtype, a device or a tensor")
    for d in devices:
        require_cpu(d, creating=False)
    out = self if dtype is None else O.to_dtype(self, _dtype.to_numpy(dtype))
    return O.clone(out) if copy and out is self else out


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """Tensor.cuda: PyTorch's CPU-build error (no CUDA here)."""
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError(NO_ACCELERATOR)
    raise AssertionError(NO_CUDA)


def _type(self, dtype=None):
    if dtype is None:
        return f"torch.{_dtype.kind(self._value.dtype)}Tensor"
    return _to(self, as_dtype(dtype))


def _new_factory(fn):
    return lambda self, *args, dtype=None, **kwargs: fn(*args, dtype=dtype or self.dtype,
                                                        **kwargs)


def _write_random(self, draw):
    """Fill self with `draw(n)` in PyTorch's order: a TensorIterator visits the elements in
    memory order (a transposed view is filled along its storage). The in-place checks come
    first, so a refused call draws nothing."""
    I._check(self, MODE.enabled)
    v = self._value
    order = sorted(range(v.ndim), key=lambda i: -abs(v.strides[i]))
    flat = np.asarray(draw(v.size))
    out = np.empty(v.shape, v.dtype)
    out.transpose(order)[...] = flat.reshape([v.shape[i] for i in order]).astype(v.dtype)
    I.write(self, out)
    return self


def _sample(self, kernel, generator, draw, refused=None):
    """self filled by `draw(generator, n)`; `kernel` names the float-only kernel (its message
    for other dtypes), `refused` a message for arguments out of range."""
    if kernel and self._value.dtype.kind != "f":
        raise RuntimeError(f"\"{kernel}\" not implemented for '{_dtype.kind(self._value.dtype)}'")
    if refused:
        raise RuntimeError(refused)
    g = R.resolve(generator)
    return _write_random(self, lambda n: draw(g, n))


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Tensor.uniform_: PyTorch's CPU uniform kernel, the same values for the same seed."""
    a, b = float(_number(a)), float(_number(b))
    return _sample(self, "check_uniform_bounds", generator,
                   lambda g, n: R.uniform(g, n, self._value.dtype, a, b))


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Tensor.normal_: PyTorch's CPU normal kernel (blocks of 16 when contiguous)."""
    mean, std, v = float(_number(mean)), float(_number(std)), self._value
    return _sample(self, "normal_kernel_cpu", generator, lambda g, n: R.normal(
        g, n, v.dtype, mean, std, bool(v.flags.c_contiguous)))


def _random_(self, from_=None, to=None, *, generator=None):
    """Tensor.random_(): integers on [0, 2**mantissa] (floats) or [0, max] (integers);
    random_(to) on [0, to); random_(from, to) on [from, to)."""
    dt = self._value.dtype
    if from_ is None and to is None:
        return _sample(self, None, generator, lambda g, n: R.random_full(g, n, dt))
    if to is None and from_ is not None and not isinstance(from_, bool):
        low, high = 0, int(_number(from_))
    else:
        low = int(_number(from_ if from_ is not None else 0))
        high = int(_number(to)) if to is not None else int(np.iinfo(dt).max) + 1 \
            if dt.kind != "f" else (1 << {2: 11, 4: 24, 8: 53}[dt.itemsize]) + 1
    return _sample(self, None, generator, lambda g, n: R.random_from_to(g, n, low, high, dt),
                   None if low < high else f"random_ expects 'from' to be less than 'to', but "
                   f"got from={low} >= to={high}")


def _bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_: 1 with probability p (a float or a tensor of probabilities)."""
    if isinstance(p, Tensor):
        g = R.resolve(generator)
        I._check(self, MODE.enabled)
        pv = np.ascontiguousarray(np.broadcast_to(p._value, self._value.shape))
        I.write(self, R.bernoulli_tensor(g, pv).astype(self._value.dtype))
        return self
    p = float(p)
    return _sample(self, None, generator, lambda g, n: R.bernoulli_scalar(g, n, p),
                   None if 0 <= p <= 1 else f"bernoulli_ expects p to be in [0, 1], but got "
                   f"p={p}")


def _exponential_(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_: -log1p(-u) / lambd, PyTorch's draws."""
    lambd = float(lambd)
    return _sample(self, "exponential_cpu", generator, lambda g, n: R.exponential(g, n, lambd),
                   None if lambd > 0 else "exponential_ expects lambda > 0.0, but found "
                   f"lambda={lambd}")


def _geometric_(self, p, *, generator=None):
    """Tensor.geometric_: ceil(log(u) / log1p(-p)), PyTorch's draws."""
    p = float(p)
    return _sample(self, None, generator, lambda g, n: R.geometric(g, n, p),
                   None if 0 < p < 1 else f"geometric_ expects p to be in (0, 1), but got p={p}")


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_: exp of N(mean, std ** 2), PyTorch's draws."""
    mean, std = float(mean), float(std)
    return _sample(self, "log_normal_cpu", generator, lambda g, n: R.log_normal(g, n, mean, std),
                   None if std > 0 else f"log_normal_ expects std > 0.0, but found std={std}")


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_: median + sigma * tan(pi * (u - 1/2)), PyTorch's draws."""
    median, sigma = float(median), float(sigma)
    return _sample(self, "cauchy_cpu", generator, lambda g, n: R.cauchy(g, n, median, sigma))


def _apply_(self, fn):
    if self._requires_grad:
        raise RuntimeError("apply_ is only implemented on CPU tensors that do not require grad")
    flat = self._value.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        flat[i] = fn(v)
    return self


_METHODS = {
    "backward": _backward,
    # operators
    "__neg__": EW.neg, "__pos__": lambda self: self, "__abs__": EW.abs,
    "__add__": O.fast_binary(EW.ADD), "__radd__": O.fast_binary(EW.ADD),
    "__sub__": O.fast_binary(EW.SUB), "__rsub__": EW.rsub,
    "__mul__": O.fast_binary(EW.MUL), "__rmul__": O.fast_binary(EW.MUL),
    "__truediv__": O.fast_binary(EW.DIV, EW.div, float_only=True), "__rtruediv__": EW.rdiv,
    "__floordiv__": EW.floor_divide, "__rfloordiv__": _swap(EW.floor_divide),
    "__mod__": EW.remainder, "__rmod__": _swap(EW.remainder),
    "__pow__": EW.pow, "__rpow__": _swap(EW.pow),
    "__matmul__": LA.matmul, "__rmatmul__": _swap(LA.matmul),
    "__eq__": EW.eq, "__ne__": EW.ne, "__lt__": EW.lt, "__le__": EW.le, "__gt__": EW.gt,
    "__ge__": EW.ge,
    "__and__": EW.logical_and, "__or__": EW.logical_or, "__xor__": EW.logical_xor,
    "__invert__": EW.logical_not,
    "__getitem__": IX.getitem, "__setitem__": I.setitem,
    "__iadd__": _inplace_of(EW.add), "__isub__": _inplace_of(EW.sub),
    "__imul__": _inplace_of(EW.mul), "__itruediv__": _inplace_of(EW.div),
    "__ipow__": _inplace_of(EW.pow),
    # the torch functions of the same name
    **_named(EW, "add sub mul div floor_divide remainder fmod pow square neg abs sin cos tan exp "
             "log tanh sqrt sigmoid relu reciprocal asin acos atan sinh cosh asinh acosh atanh "
             "exp2 expm1 log2 log10 log1p rsqrt erf floor ceil round trunc sign atan2 maximum "
             "minimum clamp lerp clamp_min clamp_max nan_to_num addcmul addcdiv eq ne lt le gt "
             "ge equal allclose isclose isnan isinf isfinite signbit logical_not logical_and "
             "logical_or"),
    **_named(AC, "softmax log_softmax"),
    **_named(RD, "prod max min amax amin argmax argmin std var var_mean std_mean norm logsumexp "
             "cumsum cumprod all any count_nonzero"),
    **_named(LA, "matmul mm mv dot bmm outer inner addmm"),
    **_named(S, "reshape view flatten unflatten squeeze unsqueeze permute transpose t movedim "
             "expand expand_as broadcast_to repeat tile diag split chunk split_with_sizes "
             "unsafe_split unsafe_split_with_sizes unsafe_chunk unbind narrow flip roll tril "
             "triu diagonal trace contiguous"),
    **_named(IX, "repeat_interleave select gather index_select masked_fill masked_select take "
             "median nanmedian isin as_strided sort argsort topk nonzero"),
    **_named(SC, "scatter scatter_add scatter_reduce index_add index_put index_fill"),
    # PyTorch's aliases and what differs from the function
    **_named(EW, "subtract multiply divide true_divide negative absolute arctan2 clip greater "
             "less"),
    "arcsin": EW.asin, "arccos": EW.acos, "arctan": EW.atan,
    "where": lambda self, condition, other: EW.where(condition, self, other),
    **{name: (lambda f: lambda self, dim=None, keepdim=False, dtype=None: f(
        self, dim, keepdim, dtype=dtype))(getattr(RD, name)) for name in ("sum", "mean")},
    "ravel": S.flatten, "swapaxes": S.transpose, "swapdims": S.transpose, "moveaxis": S.movedim,
    "view_as": lambda self, other: S.view(self, tuple(other.shape)),
    "reshape_as": lambda self, other: S.reshape(self, tuple(other.shape)),
    "T": property(S.numpy_T), "mT": property(S.mT),
    "is_contiguous": lambda self, memory_format=None: bool(self._value.flags.c_contiguous),
    # conversion
    "clone": O.clone, "to": _to, "type": _type,
    **{name: (lambda d: lambda self, memory_format=None: _to(self, d))(_dtype.as_dtype(name))
       for name in ("float", "double", "half", "long", "int", "bool")},
    "cpu": lambda self, memory_format=None: self,
    "type_as": lambda self, other: _to(self, other.dtype),
    "new_tensor": _new_factory(C.tensor), "new": new, "new_zeros": _new_factory(C.zeros),
    "new_ones": _new_factory(C.ones), "new_empty": _new_factory(C.empty),
    "new_full": _new_factory(C.full),
    # in place
    **{name + "_": _inplace_of(fn) for name, fn in _named(
        EW, "add sub mul div pow neg exp log sin cos tanh sqrt abs relu sigmoid clamp clamp_min "
        "clamp_max nan_to_num addcmul addcdiv").items()},
    **{name + "_": _inplace_of(fn) for name, fn in _named(
        SC, "scatter scatter_add scatter_reduce index_add index_put index_fill").items()},
    "clip_": _inplace_of(EW.clamp), "addmm_": _inplace_of(LA.addmm),
    "masked_fill_": _inplace_of(IX.masked_fill), "fill_": I.fill_, "zero_": I.zero_,
    "copy_": I.copy_, "squeeze_": I.squeeze_, "unsqueeze_": I.unsqueeze_, "t_": I.t_,
    "transpose_": I.transpose_, "swapaxes_": I.transpose_, "swapdims_": I.transpose_,
    "is_inference": is_inference,
    "uniform_": _uniform_, "normal_": _normal_, "random_": _random_,
    "bernoulli_": _bernoulli_, "bernoulli": C.bernoulli, "exponential_": _exponential_,
    "geometric_": _geometric_, "log_normal_": _log_normal_, "cauchy_": _cauchy_,
    "cuda": _cuda, "apply_": _apply_,
}

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
TapeTrace.process_primitive = lambda self, prim, tracers, params: apply_primitive(prim, tracers,
                                                                                    params)

Tensor.__array_priority__ = 1000
