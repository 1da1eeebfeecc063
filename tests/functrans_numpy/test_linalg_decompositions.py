"""fnp.linalg's eigh/eigvalsh, eig/eigvals, pinv, svdvals, matrix_rank, cond, matrix_power,
multi_dot, tensorsolve, tensorinv and the nuclear/spectral norms: values against numpy on more
shapes than linalg_programs.py (stacks, empty, edge orders), derivatives where a closed form
holds at degenerate spectra, jit and vmap, and the errors. JAX's derivatives and central
differences: test_linalg_jax.py."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

RNG = np.random.default_rng(11)


def _sym(shape):
    a = RNG.normal(size=shape)
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_equals_numpy(uplo):
    a = RNG.normal(size=(2, 4, 4))          # not symmetric: only one triangle is read
    w, v = fnp.linalg.eigh(a, UPLO=uplo)
    want_w, want_v = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fnp.linalg.eigvalsh(a, uplo), np.linalg.eigvalsh(a, uplo),
                               rtol=1e-12, atol=1e-13)
    assert fnp.linalg.eigh(a).eigenvalues.shape == (2, 4)


def test_eig_and_eigvals_equal_numpy():
    a = RNG.normal(size=(3, 4, 4))
    w, v = fnp.linalg.eig(a)
    want_w, want_v = np.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128          # always complex, as JAX's
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(v, want_v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fnp.linalg.eigvals(a), np.linalg.eigvals(a), rtol=1e-12)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-12)
    # real spectra: numpy returns float64, functrans complex with zero imaginary parts
    s = _sym((3, 3))
    assert np.linalg.eigvals(s).dtype == np.float64
    np.testing.assert_allclose(fnp.linalg.eigvals(s), np.linalg.eigvals(s), rtol=1e-12)
    assert fnp.linalg.eigvals(np.eye(2, dtype=np.float32)).dtype == np.complex64


def test_eig_under_jit_and_vmap():
    a = RNG.normal(size=(3, 3, 3))
    np.testing.assert_allclose(ft.jit(fnp.linalg.eigvals)(a), np.linalg.eigvals(a), rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(fnp.linalg.eigvals)(a), np.linalg.eigvals(a),
                               rtol=1e-12)


def test_eig_eigenvalue_derivative_is_finite_at_repeated_eigenvalues():
    # d w = diag(V^-1 dA V): at A = I, the diagonal of dA; only the eigenvectors' is inf/nan
    da = np.array([[0.3, 1.0], [2.0, -0.5]])
    _, dw = ft.jvp(fnp.linalg.eigvals, (np.eye(2),), (da,))
    np.testing.assert_allclose(dw, [0.3, -0.5])
    with np.errstate(invalid="ignore", divide="ignore"):
        _, (_, dv) = ft.jvp(fnp.linalg.eig, (np.eye(2),), (da,))
    assert not np.all(np.isfinite(dv))


def test_eigvalsh_gradient_is_finite_at_repeated_eigenvalues():
    # sum(w^2) = tr(A^2) = ||A||_F^2 for symmetric A: gradient 2A, at any spectrum
    for a in (np.eye(3), np.diag([1.0, 1.0, 2.0]), _sym((3, 3))):
        g = ft.grad(lambda a: fnp.sum(fnp.linalg.eigvalsh(a) ** 2))(a)
        np.testing.assert_allclose(g, 2 * a, rtol=1e-12, atol=1e-12)
    # the second derivative goes through the eigenvectors' (defined where eigenvalues are
    # simple): the trace is linear
    h = ft.jacfwd(ft.grad(lambda a: fnp.sum(fnp.linalg.eigvalsh(a))))(a)
    np.testing.assert_allclose(h, 0.0, atol=1e-12)


def test_eigh_eigenvector_derivative_is_nan_at_repeated_eigenvalues_as_in_jax():
    with np.errstate(invalid="ignore", over="ignore"):
        _, dv = ft.jvp(lambda a: fnp.linalg.eigh(a).eigenvectors, (np.eye(2),),
                       (np.array([[0.0, 1.0], [1.0, 0.0]]),))
    assert not np.all(np.isfinite(dv))


def test_eigh_rejects_bad_uplo():
    with pytest.raises(ValueError, match="UPLO must be 'L' or 'U'"):
        fnp.linalg.eigh(np.eye(2), UPLO="X")
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        fnp.linalg.eigvalsh(np.ones((2, 3)))


def test_pinv_equals_numpy_with_its_cutoffs():
    a = RNG.normal(size=(2, 5, 3))
    np.testing.assert_allclose(fnp.linalg.pinv(a), np.linalg.pinv(a), rtol=1e-12, atol=1e-14)
    low_rank = np.outer([1.0, 2.0, 3.0], [1.0, -1.0]) + 1e-9 * RNG.normal(size=(3, 2))
    for kwargs in ({}, {"rcond": 1e-6}, {"rtol": None}, {"rtol": 1e-6}):
        np.testing.assert_allclose(fnp.linalg.pinv(low_rank, **kwargs),
                                   np.linalg.pinv(low_rank, **kwargs), rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="can't be both set"):
        fnp.linalg.pinv(a, rcond=1e-3, rtol=1e-3)
    with pytest.raises(TypeError, match="scalar"):
        fnp.linalg.pinv(a, rcond=np.ones(2))
    assert fnp.linalg.pinv(np.zeros((0, 3))).shape == (3, 0)


def test_matrix_rank_equals_numpy():
    full, low = RNG.normal(size=(2, 4, 3)), np.outer([1.0, 2.0], [3.0, 4.0, 5.0])
    for a, kwargs in ((full, {}), (low, {}), (low, {"tol": 1e-3}), (low, {"rtol": 0.5}),
                      (np.ones(3), {}), (np.zeros(3), {}), (np.eye(3), {"hermitian": True})):
        got = fnp.linalg.matrix_rank(a, **kwargs)
        np.testing.assert_array_equal(got, np.linalg.matrix_rank(a, **kwargs))
    np.testing.assert_array_equal(ft.jit(fnp.linalg.matrix_rank)(full), [3, 3])
    with pytest.raises(ValueError, match="can't be both set"):
        fnp.linalg.matrix_rank(low, tol=1.0, rtol=1.0)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, "fro", "nuc", np.inf, -np.inf])
def test_cond_equals_numpy(p):
    a = RNG.normal(size=(2, 3, 3))
    np.testing.assert_allclose(fnp.linalg.cond(a, p), np.linalg.cond(a, p), rtol=1e-11)


def test_cond_of_a_singular_matrix_is_inf():
    assert float(fnp.linalg.cond(np.zeros((2, 2)))) == np.inf == np.linalg.cond(np.zeros((2, 2)))
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        fnp.linalg.cond(np.zeros((0, 0)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, -1, -3])
def test_matrix_power_equals_numpy(n):
    a = RNG.normal(size=(2, 3, 3)) + 2 * np.eye(3)
    got = fnp.linalg.matrix_power(a, n)
    np.testing.assert_allclose(got, np.linalg.matrix_power(a, n), rtol=1e-12, atol=1e-13)
    assert not np.shares_memory(np.asarray(got), a)


def test_matrix_power_errors():
    with pytest.raises(TypeError, match="integer"):
        fnp.linalg.matrix_power(np.eye(2), 1.5)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        fnp.linalg.matrix_power(np.ones((2, 3)), 2)


@pytest.mark.parametrize("shapes", [[(3, 4), (4, 5)], [(4,), (4, 2), (2, 6), (6,)],
                                    [(2, 10), (10, 3), (3, 30), (30, 1)], [(5,), (5, 2)],
                                    [(3, 3), (3, 2), (2,)]])
def test_multi_dot_equals_numpy(shapes):
    arrays = [RNG.normal(size=s) for s in shapes]
    np.testing.assert_allclose(fnp.linalg.multi_dot(arrays), np.linalg.multi_dot(arrays),
                               rtol=1e-12)


def test_multi_dot_errors():
    with pytest.raises(ValueError, match="at least two"):
        fnp.linalg.multi_dot([np.eye(2)])
    with pytest.raises(np.linalg.LinAlgError, match="must be 2-d"):
        fnp.linalg.multi_dot([np.eye(2), np.ones((2, 2, 2)), np.eye(2)])


def test_tensorsolve_and_tensorinv_equal_numpy():
    a = RNG.normal(size=(6, 2, 3)) + np.eye(6).reshape(6, 2, 3)
    b = RNG.normal(size=6)
    np.testing.assert_allclose(fnp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b),
                               rtol=1e-11)
    a2 = np.moveaxis(a, 0, 2)                 # (2, 3, 6): axes (0, 1) go to the right
    np.testing.assert_allclose(fnp.linalg.tensorsolve(a2, b, axes=(0, 1)),
                               np.linalg.tensorsolve(a2, b, axes=(0, 1)), rtol=1e-11)
    t = RNG.normal(size=(4, 6, 8, 3))
    np.testing.assert_allclose(fnp.linalg.tensorinv(t), np.linalg.tensorinv(t), rtol=1e-10)
    np.testing.assert_allclose(fnp.linalg.tensorinv(t.reshape(24, 8, 3), ind=1),
                               np.linalg.tensorinv(t.reshape(24, 8, 3), ind=1), rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError, match="prod"):
        fnp.linalg.tensorsolve(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match="positive"):
        fnp.linalg.tensorinv(t, ind=0)
    with pytest.raises(np.linalg.LinAlgError, match="not square"):
        fnp.linalg.tensorinv(np.ones((2, 3)), ind=1)


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
@pytest.mark.parametrize("axis", [None, (0, 1), (2, 0), (-1, -2)])
def test_spectral_norms_equal_numpy(ord, axis):
    x = RNG.normal(size=(3, 4) if axis is None else (3, 4, 2))
    for keepdims in (False, True):
        np.testing.assert_allclose(fnp.linalg.norm(x, ord, axis, keepdims),
                                   np.linalg.norm(x, ord, axis, keepdims), rtol=1e-12)
    assert fnp.linalg.matrix_norm(x[..., :2] if x.ndim == 3 else x, ord=ord).shape == \
        np.linalg.matrix_norm(x[..., :2] if x.ndim == 3 else x, ord=ord).shape


def test_spectral_norm_gradients_in_closed_form():
    x = RNG.normal(size=(4, 3))
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.linalg.norm(x, "nuc"))(x), u @ vt,
                               rtol=1e-12)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.linalg.norm(x, 2))(x),
                               np.outer(u[:, 0], vt[0]), rtol=1e-12)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.linalg.norm(x, -2))(x),
                               np.outer(u[:, -1], vt[-1]), rtol=1e-12)


def test_norm_rejects_matrix_orders_for_vectors():
    with pytest.raises(ValueError, match="invalid norm order 'nuc' for vectors"):
        fnp.linalg.norm(np.ones(3), "nuc")
    with pytest.raises(ValueError, match="invalid norm order 3 for matrices"):
        fnp.linalg.norm(np.ones((2, 2)), 3)


def test_svdvals_equals_numpy():
    a = RNG.normal(size=(2, 3, 5))
    np.testing.assert_allclose(fnp.linalg.svdvals(a), np.linalg.svdvals(a), rtol=1e-13)


def test_vmap_of_grad_over_a_stack():
    a = np.stack([_sym((3, 3)) + 8 * np.eye(3) for _ in range(4)])

    def f(a):
        return fnp.linalg.eigvalsh(a)[0] + fnp.linalg.norm(a, "nuc") + fnp.sum(
            fnp.linalg.pinv(a)) + fnp.linalg.cond(a)

    loop = np.stack([ft.grad(f)(x) for x in a])
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(a), loop, rtol=1e-11)
    np.testing.assert_allclose(ft.jit(ft.vmap(ft.grad(f)))(a), loop, rtol=1e-11)
