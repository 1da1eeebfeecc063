"""Collapsed Taylor mode and the operators on it (weighted Laplacian, biharmonic, multi-index
operators, stochastic estimators) against nested jvp, closed forms and float64 finite
differences; on every differentiable row of the primitive case table; under vmap, jit, grad."""


import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ShapeError
from functrans.tree_util import tree_leaves


def directional(f, x, v, k):
    """d^k/dt^k f(x + t v) at t = 0 by k nested jvps (the reference)."""
    g = lambda t: f(x + t * v)     # noqa: E731
    for _ in range(k):
        g = (lambda h: lambda t: ft.jvp(h, (t,), (1.0,))[1])(g)
    return g(0.0)


def reference(f, x, dirs, order, weights):
    return sum(w * directional(f, x, v, order) for v, w in zip(dirs, weights))


def mlp_params(rng, d, width=6, depth=2):
    sizes = [d] + [width] * depth + [1]
    return [(rng.standard_normal((a, b)) / np.sqrt(a), 0.1 * rng.standard_normal(b))
            for a, b in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    h = x
    for w, b in params[:-1]:
        h = fnp.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[0]


# --- the collapsed sum against nested jvp ----------------------------------------------------

@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_collapsed_sum_matches_nested_jvp_on_an_mlp(order):
    rng = np.random.default_rng(order)
    params = mlp_params(rng, 3)
    f = lambda x: mlp(params, x)      # noqa: E731
    x = rng.uniform(-1, 1, 3)
    dirs, w = rng.standard_normal((4, 3)), rng.standard_normal(4)
    got = ft.collapsed_taylor(f, dirs, order, weights=w)(x)
    np.testing.assert_allclose(got, reference(f, x, dirs, order, w), rtol=1e-10, atol=1e-12)


def _cases():
    try:
        from primitives.cases import all_cases
    except ImportError:
        return []
    return [c for c in all_cases() if c.differentiable]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_primitive_case_collapsed_order_3(case):
    """g(z) = <c, fn(a + U z)> in z (3 entries): sum_r w_r D^3 g[v_r] against nested jvp."""
    rng = np.random.default_rng(21)
    args = case.sample(rng)
    m = 3
    us = [0.1 * rng.standard_normal((m, *np.shape(a)))
          if np.issubdtype(np.asarray(a).dtype, np.inexact) else None for a in args]
    cs = [rng.standard_normal(np.shape(o)) for o in tree_leaves(case.fn(*args))]

    def g(z):
        moved = [a if u is None else a + fnp.reshape(z @ np.reshape(u, (m, -1)), np.shape(a))
                 for a, u in zip(args, us)]
        outs = tree_leaves(case.fn(*moved))
        # a real scalar: complex outputs enter by their real part
        return sum(fnp.sum(fnp.real(o * c)) for o, c in zip(outs, cs)
                   if np.issubdtype(o.dtype, np.inexact))

    z0 = np.zeros(m)
    dirs, w = rng.standard_normal((2, m)), np.array([0.7, -1.3])
    try:
        want = reference(g, z0, dirs, 3, w)
    except Exception as e:        # no derivative (a full svd): the collapsed pass says so too
        with pytest.raises(type(e)):
            ft.collapsed_taylor(g, dirs, 3, weights=w)(z0)
        return
    got = ft.collapsed_taylor(g, dirs, 3, weights=w)(z0)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10 * max(1.0, abs(float(want))))


# --- named operators: closed forms -----------------------------------------------------------

def test_weighted_laplacian_is_trace_of_d_times_hessian():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    d = a @ a.T - 2.0 * np.eye(4)                      # symmetric, indefinite
    params = mlp_params(rng, 4)
    f = lambda x: mlp(params, x)                       # noqa: E731
    x = rng.uniform(-1, 1, 4)
    want = np.sum(d * ft.hessian(f)(x))
    np.testing.assert_allclose(ft.weighted_laplacian(f, d)(x), want, rtol=1e-10)
    # a quadratic form: tr(D A)
    q = rng.standard_normal((4, 4))
    np.testing.assert_allclose(ft.weighted_laplacian(lambda x: x @ q @ x, d)(x),
                               np.sum(d * (q + q.T)), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_biharmonic_closed_form(n):
    # Delta |x|^4 = (4n + 8)|x|^2, so Delta^2 |x|^4 = 8 n (n + 2)
    x = np.linspace(-0.5, 0.7, n)
    got = ft.biharmonic(lambda x: fnp.sum(x * x) ** 2)(x)
    np.testing.assert_allclose(got, 8.0 * n * (n + 2), rtol=1e-12)


@pytest.mark.parametrize("n", [2, 5])
def test_biharmonic_is_laplacian_of_laplacian(n):
    rng = np.random.default_rng(n)
    params = mlp_params(rng, n)
    f = lambda x: mlp(params, x)                      # noqa: E731
    lap = lambda g: lambda x: fnp.trace(ft.hessian(g)(x))    # noqa: E731
    x = rng.uniform(-1, 1, n)
    np.testing.assert_allclose(ft.biharmonic(f)(x), lap(lap(f))(x), rtol=1e-10, atol=1e-12)


def _u(z):                     # u(t, x) = sin(x) t^3 + exp(t x)
    t, x = z[0], z[1]
    return fnp.sin(x) * t ** 3 + fnp.exp(t * x)


def test_differential_operator_mixed_orders_in_one_call():
    z = np.array([0.4, 0.9])
    t, x = z
    u_t = 3 * np.sin(x) * t ** 2 + x * np.exp(t * x)
    u_xx = -np.sin(x) * t ** 3 + t * t * np.exp(t * x)
    u_xxx = -np.cos(x) * t ** 3 + t ** 3 * np.exp(t * x)
    u_xt = 3 * np.cos(x) * t ** 2 + (1 + t * x) * np.exp(t * x)
    u = np.sin(x) * t ** 3 + np.exp(t * x)
    terms = {(1, 0): 1.0, (0, 2): -0.4, (0, 3): 2.0, (1, 1): 0.5, (0, 0): 3.0}
    got = ft.differential_operator(_u, terms)(z)
    np.testing.assert_allclose(got, u_t - 0.4 * u_xx + 2 * u_xxx + 0.5 * u_xt + 3 * u,
                               rtol=1e-12)
    # pairs, a single term, and a mixed third derivative in three variables
    np.testing.assert_allclose(ft.differential_operator(_u, [((0, 3), 1.0)])(z), u_xxx,
                               rtol=1e-12)
    w = lambda y: fnp.sin(y[0]) * fnp.exp(y[1]) * y[2] ** 2          # noqa: E731
    y = np.array([0.3, -0.2, 1.5])
    np.testing.assert_allclose(ft.differential_operator(w, {(1, 1, 1): 1.0})(y),
                               np.cos(0.3) * np.exp(-0.2) * 2 * 1.5, rtol=1e-12)


def test_differential_operator_fourth_order_matches_biharmonic():
    rng = np.random.default_rng(8)
    params = mlp_params(rng, 3)
    f = lambda x: mlp(params, x)                      # noqa: E731
    x = rng.uniform(-1, 1, 3)
    terms = {}
    for i in range(3):
        terms[tuple(4 if k == i else 0 for k in range(3))] = 1.0
        for j in range(i + 1, 3):
            terms[tuple(2 if k in (i, j) else 0 for k in range(3))] = 2.0
    np.testing.assert_allclose(ft.differential_operator(f, terms)(x), ft.biharmonic(f)(x),
                               rtol=1e-9)


def test_operators_against_finite_differences():
    # u_xxx of a closed function by a 5-point stencil (float64, step 1e-2)
    z = np.array([0.4, 0.9])
    h = 1e-2
    e = np.array([0.0, h])
    fd = (_u(z + 2 * e) - 2 * _u(z + e) + 2 * _u(z - e) - _u(z - 2 * e)) / (2 * h ** 3)
    got = ft.differential_operator(_u, {(0, 3): 1.0})(z)
    np.testing.assert_allclose(got, fd, rtol=1e-4)


# --- stochastic estimators -------------------------------------------------------------------

def test_laplacian_estimate_is_exact_on_quadratics_and_unbiased():
    key = ft.random.key(1)
    q = np.diag([1.0, 2.0, 3.0])
    est = ft.laplacian_estimate(lambda x: x @ q @ x, key, 5)(np.ones(3))
    np.testing.assert_allclose(est, 12.0, rtol=1e-12)      # Rademacher: v_i^2 = 1
    rng = np.random.default_rng(0)
    params = mlp_params(rng, 3)
    f = lambda x: mlp(params, x)                          # noqa: E731
    x = rng.uniform(-1, 1, 3)
    exact = np.trace(ft.hessian(f)(x))
    many = ft.laplacian_estimate(f, key, 20000, distribution="gaussian")(x)
    assert abs(many - exact) < 0.05 * max(1.0, abs(exact))
    d = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.5]])
    est_d = ft.laplacian_estimate(f, key, 20000, diffusion=d)(x)
    exact_d = np.sum(d * ft.hessian(f)(x))
    assert abs(est_d - exact_d) < 0.05 * max(1.0, abs(exact_d))


def test_biharmonic_estimate_is_unbiased():
    est = ft.biharmonic_estimate(lambda x: fnp.sum(x * x) ** 2, ft.random.key(2), 20000)
    assert abs(float(est(np.full(3, 0.5))) - 120.0) < 6.0      # 8 n (n + 2)


def test_estimates_take_a_traced_key_under_jit():
    f = lambda x: fnp.sum(fnp.sin(x))                    # noqa: E731
    run = ft.jit(lambda key, x: ft.laplacian_estimate(f, key, 64)(x))
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(run(ft.random.key(3), x), -np.sum(np.sin(x)), rtol=1e-12)


# --- composition: vmap over points, jit, grad with respect to parameters ---------------------

def test_vmap_jit_and_grad_of_a_loss_on_the_biharmonic():
    rng = np.random.default_rng(5)
    params = mlp_params(rng, 2, width=5)
    X = rng.uniform(-1, 1, (7, 2))

    def loss(p, op):
        r = ft.vmap(op(lambda x: mlp(p, x)))(X)
        return fnp.mean(r * r)

    lap = lambda g: lambda x: fnp.trace(ft.hessian(g)(x))    # noqa: E731
    nested = lambda g: lap(lap(g))                           # noqa: E731
    np.testing.assert_allclose(ft.jit(loss, static_argnums=1)(params, ft.biharmonic),
                               loss(params, nested), rtol=1e-10)
    g_got = ft.jit(ft.grad(loss), static_argnums=1)(params, ft.biharmonic)
    g_want = ft.grad(loss)(params, nested)
    for a, b in zip(tree_leaves(g_got), tree_leaves(g_want)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # a third-order collapsed sum under grad, against nested jvp
    dirs = np.array([[1.0, 0.0], [0.6, 0.8]])

    def loss3(p, op):
        return fnp.sum(ft.vmap(op(lambda x: mlp(p, x)))(X))

    ct = lambda g: ft.collapsed_taylor(g, dirs, 3)              # noqa: E731
    ref = lambda g: lambda x: reference(g, x, dirs, 3, [1.0, 1.0])    # noqa: E731
    for a, b in zip(tree_leaves(ft.grad(loss3)(params, ct)),
                    tree_leaves(ft.grad(loss3)(params, ref))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_results_own_their_memory():
    x = np.ones(2)
    out = ft.collapsed_taylor(lambda x: x, np.eye(2), 2)(x)
    np.testing.assert_array_equal(out, [0.0, 0.0])
    assert not np.shares_memory(out, x)


# --- errors ---------------------------------------------------------------------------------

def test_errors_name_the_fix():
    f = lambda x: fnp.sum(x ** 3)                        # noqa: E731
    with pytest.raises(ShapeError, match=r"\(R, 3\) array"):
        ft.collapsed_taylor(f, np.eye(2), 2)(np.ones(3))
    with pytest.raises(ShapeError, match=r"\(R, 3\) array"):
        ft.collapsed_taylor(f, np.ones(3), 2)(np.ones(3))
    with pytest.raises(ValueError, match="positive int"):
        ft.collapsed_taylor(f, np.eye(3), 0)
    with pytest.raises(ShapeError, match="one weight"):
        ft.collapsed_taylor(f, np.eye(3), 2, weights=[1.0, 2.0])(np.ones(3))
    with pytest.raises(ShapeError, match="symmetric"):
        ft.weighted_laplacian(f, np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ShapeError, match=r"\(3, 3\) matrix"):
        ft.weighted_laplacian(f, np.eye(2))(np.ones(3))
    with pytest.raises(ShapeError, match="non-negative orders"):
        ft.differential_operator(f, {(1, 0): 1.0})(np.ones(3))
    with pytest.raises(ValueError, match="positive order"):
        ft.differential_operator(f, {(0, 0, 0): 1.0})(np.ones(3))
    with pytest.raises(ValueError, match="positive semi-definite"):
        ft.laplacian_estimate(f, ft.random.key(0), 4, diffusion=-np.eye(3))
    with pytest.raises(ValueError, match="rademacher"):
        ft.laplacian_estimate(f, ft.random.key(0), 4, distribution="cauchy")(np.ones(3))
