"""functrans.numpy's elementwise functions against numpy itself (values and result dtypes,
eagerly and as traced programs), the tracer operators, erf against math.erf, and derivatives
where the rules have special cases (kinks, ties, pow at 0), against closed forms (and JAX and
PyTorch when installed)."""

import math

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError, ShapeError
from functrans.primitives import elementwise as E
from functrans.test_util import check_grads

# --- samplers: (rng, shape, dtype) -> array inside the function's domain ----------------------

def real(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3, 4, shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(-2.5, 2.5, shape).astype(dtype)


def positive(rng, shape, dtype):
    if np.dtype(dtype).kind in "iub":
        return rng.integers(1, 4, shape).astype(dtype)
    return rng.uniform(0.1, 3.0, shape).astype(dtype)


def unit(rng, shape, dtype):
    if np.dtype(dtype).kind in "iub":
        return np.zeros(shape, dtype)
    return rng.uniform(-0.95, 0.95, shape).astype(dtype)


def above_one(rng, shape, dtype):
    if np.dtype(dtype).kind in "iub":
        return rng.integers(1, 4, shape).astype(dtype)
    return rng.uniform(1.0, 4.0, shape).astype(dtype)


def nonzero(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.choice([-3, -2, -1, 1, 2, 3], shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return np.ones(shape, bool)
    return (rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.5, shape)).astype(dtype)


def specials(rng, shape, dtype):
    x = real(rng, shape, dtype)
    if np.dtype(dtype).kind == "f" and x.size:
        flat = x.reshape(-1)
        flat[::3] = np.inf
        flat[1::4] = -np.inf
        flat[2::5] = np.nan
    return x


def halves(rng, shape, dtype):
    """Values on .5 and nearby: where rounding rules differ."""
    if np.dtype(dtype).kind in "iub":
        return real(rng, shape, dtype)
    return (rng.integers(-6, 6, shape) * 0.5 + rng.choice([0.0, 0.01, -0.01], shape)).astype(
        dtype)


def small_nonneg(rng, shape, dtype):
    if np.dtype(dtype).kind in "iub":
        return rng.integers(0, 4, shape).astype(dtype)
    return rng.uniform(-2.0, 3.0, shape).astype(dtype)


# --- one table row per numpy name --------------------------------------------------------------

UNARY = {
    "sin": real, "cos": real, "tan": unit, "arcsin": unit, "arccos": unit, "arctan": real,
    "sinh": real, "cosh": real, "tanh": real, "arcsinh": real, "arccosh": above_one,
    "arctanh": unit, "asin": unit, "acos": unit, "atan": real, "asinh": real,
    "acosh": above_one, "atanh": unit, "exp": real, "exp2": real, "expm1": real,
    "log": positive, "log2": positive, "log10": positive, "log1p": positive, "sqrt": positive,
    "cbrt": real, "square": real, "reciprocal": nonzero, "negative": real, "positive": real,
    "absolute": real, "abs": real, "fabs": real, "sign": real, "floor": halves, "ceil": halves,
    "trunc": halves, "rint": halves, "round": halves, "around": halves, "deg2rad": real,
    "rad2deg": real, "radians": real, "degrees": real, "isnan": specials, "isinf": specials,
    "isfinite": specials, "logical_not": real,
}
INT_ONLY_UNARY = {"bitwise_not": real, "invert": real, "bitwise_invert": real}

BINARY = {
    "add": (real, real), "subtract": (real, real), "multiply": (real, real),
    "divide": (real, nonzero), "true_divide": (real, nonzero),
    "floor_divide": (real, nonzero), "remainder": (real, nonzero), "mod": (real, nonzero),
    "fmod": (real, nonzero), "power": (positive, small_nonneg), "pow": (positive, small_nonneg),
    "float_power": (positive, real), "maximum": (real, real), "minimum": (real, real),
    "fmax": (specials, specials), "fmin": (specials, specials), "arctan2": (real, real),
    "atan2": (real, real), "hypot": (specials, real), "heaviside": (halves, real),
    "less": (real, real), "less_equal": (real, real), "greater": (real, real),
    "greater_equal": (real, real), "equal": (halves, halves), "not_equal": (halves, halves),
    "logical_and": (real, real), "logical_or": (real, real), "logical_xor": (real, real),
}
INT_ONLY_BINARY = {"bitwise_and": (real, real), "bitwise_or": (real, real),
                   "bitwise_xor": (real, real)}

SHAPES_1 = [(), (0,), (5,), (2, 3)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((0,), (1,)),
            ((), (2, 2)), ((3, 0), (3, 1))]
DTYPES_1 = ["float64", "float32", "int64", "int8", "bool"]
# pairs of operand kinds; Python scalar types stand for weak scalars (NEP 50)
DTYPES_2 = [("float64", "float64"), ("float32", "float32"), ("float32", "float64"),
            ("int64", "int64"), ("int32", "float32"), ("int8", "int16"), ("float32", float),
            ("int8", int), ("float32", int), ("bool", "bool")]


def _tol(dtype):
    return dict(rtol=2e-6, atol=1e-6) if np.dtype(dtype) in (np.float32, np.float16) \
        else dict(rtol=1e-13, atol=1e-14)


def _check_same(actual, expected, dtype_hint=None):
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, equal_nan=True, **_tol(expected.dtype))
    else:
        np.testing.assert_array_equal(actual, expected)


def _numpy_supports(np_fn, *args):
    try:
        with np.errstate(all="ignore"):
            return np_fn(*args), True
    except TypeError:
        return None, False


def _traced(fn, arrays):
    closed = ft.make_jaxpr(fn)(*arrays)
    ft.check_jaxpr(closed)
    out, = ft.eval_jaxpr(closed.jaxpr, closed.consts, *arrays)
    return out


@pytest.mark.parametrize("dtype", DTYPES_1)
@pytest.mark.parametrize("name", sorted(UNARY) + sorted(INT_ONLY_UNARY))
def test_unary_matches_numpy(name, dtype):
    sampler = UNARY.get(name) or INT_ONLY_UNARY[name]
    if name in INT_ONLY_UNARY and np.dtype(dtype).kind == "f":
        pytest.skip("bitwise functions take integers and bools")
    fn, np_fn = getattr(fnp, name), getattr(np, name)
    rng = np.random.default_rng(0)
    for shape in SHAPES_1:
        x = sampler(rng, shape, dtype)
        expected, ok = _numpy_supports(np_fn, x)
        if not ok:
            with pytest.raises(TypeError):
                fn(x)
            return
        _check_same(fn(x), expected)
        _check_same(_traced(fn, [x]), expected)


@pytest.mark.parametrize("dtypes", DTYPES_2, ids=lambda d: "-".join(
    t if isinstance(t, str) else t.__name__ for t in d))
@pytest.mark.parametrize("name", sorted(BINARY) + sorted(INT_ONLY_BINARY))
def test_binary_matches_numpy(name, dtypes):
    sx, sy = BINARY.get(name) or INT_ONLY_BINARY[name]
    if name in INT_ONLY_BINARY and any(
            not isinstance(d, str) or np.dtype(d).kind == "f" for d in dtypes):
        pytest.skip("bitwise functions take integers and bools")
    fn, np_fn = getattr(fnp, name), getattr(np, name)
    rng = np.random.default_rng(1)
    for shape_x, shape_y in SHAPES_2:
        x = sx(rng, shape_x, dtypes[0])
        if isinstance(dtypes[1], str):
            y = sy(rng, shape_y, dtypes[1])
        else:  # a Python scalar
            y = dtypes[1](sy(rng, (), "float64" if dtypes[1] is float else "int64"))
        expected, ok = _numpy_supports(np_fn, x, y)
        if not ok:
            with pytest.raises(TypeError):
                fn(x, y)
            return
        _check_same(fn(x, y), expected)
        if isinstance(y, np.ndarray):
            _check_same(_traced(fn, [x, y]), expected)
        else:
            _check_same(_traced(lambda a: fn(a, y), [x]), expected)
        _check_same(_traced(lambda b: fn(x, b), [y]) if isinstance(y, np.ndarray)
                    else fn(x, y), expected)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_where_matches_numpy(dtype):
    rng = np.random.default_rng(2)
    for shape_c, shape_x, shape_y in [((4,), (4,), (4,)), ((2, 1), (3,), ()), ((), (2,), (2,)),
                                      ((0,), (1,), (0,))]:
        c = rng.integers(0, 2, shape_c).astype(bool)
        x, y = real(rng, shape_x, dtype), real(rng, shape_y, "float32")
        _check_same(fnp.where(c, x, y), np.where(c, x, y))
        _check_same(_traced(fnp.where, [c, x, y]), np.where(c, x, y))
        _check_same(fnp.where(c, x, 1.5), np.where(c, x, 1.5))
        _check_same(_traced(lambda a: fnp.where(c, a, 2), [x]), np.where(c, x, 2))
    ints = np.array([0, 3, -1])
    _check_same(fnp.where(ints, 1.0, 2.0), np.where(ints, 1.0, 2.0))


@pytest.mark.parametrize("args, kwargs", [
    ((0.5, 1.5), {}), ((None, 1.0), {}), ((-1.0, None), {}), ((), {"min": 0.0}),
    ((), {"max": 0.0}), ((), {"min": -1, "max": 1}), ((np.array([0.0, -1.0, 1.0]), 2.0), {}),
])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_clip_matches_numpy(args, kwargs, dtype):
    x = real(np.random.default_rng(3), (3,), dtype)
    expected = np.clip(x, *args, **kwargs)
    _check_same(fnp.clip(x, *args, **kwargs), expected)
    _check_same(_traced(lambda a: fnp.clip(a, *args, **kwargs), [x]), expected)


@pytest.mark.parametrize("decimals", [-1, 1, 2])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_round_decimals_matches_numpy(decimals, dtype):
    rng = np.random.default_rng(4)
    x = (rng.uniform(-300, 300, 20) if dtype != "int64" else rng.integers(-300, 300, 20))
    x = x.astype(dtype)
    _check_same(fnp.round(x, decimals), np.round(x, decimals))
    _check_same(_traced(lambda a: fnp.around(a, decimals), [x]), np.round(x, decimals))


def test_round_is_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    np.testing.assert_array_equal(fnp.round(x), [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0])
    np.testing.assert_array_equal(_traced(fnp.rint, [x]), np.rint(x))


def test_remainder_and_floor_divide_follow_numpy_signs():
    x = np.array([5.0, -5.0, 5.0, -5.0, 0.5])
    y = np.array([3.0, 3.0, -3.0, -3.0, 0.25])
    for f in (fnp.remainder, fnp.mod, fnp.fmod, fnp.floor_divide):
        _check_same(f(x, y), getattr(np, f.__name__)(x, y))
        _check_same(f(x.astype(int), y.astype(int) + 1), getattr(np, f.__name__)(
            x.astype(int), y.astype(int) + 1))


# --- operators on tracers ----------------------------------------------------------------------

_x = np.array([0.5, -1.25, 2.0])
_y = np.array([1.5, 0.75, -3.0])
_i = np.array([3, -2, 7])
_j = np.array([2, 5, -3])
_b = np.array([True, False, True])
_c = np.array([True, True, False])

OPERATORS = [
    # (label, function of the traced operands, operands, primitive expected in the program)
    ("add", lambda a, b: a + b, (_x, _y), "add"),
    ("radd", lambda a: 2 + a, (_x,), "add"),
    ("sub", lambda a, b: a - b, (_x, _y), "sub"),
    ("rsub", lambda a: 1.5 - a, (_x,), "sub"),
    ("mul", lambda a, b: a * b, (_x, _y), "mul"),
    ("rmul", lambda a: 3 * a, (_i,), "mul"),
    ("truediv", lambda a, b: a / b, (_x, _y), "div"),
    ("rtruediv", lambda a: 1 / a, (_i,), "div"),
    ("floordiv", lambda a, b: a // b, (_x, _y), "floor_divide"),
    ("rfloordiv", lambda a: 7 // a, (_j,), "floor_divide"),
    ("mod", lambda a, b: a % b, (_x, _y), "rem"),
    ("rmod", lambda a: 7 % a, (_j,), "rem"),
    ("int-mod", lambda a, b: a % b, (_i, _j), "rem"),
    ("pow-int", lambda a: a ** 2, (_x,), "integer_pow"),
    ("pow-neg-int", lambda a: a ** -3, (_x,), "integer_pow"),
    ("pow-float", lambda a: a ** 2.0, (_x,), "pow"),
    ("pow-half", lambda a: abs(a) ** 0.5, (_x,), "pow"),
    ("rpow", lambda a: 2.0 ** a, (_x,), "pow"),
    ("int-pow", lambda a: a ** 3, (_i,), "integer_pow"),
    ("neg", lambda a: -a, (_x,), "neg"),
    ("abs", lambda a: abs(a), (_i,), "abs"),
    ("lt", lambda a, b: a < b, (_x, _y), "lt"),
    ("le", lambda a: a <= 0.5, (_x,), "le"),
    ("gt", lambda a, b: a > b, (_i, _j), "gt"),
    ("ge", lambda a: 1 >= a, (_x,), "le"),
    ("eq", lambda a, b: a == b, (_i, _i), "eq"),
    ("ne", lambda a: a != 0.5, (_x,), "ne"),
    ("and", lambda a, b: a & b, (_b, _c), "and"),
    ("or", lambda a, b: a | b, (_i, _j), "or"),
    ("xor", lambda a, b: a ^ b, (_b, _c), "xor"),
    ("rand", lambda a: True & a, (_b,), "and"),
    ("invert-bool", lambda a: ~a, (_b,), "not"),
    ("invert-int", lambda a: ~a, (_i,), "not"),
    ("mixed-dtypes", lambda a, b: a * b + a / b, (_i, _x.astype(np.float32)), "mul"),
]


@pytest.mark.parametrize("label, fn, args, prim", OPERATORS, ids=[o[0] for o in OPERATORS])
def test_operators_on_tracers(label, fn, args, prim):
    expected = fn(*args)  # numpy's own operators on the concrete arrays
    closed = ft.make_jaxpr(fn)(*args)
    ft.check_jaxpr(closed)
    assert prim in {e.primitive.name for e in closed.eqns}, str(closed)
    out, = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    _check_same(out, expected)
    # vmap over a batch of two copies: the operator on each slice
    batched = ft.vmap(fn)(*[np.stack([a, a]) for a in args])
    _check_same(batched, np.stack([expected, expected]))


def test_unary_operators_and_divmod_on_tracers():
    def f(a, b):
        q, r = divmod(a, b)
        return +a, -a, abs(a), q, r

    closed = ft.make_jaxpr(f)(_x, _y)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, _x, _y)
    for out, expected in zip(outs, [+_x, -_x, abs(_x), _x // _y, _x % _y]):
        _check_same(out, expected)


def test_python_scalars_stay_weak_on_tracers():
    x32 = _x.astype(np.float32)
    for fn in (lambda a: a + 1.0, lambda a: 2 * a, lambda a: a ** 2, lambda a: a / 3):
        out = _traced(fn, [x32])
        assert out.dtype == np.float32


def test_hypot_second_derivatives_at_equal_magnitudes():
    # hypot is smooth wherever (x, y) != 0, |x| = |y| included: its Hessian is
    # [[y^2, -xy], [-xy, x^2]] / r^3 (JAX's max/min form splits ties and gets 0 on the diagonal)
    for x, y in [(2.0, 2.0), (-1.5, 1.5), (0.3, -0.3), (2.0, 0.6)]:
        r = math.hypot(x, y)
        want = np.array([[y * y, -x * y], [-x * y, x * x]]) / r ** 3
        got = np.array(ft.hessian(fnp.hypot, argnums=(0, 1))(x, y))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    check_grads(fnp.hypot, (np.array([2.0, -1.0, 0.5]), np.array([2.0, 1.0, -0.5])), order=3,
                modes=("fwd", "rev"))


# --- hypothesis: shapes and broadcasting --------------------------------------------------------

try:  # hypothesis is a test extra: without it these property tests are not defined
    from hypothesis import given
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:
    given = None

if given is not None:
    @given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
           name=st.sampled_from(["add", "subtract", "multiply", "maximum", "arctan2", "power",
                                 "remainder", "less"]),
           seed=st.integers(0, 2**16))
    def test_broadcasting_matches_numpy(shapes, name, seed):
        rng = np.random.default_rng(seed)
        sx, sy = BINARY[name]
        if name == "remainder":
            sy = nonzero
        x = sx(rng, shapes.input_shapes[0], "float64")
        y = sy(rng, shapes.input_shapes[1], "float64")
        fn, expected = getattr(fnp, name), getattr(np, name)(x, y)
        _check_same(fn(x, y), expected)
        _check_same(_traced(fn, [x, y]), expected)

    @given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3),
           seed=st.integers(0, 2**16))
    def test_where_broadcasting_matches_numpy(shapes, seed):
        rng = np.random.default_rng(seed)
        c = rng.integers(0, 2, shapes.input_shapes[0]).astype(bool)
        x = real(rng, shapes.input_shapes[1], "float64")
        y = real(rng, shapes.input_shapes[2], "int64")
        _check_same(fnp.where(c, x, y), np.where(c, x, y))
        _check_same(_traced(fnp.where, [c, x, y]), np.where(c, x, y))


# --- erf ----------------------------------------------------------------------------------------

def _erf_points():
    rng = np.random.default_rng(5)
    return np.concatenate([
        rng.uniform(-7, 7, 4000), rng.uniform(-1, 1, 4000), np.linspace(0.8, 0.9, 1001),
        np.logspace(-300, 1, 1000), -np.logspace(-20, 0.5, 500), [27 / 32, np.nextafter(
            27 / 32, 1), np.nextafter(27 / 32, 0), 6.0, 5.9, 6.1, 1e-310]])


def test_erf_float64_is_accurate_to_an_ulp():
    x = _erf_points()
    ref = np.array([math.erf(v) for v in x])
    out = E.erf(x)
    assert out.dtype == np.float64
    rel = np.abs(out - ref) / np.abs(ref)
    assert rel.max() <= 4.5e-16, (rel.max(), x[np.argmax(rel)])


def test_erf_float32_is_correctly_rounded_to_within_an_ulp():
    x = _erf_points().astype(np.float32)
    ref = np.array([math.erf(float(v)) for v in x]).astype(np.float32)
    out = E.erf(x)
    assert out.dtype == np.float32
    ulps = np.abs(out.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1


def test_erf_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -30.0])
    out = E.erf(x)
    np.testing.assert_array_equal(out[:4], [0.0, -0.0, 1.0, -1.0])
    assert np.signbit(out[1]) and np.isnan(out[4])
    np.testing.assert_array_equal(out[5:], [1.0, -1.0])
    assert float(E.erf(np.float64(0.5))) == pytest.approx(math.erf(0.5), rel=1e-16)


def test_erf_derivatives_are_the_gaussian():
    x = np.linspace(-3, 3, 13)
    g = ft.vmap(ft.grad(E.erf))(x)
    np.testing.assert_allclose(g, 2 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-14)
    gg = ft.vmap(ft.grad(ft.grad(E.erf)))(x)
    np.testing.assert_allclose(gg, -4 * x / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-13,
                               atol=1e-15)


# --- derivatives where the rules have special cases --------------------------------------------

def test_abs_derivatives_away_from_the_kink_and_at_it():
    x = np.array([-2.0, -0.3, 0.4, 1.7])
    np.testing.assert_array_equal(ft.vmap(ft.grad(fnp.abs))(x), np.sign(x))
    np.testing.assert_array_equal(ft.vmap(ft.grad(ft.grad(fnp.abs)))(x), np.zeros(4))
    assert float(ft.grad(fnp.abs)(0.0)) == 1.0  # JAX's convention at the kink


def test_max_min_split_ties_evenly():
    x = np.array([1.0, 2.0, 3.0, -1.0])
    y = np.array([1.0, 1.0, 4.0, -1.0])
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.maximum(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0, 0.5])
    np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0, 0.5])
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.minimum(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0, 0.5])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0, 0.5])
    # away from ties the second derivative vanishes and the first is an indicator
    h = ft.hessian(lambda a: fnp.sum(fnp.maximum(a, y) * a))(np.array([3.0, 0.5, 5.0, 0.0]))
    np.testing.assert_allclose(h, np.diag([2.0, 0.0, 2.0, 2.0]))


def test_clip_derivative():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    g = ft.grad(lambda a: fnp.sum(fnp.clip(a, -1.0, 1.0)))(x)
    np.testing.assert_array_equal(g, [0.0, 0.5, 1.0, 0.5, 0.0])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, -1])
def test_integer_power_derivatives_at_zero(n):
    # d/dx x^n = n x^(n-1), d2/dx2 = n (n-1) x^(n-2): exact at 0, no nan from 0 * inf
    x = 0.0 if n >= 0 else 0.5
    d1 = n * x ** (n - 1) if n != 0 else 0.0
    d2 = n * (n - 1) * x ** (n - 2) if n not in (0, 1) else 0.0
    for f in (lambda a: a ** n, lambda a: fnp.power(a, np.array(n)),
              lambda a: fnp.power(a, np.array([n]))[0]):
        assert float(ft.grad(f)(x)) == d1
        assert float(ft.grad(ft.grad(f))(x)) == d2


def test_pow_with_an_integer_array_exponent_at_zero():
    x = np.zeros(4)
    n = np.array([0, 1, 2, 3])
    jac = ft.jacfwd(lambda a: fnp.power(a, n))(x)
    np.testing.assert_array_equal(np.diag(jac), [0.0, 1.0, 0.0, 0.0])
    hess_diag = ft.vmap(ft.grad(ft.grad(lambda a, k: fnp.power(a, k))))(x, n)
    np.testing.assert_array_equal(hess_diag, [0.0, 0.0, 2.0, 0.0])


def test_pow_exponent_tangent_is_zero_weighted_at_zero_base():
    # d/dy x^y = log(x) x^y; at x == 0 the factor is taken as 0 (x^y = 0), not 0 * -inf
    x = np.array([0.0, 0.0, 2.0])
    y = np.array([2.0, 3.5, 1.5])
    _, t = ft.jvp(fnp.power, (x, y), (np.zeros(3), np.ones(3)))
    np.testing.assert_allclose(t, [0.0, 0.0, np.log(2.0) * 2.0 ** 1.5])
    _, t = ft.jvp(fnp.power, (x, y), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(t, [0.0, 0.0, 1.5 * 2.0 ** 0.5])
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.power(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.0, 0.0, 1.5 * 2.0 ** 0.5])
    np.testing.assert_allclose(gy, [0.0, 0.0, np.log(2.0) * 2.0 ** 1.5])


def test_rem_derivatives():
    x, y = np.array([5.3, -5.3, 2.2]), np.array([2.0, 2.0, -0.7])
    gx, gy = ft.grad(lambda a, b: fnp.sum(a % b), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, np.ones(3))
    np.testing.assert_array_equal(gy, -np.floor_divide(x, y))
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.fmod(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gy, -np.trunc(x / y))


def test_piecewise_constant_functions_have_zero_derivatives():
    x = np.array([0.3, -1.7, 2.2])
    for f in (fnp.floor, fnp.ceil, fnp.round, fnp.rint, fnp.trunc, fnp.sign,
              lambda a: fnp.floor_divide(a, 0.7)):
        np.testing.assert_array_equal(ft.grad(lambda a: fnp.sum(f(a)))(x), np.zeros(3))


# --- parity with JAX and PyTorch, where installed ----------------------------------------------

def test_special_case_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        x = np.array([0.0, 1.0, -1.0, 2.0, 0.5])
        y = np.array([1.0, 1.0, 3.0, 2.0, -0.5])
        for fn, jfn in [(fnp.maximum, jnp.maximum), (fnp.minimum, jnp.minimum),
                        (lambda a, b: fnp.clip(a, -1.0, b), lambda a, b: jnp.clip(a, -1.0, b)),
                        (lambda a, b: fnp.abs(a) * b, lambda a, b: jnp.abs(a) * b),
                        (lambda a, b: fnp.power(fnp.abs(a), b), lambda a, b: jnp.abs(a) ** b),
                        (fnp.arctan2, jnp.arctan2), (fnp.hypot, jnp.hypot)]:
            ours = ft.grad(lambda a, b: fnp.sum(fn(a, b)), argnums=(0, 1))(x, y + 2)
            theirs = jax.grad(lambda a, b: jnp.sum(jfn(a, b)), argnums=(0, 1))(x, y + 2)
            for o, t in zip(ours, theirs):
                np.testing.assert_allclose(o, np.asarray(t), rtol=1e-14, atol=1e-15)


def test_fmax_fmin_send_a_tie_to_the_second_operand_like_jax():
    # jax.numpy.fmax is where((x > y) | isnan(y), x, y): at a tie the derivative goes to y
    # (fnp.fmax used to split it like maximum). NaNs, and which operand wins, are exercised too
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([1.0, 2.0, 3.0, np.nan, 0.5, np.nan, -0.0])
    y = np.array([1.0, 5.0, -3.0, 2.0, np.nan, np.nan, 0.0])
    with jax.enable_x64(True):
        for fn, jfn, npfn in [(fnp.fmax, jnp.fmax, np.fmax), (fnp.fmin, jnp.fmin, np.fmin)]:
            np.testing.assert_array_equal(fn(x, y), npfn(x, y))
            for transform in (lambda f: f, ft.jit):
                ours = transform(ft.grad(lambda a, b: fnp.sum(fn(a, b)), argnums=(0, 1)))(x, y)
                theirs = jax.grad(lambda a, b: jnp.sum(jfn(a, b)), argnums=(0, 1))(x, y)
                for o, t in zip(ours, theirs):
                    np.testing.assert_array_equal(o, np.asarray(t))
            jf = ft.jacfwd(lambda a: fn(a, y))(x)
            np.testing.assert_array_equal(jf, np.asarray(jax.jacfwd(lambda a: jfn(a, y))(x)))


def test_tie_and_kink_derivatives_match_torch():
    torch = pytest.importorskip("torch")
    x = np.array([1.0, 2.0, 3.0, -1.0])
    y = np.array([1.0, 1.0, 4.0, -1.0])
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tensor(y, requires_grad=True)
    torch.maximum(tx, ty).sum().backward()
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.maximum(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, tx.grad.numpy())
    np.testing.assert_array_equal(gy, ty.grad.numpy())


# --- errors -------------------------------------------------------------------------------------

def test_errors_name_the_problem_and_the_fix():
    with pytest.raises(ShapeError, match=r"\(3,\) and \(4,\)"):
        fnp.add(np.ones(3), np.ones(4))
    with pytest.raises(ShapeError, match=r"\(3,\) and \(4,\)"):
        ft.make_jaxpr(fnp.multiply)(np.ones(3), np.ones(4))
    with pytest.raises(DTypeError, match="subtract.*bool.*xor"):
        fnp.subtract(_b, _c)
    with pytest.raises(DTypeError, match="sin: needs float or complex.*astype"):
        ft.make_jaxpr(E.sin)(_i)
    with pytest.raises(DTypeError, match="negative power"):
        ft.make_jaxpr(lambda a: a ** -1)(_i)
    with pytest.raises(DTypeError, match="one dtype"):
        ft.make_jaxpr(E.add)(_x, _x.astype(np.float32))
    with pytest.raises(DTypeError, match="bitwise_and"):
        fnp.bitwise_and(_x, _x)
    with pytest.raises(TypeError, match="where.*x and y"):
        fnp.where(_b, 1.0)
    with pytest.raises(TypeError, match="size="):  # one argument: nonzero, concrete only
        ft.jit(fnp.where)(_b)


# --- logaddexp, isclose, allclose, nan_to_num ---------------------------------------------------

_EDGE = np.array([0.0, 1.0, -1.0, 1000.0, -1000.0, -40.0, np.inf, -np.inf, np.nan])


def test_logaddexp_matches_numpy_on_edge_values():
    x, y = np.meshgrid(_EDGE, _EDGE)
    with np.errstate(invalid="ignore"):  # numpy warns at (inf, inf); we need not
        ref = np.logaddexp(x, y)
    np.testing.assert_allclose(fnp.logaddexp(x, y), ref, rtol=1e-15, atol=0)
    assert float(fnp.logaddexp(0.0, -40.0)) == np.logaddexp(0.0, -40.0)  # no loss in log1p
    out = ft.jit(lambda u: fnp.logaddexp(u, 1))(x.astype(np.float32))
    assert out.dtype == np.float32
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(out, np.logaddexp(x.astype(np.float32), 1), rtol=1e-6)
    assert fnp.logaddexp(np.arange(3), 2).dtype == np.logaddexp(np.arange(3), 2).dtype


def test_logaddexp_derivatives_are_softmax_weights_to_second_order():
    # d/dx log(e^x + e^y) = e^x / (e^x + e^y) = sigmoid(x - y); d2/dx2 = s (1 - s)
    x = np.array([0.0, 1.0, -3.0, 2.0, 30.0])
    y = np.array([0.0, 2.0, 4.0, 2.0, -5.0])  # ties at entries 0 and 3
    s = 1 / (1 + np.exp(y - x))
    gx, gy = ft.grad(lambda a, b: fnp.sum(fnp.logaddexp(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, s, rtol=1e-14)
    np.testing.assert_allclose(gy, 1 / (1 + np.exp(x - y)), rtol=1e-14)
    h = ft.jacfwd(ft.jacrev(lambda a: fnp.sum(fnp.logaddexp(a, y))))(x)
    np.testing.assert_allclose(np.diag(h), s * (1 - s), rtol=1e-11, atol=1e-300)
    check_grads(fnp.logaddexp, (x + 0.3, y), order=2, modes=("fwd", "rev"))


def test_logaddexp_derivatives_at_nan_and_infinity():
    # NaN in, NaN out (value and both partials, as JAX); at an infinite max, the limits of the
    # softmax weights: 1 for the infinite side, 0 for the other, 1/2 each at a tie (JAX gives
    # (1, 1) at (inf, 0) and nan at (-inf, -inf), which sum to more than d/dt logaddexp(t, t))
    points = {(np.nan, 0.0): (np.nan, np.nan), (1.0, np.nan): (np.nan, np.nan),
              (np.inf, 0.0): (1.0, 0.0), (np.inf, -np.inf): (1.0, 0.0),
              (np.inf, np.inf): (0.5, 0.5), (-np.inf, -np.inf): (0.5, 0.5),
              (-np.inf, 1.0): (0.0, 1.0)}
    for (a, b), want in points.items():
        got = ft.grad(fnp.logaddexp, argnums=(0, 1))(a, b)
        np.testing.assert_array_equal(np.array(got, dtype=float), want)
    # softplus and log_sigmoid (logaddexp(x, 0) and its mirror): sigmoid's values, NaN at NaN
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 800.0, -800.0])
    with np.errstate(over="ignore"):
        sigmoid = 1 / (1 + np.exp(-x))
    np.testing.assert_array_equal(ft.vmap(ft.grad(ft.nn.softplus))(x), sigmoid)
    np.testing.assert_array_equal(ft.vmap(ft.grad(ft.nn.log_sigmoid))(x), 1 - sigmoid)
    second = ft.vmap(ft.grad(ft.grad(ft.nn.softplus)))(x)
    np.testing.assert_array_equal(np.isnan(second), np.isnan(x))


def test_softplus_and_log_sigmoid_match_jax_at_nan_and_infinity():
    jax = jax_x64()
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 800.0, -800.0, 1.5])
    for name in ("softplus", "log_sigmoid"):
        ours, theirs = getattr(ft.nn, name), getattr(jax.nn, name)
        for order in (1, 2):
            got, want = ours, theirs
            for _ in range(order):
                got, want = ft.grad(got), jax.grad(want)
            np.testing.assert_allclose(ft.vmap(got)(x), np.asarray(jax.vmap(want)(x)),
                                       rtol=1e-14, atol=0)


def test_logaddexp_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.array([0.0, 1.0, -3.0, 2.0, -np.inf])
    y = np.array([0.0, 2.0, 4.0, 2.0, 1.0])
    with jax.enable_x64(True):
        for argnums in (0, 1):
            ours = ft.vmap(ft.grad(fnp.logaddexp, argnums))(x, y)
            theirs = jax.vmap(jax.grad(jnp.logaddexp, argnums))(x, y)
            np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-14)
            ours = ft.vmap(ft.grad(ft.grad(fnp.logaddexp, argnums), argnums))(x, y)
            theirs = jax.vmap(jax.grad(jax.grad(jnp.logaddexp, argnums), argnums))(x, y)
            np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-11)


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-8},
                                    {"rtol": 1e-3}])
def test_isclose_allclose_match_numpy(kwargs):
    a = np.array([1.0, 1 + 1e-6, np.inf, np.nan, -np.inf, 0.0, 1e-9, 1.0005])
    b = np.array([1.0, 1.0, np.inf, np.nan, np.inf, 1e-9, 0.0, 1.0])
    for x, y in [(a, b), (a.astype(np.float32), b.astype(np.float32)), (a, 1.0),
                 (np.arange(3), np.array([0, 1, 3])), (np.array([True, False]), True)]:
        ref = np.isclose(x, y, **kwargs)
        for fn in (fnp.isclose, ft.jit(lambda u, v: fnp.isclose(u, v, **kwargs))):
            out = fn(x, y, **kwargs) if fn is fnp.isclose else fn(x, y)
            assert out.dtype == np.bool_
            np.testing.assert_array_equal(out, ref)
        assert bool(fnp.allclose(x, y, **kwargs)) == np.allclose(x, y, **kwargs)


def test_nan_to_num_matches_numpy_and_differentiates_where_finite():
    x = np.array([1.0, np.inf, np.nan, -np.inf, -2.0])
    for kwargs in ({}, {"nan": 5.0, "posinf": 1.0, "neginf": -1.0}):
        for dtype in (np.float64, np.float32):
            out = fnp.nan_to_num(x.astype(dtype), **kwargs)
            assert out.dtype == dtype
            np.testing.assert_array_equal(out, np.nan_to_num(x.astype(dtype), **kwargs))
    np.testing.assert_array_equal(fnp.nan_to_num(np.arange(3)), np.arange(3))
    g = ft.grad(lambda v: fnp.sum(3.0 * fnp.nan_to_num(v, posinf=1.0, neginf=-1.0)))(x)
    np.testing.assert_array_equal(g, [3.0, 0.0, 0.0, 0.0, 3.0])


_SPECIALS = np.array([-1.5, -0.0, 0.0, 0.3, 2.0, np.inf, -np.inf, np.nan, -np.nan])


def test_sinc_copysign_signbit_match_numpy():
    with np.errstate(invalid="ignore"):  # sin(inf), as numpy computes it
        same_as_numpy(fnp.sinc, np.sinc, _SPECIALS)
        same_as_numpy(fnp.sinc, np.sinc, _SPECIALS.astype(np.float32))
    same_as_numpy(fnp.sinc, np.sinc, np.arange(-2, 3))                 # ints -> float64
    same_as_numpy(fnp.signbit, np.signbit, _SPECIALS)
    same_as_numpy(fnp.signbit, np.signbit, np.arange(-2, 3))
    mags = np.arange(len(_SPECIALS)) - 3.0
    same_as_numpy(fnp.copysign, np.copysign, mags, _SPECIALS)
    same_as_numpy(fnp.copysign, np.copysign, np.arange(4), np.array([-1, 0, 1, -2]))
    same_as_numpy(fnp.copysign, np.copysign, np.float32(2.0), _SPECIALS.astype(np.float32),
                   vmap=False)


def test_sinc_derivatives_match_jax_at_zero_and_away():
    jax = jax_x64()
    x = np.array([-1.5, -0.0, 0.0, 0.3, 2.0])
    derivatives_like_jax(fnp.sinc, jax.numpy.sinc, x)
    f, g = fnp.sinc, jax.numpy.sinc
    for _ in range(5):  # up to the fifth derivative at 0: finite, JAX's values
        f, g = ft.grad(f), jax.grad(g)
        np.testing.assert_allclose(f(0.0), g(0.0), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(f(0.7), g(0.7), rtol=1e-9)


def test_copysign_derivatives_match_jax():
    jnp = jax_x64().numpy
    x = np.array([-1.5, 0.0, -0.0, 2.0, 0.5])
    y = np.array([1.0, -1.0, -0.0, -3.0, 0.0])
    derivatives_like_jax(fnp.copysign, jnp.copysign, x, y, argnums=(0, 1))


def test_select_matches_numpy_and_jax():
    x = np.arange(6.0)
    f = lambda x: fnp.select([x < 2, x > 3, x > 4], [x, x ** 2, -x], -1.0)  # noqa: E731
    g = lambda x: np.select([x < 2, x > 3, x > 4], [x, x ** 2, -x], -1.0)  # noqa: E731
    same_as_numpy(f, g, x)
    same_as_numpy(lambda c: fnp.select([c > 2], [c]), lambda c: np.select([c > 2], [c]),
                   np.arange(5))
    jnp = jax_x64().numpy
    derivatives_like_jax(f, lambda x: jnp.select([x < 2, x > 3, x > 4], [x, x ** 2, -x], -1.0),
                          x)
    with pytest.raises(TypeError, match="boolean"):
        fnp.select([x], [x])
    with pytest.raises(ValueError, match="one choice per condition"):
        fnp.select([x > 1], [x, x])
