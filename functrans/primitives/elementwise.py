"""Elementwise primitives. Binary ones broadcast like numpy but require one dtype (callers
promote first, as functrans.numpy does). `unary` and `binary` build a whole row from the
derivative alone."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import broadcast_to, instantiate, moveaxis, reshape

M = "elementwise"


# --- shape and dtype rules -------------------------------------------------------------------

def broadcast_shapes(name, *shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(
            f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            "(numpy rules: dimensions aligned from the right must be equal or 1). Reshape an "
            "operand; under vmap, check in_axes.") from None


def _same_dtype(name, avals):
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        raise DTypeError(f"{name}: operands have dtypes {sorted(d.name for d in dtypes)}; the "
                         "primitive needs one dtype. Use functrans.numpy (which promotes like "
                         "numpy) or convert with .astype first.")
    return avals[0].dtype


def nary_aval(name, out_dtype=None, float_only=False):
    def abstract(*avals, **params):
        dtype = _same_dtype(name, avals)
        if float_only and not np.issubdtype(dtype, np.inexact):
            raise DTypeError(f"{name}: needs a float or complex operand, got {dtype.name}. "
                             "Convert first, e.g. x.astype(float).")
        shape = avals[0].shape if len(avals) == 1 else broadcast_shapes(
            name, *(a.shape for a in avals))
        return ShapedArray(shape, dtype if out_dtype is None else out_dtype)
    return abstract


# --- zero-aware tangent arithmetic used by the rules -----------------------------------------

def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add(a, b)


def unbroadcast(x, shape):
    """Sum `x` down to `shape`: the transpose of numpy broadcasting to x's shape."""
    from functrans.primitives.reductions import reduce_sum
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    return reshape(reduce_sum(x, axes), shape)


# --- batching --------------------------------------------------------------------------------

def broadcasting_batch(prim):
    """Batching for numpy-broadcasting n-ary primitives: align batch axes, leave others."""
    def rule(vals, dims, **params):
        ranks = [np.ndim(v) - (d is not None) for v, d in zip(vals, dims)]
        out_rank = max(ranks)
        batched = [d for d in dims if d is not None]
        if all(d is not None for d in dims) and len(set(batched)) == 1 and \
                len(set(ranks)) == 1:
            return prim.bind(*vals, **params), batched[0]
        moved = []
        for v, d, r in zip(vals, dims, ranks):
            if d is not None:
                v = moveaxis(v, d, 0)
                if r < out_rank:
                    v = reshape(v, (v.shape[0],) + (1,) * (out_rank - r) + tuple(v.shape[1:]))
            moved.append(v)
        return prim.bind(*moved, **params), 0
    return rule


# --- unary family ----------------------------------------------------------------------------

def unary(name, impl, deriv=None, *, torch_name=None, float_only=True, out_dtype=None,
          differentiable=True):
    """A row for an elementwise unary primitive whose JVP is `t * deriv(x, y)`, y the output.
    `differentiable=False` declares a zero derivative (floor, sign, ...)."""
    prim = define(name, module=M, impl=impl,
                  abstract=nary_aval(name, out_dtype=out_dtype, float_only=float_only),
                  props=("elementwise",), torch_name=torch_name)

    if differentiable:
        def jvp(primals, tangents):
            x, = primals
            t, = tangents
            y = prim.bind(x)
            return y, mul(t, deriv(x, y))
    else:
        def jvp(primals, tangents):
            y = prim.bind(*primals)
            return y, Zero(ShapedArray(np.shape(y), y.dtype))
    prim.rules["jvp"] = jvp
    prim.rules["batch"] = lambda vals, dims: (prim.bind(vals[0]), dims[0])
    return prim


def _rsqrt_impl(x):
    return 1 / xp.sqrt(x)


def _logistic_impl(x):
    # 1/(1+exp(-x)) overflows harmlessly to 0 for very negative x; numpy warns, so silence it
    with np.errstate(over="ignore"):
        return 1 / (1 + xp.exp(-x))


neg_p = define("neg", module=M, impl=lambda x: xp.negative(x), abstract=nary_aval("neg"),
               transpose=lambda ct, x: [neg(ct)], props=("elementwise", "linear"),
               torch_name="NegBackward0")
neg_p.rules["jvp"] = lambda primals, tangents: (neg(primals[0]), neg(tangents[0]))
neg_p.rules["batch"] = lambda vals, dims: (neg_p.bind(vals[0]), dims[0])

sin_p = unary("sin", lambda x: xp.sin(x), lambda x, y: cos(x), torch_name="SinBackward0")
cos_p = unary("cos", lambda x: xp.cos(x), lambda x, y: neg(sin(x)), torch_name="CosBackward0")
exp_p = unary("exp", lambda x: xp.exp(x), lambda x, y: y, torch_name="ExpBackward0")
log_p = unary("log", lambda x: xp.log(x), lambda x, y: div(_one(x), x),
              torch_name="LogBackward0")
tanh_p = unary("tanh", lambda x: xp.tanh(x), lambda x, y: sub(_one(y), mul(y, y)),
               torch_name="TanhBackward0")
sqrt_p = unary("sqrt", lambda x: xp.sqrt(x), lambda x, y: div(_const(y, 0.5), y),
               torch_name="SqrtBackward0")
logistic_p = unary("logistic", _logistic_impl, lambda x, y: mul(y, sub(_one(y), y)),
                   torch_name="SigmoidBackward0")


def _one(x):
    return np.ones((), np.result_type(x.dtype))


def _const(x, v):
    return np.asarray(v, x.dtype)


# --- binary family ---------------------------------------------------------------------------

def binary(name, impl, *, torch_name=None, out_dtype=None, props=("elementwise",)):
    prim = define(name, module=M, impl=impl, abstract=nary_aval(name, out_dtype=out_dtype),
                  props=props, torch_name=torch_name)
    prim.rules["batch"] = broadcasting_batch(prim)
    return prim


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    shape = np.shape(out)
    if type(tx) is Zero:
        return out, broadcast_to(ty, shape)
    if type(ty) is Zero:
        return out, broadcast_to(tx, shape)
    return out, add(tx, ty)


def _add_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval.shape) if is_undefined(x) else None,
            unbroadcast(ct, y.aval.shape) if is_undefined(y) else None]


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = sub(x, y)
    shape = np.shape(out)
    if type(tx) is Zero:
        return out, broadcast_to(neg(ty), shape)
    if type(ty) is Zero:
        return out, broadcast_to(tx, shape)
    return out, sub(tx, ty)


def _sub_transpose(ct, x, y):
    return [unbroadcast(ct, x.aval.shape) if is_undefined(x) else None,
            unbroadcast(neg(ct), y.aval.shape) if is_undefined(y) else None]


def _mul_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = mul(x, y)
    shape = np.shape(out)
    a = Zero(None) if type(tx) is Zero else broadcast_to(mul(tx, y), shape)
    b = Zero(None) if type(ty) is Zero else broadcast_to(mul(x, ty), shape)
    return out, add_tangents(a, b)


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise TypeError("mul: both operands are linear inputs; the product is not linear.")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval.shape), None]
    return [None, unbroadcast(mul(x, ct), y.aval.shape)]


def _div_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = div(x, y)
    shape = np.shape(out)
    a = Zero(None) if type(tx) is Zero else broadcast_to(div(tx, y), shape)
    # d(x/y)/dy = -x/y^2 = -out/y
    b = Zero(None) if type(ty) is Zero else neg(mul(ty, div(out, y)))
    return out, add_tangents(a, b)


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise TypeError("div: the divisor is a linear input; x / y is not linear in y.")
    return [unbroadcast(div(ct, y), x.aval.shape), None]


def _div_impl(x, y):
    if np.issubdtype(np.result_type(x), np.integer):  # integers truncate towards zero, like C
        q = xp.floor_divide(x, y)
        return q + ((q < 0) & (q * y != x))
    return xp.divide(x, y)


add_p = binary("add", lambda x, y: xp.add(x, y), torch_name="AddBackward0",
               props=("elementwise", "linear", "commutative"))
add_p.rules.update(jvp=_add_jvp, transpose=_add_transpose)
sub_p = binary("sub", lambda x, y: xp.subtract(x, y), torch_name="SubBackward0",
               props=("elementwise", "linear"))
sub_p.rules.update(jvp=_sub_jvp, transpose=_sub_transpose)
mul_p = binary("mul", lambda x, y: xp.multiply(x, y), torch_name="MulBackward0",
               props=("elementwise", "linear", "commutative"))
mul_p.rules.update(jvp=_mul_jvp, transpose=_mul_transpose)
div_p = binary("div", _div_impl, torch_name="DivBackward0",
               props=("elementwise", "linear"))
div_p.rules.update(jvp=_div_jvp, transpose=_div_transpose)


def _zero_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, Zero(ShapedArray(np.shape(out), out.dtype))
    return jvp


def comparison(name, impl, torch_name=None):
    prim = binary(name, impl, out_dtype=np.dtype(bool), torch_name=torch_name)
    prim.rules["jvp"] = _zero_jvp(prim)
    return prim


lt_p = comparison("lt", lambda x, y: xp.less(x, y))
le_p = comparison("le", lambda x, y: xp.less_equal(x, y))
gt_p = comparison("gt", lambda x, y: xp.greater(x, y))
ge_p = comparison("ge", lambda x, y: xp.greater_equal(x, y))
eq_p = comparison("eq", lambda x, y: xp.equal(x, y))
ne_p = comparison("ne", lambda x, y: xp.not_equal(x, y))


# --- select ----------------------------------------------------------------------------------

def _select_abstract(pred, on_true, on_false):
    if pred.dtype != np.bool_:
        raise DTypeError(f"select: the predicate must be bool, got {pred.dtype.name}.")
    dtype = _same_dtype("select", [on_true, on_false])
    return ShapedArray(broadcast_shapes("select", pred.shape, on_true.shape, on_false.shape),
                       dtype)


def _select_jvp(primals, tangents):
    pred, a, b = primals
    _, ta, tb = tangents
    out = select(pred, a, b)
    if type(ta) is Zero and type(tb) is Zero:
        return out, Zero(ShapedArray(np.shape(out), out.dtype))
    zeros = np.zeros((), out.dtype)
    ta = zeros if type(ta) is Zero else ta
    tb = zeros if type(tb) is Zero else tb
    return out, select(pred, ta, tb)


def _select_transpose(ct, pred, a, b):
    if is_undefined(pred):
        raise TypeError("select: the predicate cannot be a linear input.")
    zeros = np.zeros((), ct.dtype)
    return [None,
            unbroadcast(select(pred, ct, zeros), a.aval.shape) if is_undefined(a) else None,
            unbroadcast(select(pred, zeros, ct), b.aval.shape) if is_undefined(b) else None]


select_p = define("select", module=M, impl=lambda p, a, b: xp.where(p, a, b),
                  abstract=_select_abstract, jvp=_select_jvp, transpose=_select_transpose,
                  props=("elementwise", "linear"), torch_name="WhereBackward0")
select_p.rules["batch"] = broadcasting_batch(select_p)


# --- bindable wrappers -----------------------------------------------------------------------

def neg(x):
    return neg_p.bind(x)


def sin(x):
    return sin_p.bind(x)


def cos(x):
    return cos_p.bind(x)


def add(x, y):
    return add_p.bind(x, y)


def sub(x, y):
    return sub_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def div(x, y):
    return div_p.bind(x, y)


def select(pred, on_true, on_false):
    return select_p.bind(pred, on_true, on_false)

