"""functrans.numpy.linalg solve, inv, det, slogdet, cholesky: values, dtypes and shapes against
numpy (stacks and broadcasting too), errors as numpy raises them, derivatives against JAX."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.primitives import square_matrices

RNG = np.random.default_rng(0)


def _matrices(*shape):
    n = shape[-1]
    return RNG.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(n)


def _positive_definite(*shape):
    b = RNG.uniform(-1.0, 1.0, shape)
    return b @ np.swapaxes(b, -1, -2) / max(shape[-1], 1) + np.eye(shape[-1])


A = _matrices(3, 3)
AS = _matrices(2, 3, 3)
SPD = _positive_definite(3, 3)
SPDS = _positive_definite(2, 3, 3)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # rank 2


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((2, 3, 3), (3, 4)),
    ((3, 3), (4, 3, 2)), ((1, 3, 3), (5, 3, 2)), ((0, 2, 2), (0, 2, 1))])
def test_solve_matches_numpy(a_shape, b_shape):
    a, b = _matrices(*a_shape), RNG.standard_normal(b_shape)
    expected = np.linalg.solve(a, b)
    for f in (fnp.linalg.solve, ft.jit(fnp.linalg.solve)):
        got = f(a, b)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["inv", "det", "slogdet"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3, 3), (1, 1), (0, 2, 2)])
def test_one_operand_functions_match_numpy(name, shape):
    a = _matrices(*shape) * np.where(RNG.random(shape[:-1] + (1,)) < 0.5, -1, 1)
    expected = getattr(np.linalg, name)(a)
    for f in (getattr(fnp.linalg, name), ft.jit(getattr(fnp.linalg, name))):
        got = f(a)
        for g, e in zip(*((got, expected) if name == "slogdet" else ([got], [expected]))):
            assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    if name == "slogdet":
        assert type(got).__name__ == "SlogdetResult" and got.sign is got[0]


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_dtypes_follow_numpy(dtype):
    a = np.array([[2, 1], [1, 3]], dtype)
    b = np.array([1, 2], dtype)
    assert fnp.linalg.solve(a, b).dtype == np.linalg.solve(a, b).dtype
    for name in ("inv", "det"):
        assert getattr(fnp.linalg, name)(a).dtype == getattr(np.linalg, name)(a).dtype
    assert fnp.linalg.slogdet(a)[1].dtype == np.linalg.slogdet(a)[1].dtype


def test_singular_and_malformed_inputs_raise_as_numpy_does():
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        fnp.linalg.solve(SINGULAR, np.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        fnp.linalg.inv(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        ft.grad(lambda a: fnp.sum(fnp.linalg.inv(a)))(SINGULAR)
    with pytest.raises(np.linalg.LinAlgError, match="square.*\\(2, 3\\)"):
        fnp.linalg.det(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        fnp.linalg.inv(np.ones(3))
    with pytest.raises(ValueError, match="must be 3"):
        fnp.linalg.solve(A, np.ones(2))
    with pytest.raises(TypeError, match="float or complex"):
        ft.make_jaxpr(square_matrices.det)(np.eye(2, dtype=np.int64))   # the row: no integers


def test_complex_matrices_equal_numpy():
    z = A + 0.5j * A[::-1]
    np.testing.assert_allclose(fnp.linalg.det(z), np.linalg.det(z), rtol=1e-13)
    np.testing.assert_allclose(fnp.linalg.inv(z), np.linalg.inv(z), rtol=1e-13)
    sign, logabsdet = fnp.linalg.slogdet(z)
    want = np.linalg.slogdet(z)
    np.testing.assert_allclose(sign, want[0], rtol=1e-13)
    np.testing.assert_allclose(logabsdet, want[1], rtol=1e-13)
    assert logabsdet.dtype == np.float64


# --- derivatives against JAX ------------------------------------------------------------------

def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _programs(np_):
    la = np_.linalg
    return {
        "solve-sum-sq": (lambda a, b: np_.sum(la.solve(a, b) ** 2), (A, RNG.standard_normal(3))),
        "solve-stack": (lambda a, b: np_.sum(np_.sin(la.solve(a, b))),
                        (AS, RNG.standard_normal((2, 3, 2)))),
        "inv-trace": (lambda a, b: np_.sum(la.inv(a) * b), (A, RNG.standard_normal((3, 3)))),
        "det": (lambda a, b: np_.sum(la.det(a * b)), (AS, RNG.uniform(0.5, 1.5, (3, 3)))),
        "slogdet": (lambda a, b: np_.sum(la.slogdet(a + b)[1]),
                    (-AS, 0.1 * RNG.standard_normal((3, 3)))),
        "det-over-inv": (lambda a, b: la.det(a) * np_.sum(la.inv(a) @ b),
                         (A, RNG.standard_normal(3))),
        # a's tangents are not symmetric: both libraries take their symmetric part
        "cholesky": (lambda a, b: np_.sum(np_.sin(la.cholesky(a)) * b),
                     (SPD, RNG.standard_normal((3, 3)))),
        "cholesky-stack": (lambda a, b: np_.sum(la.cholesky(a + b @ np_.swapaxes(b, -1, -2)) ** 3),
                           (SPDS, 0.3 * RNG.standard_normal((2, 3, 2)))),
    }


@pytest.mark.parametrize("program", list(_programs(np)))
@pytest.mark.parametrize("transform", ["grad", "jacfwd", "jacrev", "hessian"])
def test_derivatives_match_jax(program, transform):
    jax, jnp = _jax()
    f_ft, args = _programs(fnp)[program]
    f_jax, _ = _programs(jnp)[program]
    for argnums in (0, 1):
        got = getattr(ft, transform)(f_ft, argnums=argnums)(*args)
        want = getattr(jax, transform)(f_jax, argnums=argnums)(*args)
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-10)


def test_det_of_a_singular_matrix_is_zero_with_the_cofactors_as_gradient():
    jax, jnp = _jax()
    for a in (SINGULAR, np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]])):
        assert fnp.linalg.det(a) == 0.0
        np.testing.assert_allclose(ft.grad(fnp.linalg.det)(a), jax.grad(jnp.linalg.det)(a),
                                   atol=1e-12)
        np.testing.assert_allclose(ft.jacfwd(fnp.linalg.det)(a), jax.grad(jnp.linalg.det)(a),
                                   atol=1e-12)


def test_vmap_of_gradients_matches_a_loop():
    b = RNG.standard_normal((2, 3))
    g = ft.vmap(ft.grad(lambda a, b: fnp.sum(fnp.linalg.solve(a, b))), in_axes=(0, 0))
    expected = np.stack([ft.grad(lambda a, b: fnp.sum(fnp.linalg.solve(a, b)))(x, y)
                         for x, y in zip(AS, b)])
    np.testing.assert_allclose(g(AS, b), expected, rtol=1e-12)
    # closed form: d/dA sum(A^-1 b) = -A^-T 1 x^T
    x = np.linalg.solve(AS, b[..., None])
    closed = -np.linalg.solve(np.swapaxes(AS, -1, -2), np.ones((2, 3, 1))) @ np.swapaxes(x, -1, -2)
    np.testing.assert_allclose(g(AS, b), closed, rtol=1e-12)


# --- cholesky ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3, 3), (1, 1), (0, 2, 2), (2, 0, 0)])
def test_cholesky_matches_numpy(shape):
    a = _positive_definite(*shape)
    expected = np.linalg.cholesky(a)
    for f in (fnp.linalg.cholesky, ft.jit(fnp.linalg.cholesky)):
        got = f(a)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # numpy reads the lower triangle only
    upper = np.triu(RNG.standard_normal(shape), 1)
    np.testing.assert_allclose(fnp.linalg.cholesky(a + upper), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_cholesky_dtypes_follow_numpy(dtype):
    a = np.array([[4, 2], [2, 3]], dtype)
    assert fnp.linalg.cholesky(a).dtype == np.linalg.cholesky(a).dtype


def test_cholesky_of_a_matrix_not_positive_definite_raises_as_numpy_does():
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    for f in (fnp.linalg.cholesky, ft.jit(fnp.linalg.cholesky), ft.grad(
            lambda a: fnp.sum(fnp.linalg.cholesky(a)))):
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            f(bad)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        fnp.linalg.cholesky(np.ones((2, 3)))


def test_cholesky_derivative_closed_forms():
    # 1x1: L = sqrt(a), dL/da = 1 / (2 sqrt(a)); 2x2 diagonal: L = diag(sqrt(a_ii))
    np.testing.assert_allclose(ft.grad(lambda a: fnp.linalg.cholesky(a)[0, 0])(np.array([[4.0]])),
                               [[0.25]])
    d = np.diag([4.0, 9.0])
    jac = ft.jacfwd(fnp.linalg.cholesky)(d)
    assert jac.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(jac[0, 0, 0, 0], 0.25)
    np.testing.assert_allclose(jac[1, 1, 1, 1], 1 / 6)
    # off-diagonal: L10 = a10 / sqrt(a00), with dA symmetrised: half from each of a10 and a01
    np.testing.assert_allclose(jac[1, 0, 1, 0], 0.25)
    np.testing.assert_allclose(jac[1, 0, 0, 1], 0.25)


def test_cholesky_takes_the_symmetric_part_of_a_tangent_as_jax_does():
    jax, jnp = _jax()
    t = RNG.standard_normal((2, 3, 3))   # not symmetric
    _, got = ft.jvp(fnp.linalg.cholesky, (SPDS,), (t,))
    _, want = jax.jvp(jnp.linalg.cholesky, (SPDS,), (t,))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-12)
    _, sym = ft.jvp(fnp.linalg.cholesky, (SPDS,), ((t + np.swapaxes(t, -1, -2)) / 2,))
    np.testing.assert_allclose(got, sym, rtol=1e-12, atol=1e-14)
    # float64 central differences along the symmetric direction
    s = (t + np.swapaxes(t, -1, -2)) / 2
    eps = 1e-6
    fd = (np.linalg.cholesky(SPDS + eps * s) - np.linalg.cholesky(SPDS - eps * s)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_vmap_of_cholesky_gradients_matches_jax():
    jax, jnp = _jax()
    w = RNG.standard_normal((3, 3))
    g = ft.vmap(ft.grad(lambda a: fnp.sum(fnp.linalg.cholesky(a) * w)))
    want = jax.vmap(jax.grad(lambda a: jnp.sum(jnp.linalg.cholesky(a) * w)))(SPDS)
    np.testing.assert_allclose(g(SPDS), np.asarray(want), rtol=1e-10, atol=1e-12)
