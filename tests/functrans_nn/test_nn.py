"""functrans.nn against jax.nn: activations with their first and second derivatives at
points that include every kink, softmax-like functions with gradients, one_hot, and the
initializers for the same keys (recorded in jax_fixtures.json and live when JAX is
installed; see nn_programs.py); the same under jit and vmap, and clear errors."""

import json

import numpy as np
import pytest
from nn_programs import (ACTIVATIONS, FIXTURES, INIT_KEYS, INITIALIZERS, ONE_HOT,
                          ORTHOGONAL, POINTS, VECTOR, W, X, mlp_program)

import functrans as ft
import functrans.numpy as fnp
import functrans.nn as nn
import functrans.nn.initializers as init
from functrans.errors import DTypeError, ShapeError

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)

# activations and their derivatives: XLA's and numpy's tanh, exp, log1p, erf round
# differently by a few ulps. Where a value is made by cancellation (gelu's 1 + tanh(z) near
# z = -inf, softplus's second derivative sigmoid(x) (1 - sigmoid(x)) in the tails, gelu_erf's
# 1 + erf(x / sqrt 2) here against erfc(-x / sqrt 2) in JAX), those ulps of the operands are
# an absolute error near 1e-16, so the absolute tolerance is a few float64 epsilons.
RTOL, ATOL = 1e-13, 1e-15
# gelu_tanh's derivatives multiply 1 - tanh(z)^2 (that cancellation) by x dz/dx, about 40 at
# x = -7 (and by its square, about 1600, in the second derivative)
ACTIVATION_ATOL = {"gelu_tanh": 5e-13}


def array(rec):
    return np.array(rec["values"], rec["dtype"]).reshape(rec["shape"])


def assert_close(got, want, what, rtol=RTOL, atol=ATOL):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)


def assert_within_ulps(got, want, bound, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    ulps = err / np.spacing(np.abs(want)).astype(np.float64)
    assert (ulps <= bound).all(), (what, float(ulps.max()), bound)


def activation_values(name):
    f = lambda t: ACTIVATIONS[name](nn, t)
    d1 = ft.grad(f)
    d2 = ft.grad(d1)
    x = np.array(POINTS)
    return {"value": ft.vmap(f)(x), "d1": ft.vmap(d1)(x), "d2": ft.vmap(d2)(x)}


def vector_values(name):
    f = lambda t: VECTOR[name](nn, fnp, t)
    g = ft.grad(lambda t: fnp.sum(np.array(W) * f(t)))(np.array(X))
    return {"value": f(np.array(X)), "grad": g}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_equals_recorded_jax(name):
    got = activation_values(name)
    for what in ("value", "d1", "d2"):
        assert_close(got[what], array(RECORDED["activations"][name][what]), f"{name} {what}",
                     atol=ACTIVATION_ATOL.get(name, ATOL))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    f = lambda t: ACTIVATIONS[name](jnn, t)
    x = np.array(POINTS)
    want = {"value": jax.vmap(f)(x), "d1": jax.vmap(jax.grad(f))(x),
            "d2": jax.vmap(jax.grad(jax.grad(f)))(x)}
    got = activation_values(name)
    for what in want:
        assert_close(got[what], np.asarray(want[what]), f"{name} {what}",
                     atol=ACTIVATION_ATOL.get(name, ATOL))


# jax.nn.relu and relu6 are jnp.maximum / jnp.minimum with a custom derivative: NaN stays NaN
# and its derivative is 0 (the mask 0 < x (< 6) is false); recorded from jax 0.10.2
NAN_POINTS = [float("nan"), -1.0, -0.0, 7.0, float("inf"), -float("inf")]
NAN_EXPECTED = {"relu": ([float("nan"), 0.0, 0.0, 7.0, float("inf"), 0.0], [0, 0, 0, 1, 1, 0]),
                "relu6": ([float("nan"), 0.0, 0.0, 6.0, 6.0, 0.0], [0, 0, 0, 0, 0, 0])}


@pytest.mark.parametrize("name", sorted(NAN_EXPECTED))
def test_relu_and_relu6_keep_nan_with_derivative_zero(name):
    x = np.asarray(NAN_POINTS)
    value, grad = NAN_EXPECTED[name]
    f = getattr(nn, name)
    got = np.asarray(f(x))
    np.testing.assert_array_equal(got, value)
    assert not np.signbit(got[1:3]).any()  # max(-0.0, 0) is +0.0 in JAX
    np.testing.assert_array_equal(ft.grad(lambda v: fnp.sum(f(v)))(x), grad)


@pytest.mark.parametrize("name", sorted(NAN_EXPECTED))
def test_relu_and_relu6_at_nan_match_live_jax(name):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        f = getattr(jax.nn, name)
        x = jnp.asarray(NAN_POINTS)
        np.testing.assert_array_equal(np.asarray(f(x)), NAN_EXPECTED[name][0])
        np.testing.assert_array_equal(np.asarray(jax.grad(lambda v: jnp.sum(f(v)))(x)),
                                      NAN_EXPECTED[name][1])


def test_kink_derivatives_are_jax_conventions():
    """The derivative at each kink, as jax.nn defines it (closed values, not fixtures)."""
    g = lambda f, x: float(ft.grad(f)(x))
    assert g(nn.relu, 0.0) == 0.0 and g(nn.relu, 1e-300) == 1.0
    assert g(nn.relu6, 0.0) == 0.0 and g(nn.relu6, 6.0) == 0.0 and g(nn.relu6, 3.0) == 1.0
    assert g(nn.hard_tanh, 1.0) == 1.0 and g(nn.hard_tanh, -1.0) == 1.0
    assert g(nn.hard_tanh, 1.5) == 0.0
    assert g(nn.leaky_relu, 0.0) == 1.0 and g(nn.leaky_relu, -1.0) == pytest.approx(0.01)
    assert g(nn.elu, 0.0) == 1.0 and g(lambda x: nn.elu(x, 0.3), 0.0) == pytest.approx(0.3)
    assert g(nn.celu, 0.0) == 1.0
    assert g(nn.soft_sign, 0.0) == 1.0


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_function_equals_recorded_jax(name):
    got = vector_values(name)
    for what in ("value", "grad"):
        assert_close(got[what], array(RECORDED["vector"][name][what]), f"{name} {what}",
                     atol=1e-14)


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_vector_function_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    import jax.numpy as jnp
    f = lambda t: VECTOR[name](jnn, jnp, t)
    want = {"value": f(jnp.array(X)),
            "grad": jax.grad(lambda t: jnp.sum(jnp.array(W) * f(t)))(jnp.array(X))}
    got = vector_values(name)
    for what in want:
        assert_close(got[what], np.asarray(want[what]), f"{name} {what}", atol=1e-14)


def test_softmax_where_masks_out_entries():
    x = np.array(X)
    mask = np.array([[True, False, True, True]] * 3)
    y = nn.softmax(x, where=mask)
    assert (y[:, 1] == 0).all()
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-15)
    assert (nn.log_softmax(x, where=mask)[:, 1] == -np.inf).all()


@pytest.mark.parametrize("name", sorted(ONE_HOT))
def test_one_hot_equals_recorded_jax(name):
    want = array(RECORDED["one_hot"][name])
    got = np.asarray(ONE_HOT[name](nn))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_one_hot_under_jit_and_vmap():
    idx = np.array([2, 0, 1])
    want = np.eye(3)[idx]
    np.testing.assert_array_equal(ft.jit(lambda i: nn.one_hot(i, 3))(idx), want)
    np.testing.assert_array_equal(ft.vmap(lambda i: nn.one_hot(i, 3))(idx), want)


@pytest.mark.parametrize("name", ["relu", "gelu_erf", "elu", "hard_tanh", "leaky_relu"])
def test_activation_under_jit_equals_eager(name):
    f = lambda t: ACTIVATIONS[name](nn, t)
    x = np.array(POINTS)
    np.testing.assert_array_equal(ft.jit(ft.vmap(ft.grad(f)))(x), ft.vmap(ft.grad(f))(x))


def test_softmax_under_jit_and_vmap():
    x = np.array(X)
    np.testing.assert_allclose(ft.jit(nn.softmax)(x), nn.softmax(x), rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(nn.softmax)(x), nn.softmax(x), rtol=1e-15)


def test_integer_input_gives_float64():
    assert np.asarray(nn.relu(np.array([1, -2]))).dtype == np.float64
    assert np.asarray(nn.sigmoid(3)).dtype == np.float64


def test_float32_stays_float32():
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for f in (nn.relu, nn.relu6, nn.gelu, nn.elu, nn.celu, nn.softplus, nn.sigmoid,
              nn.hard_tanh, nn.leaky_relu, nn.softmax, nn.log_softmax, nn.standardize):
        assert np.asarray(f(x)).dtype == np.float32, f


def test_one_hot_errors():
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(np.array([0, 1]), 2.5)
    with pytest.raises(ValueError, match="axis"):
        nn.one_hot(np.array([0, 1]), 2, axis=3)


# --- initializers ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_initializer_equals_recorded_jax(name):
    fn, bound = INITIALIZERS[name]
    for key, rec in zip(INIT_KEYS, RECORDED["initializers"][name]):
        got = fn(init, np.asarray(key, np.uint32))
        assert_within_ulps(got, array(rec), bound, f"{name} key={key}")


@pytest.mark.parametrize("name", sorted(INITIALIZERS))
def test_initializer_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    fn, bound = INITIALIZERS[name]
    for key in INIT_KEYS:
        k = np.asarray(key, np.uint32)
        assert_within_ulps(fn(init, k), np.asarray(fn(jnn.initializers, k)), bound,
                           f"{name} key={key}")


@pytest.mark.parametrize("name", sorted(ORTHOGONAL))
def test_orthogonal_equals_recorded_jax(name):
    for key, rec in zip(INIT_KEYS, RECORDED["orthogonal"][name]):
        got = ORTHOGONAL[name](init, np.asarray(key, np.uint32))
        assert_close(got, array(rec), f"{name} key={key}", rtol=0, atol=1e-14)


def test_initializers_take_typed_keys_and_dtypes():
    k = ft.random.key(3)
    raw = ft.random.key_data(k)
    np.testing.assert_array_equal(init.he_normal()(k, (3, 4)), init.he_normal()(raw, (3, 4)))
    assert init.glorot_uniform(dtype=np.float32)(k, (2, 2)).dtype == np.float32
    assert init.glorot_uniform()(k, (2, 2)).dtype == np.float64
    w = init.orthogonal()(k, (0, 3))
    assert w.shape == (0, 3) and w.dtype == np.float64


def test_initializers_under_jit_and_vmap_over_keys():
    keys = ft.random.split(ft.random.PRNGKey(0), 3)
    f = lambda k: init.lecun_normal()(k, (4, 2))
    want = np.stack([f(k) for k in keys])
    np.testing.assert_array_equal(ft.vmap(f)(keys), want)
    np.testing.assert_array_equal(ft.jit(f)(keys[1]), want[1])


def test_initializer_errors():
    k = ft.random.PRNGKey(0)
    with pytest.raises(ShapeError, match="in_axis"):
        init.glorot_uniform()(k, (5,))
    with pytest.raises(ShapeError, match="2D"):
        init.orthogonal()(k, (5,))
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(DTypeError, match="float"):
        init.normal()(k, (2,), np.int32)


# --- a JAX program with only its imports changed ---------------------------------------------

def test_mlp_program_equals_recorded_jax():
    got = mlp_program(ft, fnp, nn)
    for i, (g, rec) in enumerate(zip(got, RECORDED["mlp"], strict=True)):
        assert_close(g, array(rec), f"mlp output {i}", atol=1e-14)


def test_mlp_program_equals_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    import jax.numpy as jnp
    want = mlp_program(jax, jnp, jnn)
    for i, (g, w) in enumerate(zip(mlp_program(ft, fnp, nn), want, strict=True)):
        assert_close(g, np.asarray(w), f"mlp output {i}", atol=1e-14)
