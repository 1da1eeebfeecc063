"""Cases for complex values through the linear-algebra rows (dot_general, solve,
triangular_solve, inv, det, slogdet, cholesky, qr, svd, eigh, eig, pinv, lu, expm, sqrtm,
matrix_function_frechet), the error functions on complex input and the Bessel rows
(functrans/primitives/bessel.py). Rows whose factors carry a phase (svd's and eigh's vectors)
are checked through what the phases cancel in; eig's vectors keep LAPACK's normalisation,
smooth where the largest entry of each vector is unique. Real inputs with complex
intermediates return real parts, as the table's real-input checks take real results. The
complex error functions and the Bessel rows take scipy's values: their cases need scipy.
The file's name sorts after cases_decompositions.py and cases_square_matrices.py: the property
tests draw a row's operands from its first case's domain, which stays the real one."""

import importlib.util

import numpy as np

import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.primitives import bessel as B
from functrans.primitives import decompositions as D
from functrans.primitives import elementwise as E
from functrans.primitives import matrix_functions as MF
from functrans.primitives import special as S
from functrans.primitives import square_matrices as P
from primitives.cases import Case, positive, real
from primitives.cases_complex import plane


def _complex(rng, shape):
    return rng.uniform(-1.0, 1.0, shape) + 1j * rng.uniform(-1.0, 1.0, shape)


def well_conditioned(rng, shape):
    """Complex matrices with 3 added on the diagonal (eigenvalues near 3, away from 0 and the
    negative real axis)."""
    return _complex(rng, shape) + 3.0 * np.eye(shape[-1])


def hermitian_pd(rng, shape):
    b = _complex(rng, shape)
    return b @ np.conj(np.swapaxes(b, -1, -2)) / shape[-1] + np.eye(shape[-1])


def spread_hermitian(rng, shape):
    """U diag(w) U^H with well separated eigenvalues, U unitary."""
    *batch, n, _ = shape
    u = np.linalg.qr(_complex(rng, (*batch, n, n)))[0]
    w = (np.arange(1.0, n + 1) - n / 2) * rng.uniform(0.9, 1.1, (*batch, n))
    return (u * w[..., None, :]) @ np.conj(np.swapaxes(u, -1, -2))


def spread_complex(rng, shape):
    """U diag(s) V^H with singular values 1, 2, 3, ... (each moved by up to 10%)."""
    *batch, m, n = shape
    k = min(m, n)
    u = np.linalg.qr(_complex(rng, (*batch, m, m)))[0][..., :k]
    v = np.linalg.qr(_complex(rng, (*batch, n, n)))[0][..., :k]
    s = np.arange(1.0, k + 1) * rng.uniform(0.9, 1.1, (*batch, k))
    return (u * s[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))


def _h(x):
    return E.conj(P.matrix_transpose(x))


def _hermitian_part(a):
    return (a + _h(a)) / 2


def phase_free_svd(a):
    s, u, vh = D.svd(a)
    return s, P.stacked_matmul(u, vh), E.abs(u), E.abs(vh)


def phase_free_eigh(a):
    w, v = D.eigh(_hermitian_part(a))
    return w, E.abs(v), P.stacked_matmul(v * w[..., None, :].astype(v.dtype), _h(v))


def real_eig_parts(a):
    w, v = D.eig(a)
    return E.real(w), E.imag(w), E.real(v), E.imag(v)


W = well_conditioned
C = _complex

CASES = [
    Case("dot_general", lambda a, b: fnp.matmul(a, b), [(2, 3), (3, 4)], domain=[C, C],
         name="dot_general-complex"),
    Case("dot_general", lambda a, b: fnp.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)],
         domain=[C, C], name="dot_general-complex-batch"),
    Case("solve", P.solve, [(3, 3), (3, 2)], domain=[W, C], name="solve-complex"),
    Case("triangular_solve", lambda a, b: P.triangular_solve(a, b, lower=True, transpose_a=True),
         [(3, 3), (3, 2)], domain=[W, C], name="triangular_solve-complex"),
    Case("inv", P.inv, [(2, 3, 3)], domain=W, name="inv-complex"),
    Case("det", P.det, [(3, 3)], domain=C, name="det-complex"),
    Case("cofactor", P.cofactor, [(3, 3)], domain=C, name="cofactor-complex"),
    Case("slogdet", P.slogdet, [(3, 3)], domain=W, name="slogdet-complex"),
    Case("cholesky", lambda a: P.cholesky(_hermitian_part(a)), [(3, 3)], domain=hermitian_pd,
         name="cholesky-complex"),
    Case("qr", D.qr, [(4, 3)], domain=C, name="qr-complex"),
    Case("svd", lambda a: D.svd(a, compute_uv=False), [(4, 3)], domain=spread_complex,
         name="svd-complex-values"),
    Case("svd", phase_free_svd, [(3, 4)], domain=spread_complex, name="svd-complex"),
    Case("eigh", phase_free_eigh, [(3, 3)], domain=spread_hermitian, name="eigh-complex"),
    Case("eig", D.eig, [(3, 3)], domain=C, name="eig-complex"),
    Case("eig", lambda a: D.eig(a, compute_v=False), [(2, 3, 3)], domain=C,
         name="eig-complex-values"),
    Case("eig", real_eig_parts, [(3, 3)], domain=real, name="eig-real"),
    Case("pinv", lambda a: D.pinv(a, rcond=1e-15), [(4, 3)], domain=spread_complex,
         name="pinv-complex"),
    Case("lu", lambda a: D.lu(a)[0], [(3, 3)], domain=W, name="lu-complex"),
    Case("expm", MF.expm, [(3, 3)], domain=C, name="expm-complex"),
    Case("sqrtm", MF.sqrtm, [(3, 3)], domain=W, name="sqrtm-complex"),
    Case("matrix_function_frechet", lambda a, e: MF.frechet(a, e, fn="expm"), [(3, 3), (3, 3)],
         domain=[C, C], name="matrix_function_frechet-complex"),
    Case("triangular_solve", lambda a, b: fsl.cho_solve(fsl.cho_factor(_hermitian_part(a)), b),
         [(3, 3), (3,)], domain=[hermitian_pd, C], name="cho_solve-complex"),
]

if importlib.util.find_spec("scipy") is not None:   # scipy's values, nothing to fall back on
    CASES += [
        Case("erf", E.erf, [(4,)], domain=plane, name="erf-complex"),
        Case("erfc", S.erfc, [(4,)], domain=plane, name="erfc-complex"),
        Case("j0", B.j0, [(5,)], domain=positive),
        Case("j1", B.j1, [(5,)], domain=positive),
        Case("y0", B.y0, [(5,)], domain=positive),
        Case("y1", B.y1, [(5,)], domain=positive),
        Case("jv", lambda x: B.jv(np.asarray([0.0, 1.5, 3.0], x.dtype), x), [(3,)],
             domain=positive, fixed_shapes=True),
        Case("jv", lambda x: B.jv(np.asarray(1.5, x.dtype), x), [(4,)], domain=positive,
             name="jv-scalar-order"),
        Case("yv", lambda x: B.yv(np.asarray(2.5, x.dtype), x), [(4,)], domain=positive),
        Case("iv", lambda x: B.iv(np.asarray(1.0, x.dtype), x), [(4,)], domain=real),
        Case("ive", lambda x: B.ive(np.asarray([[0.0], [2.0]], x.dtype), x), [(2, 3)],
             domain=real, fixed_shapes=True),
        Case("ive", lambda x: B.ive(np.asarray(2.0, x.dtype), x), [(4,)], domain=real,
             name="ive-scalar-order"),
        Case("kv", lambda x: B.kv(np.asarray(0.5, x.dtype), x), [(4,)], domain=positive),
    ]
