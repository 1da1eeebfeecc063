"""PyTorch's dtypes (wrapping a numpy dtype as `.dtype`) and `torch.result_type`'s promotion:
tensors with dimensions outrank 0-d tensors, which outrank Python scalars; a lower-ranked operand
matters only when its category (bool < int < float < complex) is higher."""

from __future__ import annotations

import numbers

import numpy as np


class dtype:
    """A torch dtype: `torch.float32`, `torch.int64`, ..."""

    __slots__ = ("name", "dtype", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.dtype = np.dtype(np_dtype)
        self.is_floating_point = self.dtype.kind == "f"
        self.is_complex = self.dtype.kind == "c"
        self.is_signed = self.dtype.kind in "fci"
        self.itemsize = self.dtype.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (as_dtype, (self.name,))

    def to_real(self) -> "dtype":
        return from_numpy(np.finfo(self.dtype).dtype) if self.is_complex else self

    def to_complex(self) -> "dtype":
        return complex128 if self.dtype == np.float64 else complex64


ALL = [dtype(n, n if n != "bool" else np.bool_) for n in (
    "float16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16", "int32",
    "int64", "bool")]
float16, float32, float64, complex64, complex128, uint8, int8, int16, int32, int64, bool_ = ALL
_BY_NUMPY = {d.dtype: d for d in ALL}
_BY_NAME = {**{d.name: d for d in ALL}, "half": float16, "float": float32, "double": float64,
            "cfloat": complex64, "cdouble": complex128, "short": int16, "int": int32,
            "long": int64}
_PYTHON_TYPES = {bool: bool_, int: int64, float: float64, complex: complex128}

_default = [float32]


def get_default_dtype() -> dtype:
    """torch.get_default_dtype: the dtype of new float tensors (float32 at start)."""
    return _default[0]


def set_default_dtype(d) -> None:
    """torch.set_default_dtype: set the dtype of new float tensors."""
    if not isinstance(d, dtype):      # PyTorch's text, then which types are accepted
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def from_numpy(np_dtype) -> dtype:
    d = _BY_NUMPY.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(f"functrans.torch has no dtype for numpy {np.dtype(np_dtype).name}; "
                        f"supported: {', '.join(x.name for x in ALL)}.")
    return d


def as_dtype(d) -> dtype:
    """A torch dtype from a torch dtype, its name, a numpy dtype or a Python type (as PyTorch:
    float is float64, complex complex128, whatever the default dtype)."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, type) and d in _PYTHON_TYPES:
        return _PYTHON_TYPES[d]
    return _BY_NAME[d] if isinstance(d, str) and d in _BY_NAME else from_numpy(d)


def to_numpy(d) -> np.dtype:
    return as_dtype(d).dtype


# PyTorch's scalar type names (`Float` in torch.FloatTensor and in its messages) and C++ names
KINDS = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
         "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
         "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def kind(np_dtype) -> str:
    """PyTorch's scalar type name of a numpy dtype: `Float`, `Long`, ..."""
    name = np.dtype(np_dtype).name
    return KINDS.get(name, name)


def type_name(x) -> str:
    """The name PyTorch's messages give a value's type: `float`, `numpy.ndarray`, `Tensor`."""
    t = type(x)
    if t.__module__ == "builtins" or t.__name__ == "Tensor":
        return t.__name__
    return f"{'torch' if t.__module__.startswith('functrans.torch') else t.__module__}.{t.__name__}"


def cpp_name(np_dtype) -> str:
    """The C++ type name PyTorch's messages use: `float`, `long int`, ..."""
    name = np.dtype(np_dtype).name
    return _CPP_NAMES.get(name, name)


# --- promotion -------------------------------------------------------------------------------

def _category(np_dtype: np.dtype) -> int:
    k = np_dtype.kind
    return 0 if k == "b" else 1 if k in "iu" else 2 if k == "f" else 3


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on numpy dtypes: the higher category wins and keeps its own width."""
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == cb or {ca, cb} == {2, 3}:  # complex with float: complex wide enough for both
        return np.promote_types(a, b)
    return a if ca > cb else b


_CATEGORIES = (bool, numbers.Integral, numbers.Real, numbers.Complex)


def _scalar_dtype(x) -> np.dtype:
    """PyTorch's dtype for a Python number: bool, int64, the default float or its complex."""
    k = next((k for k, t in enumerate(_CATEGORIES) if isinstance(x, t)), None)
    if k is None:
        raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    d = _default[0]
    return (np.dtype(np.bool_), np.dtype(np.int64), d.dtype, d.to_complex().dtype)[k]


def _combine(higher, lower):
    """c10's combine_categories: `lower` only matters when its category is higher."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    return higher if _category(lower) <= _category(higher) else promote_types(higher, lower)


def result_type(*operands) -> np.dtype:
    """torch.result_type over tensors (objects with `_value`), numpy arrays and Python scalars."""
    dim = zero = wrapped = None
    for x in operands:
        v = getattr(x, "_value", x)
        if isinstance(v, np.ndarray | np.generic):
            if v.ndim:
                dim = v.dtype if dim is None else promote_types(dim, v.dtype)
            else:
                zero = v.dtype if zero is None else promote_types(zero, v.dtype)
        else:
            d = _scalar_dtype(v)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


def infer_dtype(data) -> np.dtype:
    """PyTorch's dtype for nested Python data: the highest category present wins."""
    found = scalar = None
    todo = [data]
    while todo:
        x = todo.pop()
        v = getattr(x, "_value", x)
        if isinstance(v, np.ndarray | np.generic):
            found = v.dtype if found is None else promote_types(found, v.dtype)
        elif isinstance(x, list | tuple):
            todo.extend(reversed(x))
        else:
            d = _scalar_dtype(x)
            scalar = d if scalar is None else promote_types(scalar, d)
    if found is None:
        return scalar if scalar is not None else _default[0].dtype
    return found if scalar is None else promote_types(found, scalar)


def _plain(data):
    v = getattr(data, "_value", data)
    return [_plain(x) for x in v] if isinstance(v, list | tuple) else v


def tensor_value(data, dtype=None) -> np.ndarray:
    """A fresh array for `data` (a tensor, an array or nested data), PyTorch's dtype inferred."""
    v = getattr(data, "_value", data)
    dt = None if dtype is None else to_numpy(dtype)
    if isinstance(v, np.ndarray):
        return v.copy() if dt is None or dt == v.dtype else v.astype(dt)
    try:
        return np.array(_plain(data), dtype=infer_dtype(data) if dt is None else dt)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists to build a tensor: {e}") \
            from None


class finfo:
    """torch.finfo: the limits of a float dtype (of the default dtype without one; a complex
    dtype's are its parts')."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else type
        if not isinstance(d, dtype) or d.dtype.kind not in "fc":
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = np.finfo(d.dtype)
        self.bits, self.dtype = int(info.bits), info.dtype.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the limits of an integer dtype."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtype) or type.dtype.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.dtype)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), \
            int(info.min), type.dtype.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
