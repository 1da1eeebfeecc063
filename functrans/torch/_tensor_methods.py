"""Tensor's operators and math methods, installed onto the Tensor class (as functrans.numpy
installs its operators onto tracers): each method is the torch function of the same name."""

from __future__ import annotations

from functrans.torch import _dtype
from functrans.torch import _inplace as I
from functrans.torch import _ops as O
from functrans.torch import _shape as S
from functrans.torch._tensor import Tensor, _device_arg_ok


def _swap(f):
    return lambda self, other: f(other, self)


def _inplace_of(fn):
    def method(self, *args, **kwargs):
        return I.inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


def _to(self, *args, **kwargs):
    """to(dtype) / to(device) / to(other): a converted tensor (self when nothing changes)."""
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif not _device_arg_ok(a):
            raise RuntimeError(f"functrans.torch runs on the CPU only; cannot move to {a!r}")
    if "device" in kwargs and not _device_arg_ok(kwargs["device"]):
        raise RuntimeError(f"functrans.torch runs on the CPU only; cannot move to "
                           f"{kwargs['device']!r}")
    out = self if dtype is None else O.to_dtype(self, _dtype.to_numpy(dtype))
    return O.clone(out) if copy and out is self else out


def _type(self, dtype=None):
    if dtype is None:
        names = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                 "bool": "Bool", "float16": "Half", "uint8": "Byte", "int8": "Char",
                 "int16": "Short"}
        return f"torch.{names.get(self._value.dtype.name, self._value.dtype.name)}Tensor"
    return _to(self, dtype)


def _new_tensor(self, data, dtype=None, requires_grad=False):
    from functrans.torch._creation import tensor
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_full_factory(kind):
    def method(self, *size, dtype=None, requires_grad=False, device=None, fill_value=None):
        from functrans.torch import _creation as C
        if kind == "full":
            size, fill_value = size[0], size[1]
            return C.full(size, fill_value, dtype=dtype or self.dtype,
                          requires_grad=requires_grad)
        fn = {"zeros": C.zeros, "ones": C.ones, "empty": C.empty}[kind]
        return fn(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)
    return method


def _sum(self, dim=None, keepdim=False, dtype=None):
    return O.sum(self, dim, keepdim, dtype=dtype)


def _mean(self, dim=None, keepdim=False, dtype=None):
    return O.mean(self, dim, keepdim, dtype=dtype)


def _pow_(self, exponent):
    return I.inplace(self, O.pow, exponent)


def _uniform_(self, a=0.0, b=1.0, generator=None):
    from functrans.torch._creation import _rng
    with_value = _rng(generator).uniform(a, b, self._value.shape).astype(self._value.dtype)
    I._check(self, _grad_on())
    I.write(self, with_value)
    return self


def _normal_(self, mean=0.0, std=1.0, generator=None):
    from functrans.torch._creation import _rng
    value = (mean + std * _rng(generator).standard_normal(self._value.shape))
    I._check(self, _grad_on())
    I.write(self, value.astype(self._value.dtype))
    return self


def _grad_on():
    from functrans.torch._grad_mode import MODE
    return MODE.enabled


def _clamp_(self, min=None, max=None):
    return I.inplace(self, O.clamp, min, max)


def _masked_fill_(self, mask, value):
    return I.inplace(self, S.masked_fill, mask, value)


def _apply_(self, fn):
    if self._requires_grad:
        raise RuntimeError("apply_ is only implemented on CPU tensors that do not require grad")
    flat = self._value.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        flat[i] = fn(v)
    return self


_METHODS = {
    # operators
    "__neg__": O.neg, "__pos__": lambda self: self, "__abs__": O.abs,
    "__add__": O.add, "__radd__": O.add,
    "__sub__": O.sub, "__rsub__": lambda self, other: O.rsub(self, other),
    "__mul__": O.mul, "__rmul__": O.mul,
    "__truediv__": O.div, "__rtruediv__": O.rdiv,
    "__floordiv__": O.floor_divide, "__rfloordiv__": _swap(O.floor_divide),
    "__mod__": O.remainder, "__rmod__": _swap(O.remainder),
    "__pow__": O.pow, "__rpow__": _swap(O.pow),
    "__matmul__": O.matmul, "__rmatmul__": _swap(O.matmul),
    "__eq__": O.eq, "__ne__": O.ne, "__lt__": O.lt, "__le__": O.le, "__gt__": O.gt,
    "__ge__": O.ge,
    "__and__": O.logical_and, "__or__": O.logical_or, "__xor__": O.logical_xor,
    "__invert__": O.logical_not,
    "__getitem__": S.getitem, "__setitem__": I.setitem,
    "__iadd__": _inplace_of(O.add), "__isub__": _inplace_of(O.sub),
    "__imul__": _inplace_of(O.mul), "__itruediv__": _inplace_of(O.div),
    "__ipow__": _pow_,
    # elementwise
    "add": O.add, "sub": O.sub, "subtract": O.sub, "mul": O.mul, "multiply": O.mul,
    "div": O.div, "divide": O.div, "true_divide": O.div, "floor_divide": O.floor_divide,
    "remainder": O.remainder, "fmod": O.fmod, "pow": O.pow, "square": O.square,
    "neg": O.neg, "negative": O.neg, "abs": O.abs, "absolute": O.abs,
    "sin": O.sin, "cos": O.cos, "tan": O.tan, "exp": O.exp, "log": O.log, "tanh": O.tanh,
    "sqrt": O.sqrt, "sigmoid": O.sigmoid, "relu": O.relu, "reciprocal": O.reciprocal,
    "asin": O.asin, "acos": O.acos, "atan": O.atan, "sinh": O.sinh, "cosh": O.cosh,
    "arcsin": O.asin, "arccos": O.acos, "arctan": O.atan,
    "asinh": O.asinh, "acosh": O.acosh, "atanh": O.atanh, "exp2": O.exp2, "expm1": O.expm1,
    "log2": O.log2, "log10": O.log10, "log1p": O.log1p, "rsqrt": O.rsqrt, "erf": O.erf,
    "floor": O.floor, "ceil": O.ceil, "round": O.round, "trunc": O.trunc, "sign": O.sign,
    "atan2": O.atan2, "arctan2": O.atan2, "maximum": O.maximum, "minimum": O.minimum,
    "clamp": O.clamp, "clip": O.clamp, "lerp": O.lerp,
    "eq": O.eq, "ne": O.ne, "lt": O.lt, "le": O.le, "gt": O.gt, "ge": O.ge,
    "greater": O.gt, "less": O.lt, "equal": O.equal, "allclose": O.allclose,
    "isclose": O.isclose, "isnan": O.isnan, "isinf": O.isinf, "isfinite": O.isfinite,
    "logical_not": O.logical_not, "logical_and": O.logical_and, "logical_or": O.logical_or,
    "softmax": O.softmax, "log_softmax": O.log_softmax,
    "where": lambda self, condition, other: O.where(condition, self, other),
    # reductions
    "sum": _sum, "mean": _mean, "prod": O.prod, "max": O.max, "min": O.min,
    "amax": O.amax, "amin": O.amin, "argmax": O.argmax, "argmin": O.argmin,
    "std": O.std, "var": O.var, "norm": O.norm, "logsumexp": O.logsumexp,
    "cumsum": O.cumsum, "cumprod": O.cumprod, "all": O.all, "any": O.any,
    "count_nonzero": O.count_nonzero,
    # products
    "matmul": O.matmul, "mm": O.mm, "mv": O.mv, "dot": O.dot, "bmm": O.bmm,
    "outer": O.outer, "inner": O.inner,
    # shape
    "reshape": S.reshape, "view": S.view, "view_as": S.view_as, "reshape_as": S.reshape_as,
    "flatten": S.flatten, "unflatten": S.unflatten, "ravel": S.ravel,
    "squeeze": S.squeeze, "unsqueeze": S.unsqueeze, "permute": S.permute,
    "transpose": S.transpose, "swapaxes": S.transpose, "swapdims": S.transpose,
    "t": S.t, "T": property(S.numpy_T), "mT": property(S.mT), "movedim": S.movedim,
    "moveaxis": S.movedim, "expand": S.expand, "expand_as": S.expand_as,
    "broadcast_to": S.broadcast_to, "repeat": S.repeat, "split": S.split, "chunk": S.chunk,
    "unbind": S.unbind, "narrow": S.narrow, "select": S.select, "flip": S.flip,
    "roll": S.roll, "tril": S.tril, "triu": S.triu, "diagonal": S.diagonal,
    "trace": S.trace, "gather": S.gather, "index_select": S.index_select,
    "masked_fill": S.masked_fill, "masked_select": S.masked_select, "take": S.take,
    "nonzero": S.nonzero, "contiguous": S.contiguous,
    "is_contiguous": lambda self, memory_format=None: bool(self._value.flags.c_contiguous),
    # conversion
    "clone": O.clone, "to": _to, "type": _type,
    "float": lambda self, memory_format=None: _to(self, _dtype.float32),
    "double": lambda self, memory_format=None: _to(self, _dtype.float64),
    "half": lambda self, memory_format=None: _to(self, _dtype.float16),
    "long": lambda self, memory_format=None: _to(self, _dtype.int64),
    "int": lambda self, memory_format=None: _to(self, _dtype.int32),
    "bool": lambda self, memory_format=None: _to(self, _dtype.bool_),
    "cpu": lambda self, memory_format=None: self,
    "type_as": lambda self, other: _to(self, other.dtype),
    "new_tensor": _new_tensor, "new_zeros": _new_full_factory("zeros"),
    "new_ones": _new_full_factory("ones"), "new_empty": _new_full_factory("empty"),
    "new_full": _new_full_factory("full"),
    # in place
    "add_": _inplace_of(O.add), "sub_": _inplace_of(O.sub), "mul_": _inplace_of(O.mul),
    "div_": _inplace_of(O.div), "pow_": _pow_, "neg_": _inplace_of(O.neg),
    "exp_": _inplace_of(O.exp), "log_": _inplace_of(O.log), "sin_": _inplace_of(O.sin),
    "cos_": _inplace_of(O.cos), "tanh_": _inplace_of(O.tanh), "sqrt_": _inplace_of(O.sqrt),
    "abs_": _inplace_of(O.abs), "relu_": _inplace_of(O.relu),
    "sigmoid_": _inplace_of(O.sigmoid), "clamp_": _clamp_, "clip_": _clamp_,
    "masked_fill_": _masked_fill_, "fill_": I.fill_, "zero_": I.zero_, "copy_": I.copy_,
    "uniform_": _uniform_, "normal_": _normal_, "apply_": _apply_,
}

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

Tensor.__array_priority__ = 1000
