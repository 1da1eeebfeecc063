"""Cases for eigh, eig, pinv, lu and lu_pivots_to_permutation
(functrans/primitives/decompositions.py), triangular_solve (square_matrices.py), expm, sqrtm and
matrix_function_frechet (matrix_functions.py), directly and through functrans.numpy.linalg and
functrans.scipy.linalg.

Eigenvectors are unique up to sign, so the eigh cases differentiate what the signs cancel in
(w, V*V, V diag(w) V^T); their matrices have well separated eigenvalues, so the rule's
1 / (w_j - w_i) stays finite. eigh reads one triangle but its rule symmetrises the tangent (as
JAX), so its differentiable cases symmetrise their input first, as cholesky's do. The cases
here check eig's values, jit and vmap; its derivatives are checked in cases_complex_linalg.py."""

import numpy as np

import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.primitives import decompositions as D
from functrans.primitives import matrix_functions as MF
from functrans.primitives import square_matrices as P
from primitives.cases import Case, real
from primitives.cases_square_matrices import (positive_definite, spread_singular_values,
                                              symmetric_part, well_conditioned)


def spread_symmetric(rng, shape):
    """Stacks of symmetric matrices Q diag(w) Q^T, eigenvalues -n/2 + 1, 2, ... (each moved by
    up to 10%), so well separated; Q random orthonormal."""
    *batch, n, _ = shape
    q = np.linalg.qr(rng.normal(size=(*batch, n, n)))[0]
    w = (np.arange(1.0, n + 1) - n / 2) * rng.uniform(0.9, 1.1, (*batch, n))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def shifted(rng, shape):
    """Stacks of non-symmetric matrices uniform in (-1, 1) plus 3 on the diagonal: every
    eigenvalue in the right half plane, so the real principal square root exists."""
    return rng.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(shape[-1])


def pivots(rng, shape):
    """LAPACK-style pivots for 4 rows: pivots[i] in [i, 4)."""
    return np.stack([rng.integers(i, 4, shape[:-1]) for i in range(shape[-1])],
                    axis=-1).astype(np.int32)


def sign_free_eigh(a, lower=True):
    w, v = D.eigh(symmetric_part(a), lower=lower)
    return w, v * v, (v * w[..., None, :]) @ fnp.swapaxes(v, -1, -2)


W = well_conditioned
SPD = positive_definite
SPREAD = spread_singular_values
SYM = spread_symmetric

CASES = [
    Case("eigh", sign_free_eigh, [(3, 3)], domain=SYM),
    Case("eigh", lambda a: sign_free_eigh(a, lower=False), [(2, 4, 4)], domain=SYM,
         name="eigh-upper-stack"),
    Case("eigh", lambda a: fnp.linalg.eigvalsh(symmetric_part(a)), [(3, 3)], domain=SYM,
         name="eigh-eigvalsh"),
    Case("eigh", lambda a: fnp.linalg.eigvalsh(a), [(0, 0)], domain=SYM, differentiable=False,
         name="eigh-empty"),
    Case("eig", lambda a: D.eig(a), [(3, 3)], domain=W, differentiable=False),
    Case("eig", lambda a: fnp.linalg.eigvals(a), [(2, 4, 4)], domain=real, differentiable=False,
         name="eig-values-stack"),
    Case("pinv", lambda a: D.pinv(a, rcond=1e-15), [(4, 3)], domain=SPREAD),
    Case("pinv", lambda a: fnp.linalg.pinv(a), [(2, 2, 4)], domain=SPREAD, name="pinv-wide"),
    Case("pinv", lambda a: D.pinv(a, rcond=1e-15), [(3, 3)], domain=W, name="pinv-square"),
    Case("lu", lambda a: D.lu(a)[0], [(4, 4)], domain=W),
    Case("lu", lambda a: D.lu(a)[0], [(2, 5, 3)], domain=SPREAD, name="lu-tall-stack"),
    Case("lu", lambda a: fsl.lu(a)[1:], [(3, 5)], domain=SPREAD, name="lu-wide"),
    Case("lu", D.lu, [(4, 4)], domain=W, differentiable=False, name="lu-all-results"),
    Case("lu_pivots_to_permutation",
         lambda p: D.lu_pivots_to_permutation(p, permutation_size=4), [(2, 3)],
         domain=pivots, differentiable=False),
    Case("triangular_solve", lambda a, b: P.triangular_solve(a, b, lower=True), [(3, 3), (3, 2)],
         domain=[W, real]),
    Case("triangular_solve",
         lambda a, b: P.triangular_solve(a, b, lower=False, transpose_a=True,
                                         unit_diagonal=True),
         [(2, 3, 3), (2, 3, 1)], domain=[W, real], name="triangular_solve-upper-T-unit"),
    Case("triangular_solve", lambda a, b: fsl.solve_triangular(a, b, trans=1, lower=True),
         [(3, 3), (3,)], domain=[W, real], name="triangular_solve-vector"),
    Case("triangular_solve", lambda a, b: fsl.cho_solve((a, True), b), [(3, 3), (3, 2)],
         domain=[W, real], name="triangular_solve-cho_solve"),
    Case("expm", MF.expm, [(3, 3)], domain=real),
    Case("expm", fsl.expm, [(2, 2, 2)], domain=real, name="expm-stack"),
    Case("expm", MF.expm, [(3, 3)], domain=lambda rng, s: np.zeros(s), name="expm-at-zero"),
    Case("sqrtm", lambda a: MF.sqrtm(symmetric_part(a)), [(3, 3)], domain=SPD),
    Case("sqrtm", fsl.sqrtm, [(2, 3, 3)], domain=shifted, name="sqrtm-stack-nonsymmetric"),
    Case("matrix_function_frechet", lambda a, e: MF.frechet(a, e, fn="expm"), [(3, 3), (3, 3)],
         domain=[real, real]),
    Case("matrix_function_frechet", lambda a, e: MF.frechet(a, e, fn="sqrtm"), [(2, 2), (2, 2)],
         domain=[shifted, real], name="matrix_function_frechet-sqrtm"),
]
