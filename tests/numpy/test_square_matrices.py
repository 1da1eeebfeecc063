"""functrans.numpy.linalg solve, inv, det, slogdet: values, dtypes and shapes against numpy
(stacks and broadcasting too), errors as numpy raises them, derivatives against JAX."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

RNG = np.random.default_rng(0)


def _matrices(*shape):
    n = shape[-1]
    return RNG.uniform(-1.0, 1.0, shape) + 3.0 * np.eye(n)


A = _matrices(3, 3)
AS = _matrices(2, 3, 3)
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
    with pytest.raises(TypeError, match="complex"):
        fnp.linalg.det(A + 0j)


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
