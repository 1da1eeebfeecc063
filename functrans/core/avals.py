"""Abstract values: what a transform knows about an array without its contents."""

from __future__ import annotations

import numbers

import numpy as np

from functrans.backend import adapter_of
from functrans.errors import DTypeError

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool", "complex128": "c128", "complex64": "c64"}


class ShapedArray:
    """Shape and dtype of an array: the type of a `Var` in the IR.

    `weak_type` marks a value standing for a Python int, float or complex (an argument of jit
    or make_jaxpr, or a result computed from such values only): as in JAX and numpy's NEP 50,
    it takes the dtype of the array it meets instead of promoting it (see `weak_scalar_type`).
    It is a promotion hint, not part of the type: avals are equal without it, as the carries
    of loops and the outputs of branches are compared.
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(map(int, shape))
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def str_short(self) -> str:
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{','.join(map(str, self.shape))}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"

    def update(self, shape=None, dtype=None) -> "ShapedArray":
        """A new shape or dtype; a weak type stays weak while its dtype is kept."""
        new_dtype = self.dtype if dtype is None else np.dtype(dtype)
        return ShapedArray(self.shape if shape is None else shape, new_dtype,
                           self.weak_type and new_dtype == self.dtype)

    def weakened(self) -> "ShapedArray":
        return ShapedArray(self.shape, self.dtype, True)


def is_float(dtype) -> bool:
    """Whether `dtype` is a floating or complex dtype (the ones that carry derivatives)."""
    if isinstance(dtype, np.dtype):  # the common case, without np.issubdtype's overhead
        return dtype.kind in "fc"
    return np.issubdtype(dtype, np.inexact)


PYTHON_SCALARS = (bool, int, float, complex)


def _array_aval(x) -> ShapedArray:
    # an ndarray's shape is already a tuple of ints and its dtype a np.dtype: skip __init__'s
    # normalisation (get_aval runs for every primal and residual of eager differentiation)
    aval = _new_aval(ShapedArray)
    aval.shape = x.shape
    aval.dtype = x.dtype
    aval.weak_type = False
    return aval


_new_aval = object.__new__
# numpy's ndarray and functrans's Array (functrans/core/array.py adds it: it imports the
# tracers, which import this module)
CONCRETE_ARRAY_TYPES = {np.ndarray}


def get_aval(x) -> ShapedArray:
    """The abstract value of a concrete value or a tracer."""
    if type(x) in CONCRETE_ARRAY_TYPES:
        return _array_aval(x)
    aval = getattr(x, "aval", None)
    if aval is not None and not isinstance(x, np.ndarray):
        return aval
    if isinstance(x, np.ndarray | np.generic):
        return _array_aval(x)
    if isinstance(x, PYTHON_SCALARS):  # int, float, complex are weak; bool is the lowest dtype
        return ShapedArray((), np.result_type(x), type(x) is not bool)
    if isinstance(x, numbers.Number):
        return ShapedArray((), np.asarray(x).dtype)
    if adapter_of(x) is not None:  # a dask or CuPy array (functrans.backends)
        return foreign_aval(x)
    raise DTypeError(
        f"functrans cannot use a value of type {type(x).__module__}.{type(x).__qualname__} as an "
        "array. Pass numpy arrays, Python scalars, or pytrees (tuples, lists, dicts) of them; "
        "convert other array types with numpy.asarray first.")


_WEAK_PY_TYPE = {"i": int, "u": int, "f": float, "c": complex}


def weak_scalar_type(x):
    """The Python type numpy's promotion should see for `x` (NEP 50: Python scalars are weak and
    take the other operand's dtype), or None for an array of a fixed dtype. A traced stand-in
    for a Python scalar (weak aval) answers like the scalar, so `jit(lambda a, b: a + b)` of a
    float32 array and 1.0 stays float32 as in eager mode."""
    t = type(x)
    if t is float or t is int or t is complex:  # a bool promotes as numpy's bool dtype
        return t
    aval = getattr(x, "aval", None)
    if aval is not None and not isinstance(x, np.ndarray) and aval.weak_type:
        return _WEAK_PY_TYPE.get(aval.dtype.kind)
    return None


def shape_of(x) -> tuple:
    """`np.shape(x)` without numpy's dispatch, which sends a tracer through
    `__array_function__`: tracers and arrays answer themselves."""
    shape = getattr(x, "shape", None)
    return shape if type(shape) is tuple else np.shape(x)


def ndim_of(x) -> int:
    """`np.ndim(x)` without numpy's dispatch (see shape_of)."""
    return len(shape_of(x))


def is_valid_value(x) -> bool:
    """Whether `x` can be a value in a program: an array (numpy's, or a dask or CuPy array), a
    numpy or Python scalar, or a tracer."""
    return isinstance(x, (np.ndarray, np.generic, *PYTHON_SCALARS)) or hasattr(x, "aval") \
        or adapter_of(x) is not None


def foreign_aval(x) -> ShapedArray:
    """The abstract value of an array of another library (dask, CuPy): its shape and dtype."""
    shape = tuple(x.shape)
    if any(not isinstance(d, numbers.Integral) for d in shape):
        raise DTypeError(
            f"a {type(x).__module__}.{type(x).__qualname__} of unknown shape {shape} cannot be "
            "traced: functrans programs have static shapes. Compute its chunk sizes first "
            "(dask: x.compute_chunk_sizes()).")
    return ShapedArray(shape, x.dtype)
