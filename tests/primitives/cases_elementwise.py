"""Cases for the elementwise primitives (functrans/primitives/elementwise.py) beyond the core
rows in cases_core.py: each primitive at least once, binary ones also broadcasting and with
scalars, every domain inside the function's domain (away from kinks for the piecewise ones)."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from primitives.cases import Case, above_one, away_from_zero, ints, positive, real, unit


def above_minus_one(rng, shape):
    """Inside log1p's domain (-1, inf), away from -1."""
    return rng.uniform(-0.6, 2.0, shape)


def wide(rng, shape):
    """Both branches of erf's approximation (the split is at 27/32)."""
    return rng.uniform(-4.0, 4.0, shape)


def with_specials(rng, shape):
    """Reals with some infinities and NaNs mixed in (for is_finite)."""
    x = rng.uniform(-2.0, 2.0, shape)
    pick = rng.integers(0, 4, shape)
    return np.where(pick == 0, np.inf, np.where(pick == 1, np.nan, x))


def bools(rng, shape):
    return rng.integers(0, 2, shape).astype(bool)


def lower_bound(rng, shape):
    """A clamp's lower bound: below the upper ones, inside the range x is drawn from."""
    return rng.uniform(-1.2, -0.1, shape)


def upper_bound(rng, shape):
    return rng.uniform(0.1, 1.2, shape)


def away_from_bounds(rng, shape):
    """Inside and outside [-0.5, 1] (hard_tanh's bounds in its cases), away from both ends."""
    return rng.choice([-1.5, -0.2, 0.6, 1.6], shape) + rng.uniform(-0.15, 0.15, shape)


def off_grid(rng, shape):
    """Reals away from integers and half-integers (floor/ceil/round/trunc jump there)."""
    return rng.integers(-4, 4, shape) + rng.choice([0.2, 0.35, 0.65, 0.8], shape)


_INT_EXPONENTS = np.array([[0, 1, 2], [3, -1, -2]])

CASES = [
    # unary, differentiable
    Case("tan", fnp.tan, [(3,)], domain=unit),
    Case("asin", fnp.arcsin, [(3,)], domain=unit),
    Case("acos", fnp.arccos, [(2, 3)], domain=unit),
    Case("atan", fnp.arctan, [(3,)]),
    Case("sinh", fnp.sinh, [(3,)]),
    Case("cosh", fnp.cosh, [(3,)]),
    Case("tanh", fnp.tanh, [()], name="tanh-0d"),
    Case("asinh", fnp.arcsinh, [(3,)]),
    Case("acosh", fnp.arccosh, [(3,)], domain=above_one),
    Case("atanh", fnp.arctanh, [(3,)], domain=unit),
    Case("exp2", fnp.exp2, [(3,)]),
    Case("expm1", fnp.expm1, [(3,)]),
    Case("log2", fnp.log2, [(3,)], domain=positive),
    Case("log10", fnp.log10, [(3,)], domain=positive),
    Case("log1p", fnp.log1p, [(2, 2)], domain=above_minus_one),
    Case("norm_sqrt", E.norm_sqrt, [(3,)], domain=positive),
    Case("rsqrt", E.rsqrt, [(3,)], domain=positive),
    Case("cbrt", fnp.cbrt, [(3,)], domain=away_from_zero),
    Case("logistic", E.logistic, [(4,)]),
    Case("logistic_backward", E.logistic_backward_p.bind, [(4,), (4,)], domain=[real, unit]),
    Case("logistic_backward", E.logistic_backward_p.bind, [(2, 3), (3,)], domain=[real, unit],
         name="logistic_backward-bcast"),
    Case("erf", E.erf, [(8,)], domain=wide),
    Case("erf_inv", E.erf_inv, [(8,)], domain=unit),
    Case("xla_log", E.xla_log, [(6,)], domain=positive),
    Case("xla_exp", E.xla_exp, [(6,)]),
    Case("xla_pow", E.xla_pow, [(3,), (3,)], domain=[positive, real]),
    Case("xla_pow", E.xla_pow, [(2, 1), (3,)], domain=[positive, real], name="xla_pow-bcast"),
    Case("abs", fnp.abs, [(4,)], domain=away_from_zero),
    Case("relu", E.relu, [(6,)], domain=away_from_zero),
    Case("leaky_relu", lambda x: E.leaky_relu_p.bind(x, slope=0.1), [(6,)],
         domain=away_from_zero),
    Case("hard_tanh", lambda x: E.hard_tanh_p.bind(x, lo=-0.5, hi=1.0), [(8,)],
         domain=away_from_bounds),
    Case("scalar_pow", lambda x: E.scalar_pow(x, 0.5), [(3,)], domain=positive,
         name="scalar_pow-sqrt"),
    Case("scalar_pow", lambda x: E.scalar_pow(x, -0.5) + E.scalar_pow(x, 1.5), [(2, 3)],
         domain=positive, name="scalar_pow-rsqrt"),
    Case("scalar_pow", lambda x: E.scalar_pow(x, 2.7) + E.scalar_pow(x, 0.0), [(3,)],
         domain=positive, name="scalar_pow-general"),
    Case("integer_pow", lambda x: x ** 2, [(3,)], name="integer_pow-2"),
    Case("integer_pow", lambda x: x ** 3, [(2, 3)], name="integer_pow-3"),
    Case("integer_pow", lambda x: x ** -2, [(3,)], domain=away_from_zero,
         name="integer_pow-neg"),
    Case("integer_pow", lambda x: E.integer_pow(x, 1) + E.integer_pow(x, 0), [(3,)],
         name="integer_pow-1-0"),
    # unary, piecewise constant or not real-valued: zero derivative declared
    Case("sign", fnp.sign, [(4,)], domain=away_from_zero, differentiable=False),
    Case("sgn", E.sgn, [(6,)], domain=with_specials, differentiable=False),
    Case("floor", fnp.floor, [(4,)], domain=off_grid, differentiable=False),
    Case("ceil", fnp.ceil, [(4,)], domain=off_grid, differentiable=False),
    Case("round", fnp.round, [(4,)], domain=off_grid, differentiable=False),
    Case("round", fnp.rint, [(4,)], differentiable=False,
         domain=lambda rng, s: rng.integers(-4, 4, s) + 0.5, name="round-half-even"),
    Case("trunc", fnp.trunc, [(4,)], domain=off_grid, differentiable=False),
    Case("is_finite", fnp.isfinite, [(6,)], domain=with_specials, differentiable=False),
    Case("signbit", fnp.signbit, [(6,)], domain=with_specials, differentiable=False),
    Case("not", fnp.logical_not, [(4,)], domain=bools, differentiable=False),
    Case("not", fnp.invert, [(4,)], domain=ints, differentiable=False, name="not-int"),
    # binary, differentiable
    Case("pow", fnp.power, [(3,), (3,)], domain=[positive, real]),
    Case("pow", fnp.power, [(2, 1), (3,)], domain=[positive, real], name="pow-bcast"),
    Case("pow", lambda x: fnp.power(x, _INT_EXPONENTS), [(2, 3)], domain=away_from_zero,
         name="pow-int-exponent", fixed_shapes=True),
    Case("pow", lambda y: fnp.power(2.5, y), [(3,)], name="pow-scalar-base"),
    Case("max", fnp.maximum, [(4,), (4,)]),
    Case("max", fnp.maximum, [(2, 1), (3,)], name="max-bcast"),
    Case("max", lambda x: fnp.maximum(x, 0.5), [(5,)], name="max-scalar"),
    Case("min", fnp.minimum, [(4,), (4,)]),
    Case("min", fnp.minimum, [(), (2, 3)], name="min-bcast-0d"),
    Case("clamp", E.clamp, [(8,), (8,), (8,)], domain=[real, lower_bound, upper_bound]),
    Case("clamp", E.clamp, [(2, 4), (4,), ()], domain=[real, lower_bound, upper_bound],
         name="clamp-bcast"),
    Case("clamp_min", E.clamp_min, [(8,), (8,)]),
    Case("clamp_max", E.clamp_max, [(2, 4), (4,)]),
    Case("atan2", fnp.arctan2, [(4,), (4,)], domain=away_from_zero),
    Case("atan2", fnp.arctan2, [(3, 1), (1, 2)], domain=away_from_zero, name="atan2-bcast"),
    Case("rem", fnp.remainder, [(4,), (4,)], domain=[real, away_from_zero]),
    Case("rem", lambda x: x % 0.75, [(2, 3)], name="rem-scalar"),
    Case("fmod", fnp.fmod, [(4,), (4,)], domain=[real, away_from_zero]),
    Case("fmod", fnp.fmod, [(2, 1), (3,)], domain=[real, away_from_zero], name="fmod-bcast"),
    Case("div", lambda x, y: x / y, [(2, 1), (3,)], domain=[real, away_from_zero],
         name="div-bcast"),
    Case("sub", lambda x: 1.5 - x, [(3,)], name="sub-rscalar"),
    # binary, non-differentiable
    Case("floor_divide", fnp.floor_divide, [(4,), (4,)], domain=[real, away_from_zero],
         differentiable=False),
    Case("floor_divide", lambda x, y: x // y, [(4,), (4,)], domain=[ints, lambda r, s:
         r.choice([-3, -2, 1, 2], s)], differentiable=False, name="floor_divide-int"),
    Case("le", fnp.less_equal, [(4,), (4,)], differentiable=False),
    Case("gt", lambda x, y: x > y, [(2, 1), (3,)], differentiable=False),
    Case("ge", fnp.greater_equal, [(4,), ()], differentiable=False),
    Case("eq", fnp.equal, [(4,), (4,)], domain=ints, differentiable=False),
    Case("ne", lambda x, y: x != y, [(4,), (4,)], domain=ints, differentiable=False),
    Case("and", fnp.logical_and, [(4,), (4,)], domain=bools, differentiable=False),
    Case("and", lambda x, y: x & y, [(4,), (4,)], domain=ints, differentiable=False,
         name="and-int"),
    Case("or", fnp.logical_or, [(2, 1), (3,)], domain=bools, differentiable=False),
    Case("xor", fnp.logical_xor, [(4,), (4,)], domain=bools, differentiable=False),
    Case("xor", lambda x, y: x ^ y, [(4,), (4,)], domain=ints, differentiable=False,
         name="xor-int"),
    # select with broadcasting and a scalar branch
    Case("select", lambda c, x: fnp.where(c > 0, x, 0.0), [(3, 1), (4,)],
         name="select-bcast"),
]
