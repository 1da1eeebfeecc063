"""Nesting transforms any number of times in any order: closed-form higher derivatives, and
every pairing of the derivative transforms agreeing with the others."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def nth(f, n, d=ft.grad):
    for _ in range(n):
        f = d(f)
    return f


XS = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])


def _tanh4(x):
    t = np.tanh(x)
    return 8 * t * (1 - t * t) * (2 - 3 * t * t)


FOURTH = [
    ("sin", fnp.sin, np.sin),
    ("tanh", fnp.tanh, _tanh4),
    ("exp", fnp.exp, np.exp),
    ("poly", lambda x: 3 * x * x * x * x * x - 2 * x * x * x + x, lambda x: 360 * x),
]


@pytest.mark.parametrize("name,f,d4", FOURTH, ids=[c[0] for c in FOURTH])
def test_fourth_derivatives_equal_closed_forms(name, f, d4):
    g4 = nth(f, 4)
    for x in XS:
        np.testing.assert_allclose(g4(float(x)), d4(x), rtol=1e-12, atol=1e-12)
    # the same through forward mode, mixed modes and vmap over points
    np.testing.assert_allclose(ft.vmap(nth(f, 4))(XS), d4(XS), rtol=1e-12, atol=1e-12)
    mixed = lambda h: ft.grad(lambda x: ft.jvp(h, (x,), (1.0,))[1])
    np.testing.assert_allclose(ft.vmap(mixed(mixed(f)))(XS), d4(XS), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(nth(f, 4, ft.jacfwd)(0.3), d4(0.3), rtol=1e-12)


def test_grad_grad_of_a_cube():
    assert float(ft.grad(ft.grad(lambda a: a * a * a))(3.0)) == 18.0
    assert float(ft.grad(ft.grad(ft.grad(lambda a: a * a * a)))(3.0)) == 6.0
    assert float(nth(lambda a: a * a * a, 4)(3.0)) == 0.0


def test_eighth_derivative_of_sin():
    np.testing.assert_allclose(nth(fnp.sin, 8)(0.7), np.sin(0.7), rtol=1e-12)


rng = np.random.default_rng(3)
W = rng.standard_normal((3, 3))
X = rng.standard_normal(3)
V = rng.standard_normal(3)


def loss(x):
    return fnp.sum(fnp.tanh(W @ x) * fnp.sin(x)) + fnp.sum(x * x * x) / 3.0


def hess_fd(x, eps=1e-5):
    g = ft.grad(loss)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def test_jacobian_of_jacobian_orders_agree_and_hessian_is_symmetric():
    ref = hess_fd(X)
    hs = {
        "jacfwd(jacrev)": ft.jacfwd(ft.jacrev(loss))(X),
        "jacrev(jacfwd)": ft.jacrev(ft.jacfwd(loss))(X),
        "jacrev(jacrev)": ft.jacrev(ft.jacrev(loss))(X),
        "jacfwd(jacfwd)": ft.jacfwd(ft.jacfwd(loss))(X),
        "jacfwd(grad)": ft.jacfwd(ft.grad(loss))(X),
        "hessian": ft.hessian(loss)(X),
    }
    for name, h in hs.items():
        np.testing.assert_allclose(h, ref, rtol=1e-7, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(h, hs["hessian"], rtol=1e-13, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(h, h.T, rtol=1e-13, atol=1e-14, err_msg=name)


def test_jacfwd_equals_jacrev_on_a_vector_function():
    f = lambda x: fnp.tanh(W @ x) * fnp.exp(x / 4.0)
    np.testing.assert_allclose(ft.jacfwd(f)(X), ft.jacrev(f)(X), rtol=1e-14)


def test_jvp_of_grad_is_the_hessian_vector_product():
    _, hvp = ft.jvp(ft.grad(loss), (X,), (V,))
    np.testing.assert_allclose(hvp, ft.hessian(loss)(X) @ V, rtol=1e-13)
    # and the other three ways of writing it
    hvp_rev = ft.grad(lambda x: fnp.sum(ft.grad(loss)(x) * V))(X)
    hvp_fwd_rev = ft.grad(lambda x: ft.jvp(loss, (x,), (V,))[1])(X)
    _, f_vjp = ft.vjp(ft.grad(loss), X)
    for other in (hvp_rev, hvp_fwd_rev, f_vjp(V)[0]):
        np.testing.assert_allclose(other, hvp, rtol=1e-13)


def test_grad_of_vjp_and_vjp_of_jvp():
    # d/dx <v, J(x) u> for f = sin: J = diag(cos x), so the gradient is -sin(x) * u * v
    def vjp_inner(x):
        _, f_vjp = ft.vjp(fnp.sin, x)
        return fnp.sum(f_vjp(V)[0] * X)

    np.testing.assert_allclose(ft.grad(vjp_inner)(X), -np.sin(X) * V * X, rtol=1e-14)
    _, f_vjp = ft.vjp(lambda x: ft.jvp(fnp.sin, (x,), (V,))[1], X)
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], -np.sin(X) * V, rtol=1e-14)


def test_third_order_mixed_nesting():
    f = lambda x: fnp.sum(fnp.sin(x) * x)
    # third derivative tensor of sum(sin(x) x) is diagonal: d3/dx3 (x sin x) = -3 sin x - x cos x
    t = ft.jacfwd(ft.jacrev(ft.grad(f)))(X)
    ref = np.zeros((3, 3, 3))
    ref[np.arange(3), np.arange(3), np.arange(3)] = -3 * np.sin(X) - X * np.cos(X)
    np.testing.assert_allclose(t, ref, rtol=1e-13, atol=1e-14)
    t2 = ft.jacrev(ft.jacfwd(ft.jacrev(f)))(X)
    np.testing.assert_allclose(t2, ref, rtol=1e-13, atol=1e-14)


def test_nested_grad_with_closures_over_outer_tracers():
    # perturbation confusion check (Siskind & Pearlmutter): d/dx [x * d/dy (x + y)] = 1
    f = lambda x: x * ft.grad(lambda y: x + y)(1.0)
    assert float(ft.grad(f)(3.0)) == 1.0
    # d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x
    g = lambda x: x * ft.grad(lambda y: x * y)(1.0)
    assert float(ft.grad(g)(3.0)) == 6.0
    assert float(ft.jvp(g, (3.0,), (1.0,))[1]) == 6.0
