"""jacfwd, jacrev, hessian: closed forms, agreement of the two modes, symmetry, pytrees in and
out, argnums int or tuple, has_aux, as in JAX."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

rng = np.random.default_rng(1)
X = rng.standard_normal(3)
W = rng.standard_normal((2, 3))


def f_vec(x):
    return fnp.tanh(W @ x) * fnp.sum(x * x)


def f_scalar(x):
    return fnp.sum(fnp.sin(x) * fnp.exp(x / 3.0)) * fnp.sum(x * x)


def jac_f_vec(x):  # closed form
    u = np.tanh(W @ x)
    return ((1 - u ** 2)[:, None] * W) * np.sum(x * x) + np.outer(u, 2 * x)


def test_jacobians_equal_the_closed_form_and_each_other():
    np.testing.assert_allclose(ft.jacfwd(f_vec)(X), jac_f_vec(X), rtol=1e-14)
    np.testing.assert_allclose(ft.jacrev(f_vec)(X), jac_f_vec(X), rtol=1e-14)


def test_hessian_closed_form_and_symmetry():
    # f = sum(x^3) + prod-free cross term x0*x1*x2
    f = lambda x: fnp.sum(x * x * x) + x[0] * x[1] * x[2]
    h = ft.hessian(f)(X)
    ref = np.diag(6 * X) + np.array([[0, X[2], X[1]], [X[2], 0, X[0]], [X[1], X[0], 0]])
    np.testing.assert_allclose(h, ref, rtol=1e-14)
    h = ft.hessian(f_scalar)(X)
    np.testing.assert_allclose(h, h.T, rtol=1e-13)
    for a, b in [(ft.jacfwd, ft.jacfwd), (ft.jacrev, ft.jacrev), (ft.jacrev, ft.jacfwd)]:
        np.testing.assert_allclose(a(b(f_scalar))(X), h, rtol=1e-13)


def test_jacobian_shapes_follow_output_then_input():
    m = rng.standard_normal((2, 3))
    assert ft.jacfwd(lambda a: a * 2.0)(m).shape == (2, 3, 2, 3)
    assert ft.jacrev(lambda a: fnp.sum(a, axis=0))(m).shape == (3, 2, 3)
    assert ft.jacrev(lambda a: fnp.sum(a))(m).shape == (2, 3)
    assert ft.jacfwd(lambda s: s * X)(2.0).shape == (3,)
    np.testing.assert_allclose(ft.jacrev(lambda s: s * X)(2.0), X)


def test_pytree_inputs_and_outputs():
    def f(p):
        return {"y": p["a"] * p["b"], "z": (fnp.sum(p["a"]),)}

    p = {"a": X, "b": 2.0}
    for jac in (ft.jacfwd, ft.jacrev):
        j = jac(f)(p)
        np.testing.assert_allclose(j["y"]["a"], 2.0 * np.eye(3))
        np.testing.assert_allclose(j["y"]["b"], X)
        np.testing.assert_allclose(j["z"][0]["a"], np.ones(3))
        np.testing.assert_allclose(j["z"][0]["b"], 0.0)


def test_argnums_int_and_tuple():
    f = lambda a, b: a * b * b
    for jac in (ft.jacfwd, ft.jacrev):
        np.testing.assert_allclose(jac(f, argnums=1)(X, 3.0), 6.0 * X)
        ja, jb = jac(f, argnums=(0, 1))(X, 3.0)
        np.testing.assert_allclose(ja, 9.0 * np.eye(3))
        np.testing.assert_allclose(jb, 6.0 * X)
        single = jac(f, argnums=(1,))(X, 3.0)
        assert isinstance(single, tuple) and len(single) == 1
    (haa, hab), (hba, hbb) = ft.hessian(lambda a, b: fnp.sum(a * a) * b,
                                        argnums=(0, 1))(X, 3.0)
    np.testing.assert_allclose(haa, 6.0 * np.eye(3))
    np.testing.assert_allclose(hab, 2 * X)
    np.testing.assert_allclose(hba, 2 * X)
    np.testing.assert_allclose(hbb, 0.0)


def test_has_aux():
    f = lambda x: (x * 2.0, {"norm": fnp.sum(x * x)})
    for jac in (ft.jacfwd, ft.jacrev):
        j, aux = jac(f, has_aux=True)(X)
        np.testing.assert_allclose(j, 2.0 * np.eye(3))
        assert isinstance(aux["norm"], np.ndarray | np.generic)
        np.testing.assert_allclose(aux["norm"], np.sum(X * X))
    h, aux = ft.hessian(lambda x: (fnp.sum(x * x * x), x), has_aux=True)(X)
    np.testing.assert_allclose(h, np.diag(6 * X))
    np.testing.assert_allclose(aux, X)


def test_integer_inputs_are_refused_by_jacobians():
    for jac in (ft.jacfwd, ft.jacrev, ft.hessian):
        with pytest.raises(TypeError, match="argument 0 .*int64"):
            jac(lambda x: x * 1.0)(np.arange(3))


def test_hessian_of_a_pytree_argument_is_a_pytree_of_pytrees():
    p = {"a": np.array([0.3, 0.7]), "b": 1.5}
    h = ft.hessian(lambda p: fnp.sum(fnp.sin(p["a"]) * p["b"] ** 2)
                   + p["b"] * fnp.sum(p["a"] ** 2))(p)
    a, b = p["a"], p["b"]
    np.testing.assert_allclose(h["a"]["a"], np.diag(-np.sin(a) * b * b + 2 * b), rtol=1e-14)
    np.testing.assert_allclose(h["a"]["b"], 2 * b * np.cos(a) + 2 * a, rtol=1e-14)
    np.testing.assert_allclose(h["b"]["a"], h["a"]["b"], rtol=1e-14)
    np.testing.assert_allclose(h["b"]["b"], 2 * np.sum(np.sin(a)), rtol=1e-14)


def test_jacrev_of_an_integer_output_is_refused_as_in_jax():
    with pytest.raises(TypeError, match=r"output leaf 1 .* int64.*has_aux"):
        ft.jacrev(lambda x: (x * 2.0, fnp.sum(x > 0)))(X)


def test_keyword_arguments_pass_through_undifferentiated_like_jax():
    # jacfwd/jacrev/hessian once refused keyword arguments with Python's bare TypeError
    x = np.array([0.5, -1.0, 2.0])

    def f(x, scale=1.0):
        return fnp.sin(x) * scale

    np.testing.assert_allclose(ft.jacfwd(f)(x, scale=3.0), np.diag(3.0 * np.cos(x)))
    np.testing.assert_allclose(ft.jacrev(f)(x, scale=3.0), np.diag(3.0 * np.cos(x)))
    np.testing.assert_allclose(ft.hessian(lambda x, scale: fnp.sum(f(x, scale)))(x, scale=3.0),
                               np.diag(-3.0 * np.sin(x)))
