"""functrans.numpy reductions against numpy (values and dtypes), eagerly and traced, and their
derivatives against finite differences and closed forms (ties, zeros)."""

import warnings

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp
from functrans.test_util import check_grads

RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5, np.dtype(np.float16): 2e-3}


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, shape).astype(dtype) if np.issubdtype(
            dtype, np.signedinteger) else rng.integers(0, 4, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def traced(f, *args):
    """f evaluated through its jaxpr (make_jaxpr + check_jaxpr + eval_jaxpr)."""
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs[0] if len(outs) == 1 else tuple(outs)


def assert_matches(out, ref):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    if np.issubdtype(ref.dtype, np.inexact):
        np.testing.assert_allclose(out, ref, rtol=RTOL.get(ref.dtype, 1e-12), atol=1e-12)
    else:
        np.testing.assert_array_equal(out, ref)


def both(fn_f, fn_np, x, **kw):
    ref = fn_np(x, **kw)
    assert_matches(fn_f(x, **kw), ref)
    assert_matches(traced(lambda y: fn_f(y, **kw), x), ref)


SHAPES_AXES = [
    ((), [None]),
    ((4,), [None, 0, -1, (0,)]),
    ((3, 4), [None, 0, 1, -1, (0, 1), (1, 0)]),
    ((2, 3, 4), [None, 1, (0, 2), (-1, 0), ()]),
]
DTYPES = [np.float64, np.float32, np.int32, np.int8, np.uint8, np.bool_]


def _cases():
    for shape, axes in SHAPES_AXES:
        for axis in axes:
            for keepdims in (False, True):
                yield shape, axis, keepdims


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "ptp",
                                  "all", "any"])
def test_axis_reductions_match_numpy(name, dtype):
    if name in ("var", "std") and dtype == np.bool_:
        pytest.skip("numpy's var rejects bool")
    if name == "ptp" and dtype == np.bool_:
        pytest.skip("numpy's ptp rejects bool")
    f, g = getattr(fnp, name), getattr(np, name)
    for shape, axis, keepdims in _cases():
        x = sample(shape, dtype)
        both(f, g, x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_var_std_ddof(ddof):
    x = sample((3, 5), np.float64)
    for axis in (None, 0, 1):
        both(fnp.var, np.var, x, axis=axis, ddof=ddof)
        both(fnp.std, np.std, x, axis=axis, ddof=ddof, keepdims=True)
    assert_matches(fnp.var(x, correction=1), np.var(x, ddof=1))


def test_var_with_too_few_samples_gives_numpy_inf_nan():
    x = sample((1, 3), np.float64)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(fnp.var(x, axis=0, ddof=1), np.var(x, axis=0, ddof=1))


@pytest.mark.parametrize("dtype,expected", [(np.int8, np.int64), (np.uint8, np.uint64),
                                            (np.bool_, np.int64), (np.int32, np.int64),
                                            (np.float32, np.float32)])
def test_accumulator_dtypes(dtype, expected):
    x = sample((4,), dtype)
    for f in (fnp.sum, fnp.prod, fnp.cumsum, fnp.cumprod):
        assert np.asarray(f(x)).dtype == expected
    assert np.asarray(fnp.sum(x, dtype=np.float32)).dtype == np.float32
    assert np.asarray(fnp.mean(x)).dtype == np.mean(x).dtype


def test_mean_float16_accumulates_in_float32():
    x = np.full(3000, 0.1, np.float16)
    out, ref = fnp.mean(x), np.mean(x)
    assert np.asarray(out).dtype == np.float16
    assert out == ref


def test_mean_of_ints_with_int_dtype():
    x = np.array([1, 2, 4])
    assert_matches(fnp.mean(x, dtype=np.int64), np.mean(x, dtype=np.int64))


@pytest.mark.parametrize("name", ["sum", "prod", "all", "any", "count_nonzero"])
def test_size_zero_reductions(name):
    x = np.zeros((0, 3))
    for axis in (None, 0, 1):
        ref = getattr(np, name)(x, axis=axis)
        assert_matches(getattr(fnp, name)(x, axis=axis), ref)
        assert_matches(traced(lambda y: getattr(fnp, name)(y, axis=axis), x), ref)


def test_size_zero_mean_is_nan_like_numpy():
    x = np.zeros((0, 3))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(fnp.mean(x, axis=0), np.mean(x, axis=0))


def test_max_of_empty_raises_unless_initial():
    x = np.zeros((0, 3))
    with pytest.raises(ValueError, match="initial="):
        fnp.max(x, axis=0)
    with pytest.raises(ValueError, match="initial="):
        ft.make_jaxpr(lambda y: fnp.min(y))(x)
    both(fnp.max, np.max, x, axis=0, initial=-1.0)
    both(fnp.max, np.max, x, axis=1, initial=-1.0)
    both(fnp.min, np.min, np.ones((2, 3)), axis=1, initial=0.5)
    both(fnp.max, np.max, np.ones((2, 3)), initial=0.5, keepdims=True)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_argmax_argmin_match_numpy(name, dtype):
    f, g = getattr(fnp, name), getattr(np, name)
    for shape in [(), (5,), (3, 4), (2, 3, 4)]:
        x = sample(shape, dtype)
        for axis in [None] + list(range(-len(shape), len(shape))):
            for keepdims in (False, True):
                both(f, g, x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_ties_and_nan_take_the_first_like_numpy(name):
    f, g = getattr(fnp, name), getattr(np, name)
    x = np.array([[1.0, 3.0, 3.0, 1.0], [2.0, np.nan, 0.0, np.nan], [5.0, 5.0, 5.0, 5.0]])
    for axis in (None, 0, 1):
        both(f, g, x, axis=axis)


def test_argmax_of_empty_raises():
    with pytest.raises(ValueError, match="empty"):
        fnp.argmax(np.zeros((0,)))
    with pytest.raises(ValueError, match="empty"):
        ft.make_jaxpr(lambda y: fnp.argmin(y, axis=0))(np.zeros((0, 2)))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_scans_match_numpy(name, dtype):
    f, g = getattr(fnp, name), getattr(np, name)
    for shape in [(), (5,), (3, 4), (2, 3, 4), (0, 3)]:
        x = sample(shape, dtype)
        for axis in [None] + list(range(-len(shape), len(shape))):
            both(f, g, x, axis=axis)


def test_count_nonzero_and_average():
    x = sample((3, 4), np.int32)
    for axis in (None, 0, 1):
        assert_matches(fnp.count_nonzero(x, axis=axis), np.asarray(np.count_nonzero(x, axis)))
    y = sample((3, 4), np.float64)
    w = np.array([1.0, 2.0, 0.5, 3.0])
    both(fnp.average, np.average, y)
    both(fnp.average, np.average, y, axis=1, weights=w)
    both(fnp.average, np.average, y, axis=0, weights=np.abs(y) + 0.1)
    out, scl = fnp.average(y, axis=1, weights=w, returned=True)
    ref, ref_scl = np.average(y, axis=1, weights=w, returned=True)
    assert_matches(out, ref)
    assert_matches(scl, ref_scl)
    with pytest.raises(ZeroDivisionError):
        fnp.average(y, axis=1, weights=np.zeros(4))


def test_axis_errors_name_the_problem():
    x = np.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        fnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        fnp.max(x, axis=(0, -2))
    with pytest.raises(np.exceptions.AxisError):
        fnp.argmax(x, axis=-3)


@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
def test_single_axis_functions_reject_an_axis_tuple_like_numpy(name):
    # these work along one axis: a tuple used to be read as its first entry, silently
    x = sample((2, 3, 4), np.float64)
    with pytest.raises(TypeError):
        getattr(np, name)(x, axis=(0, 1))
    with pytest.raises(TypeError, match="single integer"):
        getattr(fnp, name)(x, axis=(0, 1))
    with pytest.raises(TypeError, match="single integer"):
        ft.jit(lambda y: getattr(fnp, name)(y, axis=(0,)))(x)
    # a 0-d array counts as 1-d: axis 0 and -1 are fine, 1 is out of bounds (numpy's rule)
    z = np.array(2.5)
    for axis in (0, -1):
        assert_matches(getattr(fnp, name)(z, axis=axis), getattr(np, name)(z, axis=axis))
    with pytest.raises(np.exceptions.AxisError):
        getattr(np, name)(z, axis=1)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        getattr(fnp, name)(z, axis=1)


def test_a_non_integer_axis_is_named():
    with pytest.raises(TypeError, match="axis must be None, an integer or a tuple"):
        fnp.sum(np.ones(3), axis=1.0)


def test_tracer_methods():
    x = sample((3, 4), np.float64)

    def f(y):
        return (y.sum(), y.sum(axis=0, keepdims=True), y.mean(1), y.var(ddof=1), y.std(0),
                y.prod(1), y.max(), y.min(axis=1), y.argmax(), y.argmin(axis=0), y.cumsum(1),
                y.cumprod(), y.all(), y.any(axis=1), y.ptp(0))

    refs = (x.sum(), x.sum(axis=0, keepdims=True), x.mean(1), x.var(ddof=1), x.std(0),
            x.prod(1), x.max(), x.min(axis=1), x.argmax(), x.argmin(axis=0), x.cumsum(1),
            x.cumprod(), x.all(), x.any(axis=1), np.ptp(x, 0))
    for out, ref in zip(traced(f, x), refs):
        assert_matches(out, ref)


# --- derivatives -----------------------------------------------------------------------------

GRAD_FUNS = [
    ("sum", lambda x: fnp.sum(x, axis=(0, 2))),
    ("mean", lambda x: fnp.mean(x, axis=1, keepdims=True)),
    ("var", lambda x: fnp.var(x, axis=0, ddof=1)),
    ("std", lambda x: fnp.std(x)),
    ("prod", lambda x: fnp.prod(x, axis=-1)),
    ("max", lambda x: fnp.max(x, axis=(1, 2))),
    ("min", lambda x: fnp.min(x, axis=0, keepdims=True)),
    ("max-initial", lambda x: fnp.max(x, axis=1, initial=0.0)),
    ("ptp", lambda x: fnp.ptp(x, axis=2)),
    ("cumsum", lambda x: fnp.cumsum(x, axis=1)),
    ("cumprod", lambda x: fnp.cumprod(x, axis=2)),
    ("cumsum-flat", lambda x: fnp.cumsum(x)),
    ("average", lambda x: fnp.average(x, axis=2, weights=np.array([1.0, 2.0, 3.0, 0.5]))),
]


@pytest.mark.parametrize("name,f", GRAD_FUNS, ids=[n for n, _ in GRAD_FUNS])
def test_grads_match_finite_differences(name, f):
    rng = np.random.default_rng(3)
    # distinct magnitudes away from 0: no ties for max/min and no kink in the max with 0
    x = rng.permutation(np.linspace(0.3, 2.0, 24)).reshape(2, 3, 4) * rng.choice([-1, 1], 24
                                                                                 ).reshape(2, 3, 4)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_max_gradient_is_shared_among_ties_like_jax():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(ft.grad(fnp.max)(x), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(ft.grad(fnp.min)(np.array([1.0, 1.0, 1.0])), [1 / 3] * 3)
    m = np.array([[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]])
    g = ft.grad(lambda y: fnp.sum(fnp.max(y, axis=1) * np.array([1.0, 10.0])))(m)
    np.testing.assert_allclose(g, [[0.5, 0.5, 0], [0, 5, 5]])
    # a tie with `initial` shares too (JAX's max(result, initial))
    np.testing.assert_allclose(ft.grad(lambda y: fnp.max(y, initial=3.0))(x), [0, .25, .25, 0])
    _, t = ft.jvp(lambda y: fnp.max(y, axis=0), (m,), (np.ones_like(m),))
    np.testing.assert_allclose(t, [1.0, 1.0, 1.0])


def _prod_of_others(x, axis):
    """Closed form d prod(x) / d x_i = prod_{j != i} x_j, by explicit deletion."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty_like(x)
    for i in range(x.shape[-1]):
        out[..., i] = np.prod(np.delete(x, i, axis=-1), axis=-1)
    return np.moveaxis(out, -1, axis)


def test_prod_gradient_is_exact_with_zeros():
    x = np.array([[1.5, 0.0, 3.0, 0.0, 2.0], [2.0, 0.0, 1.0, 5.0, -1.0],
                  [1.0, 2.0, 3.0, 4.0, 0.5]])
    g = ft.grad(lambda y: fnp.sum(fnp.prod(y, axis=1)))(x)
    np.testing.assert_array_equal(g, _prod_of_others(x, 1))
    g0 = ft.grad(lambda y: fnp.sum(fnp.prod(y, axis=0)))(x)
    np.testing.assert_allclose(g0, _prod_of_others(x, 0))
    assert np.all(np.isfinite(ft.hessian(lambda y: fnp.prod(y))(x[1])))
    check_grads(lambda y: fnp.prod(y, axis=1), (x,), order=2)
    check_grads(lambda y: fnp.cumprod(y, axis=1), (x,), order=2)


def test_prod_of_empty_axis_has_zero_derivative():
    x = np.zeros((3, 0))
    g = ft.grad(lambda y: fnp.sum(fnp.prod(y, axis=1)))(x)
    assert g.shape == (3, 0)
    _, t = ft.jvp(lambda y: fnp.prod(y, axis=1), (x,), (x,))
    assert_matches(t, np.zeros(3))


def test_cumsum_transpose_is_the_reverse_cumsum():
    x = np.arange(5.0)
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.0])
    _, f_vjp = ft.vjp(fnp.cumsum, x)
    np.testing.assert_allclose(f_vjp(w)[0], np.cumsum(w[::-1])[::-1])


def test_nondifferentiable_reductions_give_zero_tangents():
    x = sample((3, 4), np.float64)
    for f in (fnp.argmax, fnp.all, lambda y: fnp.count_nonzero(y, axis=1)):
        out, t = ft.jvp(f, (x,), (np.ones_like(x),))
        assert_matches(out, f(x))


def test_reductions_under_vmap_match_a_loop():
    x = sample((4, 3, 5), np.float64)
    for f in (lambda y: fnp.var(y, axis=1, ddof=1), lambda y: fnp.argmax(y),
              lambda y: fnp.prod(y, axis=0, keepdims=True), lambda y: fnp.cumsum(y),
              lambda y: fnp.max(y, axis=1, initial=0.0)):
        for in_axis in (0, 2):
            ref = np.stack([f(np.take(x, k, axis=in_axis)) for k in range(x.shape[in_axis])])
            np.testing.assert_allclose(ft.vmap(f, in_axes=in_axis)(x), ref, rtol=1e-12)


def test_parity_with_jax_on_ties_and_zeros():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        _check_parity_with_jax(jax, jnp)


def _check_parity_with_jax(jax, jnp):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 2.0, 2.0], [-1.0, -1.0, -1.0, 4.0]])
    for f, jf in [(lambda y: fnp.sum(fnp.max(y, axis=1)), lambda y: jnp.sum(jnp.max(y, axis=1))),
                  (lambda y: fnp.sum(fnp.min(y, axis=0)), lambda y: jnp.sum(jnp.min(y, axis=0))),
                  (lambda y: fnp.max(y, initial=4.0), lambda y: jnp.max(y, initial=4.0)),
                  (lambda y: fnp.sum(fnp.prod(y, axis=1)), lambda y: jnp.sum(jnp.prod(y, 1))),
                  (lambda y: fnp.sum(fnp.cumprod(y, axis=1)),
                   lambda y: jnp.sum(jnp.cumprod(y, axis=1)))]:
        np.testing.assert_allclose(ft.grad(f)(x), np.asarray(jax.grad(jf)(x)), rtol=1e-12)
        np.testing.assert_allclose(ft.hessian(f)(x), np.asarray(jax.hessian(jf)(x)),
                                   rtol=1e-12, atol=1e-12)


try:
    from hypothesis import given
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a test extra
    given = None

if given is not None:
    @st.composite
    def shape_and_axes(draw):
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
        axes = draw(st.one_of(st.none(), st.lists(st.integers(0, max(len(shape) - 1, 0)),
                                                  unique=True, max_size=len(shape))))
        axis = None if axes is None else tuple(a - len(shape) * (i % 2) for i, a in
                                               enumerate(axes))
        return shape, axis, draw(st.booleans())

    @given(shape_and_axes(), st.sampled_from(["sum", "prod", "max", "min", "mean", "var"]))
    def test_property_reductions_match_numpy(sak, name):
        shape, axis, keepdims = sak
        x = sample(shape, np.float64, seed=len(shape))
        both(getattr(fnp, name), getattr(np, name), x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("kw", [{}, dict(n=2), dict(n=0), dict(n=5), dict(axis=0),
                                dict(prepend=1.5), dict(append=np.ones((3, 2)), n=3),
                                dict(prepend=np.zeros((1, 4)), axis=0, append=2.0)])
def test_diff_matches_numpy_and_jax(kw):
    a = np.random.default_rng(0).normal(size=(3, 4))
    same_as_numpy(lambda x: fnp.diff(x, **kw), lambda x: np.diff(x, **kw), a)
    jnp = jax_x64().numpy
    derivatives_like_jax(lambda x: fnp.diff(x, **kw) ** 2, lambda x: jnp.diff(x, **kw) ** 2, a)


def test_diff_of_bools_and_ints_and_errors():
    b = np.array([True, True, False, True])
    same_as_numpy(fnp.diff, np.diff, b)
    same_as_numpy(fnp.diff, np.diff, np.array([1, 5, 2], np.int8))
    with pytest.raises(ValueError, match="non-negative"):
        fnp.diff(b, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        fnp.diff(np.float64(1.0))


_MASK = np.array([[True, False, True, True], [False, True, False, True],
                  [True, True, False, False]])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sum_and_mean_with_where(axis):
    a = np.random.default_rng(1).normal(size=(3, 4))
    jnp = jax_x64().numpy
    for mask in (_MASK, np.ones(4, bool)):  # the second broadcasts
        for keepdims in (False, True):
            for f, g in ((fnp.sum, np.sum), (fnp.mean, np.mean)):
                same_as_numpy(lambda x: f(x, axis=axis, keepdims=keepdims, where=mask),
                               lambda x: g(x, axis=axis, keepdims=keepdims, where=mask), a,
                               vmap=False)
    for f, g in ((fnp.sum, jnp.sum), (fnp.mean, jnp.mean)):
        derivatives_like_jax(lambda x: f(x, axis=axis, where=_MASK),
                              lambda x: g(x, axis=axis, where=_MASK), a)


def test_sum_and_mean_with_where_edges():
    a = np.random.default_rng(1).normal(size=(3, 4))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # numpy: "Mean of empty slice"
        want = np.mean(a, axis=0, where=a > 5)
        got = fnp.mean(a, axis=0, where=a > 5)
    np.testing.assert_array_equal(got, want)                # nan, as numpy
    mask = np.array([True, False, True])
    assert fnp.sum(np.arange(3), initial=5, where=mask) == np.sum(np.arange(3), initial=5,
                                                                  where=mask)
    assert fnp.mean(np.arange(3), where=mask).dtype == np.float64
    # a traced mask, batched
    got = ft.vmap(lambda x: fnp.mean(x, where=x > 0))(a)
    np.testing.assert_allclose(got, np.mean(a, axis=1, where=a > 0), rtol=1e-14)
    with pytest.raises(TypeError, match="boolean"):
        fnp.sum(a, where=np.ones(4))


def test_std_over_one_element_has_derivative_zero():
    # std of one element is identically 0, so its derivative is 0 (autograd's answer; JAX's
    # sqrt'(0) * 0 gives nan); over several equal elements it stays nan, a true cusp
    assert float(ft.grad(fnp.std)(3.5)) == 0.0
    np.testing.assert_array_equal(ft.jacfwd(lambda v: fnp.std(v, axis=0))(np.ones((1, 3))),
                                  np.zeros((3, 1, 3)))
    assert np.isnan(fnp.std(np.array([np.nan])))
    with np.errstate(all="ignore"):
        assert np.isnan(ft.grad(fnp.std)(np.ones(2))).all()
