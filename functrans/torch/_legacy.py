"""PyTorch's legacy tensor types (`torch.FloatTensor`, `torch.LongTensor`, ...) and
`Tensor.new`: constructors by dtype that old code still calls, and `isinstance` checks by dtype
(`isinstance(x.float(), torch.FloatTensor)` holds, as in PyTorch)."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from functrans.torch import _dtype
from functrans.torch._creation import tensor
from functrans.torch._tensor import Size, Tensor, wrap


_SIGNATURES = ("\n * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)"
               "\n * (tuple of ints size, *, torch.device device = None)"
               "\n * (object data, *, torch.device device = None)\n")
_CTOR_ON_DEVICE = ("constructor of the form torch.Tensor(tensor, device=device) is not supported.  "
                   "Use torch.tensor(...) or torch.as_tensor(...) instead.")
_NEW_ON_DEVICE = ("new of the form tensor.new(tensor, device=device) is not supported.  Use "
                  "torch.as_tensor(...) instead.")


def _is_size(a, first: bool) -> bool:
    """Whether PyTorch's parser reads `a` as a size: anything with `__index__` (an int, a numpy
    integer, a one-element integer tensor), a bool only after the first size."""
    if first and isinstance(a, bool):
        return False
    try:
        operator.index(a)
    except TypeError:
        return False
    return True


def _sizes(args) -> tuple | None:
    """The sizes when `args` name a shape (ints, or one torch.Size), else None (data); mixed
    arguments get PyTorch's TypeError."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if not _is_size(args[0], first=True):
        if len(args) == 1:
            return None
        got = ", ".join(map(_dtype.type_name, args))
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                        f"expected one of:{_SIGNATURES}")
    for k, a in enumerate(args[1:], 2):
        if not _is_size(a, first=False):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {k} with "
                            f'error "type must be tuple of ints,but got {_dtype.type_name(a)}"')
    return tuple(map(operator.index, args))


def construct(dtype, args, device=None, method=False):
    """What `torch.Tensor(*args)` (`dtype` None), `torch.<Kind>Tensor(*args)` and
    `Tensor.new(*args)` (`method`) give, read as PyTorch's parser reads them: an
    uninitialised tensor of the given sizes (zeros here), an alias of a given tensor (of any
    dtype for torch.Tensor), or a copy of a sequence of data in the (default) dtype."""
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{device} was passed")
    if len(args) == 1 and isinstance(args[0], Tensor):
        data = args[0]
        if device is not None:
            raise RuntimeError("Legacy tensor " + (_NEW_ON_DEVICE if method else _CTOR_ON_DEVICE))
        if dtype is not None and data.dtype != dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(data.dtype)})")
        return data[...]  # PyTorch's alias of the tensor (AliasBackward0)
    dtype = dtype or _dtype.get_default_dtype()
    shape = _sizes(args) if args else (0,)  # no arguments: an empty 1-d tensor
    if shape is not None:
        negative = [s for s in shape if s < 0]
        if negative:
            raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: "
                               f"{list(shape)}")
        return wrap(np.zeros(shape, _dtype.to_numpy(dtype)))
    data = args[0]
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, Sequence | np.ndarray):
        raise TypeError(f"new(): data must be a sequence (got {_dtype.type_name(data)})")
    return tensor(data, dtype=dtype)


def _options(dtype) -> str:
    """A CPU tensor's TensorOptions as PyTorch's messages print them."""
    return (f"TensorOptions(dtype={_dtype.cpp_name(dtype.dtype)}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def type_name(dtype) -> str:
    return f"torch.{_dtype.kind(dtype.dtype)}Tensor"


class _LegacyTensorType(type):
    """Metaclass of the legacy types: calling one constructs, isinstance checks the dtype."""

    def __call__(cls, *args, device=None):
        return construct(cls.dtype, args, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls):
        return f"<class '{type_name(cls.dtype)}'>"


LEGACY_TYPES = {}
for _name, _kind in _dtype.KINDS.items():
    _dt = getattr(_dtype, "bool_" if _name == "bool" else _name, None)
    if _dt is not None and not _dt.is_complex:  # PyTorch has no legacy complex types
        LEGACY_TYPES[f"{_kind}Tensor"] = _LegacyTensorType(
            f"{_kind}Tensor", (), {"dtype": _dt, "__module__": "torch",
                                   "__doc__": f"torch.{_kind}Tensor: the legacy {_name} type."})


def as_dtype(spec):
    """A dtype from what `Tensor.type(...)` accepts: a dtype, a legacy type or its name."""
    if isinstance(spec, _LegacyTensorType):
        return spec.dtype
    if isinstance(spec, str):
        kind = spec.rsplit(".", 1)[-1]
        if kind not in LEGACY_TYPES:
            raise ValueError(f"invalid type: '{spec}'")
        return LEGACY_TYPES[kind].dtype
    return spec


def new(self, *args, device=None):
    """Tensor.new: a tensor of this tensor's dtype, from sizes (uninitialised) or data."""
    return construct(self.dtype, args, device, method=True)
