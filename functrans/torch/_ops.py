"""PyTorch's math over the primitive table: elementwise ops, reductions and products.

Each function promotes its operands as PyTorch does, runs one `Op` on the raw arrays and
records one node named as PyTorch names it. Ops PyTorch shows as one node but that are several
primitives for us (mean, relu, matmul, softmax, ...) are composites: functions of primitives
whose backward program is the library's VJP of the whole function. No derivative formula lives
here.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._grad_mode import MODE
from functrans.torch._record import Op, composite, loud, prim_op, quiet, run, run1, run2
from functrans.torch._tensor import Tensor, _dim, wrap

_pyabs, _pymax, _pyany = builtins.abs, builtins.max, builtins.any


# --- operands --------------------------------------------------------------------------------

def as_tensor(x, dtype=None) -> Tensor:
    """`x` as a Tensor (no copy for Tensors and numpy arrays of the right dtype)."""
    if isinstance(x, Tensor):
        if dtype is not None and x._value.dtype != _dtype.to_numpy(dtype):
            return to_dtype(x, _dtype.to_numpy(dtype))
        return x
    from functrans.torch._creation import tensor_value
    return wrap(tensor_value(x, dtype))


def _default_float() -> np.dtype:
    return _dtype.get_default_dtype().dtype


def _operand(x, dt):
    """The raw array of a Tensor or constant operand, in dtype `dt`."""
    if isinstance(x, Tensor):
        v = x._value
        return v if v.dtype == dt else v.astype(dt)
    if isinstance(x, (bool, int, float, complex)):
        try:
            return dt.type(x)
        except OverflowError:  # PyTorch wraps an out-of-range integer scalar around
            return np.asarray(x, np.int64 if isinstance(x, int) else None).astype(dt)
    return np.asarray(getattr(x, "_value", x), dt)


_PROMOTED: dict = {}


def _promoted(op: Op) -> Op:
    """`op` applied after converting its operands to one dtype, as a single node: gradients
    then flow back to each operand in its own dtype."""
    p = _PROMOTED.get(op)
    if p is None:
        def fn(*xs, dt):
            return op.traced(*[S.convert_element_type(x, dt) for x in xs])
        p = _PROMOTED[op] = Op(op.name, fn, fn, op.multiple)
    return p


def nary(op: Op, args, dt=None, scalar_overload=False):
    """Run `op` on Tensor/constant `args` promoted to one dtype (PyTorch's result_type).
    `scalar_overload`: the op is PyTorch's Scalar overload, whose numbers are not inputs of
    the node (they do not appear in next_functions)."""
    if dt is None:
        dt = _dtype.result_type(*args)
    vals = []
    mixed = False
    for a in args:
        if isinstance(a, Tensor):
            v = a._value
            if v.dtype != dt:
                if a._requires_grad:
                    mixed = True
                v = v.astype(dt)
            vals.append(v)
        else:
            vals.append(_operand(a, dt))
    inputs = tuple(a if isinstance(a, Tensor) else None for a in args) if scalar_overload \
        else args
    if mixed and MODE.enabled:
        raw = [a._value if isinstance(a, Tensor) else v for a, v in zip(args, vals)]
        return run(_promoted(op), inputs, raw, {"dt": dt}, (dt,))
    return run(op, inputs, vals)


def binary(op: Op, a, b):
    """Fast path of `nary` for two operands."""
    if type(a) is Tensor:
        va = a._value
        tb = type(b)
        if tb is float:
            dt = va.dtype
            if dt.kind == "f":
                return run2(op, a, b, va, dt.type(b))
        elif tb is Tensor:
            vb = b._value
            if vb.dtype == va.dtype:
                return run2(op, a, b, va, vb)
        elif tb is int:
            dt = va.dtype
            if dt.kind == "f":
                return run2(op, a, b, va, dt.type(b))
    elif type(b) is Tensor and type(a) is float and b._value.dtype.kind == "f":
        vb = b._value
        return run2(op, a, b, vb.dtype.type(a), vb)
    return nary(op, (a, b))


def unary_float(op: Op, x):
    """An elementwise function of floats: integer and bool tensors go to the default dtype."""
    if type(x) is not Tensor:
        x = as_tensor(x)
    v = x._value
    if v.dtype.kind not in "fc":
        return run(op, (x,), (v.astype(_default_float()),))
    return run1(op, x, v)


def unary(op: Op, x):
    if type(x) is not Tensor:
        x = as_tensor(x)
    return run1(op, x, x._value)


def _prim(name, torch_name=None) -> Op:
    return prim_op(REGISTRY[name], torch_name)


# --- elementwise -----------------------------------------------------------------------------

SIN, COS, TAN = _prim("sin"), _prim("cos"), _prim("tan", "TanBackward0")
EXP, LOG, TANH, SQRT = _prim("exp"), _prim("log"), _prim("tanh"), _prim("sqrt")
SIGMOID = _prim("logistic", "SigmoidBackward0")
NEG = _prim("neg")
ADD, SUB, MUL, DIV = _prim("add"), _prim("sub"), _prim("mul"), _prim("div")
RSUB = _prim("sub", "RsubBackward1")
_UNARY_NAMES = {
    "asin": "AsinBackward0", "acos": "AcosBackward0", "atan": "AtanBackward0",
    "sinh": "SinhBackward0", "cosh": "CoshBackward0", "asinh": "AsinhBackward0",
    "acosh": "AcoshBackward0", "atanh": "AtanhBackward0", "exp2": "Exp2Backward0",
    "expm1": "Expm1Backward0", "log2": "Log2Backward0", "log10": "Log10Backward0",
    "log1p": "Log1PBackward0", "rsqrt": "RsqrtBackward0", "erf": "ErfBackward0",
    "floor": "FloorBackward0", "ceil": "CeilBackward0", "round": "RoundBackward0",
    "trunc": "TruncBackward0", "sign": "SignBackward0",
}
UNARY_OPS = {name: _prim(name, tn) for name, tn in _UNARY_NAMES.items() if name in REGISTRY}


def sin(x):
    return unary_float(SIN, x)


def cos(x):
    return unary_float(COS, x)


def tan(x):
    return unary_float(TAN, x)


def exp(x):
    return unary_float(EXP, x)


def log(x):
    return unary_float(LOG, x)


def tanh(x):
    return unary_float(TANH, x)


def sqrt(x):
    return unary_float(SQRT, x)


def sigmoid(x):
    return unary_float(SIGMOID, x)


def neg(x):
    return unary(NEG, x)


negative = neg


def _make_unary(name):
    op = UNARY_OPS[name]

    def fn(x):
        return unary_float(op, x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}."
    return fn


for _name in UNARY_OPS:
    globals()[_name] = _make_unary(_name)
asin, acos, atan = globals()["asin"], globals()["acos"], globals()["atan"]
sinh, cosh, asinh = globals()["sinh"], globals()["cosh"], globals()["asinh"]
acosh, atanh, exp2 = globals()["acosh"], globals()["atanh"], globals()["exp2"]
expm1, log2, log10 = globals()["expm1"], globals()["log2"], globals()["log10"]
log1p, rsqrt, erf = globals()["log1p"], globals()["rsqrt"], globals()["erf"]
floor, ceil, trunc = globals()["floor"], globals()["ceil"], globals()["trunc"]
sign = globals()["sign"]


def round(x, decimals=0):
    if decimals:
        scale = 10.0 ** decimals
        return div(unary_float(UNARY_OPS["round"], mul(x, scale)), scale)
    return unary_float(UNARY_OPS["round"], x)


@composite("AbsBackward0")
def _abs(x):
    # |x| = x * sign(x), sign with a zero derivative: d|x| = sign(x), 0 at 0 (PyTorch's choice)
    return E.mul(x, E.sign(x))


def abs(x):
    x = as_tensor(x)
    if x._value.dtype.kind not in "fc":
        return wrap(np.abs(x._value))
    return unary(_abs, x)


absolute = abs


@composite("ReluBackward0")
def _relu(x):
    return E.select(E.gt(x, np.zeros((), x.dtype)), x, np.zeros((), x.dtype))


def relu(x):
    return unary(_relu, as_tensor(x))


@composite("ReciprocalBackward0")
def _reciprocal(x):
    return E.div(np.ones((), x.dtype), x)


def reciprocal(x):
    return unary_float(_reciprocal, x)


INTEGER_POW = _prim("integer_pow", "PowBackward0")
POW_SCALAR_EXP = _prim("pow", "PowBackward0")
POW_TENSORS = _prim("pow", "PowBackward1")
POW_SCALAR_BASE = _prim("pow", "PowBackward2")


def pow(x, exponent):
    """x ** exponent: PowBackward0 (number exponent), 1 (tensor exponent), 2 (number base)."""
    if not isinstance(x, Tensor):
        return nary(POW_SCALAR_BASE, (x, exponent), scalar_overload=True)
    if isinstance(exponent, Tensor):
        return nary(POW_TENSORS, (x, exponent))
    if isinstance(exponent, bool | int | float) and float(exponent).is_integer() and \
            _pyabs(exponent) < 2 ** 31 and (exponent >= 0 or x._value.dtype.kind in "fc"):
        v = x._value
        if isinstance(exponent, float) and v.dtype.kind not in "fc":
            v = v.astype(_default_float())
        return run(INTEGER_POW, (x,), (v,), {"y": int(exponent)}, (int(exponent),))
    return nary(POW_SCALAR_EXP, (x, exponent), scalar_overload=True)


def square(x):
    return pow(x, 2)


def add(input, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    return binary(ADD, input, other)


def sub(input, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    return binary(SUB, input, other)


subtract = sub


def rsub(input, other, *, alpha=1):
    """other - alpha * input (the reflected subtraction `2 - x`)."""
    if alpha != 1:
        input = mul(input, alpha)
    return nary(RSUB, (other, input), scalar_overload=True)


def mul(input, other):
    return binary(MUL, input, other)


multiply = mul


def _true_div_dtype(a, b):
    dt = _dtype.result_type(a, b)
    return dt if dt.kind in "fc" else _default_float()


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        if type(input) is Tensor and type(other) in (float, Tensor) and \
                input._value.dtype.kind == "f" and \
                (type(other) is float or other._value.dtype == input._value.dtype):
            return binary(DIV, input, other)
        return nary(DIV, (input, other), _true_div_dtype(input, other))
    if rounding_mode == "trunc":
        return trunc(div(input, other)) if _dtype.result_type(input, other).kind in "fc" \
            else nary(DIV, (input, other))
    if rounding_mode == "floor":
        return floor_divide(input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


divide = true_divide = div


def rdiv(x, other):
    """other / x, which PyTorch records as reciprocal(x) * other (MulBackward0)."""
    return mul(reciprocal(x), other)


FLOOR_DIVIDE = _prim("floor_divide", "FloorDivideBackward0")


def floor_divide(input, other):
    return nary(FLOOR_DIVIDE, (input, other))


@composite("RemainderBackward0")
def _remainder(x, y):
    # Python's x % y (the sign of y): x - floor(x / y) * y
    if np.dtype(x.dtype).kind in "iu":
        return E.sub(x, E.mul(E.floor_divide(x, y), y))
    return E.sub(x, E.mul(E.floor(E.div(x, y)), y))


def remainder(input, other):
    return nary(_remainder, (input, other))


FMOD = _prim("fmod", "FmodBackward0")


def fmod(input, other):
    return nary(FMOD, (input, other))


MAXIMUM, MINIMUM = _prim("max", "MaximumBackward0"), _prim("min", "MinimumBackward0")


def maximum(input, other):
    return nary(MAXIMUM, (input, other))


def minimum(input, other):
    return nary(MINIMUM, (input, other))


ATAN2 = _prim("atan2", "Atan2Backward0")


def atan2(input, other):
    return nary(ATAN2, (input, other), _true_div_dtype(input, other))


arctan2 = atan2


def _compare(prim_name):
    prim = REGISTRY[prim_name]

    def fn(input, other):
        dt = _dtype.result_type(input, other)
        token = quiet()
        try:
            return wrap(np.asarray(prim.impl(_operand(input, dt), _operand(other, dt))))
        finally:
            loud(token)
    fn.__name__ = fn.__qualname__ = prim_name
    return fn


eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def equal(input, other) -> bool:
    a, b = as_tensor(input), as_tensor(other)
    return a.shape == b.shape and bool(np.all(a._value == b._value))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return bool(np.allclose(as_tensor(input)._value, as_tensor(other)._value, rtol=rtol,
                            atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(np.isclose(as_tensor(input)._value, as_tensor(other)._value, rtol=rtol,
                           atol=atol, equal_nan=equal_nan))


def logical_not(x):
    return wrap(np.logical_not(as_tensor(x)._value))


def logical_and(a, b):
    return wrap(np.logical_and(as_tensor(a)._value, as_tensor(b)._value))


def logical_or(a, b):
    return wrap(np.logical_or(as_tensor(a)._value, as_tensor(b)._value))


def logical_xor(a, b):
    return wrap(np.logical_xor(as_tensor(a)._value, as_tensor(b)._value))


def isnan(x):
    return wrap(np.isnan(as_tensor(x)._value))


def isinf(x):
    return wrap(np.isinf(as_tensor(x)._value))


def isfinite(x):
    return wrap(np.isfinite(as_tensor(x)._value))


WHERE = _prim("select", "WhereBackward0")


def where(condition, input=None, other=None):
    cond = as_tensor(condition)
    if input is None and other is None:
        return tuple(wrap(i) for i in np.nonzero(cond._value))
    c = cond._value if cond._value.dtype == np.bool_ else cond._value != 0
    dt = _dtype.result_type(input, other)
    args = (input, other)
    mixed = _pyany(isinstance(a, Tensor) and a._value.dtype != dt and a._requires_grad
                for a in args)
    if mixed and MODE.enabled:
        raw = [c] + [a._value if isinstance(a, Tensor) else _operand(a, dt) for a in args]
        return run(_where_promoted, (None, *args), raw, {"dt": dt}, (dt,))
    return run(WHERE, (None, input, other), (c, _operand(input, dt), _operand(other, dt)))


@composite("WhereBackward0")
def _where_promoted(c, x, y, *, dt):
    return E.select(c, S.convert_element_type(x, dt), S.convert_element_type(y, dt))


@composite("ClampBackward1")
def _clamp(x, lo, hi):
    # the gradient passes where lo <= x <= hi (PyTorch's convention at the bounds)
    inside = E.and_(E.ge(x, lo), E.le(x, hi))
    return E.select(inside, x, E.select(E.lt(x, lo), lo, hi))


@composite("ClampBackward1")
def _clamp_min(x, lo):
    return E.select(E.ge(x, lo), x, E.select(E.ne(x, x), x, lo))


@composite("ClampBackward1")
def _clamp_max(x, hi):
    return E.select(E.le(x, hi), x, E.select(E.ne(x, x), x, hi))


def clamp(input, min=None, max=None):
    x = as_tensor(input)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = x
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    dt = x._value.dtype
    if min is not None and max is not None:
        return run(_clamp, (x, None, None), (x._value, dt.type(min), dt.type(max)))
    if min is not None:
        return run(_clamp_min, (x, None), (x._value, dt.type(min)))
    if max is not None:
        return run(_clamp_max, (x, None), (x._value, dt.type(max)))
    raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


clip = clamp


def lerp(input, end, weight):
    return add(input, mul(weight, sub(end, input)))


# --- activation functions --------------------------------------------------------------------

@composite("SoftmaxBackward0")
def _softmax(x, *, dim):
    z = E.sub(x, S.broadcast_in_dim(R.reduce_max(x, (dim,)), x.shape, _kept(x.ndim, dim)))
    e = E.exp(z)
    s = R.reduce_sum(e, (dim,))
    return E.div(e, S.broadcast_in_dim(s, x.shape, _kept(x.ndim, dim)))


@composite("LogSoftmaxBackward0")
def _log_softmax(x, *, dim):
    z = E.sub(x, S.broadcast_in_dim(R.reduce_max(x, (dim,)), x.shape, _kept(x.ndim, dim)))
    lse = E.log(R.reduce_sum(E.exp(z), (dim,)))
    return E.sub(z, S.broadcast_in_dim(lse, x.shape, _kept(x.ndim, dim)))


def _kept(ndim, dim):
    return tuple(i for i in range(ndim) if i != dim)


def softmax(input, dim=None, dtype=None):
    x = as_tensor(input, dtype)
    if x._value.ndim == 0:
        return unary_float(_softmax_scalar, x)
    d = _dim(dim if dim is not None else -1, x._value.ndim)
    return run(_softmax, (x,), (_float_value(x),), {"dim": d}, (d,))


def log_softmax(input, dim=None, dtype=None):
    x = as_tensor(input, dtype)
    d = _dim(dim if dim is not None else -1, x._value.ndim)
    return run(_log_softmax, (x,), (_float_value(x),), {"dim": d}, (d,))


@composite("SoftmaxBackward0")
def _softmax_scalar(x):
    return E.exp(E.sub(x, x))


def _float_value(x):
    v = x._value
    return v if v.dtype.kind in "fc" else v.astype(_default_float())


@composite("SoftplusBackward0")
def _softplus(x, *, beta, threshold):
    bx = E.mul(x, np.asarray(beta, x.dtype))
    soft = E.div(E.log1p(E.exp(E.neg(E.abs(bx)))), np.asarray(beta, x.dtype))
    soft = E.add(soft, E.div(E.max(bx, np.zeros((), x.dtype)), np.asarray(beta, x.dtype)))
    return E.select(E.gt(bx, np.asarray(threshold, x.dtype)), x, soft)


def softplus(input, beta=1.0, threshold=20.0):
    x = as_tensor(input)
    return run(_softplus, (x,), (_float_value(x),), {"beta": float(beta),
                                                      "threshold": float(threshold)},
               (float(beta), float(threshold)))


@composite("SiluBackward0")
def _silu(x):
    return E.mul(x, E.logistic(x))


def silu(input):
    return unary_float(_silu, input)


@composite("GeluBackward0")
def _gelu(x):
    half = np.asarray(0.5, x.dtype)
    return E.mul(E.mul(half, x),
                 E.add(np.ones((), x.dtype), E.erf(E.mul(x, np.asarray(0.5 ** 0.5, x.dtype)))))


@composite("GeluBackward0")
def _gelu_tanh(x):
    c = np.asarray(math.sqrt(2 / math.pi), x.dtype)
    inner = E.mul(c, E.add(x, E.mul(np.asarray(0.044715, x.dtype), E.integer_pow(x, 3))))
    return E.mul(E.mul(np.asarray(0.5, x.dtype), x), E.add(np.ones((), x.dtype), E.tanh(inner)))


def gelu(input, approximate="none"):
    return unary_float(_gelu_tanh if approximate == "tanh" else _gelu, input)


@composite("LeakyReluBackward0")
def _leaky_relu(x, *, slope):
    return E.select(E.gt(x, np.zeros((), x.dtype)), x, E.mul(x, np.asarray(slope, x.dtype)))


def leaky_relu(input, negative_slope=0.01):
    x = as_tensor(input)
    return run(_leaky_relu, (x,), (x._value,), {"slope": float(negative_slope)},
               (float(negative_slope),))


@composite("EluBackward0")
def _elu(x, *, alpha):
    zero = np.zeros((), x.dtype)
    return E.select(E.gt(x, zero), x, E.mul(np.asarray(alpha, x.dtype), E.expm1(x)))


def elu(input, alpha=1.0):
    x = as_tensor(input)
    return run(_elu, (x,), (x._value,), {"alpha": float(alpha)}, (float(alpha),))


# --- reductions ------------------------------------------------------------------------------

def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims and ndim:
        return tuple(range(ndim))
    return tuple(sorted({_dim(d, ndim) for d in dims}))


def _keep(out, in_shape, dims, keepdim):
    if not keepdim:
        return out
    return S.reshape(out, tuple(1 if i in dims else s for i, s in enumerate(in_shape)))


@composite("SumBackward0")
def _sum_all(x):
    return R.reduce_sum(x, tuple(range(x.ndim)))


@composite("SumBackward1")
def _sum_dims(x, *, dims, keepdim):
    return _keep(R.reduce_sum(x, dims), x.shape, dims, keepdim)


def _sum_dtype(v, dtype):
    if dtype is not None:
        return _dtype.to_numpy(dtype)
    return np.dtype(np.int64) if v.dtype.kind in "biu" else v.dtype


def sum(input, dim=None, keepdim=False, *, dtype=None):
    x = as_tensor(input)
    v = x._value
    dt = _sum_dtype(v, dtype)
    if v.dtype != dt:
        v = v.astype(dt)
    if dim is None:
        return run(_sum_all, (x,), (v,))
    dims = _dims(dim, v.ndim)
    return run(_sum_dims, (x,), (v,), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


@composite("MeanBackward0")
def _mean_all(x):
    n = x.size if x.ndim else 1
    return E.div(R.reduce_sum(x, tuple(range(x.ndim))), np.asarray(n, x.dtype))


@composite("MeanBackward1")
def _mean_dims(x, *, dims, keepdim):
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    s = _keep(R.reduce_sum(x, dims), x.shape, dims, keepdim)
    return E.div(s, np.asarray(n, x.dtype))


def _mean_check(v, dtype, name):
    if dtype is not None:
        return v.astype(_dtype.to_numpy(dtype))
    if v.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_dtype.from_numpy(v.dtype).name.capitalize()}")
    return v


def mean(input, dim=None, keepdim=False, *, dtype=None):
    x = as_tensor(input)
    v = _mean_check(x._value, dtype, "mean")
    if dim is None:
        return run(_mean_all, (x,), (v,))
    dims = _dims(dim, v.ndim)
    return run(_mean_dims, (x,), (v,), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


@composite("ProdBackward0")
def _prod_all(x):
    return R.reduce_prod(x, tuple(range(x.ndim)))


@composite("ProdBackward1")
def _prod_dims(x, *, dims, keepdim):
    return _keep(R.reduce_prod(x, dims), x.shape, dims, keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    x = as_tensor(input)
    v = x._value
    dt = _sum_dtype(v, dtype)
    v = v.astype(dt) if v.dtype != dt else v
    if dim is None:
        return run(_prod_all, (x,), (v,))
    dims = _dims(dim, v.ndim)
    return run(_prod_dims, (x,), (v,), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


@composite("MaxBackward1")
def _max_all(x):
    return R.reduce_max(x, tuple(range(x.ndim)))


@composite("MinBackward1")
def _min_all(x):
    return R.reduce_min(x, tuple(range(x.ndim)))


@composite("AmaxBackward0")
def _amax(x, *, dims, keepdim):
    return _keep(R.reduce_max(x, dims), x.shape, dims, keepdim)


@composite("AminBackward0")
def _amin(x, *, dims, keepdim):
    return _keep(R.reduce_min(x, dims), x.shape, dims, keepdim)


class _ValuesIndices(tuple):
    """The (values, indices) pair returned by max(dim)/min(dim)."""

    __slots__ = ()

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"

    _name = "max"


@composite("MaxBackward0")
def _select_along(x, idx, *, dim, keepdim):
    # the entries of x at integer positions `idx` along `dim` (idx comes from argmax/argmin,
    # computed eagerly): one gather, so the gradient goes to that one position, as in PyTorch
    moved = S.moveaxis(x, dim, x.ndim - 1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    m = int(np.prod(lead, dtype=np.int64))
    flat = S.reshape(moved, (m * n,))
    pos = E.add(np.arange(m, dtype=np.int64) * n, S.reshape(idx, (m,)))
    out = S.reshape(REGISTRY["gather"].bind(flat, pos, axis=0), lead)
    return S.expand_dims(out, (dim,)) if keepdim else out


_SELECT_MIN = Op("MinBackward0", _select_along.impl, _select_along.traced)


class _MaxResult(_ValuesIndices):
    __slots__ = ()
    _name = "max"


class _MinResult(_ValuesIndices):
    __slots__ = ()
    _name = "min"


def _max_min(input, dim, keepdim, other, is_max):
    x = as_tensor(input)
    if other is not None:
        return maximum(x, other) if is_max else minimum(x, other)
    if dim is None:
        if x._value.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        return run(_max_all if is_max else _min_all, (x,), (x._value,))
    result = _MaxResult if is_max else _MinResult
    v = x._value
    d = _dim(dim, v.ndim)
    if v.ndim == 0:
        return result((clone(x), wrap(np.zeros((), np.int64))))
    idx = (np.argmax if is_max else np.argmin)(v, axis=d).astype(np.int64)
    values = run(_select_along if is_max else _SELECT_MIN, (x, None), (v, idx),
                 {"dim": d, "keepdim": bool(keepdim)}, (d, bool(keepdim)))
    if keepdim:
        idx = np.expand_dims(idx, d)
    return result((values, wrap(idx)))


def max(input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _max_min(input, dim, keepdim, other, True)


def min(input, dim=None, keepdim=False, *, other=None):
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _max_min(input, dim, keepdim, other, False)


def amax(input, dim=(), keepdim=False):
    x = as_tensor(input)
    dims = _dims(dim, x._value.ndim)
    return run(_amax, (x,), (x._value,), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


def amin(input, dim=(), keepdim=False):
    x = as_tensor(input)
    dims = _dims(dim, x._value.ndim)
    return run(_amin, (x,), (x._value,), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


def argmax(input, dim=None, keepdim=False):
    v = as_tensor(input)._value
    if dim is None:
        return wrap(np.asarray(np.argmax(v), np.int64))
    out = np.argmax(v, axis=_dim(dim, v.ndim), keepdims=keepdim)
    return wrap(np.asarray(out, np.int64))


def argmin(input, dim=None, keepdim=False):
    v = as_tensor(input)._value
    if dim is None:
        return wrap(np.asarray(np.argmin(v), np.int64))
    out = np.argmin(v, axis=_dim(dim, v.ndim), keepdims=keepdim)
    return wrap(np.asarray(out, np.int64))


@composite("VarBackward0")
def _var(x, *, dims, correction, keepdim):
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    mu = E.div(R.reduce_sum(x, dims), np.asarray(n, x.dtype))
    c = E.sub(x, S.broadcast_in_dim(mu, x.shape, tuple(i for i in range(x.ndim)
                                                        if i not in dims)))
    ss = R.reduce_sum(E.mul(c, c), dims)
    return _keep(E.div(ss, np.asarray(_pymax(n - correction, 0), x.dtype)), x.shape, dims,
                 keepdim)


@composite("StdBackward0")
def _std(x, *, dims, correction, keepdim):
    return E.sqrt(_var.traced(x, dims=dims, correction=correction, keepdim=keepdim))


def _var_args(input, dim, unbiased, keepdim, correction):
    x = as_tensor(input)
    if isinstance(dim, bool):  # var(x, unbiased) legacy positional form
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _dims(dim, x._value.ndim)
    v = _mean_check(x._value, None, "var")
    params = {"dims": dims, "correction": int(correction), "keepdim": bool(keepdim)}
    return x, v, params, (dims, int(correction), bool(keepdim))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    x, v, params, key = _var_args(input, dim, unbiased, keepdim, correction)
    return run(_var, (x,), (v,), params, key)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    x, v, params, key = _var_args(input, dim, unbiased, keepdim, correction)
    return run(_std, (x,), (v,), params, key)


@composite("LinalgVectorNormBackward0")
def _norm(x, *, ord, dims, keepdim):
    a = E.abs(x)
    if ord == 2:
        out = E.sqrt(R.reduce_sum(E.mul(x, x), dims))
    elif ord == 1:
        out = R.reduce_sum(_abs.traced(x), dims)
    elif ord == math.inf:
        out = R.reduce_max(a, dims)
    else:
        p = np.asarray(ord, x.dtype)
        out = E.pow(R.reduce_sum(E.pow(a, p), dims), E.div(np.ones((), x.dtype), p))
    return _keep(out, x.shape, dims, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    x = as_tensor(input, dtype)
    ord = 2 if p in ("fro", None) else float(p)
    dims = _dims(dim, x._value.ndim)
    return run(_norm, (x,), (_float_value(x),), {"ord": ord, "dims": dims,
                                                  "keepdim": bool(keepdim)},
               (ord, dims, bool(keepdim)))


@composite("LogsumexpBackward0")
def _logsumexp(x, *, dims, keepdim):
    m = R.reduce_max(x, dims)
    kept = tuple(i for i in range(x.ndim) if i not in dims)
    finite = E.select(E.is_finite(m), m, np.zeros((), x.dtype))
    z = E.sub(x, S.broadcast_in_dim(finite, x.shape, kept))
    out = E.add(E.log(R.reduce_sum(E.exp(z), dims)), finite)
    return _keep(out, x.shape, dims, keepdim)


def logsumexp(input, dim, keepdim=False):
    x = as_tensor(input)
    dims = _dims(dim, x._value.ndim)
    return run(_logsumexp, (x,), (_float_value(x),), {"dims": dims, "keepdim": bool(keepdim)},
               (dims, bool(keepdim)))


CUMSUM = _prim("cumsum", "CumsumBackward0")
CUMPROD = _prim("cumprod", "CumprodBackward0")


def cumsum(input, dim, *, dtype=None):
    x = as_tensor(input)
    v = x._value
    dt = _sum_dtype(v, dtype)
    v = v.astype(dt) if v.dtype != dt else v
    d = _dim(dim, v.ndim)
    return run(CUMSUM, (x,), (v,), {"axis": d, "reverse": False}, (d, False))


def cumprod(input, dim, *, dtype=None):
    x = as_tensor(input)
    v = x._value
    dt = _sum_dtype(v, dtype)
    v = v.astype(dt) if v.dtype != dt else v
    d = _dim(dim, v.ndim)
    return run(CUMPROD, (x,), (v,), {"axis": d, "reverse": False}, (d, False))


def all(input, dim=None, keepdim=False):
    v = as_tensor(input)._value
    return wrap(np.asarray(np.all(v, axis=None if dim is None else _dim(dim, v.ndim),
                                  keepdims=keepdim)))


def any(input, dim=None, keepdim=False):
    v = as_tensor(input)._value
    return wrap(np.asarray(np.any(v, axis=None if dim is None else _dim(dim, v.ndim),
                                  keepdims=keepdim)))


def count_nonzero(input, dim=None):
    v = as_tensor(input)._value
    return wrap(np.asarray(np.count_nonzero(v, axis=dim), np.int64))


# --- products --------------------------------------------------------------------------------

@composite("MmBackward0")
def _mm(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((1,), (0,)), ((), ())))


@composite("MvBackward0")
def _mv(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((1,), (0,)), ((), ())))


@composite("DotBackward0")
def _dot(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((0,), (0,)), ((), ())))


@composite("BmmBackward0")
def _bmm(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,))))


@composite("UnsafeViewBackward0")
def _matmul_nd(a, b):
    return fnp.matmul(a, b)


def _check_same_dtype(name, a, b):
    if a._value.dtype != b._value.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_long(a)} != {_long(b)}")


def _long(t):
    return {"float32": "float", "float64": "double", "int64": "long int"}.get(
        t._value.dtype.name, t._value.dtype.name)


def _mat_shape_error(a, b):
    sa, sb = a._value.shape, b._value.shape
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                        f"{sb[0]}x{sb[1]})")


def mm(input, mat2):
    a, b = as_tensor(input), as_tensor(mat2)
    if a._value.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._value.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_same_dtype("mm", a, b)
    if a._value.shape[1] != b._value.shape[0]:
        raise _mat_shape_error(a, b)
    return run(_mm, (a, b), (a._value, b._value))


def mv(input, vec):
    a, b = as_tensor(input), as_tensor(vec)
    _check_same_dtype("mv", a, b)
    if a._value.ndim != 2 or b._value.ndim != 1 or a._value.shape[1] != b._value.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._value.shape[0]}), mat "
                           f"({'x'.join(map(str, a._value.shape))}), vec ({b._value.shape[0]})")
    return run(_mv, (a, b), (a._value, b._value))


def dot(input, other):
    a, b = as_tensor(input), as_tensor(other)
    if a._value.ndim != 1 or b._value.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._value.ndim}D and "
                           f"{b._value.ndim}D tensors")
    if a._value.shape != b._value.shape:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have "
                           "the same number of elements, but got {} and {} elements "
                           "respectively".format(a._value.shape[0], b._value.shape[0],
                                                 a._value.shape[0], b._value.shape[0]))
    _check_same_dtype("dot", a, b)
    return run(_dot, (a, b), (a._value, b._value))


inner = dot


def bmm(input, mat2):
    a, b = as_tensor(input), as_tensor(mat2)
    _check_same_dtype("bmm", a, b)
    return run(_bmm, (a, b), (a._value, b._value))


def matmul(input, other):
    a, b = as_tensor(input), as_tensor(other)
    na, nb = a._value.ndim, b._value.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 2 and nb == 2:
        return mm(a, b)
    if na == 1 and nb == 2:
        return squeeze(mm(unsqueeze(a, 0), b), 0)
    _check_same_dtype("matmul", a, b)
    return run(_matmul_nd, (a, b), (a._value, b._value))


def outer(input, vec2):
    """a[:, None] * b, recorded as PyTorch does: a view, then MulBackward0."""
    from functrans.torch._shape import reshape
    a, b = as_tensor(input), as_tensor(vec2)
    return mul(reshape(a, (a._value.shape[0], 1)), b)


ger = outer


@composite("ViewBackward0")
def _einsum(*xs, spec):
    return fnp.einsum(spec, *xs)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    ts = [as_tensor(o) for o in operands]
    dt = _dtype.result_type(*ts)
    return run(_einsum, ts, [_operand(t, dt) for t in ts], {"spec": equation}, (equation,))


# --- shape ops used here (full set in _shape) ------------------------------------------------

def squeeze(x, dim=None):
    from functrans.torch._shape import squeeze as sq
    return sq(x, dim)


def unsqueeze(x, dim):
    from functrans.torch._shape import unsqueeze as unsq
    return unsq(x, dim)


# --- conversions -----------------------------------------------------------------------------

TO_COPY = _prim("convert_element_type", "ToCopyBackward0")


def to_dtype(x, np_dtype):
    np_dtype = np.dtype(np_dtype)
    v = x._value
    if v.dtype == np_dtype:
        return x
    if np_dtype.kind not in "fc":
        return wrap(v.astype(np_dtype))
    return run(TO_COPY, (x,), (v,), {"new_dtype": np_dtype}, (np_dtype,))


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x  # traced: the identity


_clone = Op("CloneBackward0", _copy, lambda x: x)
_copy_for_grad = Op("CopyBackwards", _copy, lambda x: x)


def clone(input, *, memory_format=None):
    x = as_tensor(input)
    return run(_clone, (x,), (x._value,))


def copy_for_grad(g):
    """The copy AccumulateGrad makes of a gradient that requires grad (create_graph=True)."""
    return run(_copy_for_grad, (g,), (g._value,))
