"""numpy.linalg's solve, inv, det, slogdet and cholesky on arrays and traced values.

Values, dtypes and shapes follow numpy (integers become float64, leading axes are stacks and
broadcast, a 1-d right-hand side of solve is one vector); a singular matrix raises numpy's
LinAlgError in solve and inv, as a matrix that is not positive definite does in cholesky; det of
a singular matrix is 0 with the cofactor matrix as its gradient, as in JAX. The derivatives are
the rows of functrans/primitives/square_matrices.py.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
array([1. , 0.5])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from functrans.errors import ShapeError
from functrans.numpy._core import asarray, promote
from functrans.primitives import square_matrices as P
from functrans.primitives.shape_ops import broadcast_to, expand_dims, reshape

__all__ = ['solve', 'inv', 'det', 'slogdet', 'cholesky', 'SlogdetResult']


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def float_operands(name, *xs):
    """`xs` promoted together to an inexact dtype: float64 for integers and bools, float32
    for float16, complex ones as they are."""
    xs = promote(*map(asarray, xs))
    dtype = xs[0].dtype
    if dtype.kind not in "fc" or dtype == np.float16:
        xs = promote(*xs, dtype=np.float64 if dtype.kind != "f" else np.float32)
    return xs


def _square(name, a):
    if a.ndim < 2:
        raise np.linalg.LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional "
            f"({name} takes a matrix or a stack of matrices, got shape {tuple(a.shape)}).")
    if a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(
            f"Last 2 dimensions of the array must be square ({name}: got shape "
            f"{tuple(a.shape)}).")


def solve(a, b):
    """numpy.linalg.solve: x with a @ x == b; b is one vector when 1-d, else (..., n, k).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> ft.grad(lambda b: fnp.sum(fnp.linalg.solve(a, b)))(np.ones(2))
    array([0.2, 0.4])
    """
    a, b = float_operands("solve", a, b)
    _square("solve", a)
    return solve_with_rhs("solve", a, b, P.solve)


def solve_with_rhs(name, a, b, solve_fn):
    """solve_fn(a, b) with b (..., n, k) broadcast against a's stack; a 1-d b is one vector."""
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, (1,))
    if b.ndim < 2 or b.shape[-2] != n:
        raise ShapeError(f"{name}: a has shape {tuple(a.shape)} but b has shape "
                         f"{tuple(b.shape[:-1] if vector else b.shape)}: b's "
                         f"{'length' if vector else 'second-to-last axis'} must be {n}.")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ShapeError(f"{name}: the leading (stack) axes of a {tuple(a.shape)} and b "
                         f"{tuple(b.shape)} do not broadcast.") from None
    x = solve_fn(broadcast_to(a, (*batch, n, n)), broadcast_to(b, (*batch, *b.shape[-2:])))
    return reshape(x, (*batch, n)) if vector else x


def inv(a):
    """numpy.linalg.inv, over the last two axes."""
    a, = float_operands("inv", a)
    _square("inv", a)
    return P.inv(a)


def det(a):
    """numpy.linalg.det, over the last two axes.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> ft.grad(fnp.linalg.det)(np.array([[1.0, 2.0], [2.0, 4.0]]))   # singular: the cofactors
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    a, = float_operands("det", a)
    _square("det", a)
    return P.det(a)


def slogdet(a):
    """numpy.linalg.slogdet: (sign, log|det|), as a SlogdetResult."""
    a, = float_operands("slogdet", a)
    _square("slogdet", a)
    return SlogdetResult(*P.slogdet(a))


def cholesky(a):
    """numpy.linalg.cholesky: the lower factor L with a == L @ L.T, over the last two axes.

    Only a's lower triangle is read, as in numpy; the derivative treats a tangent dA as its
    symmetric part (dA + dA.T) / 2, as JAX does.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[2., 0.],
           [1., 1.]])
    >>> ft.grad(lambda a: fnp.linalg.cholesky(a)[0, 0])(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[0.25, 0.  ],
           [0.  , 0.  ]])
    """
    a, = float_operands("cholesky", a)
    _square("cholesky", a)
    return P.cholesky(a)
