"""functrans.scipy.linalg: values against scipy.linalg (when installed) on stacks and edge
shapes, with and without scipy underneath (the numpy fallbacks); derivatives where a closed
form exists (expm at repeated eigenvalues, sqrtm's Sylvester equation) and against central
differences; jit and vmap; the errors. JAX's derivatives: test_linalg_jax.py."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.errors import DTypeError, LinAlgError, ShapeError
from functrans.primitives import decompositions, matrix_functions, square_matrices
from functrans.test_util import check_grads

RNG = np.random.default_rng(5)


def _spd(shape):
    b = RNG.normal(size=shape)
    return b @ np.swapaxes(b, -1, -2) / shape[-1] + np.eye(shape[-1])


def _shifted(shape):
    return RNG.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(shape[-1])


@pytest.fixture(params=["scipy", "numpy"])
def backend(request, monkeypatch):
    """Run with scipy's LAPACK routines underneath, then with the numpy fallbacks that run
    where scipy is not installed."""
    if request.param == "numpy":
        for module in (square_matrices, decompositions, matrix_functions):
            monkeypatch.setattr(module, "scipy_linalg", lambda *arrays: None)
    return request.param


@pytest.fixture
def sl():
    return pytest.importorskip("scipy.linalg")


# --- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_equals_scipy(sl, backend, trans, lower, unit):
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
    for b in (RNG.normal(size=4), RNG.normal(size=(4, 3))):
        got = fsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
        want = sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_solve_triangular_stack_broadcasts(sl):
    a = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=(3, 2))
    got = fsl.solve_triangular(a, b, lower=True)
    for i in range(2):
        np.testing.assert_allclose(got[i], sl.solve_triangular(a[i], b, lower=True),
                                   rtol=1e-13)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_cho_factor_cho_solve_equal_scipy(sl, lower):
    a = _spd((4, 4))
    b = RNG.normal(size=(4, 2))
    np.testing.assert_allclose(fsl.cholesky(a, lower=lower), sl.cholesky(a, lower=lower),
                               rtol=1e-13, atol=1e-15)
    c, low = fsl.cho_factor(a, lower=lower)
    want_c, want_low = sl.cho_factor(a, lower=lower)
    tri = np.tril if lower else np.triu
    assert low == want_low
    np.testing.assert_allclose(tri(c), tri(want_c), rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(c - tri(c), 0.0)    # JAX's zeros in the unused triangle
    np.testing.assert_allclose(fsl.cho_solve((c, low), b), sl.cho_solve((want_c, want_low), b),
                               rtol=1e-12)
    # cho_solve reads only the factor's triangle, as scipy's
    np.testing.assert_allclose(fsl.cho_solve((want_c, want_low), b[:, 0]),
                               sl.cho_solve((want_c, want_low), b[:, 0]), rtol=1e-12)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (1, 1), (2, 3, 3)])
def test_lu_equals_scipy(sl, backend, shape):
    a = RNG.normal(size=shape)
    for kwargs in ({}, {"permute_l": True}, {"p_indices": True}):
        got = fsl.lu(a, **kwargs)
        want = sl.lu(a, **kwargs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            # scipy's p_indices are int32, but int64 for a 1x1 matrix: the kind is the API
            assert np.asarray(g).dtype.kind == w.dtype.kind
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    if len(shape) == 2:
        lu, piv = fsl.lu_factor(a)
        want_lu, want_piv = sl.lu_factor(a)
        np.testing.assert_allclose(lu, want_lu, rtol=1e-12, atol=1e-14)
        assert piv.dtype == want_piv.dtype and piv.tolist() == want_piv.tolist()


def test_lu_of_a_permutation_that_is_no_involution(sl):
    # rows cycle 0 -> 1 -> 2 -> 0: the permutation and its inverse differ
    a = np.array([[0.1, 0.0, 1.0], [1.0, 0.2, 0.0], [0.0, 1.0, 0.3]])
    for kwargs in ({}, {"p_indices": True}):
        for g, w in zip(fsl.lu(a, **kwargs), sl.lu(a, **kwargs)):
            np.testing.assert_allclose(g, w, rtol=1e-14)


@pytest.mark.parametrize("trans", [0, 1])
def test_lu_solve_equals_scipy(sl, backend, trans):
    a = RNG.normal(size=(4, 4))
    factors = fsl.lu_factor(a)
    for b in (RNG.normal(size=4), RNG.normal(size=(4, 2))):
        np.testing.assert_allclose(fsl.lu_solve(factors, b, trans=trans),
                                   sl.lu_solve(sl.lu_factor(a), b, trans=trans), rtol=1e-11)


@pytest.mark.parametrize("scale", [0.0, 0.1, 1.0, 20.0])
def test_expm_equals_scipy(sl, backend, scale):
    a = scale * RNG.normal(size=(2, 3, 3))
    want = sl.expm(a)
    np.testing.assert_allclose(fsl.expm(a), want, rtol=1e-12 if scale < 20 else 1e-10,
                               atol=1e-14 * np.max(np.abs(want)))


@pytest.mark.parametrize("kind", ["spd", "shifted"])
def test_sqrtm_equals_scipy(sl, backend, kind):
    a = _spd((3, 3)) if kind == "spd" else _shifted((2, 3, 3))
    root = fsl.sqrtm(a)
    np.testing.assert_allclose(root, sl.sqrtm(a), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(root @ root, a, rtol=1e-12, atol=1e-13)


def test_block_diag_equals_scipy(sl):
    cases = [(np.ones((2, 3)), 5, [1.0, 2.0], np.zeros((0, 2)), np.ones((1, 1), int)),
             (np.arange(4).reshape(2, 2),), (np.float32(2.0), np.ones((2, 2), np.float32)), ()]
    for arrs in cases:
        got, want = fsl.block_diag(*arrs), sl.block_diag(*arrs)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_solve_sylvester_equals_scipy_and_differentiates(sl):
    a, b, q = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 2)), RNG.normal(size=(3, 2))
    x = fsl.solve_sylvester(a, b, q)
    np.testing.assert_allclose(x, sl.solve_sylvester(a, b, q), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a @ x + x @ b, q, atol=1e-12)
    check_grads(fsl.solve_sylvester, (a, b, q), order=2, modes=("fwd", "rev"))
    with pytest.raises(ShapeError, match="q must be 3 x 2"):
        fsl.solve_sylvester(a, b, q.T)


def test_results_never_alias_inputs():
    a = np.eye(3)
    for out in (fsl.block_diag(a), fsl.expm(np.zeros((3, 3))), fsl.sqrtm(a),
                fsl.solve_triangular(a, a), fsl.cholesky(a)):
        assert not np.shares_memory(np.asarray(out), a)


# --- derivatives ----------------------------------------------------------------------------------

def test_expm_derivative_at_repeated_eigenvalues_is_exact():
    # L_exp(c I, E) = e^c E: the Frechet form is exact where an eigendecomposition is not
    for c in (0.0, 2.0):
        jac = ft.jacfwd(fsl.expm)(c * np.eye(3))
        np.testing.assert_allclose(jac.reshape(9, 9), np.exp(c) * np.eye(9), rtol=1e-13,
                                   atol=1e-15)
        jac_rev = ft.jacrev(fsl.expm)(c * np.eye(3))
        np.testing.assert_allclose(jac_rev.reshape(9, 9), np.exp(c) * np.eye(9), rtol=1e-13,
                                   atol=1e-15)
    # a Jordan block: exp(A) = e^2 [[1, 1], [0, 1]], d exp(A)[E] from the 4x4 block form
    a = np.array([[2.0, 1.0], [0.0, 2.0]])
    check_grads(fsl.expm, (a,), order=2, modes=("fwd", "rev"))


def test_expm_derivative_satisfies_its_series():
    # L(A, E) = sum_k 1/(k+1)! sum_j A^j E A^(k-j), summed to convergence
    a, e = 0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    want, term_sum, fact = np.zeros((3, 3)), None, 1.0
    powers = [np.eye(3)]
    for k in range(30):
        fact *= k + 1
        term_sum = sum(powers[j] @ e @ powers[k - j] for j in range(k + 1))
        want += term_sum / fact
        powers.append(powers[-1] @ a)
    _, got = ft.jvp(fsl.expm, (a,), (e,))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_sqrtm_derivative_solves_the_sylvester_equation(sl):
    # X dX + dX X = dA, X = sqrtm(A): autograd's rule; JAX's sqrtm has none
    a, e = _shifted((3, 3)), RNG.normal(size=(3, 3))
    x, dx = ft.jvp(fsl.sqrtm, (a,), (e,))
    np.testing.assert_allclose(x @ dx + dx @ x, e, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(dx, sl.solve_sylvester(x, x, e), rtol=1e-10, atol=1e-12)
    # at the identity (every eigenvalue repeated) dX = dA / 2
    np.testing.assert_allclose(ft.jvp(fsl.sqrtm, (np.eye(3),), (e,))[1], e / 2, rtol=1e-13)
    check_grads(fsl.sqrtm, (a,), order=2, modes=("fwd", "rev"))


_NO_REAL_ROOT = [np.array([[1.0, 2.0, 0.5], [2.0, -3.0, 1.0], [0.5, 1.0, 0.2]]),  # symmetric
                 RNG.normal(size=(3, 3)) - 2.0 * np.eye(3),
                 np.array([[-2.0, 0.0], [0.0, 3.0]])]


@pytest.mark.parametrize("i", range(len(_NO_REAL_ROOT)))
def test_sqrtm_of_a_real_matrix_with_no_real_root_is_complex_as_scipys(backend, i):
    # scipy.linalg.sqrtm returns the complex principal root (+i sqrt|z| for a negative real
    # eigenvalue z); so does functrans, eagerly and under grad/jvp, with or without scipy
    a = _NO_REAL_ROOT[i]
    root = fsl.sqrtm(a)
    assert root.dtype == np.complex128
    np.testing.assert_allclose(root @ root, a, rtol=1e-12, atol=1e-13)
    assert np.all(np.linalg.eigvals(root).real >= -1e-12)   # the principal root
    if i == 2:
        np.testing.assert_allclose(root, np.diag([np.sqrt(2.0) * 1j, np.sqrt(3.0)]), atol=1e-15)
    sl = pytest.importorskip("scipy.linalg")
    np.testing.assert_allclose(root, sl.sqrtm(a), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("i", range(len(_NO_REAL_ROOT)))
def test_complex_root_of_a_real_matrix_differentiates(backend, i):
    # dX solves X dX + dX X = dA; central differences of the root itself (one branch on both
    # sides: real perturbations keep the negative eigenvalues on the real axis) to order 3
    a = _NO_REAL_ROOT[i]
    e = np.random.default_rng(i).normal(size=a.shape)
    x, dx = ft.jvp(fsl.sqrtm, (a,), (e,))
    np.testing.assert_allclose(x @ dx + dx @ x, e, rtol=1e-10, atol=1e-11)
    h = 1e-6
    fd = (fsl.sqrtm(a + h * e) - fsl.sqrtm(a - h * e)) / (2 * h)
    np.testing.assert_allclose(dx, fd, rtol=1e-6, atol=1e-7)
    # reverse mode on the real and imaginary parts (jacrev needs a real output, as JAX's)
    for part in (fnp.real, fnp.imag):
        g = ft.grad(lambda a: fnp.sum(part(fsl.sqrtm(a)) * e))(a)
        np.testing.assert_allclose(np.sum(g * e), np.sum(part(dx) * e), rtol=1e-10)
    check_grads(fsl.sqrtm, (a,), order=2 if backend == "numpy" else 3, modes=("fwd", "rev"))


def test_lu_solve_and_cho_solve_derivatives():
    a, b = RNG.normal(size=(3, 3)) + 3 * np.eye(3), RNG.normal(size=(3, 2))
    check_grads(lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1), (a, b), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda a, b: fsl.cho_solve(fsl.cho_factor(a @ a.T + np.eye(3)), b), (a, b),
                order=2, modes=("fwd", "rev"))
    # lu_solve of lu_factor is solve: the derivatives agree with solve's
    g1 = ft.grad(lambda a: fnp.sum(fsl.lu_solve(fsl.lu_factor(a), b) ** 2))(a)
    g2 = ft.grad(lambda a: fnp.sum(fnp.linalg.solve(a, b) ** 2))(a)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)


def test_under_jit_and_vmap():
    a = RNG.normal(size=(4, 3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=(4, 3))

    def f(a, b):
        x = fsl.lu_solve(fsl.lu_factor(a), b)
        y = fsl.solve_triangular(a, b, lower=True)
        return x + y + fsl.expm(a / 4) @ b + fsl.block_diag(a[0, :1], a[1, :2])[0, :3]

    loop = np.stack([f(a[i], b[i]) for i in range(4)])
    np.testing.assert_allclose(ft.vmap(f)(a, b), loop, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.vmap(f))(a, b), loop, rtol=1e-12)
    g = ft.jit(ft.grad(lambda a: fnp.sum(fsl.sqrtm(a))))(a[0])
    np.testing.assert_allclose(g, ft.grad(lambda a: fnp.sum(fsl.sqrtm(a)))(a[0]), rtol=1e-12)


# --- errors ---------------------------------------------------------------------------------------

def test_errors_name_the_problem_and_the_fix():
    a = np.eye(3)
    with pytest.raises(ValueError, match="trans must be"):
        fsl.solve_triangular(a, np.ones(3), trans=3)
    with pytest.raises(ShapeError, match="square matrix"):
        fsl.solve_triangular(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ShapeError, match="b's length must be 3"):
        fsl.solve_triangular(a, np.ones(2))
    with pytest.raises(DTypeError, match="float or complex"):
        ft.make_jaxpr(matrix_functions.expm)(np.eye(2, dtype=np.int64))   # the row: no integers
    with pytest.raises(TypeError, match=r"pair \(c, lower\)"):
        fsl.cho_solve(a, np.ones(3))
    with pytest.raises(TypeError, match=r"pair \(lu, piv\)"):
        fsl.lu_solve(a, np.ones(3))
    with pytest.raises(DTypeError, match="piv must hold integers"):
        fsl.lu_solve((a, np.zeros(3)), np.ones(3))
    with pytest.raises(ValueError, match="2 or fewer"):
        fsl.block_diag(np.ones((1, 1, 1)))
    # under jit the result's dtype is fixed while tracing: a real matrix keeps a real root
    with pytest.raises(LinAlgError, match="no real principal square root"):
        ft.jit(fsl.sqrtm)(-np.eye(2))
    with pytest.raises(np.linalg.LinAlgError):      # numpy's class catches it too
        ft.jit(fsl.sqrtm)(np.diag([1.0, -4.0]))


def test_integer_input_becomes_float64():
    assert fsl.expm(np.zeros((2, 2), int)).dtype == np.float64
    assert fsl.solve_triangular(np.eye(2, dtype=int), np.ones(2, int)).dtype == np.float64
    assert fsl.expm(np.zeros((2, 2), np.float32)).dtype == np.float32


def test_complex_expm_and_sqrtm_equal_scipy():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    z = np.array([[1.0 + 0.5j, 0.3], [-0.2j, 2.0 - 0.1j]])
    np.testing.assert_allclose(fsl.expm(z), scipy_linalg.expm(z), rtol=1e-13)
    np.testing.assert_allclose(fsl.sqrtm(z), scipy_linalg.sqrtm(z), rtol=1e-13)
    # the complex root of a real matrix with negative eigenvalues, asked for as complex
    root = fsl.sqrtm(-np.eye(2) + 0j)
    np.testing.assert_allclose(root, 1j * np.eye(2), atol=1e-14)
