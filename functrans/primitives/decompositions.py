"""Matrix decompositions of stacks of real or complex matrices (..., m, n), k = min(m, n): QR
and SVD, with numpy.linalg's impls (so the factors are LAPACK's, as JAX's on the CPU) and JAX's JVP rules.

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

eigh, A = V diag(w) V^T for symmetric A, read from one triangle (numpy's values); the JVP is
JAX's, with the tangent symmetrised (jax.numpy.linalg.eigh symmetrises its input):
  X = V^T S V, S = (dA + dA^T) / 2,  dw = diag(X),  dV = V (F o X),  F_ij = 1 / (w_j - w_i)
off the diagonal, 0 on it. Repeated eigenvalues make V ill defined: its tangent is inf/nan
there, as in JAX; w's tangent stays finite (eigvalsh's gradient at a degenerate spectrum is
V diag(ct) V^T for LAPACK's basis, as JAX's).

eig: complex eigenvalues and right eigenvectors (LAPACK's geev, as numpy and JAX on the
CPU), always complex as JAX's (numpy returns real arrays when every imaginary part is 0). The
JVP is JAX's (jax.lax.linalg.eig with enable_eigvec_derivs=True), with P = V^-1 dA V:
  dw = diag(P),  U = V (F o P),  F_ij = 1 / (w_j - w_i) off the diagonal,
  dV = U + V diag(c),  c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj,  k = argmax_i |v_ij|,
which keeps LAPACK's normalisation (unit norm, largest entry real).

Complex matrices: every rule above with transposes conjugated (U^H, V^H, Q^H), JAX's
additions where phases enter (svd's (dS - dS^H) / (2 s) on U's diagonal, qr's i Im diag(C)),
and real singular values and eigh eigenvalues.

pinv, the Moore-Penrose pseudo-inverse P (numpy's: singular values at most rcond * s_max
count as zero); the JVP is JAX's (Golub and Pereyra 1973), exact where the rank is constant:
  dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P

lu, P A = L U with partial pivoting (LAPACK's getrf, as scipy and JAX): the packed factors
(..., m, n) (L's strict lower part, U's upper part), the pivots (LAPACK's row swaps, int32)
and the permutation (int32: A[perm] = L U). The JVP is JAX's: with X = A_dot[perm], L and U
padded to squares (m x m, n x n) with the identity,
  Y = L^-1 X U^-1,  dL = L tril(Y, -1),  dU = triu(Y) U,  d(LU) = dL + dU.
The pivots and permutation are piecewise constant (zero tangents).
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.errors import DTypeError, MissingRuleError, ShapeError
from functrans.primitives import xla_math
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import abs as abs_
from functrans.primitives.elementwise import (add, complex as make_complex, conj,
                                              convert_element_type, div, eq_p, imag, mul, neg,
                                              real, select, sub)
from functrans.primitives.layout import expand_dims, moveaxis, zero_jvp
from functrans.primitives.reductions import argmax, reduce_sum
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import pad, slice_
from functrans.primitives.square_matrices import (
    conj_transpose, matrix_transpose, scipy_linalg, solve, stacked_matmul, triangle_mask,
    triangular_solve)


def _check_matrix(name, a):
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix or a stack of matrices (..., m, n), got shape "
                         f"{a.shape}.")
    if a.dtype.kind not in "fc":
        raise DTypeError(f"{name}: needs float or complex matrices, got {a.dtype.name}. "
                         "Convert first (functrans.numpy.linalg converts integers to "
                         "float64).")


def _real_dtype(dtype):
    """float64 for complex128 (float32 for complex64), a real dtype itself."""
    return np.finfo(dtype).dtype


def _as_dtype(x, dtype):
    return x if np.dtype(x.dtype) == np.dtype(dtype) else convert_element_type(x, dtype)


def _diagonal(x):
    """The diagonals (..., k) of the stack of square matrices `x`."""
    n = shape_of(x)[-1]
    return reduce_sum(mul(x, np.eye(n, dtype=x.dtype)), (ndim_of(x) - 1,))


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
    da_rinv = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(ta)))  # dA R^-1
    c = stacked_matmul(conj_transpose(q), da_rinv)
    lower = mul(c, np.tril(np.ones((n, n), a.dtype), -1))
    do = sub(lower, conj_transpose(lower))                                # skew-Hermitian
    if np.dtype(a.dtype).kind == "c":
        # R's real diagonal fixes the phases: dO's diagonal is i Im(diag C)
        i_im = make_complex(np.zeros((), _real_dtype(a.dtype)), imag(c))
        do = add(do, mul(i_im, np.eye(n, dtype=a.dtype)))
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
    s = ShapedArray((*batch, k), _real_dtype(a.dtype))
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
    v = conj_transpose(vt)
    k = min(m, n)
    complex_ = np.dtype(a.dtype).kind == "c"
    ds_mat = stacked_matmul(stacked_matmul(conj_transpose(u), ta), v)        # U^H dA V
    ds = _diagonal(ds_mat)
    ds = real(ds) if complex_ else ds
    if not compute_uv:
        return outs, [ds]
    eye = np.eye(k, dtype=s.dtype)
    s_row = expand_dims(s, (ndim_of(s) - 1,))                   # (..., 1, k): s_j
    s_col = matrix_transpose(s_row)                             # (..., k, 1): s_i
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))         # s_j^2 - s_i^2
    f = _as_dtype(sub(div(np.ones((), s.dtype), add(s_diffs, eye)), eye), a.dtype)
    s_row, s_col = _as_dtype(s_row, a.dtype), _as_dtype(s_col, a.dtype)
    ds_s = mul(s_row, ds_mat)                                   # dS S
    s_ds = mul(s_col, ds_mat)                                   # S dS
    du_inner = mul(f, add(ds_s, conj_transpose(ds_s)))
    if complex_:
        # the phase of each pair of singular vectors (JAX's gauge: U^H dU has the imaginary
        # diagonal (dS - dS^H) / (2 s), V^H dV none); 1/s taken as 0 where s == 0
        zero_s = eq_p.bind(s, np.zeros((), s.dtype))
        s_inv = select(zero_s, np.zeros((), s.dtype),
                       div(np.ones((), s.dtype), select(zero_s, np.ones((), s.dtype), s)))
        s_inv_mat = _as_dtype(mul(expand_dims(s_inv, (ndim_of(s),)), eye), a.dtype)
        half_skew = mul(sub(ds_mat, conj_transpose(ds_mat)), np.asarray(0.5, a.dtype))
        du_inner = add(du_inner, mul(half_skew, s_inv_mat))
    du = stacked_matmul(u, du_inner)
    dv = stacked_matmul(v, mul(f, add(s_ds, conj_transpose(s_ds))))
    if m > n:
        dav = stacked_matmul(ta, v)
        proj = stacked_matmul(u, stacked_matmul(conj_transpose(u), dav))
        du = add(du, div(sub(dav, proj), s_row))
    if n > m:
        dau = stacked_matmul(conj_transpose(ta), u)
        dv = add(dv, div(sub(dau, stacked_matmul(v, stacked_matmul(vt, dau))), s_row))
    return outs, [ds, du, conj_transpose(dv)]


def _svd_batch(vals, dims, *, full_matrices, compute_uv):
    a, = vals
    outs = svd(moveaxis(a, dims[0], 0), full_matrices=full_matrices, compute_uv=compute_uv)
    return outs, [0] * len(outs)


svd_p = define("svd", impl=_svd_impl, abstract=_svd_abstract, jvp=_svd_jvp,
               batch=_svd_batch, multiple_results=True, torch_name="LinalgSvdBackward0")


# --- eigh -------------------------------------------------------------------------------------

def eigh(a, *, lower: bool = True):
    """[w, V]: the ascending eigenvalues and orthonormal eigenvectors (columns) of the symmetric
    matrices `a`, read from their lower (upper) triangle."""
    return eigh_p.bind(a, lower=bool(lower))


def _eigh_abstract(a, *, lower):
    _check_matrix("eigh", a)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eigh: needs square matrices (..., n, n), got shape {a.shape}.")
    return [ShapedArray(a.shape[:-1], _real_dtype(a.dtype)), ShapedArray(a.shape, a.dtype)]


def _eigh_impl(a, *, lower):
    w, v = xp.linalg.eigh(a, UPLO="L" if lower else "U")
    return [w, v]


def _off_diagonal_reciprocals(w):
    """F_ij = 1 / (w_j - w_i) for i != j (inf for repeated eigenvalues, as JAX's 1/0), 0 on
    the diagonal; no division by zero is evaluated."""
    n = shape_of(w)[-1]
    eye = np.eye(n, dtype=w.dtype)
    w_row = expand_dims(w, (ndim_of(w) - 1,))                  # (..., 1, n): w_j
    d = add(sub(w_row, matrix_transpose(w_row)), eye)          # w_j - w_i, 1 on the diagonal
    repeated = eq_p.bind(d, np.zeros((), w.dtype))
    safe = select(repeated, np.ones((), w.dtype), d)
    return sub(select(repeated, np.asarray(np.inf, w.dtype), div(np.ones((), w.dtype), safe)),
               eye)


def _eigh_jvp(primals, tangents, *, lower):
    a, = primals
    ta, = tangents
    w, v = eigh(a, lower=lower)
    sym = mul(add(ta, conj_transpose(ta)), np.asarray(0.5, ta.dtype))
    x = stacked_matmul(conj_transpose(v), stacked_matmul(sym, v))          # V^H S V
    dw = _diagonal(x)
    dw = real(dw) if np.dtype(a.dtype).kind == "c" else dw
    dv = stacked_matmul(v, mul(_as_dtype(_off_diagonal_reciprocals(w), a.dtype), x))
    return [w, v], [dw, dv]


def _one_matrix_batch(prim):
    def rule(vals, dims, **params):
        a, = vals
        outs = prim.bind(moveaxis(a, dims[0], 0), **params)
        return outs, [0] * len(outs)
    return rule


eigh_p = define("eigh", impl=_eigh_impl, abstract=_eigh_abstract, jvp=_eigh_jvp,
                multiple_results=True, torch_name="LinalgEighBackward0")
eigh_p.rules["batch"] = _one_matrix_batch(eigh_p)


# --- eig --------------------------------------------------------------------------------------

def eig(a, *, compute_v: bool = True):
    """[w, V] (or [w]): the complex eigenvalues and right eigenvectors of the real matrices
    `a`."""
    return eig_p.bind(a, compute_v=bool(compute_v))


def _eig_abstract(a, *, compute_v):
    _check_matrix("eig", a)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eig: needs square matrices (..., n, n), got shape {a.shape}.")
    cdtype = np.result_type(a.dtype, np.complex64)
    w = ShapedArray(a.shape[:-1], cdtype)
    return [w, ShapedArray(a.shape, cdtype)] if compute_v else [w]


def _eig_impl(a, *, compute_v):
    cdtype = np.result_type(a.dtype, np.complex64)
    if not compute_v:
        return [xp.asarray(xp.linalg.eigvals(a)).astype(cdtype)]
    w, v = xp.linalg.eig(a)
    return [xp.asarray(w).astype(cdtype), xp.asarray(v).astype(cdtype)]


def _eig_jvp(primals, tangents, *, compute_v):
    a, = primals
    ta, = tangents
    w, v = eig(a)
    da = _as_dtype(ta, v.dtype)
    p = stacked_matmul(solve(v, da), v)                                    # V^-1 dA V
    dw = _diagonal(p)
    if not compute_v:
        return [w], [dw]
    u = stacked_matmul(v, mul(_off_diagonal_reciprocals(w), p))
    # dv_j = u_j + c_j v_j; LAPACK's unit norm and real largest entry fix c_j (JAX's):
    # c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj, k = argmax_i |v_ij|
    nd = ndim_of(v)
    n = shape_of(v)[-1]
    k = argmax(abs_(v), nd - 2, index_dtype=np.int32)
    mask = _as_dtype(eq_p.bind(expand_dims(k, (nd - 2,)),
                               np.arange(n, dtype=np.int32)[:, None]), v.dtype)
    re_part = neg(real(reduce_sum(mul(conj(v), u), (nd - 2,))))
    im_part = neg(div(imag(reduce_sum(mul(mask, u), (nd - 2,))),
                      real(reduce_sum(mul(mask, v), (nd - 2,)))))
    c = expand_dims(make_complex(re_part, im_part), (nd - 2,))
    return [w, v], [dw, add(u, mul(v, c))]


eig_p = define("eig", impl=_eig_impl, abstract=_eig_abstract, jvp=_eig_jvp,
               multiple_results=True, torch_name="LinalgEigBackward0")
eig_p.rules["batch"] = _one_matrix_batch(eig_p)


# --- pinv -------------------------------------------------------------------------------------

def pinv(a, *, rcond: float):
    """The Moore-Penrose pseudo-inverse of the matrices `a` (singular values at most
    rcond * max(s) count as zero)."""
    return pinv_p.bind(a, rcond=float(rcond))


def _pinv_abstract(a, *, rcond):
    _check_matrix("pinv", a)
    *batch, m, n = a.shape
    return ShapedArray((*batch, n, m), a.dtype)


def _pinv_impl(a, *, rcond):
    a = xp.asarray(a)
    if a.size == 0:
        return xp.zeros((*a.shape[:-2], a.shape[-1], a.shape[-2]), a.dtype)
    return xp.asarray(xp.linalg.pinv(a, rcond=rcond)).astype(a.dtype, copy=False)


def _pinv_jvp(primals, tangents, *, rcond):
    a, = primals
    ta, = tangents
    p = pinv(a, rcond=rcond)
    m, n = shape_of(a)[-2:]
    mm = stacked_matmul
    pt, tat = conj_transpose(p), conj_transpose(ta)
    # JAX's association of the products (m >= n: n x n inner products first)
    if m >= n:
        s = mm(mm(p, pt), tat)
        t = mm(mm(tat, pt), p)
        dp = add(sub(add(neg(mm(mm(p, ta), p)), s), mm(mm(s, a), p)),
                 sub(t, mm(mm(p, a), t)))
    else:
        s = mm(p, mm(pt, tat))
        t = mm(tat, mm(pt, p))
        dp = add(sub(add(neg(mm(p, mm(ta, p))), s), mm(s, mm(a, p))),
                 sub(t, mm(p, mm(a, t))))
    return p, dp


def _pinv_batch(vals, dims, *, rcond):
    a, = vals
    return pinv(moveaxis(a, dims[0], 0), rcond=rcond), 0


pinv_p = define("pinv", impl=_pinv_impl, abstract=_pinv_abstract, jvp=_pinv_jvp,
                batch=_pinv_batch, torch_name="LinalgPinvBackward0")


# --- lu ---------------------------------------------------------------------------------------

def lu(a):
    """[packed L\\U, pivots, permutation] of the matrices `a`: a[..., perm, :] = L @ U with L
    unit lower triangular (m x k) and U upper triangular (k x n)."""
    return lu_p.bind(a)


def _lu_abstract(a):
    _check_matrix("lu", a)
    *batch, m, n = a.shape
    return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, min(m, n)), np.dtype(np.int32)),
            ShapedArray((*batch, m), np.dtype(np.int32))]


def _pivots_to_permutation(pivots, m: int):
    """The row permutation (int32, length m) that LAPACK's row swaps `pivots` apply: row i was
    swapped with row pivots[i], in order."""
    pivots = np.asarray(pivots)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (*pivots.shape[:-1], m)).copy()
    flat_perm, flat_piv = perm.reshape(-1, m), pivots.reshape(-1, pivots.shape[-1])
    rows = np.arange(flat_perm.shape[0])
    for i in range(flat_piv.shape[-1]):
        j = flat_piv[:, i]
        here = flat_perm[rows, i].copy()
        flat_perm[rows, i] = flat_perm[rows, j]
        flat_perm[rows, j] = here
    return perm


def _lu_numpy(a):
    """Partial-pivoting LU over a stack (right-looking, the pivot the first entry of largest
    magnitude, as LAPACK's getf2): (packed factors, pivots)."""
    lu = np.array(a, copy=True)
    *batch, m, n = lu.shape
    k = min(m, n)
    flat = lu.reshape(-1, m, n)
    rows = np.arange(flat.shape[0])
    pivots = np.zeros((flat.shape[0], k), np.int32)
    for j in range(k):
        p = j + np.argmax(np.abs(flat[:, j:, j]), axis=-1)
        pivots[:, j] = p
        top = flat[rows, j].copy()
        flat[rows, j] = flat[rows, p]
        flat[rows, p] = top
        piv = flat[:, j, j]
        scale = np.where(piv != 0, piv, 1)
        flat[:, j + 1:, j] /= scale[:, None]
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j, None] * flat[:, j, None, j + 1:]
    return flat.reshape(lu.shape), pivots.reshape(*batch, k)


def _lu_impl(a):
    a = np.asarray(a)
    *batch, m, n = a.shape
    linalg = scipy_linalg(a)
    if linalg is not None and a.size and a.dtype.kind in "fc" and a.dtype != np.float16:
        facts = [linalg.lu_factor(x, check_finite=False) for x in a.reshape(-1, m, n)]
        packed = np.stack([f[0] for f in facts]).reshape(a.shape).astype(a.dtype, copy=False)
        pivots = np.stack([f[1] for f in facts]).reshape(*batch, min(m, n)).astype(np.int32)
    else:
        packed, pivots = _lu_numpy(a)
    return [packed, pivots, _pivots_to_permutation(pivots, m)]


def _lu_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    packed, pivots, perm = lu(a)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    dtype = a.dtype
    nb = ndim_of(a) - 2
    # the permutation as a matrix: X = A_dot[perm] = P_rows @ A_dot
    rows = eq_p.bind(expand_dims(perm, (nb + 1,)), np.arange(m, dtype=np.int32))
    x = stacked_matmul(convert_element_type(rows, dtype), ta)
    zero = np.zeros((), dtype)
    none = [(0, 0, 0)] * nb
    lead = shape_of(a)[:-2]
    # L: m x m, the strict lower part of the first k columns, then the identity
    low = mul(slice_(packed, (0,) * (nb + 2), (*lead, m, k)), _rect_mask(m, k, dtype, lower=True))
    low = add(pad(low, zero, [*none, (0, 0, 0), (0, m - k, 0)]), np.eye(m, dtype=dtype))
    # U: n x n, the upper part of the first k rows, then the identity below them
    up = mul(slice_(packed, (0,) * (nb + 2), (*lead, k, n)), _rect_mask(k, n, dtype, lower=False))
    u_eye = np.zeros((n, n), dtype)
    u_eye[k:, k:] = np.eye(n - k, dtype=dtype)
    up = add(pad(up, zero, [*none, (0, n - k, 0), (0, 0, 0)]), u_eye)
    la = triangular_solve(low, x, lower=True, unit_diagonal=True)              # L^-1 X
    lau = matrix_transpose(triangular_solve(up, matrix_transpose(la), lower=False,
                                            transpose_a=True))                  # L^-1 X U^-1
    d_low = stacked_matmul(low, mul(lau, _rect_mask(m, n, dtype, lower=True)))
    d_up = stacked_matmul(mul(lau, _rect_mask(m, n, dtype, lower=False)), up)
    zeros = [Zero(ShapedArray(shape_of(pivots), pivots.dtype)),
             Zero(ShapedArray(shape_of(perm), perm.dtype))]
    return [packed, pivots, perm], [add(d_low, d_up), *zeros]


def _rect_mask(m, n, dtype, *, lower):
    """The 0/1 mask of the strictly lower (lower=True) or upper (with the diagonal) part of an
    m x n matrix."""
    ones = np.ones((m, n), dtype)
    return np.tril(ones, -1) if lower else np.triu(ones)


lu_p = define("lu", impl=_lu_impl, abstract=_lu_abstract, jvp=_lu_jvp,
              multiple_results=True, torch_name="LinalgLuBackward0")
lu_p.rules["batch"] = _one_matrix_batch(lu_p)


# --- lu_pivots_to_permutation -----------------------------------------------------------------

def lu_pivots_to_permutation(pivots, *, permutation_size: int):
    """The row permutation (int32) that LAPACK's row swaps `pivots` (..., k) apply to
    `permutation_size` rows: a[..., perm, :] = L @ U for lu's pivots."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def _pivots_abstract(pivots, *, permutation_size):
    if pivots.ndim < 1 or pivots.dtype.kind not in "iu":
        raise DTypeError(f"lu_pivots_to_permutation: needs integer pivots (..., k), got "
                         f"{pivots.dtype.name}{list(pivots.shape)} (lu_factor's second "
                         "result).")
    if pivots.shape[-1] > permutation_size:
        raise ShapeError(f"lu_pivots_to_permutation: {pivots.shape[-1]} pivots for "
                         f"{permutation_size} rows; there is one pivot per row at most.")
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


lu_pivots_to_permutation_p = define(
    "lu_pivots_to_permutation",
    impl=lambda pivots, *, permutation_size: _pivots_to_permutation(pivots, permutation_size),
    abstract=_pivots_abstract)
lu_pivots_to_permutation_p.rules["jvp"] = zero_jvp(lu_pivots_to_permutation_p)
lu_pivots_to_permutation_p.rules["batch"] = lambda vals, dims, **params: (
    lu_pivots_to_permutation(moveaxis(vals[0], dims[0], 0), **params), 0)
