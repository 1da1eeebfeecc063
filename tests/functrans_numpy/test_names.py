"""numpy names for scientific code (r_, c_, append, rot90, rollaxis, gradient, partition,
median/nanmedian/percentile/quantile, logaddexp2, angle, einsum's interleaved form, trapezoid,
interp, polyval, histogram, unravel_index) and functrans.scipy.signal / integrate: values
against numpy and scipy, derivatives against JAX (recorded in names_jax_fixtures.json by
names_programs.py, and live when JAX is installed) and float64 central differences."""

import json

import numpy as np
import pytest
from names_programs import FIXTURES, PROGRAMS, observe

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.integrate as fsi
import functrans.scipy.signal as fss
from functrans.errors import ArgumentError, ShapeError

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)["programs"]

KEYS = ("value", "jacobian", "hessian", "vmap_grad")


def array(rec):
    return np.array(rec["values"], rec["dtype"]).reshape(rec["shape"])


def assert_close(got, want, what):
    got = np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_equals_recorded_jax(name):
    got = observe(ft, fnp, fss, name)
    for k in KEYS:
        assert_close(got[k], array(RECORDED[name][k]), f"{name} {k}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.signal as jsig
    got, want = observe(ft, fnp, fss, name), observe(jax, jnp, jsig, name)
    for k in KEYS:
        assert_close(got[k], np.asarray(want[k]), f"{name} {k}")


def _numpy_signal():
    scipy_signal = pytest.importorskip("scipy.signal")
    return scipy_signal


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_value_equals_numpy(name):
    prog, x = PROGRAMS[name]
    sig = _numpy_signal() if "conv" in name or "corr" in name else None
    want = prog(np, sig, np.asarray(x))
    for f in (lambda v: prog(fnp, fss, v), ft.jit(lambda v: prog(fnp, fss, v))):
        got = np.asarray(f(np.asarray(x)))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_derivatives_match_central_differences(name):
    prog, x = PROGRAMS[name]
    x = np.asarray(x, float)
    f = lambda v: prog(fnp, fss, v)
    eps = 1e-6
    jac = np.asarray(ft.jacfwd(f)(x))
    g = ft.grad(lambda v: fnp.sum(f(v) * np.cos(np.arange(np.size(f(x)))).reshape(
        np.shape(f(x)))))
    hess = np.asarray(ft.jacrev(g)(x))
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        d1 = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
        np.testing.assert_allclose(jac.reshape(d1.shape + (-1,))[..., i], d1, atol=1e-6)
        d2 = (np.asarray(g(x + e)) - np.asarray(g(x - e))) / (2 * eps)
        np.testing.assert_allclose(hess.reshape(x.shape + (-1,))[..., i], d2, atol=1e-5)


def test_quantiles_equal_numpy_on_every_method_axis_and_nan():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4, 5))
    an = a.copy()
    an[0, 1, 2] = an[1, 2, 3] = np.nan
    an[2, :, 1] = np.nan
    for q in (0.3, [0.0, 0.25, 1.0]):
        for axis in (None, 1, (0, 2)):
            for method in ("linear", "lower", "higher", "nearest", "midpoint"):
                for kd in (False, True):
                    for f, g, x in ((fnp.quantile, np.quantile, a),
                                    (fnp.quantile, np.quantile, an)):
                        want = g(x, q, axis=axis, method=method, keepdims=kd)
                        got = f(x, q, axis=axis, method=method, keepdims=kd)
                        assert got.shape == want.shape
                        np.testing.assert_allclose(got, want, rtol=1e-14)
                    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if axis == 1 \
                            else _nothing():
                        want = np.nanquantile(an, q, axis=axis, method=method, keepdims=kd)
                    got = fnp.nanquantile(an, q, axis=axis, method=method, keepdims=kd)
                    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(fnp.nanpercentile(an, 40, axis=0), np.nanpercentile(an, 40, axis=0))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_bad_quantiles_and_methods_say_the_fix():
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        fnp.quantile(np.ones(3), 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        fnp.percentile(np.ones(3), -1)
    with pytest.raises(ArgumentError, match="use one of"):
        fnp.quantile(np.ones(3), 0.5, method="weibull")


def test_partition_puts_kth_in_place_and_differentiates_like_sort():
    a = np.random.default_rng(1).normal(size=(4, 6))
    for kth in (0, 2, -1, (1, 3)):
        got, want = fnp.partition(a, kth), np.partition(a, kth)
        for k in np.atleast_1d(kth) % 6:
            np.testing.assert_array_equal(got[:, k], want[:, k])
            assert (got[:, :k] <= got[:, k:k + 1]).all() and (got[:, k:] >= got[:, k:k + 1]).all()
    g = ft.grad(lambda x: fnp.partition(x, 2)[2])(np.array([3.0, 1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="out of bounds"):
        fnp.partition(np.ones(3), 3)


def test_histogram_equals_numpy_eager_and_traced():
    x = np.random.default_rng(2).normal(size=30)
    for kw in ({}, {"bins": 4}, {"bins": 3, "range": (-1.0, 1.0)}, {"bins": [-2, 0, 0.5, 2]},
               {"weights": np.arange(30.0)}, {"bins": 5, "density": True}):
        want = np.histogram(x, **kw)
        for f in (lambda v: fnp.histogram(v, **kw), ft.jit(lambda v: fnp.histogram(v, **kw))):
            h, e = f(x)
            assert np.asarray(h).dtype == want[0].dtype
            np.testing.assert_allclose(h, want[0], rtol=1e-14)
            np.testing.assert_allclose(e, want[1], rtol=1e-14)
    # counts have no derivative; weights do
    g = ft.grad(lambda w: fnp.sum(fnp.histogram(x, bins=3, weights=w)[0] * np.arange(3.0)))
    bins = np.minimum(((x - x.min()) / (x.max() - x.min()) * 3).astype(int), 2)
    np.testing.assert_allclose(g(np.ones(30)), bins.astype(float))


def test_unravel_index_equals_numpy_and_clips_traced_indices_as_jax():
    idx = np.array([0, 5, 23, 7])
    for order in ("C", "F"):
        want = np.unravel_index(idx, (2, 3, 4), order=order)
        for f in (lambda i: fnp.unravel_index(i, (2, 3, 4), order=order),
                  ft.jit(lambda i: fnp.unravel_index(i, (2, 3, 4), order=order))):
            for a, b in zip(f(idx), want):
                np.testing.assert_array_equal(a, b)
    got = ft.jit(lambda i: fnp.unravel_index(i, (2, 3)))(np.array([-1, 99]))
    np.testing.assert_array_equal(np.stack(got), [[1, 1], [2, 2]])
    with pytest.raises(ValueError):
        fnp.unravel_index(99, (2, 3))


def test_angle_of_real_values_and_its_zero_derivative():
    x = np.array([-3.0, -0.0, 0.0, 2.0, np.nan, -np.inf])
    np.testing.assert_array_equal(fnp.angle(x), np.angle(x))
    np.testing.assert_array_equal(fnp.angle(x, deg=True), np.angle(x, deg=True))
    assert fnp.angle(np.arange(3)).dtype == np.float64
    assert float(ft.grad(fnp.angle)(-2.0)) == 0.0


def test_logaddexp2_at_infinities_and_ties():
    x = np.array([-np.inf, np.inf, 1.0, -1000.0, 3.0])
    y = np.array([-np.inf, 2.0, 1.0, -1000.0, np.nan])
    np.testing.assert_allclose(fnp.logaddexp2(x, y), np.logaddexp2(x, y), rtol=1e-14)
    assert float(ft.grad(fnp.logaddexp2)(1.0, 1.0)) == 0.5


def test_einsum_interleaved_form_and_optimize_values():
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(5, 2, 3))
    for args in ((a, [0, 1], b, [1, 2]), (a, [0, 1], b, [1, 2], [2, 0]), (a, [1, 0]),
                 (c, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2])):
        np.testing.assert_allclose(fnp.einsum(*args), np.einsum(*args), rtol=1e-13)
    for opt in (True, False, "greedy", "optimal"):
        np.testing.assert_allclose(fnp.einsum("ij,jk->ik", a, b, optimize=opt), a @ b)
    with pytest.raises(ValueError, match="sublist entries"):
        fnp.einsum(a, ["i", "j"])


def test_index_tricks_equal_numpy():
    A = np.arange(6.0).reshape(2, 3)
    cases = [lambda m: m.r_[1:4, 0, np.zeros(2)], lambda m: m.r_["-1", A, A],
             lambda m: m.r_["0,2", [1, 2, 3], [4, 5, 6]], lambda m: m.r_["1,2,0", [1, 2], [4, 5]],
             lambda m: m.c_[[1, 2], [3, 4]], lambda m: m.c_[A, A], lambda m: m.r_[-1:1:5j, 2],
             lambda m: m.r_[np.ones(2, np.float32), 2.5]]
    for case in cases:
        got, want = case(fnp), case(np)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ArgumentError, match="first item"):
        fnp.r_[A, "0"]
    with pytest.raises(ArgumentError, match="numpy.matrix"):
        fnp.r_["r", A]


def test_shape_helpers_equal_numpy_and_do_not_alias():
    a = np.arange(24.0).reshape(2, 3, 4)
    for k in range(-1, 5):
        for axes in ((0, 1), (2, 0), (-1, 1)):
            np.testing.assert_array_equal(fnp.rot90(a, k, axes), np.rot90(a, k, axes))
    for axis in range(-3, 3):
        for start in range(-3, 4):
            np.testing.assert_array_equal(fnp.rollaxis(a, axis, start), np.rollaxis(a, axis, start))
    assert not np.shares_memory(fnp.rot90(a, 0), a)
    assert not np.shares_memory(fnp.rollaxis(a, 0, 1), a)
    np.testing.assert_array_equal(fnp.append(a, a, axis=1), np.append(a, a, axis=1))
    np.testing.assert_array_equal(fnp.row_stack([a[0], a[1]]), np.vstack([a[0], a[1]]))
    with pytest.raises(ValueError, match="axes"):
        fnp.rot90(a, 1, (0, 0))


def test_calculus_helpers_equal_numpy():
    rng = np.random.default_rng(4)
    f = rng.normal(size=(5, 6))
    xs, ys = np.cumsum(rng.uniform(0.5, 1.5, 6)), np.cumsum(rng.uniform(0.5, 1.5, 5))
    for args, kw in (((), {}), ((ys, xs), {}), ((xs,), {"axis": -1}), ((), {"edge_order": 2}),
                     ((ys, xs), {"edge_order": 2})):
        got, want = fnp.gradient(f, *args, **kw), np.gradient(f, *args, **kw)
        for u, v in zip(got if isinstance(got, tuple) else [got],
                        want if isinstance(want, tuple | list) else [want]):
            np.testing.assert_allclose(u, v, rtol=1e-13)
    for kw in ({}, {"dx": 0.3}, {"x": xs}, {"x": ys, "axis": 0}, {"x": rng.normal(size=(5, 6))}):
        np.testing.assert_allclose(fnp.trapezoid(f, **kw), np.trapezoid(f, **kw), rtol=1e-13)
        np.testing.assert_allclose(fsi.trapezoid(f, **kw), np.trapezoid(f, **kw), rtol=1e-13)
    xp, fp, x = np.array([0.0, 1.0, 1.0, 2.5, 4.0]), np.array([1.0, 3.0, 2.0, 0.0, 5.0]), \
        np.linspace(-1, 5, 25)
    np.testing.assert_allclose(fnp.interp(x, xp, fp, left=-7.0), np.interp(x, xp, fp, left=-7.0))
    np.testing.assert_allclose(fnp.interp(x, [0, 1, 2.5, 3], [1.0, 3, 0, 2], period=3.5),
                               np.interp(x, [0, 1, 2.5, 3], [1.0, 3, 0, 2], period=3.5))
    np.testing.assert_array_equal(fnp.polyval([3, 0, 1], np.arange(3)),
                                  np.polyval([3, 0, 1], np.arange(3)))
    with pytest.raises(ShapeError, match="different lengths"):
        fnp.interp(x, xp, fp[:3])
    with pytest.raises(ValueError, match="at least 2"):
        fnp.gradient(np.ones(1))


def test_convolutions_equal_scipy_on_every_mode():
    scipy_signal = _numpy_signal()
    rng = np.random.default_rng(5)
    for sa, sb in (((7,), (3,)), ((3,), (7,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)),
                   ((3, 4, 2), (2, 2, 2)), ((5,), (5,))):
        a, b = rng.normal(size=sa), rng.normal(size=sb)
        for mode in ("full", "same", "valid"):
            for f, g in ((fss.convolve, scipy_signal.convolve),
                         (fss.correlate, scipy_signal.correlate)):
                want = g(a, b, mode=mode)
                np.testing.assert_allclose(f(a, b, mode=mode), want, rtol=1e-12, atol=1e-13)
    with pytest.raises(ShapeError, match="at least as large"):
        fss.convolve(np.ones((4, 2)), np.ones((2, 3)), mode="valid")
    with pytest.raises(ShapeError, match="same dimensionality"):
        fss.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ArgumentError, match="mode"):
        fss.correlate(np.ones(3), np.ones(2), mode="circular")
