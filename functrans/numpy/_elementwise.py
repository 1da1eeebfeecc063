"""numpy's elementwise functions over the elementwise primitives, and the operators of tracers.

Dtypes follow numpy exactly: each function asks the numpy ufunc of the same name how it would
resolve its operands (NEP 50: Python scalars are weak), converts them, and binds a primitive.
So `sin` of int64 is float64 and of int8 float16, `divide` of ints is float64, and
`float32 + 1.0` stays float32. Eagerly, concrete arrays that need no conversion go straight to
the primitive's implementation: an eager call costs little more than numpy's own.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.maximum(np.array([1.0, 5.0]), 2)
array([2., 5.])
"""

from __future__ import annotations

import builtins

import numpy as np

from functrans.core.array import Array, as_array, as_plain
from functrans.core.avals import weak_scalar_type
from functrans.core.cache import LRUCache
from functrans.core.ownership import owned
from functrans.core.trace import Tracer, install_array_methods
from functrans.core.trace import trace_state as _trace_state  # read only, see below
from functrans.errors import DTypeError
from functrans.numpy._core import asarray, result_dtype, scalar_as, to_float, tracer_as
from functrans.numpy._creation import zeros_like
from functrans.backend import adapter_of
from functrans.backends import call_traced
from functrans.numpy._results import foreign_adapter, like_inputs
from functrans.primitives import binary_math as B
from functrans.primitives import elementwise as E
from functrans.primitives.shape_ops import convert_element_type

__all__ = [
    # trigonometric, hyperbolic, exponential and logarithmic functions
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
    "atanh", "deg2rad", "rad2deg", "radians", "degrees", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal",
    # arithmetic
    "negative", "positive", "add", "subtract", "multiply", "divide", "true_divide",
    "floor_divide", "remainder", "mod", "divmod", "fmod", "power", "pow", "float_power", "absolute", "abs",
    "fabs", "sign", "heaviside", "maximum", "minimum", "fmax", "fmin", "clip",
    # complex parts
    "real", "imag", "conj", "conjugate",
    # rounding
    "floor", "ceil", "trunc", "rint", "round", "around",
    # comparison, logic, bits, classification, selection
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_invert", "invert", "isnan", "isinf", "isfinite", "where",
    "logaddexp", "isclose", "allclose", "nan_to_num", "signbit", "copysign", "sinc", "select",
]

_ndarray = np.ndarray
_view = np.ndarray.view
_BOOL = np.dtype(bool)


# --- numpy's dtype resolution ----------------------------------------------------------------

_RESOLVED = LRUCache(4096, name="ufunc dtype resolution")


def _dtype_key(a):
    """What numpy's dtype resolution sees for `a`: a dtype, or the type of a weak Python
    scalar."""
    if isinstance(a, Tracer):
        return weak_scalar_type(a) or a.dtype  # a traced Python scalar promotes like one
    if isinstance(a, np.ndarray | np.generic):
        return a.dtype
    t = type(a)
    if t is float or t is int or t is complex:
        return t
    return np.asarray(a).dtype


def _resolve(ufunc, args):
    """The operand dtypes (then the output dtype) numpy's `ufunc` would use for `args`."""
    key = (ufunc, *map(_dtype_key, args))
    dtypes = _RESOLVED.peek(key)
    if dtypes is None:
        operands = key[1:]
        if not any(isinstance(k, np.dtype) for k in operands):  # weak only: numpy's defaults
            operands = [np.dtype(k) for k in operands]  # (two Python ints would resolve to O)
        try:
            dtypes = ufunc.resolve_dtypes((*operands, None))
        except TypeError as e:
            names = ", ".join(getattr(k, "name", getattr(k, "__name__", str(k)))
                              for k in key[1:])
            takes_floats = any(t.split("->")[0].count("d") for t in ufunc.types)
            fix = "x.astype(float)" if takes_floats else "x.astype(int) or x.astype(bool)"
            raise DTypeError(f"{ufunc.__name__}: not defined for operands of dtype {names} "
                             f"(numpy: {e}). Convert the operands first, e.g. {fix}.") from None
        _RESOLVED.put(key, dtypes)
    return dtypes


def _cast(a, dtype):
    if isinstance(a, Tracer):
        return tracer_as(a, dtype)
    if type(a) is _ndarray and a.dtype == dtype:
        return a
    return scalar_as(a, dtype)


def _arrays(args):
    return [asarray(a) if isinstance(a, list | tuple) else a for a in args]


def _converted(ufunc, args):
    """`args` converted to the operand dtype numpy's `ufunc` resolves to (one common dtype)."""
    args = _arrays(args)
    dtypes = _resolve(ufunc, args)[:len(args)]
    if len(set(dtypes)) > 1:  # a mixed loop such as uint64 < int64: use one common dtype
        dtypes = (np.result_type(*dtypes),) * len(args)
    return [_cast(a, d) for a, d in zip(args, dtypes)]


def _apply(prim, ufunc, *args):
    return prim.bind(*_converted(ufunc, args))


# Eager fast paths. `bind` evaluates eagerly when no operand is a tracer and no dynamic trace
# (make_jaxpr, jit) is active; it then calls the primitive's impl. For plain ndarrays that numpy
# would not convert, the functions below make that same test (the trace state's dynamic level,
# read directly: a function call here would cost a tenth of a small numpy call) and call impl.

# Result types follow numpy's rule for subclasses (see functrans/numpy/_results.py): plain
# numpy operands give a plain result, as numpy's own call would, so the plain fast path is as
# lean as numpy's; an Array operand gives an Array (numpy runs on its plain view: a ufunc
# costs more on a subclass than the two views do); lists and scalars made into arrays here
# give an Array.

def _unary(prim, ufunc, fast_kinds="f"):
    """numpy's `ufunc` over `prim`, with an eager fast path for arrays of `fast_kinds`."""
    def fn(x):
        if type(x) is _ndarray:
            if _trace_state.dynamic.level == 0 and x.dtype.kind in fast_kinds:
                return prim.impl(x)
            return prim.bind(*_converted(ufunc, (x,)))
        if type(x) is Array and _trace_state.dynamic.level == 0 and \
                x.dtype.kind in fast_kinds:
            out = prim.impl(_view(x, _ndarray))
            try:
                return _view(out, Array)
            except TypeError:  # a numpy scalar (numpy's result for a 0-d operand)
                return out
        if (adapter := adapter_of(x)) is not None:  # a dask or CuPy array
            return call_traced(fn, adapter, (x,), {})
        return as_array(prim.bind(*_converted(ufunc, (x,))))
    fn.returns_arrays = True
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = f"numpy.{ufunc.__name__} on arrays and traced values."
    return fn


def _binary(prim, ufunc, fast_kinds="f"):
    """numpy's binary `ufunc` over `prim`, with an eager fast path for two same-dtype arrays of
    `fast_kinds` (dtypes numpy keeps unchanged) and for a float array with a Python float."""
    floats = "f" in fast_kinds

    def fn(x, y):
        if type(x) is _ndarray and _trace_state.dynamic.level == 0:
            if type(y) is _ndarray:
                if x.dtype is y.dtype and x.dtype.kind in fast_kinds:
                    try:
                        return prim.impl(x, y)
                    except ValueError:
                        pass  # shapes that do not broadcast: the general path names them
            elif floats and type(y) is float and x.dtype.kind == "f":
                return prim.impl(x, y)  # a weak Python float takes the array's dtype
        tx, ty = type(x), type(y)
        if tx is Array or ty is Array:  # an Array result, numpy on plain views
            out = None
            if _trace_state.dynamic.level == 0 and (tx is Array or tx is _ndarray):
                # the fast paths above, inline: computing on Arrays is as hot
                if (ty is Array or ty is _ndarray) and x.dtype is y.dtype and \
                        x.dtype.kind in fast_kinds:
                    try:
                        out = prim.impl(_view(x, _ndarray) if tx is Array else x,
                                        _view(y, _ndarray) if ty is Array else y)
                    except ValueError:
                        pass  # shapes that do not broadcast: the general path names them
                elif floats and ty is float and x.dtype.kind == "f":
                    out = prim.impl(_view(x, _ndarray), y)
            if out is None:
                return as_array(fn(as_plain(x), as_plain(y)))
            try:
                return _view(out, Array)
            except TypeError:  # a numpy scalar (numpy's result for 0-d operands)
                return out
        if (adapter := foreign_adapter((x, y))) is not None:  # dask or CuPy arrays
            return call_traced(fn, adapter, (x, y), {})
        out = prim.bind(*_converted(ufunc, (x, y)))
        return out if tx is _ndarray or ty is _ndarray else as_array(out)
    fn.returns_arrays = True
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = f"numpy.{ufunc.__name__} on arrays and traced values, with broadcasting."
    return fn


# --- unary functions -------------------------------------------------------------------------

sin = _unary(E.sin_p, np.sin)
cos = _unary(E.cos_p, np.cos)
tan = _unary(E.tan_p, np.tan)
arcsin = asin = _unary(E.asin_p, np.arcsin)
arccos = acos = _unary(E.acos_p, np.arccos)
arctan = atan = _unary(E.atan_p, np.arctan)
sinh = _unary(E.sinh_p, np.sinh)
cosh = _unary(E.cosh_p, np.cosh)
tanh = _unary(E.tanh_p, np.tanh)
arcsinh = asinh = _unary(E.asinh_p, np.arcsinh)
arccosh = acosh = _unary(E.acosh_p, np.arccosh)
arctanh = atanh = _unary(E.atanh_p, np.arctanh)
exp = _unary(E.exp_p, np.exp)
exp2 = _unary(E.exp2_p, np.exp2)
expm1 = _unary(E.expm1_p, np.expm1)
log = _unary(E.log_p, np.log)
log2 = _unary(E.log2_p, np.log2)
log10 = _unary(E.log10_p, np.log10)
log1p = _unary(E.log1p_p, np.log1p)
sqrt = _unary(E.sqrt_p, np.sqrt)
cbrt = _unary(E.cbrt_p, np.cbrt)
negative = _unary(E.neg_p, np.negative, "iuf")
sign = _unary(E.sign_p, np.sign, "iuf")
rint = _unary(E.round_p, np.rint)


def positive(x):
    """numpy.positive: a copy of x (converted as numpy would)."""
    out, = _converted(np.positive, (x,))
    return owned(out, x)


def real(val):
    """numpy.real: the real part of a complex array; a copy of a real one. Differentiable (the
    `real` primitive, JAX's real_p)."""
    x = asarray(val)
    if x.dtype.kind != "c":
        return positive(x)
    return E.real_p.bind(x)


def imag(val):
    """numpy.imag: the imaginary part of a complex array; zeros for a real one (a zero
    derivative, as JAX's)."""
    x = asarray(val)
    if x.dtype.kind != "c":
        return zeros_like(x)
    return E.imag_p.bind(x)


def conj(x):
    """numpy.conj (also `conjugate`): the complex conjugate; a copy of a real array (its
    derivative the identity, as JAX's)."""
    x = asarray(x)
    if x.dtype.kind != "c":
        return positive(x)
    return E.conj_p.bind(x)


conjugate = conj


def absolute(x):
    """numpy.absolute (also `abs`): |x|; bools are returned unchanged, as numpy does."""
    a, = _converted(np.absolute, (x,))
    return owned(a, x) if a.dtype == _BOOL else E.abs_p.bind(a)


abs = absolute


def fabs(x):
    """numpy.fabs: |x| as a float."""
    return _apply(E.abs_p, np.fabs, x)


def _rounding(prim, ufunc):
    def fn(x):
        if type(x) is _ndarray and x.dtype.kind == "f" and _trace_state.dynamic.level == 0:
            return prim.impl(x)
        a, = _converted(ufunc, (x,))
        return owned(a, x) if a.dtype.kind in "biu" else prim.bind(a)  # ints are whole
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = f"numpy.{ufunc.__name__} on arrays and traced values (integers unchanged)."
    return fn


floor = _rounding(E.floor_p, np.floor)
ceil = _rounding(E.ceil_p, np.ceil)
trunc = _rounding(E.trunc_p, np.trunc)


def round(a, decimals=0):
    """numpy.round (also `around`): round half to even, to `decimals` decimal places."""
    given, a = a, asarray(a)
    decimals = int(decimals)
    if a.dtype.kind in "iu":
        if decimals >= 0:
            return owned(a, given)  # a new array, as numpy's
        # numpy rounds integers to tens, hundreds, ... in float64 and converts back
        return convert_element_type(round(convert_element_type(a, np.float64), decimals),
                                    a.dtype)
    if decimals == 0:
        return rint(a)
    a, = _converted(np.rint, (a,))
    scale = np.asarray(10.0 ** builtins.abs(decimals), a.dtype)
    if decimals > 0:
        return E.div(E.round(E.mul(a, scale)), scale)
    return E.mul(E.round(E.div(a, scale)), scale)


around = round


def square(x):
    """numpy.square: x * x (bound as integer_pow, as JAX does)."""
    x, = _converted(np.square, (x,))
    return E.integer_pow(x, 2)


def reciprocal(x):
    """numpy.reciprocal: 1 / x in x's dtype (integers truncate, as numpy's do)."""
    x, = _converted(np.reciprocal, (x,))
    return E.div(np.ones((), x.dtype), x)


def deg2rad(x):
    """numpy.deg2rad (also `radians`)."""
    x, = _converted(np.deg2rad, (x,))
    return E.mul(x, np.asarray(np.pi / 180, x.dtype))


def rad2deg(x):
    """numpy.rad2deg (also `degrees`)."""
    x, = _converted(np.rad2deg, (x,))
    return E.mul(x, np.asarray(180 / np.pi, x.dtype))


radians = deg2rad
degrees = rad2deg


# --- binary functions ------------------------------------------------------------------------

add = _binary(E.add_p, np.add, "biuf")
subtract = _binary(E.sub_p, np.subtract, "iuf")
multiply = _binary(E.mul_p, np.multiply, "biuf")
divide = true_divide = _binary(E.div_p, np.divide)
floor_divide = _binary(E.floor_divide_p, np.floor_divide, "iuf")
remainder = mod = _binary(E.rem_p, np.remainder, "iuf")


def divmod(x, y):
    """numpy.divmod: (floor_divide(x, y), remainder(x, y)), so `divmod(array, traced)` runs.

    >>> import functrans.numpy as fnp
    >>> [r.tolist() for r in fnp.divmod(fnp.asarray([7.0, -7.0]), 2.0)]
    [[3.0, -4.0], [1.0, 1.0]]
    """
    return floor_divide(x, y), remainder(x, y)


divmod.returns_arrays = True  # floor_divide and remainder follow functrans/numpy/_results.py
fmod = _binary(E.fmod_p, np.fmod, "iuf")
maximum = _binary(E.max_p, np.maximum, "biuf")
minimum = _binary(E.min_p, np.minimum, "biuf")
arctan2 = atan2 = _binary(E.atan2_p, np.arctan2)
less = _binary(E.lt_p, np.less, "biuf")
less_equal = _binary(E.le_p, np.less_equal, "biuf")
greater = _binary(E.gt_p, np.greater, "biuf")
greater_equal = _binary(E.ge_p, np.greater_equal, "biuf")
equal = _binary(E.eq_p, np.equal, "biuf")
not_equal = _binary(E.ne_p, np.not_equal, "biuf")
bitwise_and = _binary(E.and_p, np.bitwise_and, "biu")
bitwise_or = _binary(E.or_p, np.bitwise_or, "biu")
bitwise_xor = _binary(E.xor_p, np.bitwise_xor, "biu")
bitwise_not = bitwise_invert = invert = _unary(E.not_p, np.invert, "biu")


def _is_int_scalar(y) -> bool:
    return (type(y) is int or isinstance(y, np.integer)
            or (type(y) is _ndarray and y.ndim == 0 and y.dtype.kind in "iu"))


def power(x, y):
    """numpy.power (also `pow` and the `**` operator).

    A concrete integer exponent binds integer_pow (as JAX does for x ** 2); an integer array
    exponent with a float base stays integer, so the derivative at x == 0 is exact."""
    if (type(x) is _ndarray and type(y) is _ndarray and x.dtype is y.dtype
            and x.dtype.kind == "f" and _trace_state.dynamic.level == 0):
        try:
            return E.pow_p.impl(x, y)
        except ValueError:
            pass
    x, y = _arrays((x, y))
    dtypes = _resolve(np.power, (x, y))
    if _is_int_scalar(y):
        return E.integer_pow(_cast(x, dtypes[0]), int(y))
    y_dtype = _dtype_key(y)
    if dtypes[0].kind in "fc" and isinstance(y_dtype, np.dtype) and y_dtype.kind in "iu":
        return E.pow_p.bind(_cast(x, dtypes[0]), _cast(y, y_dtype))
    return E.pow_p.bind(*_converted(np.power, (x, y)))


pow = power


def float_power(x, y):
    """numpy.float_power: power computed in float64 (or complex128) at least."""
    x, y = _converted(np.float_power, (x, y))
    return power(x, y)


def _fmax_fmin(prim, ufunc, row):
    def fn(x, y):
        x, y = _converted(ufunc, (x, y))
        if x.dtype.kind == "f":
            # the fmax/fmin row: a NaN loses to a number, and a tie's derivative goes wholly to
            # y, as jax.numpy.fmax's (maximum splits ties)
            return row.bind(x, y)
        out = prim.bind(x, y)
        if x.dtype.kind != "c":
            return out
        # a NaN loses to a number: take the other operand where one is NaN
        return E.select(E.ne(y, y), x, E.select(E.ne(x, x), y, out))
    fn.__name__ = fn.__qualname__ = ufunc.__name__
    fn.__doc__ = f"numpy.{ufunc.__name__}: like {prim.name}imum, but NaNs are ignored."
    return fn


fmax = _fmax_fmin(E.max_p, np.fmax, B.fmax_p)
fmin = _fmax_fmin(E.min_p, np.fmin, B.fmin_p)


def hypot(x, y):
    """numpy.hypot: sqrt(x**2 + y**2) without overflow, the hypot row
    (functrans/primitives/binary_math.py). Its derivatives x / hypot and y / hypot are exact
    to every order at x = y as well (JAX's hypot splits the second derivative there)."""
    return B.hypot_p.bind(*_converted(np.hypot, (x, y)))


def heaviside(x1, x2):
    """numpy.heaviside: 0 for x1 < 0, x2 for x1 == 0, 1 for x1 > 0 (NaN stays NaN)."""
    x1, x2 = _converted(np.heaviside, (x1, x2))
    zero, one = np.zeros((), x1.dtype), np.ones((), x1.dtype)
    out = E.select(E.lt(x1, zero), zero, E.select(E.gt(x1, zero), one, x2))
    return E.select(E.ne(x1, x1), x1, out)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """numpy.clip: minimum(maximum(a, a_min), a_max); either bound may be None.

    As in JAX, the derivative is split 0.5/0.5 where `a` equals a bound."""
    if min is not None:
        if a_min is not None:
            raise TypeError("clip: pass the lower bound once, as a_min or as min, not both.")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise TypeError("clip: pass the upper bound once, as a_max or as max, not both.")
        a_max = max
    a, a_min, a_max = _arrays((a, a_min, a_max))
    dtype = result_dtype(*(v for v in (a, a_min, a_max) if v is not None))
    out = _cast(a, dtype)
    if a_min is not None:
        out = E.max(out, _cast(a_min, dtype))
    if a_max is not None:
        out = E.min(out, _cast(a_max, dtype))
    return out if a_min is not None or a_max is not None else owned(out, a)


# --- logic and classification ----------------------------------------------------------------

def _truth(x):
    """x read as truth values (nonzero), as numpy's logical functions do."""
    return _cast(_arrays((x,))[0], _BOOL)


def _logical(prim, name):
    def fn(x, y):
        return prim.bind(_truth(x), _truth(y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy.{name}: operands are read as truth values (nonzero), output bool."
    return fn


logical_and = _logical(E.and_p, "logical_and")
logical_or = _logical(E.or_p, "logical_or")
logical_xor = _logical(E.xor_p, "logical_xor")


def logical_not(x):
    """numpy.logical_not: x read as truth values (nonzero), negated."""
    return E.not_(_truth(x))


def isnan(x):
    """numpy.isnan (NaN is the one value unequal to itself)."""
    x = asarray(x)
    return E.ne(x, x)


def isinf(x):
    """numpy.isinf: +-inf."""
    x = asarray(x)
    if x.dtype.kind in "biu":
        return E.ne(x, x)  # all False
    return E.eq(E.abs(x), np.asarray(np.inf, x.dtype))


def isfinite(x):
    """numpy.isfinite: neither inf nor NaN."""
    x = asarray(x)
    if x.dtype.kind in "biu":
        return E.eq(x, x)  # all True
    return E.is_finite(x)


def signbit(x):
    """numpy.signbit: the sign bit, so True for -0.0 and a negative NaN (no derivative)."""
    x = asarray(x)
    if x.dtype.kind == "b":
        return E.ne(x, x)  # all False
    return E.signbit(x)


def copysign(x1, x2):
    """numpy.copysign: |x1| with the sign bit of x2, the copysign row
    (functrans/primitives/binary_math.py). As in JAX, the derivative in x1 is +-1 (the one of
    abs, +1 at 0, times the sign taken) and zero in x2.

    >>> import functrans.numpy as fnp
    >>> fnp.copysign(2.0, -0.0).item()
    -2.0
    """
    return B.copysign_p.bind(*_converted(np.copysign, (x1, x2)))


# Maclaurin coefficients of sin(y)/y in y = pi x: at x == 0 sinc evaluates this polynomial, so
# its derivatives there are exact to order 11 (JAX's sinc gives every order at 0; the
# quotient's own rule would give nan)
_SINC_COEFFS = [(-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 2))) for k in range(6)]


def sinc(x):
    """numpy.sinc: sin(pi x) / (pi x), 1 at x = 0, with finite derivatives there as in JAX
    (the first is 0, the second -pi^2/3).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.grad(fnp.sinc)(0.0).item()
    0.0
    """
    x = to_float(x)
    dtype = x.dtype
    zero = E.eq(x, np.zeros((), dtype))
    pi_x = E.mul(np.asarray(np.pi, dtype), x)
    safe = E.select(zero, np.ones((), dtype), pi_x)
    y2 = E.mul(pi_x, pi_x)
    series = np.asarray(_SINC_COEFFS[-1], dtype)
    for c in reversed(_SINC_COEFFS[:-1]):
        series = E.add(E.mul(series, y2), np.asarray(c, dtype))
    return E.select(zero, series, E.div(E.sin(safe), safe))


def select(condlist, choicelist, default=0):
    """numpy.select: the choice of the first condition that holds, else `default`.

    >>> import functrans.numpy as fnp
    >>> x = fnp.arange(4)
    >>> fnp.select([x < 1, x > 2], [x, x ** 2], -1).tolist()
    [0, -1, -1, 9]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries and choicelist "
                         f"{len(choicelist)}; pass one choice per condition.")
    if not condlist:
        raise ValueError("select: condlist must hold at least one condition.")
    conds = [asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != _BOOL:
            raise TypeError(f"select: condlist[{i}] has dtype {c.dtype.name}, but conditions "
                            "must be boolean (as in numpy); compare first, e.g. x != 0.")
    choices = _arrays(choicelist)
    default = asarray(default)
    dtype = result_dtype(*choices, default)
    out = _cast(default, dtype)
    for c, v in zip(reversed(conds), reversed(choices)):  # the first true condition wins
        out = E.select_p.bind(c, _cast(v, dtype), out)
    return out


def where(condition, x=None, y=None):
    """numpy.where(condition, x, y): x where condition holds (nonzero), else y, broadcast."""
    if x is None and y is None:
        from functrans.numpy._sorting import nonzero
        # concrete conditions only (numpy.nonzero names the fix)
        return like_inputs(nonzero(condition), (condition,))
    if x is None or y is None:
        raise TypeError("where: pass both x and y (or neither, for numpy.nonzero(condition)).")
    if type(condition) is _ndarray and _trace_state.dynamic.level == 0 and \
            condition.dtype is _BOOL:
        if type(x) is _ndarray:
            fast = (x.dtype is y.dtype if type(y) is _ndarray else
                    type(y) is float and x.dtype.kind == "f")
        else:
            fast = type(x) is float and type(y) is _ndarray and y.dtype.kind == "f"
        if fast:
            try:
                return E.select_p.impl(condition, x, y)
            except ValueError:
                pass
    tc, tx, ty = type(condition), type(x), type(y)
    if tc is Array or tx is Array or ty is Array:  # an Array result, numpy on plain views
        condition, x, y = as_plain(condition), as_plain(x), as_plain(y)
        if type(condition) is _ndarray and _trace_state.dynamic.level == 0 and \
                condition.dtype is _BOOL and ((type(x) is _ndarray and (
                    x.dtype is y.dtype if type(y) is _ndarray else
                    type(y) is float and x.dtype.kind == "f")) or (
                type(x) is float and type(y) is _ndarray and y.dtype.kind == "f")):
            try:
                return as_array(E.select_p.impl(condition, x, y))
            except ValueError:
                pass
        return as_array(where(condition, x, y))
    if (adapter := foreign_adapter((condition, x, y))) is not None:  # dask or CuPy arrays
        return call_traced(where, adapter, (condition, x, y), {})
    plain = tc is _ndarray or tx is _ndarray or ty is _ndarray
    c = asarray(condition)
    if c.dtype != _BOOL:
        c = _cast(c, _BOOL)
    x, y = _arrays((x, y))
    dtype = result_dtype(x, y)
    out = E.select_p.bind(c, _cast(x, dtype), _cast(y, dtype))
    return out if plain else as_array(out)


where.returns_arrays = True


def logaddexp(x1, x2):
    """numpy.logaddexp: log(exp(x1) + exp(x2)) without overflow or loss of small terms, the
    logaddexp row (functrans/primitives/binary_math.py). Its derivatives are the softmax
    weights of (x1, x2), 1/2 each at a tie, of every order.

    >>> import numpy as np, functrans.numpy as fnp
    >>> float(fnp.logaddexp(1000.0, 1000.0))
    1000.6931471805599
    """
    return B.logaddexp_p.bind(*_converted(np.logaddexp, (x1, x2)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.isclose: |a - b| <= atol + rtol * |b|, infinities equal only to themselves."""
    a, b = _converted(np.subtract, (a, b)) if result_dtype(a, b).kind != "b" else \
        (_cast(a, np.int64), _cast(b, np.int64))
    if a.dtype.kind in "iu":
        a, b = _cast(a, np.float64), _cast(b, np.float64)
    finite = E.and_(isfinite(a), isfinite(b))
    zero = np.zeros((), a.dtype)
    a_, b_ = E.select(finite, a, zero), E.select(finite, b, zero)  # no inf - inf evaluated
    diff = E.abs(E.sub(a_, b_))
    tol = E.add(np.asarray(atol, a.dtype), E.mul(np.asarray(rtol, a.dtype), E.abs(b_)))
    close = E.select(finite, E.le(diff, tol), E.eq(a, b))
    if equal_nan:
        close = E.or_(close, E.and_(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """numpy.allclose: whether isclose holds everywhere (a 0-d bool array; bool() it eagerly)."""
    from functrans.numpy._reductions import all as all_
    return all_(isclose(a, b, rtol, atol, equal_nan))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: NaN to `nan`, +-inf to the dtype's largest finite values (or the
    values given). Derivative 1 where x is finite, 0 where it was replaced."""
    given, x = x, asarray(x)
    if x.dtype.kind not in "fc":
        return owned(x, given) if copy else x
    if x.dtype.kind == "c":
        raise DTypeError("nan_to_num: complex inputs are not supported; apply it to the real "
                         "and imaginary parts separately.")
    big = np.finfo(x.dtype).max
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = E.select(E.ne(x, x), np.asarray(nan, x.dtype), x)
    out = E.select(E.eq(x, np.asarray(np.inf, x.dtype)), np.asarray(posinf, x.dtype), out)
    return E.select(E.eq(x, np.asarray(-np.inf, x.dtype)), np.asarray(neginf, x.dtype), out)


# --- operators of tracers --------------------------------------------------------------------

def _swap(f):
    return lambda self, other: f(other, self)


install_array_methods({
    "__add__": add, "__radd__": _swap(add),
    "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply),
    "__truediv__": true_divide, "__rtruediv__": _swap(true_divide),
    "__floordiv__": floor_divide, "__rfloordiv__": _swap(floor_divide),
    "__mod__": remainder, "__rmod__": _swap(remainder),
    "__divmod__": lambda self, other: (floor_divide(self, other), remainder(self, other)),
    "__rdivmod__": lambda self, other: (floor_divide(other, self), remainder(other, self)),
    "__pow__": power, "__rpow__": _swap(power),
    "__neg__": negative, "__pos__": positive, "__abs__": absolute,
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": equal, "__ne__": not_equal,
    "__and__": bitwise_and, "__rand__": _swap(bitwise_and),
    "__or__": bitwise_or, "__ror__": _swap(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _swap(bitwise_xor),
    "__invert__": invert,
    "real": property(real), "imag": property(imag), "conj": conj, "conjugate": conj,
})
