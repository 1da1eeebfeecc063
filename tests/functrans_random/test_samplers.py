"""functrans.random samplers: equal to JAX's draws for the same keys (recorded in
jax_fixtures.json and live when JAX is installed; floats within each sampler's ulp bound, see
jax_programs.py), the same under jit and vmap over keys, constants to differentiation while
their parameters differentiate, and clear errors."""

import json
import zlib

import numpy as np
import pytest
from jax_programs import ACROSS_MACHINES, FIXTURES, PROGRAMS, SAMPLER_KEYS

import functrans as ft
import functrans.numpy as fnp
import functrans.random as fr
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import erf_inv
from functrans.test_util import check_grads

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)["samplers"]


def ulp_distance(a, b) -> int:
    """The largest number of representable floats between a[i] and b[i] (across zero)."""
    a, b = np.asarray(a), np.asarray(b)
    ints = np.dtype(f"int{a.dtype.itemsize * 8}")

    def ordinal(x):
        i = x.view(ints).astype(np.int64)
        # negative floats count down from zero: -0.0 and 0.0 are both 0
        return np.where(i < 0, -(i & np.int64(np.iinfo(ints).max)), i)
    return int(np.abs(ordinal(a) - ordinal(b)).max()) if a.size else 0


def assert_matches(got, want, bound, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if got.dtype.kind == "f" and isinstance(bound, float):
        np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=what)
    elif got.dtype.kind == "f":
        assert ulp_distance(got, want) <= bound, (what, got, want, ulp_distance(got, want))
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sampler_equals_recorded_jax(name):
    fn, bound = PROGRAMS[name]
    bound = ACROSS_MACHINES.get(name, bound)
    for key, rec in zip(SAMPLER_KEYS, RECORDED[name]):
        want = np.array(rec["values"], rec["dtype"]).reshape(rec["shape"])
        assert_matches(fn(fr, np.asarray(key, np.uint32)), want, bound, f"{name} key={key}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sampler_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr
    fn, bound = PROGRAMS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(3):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        assert_matches(fn(fr, key), np.asarray(fn(jr, key)), bound, f"{name} key={key}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sampler_within_its_bound_of_live_jax_over_many_keys(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr
    fn, bound = PROGRAMS[name]
    keys = np.random.default_rng(zlib.crc32(name.encode()) + 1).integers(
        0, 2**32, (64, 2), dtype=np.uint64).astype(np.uint32)
    # JAX's samplers as called (jitted inside, parameters as arguments); an outer jax.jit
    # would fold constant parameters into other roundings (see jax_programs.py)
    want = np.asarray(jax.vmap(lambda k: fn(jr, k))(keys))
    assert_matches(ft.jit(ft.vmap(lambda k: fn(fr, k)))(keys), want, bound, name)


def test_normal_and_uniform_equal_live_jax_on_a_million_draws():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr
    key = np.array([7, 11], np.uint32)
    n = 100_000
    assert_matches(fr.uniform(key, (n,)), np.asarray(jr.uniform(key, (n,))), 0, "uniform")
    assert_matches(fr.uniform(key, (n,), np.float32), np.asarray(
        jr.uniform(key, (n,), np.float32)), 0, "uniform32")
    assert_matches(fr.normal(key, (n,), np.float32), np.asarray(
        jr.normal(key, (n,), np.float32)), 2, "normal32")
    assert_matches(fr.normal(key, (n,)), np.asarray(jr.normal(key, (n,))), 2, "normal")
    assert_matches(fr.exponential(key, (n,)), np.asarray(jr.exponential(key, (n,))), 2,
                   "exponential")


def test_erf_inv_against_references():
    # the inverse of erf: erf(erf_inv(x)) == x where erf is well conditioned
    from functrans.primitives.elementwise import erf
    x = np.linspace(-0.99, 0.99, 2001)
    # XLA's algorithm (its log1p is up to 128 ulp from the correctly rounded one): 2e-15
    np.testing.assert_allclose(erf(erf_inv(x)), x, rtol=0, atol=2e-15)
    np.testing.assert_allclose(erf_inv(np.array([0.5, -0.9, 0.0, 1.0, -1.0])),
                               [0.47693627620446987, -1.1630871536766741, 0.0, np.inf, -np.inf],
                               rtol=1e-15)
    special = pytest.importorskip("scipy.special")
    x = np.linspace(-0.9999, 0.9999, 20001)
    np.testing.assert_allclose(erf_inv(x), special.erfinv(x), rtol=3e-14, atol=0)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(erf_inv(x32), special.erfinv(x32.astype(np.float64)),
                               rtol=5e-6)  # Giles' float32 polynomial: a few 1e-6 in the tails


def test_erf_inv_equals_jax_lax_erf_inv():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.random.default_rng(0).uniform(-1, 1, 100_000)
    # XLA's polynomials, log1p and fused multiply-adds: within 2 ulp in both widths
    assert ulp_distance(erf_inv(x.astype(np.float32)),
                        np.asarray(jax.lax.erf_inv(x.astype(np.float32)))) <= 2
    assert ulp_distance(erf_inv(x), np.asarray(jax.lax.erf_inv(x))) <= 2


# --- transforms ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sampler_under_jit_and_vmap_over_keys(name):
    fn, _ = PROGRAMS[name]
    key = np.array([3, 14], np.uint32)
    eager = fn(fr, key)
    np.testing.assert_array_equal(ft.jit(lambda k: fn(fr, k))(key), eager)
    keys = fr.split(key, 3)
    batched = ft.vmap(lambda k: fn(fr, k))(keys)
    np.testing.assert_array_equal(batched, np.stack([fn(fr, k) for k in keys]))
    np.testing.assert_array_equal(ft.jit(ft.vmap(lambda k: fn(fr, k)))(keys), batched)


def test_draws_are_constants_and_parameters_differentiate():
    key = fr.PRNGKey(1)
    z = fr.normal(key, (4,))
    # d/dsigma sum(sigma * z) = sum(z); d/dmu = 4
    g = ft.grad(lambda s, m: fnp.sum(fr.normal(key, (4,)) * s + m), argnums=(0, 1))(2.0, 0.5)
    np.testing.assert_allclose(g[0], np.sum(z), rtol=1e-15)
    np.testing.assert_allclose(g[1], 4.0)
    u = fr.uniform(key, (5,))
    # uniform in [lo, hi): lo + u (hi - lo): d/dlo = 1 - u, d/dhi = u
    glo, ghi = ft.grad(lambda lo, hi: fnp.sum(fr.uniform(key, (5,), minval=lo, maxval=hi)),
                       argnums=(0, 1))(-1.0, 3.0)
    np.testing.assert_allclose(glo, np.sum(1 - u), rtol=1e-14)
    np.testing.assert_allclose(ghi, np.sum(u), rtol=1e-14)
    # a multivariate normal differentiates through the Cholesky factor
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    check_grads(lambda m, c: fr.multivariate_normal(key, m, c @ c.T + np.eye(2), (3,)),
                (np.array([0.5, -1.0]), cov), order=1, modes=("fwd", "rev"))
    # categorical is piecewise constant in the logits: gradient zero through a sum of logits
    # it picks is fine, and the draws themselves carry no tangent
    jvp_out = ft.jvp(lambda s: fr.normal(key, (2,)) * s, (1.0,), (1.0,))
    np.testing.assert_array_equal(jvp_out[1], fr.normal(key, (2,)))


def test_gamma_refuses_a_derivative_in_its_shape_parameter():
    key = fr.PRNGKey(0)
    with pytest.raises(NotImplementedError, match="stop_gradient"):
        ft.grad(lambda a: fnp.sum(fr.gamma(key, a, (2,))))(2.0)
    # with the parameter stopped, the gradient flows to the other factor
    g = ft.grad(lambda a, s: fnp.sum(fr.gamma(key, ft.lax.stop_gradient(a), (2,)) * s),
                argnums=1)(2.0, 1.0)
    np.testing.assert_allclose(g, np.sum(fr.gamma(key, 2.0, (2,))))


# --- shapes, dtypes, errors ------------------------------------------------------------------

def test_orthogonal_is_orthonormal():
    key = fr.PRNGKey(4)
    q = fr.orthogonal(key, 6, (2,))
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(6), q.shape),
                               atol=1e-14)
    wide = fr.orthogonal(key, 2, m=5)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-14)
    assert wide.shape == (2, 5)


def test_default_dtypes_follow_jax_with_x64():
    key = fr.PRNGKey(0)
    assert fr.uniform(key).dtype == np.float64 and fr.normal(key, (2,)).dtype == np.float64
    assert fr.randint(key, (2,), 0, 5).dtype == np.int64
    assert fr.bits(key).dtype == np.uint64
    assert fr.bernoulli(key).dtype == np.bool_ and fr.bernoulli(key).shape == ()
    assert fr.normal(key, (2,), np.float32).dtype == np.float32
    assert fr.truncated_normal(key, np.zeros(3), 1.0).shape == (3,)
    assert fr.multivariate_normal(key, np.zeros((4, 2)), np.eye(2)).shape == (4, 2)
    assert fr.dirichlet(key, np.ones(3)).shape == (3,)
    assert fr.categorical(key, np.zeros((2, 5)), axis=0).shape == (5,)


def test_bad_arguments_name_the_fix():
    key = fr.PRNGKey(0)
    with pytest.raises(DTypeError, match="float dtype"):
        fr.uniform(key, (2,), np.int32)
    with pytest.raises(ShapeError, match="broadcast"):
        fr.uniform(key, (3,), minval=np.zeros(2))
    with pytest.raises(ValueError, match="larger sample"):
        fr.choice(key, 3, (5,), replace=False)
    with pytest.raises(ShapeError, match="p must be"):
        fr.choice(key, 3, (2,), p=np.ones(4) / 4)
    with pytest.raises(DTypeError, match="integer dtype"):
        fr.randint(key, (2,), 0, 3, np.float64)
    with pytest.raises(ShapeError, match="cov.shape"):
        fr.multivariate_normal(key, np.zeros(2), np.eye(3))
