"""XLA's CPU algorithms for log, exp, log1p and pow (functrans/primitives/xla_math.py): equal to
JAX's values bit for bit (live JAX), and close to numpy's correctly rounded ones without it."""

import numpy as np
import pytest

from functrans.primitives import xla_math
from functrans.primitives.elementwise import xla_exp, xla_log, xla_pow


def ulps(got, want) -> np.ndarray:
    """Distance in units in the last place, counted across zero; 0 where both are NaN."""
    got, want = np.asarray(got), np.asarray(want)
    ints = np.dtype(f"int{got.dtype.itemsize * 8}")

    def ordinal(x):
        i = x.view(ints).astype(np.int64)
        return np.where(i < 0, -(i & np.int64(np.iinfo(ints).max)), i)
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, np.abs(ordinal(got) - ordinal(want)))


def _log_inputs(dtype):
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.random(20_000), np.exp(rng.uniform(-80, 80, 20_000)),
                        rng.uniform(0.5, 2.0, 20_000),
                        [0.0, 1.0, 2.0, np.inf, -1.0, np.nan, 1e-40, 1e-310]])
    return x.astype(dtype)


def _exp_inputs(dtype):
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-100, 100, 20_000), rng.uniform(-1, 1, 20_000),
                        np.log(rng.random(20_000)), rng.uniform(-750, 720, 5_000),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_and_exp_near_the_correctly_rounded_values(dtype):
    # Eigen's float32 polynomials are near the correctly rounded value (long double
    # references); float64 log is the C library's, exp XLA's rational
    with np.errstate(all="ignore"):
        x = _log_inputs(dtype)
        x = x[(x == 0) | (np.abs(x) >= np.finfo(dtype).tiny) | ~np.isfinite(x)]
        want = np.log(x.astype(np.longdouble)).astype(dtype)
        assert ulps(xla_math.log(x), want).max() <= 2
        x = _exp_inputs(dtype)
        want = np.exp(x.astype(np.longdouble)).astype(dtype)
        want = np.where(np.abs(want) < np.finfo(dtype).tiny, 0, want).astype(dtype)  # FTZ
        # float32: 4 just below overflow, where XLA caps the exponent at 127 and the
        # polynomial works past its range (JAX's values there too)
        assert ulps(xla_math.exp(x), want).max() <= (4 if dtype == np.float32 else 2)
        base = np.random.default_rng(5).random(5_000).astype(dtype)
        power = (1 / np.random.default_rng(6).uniform(0.05, 1, 5_000)).astype(dtype)
        want = np.power(base.astype(np.longdouble), power).astype(dtype)
        want = np.where(want < np.finfo(dtype).tiny, 0, want).astype(dtype)
        assert ulps(xla_math.pow(base, power), want).max() <= 1


def test_special_values():
    for dtype in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            got = xla_math.log(np.array([0.0, -1.0, np.inf, np.nan, 1.0], dtype))
            np.testing.assert_array_equal(got, [-np.inf, np.nan, np.inf, np.nan, 0.0])
            got = xla_math.exp(np.array([-np.inf, np.inf, np.nan, 0.0, -1000.0], dtype))
            np.testing.assert_array_equal(got, [0.0, np.inf, np.nan, 1.0, 0.0])
    # XLA's CPU reads float32 denormals as zero
    assert xla_math.log(np.array([1e-40], np.float32))[0] == -np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_exp_log1p_pow_equal_jax_bit_for_bit(dtype):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    with np.errstate(all="ignore"):
        x = _log_inputs(dtype)
        assert ulps(xla_math.log(x), np.asarray(jax.jit(jnp.log)(x))).max() == 0
        x = _exp_inputs(dtype)
        assert ulps(xla_math.exp(x), np.asarray(jax.jit(jnp.exp)(x))).max() == 0
        x = np.random.default_rng(7).uniform(-1, 4, 50_000).astype(dtype)
        got = xla_math.log1p(np, x, xla_math.log)
        assert ulps(got, np.asarray(jax.jit(jnp.log1p)(x))).max() == 0
        base = np.random.default_rng(8).random(20_000).astype(dtype)
        power = (1 / np.random.default_rng(9).uniform(0.01, 1, 20_000)).astype(dtype)
        # float32 pow: float64's rounded once more, where XLA calls powf (an ulp on ~0.1%)
        assert ulps(xla_math.pow(base, power),
                    np.asarray(jax.jit(jnp.power)(base, power))).max() <= (
                        1 if dtype == np.float32 else 0)


def test_rows_differentiate_as_log_exp_pow():
    import functrans as ft
    x = np.array([0.3, 1.7, 4.0])
    np.testing.assert_allclose(ft.grad(lambda v: xla_log(v).sum())(x), 1 / x, rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda v: xla_exp(v).sum())(x), np.exp(x), rtol=1e-15)
    y = np.array([0.5, 2.0, -1.5])
    np.testing.assert_allclose(ft.grad(lambda v: xla_pow(v, y).sum())(x), y * x ** (y - 1),
                               rtol=1e-14)
    np.testing.assert_allclose(ft.grad(lambda w: xla_pow(x, w).sum())(y), np.log(x) * x ** y,
                               rtol=1e-14)
