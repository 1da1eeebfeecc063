"""Cases for solve, inv, det, slogdet, cofactor and cholesky
(functrans/primitives/square_matrices.py), qr and svd (functrans/primitives/decompositions.py),
directly and through functrans.numpy.linalg. Matrices
are diagonally dominant (cholesky's: positive definite), so well conditioned and finite
differences are accurate; singular ones are checked against JAX in
tests/functrans_numpy/test_square_matrices.py. cholesky reads only the lower triangle but its rule
symmetrises the tangent (as JAX), so its differentiable cases symmetrise their input first: finite
differences along a random direction then see the same symmetric part."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import square_matrices as P
from functrans.primitives.decompositions import qr, svd
from primitives.cases import Case, real


def well_conditioned(rng, shape):
    """Stacks of square matrices: uniform in (-1, 1) plus 3 on the diagonal (some negative
    determinants, as the sign of a diagonal entry is flipped at random)."""
    n = shape[-1]
    flip = rng.choice([-1.0, 1.0], shape[:-1])[..., None]
    return (rng.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(n)) * flip


def positive_definite(rng, shape):
    """Stacks of symmetric positive definite matrices: B B^T / n + I, B uniform in (-1, 1)."""
    n = shape[-1]
    b = rng.uniform(-1.0, 1.0, shape)
    return b @ np.swapaxes(b, -1, -2) / max(n, 1) + np.eye(n)


def symmetric_part(a):
    return (a + fnp.swapaxes(a, -1, -2)) / 2


def spread_singular_values(rng, shape):
    """Stacks of (m, n) matrices Q1 diag(s) Q2^T with singular values 1, 2, 3, ... (each
    scaled by up to 10%), so well separated: Q1, Q2 random orthonormal."""
    *batch, m, n = shape
    k = min(m, n)
    q1 = np.linalg.qr(rng.normal(size=(*batch, m, m)))[0][..., :k]
    q2 = np.linalg.qr(rng.normal(size=(*batch, n, n)))[0][..., :k]
    s = np.arange(1.0, k + 1) * rng.uniform(0.9, 1.1, (*batch, k))
    return (q1 * s[..., None, :]) @ np.swapaxes(q2, -1, -2)


def sign_free_svd(a):
    s, u, vt = svd(a)
    return s, u @ vt, u * u, vt * vt


def basis_free_full_svd(a):
    """svd(a, full_matrices=True) through what it determines: each singular vector is unique
    only up to sign, and the columns of U (rows of V^T) beyond min(m, n) only up to a rotation
    of the space they span (LAPACK and cuSOLVER's batched and single-matrix SVDs choose
    differently). So: s, the sign-free products of the first k vectors, and the projectors
    onto the complements."""
    s, u, vt = svd(a, full_matrices=True)
    k = s.shape[-1]
    uk, u_rest = u[..., :, :k], u[..., :, k:]
    vk, v_rest = vt[..., :k, :], vt[..., k:, :]
    return (s, uk @ vk, uk * uk, vk * vk, u_rest @ fnp.swapaxes(u_rest, -1, -2),
            fnp.swapaxes(v_rest, -1, -2) @ v_rest)


W = well_conditioned
SPD = positive_definite
SPREAD = spread_singular_values

CASES = [
    Case("solve", P.solve, [(3, 3), (3, 2)], domain=[W, real]),
    Case("solve", P.solve, [(2, 3, 3), (2, 3, 1)], domain=[W, real], name="solve-stack"),
    Case("solve", fnp.linalg.solve, [(3, 3), (3,)], domain=[W, real], name="solve-vector"),
    Case("solve", fnp.linalg.solve, [(2, 2), (4, 2, 3)], domain=[W, real],
         name="solve-broadcast"),
    Case("solve", P.solve, [(0, 0), (0, 2)], domain=[W, real], name="solve-empty"),
    Case("inv", P.inv, [(3, 3)], domain=W),
    Case("inv", fnp.linalg.inv, [(2, 2, 2)], domain=W, name="inv-stack"),
    Case("det", P.det, [(3, 3)], domain=W),
    Case("det", fnp.linalg.det, [(2, 2, 2)], domain=W, name="det-stack"),
    Case("det", P.det, [(1, 1)], domain=W, name="det-1x1"),
    Case("slogdet", P.slogdet, [(3, 3)], domain=W),
    Case("slogdet", lambda a: fnp.linalg.slogdet(a).logabsdet, [(2, 3, 3)], domain=W,
         name="slogdet-stack"),
    Case("cofactor", P.cofactor, [(3, 3)], domain=W),
    Case("cofactor", P.cofactor, [(2, 2, 2)], domain=W, name="cofactor-stack"),
    Case("cholesky", lambda a: P.cholesky(symmetric_part(a)), [(3, 3)], domain=SPD),
    Case("cholesky", lambda a: fnp.linalg.cholesky(symmetric_part(a)), [(2, 3, 3)], domain=SPD,
         name="cholesky-stack"),
    Case("cholesky", P.cholesky, [(2, 0, 0)], domain=SPD, differentiable=False,
         name="cholesky-empty"),
    Case("qr", qr, [(4, 3)], domain=SPREAD),
    Case("qr", qr, [(3, 3)], domain=W, name="qr-square"),
    Case("qr", lambda a: fnp.linalg.qr(a), [(2, 3, 2)], domain=SPREAD, name="qr-stack"),
    Case("qr", lambda a: qr(a, full_matrices=True), [(4, 2)], domain=SPREAD,
         differentiable=False, name="qr-complete"),
    # svd: U and V^T are unique up to a sign per singular pair, so the cases differentiate
    # what the signs cancel in (s, U V^T, U*U, V^T*V^T); spread singular values keep the
    # rule's 1/(s_j^2 - s_i^2) finite
    Case("svd", lambda a: sign_free_svd(a), [(4, 3)], domain=SPREAD),
    Case("svd", lambda a: sign_free_svd(a), [(2, 2, 4)], domain=SPREAD, name="svd-wide-stack"),
    Case("svd", lambda a: sign_free_svd(a), [(3, 3)], domain=SPREAD, name="svd-square"),
    Case("svd", lambda a: svd(a, compute_uv=False)[0], [(2, 3, 2)], domain=SPREAD,
         name="svd-values"),
    Case("svd", basis_free_full_svd, [(4, 2)], domain=SPREAD, differentiable=False,
         name="svd-full"),
    Case("svd", basis_free_full_svd, [(2, 5)], domain=SPREAD, differentiable=False,
         name="svd-full-wide"),
]
