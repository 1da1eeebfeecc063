"""Products over dot_general: matmul, dot, ..."""

from __future__ import annotations

from functrans.errors import ShapeError
from functrans.numpy._core import promote
from functrans.primitives.linalg import dot_general

__all__ = ['matmul']


def matmul(a, b):
    a, b = promote(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: operands must be at least 1-d (use * for scalars).")
    if a.ndim == 1 and b.ndim == 1:
        return dot_general(a, b, (((0,), (0,)), ((), ())))
    if a.ndim <= 2 and b.ndim <= 2:
        if a.shape[-1] != b.shape[0]:
            raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not align: the last "
                             f"axis of the first ({a.shape[-1]}) must equal the first axis of "
                             f"the second ({b.shape[0]}).")
        return dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
    raise NotImplementedError("batched matmul lands with the linalg surface")


