"""Matrix decompositions of stacks of real matrices (..., m, n), k = min(m, n): QR and SVD, with
numpy.linalg's impls (so the factors are LAPACK's, as JAX's on the CPU) and JAX's JVP rules.

QR, A = Q R: Q (..., m, k) and R (..., k, n), or Q square with full_matrices. The JVP (JAX's,
for m >= n and the thin factors):
  C = Q^T dA R^-1,  dO = tril(C, -1) - tril(C, -1)^T
  dQ = Q (dO - C) + dA R^-1,  dR = (C - dO) R

SVD, A = U diag(s) V^T: results in JAX's order, s (..., k), U, V^T (thin: (..., m, k) and
(..., k, n); full: square), or s alone (compute_uv=False). The JVP is JAX's, for the thin
factors of a real matrix with distinct nonzero singular values (repeated ones make U and V ill
defined: their tangents are inf/nan, as in JAX; s's tangent stays finite):
  dS = U^T dA V,  ds = diag(dS)
  F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it
  dU = U (F o (dS S + S dS^T)) [+ (I - U U^T) dA V S^-1  when m > n]
  dV = V (F o (S dS + dS^T S)) [+ (I - V V^T) dA^T U S^-1 when n > m]
The full factors have no JVP (as in JAX): their extra columns are not determined by A.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.errors import DTypeError, MissingRuleError, ShapeError
from functrans.primitives import xla_math
from functrans.primitives.elementwise import add, div, mul, sub
from functrans.primitives.layout import expand_dims, moveaxis
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.registry import define
from functrans.primitives.square_matrices import matrix_transpose, solve, stacked_matmul


def _check_matrix(name, a):
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix or a stack of matrices (..., m, n), got shape "
                         f"{a.shape}.")
    if a.dtype.kind != "f":
        raise DTypeError(f"{name}: needs float matrices, got {a.dtype.name}. Convert first "
                         "(functrans.numpy.linalg converts integers to float64).")


# --- QR ---------------------------------------------------------------------------------------

def qr(a, *, full_matrices: bool = False):
    """[Q, R] of the stack of matrices `a`."""
    return qr_p.bind(a, full_matrices=full_matrices)


def _qr_abstract(a, *, full_matrices):
    _check_matrix("qr", a)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)]


def _qr_impl(a, *, full_matrices):
    # single precision: scipy's LAPACK where installed (JAX's values), else numpy's
    qr_ = xla_math.scipy_lapack_single("qr", a, mode="full" if full_matrices else "economic")
    if qr_ is not None:
        return [qr_[0].astype(a.dtype, copy=False), qr_[1].astype(a.dtype, copy=False)]
    q, r = xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


def _qr_jvp(primals, tangents, *, full_matrices):
    a, = primals
    ta, = tangents
    m, n = shape_of(a)[-2:]
    if m < n or (full_matrices and m != n):
        raise MissingRuleError(
            f"qr: no derivative for a {m}x{n} matrix with "
            f"{'full' if full_matrices else 'reduced'} factors (JAX has none either): it "
            "needs rows >= columns and the reduced factors (mode='reduced').")
    q, r = qr(a)
    da_rinv = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(ta)))                     # dA R^-1
    c = stacked_matmul(matrix_transpose(q), da_rinv)
    lower = mul(c, np.tril(np.ones((n, n), a.dtype), -1))
    do = sub(lower, matrix_transpose(lower))                                # skew-symmetric
    dq = add(stacked_matmul(q, sub(do, c)), da_rinv)
    dr = stacked_matmul(sub(c, do), r)
    return [q, r], [dq, dr]


def _qr_batch(vals, dims, *, full_matrices):
    a, = vals
    return qr(moveaxis(a, dims[0], 0), full_matrices=full_matrices), [0, 0]


qr_p = define("qr", impl=_qr_impl, abstract=_qr_abstract, jvp=_qr_jvp,
              batch=_qr_batch, multiple_results=True, torch_name="LinalgQrBackward0")


# --- SVD --------------------------------------------------------------------------------------

def svd(a, *, full_matrices: bool = False, compute_uv: bool = True):
    """[s, U, V^T] (or [s]) of the stack of matrices `a`."""
    return svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)


def _svd_abstract(a, *, full_matrices, compute_uv):
    _check_matrix("svd", a)
    *batch, m, n = a.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), a.dtype)
    if not compute_uv:
        return [s]
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, u_cols), a.dtype),
            ShapedArray((*batch, vt_rows, n), a.dtype)]


def _svd_impl(a, *, full_matrices, compute_uv):
    if not compute_uv:
        return [xp.linalg.svd(a, compute_uv=False)]
    u, s, vt = xp.linalg.svd(a, full_matrices=full_matrices)
    return [s, u, vt]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    a, = primals
    ta, = tangents
    m, n = shape_of(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise MissingRuleError(
            "svd: no derivative of the full U or V^T of a non-square matrix (their extra "
            "columns are not determined by the matrix; JAX has none either). Use "
            "full_matrices=False, or compute_uv=False for the singular values alone.")
    s, u, vt = svd(a)
    outs = [s, u, vt] if compute_uv else [s]
    v = matrix_transpose(vt)
    k = min(m, n)
    eye = np.eye(k, dtype=a.dtype)
    ds_mat = stacked_matmul(stacked_matmul(matrix_transpose(u), ta), v)                     # U^T dA V
    ds = reduce_sum(mul(ds_mat, eye), (ndim_of(ds_mat) - 1,))     # its diagonal
    if not compute_uv:
        return outs, [ds]
    s_row = expand_dims(s, (ndim_of(s) - 1,))                   # (..., 1, k): s_j
    s_col = matrix_transpose(s_row)                                          # (..., k, 1): s_i
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))         # s_j^2 - s_i^2
    f = sub(div(np.ones((), a.dtype), add(s_diffs, eye)), eye)  # 0 on the diagonal
    ds_s = mul(s_row, ds_mat)                                   # dS S
    s_ds = mul(s_col, ds_mat)                                   # S dS
    du = stacked_matmul(u, mul(f, add(ds_s, matrix_transpose(ds_s))))
    dv = stacked_matmul(v, mul(f, add(s_ds, matrix_transpose(s_ds))))
    if m > n:
        dav = stacked_matmul(ta, v)
        du = add(du, div(sub(dav, stacked_matmul(u, stacked_matmul(matrix_transpose(u), dav))), s_row))
    if n > m:
        dau = stacked_matmul(matrix_transpose(ta), u)
        dv = add(dv, div(sub(dau, stacked_matmul(v, stacked_matmul(vt, dau))), s_row))
    return outs, [ds, du, matrix_transpose(dv)]


def _svd_batch(vals, dims, *, full_matrices, compute_uv):
    a, = vals
    outs = svd(moveaxis(a, dims[0], 0), full_matrices=full_matrices, compute_uv=compute_uv)
    return outs, [0] * len(outs)


svd_p = define("svd", impl=_svd_impl, abstract=_svd_abstract, jvp=_svd_jvp,
               batch=_svd_batch, multiple_results=True, torch_name="LinalgSvdBackward0")
