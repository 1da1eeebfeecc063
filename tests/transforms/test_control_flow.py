"""Control flow (cond/switch, while_loop, fori_loop, scan) under every transform: values
against closed forms and float64 finite differences, staged programs checked, and the errors
for misuse."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.core.check import check_jaxpr
from functrans.errors import ArgumentError, ArgumentTypeError, ConcretizationTypeError, \
    DTypeError, ShapeError
from functrans.test_util import check_grads
from functrans.transforms.control_flow.loops import WhileLoopReverseModeError
from functrans.transforms.jit.api import jit


def fd(f, x, eps=1e-6):
    """Central difference of scalar f along each coordinate of x (float64)."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def checked(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    check_jaxpr(closed)
    for eqn in closed.eqns:
        for p in eqn.params.values():
            for sub in p if isinstance(p, tuple) else (p,):
                if isinstance(sub, ft.ClosedJaxpr):
                    check_jaxpr(sub)
    return closed


# --- cond / switch ---------------------------------------------------------------------------

def piecewise(x):
    # x^2 sin x for x > 0, -x^3 otherwise
    return lax.cond(x > 0, lambda y: y * y * fnp.sin(y), lambda y: -y * y * y, x)


def piecewise_grad(x):
    return np.where(x > 0, 2 * x * np.sin(x) + x * x * np.cos(x), -3 * x * x)


XS = np.array([-1.5, -0.2, 0.7, 2.0])


def test_cond_values_and_program():
    for x in XS:
        expected = x * x * np.sin(x) if x > 0 else -x ** 3
        assert float(piecewise(x)) == pytest.approx(expected, rel=1e-15)
    closed = checked(piecewise, 1.0)
    assert [e.primitive.name for e in closed.eqns][-1] == "cond"


@pytest.mark.parametrize("x", XS)
def test_cond_grad_jvp_and_second_order_match_closed_forms(x):
    np.testing.assert_allclose(ft.grad(piecewise)(x), piecewise_grad(x), rtol=1e-14)
    np.testing.assert_allclose(ft.jvp(piecewise, (x,), (1.0,))[1], piecewise_grad(x),
                               rtol=1e-14)
    second = 2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x) if x > 0 else -6 * x
    np.testing.assert_allclose(ft.grad(ft.grad(piecewise))(x), second, rtol=1e-13)
    check_grads(piecewise, (x,), order=2)


def test_cond_under_vmap_jit_and_their_compositions():
    np.testing.assert_allclose(ft.vmap(piecewise)(XS), [piecewise(x) for x in XS], rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(piecewise))(XS), piecewise_grad(XS),
                               rtol=1e-14)
    np.testing.assert_allclose(jit(ft.vmap(ft.grad(piecewise)))(XS), piecewise_grad(XS),
                               rtol=1e-14)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(ft.vmap(piecewise)(x)))(XS),
                               piecewise_grad(XS), rtol=1e-14)
    np.testing.assert_allclose(jit(ft.grad(piecewise))(0.7), piecewise_grad(0.7), rtol=1e-14)
    np.testing.assert_allclose(ft.grad(jit(piecewise))(-0.2), piecewise_grad(-0.2),
                               rtol=1e-14)
    check_jaxpr(ft.make_jaxpr(ft.vmap(ft.grad(piecewise)))(XS))


def test_cond_with_unbatched_predicate_and_batched_operand():
    w = np.array([1.0, 2.0, 3.0])
    f = lambda flag, x: lax.cond(flag, lambda v: v * 2.0, lambda v: v - 1.0, x)
    np.testing.assert_allclose(ft.vmap(f, in_axes=(None, 0))(True, w), 2 * w)
    np.testing.assert_allclose(ft.vmap(f, in_axes=(None, 0))(False, w), w - 1)


def test_cond_with_closures_pytrees_and_several_operands():
    a = np.array([1.0, -2.0])

    def f(p, x):
        return lax.cond(fnp.sum(x) > 0,
                        lambda q, y: {"out": q["w"] * y + a, "n": fnp.sum(y)},
                        lambda q, y: {"out": q["w"] - y, "n": fnp.sum(y * y)}, p, x)

    p, x = {"w": 1.5}, np.array([0.5, 0.25])
    out = f(p, x)
    np.testing.assert_allclose(out["out"], 1.5 * x + a)
    g = ft.grad(lambda w, y: fnp.sum(f({"w": w}, y)["out"]) + f({"w": w}, y)["n"],
                argnums=(0, 1))(1.5, x)
    np.testing.assert_allclose(g[0], np.sum(x))
    np.testing.assert_allclose(g[1], 1.5 + np.ones(2))
    g = ft.grad(lambda y: fnp.sum(f(p, y)["out"]) + f(p, y)["n"])(-x)
    np.testing.assert_allclose(g, -1 + 2 * -x)


def test_cond_closing_over_a_differentiated_value():
    # the branches read `w` through the closure: its cotangent flows through the operands
    f = lambda w, x: lax.cond(x > 0, lambda: w * w * x, lambda: w * x)
    assert float(ft.grad(f)(3.0, 2.0)) == 12.0
    assert float(ft.grad(f)(3.0, -2.0)) == -2.0
    assert float(ft.grad(ft.grad(f))(3.0, 2.0)) == 4.0


def test_switch_clamps_its_index_like_jax_under_every_transform():
    branches = [lambda x: x + 1.0, lambda x: x * x, lambda x: fnp.sin(x)]
    f = lambda i, x: lax.switch(i, branches, x)
    x = 0.5
    for i, expected, deriv in [(-3, 1.5, 1.0), (0, 1.5, 1.0), (1, 0.25, 1.0),
                               (2, np.sin(x), np.cos(x)), (7, np.sin(x), np.cos(x))]:
        assert float(f(i, x)) == pytest.approx(expected)
        assert float(ft.grad(f, argnums=1)(i, x)) == pytest.approx(deriv)
        assert float(jit(f)(i, x)) == pytest.approx(expected)
    idx = np.array([-1, 0, 1, 2, 5])
    xs = np.full(5, x)
    np.testing.assert_allclose(ft.vmap(f)(idx, xs), [1.5, 1.5, 0.25, np.sin(x), np.sin(x)])
    np.testing.assert_allclose(ft.vmap(ft.grad(f, argnums=1))(idx, xs),
                               [1, 1, 1, np.cos(x), np.cos(x)])


def test_branches_with_residuals_of_different_types_share_no_slot_wrongly():
    m = np.arange(6.0).reshape(2, 3)
    f = lambda x, v: lax.cond(x > 0, lambda: fnp.sum(fnp.sin(v) * x),
                              lambda: fnp.sum((m @ v) * fnp.cos(x)))
    v = np.array([0.1, 0.2, 0.3])
    for x in (1.0, -1.0):
        g = ft.grad(f, argnums=(0, 1))(x, v)
        np.testing.assert_allclose(g[0], fd(lambda t: f(t, v), x), rtol=1e-7)
        np.testing.assert_allclose(g[1], fd(lambda t: f(x, t), v), rtol=1e-7)


def test_a_python_scalar_branch_output_takes_the_other_branch_dtype():
    x = np.float32(1.5)
    for pred in (True, False):
        out = lax.cond(pred, lambda v: v * v, lambda v: 0.0, x)
        assert out.dtype == np.float32
    g = ft.grad(lambda v: lax.cond(v > 2, lambda: v * v, lambda: 0.0))(x)
    assert g.dtype == np.float32 and float(g) == 0.0


def test_cond_errors_name_the_fix():
    with pytest.raises(TypeError, match="same shapes and dtypes"):
        lax.cond(True, lambda x: x, lambda x: fnp.stack([x, x]), 1.0)
    with pytest.raises(TypeError, match="same structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(ShapeError, match="fnp.where"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(DTypeError, match="integer scalar"):
        lax.switch(1.5, [lambda: 1.0])
    # Python `if` on a traced value is refused; cond (or fnp.where) is the way to branch
    with pytest.raises(ConcretizationTypeError):
        ft.make_jaxpr(lambda x: x if x > 0 else -x)(1.0)
    assert float(jit(lambda x: lax.cond(x > 0, lambda: x, lambda: -x))(-2.0)) == 2.0


# --- fori_loop -------------------------------------------------------------------------------

def horner(x):
    # v <- v * x + i for i in 0..3, from v = 1: x^4 + x^2 + 2x + 3
    return lax.fori_loop(0, 4, lambda i, v: v * x + i, 1.0)


def test_fori_loop_values_grad_jvp_vmap_jit_match_closed_forms():
    xs = np.array([-1.0, 0.5, 2.0])
    poly = xs ** 4 + xs ** 2 + 2 * xs + 3
    dpoly = 4 * xs ** 3 + 2 * xs + 2
    for x, p, d in zip(xs, poly, dpoly):
        assert float(horner(x)) == pytest.approx(p, rel=1e-15)
        assert float(ft.grad(horner)(x)) == pytest.approx(d, rel=1e-14)
        assert float(ft.jvp(horner, (x,), (1.0,))[1]) == pytest.approx(d, rel=1e-14)
        assert float(jit(ft.grad(horner))(x)) == pytest.approx(d, rel=1e-14)
        assert float(ft.grad(ft.grad(horner))(x)) == pytest.approx(12 * x * x + 2, rel=1e-13)
    np.testing.assert_allclose(ft.vmap(horner)(xs), poly, rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(horner))(xs), dpoly, rtol=1e-14)
    np.testing.assert_allclose(jit(ft.vmap(ft.grad(horner)))(xs), dpoly, rtol=1e-14)
    np.testing.assert_allclose(ft.jacfwd(ft.vmap(horner))(xs), np.diag(dpoly), rtol=1e-14)
    assert "scan" in {e.primitive.name for e in checked(horner, 1.0).eqns}


def test_fori_loop_with_array_carry_and_empty_range():
    a = np.array([[0.9, 0.2], [-0.1, 0.8]])
    f = lambda v: fnp.sum(lax.fori_loop(2, 7, lambda i, u: a @ u + 0.1 * i, v) ** 2)
    v0 = np.array([1.0, -0.5])
    np.testing.assert_allclose(ft.grad(f)(v0), fd(f, v0), rtol=1e-7)
    assert float(lax.fori_loop(5, 2, lambda i, v: v + 1.0, 3.0)) == 3.0
    assert float(ft.grad(lambda x: lax.fori_loop(5, 2, lambda i, v: v * x, x))(3.0)) == 1.0


def test_fori_loop_with_traced_bounds_is_a_while_loop():
    f = lambda n, x: lax.fori_loop(0, n, lambda i, v: v * x, 1.0)
    assert float(jit(f)(5, 1.5)) == pytest.approx(1.5 ** 5)
    assert float(ft.jvp(lambda x: jit(f)(5, x), (1.5,), (1.0,))[1]) == pytest.approx(
        5 * 1.5 ** 4)
    assert "while" in {e.primitive.name for e in checked(f, 3, 2.0).eqns}
    with pytest.raises(WhileLoopReverseModeError, match="fori_loop with static bounds"):
        jit(ft.grad(f, argnums=1))(5, 1.5)


# --- while_loop ------------------------------------------------------------------------------

def power_until(x):
    # multiply by x until the value exceeds 10 (x > 1): x^k with k the first power > 10
    return lax.while_loop(lambda c: c[1] <= 10.0, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))


def test_while_loop_values_and_forward_mode():
    k, v = power_until(1.5)
    assert int(k) == 6 and float(v) == pytest.approx(1.5 ** 6)
    np.testing.assert_allclose(ft.jvp(lambda x: power_until(x)[1], (1.5,), (1.0,))[1],
                               6 * 1.5 ** 5, rtol=1e-14)
    np.testing.assert_allclose(ft.jacfwd(lambda x: power_until(x)[1])(1.5), 6 * 1.5 ** 5,
                               rtol=1e-14)
    f = lambda x: lax.while_loop(lambda v: v < 100.0, lambda v: v * v + x, 1.0 + x)
    np.testing.assert_allclose(ft.jvp(f, (1.0,), (1.0,))[1], fd(f, 1.0), rtol=1e-6)
    np.testing.assert_allclose(jit(lambda x: ft.jvp(f, (x,), (1.0,))[1])(1.0), fd(f, 1.0),
                               rtol=1e-6)
    jvp_of_jvp = ft.jvp(lambda x: ft.jvp(f, (x,), (1.0,))[1], (1.0,), (1.0,))[1]
    np.testing.assert_allclose(jvp_of_jvp, fd(lambda x: ft.jvp(f, (x,), (1.0,))[1], 1.0),
                               rtol=1e-5)


def test_while_loop_under_vmap_with_batched_predicate():
    xs = np.array([1.5, 3.0, 11.0])
    k, v = ft.vmap(power_until)(xs)
    np.testing.assert_array_equal(k, [6, 3, 1])
    np.testing.assert_allclose(v, xs ** np.array([6, 3, 1]))
    d = ft.vmap(ft.jacfwd(lambda x: power_until(x)[1]))(xs)
    np.testing.assert_allclose(d, [6 * 1.5 ** 5, 3 * 9.0, 1.0])
    np.testing.assert_allclose(jit(ft.vmap(lambda x: power_until(x)[1]))(xs), v)
    bound = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x),
                                        (0, 1.0))[1]
    np.testing.assert_allclose(ft.vmap(bound, in_axes=(None, 0))(3, xs), xs ** 3)
    np.testing.assert_allclose(ft.vmap(bound, in_axes=(0, None))(np.array([0, 2, 4]), 2.0),
                               [1.0, 4.0, 16.0])


def test_while_loop_reverse_mode_error_names_fori_loop_and_scan():
    with pytest.raises(WhileLoopReverseModeError) as e:
        ft.grad(lambda x: power_until(x)[1])(1.5)
    assert "fori_loop" in str(e.value) and "scan" in str(e.value)


def test_while_loop_errors():
    with pytest.raises(DTypeError, match="boolean scalar"):
        lax.while_loop(lambda v: v, lambda v: v + 1.0, 1.0)
    with pytest.raises(TypeError, match=r"init_val.astype\(np.float64\)"):
        lax.while_loop(lambda v: v < 3, lambda v: v + 0.5, np.int64(0))
    with pytest.raises(TypeError, match="fix init_val's shape"):
        lax.while_loop(lambda v: fnp.all(v < 3), lambda v: fnp.stack([v, v]), 0.0)
    assert lax.while_loop(lambda v: v < 3, lambda v: v + 0.5, 0) == 3.0  # a weak carry


# --- scan ------------------------------------------------------------------------------------

def lotka_volterra(y, theta):
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    u, v = y[0], y[1]
    return fnp.stack([a * u - b * u * v, d * u * v - c * v])


def rk4_trajectory(theta, y0, dt=0.05, steps=40):
    def step(y, _):
        k1 = lotka_volterra(y, theta)
        k2 = lotka_volterra(y + dt / 2 * k1, theta)
        k3 = lotka_volterra(y + dt / 2 * k2, theta)
        k4 = lotka_volterra(y + dt * k3, theta)
        y_next = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y_next, y_next

    return lax.scan(step, y0, None, length=steps)


THETA = np.array([1.1, 0.4, 0.4, 0.1])
Y0 = np.array([10.0, 5.0])


def rk4_loss(theta):
    y_final, ys = rk4_trajectory(theta, Y0)
    return fnp.sum(ys[:, 0] * ys[:, 1]) / 40.0 + fnp.sum(y_final * y_final)


def test_rk4_ode_with_scan_gradient_matches_finite_differences():
    g = ft.grad(rk4_loss)(THETA)
    np.testing.assert_allclose(g, fd(rk4_loss, THETA, eps=1e-6), rtol=1e-6)
    np.testing.assert_allclose(jit(ft.grad(rk4_loss))(THETA), g, rtol=1e-12)
    np.testing.assert_allclose(ft.jacfwd(rk4_loss)(THETA), g, rtol=1e-12)
    # gradient with respect to the initial state too
    gy = ft.grad(lambda y0: fnp.sum(rk4_trajectory(THETA, y0)[0]))(Y0)
    np.testing.assert_allclose(gy, fd(lambda y0: fnp.sum(rk4_trajectory(THETA, y0)[0]), Y0),
                               rtol=1e-6)


def test_rk4_under_vmap_over_parameters():
    thetas = np.stack([THETA, THETA * 1.1, THETA * 0.9])
    np.testing.assert_allclose(ft.vmap(rk4_loss)(thetas), [rk4_loss(t) for t in thetas],
                               rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(ft.grad(rk4_loss))(thetas),
                               np.stack([ft.grad(rk4_loss)(t) for t in thetas]), rtol=1e-12)


def test_rk4_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    def jloss(theta):
        def f(y):
            return jnp.stack([theta[0] * y[0] - theta[1] * y[0] * y[1],
                              theta[3] * y[0] * y[1] - theta[2] * y[1]])

        def step(y, _):
            dt = 0.05
            k1 = f(y)
            k2 = f(y + dt / 2 * k1)
            k3 = f(y + dt / 2 * k2)
            k4 = f(y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            return y, y

        y_final, ys = jax.lax.scan(step, jnp.asarray(Y0), None, length=40)
        return jnp.sum(ys[:, 0] * ys[:, 1]) / 40.0 + jnp.sum(y_final * y_final)

    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(jloss)(THETA))
    np.testing.assert_allclose(ft.grad(rk4_loss)(THETA), expected, rtol=1e-12)


def test_scan_with_xs_pytrees_reverse_and_check_grads():
    w = np.array([0.5, -0.3, 0.8])

    def f(c0, xs):
        def step(c, x):
            c = fnp.tanh(c * x["a"] + x["b"] * w)
            return c, {"y": fnp.sum(c * c), "z": c[0]}
        return lax.scan(step, c0, xs, reverse=True)

    xs = {"a": np.linspace(0.5, 1.5, 5)[:, None] * np.ones(3), "b": np.linspace(-1, 1, 5)}
    c0 = np.array([0.1, 0.2, 0.3])
    check_grads(lambda c, a, b: f(c, {"a": a, "b": b}), (c0, xs["a"], xs["b"]), order=2)
    c, ys = f(c0, xs)
    ref = c0
    zs = []
    for t in reversed(range(5)):
        ref = np.tanh(ref * xs["a"][t] + xs["b"][t] * w)
        zs.append(ref[0])
    np.testing.assert_allclose(c, ref, rtol=1e-15)
    np.testing.assert_allclose(ys["z"], zs[::-1], rtol=1e-15)


def test_scan_batching_moves_carries_and_outputs():
    def cumulative(x, s):
        return lax.scan(lambda c, xi: (c + xi * s, c), 0.0, x)

    xs = np.arange(12.0).reshape(3, 4)
    # batched xs along axis 1: the scan axis stays 0
    c, ys = ft.vmap(cumulative, in_axes=(1, None))(xs, 2.0)
    np.testing.assert_allclose(c, 2 * xs.sum(0))
    np.testing.assert_allclose(ys, (2 * np.cumsum(xs, 0) - 2 * xs).T)
    # only the scalar batched: carry becomes batched through the fixpoint
    c, ys = ft.vmap(cumulative, in_axes=(None, 0))(xs[:, 0], np.array([1.0, 2.0]))
    np.testing.assert_allclose(c, [xs[:, 0].sum(), 2 * xs[:, 0].sum()])
    np.testing.assert_allclose(ft.jacrev(lambda s: cumulative(xs[:, 0], s)[1])(3.0),
                               np.cumsum(xs[:, 0]) - xs[:, 0])


def test_scan_errors():
    with pytest.raises(TypeError, match="keep its shape and dtype"):
        lax.scan(lambda c, x: (fnp.stack([c, c]), x), 0.0, np.arange(3.0))
    with pytest.raises(ShapeError, match="different lengths"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.arange(3.0), np.arange(4.0)))
    with pytest.raises(ValueError, match="length="):
        lax.scan(lambda c, x: (c, c), 0.0, None)
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.arange(3.0))


def test_scan_length_must_be_a_non_negative_int_that_agrees_with_xs():
    step = lambda c, x: (c + 1.0, c)  # noqa: E731
    # once a numpy "negative dimensions are not allowed" from deep inside the scan
    with pytest.raises(ArgumentError, match="length=-1 is negative; it must be an int >= 0"):
        lax.scan(step, 0.0, None, length=-1)
    # once truncated silently to 2 steps
    with pytest.raises(ArgumentTypeError, match=r"length=2.5 is a float; it must be an int"):
        lax.scan(step, 0.0, None, length=2.5)
    with pytest.raises(ArgumentTypeError, match="length=True is a bool"):
        lax.scan(step, 0.0, None, length=True)
    with pytest.raises(ShapeError, match=r"length=4 disagrees .* xs, 3 .* Pass length=3"):
        lax.scan(step, 0.0, np.arange(3.0), length=4)
    with pytest.raises(ConcretizationTypeError, match="static_argnums"):
        jit(lambda n: lax.scan(step, 0.0, None, length=n))(3)
    assert issubclass(ArgumentError, ValueError) and issubclass(ArgumentTypeError, TypeError)
    # what is accepted: ints (numpy's too), 0 steps, a length equal to xs's
    carry, ys = lax.scan(step, 0.0, None, length=np.int64(3))
    assert float(carry) == 3.0 and ys.tolist() == [0.0, 1.0, 2.0]
    carry, ys = lax.scan(step, 0.0, None, length=0)
    assert float(carry) == 0.0 and ys.shape == (0,)
    carry, ys = lax.scan(step, 0.0, np.arange(3.0), length=3)
    assert float(carry) == 3.0


def test_dynamic_slice_takes_traced_starts_and_clamps_them_as_jax():
    x = np.arange(24.0).reshape(4, 6)
    block = jit(lambda i, j: lax.dynamic_slice(x, (i, j), (2, 3)))
    np.testing.assert_array_equal(block(1, 2), x[1:3, 2:5])
    np.testing.assert_array_equal(block(3, 5), x[2:4, 3:6])      # clamped into range, as JAX
    np.testing.assert_array_equal(block(-2, 0), x[0:2, 0:3])
    np.testing.assert_array_equal(ft.vmap(lambda i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))(
        np.array([0, 4])), np.stack([x[:, 0:2], x[:, 4:6]]))
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 2, keepdims=False), x[2])
    # with a traced start, staged by jit and by scan's body
    np.testing.assert_array_equal(ft.jit(lambda i: lax.dynamic_slice_in_dim(x, i, 2, axis=1))(
        4), x[:, 4:6])
    _, rows = lax.scan(lambda c, i: (c, lax.dynamic_slice_in_dim(x, i, 2)), 0.0, np.arange(2))
    np.testing.assert_array_equal(rows, np.stack([x[0:2], x[1:3]]))
    # the slice's derivative: ones scattered back into the block
    g = ft.grad(lambda y, i: fnp.sum(lax.dynamic_slice(y, (i, 1), (2, 2)) ** 2))(x, 1)
    expected = np.zeros_like(x)
    expected[1:3, 1:3] = 2 * x[1:3, 1:3]
    np.testing.assert_array_equal(g, expected)
    with pytest.raises(ShapeError, match="does not fit"):
        lax.dynamic_slice(x, (0, 0), (5, 1))
    with pytest.raises(ShapeError, match="start"):
        lax.dynamic_slice(x, (0,), (1,))


def test_lax_map_and_stop_gradient():
    np.testing.assert_allclose(lax.map(lambda x: x * x, np.arange(3.0)), [0.0, 1.0, 4.0])
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(lax.map(fnp.sin, x)))(XS), np.cos(XS))
    assert float(ft.grad(lambda x: x * lax.stop_gradient(x))(3.0)) == 3.0
