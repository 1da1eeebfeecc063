"""scipy.linalg's triangular solves, Cholesky and LU factorisations, matrix exponential and square
root, and block_diag, over functrans primitives: values as scipy's, derivatives as JAX's
(jax.scipy.linalg), every order. scipy itself is not needed: where it is installed the
primitives call its LAPACK routines, elsewhere numpy algorithms of the same accuracy.

Leading axes are stacks of matrices, as in scipy's batched functions. `overwrite_*` and
`check_finite` are accepted and change nothing (functrans never writes into its inputs, and
a non-finite input gives non-finite results rather than an error).

>>> import numpy as np, functrans.scipy.linalg as fsl
>>> fsl.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True)
array([1., 2.])
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from functrans.core.ownership import unaliased
from functrans.core.trace import Tracer
from functrans.errors import DTypeError, ShapeError
from functrans.numpy._core import asarray, promote
from functrans.numpy._results import return_arrays
from functrans.numpy._square_matrices import float_operands, solve_with_rhs
from functrans.primitives import decompositions as D
from functrans.primitives import elementwise as E
from functrans.primitives import matrix_functions as M
from functrans.primitives import square_matrices as P
from functrans.primitives.elementwise import convert_element_type, eq_p, mul
from functrans.primitives.shape_ops import (broadcast_to, concatenate, expand_dims, pad,
                                            reshape, slice_)

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor",
           "lu_solve", "expm", "sqrtm", "solve_banded", "solve_sylvester", "block_diag"]


def _square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: expected a square matrix or a stack of them (..., n, n), got "
                         f"shape {tuple(a.shape)}.")


def _trans_flag(trans, name) -> bool:
    if trans in (0, "N"):
        return False
    if trans in (1, 2, "T", "C"):     # 'C' is 'T' for real matrices
        return True
    raise ValueError(f"{name}: trans must be 0, 1, 2 or 'N', 'T', 'C'; got {trans!r}.")


def _conj_for(trans, a):
    """`a` conjugated when trans is 'C' (2) and `a` complex: op(a) = conj(a)^T then."""
    return E.conj(a) if trans in (2, "C") and a.dtype.kind == "c" else a


# --- triangular solves ------------------------------------------------------------------------

def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True):
    """scipy.linalg.solve_triangular: x with op(a) @ x = b, reading only a's lower (upper)
    triangle (and taking its diagonal as ones with unit_diagonal); trans 0/'N', 1/'T', 2/'C'.
    Differentiable in a (its triangle) and b."""
    a, b = float_operands("solve_triangular", a, b)
    _square("solve_triangular", a)
    transpose_a = _trans_flag(trans, "solve_triangular")
    a = _conj_for(trans, a)
    return solve_with_rhs("solve_triangular", a, b, lambda a, b: P.triangular_solve(
        a, b, lower=bool(lower), transpose_a=transpose_a, unit_diagonal=bool(unit_diagonal)))


# --- Cholesky ---------------------------------------------------------------------------------

def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.cholesky: the upper factor U with a = U.T @ U (lower=True: L with
    a = L @ L.T), read from a's upper (lower) triangle; zeros in the other one. The
    derivative treats a tangent as its symmetric part, as JAX's."""
    a, = float_operands("cholesky", a)
    _square("cholesky", a)
    if lower:
        return P.cholesky(a)
    return P.matrix_transpose(P.cholesky(P.matrix_transpose(a)))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """scipy.linalg.cho_factor: (c, lower), c holding the Cholesky factor in its lower (upper)
    triangle. The other triangle holds zeros, as in JAX (scipy leaves a's entries there; no
    function reads them)."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.cho_solve: x with a @ x = b from cho_factor's (c, lower), by two triangular
    solves (only c's factor triangle is read)."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: the first argument must be the pair (c, lower) that "
                        "cho_factor returns.") from None
    c, b = float_operands("cho_solve", c, b)
    _square("cho_solve", c)
    lower = bool(lower)

    def solve(c, b):
        # lower: a = L L^H, x = L^-H (L^-1 b); upper: a = U^H U, x = U^-1 (U^-H b); the
        # transposed solve reads conj(c) (c itself when real)
        c_h = _conj_for("C", c)
        y = P.triangular_solve(c_h if not lower else c, b, lower=lower, transpose_a=not lower)
        return P.triangular_solve(c_h if lower else c, y, lower=lower, transpose_a=lower)

    return solve_with_rhs("cho_solve", c, b, solve)


# --- LU ---------------------------------------------------------------------------------------

def _matrix_operand(name, a):
    a, = float_operands(name, a)
    if a.ndim < 2:
        raise ShapeError(f"{name}: expected a matrix or a stack of them (..., m, n), got shape "
                         f"{tuple(a.shape)}.")
    return a


def _permutation_matrix(perm, m, dtype):
    """rows[..., i, j] = (perm[..., i] == j): rows @ x = x[..., perm, :]."""
    rows = eq_p.bind(expand_dims(perm, (perm.ndim,)), np.arange(m, dtype=np.int32))
    return convert_element_type(rows, dtype)


def _unpack(packed):
    """L (m x k, unit lower) and U (k x n, upper) from the packed factors."""
    *lead, m, n = packed.shape
    k = min(m, n)
    nb = len(lead)
    low = slice_(packed, (0,) * (nb + 2), (*lead, m, k))
    low = mul(low, np.tril(np.ones((m, k), packed.dtype), -1)) + np.eye(m, k, dtype=packed.dtype)
    up = slice_(packed, (0,) * (nb + 2), (*lead, k, n))
    return low, mul(up, np.triu(np.ones((k, n), packed.dtype)))


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False):
    """scipy.linalg.lu: (p, l, u) with a = p @ l @ u, l unit lower triangular (m x k), u upper
    triangular (k x n), LAPACK's partial pivoting; (p @ l, u) with permute_l; p as row indices
    (a = l[p] @ u) with p_indices. Differentiable in a (JAX's rule) where the pivoting does not
    change."""
    from functrans.numpy._sorting import argsort
    a = _matrix_operand("lu", a)
    packed, _, perm = D.lu(a)
    low, up = _unpack(packed)
    m = a.shape[-2]
    rows = _permutation_matrix(perm, m, a.dtype)          # rows @ a = L @ U
    if permute_l:
        return P.stacked_matmul(P.matrix_transpose(rows), low), up
    if p_indices:
        return argsort(perm, axis=-1).astype(np.int32), low, up
    return P.matrix_transpose(rows), low, up


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True):
    """scipy.linalg.lu_factor: (lu, piv), the packed factors and LAPACK's (0-based) row swaps,
    int32 as scipy's. Differentiable in a (JAX's rule)."""
    a = _matrix_operand("lu_factor", a)
    packed, pivots, _ = D.lu(a)
    return packed, pivots


def lu_solve(lu_and_piv: tuple, b: Any, trans: int | str = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """scipy.linalg.lu_solve: x with a @ x = b (trans 1/'T', 2/'C': a.T @ x = b) from
    lu_factor's (lu, piv). Differentiable in lu and b."""
    try:
        packed, pivots = lu_and_piv
    except (TypeError, ValueError):
        raise TypeError("lu_solve: the first argument must be the pair (lu, piv) that "
                        "lu_factor returns.") from None
    packed, b = float_operands("lu_solve", packed, b)
    _square("lu_solve", packed)
    pivots = asarray(pivots)
    if pivots.dtype.kind not in "iu":
        raise DTypeError(f"lu_solve: piv must hold integers (lu_factor's row swaps), got "
                         f"{pivots.dtype.name}.")
    transpose_a = _trans_flag(trans, "lu_solve")
    packed = _conj_for(trans, packed)       # conj(A)'s factors: conj(L), conj(U), same pivots
    n = packed.shape[-1]
    perm = D.lu_pivots_to_permutation(pivots, permutation_size=n)

    def solve(lu_, b):
        rows = _permutation_matrix(broadcast_to(perm, (*lu_.shape[:-2], n)), n, lu_.dtype)
        if not transpose_a:    # L U x = b[perm]
            y = P.triangular_solve(lu_, P.stacked_matmul(rows, b), lower=True,
                                   unit_diagonal=True)
            return P.triangular_solve(lu_, y, lower=False)
        # a^T = U^T L^T P_rows: x = P_rows^T L^-T U^-T b
        y = P.triangular_solve(lu_, b, lower=False, transpose_a=True)
        y = P.triangular_solve(lu_, y, lower=True, transpose_a=True, unit_diagonal=True)
        return P.stacked_matmul(P.matrix_transpose(rows), y)

    return solve_with_rhs("lu_solve", packed, b, solve)


# --- matrix functions -------------------------------------------------------------------------

def expm(A: Any):
    """scipy.linalg.expm: the matrix exponential (of each matrix of a stack). Its derivative
    is the Frechet derivative (JAX's expm_frechet), exact at repeated eigenvalues."""
    a, = float_operands("expm", A)
    _square("expm", a)
    return M.expm(a)


def sqrtm(A: Any, disp: Any = None, blocksize: Any = None):
    """scipy.linalg.sqrtm: the principal square root (of each matrix of a stack). As scipy's,
    it is real for a real matrix with no eigenvalue on the negative real axis and complex
    otherwise, decided from the values where they are known (eagerly, and under grad and jvp
    of concrete inputs); under jit or vmap a real matrix keeps a real root, and one with no
    real root raises LinAlgError there (pass it as complex). Returns the root alone (scipy's
    `disp` and `blocksize` are accepted and ignored). Differentiable, the complex root
    included: dX solves X dX + dX X = dA (jax's sqrtm has no derivative)."""
    a, = float_operands("sqrtm", A)
    _square("sqrtm", a)
    if a.dtype.kind == "f":
        value = a.concrete_value() if isinstance(a, Tracer) else a
        if value is not None and not M.has_real_sqrtm(value):
            a = convert_element_type(a, np.result_type(a.dtype, np.complex64))
    return M.sqrtm(a)


def solve_banded(l_and_u: tuple, ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True):
    """scipy.linalg.solve_banded: x with a @ x = b for the banded matrix a stored as
    ab[u + i - j, j] = a[i, j] (l sub- and u superdiagonals; the corners of ab are not read).
    Solved as the dense system (O(n^3): for the small systems differentiable code meets), so
    its derivatives are solve's, in ab and b.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.solve_banded((1, 0), np.array([[2.0, 4.0], [1.0, 0.0]]), np.array([2.0, 5.0]))
    array([1., 1.])
    """
    try:
        lo, up = (int(k) for k in l_and_u)
    except (TypeError, ValueError):
        raise TypeError(f"solve_banded: l_and_u must be the pair (l, u) of the numbers of "
                        f"sub- and superdiagonals, got {l_and_u!r}.") from None
    ab, b = float_operands("solve_banded", ab, b)
    if ab.ndim != 2 or ab.shape[0] != lo + up + 1 or lo < 0 or up < 0:
        raise ShapeError(f"solve_banded: ab must have shape (l + u + 1, n) = ({lo + up + 1}, n) "
                         f"for (l, u) = ({lo}, {up}); got {tuple(ab.shape)}.")
    n = ab.shape[1]
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ShapeError(f"solve_banded: b must be (n,) or (n, k) with n = {n} (ab's columns); "
                         f"got {tuple(b.shape)}.")
    i, j = np.indices((n, n))
    band = up + i - j                                   # ab's row of a[i, j]
    inside = (band >= 0) & (band <= lo + up)
    dense = E.select(inside, ab[np.clip(band, 0, lo + up), j], np.zeros((), ab.dtype))
    return solve_with_rhs("solve_banded", dense, b, P.solve)


def solve_sylvester(a: Any, b: Any, q: Any):
    """scipy.linalg.solve_sylvester: X with a @ X + X @ b = q, for one (m x m) a, (n x n) b and
    (m x n) q. Solved as the (mn x mn) linear system (I kron a + b.T kron I) vec(X) = vec(q),
    so its derivatives are solve's in every argument; meant for small matrices (scipy's
    Bartels-Stewart method is O(m^3 + n^3), this O((mn)^3)).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.solve_sylvester(np.eye(2), np.eye(2), 2 * np.eye(2))
    array([[1., 0.],
           [0., 1.]])
    """
    from functrans.numpy._linalg import kron
    a, b, q = float_operands("solve_sylvester", a, b, q)
    if a.ndim != 2 or b.ndim != 2 or q.ndim != 2:
        raise ShapeError(f"solve_sylvester: expected matrices, got shapes {tuple(a.shape)}, "
                         f"{tuple(b.shape)} and {tuple(q.shape)}.")
    _square("solve_sylvester", a)
    _square("solve_sylvester", b)
    m, n = a.shape[0], b.shape[0]
    if q.shape != (m, n):
        raise ShapeError(f"solve_sylvester: q must be {m} x {n} for a {tuple(a.shape)} and b "
                         f"{tuple(b.shape)}, got shape {tuple(q.shape)}.")
    # row-major vec: vec(a X) = (a kron I_n) vec(X), vec(X b) = (I_m kron b^T) vec(X)
    system = kron(a, np.eye(n, dtype=a.dtype)) + kron(np.eye(m, dtype=a.dtype),
                                                      P.matrix_transpose(b))
    x = P.solve(system, reshape(q, (m * n, 1)))
    return reshape(x, (m, n))


# --- block_diag -------------------------------------------------------------------------------

def block_diag(*arrs: Any):
    """scipy.linalg.block_diag: the arrays (0-d, 1-d as one row, or 2-d) down the diagonal of
    a zero matrix, in numpy's common dtype.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.block_diag(np.ones((1, 2)), 3.0)
    array([[1., 1., 0.],
           [0., 0., 3.]])
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = promote(*map(asarray, arrs))
    shapes = []
    for i, x in enumerate(blocks):
        if x.ndim > 2:
            raise ValueError(f"block_diag: argument {i} has {x.ndim} dimensions (shape "
                             f"{tuple(x.shape)}); arguments must have 2 or fewer.")
        shapes.append((1, 1) if x.ndim == 0 else (1, x.shape[0]) if x.ndim == 1 else x.shape)
    width = sum(c for _, c in shapes)
    rows, col = [], 0
    zero = np.zeros((), blocks[0].dtype)
    for x, (r, c) in zip(blocks, shapes):
        x = reshape(x, (r, c))
        rows.append(pad(x, zero, [(0, 0, 0), (col, width - col - c, 0)]))
        col += c
    # one block with nothing around it would come back as (a view of) the caller's array
    return unaliased([concatenate(rows, 0)], blocks)[0]


# results follow the inputs' array library (dask, CuPy), as functrans.numpy's do
return_arrays(sys.modules[__name__], __all__)
