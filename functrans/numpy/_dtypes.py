"""numpy's dtype names and dtype queries, so code written for jax.numpy (`x.astype(fnp.float32)`,
`fnp.finfo(x.dtype).eps`, `fnp.result_type(x, 1.0)`) runs unchanged. Promotion is numpy's.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.ones(2).astype(fnp.float32).dtype
dtype('float32')
"""

from __future__ import annotations

import numpy as np
from numpy import (complexfloating, dtype, finfo, floating, iinfo, inexact,  # noqa: F401
                   integer, issubdtype, newaxis, number, signedinteger, unsignedinteger)

from functrans.core.trace import Tracer
from functrans.numpy._core import _dtype_arg, asarray

__all__ = ["bool_", "complex64", "complex128", "complexfloating", "dtype", "finfo", "float16",
           "float32", "float64", "floating", "iinfo", "inexact", "int8", "int16", "int32",
           "int64", "integer", "issubdtype", "newaxis", "number", "signedinteger", "uint8",
           "uint16", "uint32", "uint64", "unsignedinteger", "result_type", "promote_types",
           "can_cast"]


class _ScalarMeta(type):
    """numpy's scalar type, callable on traced values as in jax.numpy: `fnp.int64(x)` of a
    traced float is `x.astype(int64)` (integer, so the derivative stops there, as in JAX and
    autograd); on anything else it is numpy's own `np.int64(x)`. As a dtype it is numpy's
    (`np.dtype(fnp.int64)`, `x.dtype == fnp.int64`, `isinstance(np.int64(1), fnp.int64)`)."""

    def __call__(cls, x=0, *args, **kwargs):
        if isinstance(x, Tracer):
            return asarray(x, cls.dtype)
        return cls.dtype.type(x, *args, **kwargs)

    def __eq__(cls, other):
        return cls is other or (not isinstance(other, _ScalarMeta) and other == cls.dtype.type)

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass.dtype.type if isinstance(subclass, _ScalarMeta) else subclass,
                          cls.dtype.type)

    def __repr__(cls):
        return repr(cls.dtype.type)


def _scalar_type(np_type) -> type:
    return _ScalarMeta(np_type.__name__, (), {"dtype": np.dtype(np_type),
                                             "__doc__": f"numpy.{np_type.__name__}, callable "
                                                        "on traced values (an astype)."})


bool_ = _scalar_type(np.bool_)
int8, int16, int32, int64 = (_scalar_type(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(t) for t in (np.uint8, np.uint16, np.uint32,
                                                           np.uint64))
float16, float32, float64 = (_scalar_type(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = _scalar_type(np.complex64), _scalar_type(np.complex128)


def result_type(*arrays_and_dtypes) -> np.dtype:
    """numpy.result_type, for traced values too (Python scalars are weak, NEP 50)."""
    return np.result_type(*[a if isinstance(a, np.dtype | type | str) else _dtype_arg(a)
                            for a in arrays_and_dtypes])


def promote_types(type1, type2) -> np.dtype:
    """numpy.promote_types."""
    return np.promote_types(type1, type2)


def can_cast(from_, to, casting="safe") -> bool:
    """numpy.can_cast, for traced values too (by their dtype)."""
    if not isinstance(from_, np.dtype | type | str):
        from_ = _dtype_arg(from_)
        if not isinstance(from_, np.dtype):
            from_ = np.result_type(from_)
    return np.can_cast(from_, to, casting)
