"""custom_jvp, custom_vjp and stop_gradient: values against closed forms (and JAX where it is
installed), under jvp, grad, vmap, jit and nested, and the errors for misuse."""

import functools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr
from functrans.primitives.ad_control import stop_gradient
from functrans.scipy.special import expit
from functrans.test_util import check_grads
from functrans.transforms.custom import (CustomVJPClosureError, CustomVJPForwardModeError,
                                         custom_jvp, custom_vjp)
from functrans.transforms.jit.api import jit

XS = np.array([-3.0, 0.0, 0.7, 1000.0])


def sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))  # stable at +-1000


# --- custom_jvp: a stable log(1 + exp(x)) ---------------------------------------------------

@custom_jvp
def log1pexp(x):
    return fnp.log(1.0 + fnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return log1pexp(x), x_dot * expit(x)


def naive_log1pexp(x):
    return fnp.log(1.0 + fnp.exp(x))


def test_log1pexp_gradient_is_finite_where_the_naive_one_is_nan():
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(ft.grad(naive_log1pexp)(1000.0))
        assert float(ft.grad(log1pexp)(1000.0)) == 1.0
        np.testing.assert_allclose(ft.grad(log1pexp)(0.7), sigmoid(0.7), rtol=1e-15)
        assert float(ft.jvp(log1pexp, (1000.0,), (2.0,))[1]) == 2.0


def test_log1pexp_under_nested_grad_vmap_and_jit():
    # the rule is itself differentiated for higher orders: d2/dx2 = s(x) (1 - s(x))
    d1, d2 = sigmoid(XS), sigmoid(XS) * (1 - sigmoid(XS))
    with np.errstate(over="ignore"):
        g, gg = ft.grad(log1pexp), ft.grad(ft.grad(log1pexp))
        np.testing.assert_allclose(ft.vmap(g)(XS), d1, rtol=1e-15)
        np.testing.assert_allclose(ft.vmap(gg)(XS), d2, rtol=1e-12, atol=1e-300)
        assert np.all(np.isfinite(ft.vmap(gg)(XS)))
        np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(ft.vmap(log1pexp)(x)))(XS), d1,
                                   rtol=1e-15)
        np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(ft.grad(log1pexp))))(XS[:3]),
                                   d2[:3] * (1 - 2 * sigmoid(XS[:3])), rtol=1e-12)
        np.testing.assert_allclose(jit(ft.vmap(gg))(XS), d2, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(ft.vmap(ft.grad(jit(log1pexp)))(XS), d1, rtol=1e-15)
        np.testing.assert_allclose(ft.hessian(lambda x: fnp.sum(log1pexp(x)))(XS[:3]),
                                   np.diag(d2[:3]), rtol=1e-12)
        np.testing.assert_allclose(ft.jacfwd(ft.jacrev(log1pexp))(0.7), d2[2], rtol=1e-12)


def test_custom_jvp_is_one_staged_call():
    closed = ft.make_jaxpr(log1pexp)(1.0)
    check_jaxpr(closed)
    assert [e.primitive.name for e in closed.eqns] == ["custom_jvp_call"]
    check_jaxpr(ft.make_jaxpr(ft.grad(log1pexp))(1.0))
    check_jaxpr(ft.make_jaxpr(ft.vmap(ft.grad(log1pexp)))(XS))


def test_custom_jvp_matches_jax_on_the_same_rule():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    @jax.custom_jvp
    def jlog1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @jlog1pexp.defjvp
    def _(primals, tangents):
        return jlog1pexp(primals[0]), tangents[0] * jax.nn.sigmoid(primals[0])

    xs = XS[:3]
    with jax.enable_x64(True):
        expected = np.asarray(jax.vmap(jax.grad(jax.grad(jlog1pexp)))(xs))
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(log1pexp)))(xs), expected, rtol=1e-12)


# --- custom_jvp: nondiff_argnums, closures, pytrees, defjvps --------------------------------

@functools.partial(custom_jvp, nondiff_argnums=(0,))
def app(f, x):
    return f(x)


@app.defjvp
def _app_jvp(f, primals, tangents):
    x, = primals
    x_dot, = tangents
    return f(x), 2.0 * x_dot


def test_custom_jvp_nondiff_argnums_passes_static_values_first():
    assert float(app(lambda x: x ** 3, 3.0)) == 27.0
    assert float(ft.grad(lambda x: app(lambda y: y ** 3, x))(3.0)) == 2.0
    assert float(jit(ft.grad(lambda x: app(lambda y: y ** 3, x)))(3.0)) == 2.0
    np.testing.assert_allclose(ft.vmap(ft.grad(lambda x: app(fnp.sin, x)))(XS[:3]), 2.0)


def test_custom_jvp_closing_over_a_differentiated_value():
    # d/dw [w sin(w / 2)]: the rule covers x = w / 2, the closure's share comes from f itself
    def loss(w):
        @custom_jvp
        def f(x):
            return w * fnp.sin(x)

        @f.defjvp
        def _(primals, tangents):
            return f(primals[0]), w * fnp.cos(primals[0]) * tangents[0]

        return f(0.5 * w)

    w = 1.3
    expected = np.sin(w / 2) + 0.5 * w * np.cos(w / 2)
    np.testing.assert_allclose(ft.grad(loss)(w), expected, rtol=1e-15)
    np.testing.assert_allclose(ft.jvp(loss, (w,), (1.0,))[1], expected, rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(loss))(np.array([w, 2 * w])),
                               [expected, np.sin(w) + w * np.cos(w)], rtol=1e-14)
    check_grads(loss, (w,), order=2)
    np.testing.assert_allclose(ft.hessian(loss)(w), np.cos(w / 2) - w * np.sin(w / 2) / 4,
                               rtol=1e-14)


def test_custom_rules_closing_over_batched_values_differentiated_outside_vmap():
    xs = np.array([0.2, 0.5, 0.9])

    def loss(w):
        @custom_jvp
        def f(x):
            return w * fnp.sin(x)

        f.defjvp(lambda p, t: (f(p[0]), w * fnp.cos(p[0]) * t[0]))
        return fnp.sum(ft.vmap(lambda x: f(x * w))(xs))

    w = 1.3
    np.testing.assert_allclose(ft.grad(loss)(w),
                               np.sum(np.sin(xs * w) + w * xs * np.cos(xs * w)), rtol=1e-14)

    def g(scale, x):  # custom_vjp closing over a per-example (vmapped) value
        @custom_vjp
        def h(x):
            return scale * fnp.sin(x)

        h.defvjp(lambda x: (h(x), fnp.cos(x)), lambda c, ct: (ct * c * scale,))
        return h(x)

    scales = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(ft.vmap(g)(scales, x)))(xs),
                               scales * np.cos(xs), rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(g, argnums=1))(scales, xs),
                               scales * np.cos(xs), rtol=1e-15)


def test_custom_jvp_with_pytrees_and_integer_arguments():
    @custom_jvp
    def f(p, n):
        return {"y": p["a"] * fnp.sin(p["b"]), "n": n}

    @f.defjvp
    def _(primals, tangents):
        p, n = primals
        tp, _ = tangents
        return f(p, n), {"y": tp["a"] * fnp.sin(p["b"]) + p["a"] * fnp.cos(p["b"]) * tp["b"],
                         "n": np.zeros((), np.int64)}

    g = ft.grad(lambda a, b: f({"a": a, "b": b}, 3)["y"], argnums=(0, 1))(2.0, 0.5)
    np.testing.assert_allclose(g, [np.sin(0.5), 2 * np.cos(0.5)], rtol=1e-15)
    assert int(f({"a": 2.0, "b": 0.5}, 3)["n"]) == 3


def test_custom_jvp_rule_applied_to_tangents_transposes():
    # the outer rule calls another custom_jvp function on the tangent: that call lands in the
    # linear program and is transposed as the (linear) function it stages
    @custom_jvp
    def double(x):
        return 2.0 * x

    double.defjvp(lambda p, t: (double(p[0]), double(t[0])))

    @custom_jvp
    def f(x):
        return x * x

    f.defjvp(lambda p, t: (f(p[0]), double(p[0] * t[0])))
    assert float(ft.grad(f)(3.0)) == 6.0
    assert float(ft.grad(ft.grad(f))(3.0)) == 2.0


def test_defjvps_sums_per_argument_rules():
    @custom_jvp
    def f(x, y):
        return fnp.sin(x) * y

    f.defjvps(lambda x_dot, out, x, y: fnp.cos(x) * x_dot * y,
              lambda y_dot, out, x, y: fnp.sin(x) * y_dot)
    g = ft.grad(f, argnums=(0, 1))(0.5, 3.0)
    np.testing.assert_allclose(g, [3 * np.cos(0.5), np.sin(0.5)], rtol=1e-15)


def test_custom_jvp_errors_name_the_fix():
    @custom_jvp
    def f(x):
        return x

    with pytest.raises(TypeError, match="defjvp"):
        f(1.0)
    f.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="pair"):
        ft.grad(f)(1.0)
    f.defjvp(lambda p, t: (p[0], fnp.stack([t[0], t[0]])))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        ft.grad(f)(1.0)
    g = custom_jvp(lambda a, b: a * b, nondiff_argnums=(0,))
    g.defjvp(lambda a, p, t: (g(a, p[0]), a * t[0]))
    with pytest.raises(TypeError, match="ordinary arguments"):
        ft.grad(lambda x: g(x, 2.0))(1.0)


# --- custom_vjp: gradient clipping ----------------------------------------------------------

@functools.partial(custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, None


def _clip_bwd(lo, hi, _, g):
    return (fnp.clip(g, lo, hi),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def clipped(x):
    return fnp.sin(clip_gradient(-0.75, 0.75, 3.0 * x))


def clipped_grad(x):
    # cotangent reaching the clip is cos(3x), clipped, times d(3x)/dx = 3
    return 3.0 * np.clip(np.cos(3 * x), -0.75, 0.75)


def test_gradient_clipping_values_vmap_and_jit():
    for x in (0.1, 0.4, 1.0):
        assert float(clipped(x)) == pytest.approx(np.sin(3 * x), rel=1e-15)
        assert float(ft.grad(clipped)(x)) == pytest.approx(clipped_grad(x), rel=1e-15)
    xs = np.array([0.1, 0.4, 1.0, 2.0])
    np.testing.assert_allclose(ft.vmap(ft.grad(clipped))(xs), clipped_grad(xs), rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda v: fnp.sum(ft.vmap(clipped)(v)))(xs),
                               clipped_grad(xs), rtol=1e-15)
    np.testing.assert_allclose(jit(ft.vmap(ft.grad(clipped)))(xs), clipped_grad(xs),
                               rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(jit(clipped)))(xs), clipped_grad(xs),
                               rtol=1e-15)
    np.testing.assert_allclose(ft.jacrev(ft.vmap(clipped))(xs), np.diag(clipped_grad(xs)),
                               rtol=1e-15)


def test_gradient_clipping_under_nested_grad():
    # second derivative: d/dx [3 clip(cos 3x)] = -9 sin(3x) where |cos 3x| < 0.75, else 0
    for x in (0.1, 0.4, 2.0):
        inside = abs(np.cos(3 * x)) < 0.75
        expected = -9 * np.sin(3 * x) if inside else 0.0
        assert float(ft.grad(ft.grad(clipped))(x)) == pytest.approx(expected, abs=1e-14)
    xs = np.array([0.1, 0.4, 2.0])
    expected = np.where(np.abs(np.cos(3 * xs)) < 0.75, -9 * np.sin(3 * xs), 0.0)
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(clipped)))(xs), expected, atol=1e-14)
    np.testing.assert_allclose(jit(ft.vmap(ft.grad(ft.grad(clipped))))(xs), expected,
                               atol=1e-14)


def test_gradient_clipping_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
    def jclip(lo, hi, x):
        return x

    jclip.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (jnp.clip(g, lo, hi),))
    xs = np.array([0.1, 0.4, 1.0, 2.0])
    f = lambda x: jnp.sin(jclip(-0.75, 0.75, 3.0 * x))
    with jax.enable_x64(True):
        expected = np.asarray(jax.vmap(jax.grad(jax.grad(f)))(xs))
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(clipped)))(xs), expected, atol=1e-14)


def test_forward_mode_on_a_custom_vjp_function_raises():
    with pytest.raises(CustomVJPForwardModeError, match="forward-mode"):
        ft.jvp(clipped, (0.4,), (1.0,))
    with pytest.raises(CustomVJPForwardModeError, match="grad, vjp"):
        ft.jacfwd(clipped)(0.4)


# --- custom_vjp: residual pytrees, symbolic zeros, several inputs and outputs ----------------

@custom_vjp
def scaled_norm(p, x):
    return {"norm": fnp.sqrt(fnp.sum(x * x)) * p["s"], "x": x}


def _norm_fwd(p, x):
    n = fnp.sqrt(fnp.sum(x * x))
    return scaled_norm(p, x), {"n": n, "x": x, "s": p["s"]}


def _norm_bwd(res, ct):
    n, x, s = res["n"], res["x"], res["s"]
    return {"s": ct["norm"] * n}, ct["norm"] * s * x / n + ct["x"]


scaled_norm.defvjp(_norm_fwd, _norm_bwd)
V = np.array([3.0, 4.0])


def test_custom_vjp_with_pytree_arguments_outputs_and_residuals():
    out = scaled_norm({"s": 2.0}, V)
    assert float(out["norm"]) == 10.0
    g = ft.grad(lambda s, x: scaled_norm({"s": s}, x)["norm"], argnums=(0, 1))(2.0, V)
    np.testing.assert_allclose(g[0], 5.0)
    np.testing.assert_allclose(g[1], 2.0 * V / 5.0)
    # the unused output's cotangent reaches bwd as zeros
    g = ft.grad(lambda x: fnp.sum(scaled_norm({"s": 2.0}, x)["x"] * V))(V)
    np.testing.assert_allclose(g, V)
    f = lambda x: scaled_norm({"s": 2.0}, x)["norm"]
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(ft.jacrev(ft.grad(f))(x),
                               2.0 * (np.eye(3) - np.outer(x, x) / (x @ x)) / np.sqrt(x @ x),
                               rtol=1e-14)


def test_custom_vjp_under_vmap_with_an_unbatched_argument():
    xs = np.array([[3.0, 4.0], [6.0, 8.0], [1.0, 0.0]])
    f = lambda s, x: scaled_norm({"s": s}, x)["norm"]
    np.testing.assert_allclose(ft.vmap(f, in_axes=(None, 0))(2.0, xs), [10.0, 20.0, 2.0])
    np.testing.assert_allclose(
        ft.grad(lambda s: fnp.sum(ft.vmap(f, in_axes=(None, 0))(s, xs)))(2.0), 5 + 10 + 1)
    gx = ft.vmap(ft.grad(f, argnums=1), in_axes=(None, 0))(2.0, xs)
    np.testing.assert_allclose(gx, 2.0 * xs / np.linalg.norm(xs, axis=1, keepdims=True))


def test_custom_vjp_fwd_calling_the_function_and_second_order():
    @custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (f(x), fnp.cos(x)), lambda c, g: (g * c,))
    x = 0.8
    assert float(ft.grad(f)(x)) == pytest.approx(np.cos(x))
    assert float(ft.grad(ft.grad(f))(x)) == pytest.approx(-np.sin(x))
    np.testing.assert_allclose(ft.jacrev(ft.grad(f))(x), -np.sin(x))


def test_custom_vjp_closing_over_a_differentiated_value_is_an_error():
    def loss(w):
        @custom_vjp
        def f(x):
            return w * x

        f.defvjp(lambda x: (f(x), None), lambda _, g: (g * w,))
        return f(2.0)

    with pytest.raises(CustomVJPClosureError, match="explicit argument"):
        ft.grad(loss)(3.0)
    assert float(loss(3.0)) == 6.0


def test_custom_vjp_closing_over_a_constant_tracer_works():
    # the closed-over value is computed under grad but not differentiated (stop_gradient)
    def loss(w):
        c = stop_gradient(w * w)

        @custom_vjp
        def f(x):
            return c * fnp.sin(x)

        f.defvjp(lambda x: (f(x), fnp.cos(x)), lambda cs, g: (g * c * cs,))
        return f(w)

    w = 0.6
    np.testing.assert_allclose(ft.grad(loss)(w), w * w * np.cos(w), rtol=1e-15)
    np.testing.assert_allclose(ft.grad(ft.grad(loss))(w), -w * w * np.sin(w), rtol=1e-15)
    np.testing.assert_allclose(jit(ft.grad(loss))(w), w * w * np.cos(w), rtol=1e-15)


def test_custom_vjp_errors_name_the_fix():
    @custom_vjp
    def f(x, y):
        return x * y

    with pytest.raises(TypeError, match="defvjp"):
        f(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))
    with pytest.raises(TypeError, match="one cotangent per"):
        ft.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (np.ones(3), None))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        ft.grad(f)(1.0, 2.0)
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1], None))
    assert float(ft.grad(f)(1.0, 2.0)) == 2.0
    assert float(ft.grad(f, argnums=1)(1.0, 2.0)) == 0.0  # None: a zero cotangent


# --- stop_gradient ---------------------------------------------------------------------------

def test_stop_gradient_blocks_every_derivative_but_keeps_values():
    f = lambda x: x * stop_gradient(x * x)
    assert float(f(2.0)) == 8.0
    assert float(ft.grad(f)(2.0)) == 4.0
    assert float(ft.jvp(f, (2.0,), (1.0,))[1]) == 4.0
    assert float(ft.grad(ft.grad(f))(2.0)) == 0.0
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(np.array([1.0, 3.0])), [1.0, 9.0])
    assert float(jit(ft.grad(f))(2.0)) == 4.0
    tree = stop_gradient({"a": np.array([1.0, 2.0]), "n": np.array(3)})
    assert tree["n"].dtype == np.int64 and tree["a"].tolist() == [1.0, 2.0]
    assert "stop_gradient" in str(ft.make_jaxpr(stop_gradient)(1.0))
