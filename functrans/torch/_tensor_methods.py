"""Tensor's operators and methods, installed on the class: a method that is the torch function
of its name with self first, or its in-place form, comes from a table of names."""

from __future__ import annotations

from functrans.torch import _activations as AC
from functrans.torch import _complex as CX
from functrans.torch import _creation as C
from functrans.torch import _differences as D
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
from functrans.torch._legacy import as_dtype, construct, new
from functrans.torch._record import apply_primitive
from functrans.torch._tensor import TapeTrace, Tensor, is_inference
from functrans.torch.autograd import backward as _autograd_backward


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad."""
    _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _swap(f):
    return lambda self, other: f(other, self)


def _inplace_of(fn, broadcasts=False):
    def method(self, *args, **kwargs):
        return I.inplace(self, fn, *args, broadcasts=broadcasts, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


_PYTHON_DTYPES = (bool, int, float, complex)  # x.to(float) is x.to(torch.float64), as in PyTorch


def _to(self, *args, dtype=None, copy=False, non_blocking=False, memory_format=None, **kwargs):
    """to(dtype) / to(device) / to(device, dtype) / to(other): self when nothing changes."""
    devices = [kwargs.pop("device")] if "device" in kwargs else []
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dtype.dtype | Tensor) or isinstance(a, type) and a in _PYTHON_DTYPES:
            dtype = a.dtype if isinstance(a, Tensor) else _dtype.as_dtype(a)
        elif is_device_like(a):
            devices.append(a)
        elif not isinstance(a, bool):  # bools: the positional non_blocking / copy flags
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}); pass a dtype, a device or a tensor")
    for d in devices:
        require_cpu(d, creating=False)
    dt = self._value.dtype if dtype is None else _dtype.to_numpy(dtype)
    if copy and dt == self._value.dtype:  # a copy though nothing changes: ToCopyBackward0
        return O.unary(O.TO_COPY, self, {"new_dtype": dt})
    return O.to_dtype(self, dt)


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


def _apply_(self, fn):
    if self._requires_grad:
        raise RuntimeError("apply_ is only implemented on CPU tensors that do not require grad")
    flat = self._value.reshape(-1)
    for i, v in enumerate(flat.tolist()):
        flat[i] = fn(v)
    return self


# the torch functions whose method is the function with self first, found by name in the
# modules that define them
_FUNCTION_MODULES = (EW, AC, RD, LA, S, IX, SC, D)
_FUNCTIONS = (
    "add sub mul div floor_divide remainder fmod pow square neg abs sin cos tan exp log tanh sqrt "
    "sigmoid relu reciprocal asin acos atan sinh cosh asinh acosh atanh exp2 expm1 log2 log10 "
    "log1p rsqrt erf floor ceil round trunc sign atan2 maximum minimum clamp lerp clamp_min "
    "clamp_max nan_to_num addcmul addcdiv eq ne lt le gt ge equal allclose isclose isnan isinf "
    "isfinite signbit logical_not logical_and logical_or subtract multiply divide true_divide "
    "negative absolute arctan2 clip greater less softmax log_softmax prod max min amax amin "
    "argmax argmin std var var_mean std_mean norm logsumexp cumsum cumprod all any count_nonzero "
    "matmul mm mv dot bmm outer inner addmm reshape view flatten unflatten squeeze unsqueeze "
    "permute transpose t movedim expand expand_as broadcast_to repeat diag split chunk "
    "split_with_sizes unsafe_split unsafe_split_with_sizes unsafe_chunk unbind narrow flip roll "
    "tril triu diagonal trace contiguous repeat_interleave select gather index_select masked_fill "
    "masked_select take median nanmedian isin as_strided sort argsort topk nonzero scatter "
    "scatter_add scatter_reduce index_add index_put index_fill diff ger greater_equal logaddexp "
    "logaddexp2 hypot xlogy erfc logit deg2rad rad2deg fmax fmin copysign frac nansum nanmean "
    "heaviside sinc cummax cummin kron cross dist fliplr flipud diag_embed diagflat fix positive "
    "arccosh arcsinh arctanh is_nonzero is_same_size is_signed less_equal logical_xor not_equal "
    "take_along_dim")
# x.NAME_(...): x <- NAME(x, ...), PyTorch's in-place rules (_inplace); the elementwise ones'
# tensor operands must broadcast to x's shape
_INPLACE_ELEMENTWISE = (
    "add sub mul div pow neg exp log sin cos tanh sqrt abs relu sigmoid clamp clip clamp_min "
    "clamp_max nan_to_num addcmul addcdiv masked_fill floor_divide remainder fmod square tan "
    "reciprocal asin acos atan sinh cosh asinh acosh atanh exp2 expm1 log2 log10 log1p rsqrt erf "
    "floor ceil round trunc sign atan2 lerp subtract multiply divide true_divide negative hypot "
    "xlogy erfc logit deg2rad rad2deg copysign frac heaviside sinc fix arccosh arcsinh arctanh "
    "absolute arctan2 logical_not logical_and logical_or logical_xor")
_INPLACE = ("addmm scatter scatter_add scatter_reduce index_add index_put index_fill cumsum "
            "cumprod tril triu")
# x.eq_(y) and the other in-place comparisons: 1 or 0 in x's dtype, a node of zero gradient
_INPLACE_COMPARE = {"eq": "Eq", "ne": "Ne", "not_equal": "Ne", "lt": "Lt", "less": "Lt",
                    "le": "Le", "less_equal": "Le", "gt": "Gt", "greater": "Gt", "ge": "Ge",
                    "greater_equal": "Ge"}
# methods of their own: the in-place-only ops of _inplace, the samplers of _random
_OWN = {name: getattr(module, name) for module, names in (
    (I, "fill_ zero_ copy_ squeeze_ unsqueeze_ t_ transpose_"),
    (R, "uniform_ normal_ random_ bernoulli_ exponential_ geometric_ log_normal_ cauchy_"))
    for name in names.split()}


def _function(name):
    """The torch function NAME, from the first of _FUNCTION_MODULES that defines it."""
    return next(getattr(m, name) for m in _FUNCTION_MODULES if hasattr(m, name))


_METHODS = {
    **{name: _function(name) for name in _FUNCTIONS.split()},
    **{name + "_": _inplace_of(_function(name), True) for name in _INPLACE_ELEMENTWISE.split()},
    **{name + "_": _inplace_of(_function(name)) for name in _INPLACE.split()},
    **{name + "_": I.compare_(_function(name), node) for name, node in _INPLACE_COMPARE.items()},
    **_OWN,
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
    "__ge__": EW.ge, "__and__": EW.logical_and, "__or__": EW.logical_or,
    "__xor__": EW.logical_xor, "__invert__": EW.logical_not,
    "__getitem__": IX.getitem, "__setitem__": I.setitem,
    **{f"__i{name}__": _inplace_of(getattr(EW, fn), True) for name, fn in (
        ("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("pow", "pow"))},
    # PyTorch's aliases and what differs from the function
    "arcsin": EW.asin, "arccos": EW.acos, "arctan": EW.atan,
    **{alias + "_": _inplace_of(fn, True) for alias, fn in (
        ("arcsin", EW.asin), ("arccos", EW.acos), ("arctan", EW.atan), ("sgn", CX.sgn))},
    "where": lambda self, condition, other: EW.where(condition, self, other),
    **{name: (lambda f: lambda self, dim=None, keepdim=False, dtype=None: f(
        self, dim, keepdim, dtype=dtype))(getattr(RD, name)) for name in ("sum", "mean")},
    "ravel": S.flatten, "swapaxes": S.transpose, "swapdims": S.transpose, "moveaxis": S.movedim,
    "swapaxes_": I.transpose_, "swapdims_": I.transpose_,
    "tile": lambda self, *dims: S.tile(self, S._ints(dims)),  # x.tile(2, 3) or x.tile((2, 3))
    "view_as": lambda self, other: S.view(self, tuple(other.shape)),
    "reshape_as": lambda self, other: S.reshape(self, tuple(other.shape)),
    "T": property(S.numpy_T), "mT": property(S.matrix_transpose),
    "is_contiguous": lambda self, memory_format=None: bool(self._value.flags.c_contiguous),
    # conversion
    "clone": O.clone, "to": _to, "type": _type,
    **{name: (lambda d: lambda self, memory_format=None: _to(self, d))(_dtype.as_dtype(name))
       for name in ("float", "double", "half", "long", "int", "short", "bool")},
    "cpu": lambda self, memory_format=None: self,
    "type_as": lambda self, other: _to(self, other.dtype),
    "new_tensor": _new_factory(C.tensor), "new": new, "new_zeros": _new_factory(C.zeros),
    "new_ones": _new_factory(C.ones), "new_empty": _new_factory(C.empty),
    "new_full": _new_factory(C.full),
    "is_inference": is_inference, "bernoulli": C.bernoulli, "cuda": _cuda, "apply_": _apply_,
    "_construct": staticmethod(construct),
}

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
TapeTrace.process_primitive = lambda self, prim, tracers, params: apply_primitive(prim, tracers,
                                                                                    params)

Tensor.__array_priority__ = 1000
