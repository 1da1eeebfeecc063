"""PyTorch's elementwise math: arithmetic with PyTorch's promotion, the unary functions,
comparisons, where and clamp."""

from __future__ import annotations

import builtins
import functools

import numpy as np

import functrans.numpy as fnp
from functrans.errors import MissingRuleError
from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.torch import _dtype
from functrans.torch._grad_mode import MODE
from functrans.torch._ops import (_default_float, _operand, _prim, as_tensor, clone, fast_binary,
                                  fast_unary_float, named, nary, unary, unary_float)
from functrans.torch._record import Op, check_broadcast, composite, run
from functrans.torch._tensor import Tensor, wrap

# the float functions, one primitive row each (its torch_name names the node): integer and
# bool tensors go to the default float dtype
_FLOAT_UNARY = ("sin", "cos", "tan", "exp", "log", "tanh", "sqrt", "sigmoid", "asin", "acos",
                "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "exp2", "expm1", "log2",
                "log10", "log1p", "rsqrt", "erf", "erfc", "floor", "ceil", "trunc")
for _name in _FLOAT_UNARY:
    globals()[_name] = fast_unary_float(_prim("logistic" if _name == "sigmoid" else _name), _name)
ROUND = _prim("round")
NEG, ADD, SUB, MUL, DIV, ABS, RELU = (_prim(n) for n in ("neg", "add", "sub", "mul", "div",
                                                        "abs", "relu"))
RSUB = _prim("sub", "RsubBackward1")
_sign_of_any = fast_unary_float(_prim("sign"), "sign")
# PyTorch's sign is (0 < x) - (x < 0): 0 at nan, where numpy's (and JAX's) is nan
_sign = composite("SignBackward0")(lambda x: E.select(E.ne(x, x), np.zeros((), x.dtype),
                                                      E.sign(x)))


def sign(input):
    """torch.sign: -1, 0 or 1 as PyTorch gives them (0 at nan); its derivative is zero."""
    if type(input) is Tensor and input._value.dtype.kind == "f":
        return unary(_sign, input)
    if isinstance(input, Tensor) and input._value.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return _sign_of_any(input)


def round(x, decimals=0):
    """torch.round: to the nearest integer (halves to even), or to `decimals` places."""
    if decimals:
        scale = 10.0 ** decimals
        return div(unary_float(ROUND, mul(x, scale)), scale)
    return unary_float(ROUND, x)


def abs(x):
    """torch.abs (also torch.absolute): |x|, with PyTorch's derivative sign(x), 0 at x = 0."""
    x = as_tensor(x)
    return unary(ABS, x) if x._value.dtype.kind in "fc" else wrap(np.abs(x._value))


neg = negative = named(lambda x: unary(NEG, x), "neg", "torch.neg (also negative): -x.")
relu = named(lambda x: unary(RELU, x), "relu",
             "torch.relu: max(x, 0), with PyTorch's zero derivative at x = 0.")
reciprocal = fast_unary_float(composite("ReciprocalBackward0")(fnp.reciprocal), "reciprocal")
square = named(lambda x: pow(x, 2), "square", "torch.square: x * x.")
absolute = abs
INTEGER_POW = _prim("integer_pow", "PowBackward0")
POW_SCALAR_EXP = _prim("pow", "PowBackward0")
SCALAR_POW = _prim("scalar_pow", "PowBackward0")
POW_TENSORS = _prim("pow", "PowBackward1")
POW_SCALAR_BASE = _prim("pow", "PowBackward2")


def pow(x, exponent):
    """x ** exponent: PowBackward0 (number exponent), 1 (tensor exponent), 2 (number base)."""
    if not isinstance(x, Tensor):
        return nary(POW_SCALAR_BASE, (x, exponent), scalar_overload=True)
    if isinstance(exponent, Tensor):
        return nary(POW_TENSORS, (x, exponent))
    if isinstance(exponent, bool | int | float) and float(exponent).is_integer() and \
            builtins.abs(exponent) < 2 ** 31 and (exponent >= 0 or x._value.dtype.kind in "fc"):
        v = x._value
        if isinstance(exponent, float) and v.dtype.kind not in "fc":
            v = v.astype(_default_float())
        return run(INTEGER_POW, (x,), (v,), {"y": int(exponent)})
    if isinstance(exponent, float) and x._value.dtype.kind == "f":
        return run(SCALAR_POW, (x,), (x._value,), {"y": exponent})
    return nary(POW_SCALAR_EXP, (x, exponent), scalar_overload=True)


def _scaled_binary(name, op, what):
    fast = fast_binary(op)

    def fn(input, other, *, alpha=1):
        return fast(input, other if alpha == 1 else mul(other, alpha))
    return named(fn, name, f"torch.{name}: {what}, with PyTorch's type promotion.")


add = _scaled_binary("add", ADD, "input + alpha * other")
sub = subtract = _scaled_binary("sub", SUB, "input - alpha * other")
mul = multiply = named(fast_binary(MUL), "mul", "torch.mul (also multiply): input * other, "
                       "with PyTorch's type promotion.")


def rsub(input, other, *, alpha=1):
    """other - alpha * input (the reflected subtraction `2 - x`)."""
    return nary(RSUB, (other, input if alpha == 1 else mul(input, alpha)), scalar_overload=True)


def _true_div_dtype(a, b):
    dt = _dtype.result_type(a, b)
    return dt if dt.kind in "fc" else _default_float()


_true_div = fast_binary(DIV, lambda a, b: nary(DIV, (a, b), _true_div_dtype(a, b)),
                        float_only=True)


def div(input, other, *, rounding_mode=None):
    """torch.div (also divide, true_divide): input / other; rounding_mode 'trunc' or 'floor'."""
    if rounding_mode is None:
        return _true_div(input, other)
    if rounding_mode == "trunc":
        return trunc(div(input, other)) if _dtype.result_type(input, other).kind in "fc" \
            else nary(DIV, (input, other))
    if rounding_mode == "floor":
        return floor_divide(input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


divide = true_divide = div


rdiv = named(lambda x, other: mul(reciprocal(x), other), "rdiv",
             "other / x, which PyTorch records as reciprocal(x) * other (MulBackward0).")


def _float_kernel(name, x):
    """PyTorch's error for an integer or bool dtype that a float-only kernel refuses."""
    return NotImplementedError(f'"{name}_cpu" not implemented for \'{_dtype.kind(x)}\'')


def _binary(name, op, what, ints="keep", tensor_op=None):
    """torch.NAME(input, other) as one node, `op` (`tensor_op` where other is a tensor: PyTorch's
    Backward1 node); an integer result dtype stays (`ints` "keep"), goes to the default float
    dtype ("float") or is refused ("refuse")."""
    def fn(input, other):
        dt = _dtype.result_type(input, other)
        if dt.kind not in "fc" and ints != "keep":
            if ints == "refuse":
                raise _float_kernel(name, dt)
            dt = _default_float()
        this = tensor_op if tensor_op is not None and isinstance(other, Tensor) else op
        return nary(this, (input, other), dt)
    return named(fn, name, f"torch.{name}: {what}, elementwise, with PyTorch's type promotion.")


floor_divide = _binary("floor_divide", _prim("floor_divide", "FloorDivideBackward0"),
                       "input / other rounded down")
remainder = _binary("remainder", _prim("rem", "RemainderBackward0"), "the remainder of input / "
                    "other with the sign of other (Python's %)",
                    tensor_op=_prim("rem", "RemainderBackward1"))
fmod = _binary("fmod", _prim("fmod", "FmodBackward0"), "the remainder of input / other with the "
               "sign of input (C's fmod)", tensor_op=_prim("fmod", "FmodBackward1"))


def _first_on_ties(name, prim_name):
    """The max/min row's Op with PyTorch's values: on a tie the first operand (so maximum(-0.0,
    0.0) is -0.0, where numpy gives the second), NaN propagated."""
    row = _prim(prim_name)
    return Op(name, lambda a, b: np.where(a == b, a, row.impl(a, b)), row.traced)


maximum = _binary("maximum", _first_on_ties("MaximumBackward0", "max"),
                  "the larger of input and other")
minimum = _binary("minimum", _first_on_ties("MinimumBackward0", "min"),
                  "the smaller of input and other")
atan2 = arctan2 = _binary("atan2", _prim("atan2", "Atan2Backward0"), "the angle of the point "
                          "(other, input)", ints="float")


def _broadcasting(np_fn, *vals):
    """np_fn(*vals), with PyTorch's error where the operands' shapes do not broadcast."""
    try:
        return np_fn(*vals)
    except ValueError:
        check_broadcast(*[np.shape(v) for v in vals])
        raise


def _compare(name, np_fn, symbol):
    def fn(input, other):
        dt = _dtype.result_type(input, other)
        return wrap(np.asarray(_broadcasting(np_fn, _operand(input, dt), _operand(other, dt))))
    return named(fn, name, f"torch.{name}: input {symbol} other, elementwise after PyTorch's "
                 "type promotion, as a bool tensor.")


eq, ne, lt, le, gt, ge = (_compare(n, f, s) for n, f, s in (
    ("eq", np.equal, "=="), ("ne", np.not_equal, "!="), ("lt", np.less, "<"),
    ("le", np.less_equal, "<="), ("gt", np.greater, ">"), ("ge", np.greater_equal, ">=")))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def equal(input, other) -> bool:
    """torch.equal: whether input and other have the same shape and values (a bool)."""
    a, b = as_tensor(input), as_tensor(other)
    return a.shape == b.shape and bool(np.all(a._value == b._value))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """torch.allclose: whether |input - other| <= atol + rtol * |other| everywhere (a bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._value.all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose: |input - other| <= atol + rtol * |other|, elementwise, as a bool tensor."""
    return wrap(_broadcasting(functools.partial(np.isclose, rtol=rtol, atol=atol,
                                                equal_nan=equal_nan),
                              as_tensor(input)._value, as_tensor(other)._value))


def _bool_function(name, np_fn, what):
    return named(lambda *args: wrap(_broadcasting(np_fn, *[as_tensor(a)._value for a in args])),
                 name, f"torch.{name}: {what}, elementwise, as a bool tensor (no gradient).")


for _name, _what in (("logical_not", "not x"), ("logical_and", "a and b"),
                     ("logical_or", "a or b"), ("logical_xor", "a xor b"),
                     ("isnan", "whether x is NaN"), ("isinf", "whether x is +inf or -inf"),
                     ("isfinite", "whether x is finite"),
                     ("signbit", "whether x's sign bit is set (-0.0 included)")):
    globals()[_name] = _bool_function(_name, getattr(np, _name), _what)

WHERE = _prim("select", "WhereBackward0")


@composite("WhereBackward0")
def _where_promoted(c, x, y, *, dt):
    return E.select(c, S.convert_element_type(x, dt), S.convert_element_type(y, dt))


def where(condition, input=None, other=None):
    """torch.where: input where condition holds, else other; with condition alone, nonzero."""
    cond = as_tensor(condition)
    if input is None and other is None:
        return tuple(wrap(i) for i in np.nonzero(cond._value))
    c = cond._value if cond._value.dtype == np.bool_ else cond._value != 0
    dt = _dtype.result_type(input, other)
    args = (input, other)
    check_broadcast(c.shape, *[np.shape(a._value if isinstance(a, Tensor) else a) for a in args])
    if MODE.enabled and builtins.any(isinstance(a, Tensor) and a._value.dtype != dt and
                                     a._requires_grad for a in args):
        raw = [c] + [a._value if isinstance(a, Tensor) else _operand(a, dt) for a in args]
        return run(_where_promoted, (None, *args), raw, {"dt": dt})
    return run(WHERE, (None, input, other), (c, _operand(input, dt), _operand(other, dt)))


# clamp: the rows clamp, clamp_min and clamp_max (functrans/primitives/elementwise.py) state
# PyTorch's derivative (the gradient reaches x on [min, max], boundaries included) beside JAX's
def _clamp(input, min, max, own_name):
    x = as_tensor(input)
    bounds = [b for b in (min, max) if b is not None]
    if not bounds:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    prim = "clamp" if len(bounds) == 2 else "clamp_min" if max is None else "clamp_max"
    tensors = builtins.any(isinstance(b, Tensor) for b in bounds)
    # torch.clamp's nodes: ClampBackward1 (numbers), 0 (tensors); clamp_min's: ClampMinBackward0, 1
    op = _prim(prim, f"{prim.title().replace('_', '')}Backward{int(tensors)}" if own_name
               else f"ClampBackward{int(not tensors)}")
    if tensors:
        return nary(op, (x, *bounds))
    v = x._value
    return run(op, (x, *[None] * len(bounds)), (v, *[v.dtype.type(b) for b in bounds]))


clamp = clip = named(lambda input, min=None, max=None: _clamp(input, min, max, False), "clamp",
                     "torch.clamp (also torch.clip): input limited to [min, max]; the gradient "
                     "is zero outside.")
clamp_min = named(lambda input, min: _clamp(input, min, None, True), "clamp_min",
                  "torch.clamp_min: input limited from below by min.")
clamp_max = named(lambda input, max: _clamp(input, None, max, True), "clamp_max",
                  "torch.clamp_max: input limited from above by max.")
_LERP = [composite(f"LerpBackward{k}")(lambda x, end, w: E.add(x, E.mul(w, E.sub(end, x))))
         for k in (0, 1)]


def lerp(input, end, weight):
    """torch.lerp: input + weight * (end - input); LerpBackward0 (weight a number) or 1."""
    tensor = isinstance(weight, Tensor)
    return nary(_LERP[tensor], (input, end, weight), scalar_overload=not tensor)


_NAN_TO_NUM = composite("NanToNumBackward0")(fnp.nan_to_num)  # gradient 1 where finite, else 0


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """torch.nan_to_num: NaN, +inf and -inf replaced by nan, posinf and neginf."""
    x = as_tensor(input)
    if x._value.dtype.kind not in "fc":
        return clone(x)
    return unary(_NAN_TO_NUM, x, {"nan": nan, "posinf": posinf, "neginf": neginf})


def _addc(name, node, combine, what):
    op = composite(node)(lambda x, t1, t2, value: E.add(x, E.mul(value, combine(t1, t2))))

    def fn(input, tensor1, tensor2, *, value=1):
        args = (as_tensor(input), as_tensor(tensor1), as_tensor(tensor2))
        dt = _dtype.result_type(*args)
        if combine is E.div and dt.kind not in "fc":
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future  release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
        return nary(op, (*args, value), dt, scalar_overload=True)
    return named(fn, name, f"torch.{name}: input + value * {what}.")


addcmul = _addc("addcmul", "AddcmulBackward0", E.mul, "tensor1 * tensor2")
addcdiv = _addc("addcdiv", "AddcdivBackward0", E.div, "tensor1 / tensor2")


# --- more of PyTorch's elementwise math, each one node (PyTorch's name) over functrans.numpy -----

def _whole_numbers_kept(fn):
    """fn (floor, ceil, trunc, round), which gives an integer tensor back as PyTorch does (a
    copy in its dtype) and refuses a bool one."""
    def rounding(input, *args, **kwargs):
        if isinstance(input, Tensor) and input._value.dtype.kind in "biu":
            if input._value.dtype == np.bool_:
                raise NotImplementedError(f'"{fn.__name__}_vml_cpu" not implemented for '
                                          "'Bool'")
            return wrap(input._value.copy())
        return fn(input, *args, **kwargs)
    return named(rounding, fn.__name__, f"torch.{fn.__name__}: to a whole number, elementwise; "
                 "an integer tensor comes back as a copy, a bool one is refused.")


floor, ceil, trunc, round = map(_whole_numbers_kept, (floor, ceil, trunc, round))
arccos, arcsin, arctan, arccosh, arcsinh, arctanh = acos, asin, atan, acosh, asinh, atanh
fix = trunc


def positive(input):
    """torch.positive: input itself (PyTorch refuses bool tensors)."""
    x = as_tensor(input)
    if x._value.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


# xlogy, logaddexp, hypot, fmax, fmin and copysign are rows stating PyTorch's derivatives
# (functrans/primitives/binary_math.py), logaddexp2 a composite of logaddexp. CopysignBackward0
# (other a tensor) or 1; XlogyBackward0 (two tensors), 1 (input a number), 2 (other a number)
_COPYSIGN = [_prim("copysign", f"CopysignBackward{k}") for k in (0, 1)]
_XLOGY = [_prim("xlogy", f"XlogyBackward{k}") for k in (0, 1, 2)]
logaddexp = _binary("logaddexp", _prim("logaddexp"), "log(exp(input) + exp(other))",
                    ints="refuse")
logaddexp2 = _binary("logaddexp2", composite("Logaddexp2Backward0")(fnp.logaddexp2),
                     "log2(2**input + 2**other)", ints="refuse")
hypot = _binary("hypot", _prim("hypot"), "sqrt(input**2 + other**2)", ints="refuse")
fmax = _binary("fmax", _prim("fmax"), "the larger operand, NaN only where both are")
fmin = _binary("fmin", _prim("fmin"), "the smaller operand, NaN only where both are")


def copysign(input, other):
    """torch.copysign: |input| with other's sign bit; CopysignBackward0 (other a tensor) or 1."""
    dt = _true_div_dtype(input, other)
    tensor = isinstance(other, Tensor)
    return nary(_COPYSIGN[not tensor], (input, other), dt, scalar_overload=not tensor)


def xlogy(input, other):
    """torch.xlogy: input * log(other), 0 where input is 0 (unless other is NaN); XlogyBackward0
    (two tensors), 1 (input a number) or 2 (other a number)."""
    k = 0 if isinstance(input, Tensor) and isinstance(other, Tensor) else \
        1 if isinstance(other, Tensor) else 2
    return nary(_XLOGY[k], (input, other), _true_div_dtype(input, other), scalar_overload=k > 0)


deg2rad = fast_unary_float(composite("Deg2RadBackward0")(fnp.deg2rad), "deg2rad")
rad2deg = fast_unary_float(composite("Rad2DegBackward0")(fnp.rad2deg), "rad2deg")


@composite("SincBackward0")
def _sinc(x):
    # the derivative at x = 0 is 0, as PyTorch's; the second there is -pi^2/3 (PyTorch's: nan)
    if x.dtype == np.float16:  # PyTorch computes half in float32 (sin(pi x) is 0 at integers)
        return S.convert_element_type(fnp.sinc(S.convert_element_type(x, np.float32)), x.dtype)
    return fnp.sinc(x)


sinc = named(fast_unary_float(_sinc, "sinc"), "sinc", "torch.sinc: sin(pi x) / (pi x), 1 at x = 0.")
_FRAC = composite("FracBackward0")(lambda x: E.sub(x, E.trunc(x)))  # derivative 1


def frac(input):
    """torch.frac: input - trunc(input), for float tensors."""
    x = as_tensor(input)
    if x._value.dtype.kind not in "fc":
        raise _float_kernel("frac", x._value.dtype)
    return unary(_FRAC, x)


@composite("LogitBackward0")
def _logit(x, *, eps):
    # log(x) - log1p(-x): PyTorch's derivative 1 / (x (1 - x)), inf at 0 and 1; with eps, x is
    # clamped to [eps, 1 - eps] first (the gradient reaches x on it, boundaries included)
    if eps is not None:
        x = E.clamp(x, np.asarray(eps, x.dtype), np.asarray(1 - eps, x.dtype))
    return E.sub(E.log(x), E.log1p(E.neg(x)))


def logit(input, eps=None):
    """torch.logit: log(p / (1 - p)), input clamped to [eps, 1 - eps] when eps is given."""
    return unary_float(_logit, input, {"eps": None if eps is None else float(eps)})


def _no_derivative(x, values):
    raise MissingRuleError("heaviside: PyTorch defines no derivative (aten::heaviside); "
                           "detach() its inputs or use a smooth step such as torch.sigmoid")


# values at 0, else 1 above 0 and 0 below (and at NaN, as PyTorch's kernel compares)
_HEAVISIDE = Op("NotImplemented", lambda x, v: np.where(x == 0, v, x > 0).astype(x.dtype),
                _no_derivative)  # PyTorch's node of an op without a derivative


def heaviside(input, values):
    """torch.heaviside: 0 below zero, values at zero, 1 above (one dtype for both operands); it
    has no derivative in PyTorch, so backward through it raises."""
    x, v = as_tensor(input), as_tensor(values)
    if x._value.dtype != v._value.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    check_broadcast(x._value.shape, v._value.shape)
    return run(_HEAVISIDE, (x, v), (x._value, v._value))


def is_nonzero(input) -> bool:
    """torch.is_nonzero: whether a one-element tensor is nonzero (PyTorch's error otherwise)."""
    v = as_tensor(input)._value
    if v.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with "
                           f"{'no values' if v.size == 0 else 'more than one value'} is ambiguous")
    return bool(v.reshape(()) != 0)


def is_same_size(input, other) -> bool:
    """torch.is_same_size: whether input and other have the same shape."""
    return as_tensor(input)._value.shape == as_tensor(other)._value.shape


def is_signed(input) -> bool:
    """torch.is_signed: whether input's dtype is signed (floats and complex included)."""
    return as_tensor(input)._value.dtype.kind in "fci"
