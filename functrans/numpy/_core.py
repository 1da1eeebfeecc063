"""Conversion and dtype promotion shared by the functrans.numpy functions."""

from __future__ import annotations

import numpy as np

from functrans.core.avals import weak_scalar_type
from functrans.core.staging import convert_weak
from functrans.core.trace import Tracer, scalar_operand
from functrans.core.trace import trace_state as _trace_state  # read only: is a program being staged
from functrans.primitives.shape_ops import convert_element_type


def is_array(x) -> bool:
    return isinstance(x, Tracer | np.ndarray)


def asarray(a, dtype=None):
    """An array (or tracer) for `a`; lists and scalars become numpy arrays, as numpy does."""
    if isinstance(a, Tracer):
        return a if dtype is None else convert_element_type(a, dtype)
    if isinstance(a, list | tuple) and any(isinstance(x, Tracer) for x in _leaves(a)):
        from functrans.numpy._shape import stack
        return stack([asarray(x, dtype) for x in a])
    return np.asarray(a, dtype=dtype)


def _leaves(a):
    for x in a:
        if isinstance(x, list | tuple):
            yield from _leaves(x)
        else:
            yield x


def _dtype_arg(x):
    """What np.result_type should see for x: its dtype, or the Python scalar itself (weak)."""
    if isinstance(x, Tracer):
        t = weak_scalar_type(x)  # a traced Python scalar promotes like one: pass a value,
        return x.dtype if t is None else t(0)  # since np.result_type(float) is strong float64
    if isinstance(x, np.ndarray | np.generic):
        return x.dtype
    if isinstance(x, bool | int | float | complex):
        return x
    return np.asarray(x).dtype


def result_dtype(*args) -> np.dtype:
    """numpy's promotion (NEP 50: Python scalars are weak and take the array's dtype)."""
    return np.result_type(*map(_dtype_arg, args))


_PY_TYPE_OF = {np.dtype(np.int64): int, np.dtype(np.float64): float,
               np.dtype(np.complex128): complex}


def scalar_as(x, dtype):
    """A Python int, float or complex `x` converted to `dtype`: when `dtype` is its type's own
    (int64, float64, complex128) and a program is being staged, the program's weakly typed
    literal (see `scalar_operand`), so `2 * b` of a traced Python scalar b is weak as in JAX
    and takes the dtype of the arrays it meets later. Eagerly (or to another dtype) a 0-d
    array. Either way the result has `.dtype` and `.shape`."""
    out = np.asarray(x, dtype=dtype)
    if _trace_state.dynamic.level and type(x) in _WEAK_PY and dtype in _PY_TYPE_OF:
        return scalar_operand(_PY_TYPE_OF[dtype](out[()]))
    return out


_WEAK_PY = (int, float, complex)  # bool promotes as numpy's bool dtype, never weakly


def tracer_as(x, dtype):
    """A tracer converted to `dtype` by numpy promotion: a traced Python scalar going to its
    new Python type's own dtype (a weak int meeting a float) stays weak, as in JAX."""
    if dtype in _PY_TYPE_OF and weak_scalar_type(x) is not None:
        return convert_weak(convert_element_type, x, dtype)
    return convert_element_type(x, dtype)


def _shared_dtype(args):
    """The dtype of `args` when all are arrays or tracers of one native dtype (numpy's
    promotion then keeps it and nothing converts), else None."""
    dtype = None
    for x in args:
        if not isinstance(x, Tracer | np.ndarray) or (dtype is not None and x.dtype != dtype):
            return None
        dtype = x.dtype
    return dtype if dtype is not None and dtype.isnative else None


def promote(*args, dtype=None):
    """Operands converted to one dtype (numpy promotion), ready for a primitive."""
    if dtype is None:
        if _shared_dtype(args) is not None:  # the common case: nothing to promote
            return list(args)
        dtype = result_dtype(*args)
    else:
        dtype = np.dtype(dtype)
    out = []
    for x in args:
        if isinstance(x, Tracer):
            out.append(tracer_as(x, dtype))
        elif isinstance(x, np.ndarray) and x.dtype == dtype:
            out.append(x)
        else:
            out.append(scalar_as(x, dtype))
    return out


def to_float(x):
    """Integers and bools go to float64 for functions like sin, as numpy does."""
    x = asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        return convert_element_type(x, np.float64)
    return x
