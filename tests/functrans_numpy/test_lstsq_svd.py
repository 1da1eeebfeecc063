"""fnp.linalg.lstsq (JAX's signature and algorithm: x, residuals, rank, s from the SVD) and
fnp.linalg.svd: values against numpy.linalg, derivatives against float64 finite differences
(full-rank systems, distinct singular values) and live JAX when installed, under jit and
vmap, and the errors."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.test_util import check_grads

RNG = np.random.default_rng(42)
SYSTEMS = {   # name -> (a, b): tall, tall with several right sides, wide, square
    "tall": (RNG.normal(size=(6, 3)), RNG.normal(size=6)),
    "tall-k": (RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))),
    "wide": (RNG.normal(size=(2, 4)), RNG.normal(size=2)),
    "square": (RNG.normal(size=(3, 3)) + 3 * np.eye(3), RNG.normal(size=(3, 2))),
}


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_equals_numpy(name):
    a, b = SYSTEMS[name]
    x, resid, rank, s = fnp.linalg.lstsq(a, b)
    nx, nresid, nrank, ns = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(x, nx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s, ns, rtol=1e-14)
    assert int(rank) == nrank
    # numpy gives residuals only for a full-rank tall system; JAX (and functrans) always
    want = nresid if nresid.size else np.sum((b - a @ nx) ** 2, axis=0)
    np.testing.assert_allclose(resid, np.atleast_1d(want), rtol=1e-10, atol=1e-24)
    assert not any(np.shares_memory(np.asarray(o), a) for o in (x, s))


def test_lstsq_numpy_resid_and_rank_deficient_minimum_norm():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])     # rank 1
    b = np.array([1.0, 0.0, 2.0])
    x, resid, rank, s = fnp.linalg.lstsq(a, b, numpy_resid=True)
    nx, nresid, nrank, ns = np.linalg.lstsq(a, b, rcond=None)
    np.testing.assert_allclose(x, nx, rtol=1e-12)
    assert int(rank) == nrank == 1 and resid.shape == nresid.shape == (0,)
    # a large rcond drops the smaller singular value: the rank-1 minimum-norm solution
    a2 = np.diag([1.0, 1e-3])
    x2, _, rank2, _ = fnp.linalg.lstsq(a2, np.ones(2), rcond=1e-2)
    assert int(rank2) == 1 and x2.tolist() == [1.0, 0.0]


def _lstsq_program(lib):
    def f(a, b):
        x, resid, _, s = lib.linalg.lstsq(a, b)
        return lib.sum(x ** 3) + lib.sum(resid) + lib.sum(s ** 2)
    return f


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_derivatives_match_finite_differences(name):
    a, b = SYSTEMS[name]
    check_grads(_lstsq_program(fnp), (a, b), order=2, modes=("fwd", "rev"))


def test_svd_values_and_derivatives():
    a = RNG.normal(size=(2, 4, 3))
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    nu, ns, nvh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(s, ns, rtol=1e-14)
    np.testing.assert_allclose(np.abs(u), np.abs(nu), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(fnp.linalg.svd(a, compute_uv=False), ns, rtol=1e-14)
    full = fnp.linalg.svd(a[0])
    assert full.U.shape == (4, 4) and full.Vh.shape == (3, 3)
    check_grads(lambda a: fnp.linalg.svd(a, compute_uv=False), (a,), order=2,
                modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        ft.grad(lambda a: fnp.sum(fnp.linalg.svd(a).U))(a[0])


def test_lstsq_under_jit_vmap_and_grad_of_jit():
    a, b = SYSTEMS["tall"]
    eager = fnp.linalg.lstsq(a, b)
    for got, want in zip(ft.jit(fnp.linalg.lstsq)(a, b), eager):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    bs = RNG.normal(size=(4, 6))
    xs = ft.vmap(lambda b: fnp.linalg.lstsq(a, b)[0])(bs)
    np.testing.assert_allclose(xs, np.linalg.lstsq(a, bs.T, rcond=None)[0].T, rtol=1e-12)
    g = ft.grad(ft.jit(_lstsq_program(fnp)))(a, b)
    np.testing.assert_allclose(g, ft.grad(_lstsq_program(fnp))(a, b), rtol=1e-12)


def test_lstsq_bad_shapes_name_the_problem():
    with pytest.raises(ValueError, match="leading dimensions"):
        fnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(TypeError, match="two-dimensional"):
        fnp.linalg.lstsq(np.ones((2, 3, 2)), np.ones(3))


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_lstsq_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    a, b = SYSTEMS[name]
    for got, want in zip(fnp.linalg.lstsq(a, b), jnp.linalg.lstsq(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    for got, want in zip(ft.grad(_lstsq_program(fnp), argnums=(0, 1))(a, b),
                         jax.grad(_lstsq_program(jnp), argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    f_ft = lambda a: fnp.sum(fnp.linalg.svd(a, full_matrices=False).U ** 2 * 3.0)
    f_jax = lambda a: jnp.sum(jnp.linalg.svd(a, full_matrices=False).U ** 2 * 3.0)
    np.testing.assert_allclose(ft.grad(f_ft)(a), jax.grad(f_jax)(a), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2), (2, 4)])
def test_qr_equals_numpy_and_differentiates(shape):
    a = RNG.normal(size=shape)
    q, r = fnp.linalg.qr(a)
    nq, nr = np.linalg.qr(a)
    np.testing.assert_array_equal(q, nq)     # the same LAPACK factorisation
    np.testing.assert_array_equal(r, nr)
    np.testing.assert_array_equal(fnp.linalg.qr(a, mode="r"), np.linalg.qr(a, mode="r"))
    full = fnp.linalg.qr(a, mode="complete")
    np.testing.assert_array_equal(full.Q, np.linalg.qr(a, mode="complete").Q)
    if shape[-2] >= shape[-1]:
        check_grads(lambda a: fnp.linalg.qr(a), (a,), order=2, modes=("fwd", "rev"))
    else:
        with pytest.raises(NotImplementedError, match="rows >= columns"):
            ft.grad(lambda a: fnp.sum(fnp.linalg.qr(a).R))(a)


def test_qr_derivatives_equal_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    a = RNG.normal(size=(5, 3))

    def program(lib):
        return lambda a: lib.sum(lib.linalg.qr(a)[0] ** 3) + lib.sum(lib.linalg.qr(a)[1] ** 3)
    np.testing.assert_allclose(ft.grad(program(fnp))(a), jax.grad(program(jnp))(a),
                               rtol=1e-12, atol=1e-14)
