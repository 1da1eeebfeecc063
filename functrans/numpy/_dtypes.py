"""numpy's dtype names and dtype queries, so code written for jax.numpy (`x.astype(fnp.float32)`,
`fnp.finfo(x.dtype).eps`, `fnp.result_type(x, 1.0)`) runs unchanged. Promotion is numpy's.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.ones(2).astype(fnp.float32).dtype
dtype('float32')
"""

from __future__ import annotations

import numpy as np
from numpy import (bool_, complex64, complex128, complexfloating, dtype, finfo,  # noqa: F401
                   float16, float32, float64, floating, iinfo, inexact, int8, int16, int32,
                   int64, integer, issubdtype, newaxis, number, signedinteger, uint8, uint16,
                   uint32, uint64, unsignedinteger)

from functrans.numpy._core import _dtype_arg

__all__ = ["bool_", "complex64", "complex128", "complexfloating", "dtype", "finfo", "float16",
           "float32", "float64", "floating", "iinfo", "inexact", "int8", "int16", "int32",
           "int64", "integer", "issubdtype", "newaxis", "number", "signedinteger", "uint8",
           "uint16", "uint32", "uint64", "unsignedinteger", "result_type", "promote_types",
           "can_cast"]


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
