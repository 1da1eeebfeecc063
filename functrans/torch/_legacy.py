"""PyTorch's legacy tensor types (`torch.FloatTensor`, `torch.LongTensor`, ...) and
`Tensor.new`: constructors by dtype that old code still calls, and `isinstance` checks by dtype
(`isinstance(x.float(), torch.FloatTensor)` holds, as in PyTorch)."""

from __future__ import annotations

import numpy as np

from functrans.torch import _dtype
from functrans.torch._creation import tensor
from functrans.torch._tensor import Size, Tensor, wrap


def _shape_args(args) -> tuple | None:
    """The sizes when `args` name a shape (ints, or one torch.Size), else None (data)."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return tuple(args)
    return None


def construct(dtype, args, device=None):
    """What `torch.<Kind>Tensor(*args)` and `Tensor.new(*args)` give: an uninitialised tensor of
    the given sizes (zeros here), or a copy of the given data in `dtype`."""
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{device} was passed")
    shape = _shape_args(args) if args else (0,)  # no arguments: an empty 1-d tensor
    if shape is not None:
        if any(s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                               f"{list(shape)}")
        return wrap(np.zeros(shape, _dtype.to_numpy(dtype)))
    if len(args) != 1:
        raise TypeError(f"new() received an invalid combination of arguments: expected sizes "
                        f"(ints) or one sequence of data, got {len(args)} arguments")
    data = args[0]
    if isinstance(data, Tensor):
        if data.dtype != dtype:
            raise TypeError(f"expected {type_name(dtype)} (got {type_name(data.dtype)})")
        return data.detach()  # PyTorch's legacy constructor aliases a tensor of its type
    return tensor(data, dtype=dtype)


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
    return construct(self.dtype, args, device)
