"""The forward Laplacian (laplacian, hessian_diag, divergence) against closed forms, finite
differences in float64 and JAX: on random MLPs for d = 1..16, under vmap, jit and grad, and on
every differentiable row of the primitive case table."""


import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError, ShapeError
from functrans.transforms.laplacian import (divergence, hessian_diag, laplacian,
                                            value_grad_and_hessian_diag,
                                            value_grad_and_laplacian)
from functrans.tree_util import tree_flatten, tree_leaves


def _jit():
    jit = getattr(ft, "jit", None)
    if jit is None:
        try:
            from functrans.transforms.jit import jit
        except ImportError:
            pytest.skip("jit is not available")
    return jit


# --- a random MLP and its Hessian by an independent closed form (plain numpy) ----------------

ACTS = {
    "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2,
             lambda z: -2 * np.tanh(z) * (1 - np.tanh(z) ** 2), fnp.tanh),
    "sin": (np.sin, np.cos, lambda z: -np.sin(z), fnp.sin),
}


def init_mlp(rng, sizes):
    return [(rng.standard_normal((a, b)) / np.sqrt(a), 0.3 * rng.standard_normal(b))
            for a, b in zip(sizes[:-1], sizes[1:])]


def mlp(params, x, act="tanh"):
    h = x
    for W, b in params[:-1]:
        h = ACTS[act][3](h @ W + b)
    W, b = params[-1]
    return (h @ W + b)[0]


def mlp_hessian_np(params, x, act="tanh"):
    """(u, grad u, Hessian of u) of the MLP at one point by the chain rule, in numpy."""
    f, f1, f2 = ACTS[act][:3]
    d = x.size
    h, J, H = x, np.eye(d), np.zeros((d, d, d))
    for W, b in params[:-1]:
        z = h @ W + b
        Jz = W.T @ J
        Hz = np.einsum("iw,ijk->wjk", W, H)
        h = f(z)
        J = f1(z)[:, None] * Jz
        H = f1(z)[:, None, None] * Hz + f2(z)[:, None, None] * Jz[:, :, None] * Jz[:, None, :]
    W, b = params[-1]
    return (h @ W + b)[0], (W.T @ J)[0], np.einsum("iw,ijk->wjk", W, H)[0]


DIMS = [1, 2, 3, 5, 8, 16]


@pytest.mark.parametrize("act", ["tanh", "sin"])
@pytest.mark.parametrize("d", DIMS)
def test_laplacian_equals_hessian_trace_on_mlps(d, act):
    rng = np.random.default_rng(d)
    params = init_mlp(rng, [d, 12, 9, 1])
    x = rng.standard_normal(d)
    u, du, H = mlp_hessian_np(params, x, act)
    f = lambda x: mlp(params, x, act)  # noqa: E731
    np.testing.assert_allclose(laplacian(f)(x), np.trace(H), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hessian_diag(f)(x), np.diag(H), rtol=1e-12, atol=1e-12)
    v, g, lap = value_grad_and_laplacian(f)(x)
    np.testing.assert_allclose(v, u, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(g, du, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lap, np.trace(H), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d", [1, 4, 16])
def test_laplacian_under_vmap_and_jit(d):
    rng = np.random.default_rng(10 + d)
    params = init_mlp(rng, [d, 16, 16, 1])
    X = rng.standard_normal((7, d))
    expected = np.array([np.trace(mlp_hessian_np(params, x)[2]) for x in X])
    diag = np.array([np.diag(mlp_hessian_np(params, x)[2]) for x in X])
    lap_v = ft.vmap(laplacian(lambda x: mlp(params, x)))
    np.testing.assert_allclose(lap_v(X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ft.vmap(hessian_diag(lambda x: mlp(params, x)))(X), diag,
                               rtol=1e-12, atol=1e-12)
    jit = _jit()
    np.testing.assert_allclose(jit(lap_v)(X), expected, rtol=1e-12, atol=1e-12)
    # and jit inside: a jitted network under the forward Laplacian
    inner = jit(lambda x: mlp(params, x))
    np.testing.assert_allclose(ft.vmap(laplacian(inner))(X), expected, rtol=1e-12,
                               atol=1e-12)


def _residual_loss_np(params, X):
    laps = np.array([np.trace(mlp_hessian_np(params, x)[2]) for x in X])
    return np.mean((laps + 1.0) ** 2)


def _residual_loss(params, X):
    r = ft.vmap(laplacian(lambda x: mlp(params, x)))(X) + 1.0
    return fnp.mean(r * r)


@pytest.mark.parametrize("d", [2, 8])
def test_grad_of_residual_loss_wrt_parameters(d):
    """Third-order mixed derivatives: d/dparams of sum (Laplacian + 1)^2, by finite
    differences of the closed form along random directions (float64), under jit too."""
    rng = np.random.default_rng(20 + d)
    params = init_mlp(rng, [d, 10, 10, 1])
    X = rng.standard_normal((5, d))
    loss, g = ft.value_and_grad(_residual_loss)(params, X)
    np.testing.assert_allclose(loss, _residual_loss_np(params, X), rtol=1e-12)
    leaves, tree = tree_flatten(params)
    for k in range(2):
        v = [rng.standard_normal(np.shape(p)) for p in leaves]
        eps = 1e-5
        plus = ft.tree_util.tree_unflatten(tree, [p + eps * t for p, t in zip(leaves, v)])
        minus = ft.tree_util.tree_unflatten(tree, [p - eps * t for p, t in zip(leaves, v)])
        fd = (_residual_loss_np(plus, X) - _residual_loss_np(minus, X)) / (2 * eps)
        ad = sum(np.vdot(a, t) for a, t in zip(tree_leaves(g), v))
        np.testing.assert_allclose(ad, fd, rtol=1e-7)
    g_jit = _jit()(ft.grad(_residual_loss))(params, X)
    for a, b in zip(tree_leaves(g_jit), tree_leaves(g)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_grad_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    d = 4
    rng = np.random.default_rng(3)
    params = init_mlp(rng, [d, 8, 8, 1])
    X = rng.standard_normal((6, d))

    def jmlp(params, x):
        h = x
        for W, b in params[:-1]:
            h = jnp.tanh(h @ W + b)
        W, b = params[-1]
        return (h @ W + b)[0]

    def jloss(params, X):
        laps = jax.vmap(lambda x: jnp.trace(jax.hessian(lambda y: jmlp(params, y))(x)))(X)
        return jnp.mean((laps + 1.0) ** 2)

    jl, jg = jax.value_and_grad(jloss)(params, X)
    fl, fg = ft.value_and_grad(_residual_loss)(params, X)
    np.testing.assert_allclose(fl, jl, rtol=1e-12)
    for a, b in zip(tree_leaves(fg), jax.tree_util.tree_leaves(jg)):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-13)


def test_program_size_does_not_grow_with_dimension():
    """One forward pass: the d directions ride along as an axis, never as d copies."""
    sizes = []
    for d in (2, 16):
        params = init_mlp(np.random.default_rng(0), [d, 8, 8, 1])
        closed = ft.make_jaxpr(laplacian(lambda x: mlp(params, x)))(np.ones(d))
        ft.check_jaxpr(closed)
        sizes.append(len(closed.eqns))
    assert sizes[0] == sizes[1], sizes


def _second_differences(f, x, h=1e-4):
    """Diagonal of the Hessian of a numpy function by central differences (float64)."""
    e = np.eye(x.size)
    return np.array([(f(x + h * e[i]) - 2 * f(x) + f(x - h * e[i])) / h**2
                     for i in range(x.size)])


def test_scaled_first_layer_block_folds_into_the_next_product():
    """After an elementwise map of an affine function of x the block is kept as scale *
    base, and the next product with an x-independent weight takes the scale last: a product
    with a (width, d, out) weight, no (d, width) broadcast multiply. Weight on the left, two
    maps in a row, each mode, against second differences and a closed form."""
    rng = np.random.default_rng(7)
    d = 3
    A, W, B = (rng.standard_normal(s) for s in [(d, 5), (4, 5), (5, d)])
    x = rng.standard_normal(d)

    def f(x, np=fnp):
        h = np.sin(np.tanh(x @ A) * 2.0)
        return np.sum(np.cos(W @ h))

    diag = _second_differences(lambda x: f(x, np), x)
    np.testing.assert_allclose(hessian_diag(f)(x), diag, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(laplacian(f)(x), diag.sum(), rtol=1e-6, atol=1e-6)
    closed = ft.make_jaxpr(laplacian(f))(x)
    products = [e for e in closed.eqns if e.primitive.name == "dot_general"]
    assert any(e.invars[1].aval.shape == (5, d, 4) for e in products), str(closed)
    assert not any(e.primitive.name == "mul" and e.outvars[0].aval.shape == (d, 5)
                   for e in closed.eqns), str(closed)

    # divergence of F(x) = tanh(x A) B: sum_j (1 - t_j^2) (A B)_jj-weighted, closed form
    t = np.tanh(x @ A)
    want = np.sum(A * ((1 - t**2)[None, :] * B.T))
    got = divergence(lambda x: fnp.tanh(x @ A) @ B)(x)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_values_independent_of_the_input_carry_nothing():
    c = np.linspace(0.1, 1.0, 3)
    plain = ft.make_jaxpr(lambda x: fnp.sum(fnp.exp(fnp.sin(c))) * x[0])(np.ones(2))
    closed = ft.make_jaxpr(laplacian(lambda x: fnp.sum(fnp.exp(fnp.sin(c))) * x[0]))(
        np.ones(2))
    # the constant subexpression is computed once, with no derivative work on it
    names = [e.primitive.name for e in closed.eqns]
    assert names.count("sin") == 1 and names.count("exp") == 1, str(closed)
    assert len(plain.eqns) < len(closed.eqns)


# --- small closed forms --------------------------------------------------------------------

def test_closed_forms():
    x = np.array([0.3, -0.7, 1.1])
    # u = prod sin(x_i): Laplacian = -3 u
    u = lambda x: fnp.sin(x[0]) * fnp.sin(x[1]) * fnp.sin(x[2])  # noqa: E731
    np.testing.assert_allclose(laplacian(u)(x), -3 * np.prod(np.sin(x)), rtol=1e-13)
    # u = |x|^2 exp(x_0): diag_i = (2 + [i=0](4 x_0 + |x|^2)) e^{x_0}
    v = lambda x: fnp.sum(x * x) * fnp.exp(x[0])  # noqa: E731
    r2 = np.sum(x * x)
    diag = 2 * np.exp(x[0]) * np.ones(3)
    diag[0] += (4 * x[0] + r2) * np.exp(x[0])
    np.testing.assert_allclose(hessian_diag(v)(x), diag, rtol=1e-13)
    # mixed: bilinear dot_general with both operands varying, div in both operands
    w = lambda x: (x @ x) / (1.0 + x[0] * x[0])  # noqa: E731
    a = 1 + x[0] ** 2
    expected = 2 * 3 / a  # d2/dxi2 of |x|^2 / a for i != 0 contributes 2/a each
    # exact Laplacian by sympy-free hand algebra for the x_0 direction:
    s = np.sum(x[1:] ** 2)
    g = lambda t: (t * t + s) / (1 + t * t)  # noqa: E731
    h = 1e-3
    d2 = (-g(x[0] + 2 * h) + 16 * g(x[0] + h) - 30 * g(x[0]) + 16 * g(x[0] - h)
          - g(x[0] - 2 * h)) / (12 * h * h)
    expected = 2 * 2 / a + d2
    np.testing.assert_allclose(laplacian(w)(x), expected, rtol=1e-8)


def test_divergence():
    x = np.array([0.5, -1.0, 2.0])
    F = lambda x: fnp.stack([x[0] * x[1], fnp.sin(x[1]), x[2] * x[2] * x[0]])  # noqa: E731
    np.testing.assert_allclose(divergence(F)(x), x[1] + np.cos(x[1]) + 2 * x[2] * x[0],
                               rtol=1e-14)
    X = np.random.default_rng(0).standard_normal((4, 3))
    np.testing.assert_allclose(
        ft.vmap(divergence(F))(X), X[:, 1] + np.cos(X[:, 1]) + 2 * X[:, 2] * X[:, 0],
        rtol=1e-13)
    # a gradient field's divergence is the Laplacian
    u = lambda x: fnp.sum(fnp.sin(x) * x[0])  # noqa: E731
    np.testing.assert_allclose(divergence(ft.grad(u))(x), laplacian(u)(x), rtol=1e-13)


def test_pytree_and_several_arguments():
    f = lambda t, x: fnp.sin(t) * fnp.exp(x[0]) * x[1]  # noqa: E731
    t, x = 0.4, np.array([0.2, 1.5])
    u, (g_t, g_x), (d_t, d_x) = value_grad_and_hessian_diag(f, argnums=(0, 1))(t, x)
    e = np.exp(x[0])
    np.testing.assert_allclose(g_t, np.cos(t) * e * x[1], rtol=1e-14)
    np.testing.assert_allclose(g_x, [np.sin(t) * e * x[1], np.sin(t) * e], rtol=1e-14)
    np.testing.assert_allclose(d_t, -np.sin(t) * e * x[1], rtol=1e-14)
    np.testing.assert_allclose(d_x, [np.sin(t) * e * x[1], 0.0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(laplacian(f, argnums=(0, 1))(t, x), d_t + d_x.sum(),
                               rtol=1e-14)
    # a vector output: one Laplacian per entry
    out = laplacian(lambda x: fnp.stack([x[0] * x[0] * x[1], fnp.sin(x[1])]))(x)
    np.testing.assert_allclose(out, [2 * x[1], -np.sin(x[1])], rtol=1e-14)


@pytest.mark.parametrize("indices", [[1], [0, 1, 2], [4, 0, 3], [2, 3]])
def test_selected_directions(indices):
    """Second derivatives along some inputs only (e.g. u_xx beside u_t): the same numbers as
    the closed form, under vmap and grad."""
    d = 5
    rng = np.random.default_rng(5)
    params = init_mlp(rng, [d, 10, 10, 1])
    X = rng.standard_normal((4, d))
    f = lambda x: mlp(params, x)  # noqa: E731
    H = [mlp_hessian_np(params, x) for x in X]
    u, g, dg = ft.vmap(value_grad_and_hessian_diag(f, indices=indices))(X)
    np.testing.assert_allclose(dg, [np.diag(h)[indices] for _, _, h in H], rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(g, [du for _, du, _ in H], rtol=1e-12, atol=1e-12)
    lap = ft.vmap(laplacian(f, indices=indices))(X)
    np.testing.assert_allclose(lap, [np.diag(h)[indices].sum() for _, _, h in H],
                               rtol=1e-12, atol=1e-12)

    def loss(params):
        r = ft.vmap(laplacian(lambda x: mlp(params, x), indices=indices))(X)
        return fnp.sum(r * r)

    def loss_np(params):
        return sum(np.diag(mlp_hessian_np(params, x)[2])[indices].sum() ** 2 for x in X)

    grads = ft.grad(loss)(params)
    leaves, tree = tree_flatten(params)
    v = [rng.standard_normal(np.shape(p)) for p in leaves]
    eps = 1e-5
    shift = lambda s: ft.tree_util.tree_unflatten(  # noqa: E731
        tree, [p + s * t for p, t in zip(leaves, v)])
    fd = (loss_np(shift(eps)) - loss_np(shift(-eps))) / (2 * eps)
    np.testing.assert_allclose(sum(np.vdot(a, t) for a, t in zip(tree_leaves(grads), v)), fd,
                               rtol=1e-7)


def test_through_custom_rules_and_control_flow():
    """Primitives holding sub-programs take the generic rule (jvp of jvp of their JVP rules);
    the user's custom_jvp rule is what gets differentiated."""
    try:
        from functrans.transforms.control_flow import cond, fori_loop, scan
        from functrans.transforms.custom import custom_jvp
    except ImportError:
        pytest.skip("custom rules / control flow are not available")

    @custom_jvp
    def softplus(x):
        return fnp.log(1 + fnp.exp(x))

    @softplus.defjvp
    def _softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1 + fnp.exp(-x))

    W = np.array([[0.5, -0.3], [0.2, 0.8]])

    def f(x):
        h = fori_loop(0, 3, lambda i, h: fnp.tanh(h @ W), x)
        h = cond(h[0] > 0, lambda h: h * h, lambda h: fnp.sin(h), h)
        c, ys = scan(lambda c, w: (fnp.tanh(c * w), c), h, np.array([1.0, 0.5, 2.0]))
        return fnp.sum(softplus(c) * x[0]) + fnp.sum(ys)

    def f_np(x):
        h = x
        for _ in range(3):
            h = np.tanh(h @ W)
        h = h * h if h[0] > 0 else np.sin(h)
        ys = []
        for w in (1.0, 0.5, 2.0):
            ys.append(h)
            h = np.tanh(h * w)
        return np.sum(np.log1p(np.exp(h)) * x[0]) + np.sum(ys)

    for x in (np.array([0.3, -0.2]), np.array([-0.6, 0.4])):
        fd = _d2_fd(lambda z: f_np(x + z), 2, 1e-3)
        np.testing.assert_allclose(hessian_diag(f)(x), fd, rtol=1e-7, atol=1e-8)
        np.testing.assert_allclose(laplacian(f)(x), fd.sum(), rtol=1e-7, atol=1e-8)


def test_errors_name_the_problem():
    with pytest.raises(DTypeError, match="float"):
        laplacian(lambda x: x * x)(np.array([1, 2]))
    with pytest.raises(ShapeError, match="R\\^n -> R\\^n"):
        divergence(lambda x: x[:2])(np.ones(3))
    with pytest.raises(ValueError, match="indices"):
        laplacian(lambda x: fnp.sum(x * x), indices=[0, 3])(np.ones(3))


# --- every differentiable row of the primitive case table ----------------------------------

def _cases():
    try:
        from primitives.cases import all_cases
    except ImportError:
        return []
    return [c for c in all_cases() if c.differentiable and c.order >= 2]


CASES = _cases()


def _d2_fd(f, m, h=1e-2):
    """Second derivatives along each of m unit directions, 4th-order central differences."""
    out = []
    for k in range(m):
        e = np.zeros(m)
        e[k] = h
        out.append((-f(2 * e) + 16 * f(e) - 30 * f(0 * e) + 16 * f(-e) - f(-2 * e))
                   / (12 * h * h))
    return np.array(out)


def _sample_smooth(case, m, f_np_for):
    """Arguments where differences at two step sizes agree (no kink of max/abs/... within
    reach of the stencil); re-sample a few times if needed."""
    for seed in range(7, 17):
        rng = np.random.default_rng(seed)
        args = case.sample(rng)
        dirs = [0.1 * rng.standard_normal((m, *np.shape(a)))
                if np.issubdtype(np.asarray(a).dtype, np.floating) else None for a in args]
        cs = [rng.standard_normal(np.shape(o)) for o in tree_leaves(case.fn(*args))]
        f_np = f_np_for(args, dirs, cs)
        fd, fd_half = _d2_fd(f_np, m, 1e-2), _d2_fd(f_np, m, 5e-3)
        if np.allclose(fd, fd_half, rtol=1e-6, atol=1e-6):
            return args, dirs, cs, fd
    pytest.skip(f"{case}: no smooth sample point found")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_primitive_case_against_finite_differences(case):
    """f(z) = <c, fn(a + U z)>: its Hessian diagonal and Laplacian in z match differences."""
    m = 3

    def f_np_for(args, dirs, cs):
        def f_np(z):
            moved = [a if u is None else a + np.tensordot(z, u, axes=1)
                     for a, u in zip(args, dirs)]
            return float(sum(np.real(np.sum(np.asarray(o) * c)) for o, c in
                             zip(tree_leaves(case.fn(*moved)), cs)))
        return f_np

    args, dirs, cs, fd = _sample_smooth(case, m, f_np_for)

    def f(z):
        moved = [a if u is None else a + fnp.reshape(z @ np.reshape(u, (m, -1)), np.shape(a))
                 for a, u in zip(args, dirs)]
        # the real part: a complex output's Laplacian is checked through Re <c, f>
        return sum(fnp.real(fnp.sum(o * c)) for o, c in zip(tree_leaves(case.fn(*moved)), cs))

    z0 = np.zeros(m)
    tol = dict(rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hessian_diag(f)(z0), fd, **tol)
    np.testing.assert_allclose(laplacian(f)(z0), fd.sum(), **tol)
