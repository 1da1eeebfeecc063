"""Elementwise primitives. Binary ones broadcast like numpy but require one dtype (callers
promote first, as functrans.numpy does; `pow` alone also takes an integer exponent with a float
base, as in JAX). `unary` and `binary` build a whole row from the derivative alone; numpy's
broadcasting rules (shapes, batching, unbroadcast) are in functrans/primitives/broadcasting.py."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, is_float, shape_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError
from functrans.primitives import special_math, xla_math
from functrans.primitives.broadcasting import (ANY, FLOAT, INTEGRAL, NUMBER, REAL, REAL_FLOAT,
                                               broadcast_shapes, broadcasting_batch, check_kinds,
                                               nary_aval, same_dtype, unary_batch, unbroadcast)
from functrans.primitives.layout import broadcast_to, zero_jvp
from functrans.primitives.registry import define

# --- zero-aware tangent arithmetic used by the rules -----------------------------------------

def add_tangents(a, b):
    """a + b, where either may be a symbolic Zero (returned as the other, adding nothing)."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return add(a, b)


def _one(x):
    return np.ones((), x.dtype)


def _const(x, v):
    return np.asarray(v, x.dtype)


def backend_call(fn_name):
    """A `fast_impl` calling the backend function `fn_name` with the operands alone (the impl
    does nothing more), so compiled code skips the impl's own frame."""
    def fast_impl(in_avals, out_avals, params):
        return getattr(xp, fn_name), (), {}
    return fast_impl


# --- convert_element_type --------------------------------------------------------------------

def convert_element_type(x, dtype):
    """`x` as `dtype` (x itself if it has that dtype already)."""
    dtype = np.dtype(dtype)
    if getattr(x, "dtype", None) == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    x, = primals
    t, = tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if not is_float(new_dtype):
        return out, Zero(ShapedArray(out.shape, new_dtype))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_impl(x, *, new_dtype):
    x = xp.asarray(x)
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = xp.real(x)   # complex to real keeps the real part, as lax's conversion (no warning)
    return x.astype(new_dtype)


convert_element_type_p = define(
    "convert_element_type", impl=_convert_impl,
    abstract=lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype),
    jvp=_convert_jvp,
    transpose=lambda ct, x, *, new_dtype: [convert_element_type(ct, x.aval.dtype)],
    batch=lambda vals, dims, *, new_dtype: (
        convert_element_type_p.bind(vals[0], new_dtype=new_dtype), dims[0]),
    props=("elementwise", "linear"),
    facts=dict(noop=lambda aval, p: np.dtype(p["new_dtype"]) == aval.dtype,
               converts_dtype=True),
    torch_name="ToCopyBackward0")


# --- unary family ----------------------------------------------------------------------------

def unary(name, impl, deriv=None, *, torch_name=None, kinds=FLOAT, out_dtype=None,
          differentiable=True, facts=None, torch_deriv=None):
    """A row for an elementwise unary primitive whose JVP is `t * deriv(x, y)`, y the output
    (reuse it where that is cheaper). `differentiable=False` declares a zero derivative.
    `torch_deriv`, where PyTorch's formula differs (in value, or in reading y rather than x),
    gives the row's torch_jvp rule."""
    prim = define(name, impl=impl,
                  abstract=nary_aval(name, out_dtype=out_dtype, kinds=kinds),
                  props=("elementwise",), facts=facts, torch_name=torch_name)
    if differentiable:
        def jvp_of(d):
            def jvp(primals, tangents):
                x, = primals
                t, = tangents
                y = prim.bind(x)
                return y, mul(t, d(x, y))
            return jvp
        prim.rules["jvp"] = jvp_of(deriv)
        if torch_deriv is not None:
            prim.rules["torch_jvp"] = jvp_of(torch_deriv)
    else:
        prim.rules["jvp"] = zero_jvp(prim)
    prim.rules["batch"] = unary_batch(prim)
    return prim


def _rsqrt_impl(x):
    return 1 / xp.sqrt(x)


def _logistic_impl(x):
    # 1/(1+exp(-x)) overflows harmlessly to 0 for very negative x; numpy warns, so silence it
    with np.errstate(over="ignore"):
        return 1 / (1 + xp.exp(-x))


_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))

neg_p = define("neg", impl=lambda x: xp.negative(x),
               abstract=nary_aval("neg", kinds=NUMBER), transpose=lambda ct, x: [neg(ct)],
               props=("elementwise", "linear"), torch_name="NegBackward0",
               facts=dict(involution=True, negation=True, fast_impl=backend_call("negative")))
neg_p.rules["jvp"] = lambda primals, tangents: (neg(primals[0]), neg(tangents[0]))
neg_p.rules["batch"] = unary_batch(neg_p)

sin_p = unary("sin", lambda x: xp.sin(x), lambda x, y: cos(x), torch_name="SinBackward0",
               facts=dict(fast_impl=backend_call("sin")))
cos_p = unary("cos", lambda x: xp.cos(x), lambda x, y: neg(sin(x)), torch_name="CosBackward0",
               facts=dict(fast_impl=backend_call("cos")))
# d tan = 1 + tan^2
tan_p = unary("tan", lambda x: xp.tan(x), lambda x, y: add(_one(y), mul(y, y)),
              torch_name="TanBackward0")
# d asin = 1/sqrt(1 - x^2), d acos = -1/sqrt(1 - x^2), d atan = 1/(1 + x^2)
asin_p = unary("asin", lambda x: xp.arcsin(x),
               lambda x, y: rsqrt(sub(_one(x), mul(x, x))), torch_name="AsinBackward0")
acos_p = unary("acos", lambda x: xp.arccos(x),
               lambda x, y: neg(rsqrt(sub(_one(x), mul(x, x)))), torch_name="AcosBackward0")
atan_p = unary("atan", lambda x: xp.arctan(x),
               lambda x, y: div(_one(x), add(_one(x), mul(x, x))), torch_name="AtanBackward0")
sinh_p = unary("sinh", lambda x: xp.sinh(x), lambda x, y: cosh(x), torch_name="SinhBackward0")
cosh_p = unary("cosh", lambda x: xp.cosh(x), lambda x, y: sinh(x), torch_name="CoshBackward0")
# d tanh = 1 - tanh^2
tanh_p = unary("tanh", lambda x: xp.tanh(x), lambda x, y: sub(_one(y), mul(y, y)),
               torch_name="TanhBackward0", facts=dict(fast_impl=backend_call("tanh")))
# d asinh = 1/sqrt(x^2 + 1); d acosh = 1/sqrt((x - 1)(x + 1)), factored to stay exact near 1;
# d atanh = 1/((1 - x)(1 + x))
asinh_p = unary("asinh", lambda x: xp.arcsinh(x),
                lambda x, y: rsqrt(add(mul(x, x), _one(x))), torch_name="AsinhBackward0")
# d acosh = 1/(sqrt(x - 1) sqrt(x + 1)), PyTorch's form, under both conventions. JAX's
# 1/sqrt((x - 1)(x + 1)) is the same for real x > 1, but not the principal branch's derivative
# for complex x with Re x < 0 (at -0.5+0.3i it has the wrong sign; complex central differences
# of numpy's arccosh agree with this form on both sides of the cut), so functrans departs there
acosh_p = unary("acosh", lambda x: xp.arccosh(x),
                lambda x, y: mul(rsqrt(sub(x, _one(x))), rsqrt(add(x, _one(x)))),
                torch_name="AcoshBackward0")
atanh_p = unary("atanh", lambda x: xp.arctanh(x),
                lambda x, y: div(_one(x), mul(sub(_one(x), x), add(_one(x), x))),
                torch_name="AtanhBackward0")
exp_p = unary("exp", lambda x: xp.exp(x), lambda x, y: y, torch_name="ExpBackward0",
              facts=dict(fast_impl=backend_call("exp")))
exp2_p = unary("exp2", lambda x: xp.exp2(x), lambda x, y: mul(y, _const(y, _LN2)),
               torch_name="Exp2Backward0")
# d expm1 = exp(x) = y + 1
expm1_p = unary("expm1", lambda x: xp.expm1(x), lambda x, y: add(y, _one(y)),
                torch_name="Expm1Backward0")
log_p = unary("log", lambda x: xp.log(x), lambda x, y: div(_one(x), x),
              torch_name="LogBackward0", facts=dict(fast_impl=backend_call("log")))
log2_p = unary("log2", lambda x: xp.log2(x), lambda x, y: div(_one(x), mul(x, _const(x, _LN2))),
               torch_name="Log2Backward0")
log10_p = unary("log10", lambda x: xp.log10(x),
                lambda x, y: div(_one(x), mul(x, _const(x, _LN10))),
                torch_name="Log10Backward0")
# log and exp with the values XLA's CPU backend gives (its own polynomials, the C library's
# float64 log): functrans.random draws with them so that its floats equal JAX's
xla_log_p = unary("xla_log", xla_math.log, lambda x, y: div(_one(x), x), kinds=REAL_FLOAT)
xla_exp_p = unary("xla_exp", xla_math.exp, lambda x, y: y, kinds=REAL_FLOAT)
# d log1p = 1/(1 + x)
log1p_p = unary("log1p", lambda x: xp.log1p(x), lambda x, y: div(_one(x), add(_one(x), x)),
                torch_name="Log1PBackward0")
# d sqrt = 1/(2 sqrt(x)) = 0.5/y
sqrt_p = unary("sqrt", lambda x: xp.sqrt(x), lambda x, y: div(_const(y, 0.5), y),
               torch_name="SqrtBackward0", facts=dict(fast_impl=backend_call("sqrt")))


def _norm_sqrt_deriv_torch(x, y):
    # 0.5/y, taken as 0 where y == 0 (the reciprocal of a safe operand, then the select, so
    # neither this derivative nor its own derivative meets 0 * inf)
    zero = eq(y, _const(y, 0))
    return select(zero, _const(y, 0), div(_const(y, 0.5), select(zero, _one(y), y)))


# norm_sqrt: sqrt(s) of a sum of squares s >= 0, the last step of a 2-norm, a distance or a
# standard deviation. JAX takes sqrt's derivative, 0.5/y: inf at s == 0, where the squares'
# derivative is 0, so the norm of zeros gets nan. PyTorch's norm_backward, cdist_backward and
# std_backward take 0 where the result is 0.
norm_sqrt_p = unary("norm_sqrt", lambda x: xp.sqrt(x), lambda x, y: div(_const(y, 0.5), y),
                    kinds=REAL_FLOAT, torch_deriv=_norm_sqrt_deriv_torch)
# d x^(-1/2) = -0.5 x^(-3/2) = -0.5 y/x
rsqrt_p = unary("rsqrt", _rsqrt_impl, lambda x, y: mul(_const(y, -0.5), div(y, x)),
                torch_name="RsqrtBackward0",  # PyTorch: -0.5 y^3, from the result alone
                torch_deriv=lambda x, y: mul(_const(y, -0.5), mul(mul(y, y), y)))
# d x^(1/3) = (1/3) y^(-2)
cbrt_p = unary("cbrt", lambda x: xp.cbrt(x),
               lambda x, y: mul(_const(y, 1 / 3), integer_pow(y, -2)), kinds=REAL_FLOAT)
# d logistic = y (1 - y)
logistic_p = unary("logistic", _logistic_impl, lambda x, y: mul(y, sub(_one(y), y)),
                   torch_name="SigmoidBackward0")


# sign of a complex z: z/|z| (numpy 2's and JAX's), 0 at 0; its derivative is 0, as JAX's
sign_p = unary("sign", lambda x: xp.sign(x), kinds=NUMBER, differentiable=False,
               torch_name="SignBackward0")
# PyTorch's sgn, as abs's derivative grad * sgn(x) reads it: sign(x), but 0 at nan; its own
# derivative is an efficient zero tensor (a gradient known to be zero, which the ops after it
# pass on as zero: sgn(log(x)) at x = 0 gets 0, where sign's zeros_like(grad) meets 1 / 0)
sgn_p = unary("sgn", lambda x: xp.where(x != x, xp.zeros((), x.dtype), xp.sign(x)), kinds=REAL,
              differentiable=False, torch_name="SgnBackward0")
sgn_p.props = sgn_p.props | {"torch_zero_tensor_derivative"}
floor_p = unary("floor", lambda x: xp.floor(x), kinds=REAL_FLOAT, differentiable=False,
                torch_name="FloorBackward0")
ceil_p = unary("ceil", lambda x: xp.ceil(x), kinds=REAL_FLOAT, differentiable=False,
               torch_name="CeilBackward0")
# round half to even, as numpy (and torch.round) do
round_p = unary("round", lambda x: xp.round(x), kinds=REAL_FLOAT, differentiable=False,
                torch_name="RoundBackward0")
trunc_p = unary("trunc", lambda x: xp.trunc(x), kinds=REAL_FLOAT, differentiable=False,
                torch_name="TruncBackward0")
is_finite_p = unary("is_finite", lambda x: xp.isfinite(x), kinds=REAL_FLOAT,
                    out_dtype=np.dtype(bool), differentiable=False)
signbit_p = unary("signbit", lambda x: xp.signbit(x), kinds=REAL, out_dtype=np.dtype(bool),
                  differentiable=False)  # the sign bit itself: true for -0.0 and -nan


def _abs_jvp(primals, tangents, torch=False):
    # as JAX: the derivative is +1 at 0; PyTorch's is sign(x), 0 there
    x, = primals
    t, = tangents
    y = abs(x)
    if np.dtype(x.dtype).kind == "c":
        # d|z| = Re(t conj(z) / |z|), as JAX's abs_p: |z| taken as 1 where z == 0, so the
        # derivative there is 0 (a subgradient) rather than 0/0 = nan
        safe = convert_element_type(select(eq(y, _const(y, 0)), _one(y), y), x.dtype)
        return y, real(mul(t, div(conj(x), safe)))
    if torch:  # grad * sgn(x): 0 at nan too, where numpy's sign is nan
        return y, mul(t, sgn(x))
    return y, select(ge(x, _const(x, 0)), t, neg(t))


def _real_part_aval(name, kinds):
    """Shape/dtype rule of a unary op whose result is real: |z|, Re z, Im z of a complex z
    (complex128 -> float64, complex64 -> float32), the operand's dtype otherwise."""
    def abstract(x):
        check_kinds(name, x.dtype, kinds)
        dtype = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype
        return ShapedArray(x.shape, dtype)
    return abstract


abs_p = define("abs", impl=lambda x: xp.abs(x), abstract=_real_part_aval("abs", NUMBER),
               jvp=_abs_jvp, torch_jvp=lambda p, t: _abs_jvp(p, t, torch=True),
               props=("elementwise",), torch_name="AbsBackward0")
abs_p.rules["batch"] = unary_batch(abs_p)


# --- complex numbers: real, imag, conj, complex (JAX's real_p, imag_p, conj_p, complex_p) -----
# All four are linear over the reals. Their transposes pair a cotangent c with a tangent t by
# Re(c t), without conjugation, as JAX's do; so grad of a real-valued f of z = x + iy is
# df/dx - i df/dy (JAX's and HIPS autograd's convention), and for a holomorphic f, vjp with
# cotangent 1 gives f'(z).

def _complex_abstract(x, y):
    dtype = same_dtype("complex", [x, y])
    check_kinds("complex", dtype, REAL_FLOAT)
    return ShapedArray(broadcast_shapes("complex", x.shape, y.shape),
                       np.result_type(dtype, np.complex64))


def _complex_impl(x, y):
    x, y = xp.asarray(x), xp.asarray(y)
    dtype = np.result_type(x.dtype, np.complex64)
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        # set the parts: x + 1j * y would give a nan real part where y is infinite (0 * inf)
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype)
        out.real, out.imag = x, y
        return out
    return xp.add(x.astype(dtype), xp.multiply(y.astype(dtype), 1j))  # dask, CuPy


def _complex_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = complex(x, y)
    zero = np.zeros((), np.dtype(x.dtype))
    if type(tx) is Zero and type(ty) is Zero:
        return out, Zero(ShapedArray(shape_of(out), out.dtype))
    tx = zero if type(tx) is Zero else tx
    ty = zero if type(ty) is Zero else ty
    return out, broadcast_to(complex(tx, ty), shape_of(out))


def _complex_transpose(ct, x, y):
    # Re(c (tx + i ty)) = Re(c) tx - Im(c) ty
    return [unbroadcast(real(ct), x.aval.shape) if is_undefined(x) else None,
            unbroadcast(neg(imag(ct)), y.aval.shape) if is_undefined(y) else None]


real_p = define("real", impl=lambda x: xp.real(x).copy(),  # numpy's real is a view
                abstract=_real_part_aval("real", "c"),
                jvp=lambda p, t: (real(p[0]), real(t[0])),
                # Re(c Re t) = Re(complex(c, 0) t)
                transpose=lambda ct, x: [complex(ct, np.zeros((), np.dtype(ct.dtype)))],
                props=("elementwise", "linear"), torch_name="RealBackward0")
real_p.rules["batch"] = unary_batch(real_p)
imag_p = define("imag", impl=lambda x: xp.imag(x).copy(),
                abstract=_real_part_aval("imag", "c"),
                jvp=lambda p, t: (imag(p[0]), imag(t[0])),
                # Re(c Im t) = Re(-i c t)
                transpose=lambda ct, x: [complex(np.zeros((), np.dtype(ct.dtype)), neg(ct))],
                props=("elementwise", "linear"), torch_name="ImagBackward0")
imag_p.rules["batch"] = unary_batch(imag_p)
conj_p = define("conj", impl=lambda x: xp.conj(x), abstract=nary_aval("conj", kinds="c"),
                jvp=lambda p, t: (conj(p[0]), conj(t[0])),
                transpose=lambda ct, x: [conj(ct)],
                props=("elementwise", "linear"), torch_name="ConjBackward0",
                facts=dict(involution=True, fast_impl=backend_call("conj")))
conj_p.rules["batch"] = unary_batch(conj_p)
complex_p = define("complex", impl=_complex_impl, abstract=_complex_abstract,
                   jvp=_complex_jvp, transpose=_complex_transpose,
                   props=("elementwise", "linear"), torch_name="ComplexBackward0")
complex_p.rules["batch"] = broadcasting_batch(complex_p)


def _relu_impl(x):
    # max(x, 0) as PyTorch computes it: NaN stays NaN, and -0.0 stays -0.0 (maximum gives
    # its second operand at a tie)
    return xp.maximum(xp.zeros((), x.dtype), x)


def _relu_jvp(primals, tangents):
    # as JAX's jax.nn.relu: the tangent where x > 0, else 0 (0 at the kink and at NaN)
    x, = primals
    t, = tangents
    return relu_p.bind(x), select(gt(x, _const(x, 0)), t, _const(t, 0))


def _relu_jvp_torch(primals, tangents):
    # PyTorch's threshold_backward(grad, result, 0): 0 where y <= 0, else the tangent (a NaN
    # passes it on). It reads the result y with a zero derivative in it, so a gradient built
    # with create_graph depends on y (its derivative there is zeros, not "unused"): the factor
    # y^0 is exactly 1 (at NaN and inf too) and carries that dependency
    x, = primals
    t, = tangents
    y = relu_p.bind(x)
    live = select(le(y, _const(y, 0)), _const(t, 0), t)
    return y, mul(live, integer_pow(y, 0))


relu_p = define("relu", impl=_relu_impl, abstract=nary_aval("relu", kinds=REAL),
                jvp=_relu_jvp, torch_jvp=_relu_jvp_torch, props=("elementwise",),
                torch_name="ReluBackward0")
relu_p.rules["batch"] = unary_batch(relu_p)


# leaky_relu: x where x > 0, slope * x elsewhere (0 and NaN included). Its derivative at 0 is a
# convention: JAX's jax.nn.leaky_relu takes the x branch there (1), PyTorch's
# leaky_relu_backward the slope branch (x > 0 ? t : slope t)
def _leaky_relu_jvp(strict):
    def jvp(primals, tangents, *, slope):
        x, = primals
        t, = tangents
        on_x = gt(x, _const(x, 0)) if strict else ge(x, _const(x, 0))
        return leaky_relu_p.bind(x, slope=slope), select(on_x, t, mul(t, _const(t, slope)))
    return jvp


leaky_relu_p = define("leaky_relu", impl=lambda x, *, slope: xp.where(x > 0, x, x * slope),
                      abstract=nary_aval("leaky_relu", kinds=REAL_FLOAT),
                      jvp=_leaky_relu_jvp(False), torch_jvp=_leaky_relu_jvp(True),
                      props=("elementwise",), torch_name="LeakyReluBackward0")
leaky_relu_p.rules["batch"] = unary_batch(leaky_relu_p)


# hard_tanh: x clipped to [lo, hi] (NaN stays NaN). Its derivative at the bounds is a
# convention: JAX's jax.nn.hard_tanh passes t on lo <= x <= hi, PyTorch's hardtanh_backward on
# lo < x < hi; both pass it at NaN
def _hard_tanh_impl(x, *, lo, hi):
    return xp.where(x <= lo, xp.asarray(lo, x.dtype),
                    xp.where(x >= hi, xp.asarray(hi, x.dtype), x))


def _hard_tanh_jvp(strict):
    def jvp(primals, tangents, *, lo, hi):
        x, = primals
        t, = tangents
        lo_, hi_ = _const(x, lo), _const(x, hi)
        outside = or_(le(x, lo_), ge(x, hi_)) if strict else or_(lt(x, lo_), gt(x, hi_))
        return hard_tanh_p.bind(x, lo=lo, hi=hi), select(outside, _const(t, 0), t)
    return jvp


hard_tanh_p = define("hard_tanh", impl=_hard_tanh_impl,
                     abstract=nary_aval("hard_tanh", kinds=REAL_FLOAT),
                     jvp=_hard_tanh_jvp(False), torch_jvp=_hard_tanh_jvp(True),
                     props=("elementwise",), torch_name="HardtanhBackward0")
hard_tanh_p.rules["batch"] = unary_batch(hard_tanh_p)


# --- erf -------------------------------------------------------------------------------------
# numpy has no erf, so this is a float64 rational approximation in the style of Cody (1969):
#   erf(x) = x + x P(x^2)/Q(x^2)            for |x| <= 27/32,
#   erf(x) = 1 - exp(-x^2) R(|x|)/S(|x|)     for 27/32 < |x| <= 6 (beyond, erf rounds to 1),
# with the sign of x. The coefficients are functrans' own fits: weighted rational minimax
# approximations (linearised least squares, then Lawson iterations, at 50 digits) of
# erf(x)/x - 1 in x^2 on [0, (27/32)^2] and of exp(x^2) erfc(x) on [27/32, 6], weighted for the
# relative error of erf. Measured error: at most 1 ulp (tests/functrans_numpy/test_elementwise.py).
# Lower precisions are computed in float64 and rounded.
_ERF_SPLIT = 27 / 32
_ERF_P = (0.12837916709551256, -0.3237498826897432, -0.03167393074214949,
          -0.006258565513198085, -9.945901357789846e-05, -3.3108558939056e-06)
_ERF_Q = (1.0, 0.40798291130153413, 0.06964752899695595, 0.0059817879385226785,
          0.00022221756666460985)
_ERFC_R = (0.9999999866848629, 1.3098842396741348, 0.855118807493744, 0.31968893671300963,
           0.06808108365025559, 0.006667865222310526, 1.8147155495172973e-08)
_ERFC_S = (1.0, 2.4382632467058327, 2.6064051722196533, 1.5746884633185703,
           0.572720399650812, 0.12065334465458909, 0.011819557502630198)


def _polyval(coeffs, t):
    """sum_k coeffs[k] t^k by Horner's rule."""
    acc = coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * t + c
    return acc


def _erf_impl(x):
    x = xp.asarray(x)
    if x.dtype.kind == "c":
        return special_math.scipy_only("erf", x, without="erf takes real floats")
    z = x.astype(np.float64) if x.dtype != np.float64 else x
    ax = xp.abs(z)
    # each branch sees only its own range (clipped), so neither warns on inf or huge values
    small_x = xp.minimum(ax, _ERF_SPLIT)
    t = small_x * small_x
    small = small_x + small_x * (_polyval(_ERF_P, t) / _polyval(_ERF_Q, t))
    large_x = xp.clip(ax, _ERF_SPLIT, 6.0)
    large = 1.0 - xp.exp(-(large_x * large_x)) * (
        _polyval(_ERFC_R, large_x) / _polyval(_ERFC_S, large_x))
    out = xp.copysign(xp.where(ax <= _ERF_SPLIT, small, large), z)
    return out.astype(x.dtype) if x.dtype != np.float64 else out


# d erf = 2/sqrt(pi) exp(-x^2)
erf_p = unary("erf", _erf_impl,
              lambda x, y: mul(_const(x, 2 / np.sqrt(np.pi)), exp(neg(mul(x, x)))),
              kinds=FLOAT, torch_name="ErfBackward0")   # complex: holomorphic, scipy's values


# erf_inv: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), the same
# polynomials in w = -log1p(-x^2) as XLA's ErfInv, evaluated in the operand's precision, so
# that samples built on it (functrans.random.normal) agree with JAX's to an ulp or two.
# Coefficients run from the highest power down.
_ERFINV32 = (  # w < 5: in w - 2.5; else: in sqrt(w) - 3
    (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941),
    (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))
_ERFINV64 = (  # w < 6.25: in w - 3.125; w < 16: in sqrt(w) - 3.25; else: in sqrt(w) - 5
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
     3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221))


def _horner(coeffs, t, dtype):
    """sum coeffs[k] t^(n-1-k), highest power first, each step one fused multiply-add in
    `dtype` (as XLA compiles it)."""
    acc = xp.full(np.shape(t), coeffs[0], dtype)
    for c in coeffs[1:]:
        acc = xla_math.fused_multiply_add(xp, acc, t, np.asarray(c, dtype))
    return acc


def _erf_inv_impl(x):
    x = xp.asarray(x)
    dtype = x.dtype if x.dtype == np.float64 else np.dtype(np.float32)  # f16: upcast, as XLA
    z = x.astype(dtype).reshape(-1)
    if dtype == np.float64:  # (polynomial, upper end of its w range, w-offset, in sqrt(w))
        pieces = ((_ERFINV64[0], 6.25, 3.125, False), (_ERFINV64[1], 16.0, 3.25, True),
                  (_ERFINV64[2], np.inf, 5.0, True))
    else:
        pieces = ((_ERFINV32[0], 5.0, 2.5, False), (_ERFINV32[1], np.inf, 3.0, True))
    with np.errstate(divide="ignore", invalid="ignore"):
        # XLA's log1p, as its ErfInv; its float32 log too (float64: numpy's, an ulp from the C
        # library's that XLA calls on ~0.2% of inputs, and many times faster)
        log = xla_math.log if dtype == np.float32 else None
        w = -xla_math.log1p(xp, -z * z, log)
        p = xp.empty_like(z)
        lower = -np.inf
        for coeffs, upper, offset, root in pieces:
            # each polynomial only where w falls in its range (the last takes the rest, NaN too)
            mask = (w < upper) & (w >= lower) if upper != np.inf else ~(w < lower)
            wi = w[mask]
            ti = (xp.sqrt(wi) if root else wi) - np.asarray(offset, dtype)
            p[mask] = _horner(coeffs, ti, dtype)
            lower = upper
        out = xp.where(xp.abs(z) == 1, xp.copysign(np.asarray(np.inf, dtype), z), p * z)
    return out.reshape(x.shape).astype(x.dtype, copy=False)


# y = erfinv(x): d y = sqrt(pi)/2 exp(y^2)
erf_inv_p = unary("erf_inv", _erf_inv_impl,
                  lambda x, y: mul(_const(x, np.sqrt(np.pi) / 2), exp(mul(y, y))),
                  kinds=REAL_FLOAT, torch_name="ErfinvBackward0")


# --- integer_pow: x ** n for a Python int n (x ** 2 and friends) ------------------------------

def _integer_pow_abstract(x, *, y):
    check_kinds("integer_pow", x.dtype, NUMBER)
    if y < 0 and x.dtype.kind in "iu":
        raise DTypeError(f"integer_pow: integers cannot be raised to the negative power {y} "
                         f"(operand {x.dtype.name}). Convert to float first, e.g. "
                         "x.astype(float) ** y.")
    return ShapedArray(x.shape, x.dtype)


def _integer_pow_impl(x, *, y):
    return xp.square(x) if y == 2 else xp.power(x, y)


def _integer_pow_jvp(primals, tangents, *, y):
    x, = primals
    t, = tangents
    out = integer_pow(x, y)
    if y == 0:
        return out, Zero(ShapedArray(shape_of(out), out.dtype))
    if y == 1:
        return out, t
    # d x^n = n x^(n-1); x^1 needs no primitive
    deriv = mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1))
    return out, mul(t, deriv)


def _integer_pow_jvp_torch(primals, tangents, *, y):
    # PyTorch's pow_backward: 0 (a constant) for n == 0, else n x^(n-1) computed as x.pow(n-1)
    # even for n == 1, so x^1's derivative x^0 still reads x: it requires grad, and a second
    # derivative (0) flows back to x
    x, = primals
    t, = tangents
    if y != 1:
        return _integer_pow_jvp(primals, tangents, y=y)
    return integer_pow(x, y), mul(t, integer_pow(x, 0))


integer_pow_p = define("integer_pow", impl=_integer_pow_impl,
                       abstract=_integer_pow_abstract, jvp=_integer_pow_jvp,
                       torch_jvp=_integer_pow_jvp_torch,
                       props=("elementwise",), torch_name="PowBackward0")
integer_pow_p.rules["batch"] = unary_batch(integer_pow_p)


# --- scalar_pow: x ** y for a Python float y, as PyTorch's pow(Tensor, Scalar) -----------------

def _scalar_pow_impl(x, *, y):
    # PyTorch's kernel computes x^0.5 and x^-0.5 as sqrt(x) and 1/sqrt(x): so (-0.0)^-0.5 is
    # -inf and (-inf)^0.5 nan, where numpy's power gives inf and inf
    if y == 0.5:
        return xp.sqrt(x)
    if y == -0.5:
        return 1 / xp.sqrt(x)
    return xp.power(x, x.dtype.type(y))


def _scalar_pow_abstract(x, *, y):
    check_kinds("scalar_pow", x.dtype, FLOAT)
    return ShapedArray(x.shape, x.dtype)


def _scalar_pow_jvp(primals, tangents, *, y):
    # PyTorch's pow_backward: 0 (a constant) for y == 0, else y x^(y-1) with x^(y-1) again a
    # pow by a Scalar (so at x = -0.0 the derivative of x^0.5 is 0.5 rsqrt(-0.0) = -inf)
    x, = primals
    t, = tangents
    out = scalar_pow(x, y)
    if y == 0:
        return out, Zero(ShapedArray(shape_of(out), out.dtype))
    return out, mul(t, mul(_const(x, y), scalar_pow(x, y - 1)))


scalar_pow_p = define("scalar_pow", impl=_scalar_pow_impl,
                      abstract=_scalar_pow_abstract, jvp=_scalar_pow_jvp,
                      props=("elementwise",), torch_name="PowBackward0")
scalar_pow_p.rules["batch"] = unary_batch(scalar_pow_p)


# --- binary family ---------------------------------------------------------------------------

def binary(name, impl, *, torch_name=None, out_dtype=None, kinds=None, abstract=None,
           props=("elementwise",), facts=None):
    """Define the row of a broadcasting binary primitive: impl, shape/dtype rule and batching."""
    prim = define(name, impl=impl,
                  abstract=abstract or nary_aval(name, out_dtype=out_dtype, kinds=kinds),
                  props=props, facts=facts, torch_name=torch_name)
    prim.rules["batch"] = broadcasting_batch(prim)
    return prim


def binary_jvp(prim, dx, dy):
    """The JVP `tx * dx(x, y, out) + ty * dy(x, y, out)` of a binary primitive, each factor
    built only when its tangent is nonzero; a factor of None stands for 1."""
    def jvp(primals, tangents, **params):
        x, y = primals
        out = prim.bind(x, y, **params)
        shape = shape_of(out)
        t_out = Zero(None)
        for t, d in zip(tangents, (dx, dy)):
            if type(t) is not Zero:
                term = t if d is None else mul(t, d(x, y, out))
                t_out = add_tangents(t_out, broadcast_to(term, shape))
        return out, t_out
    return jvp


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    shape = shape_of(out)
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
    shape = shape_of(out)
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
    shape = shape_of(out)
    a = Zero(None) if type(tx) is Zero else broadcast_to(mul(tx, y), shape)
    b = Zero(None) if type(ty) is Zero else broadcast_to(mul(x, ty), shape)
    return out, add_tangents(a, b)


def _mul_transpose(ct, x, y):
    if is_undefined(x) and is_undefined(y):
        raise TypeError("mul: both operands are linear inputs; the product is not linear.")
    if is_undefined(x):
        return [unbroadcast(mul(ct, y), x.aval.shape), None]
    return [None, unbroadcast(mul(x, ct), y.aval.shape)]


def _div_jvp(primals, tangents, torch=False):
    x, y = primals
    tx, ty = tangents
    out = div(x, y)
    shape = shape_of(out)
    a = Zero(None) if type(tx) is Zero else broadcast_to(div(tx, y), shape)
    # d(x/y)/dy = -x/y^2 = -out/y. PyTorch's div_tensor_other_backward reads the operands, not
    # the result: x/y is computed again, so a second derivative with respect to the quotient,
    # taken as a non-leaf, does not flow through this factor
    quotient = div(x, y) if torch else out
    b = Zero(None) if type(ty) is Zero else neg(mul(ty, div(quotient, y)))
    return out, add_tangents(a, b)


def _div_transpose(ct, x, y):
    if is_undefined(y):
        raise TypeError("div: the divisor is a linear input; x / y is not linear in y.")
    return [unbroadcast(div(ct, y), x.aval.shape), None]


def _fast_div(in_avals, out_avals, params):
    if np.issubdtype(out_avals[0].dtype, np.inexact):  # ints use the truncating impl
        return xp.divide, (), {}
    return None


def _div_impl(x, y):
    dtype = getattr(x, "dtype", None)
    if (np.result_type(x) if dtype is None else dtype).kind in "iu":
        # integers truncate towards zero, like C
        q = xp.floor_divide(x, y)
        return q + ((q < 0) & (q * y != x))
    return xp.divide(x, y)


# x + (-y) == x - y, (-x) + y == y - x, x - (-y) == x + y, (-x) * (-y) == x * y: exact
add_p = binary("add", lambda x, y: xp.add(x, y), torch_name="AddBackward0", kinds=ANY,
               props=("elementwise", "linear", "commutative"),
               facts=dict(identity=0, identity_sides=(0, 1),
                          neg_operand={1: ("sub", (0, 1)), 0: ("sub", (1, 0))},
                          scalar_operands=True, fast_impl=backend_call("add")))
add_p.rules.update(jvp=_add_jvp, transpose=_add_transpose)
sub_p = binary("sub", lambda x, y: xp.subtract(x, y), torch_name="SubBackward0", kinds=NUMBER,
               props=("elementwise", "linear"),
               facts=dict(identity=0, identity_sides=(1,), neg_operand={1: ("add", (0, 1))},
                          scalar_operands=True, fast_impl=backend_call("subtract")))
sub_p.rules.update(jvp=_sub_jvp, transpose=_sub_transpose)
mul_p = binary("mul", lambda x, y: xp.multiply(x, y), torch_name="MulBackward0", kinds=ANY,
               props=("elementwise", "linear", "bilinear", "commutative"),
               facts=dict(identity=1, identity_sides=(0, 1), absorbing=0, neg_by=-1,
                          neg_cancels=True, scalar_operands=True,
                          fast_impl=backend_call("multiply")))
mul_p.rules.update(jvp=_mul_jvp, transpose=_mul_transpose)
div_p = binary("div", _div_impl, torch_name="DivBackward0", kinds=NUMBER,
               props=("elementwise", "linear"),
               facts=dict(identity=1, identity_sides=(1,), neg_cancels=True,
                          scalar_operands=True, fast_impl=_fast_div, linear_operands=(0,)))
div_p.rules.update(jvp=_div_jvp, torch_jvp=lambda p, t: _div_jvp(p, t, torch=True),
                   transpose=_div_transpose)


# pow: x ** y elementwise. y may be an integer array with a float x (as in JAX): then
# d/dx = y x^(y-1) stays exact at x == 0 (no 0 * inf), and is 0 where y == 0.
def _pow_abstract(x, y):
    if x.dtype != y.dtype and not (x.dtype.kind in FLOAT and y.dtype.kind in "iu"):
        raise DTypeError(f"pow: operands have dtypes {x.dtype.name} and {y.dtype.name}; pow "
                         "needs one dtype, or a float base with an integer exponent. Use "
                         "functrans.numpy.power, which promotes like numpy.")
    check_kinds("pow", x.dtype, NUMBER)
    return ShapedArray(broadcast_shapes("pow", x.shape, y.shape), x.dtype)


def _pow_impl(x, y):
    # an integer exponent: compute in the base's dtype, as numpy would. An impl takes what
    # numpy takes, Python scalars included (eager bind passes them through)
    x_dtype, y_dtype = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if x_dtype is not None and y_dtype is not None and y_dtype != x_dtype:
        y = y.astype(x_dtype)
    return xp.power(x, y)


def _pow_dx(x, y, out):
    if y.dtype == x.dtype:
        # y x^(y-1), with x read as 1 where x == y == 0: x^0 is 1 for every x, so its
        # derivative there is 0 (as autograd's and PyTorch's), where JAX's 0 * 0^-1 gives nan.
        # Only that point is masked, so d/dy of this term (1/x at y == 0) stays exact elsewhere
        both_0 = and_(eq(x, _const(x, 0)), eq(y, _const(y, 0)))
        return mul(y, pow(select(both_0, _one(x), x), sub(y, _one(y))))
    # integer y: 1 stands in for y == 0, so x^(y-1) stays finite at x == 0; that factor is 0
    y_is_0 = eq(y, _const(y, 0))
    y_safe = select(y_is_0, _one(y), y)
    jac = mul(convert_element_type(y_safe, x.dtype), pow(x, sub(y_safe, _one(y))))
    return select(y_is_0, _const(jac, 0), jac)


def _pow_dy(x, y, out):
    # d/dy x^y = log(x) x^y. As JAX: log(1) where x == 0, so a zero y-tangent gives 0, not
    # 0 * -inf = nan (x^y is 0 there for y > 0 anyway)
    safe_x = select(eq(x, _const(x, 0)), _one(x), x)
    return mul(log(safe_x), out)


def _pow_x_term_torch(tx, x, y, shape):
    # PyTorch's pow_backward_self: where(y == 0, 0, t * y x^(y-1)): 0 wherever y == 0, also at
    # x == 0 (JAX: 0 * 0^-1 = nan), and the tangent goes inside the where, so a NaN tangent
    # (a second derivative through log(x < 0)) gives 0 there too
    # Written as jac * where(y == 0, 0, t): its transpose, the backward, is PyTorch's
    # where(y == 0, 0, ct * jac), and the backward's own derivative in ct (double backward) is
    # this product again, so 0 * 0^-1 = nan at x == y == 0 meets it as in PyTorch
    y_is_0 = eq(y, _const(y, 0))
    if y.dtype != x.dtype:
        jac = _pow_dx(x, y, None)  # already 0 where the integer y is 0
        term = broadcast_to(mul(tx, jac), shape)
        return select(y_is_0, _const(term, 0), term)
    jac = mul(y, pow(x, sub(y, _one(y))))
    masked = broadcast_to(tx, shape)
    return mul(jac, select(y_is_0, _const(masked, 0), masked))


def _pow_jvp_torch(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = pow_p.bind(x, y)
    shape = shape_of(out)
    t_out = Zero(None)
    if type(tx) is not Zero:
        t_out = _pow_x_term_torch(tx, x, y, shape)
    if type(ty) is not Zero:
        t_out = add_tangents(t_out, broadcast_to(mul(ty, _pow_dy_torch(x, y, out)), shape))
    return out, t_out


def _pow_dy_torch(x, y, out):
    # PyTorch's pow_backward_exponent: x^y log(x), but 0 where x == 0 and y >= 0; so -inf at
    # x == 0, y < 0 (inf * log(0)) where JAX's log(1) * inf gives nan
    jac = mul(out, log(x))
    return select(and_(eq(x, _const(x, 0)), ge(y, _const(y, 0))), _const(jac, 0), jac)


pow_p = binary("pow", _pow_impl, abstract=_pow_abstract, torch_name="PowBackward1")
pow_p.rules["jvp"] = binary_jvp(pow_p, _pow_dx, _pow_dy)
pow_p.rules["torch_jvp"] = _pow_jvp_torch
# x ** y with the values XLA's CPU backend gives (the C library's pow, powf; functrans.random)
xla_pow_p = binary("xla_pow", xla_math.pow, kinds=REAL_FLOAT)
xla_pow_p.rules["jvp"] = binary_jvp(xla_pow_p, _pow_dx, _pow_dy)


def _balanced_eq(x, out, y):
    """Where x attains max/min `out`: 1, or 0.5 at a tie with y (JAX's and PyTorch's split)."""
    hit = select(eq(x, out), _one(out), _const(out, 0))
    return div(hit, select(eq(y, out), _const(out, 2), _one(out)))


def _balanced_jvp_torch(prim, loses):
    """PyTorch's maximum/minimum backward, from the operands (not the result): each operand gets
    the gradient where it wins, half of it at a tie, and 0 where `loses(x, y)`, filled in (so a
    NaN gradient does not reach the operand that lost; at a NaN operand neither loses, and both
    get all of it; JAX's rule gives the NaN side 0)."""
    def side(t, x, y, shape):
        t = broadcast_to(t, shape)
        zero = _const(t, 0)
        return select(eq(x, y), mul(t, _const(t, 0.5)), select(loses(x, y), zero, t))

    def jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = prim.bind(x, y)
        shape = shape_of(out)
        t_out = Zero(None)
        if type(tx) is not Zero:
            t_out = add_tangents(t_out, side(tx, x, y, shape))
        if type(ty) is not Zero:
            t_out = add_tangents(t_out, side(ty, y, x, shape))
        return out, t_out
    return jvp


max_p = binary("max", lambda x, y: xp.maximum(x, y), kinds=ANY,
               props=("elementwise", "commutative"), torch_name="MaximumBackward0")
max_p.rules["jvp"] = binary_jvp(max_p, lambda x, y, out: _balanced_eq(x, out, y),
                                lambda x, y, out: _balanced_eq(y, out, x))
max_p.rules["torch_jvp"] = _balanced_jvp_torch(max_p, lambda x, y: lt(x, y))
min_p = binary("min", lambda x, y: xp.minimum(x, y), kinds=ANY,
               props=("elementwise", "commutative"), torch_name="MinimumBackward0")
min_p.rules["jvp"] = binary_jvp(min_p, lambda x, y, out: _balanced_eq(x, out, y),
                                lambda x, y, out: _balanced_eq(y, out, x))
min_p.rules["torch_jvp"] = _balanced_jvp_torch(min_p, lambda x, y: gt(x, y))


# --- clamp: x limited to [lo, hi] (clamp_min, clamp_max: one bound) ----------------------------
# The value is PyTorch's (and lax.clamp's away from signed zeros and NaN): x itself where
# lo <= x <= hi (so -0.0 stays -0.0 at a bound of 0.0), hi where lo > hi, NaN where x or a
# bound is NaN. Each operand's derivative is 1 on a region and 0 elsewhere; the conventions
# differ on the boundaries:
#   JAX (lax.clamp, the missing bound at -inf/+inf):  x: lo < x < hi    lo: x < lo < hi
#                                                      hi: hi < x
#   PyTorch (clamp_backward, clamp_backward_min_max):  x: lo <= x <= hi  lo: x < lo < hi
#                                                      hi: x > hi or hi < lo
#   one bound, PyTorch:  clamp_min  x: x >= lo, lo: x < lo;   clamp_max  x: x <= hi, hi: x > hi

def masked_jvp(prim, *masks):
    """The JVP of a piecewise-linear primitive that passes operand i's tangent where
    `masks[i](*primals)` holds and 0 elsewhere (a mask of None: the operand's tangent is 0)."""
    def jvp(primals, tangents):
        out = prim.bind(*primals)
        shape = shape_of(out)
        t_out = Zero(None)
        for t, mask in zip(tangents, masks):
            if type(t) is not Zero and mask is not None:
                term = select(mask(*primals), broadcast_to(t, shape), _const(t, 0))
                t_out = add_tangents(t_out, broadcast_to(term, shape))
        return out, t_out
    return jvp


def _clamp_value(x, lo, hi):
    # numpy: where lo > hi the upper bound wins, as min(max(x, lo), hi)
    with np.errstate(invalid="ignore"):
        out = xp.where((x >= lo) & (x <= hi), x, xp.where((x < lo) & (lo <= hi), lo, hi))
        return xp.where(xp.isnan(lo) | xp.isnan(hi), xp.asarray(np.nan, out.dtype),
                        xp.where(x != x, x, out)) if out.dtype.kind == "f" else out


def _clamp_impl(x, lo, hi):
    return _clamp_value(xp.asarray(x), xp.asarray(lo), xp.asarray(hi))


def _unbounded(x, upper):
    """The missing bound of a one-bound clamp: +inf or -inf (for integers, their extremes)."""
    if x.dtype.kind == "f":
        return xp.asarray(np.inf if upper else -np.inf, x.dtype)
    info = np.iinfo(x.dtype)
    return xp.asarray(info.max if upper else info.min, x.dtype)


def _clamp_min_impl(x, lo):
    x = xp.asarray(x)
    return _clamp_value(x, xp.asarray(lo), _unbounded(x, True))


def _clamp_max_impl(x, hi):
    x = xp.asarray(x)
    return _clamp_value(x, _unbounded(x, False), xp.asarray(hi))


def _top(x):
    return _const(x, np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).max)


def _bottom(x):
    return _const(x, -np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min)


def _clamp_x_jax(x, lo, hi):
    return and_(gt(x, lo), lt(x, hi))


def _clamp_lo_jax(x, lo, hi):
    return and_(lt(x, lo), lt(lo, hi))


def _clamp_hi_jax(x, lo, hi):
    return lt(hi, x)


clamp_p = binary("clamp", _clamp_impl, kinds=REAL, torch_name="ClampBackward0")
clamp_p.rules["jvp"] = masked_jvp(clamp_p, _clamp_x_jax, _clamp_lo_jax, _clamp_hi_jax)
clamp_p.rules["torch_jvp"] = masked_jvp(clamp_p, lambda x, lo, hi: and_(ge(x, lo), le(x, hi)),
                                        _clamp_lo_jax,  # the same region: x < lo < hi
                                        lambda x, lo, hi: or_(gt(x, hi), lt(hi, lo)))
clamp_min_p = binary("clamp_min", _clamp_min_impl, kinds=REAL, torch_name="ClampMinBackward1")
clamp_min_p.rules["jvp"] = masked_jvp(clamp_min_p, lambda x, lo: _clamp_x_jax(x, lo, _top(x)),
                                      lambda x, lo: _clamp_lo_jax(x, lo, _top(x)))
clamp_min_p.rules["torch_jvp"] = masked_jvp(clamp_min_p, lambda x, lo: ge(x, lo),
                                            lambda x, lo: lt(x, lo))
clamp_max_p = binary("clamp_max", _clamp_max_impl, kinds=REAL, torch_name="ClampMaxBackward1")
clamp_max_p.rules["jvp"] = masked_jvp(clamp_max_p,
                                      lambda x, hi: _clamp_x_jax(x, _bottom(x), hi),
                                      lambda x, hi: _clamp_hi_jax(x, _bottom(x), hi))
clamp_max_p.rules["torch_jvp"] = masked_jvp(clamp_max_p, lambda x, hi: le(x, hi),
                                            lambda x, hi: gt(x, hi))


def _atan2_d(num):
    # atan2(x, y) = atan(x/y): d/dx = y/(x^2 + y^2), d/dy = -x/(x^2 + y^2)
    def d(x, y, out):
        r2 = add(mul(x, x), mul(y, y))
        return div(y, r2) if num else neg(div(x, r2))
    return d


def _atan2_d_torch(num):
    # PyTorch's atan2_backward: 1/(x^2 + y^2) taken as 0 where x^2 + y^2 == 0, so the
    # derivatives at (0, 0) are 0 and -0 (JAX: 0/0 = nan)
    def d(x, y, out):
        r2 = add(mul(x, x), mul(y, y))
        zero = eq(r2, _const(r2, 0))
        recip = select(zero, _const(r2, 0), div(_one(r2), r2))
        return mul(y, recip) if num else mul(neg(x), recip)
    return d


atan2_p = binary("atan2", lambda x, y: xp.arctan2(x, y), kinds=REAL_FLOAT,
                 torch_name="Atan2Backward0")
atan2_p.rules["jvp"] = binary_jvp(atan2_p, _atan2_d(True), _atan2_d(False))
atan2_p.rules["torch_jvp"] = binary_jvp(atan2_p, _atan2_d_torch(True), _atan2_d_torch(False))

def _logistic_jvp_torch(primals, tangents):
    # PyTorch's sigmoid backward is its own op, sigmoid_backward(t, y) = t (1 - y) y, with its
    # own derivative (below)
    x, = primals
    t, = tangents
    y = logistic_p.bind(x)
    return y, logistic_backward_p.bind(t, y)


logistic_p.rules["torch_jvp"] = _logistic_jvp_torch


def _logistic_backward_jvp(primals, tangents):
    # as PyTorch differentiates sigmoid_backward: in y, t * (1 - 2y) as one factor (the product
    # rule on (1 - y) y would add t (1 - y) and -t y: inf - inf = nan where t is inf)
    t, y = primals
    t_dot, y_dot = tangents
    out = logistic_backward_p.bind(t, y)
    shape = shape_of(out)
    a = Zero(None) if type(t_dot) is Zero else \
        broadcast_to(logistic_backward_p.bind(t_dot, y), shape)
    b = Zero(None) if type(y_dot) is Zero else \
        broadcast_to(mul(mul(y_dot, t), add(mul(_const(y, -2), y), _one(y))), shape)
    return out, add_tangents(a, b)


def _logistic_backward_transpose(ct, t, y):
    if is_undefined(y):
        raise TypeError("logistic_backward: y is a linear input; the op is linear in t only.")
    return [unbroadcast(logistic_backward_p.bind(ct, y), t.aval.shape), None]


# logistic_backward(t, y) = t (1 - y) y: the derivative of logistic as PyTorch states it
# (sigmoid_backward), used by logistic's torch_jvp; linear in t
logistic_backward_p = binary("logistic_backward", lambda t, y: t * (1 - y) * y,
                             kinds=FLOAT, props=("elementwise", "linear"),
                             torch_name="SigmoidBackwardBackward0",
                             facts=dict(linear_operands=(0,)))
logistic_backward_p.rules.update(jvp=_logistic_backward_jvp,
                                 transpose=_logistic_backward_transpose)

# rem: numpy's remainder (Python's %): x - floor(x/y) y, with the sign of y.
# d/dx = 1, d/dy = -floor_divide(x, y)
rem_p = binary("rem", lambda x, y: xp.remainder(x, y), kinds=REAL,
               torch_name="RemainderBackward1")
rem_p.rules["jvp"] = binary_jvp(rem_p, None, lambda x, y, out: neg(floor_divide(x, y)))
# fmod: C's fmod, x - trunc(x/y) y, with the sign of x. d/dx = 1, d/dy = -trunc(x/y)
fmod_p = binary("fmod", lambda x, y: xp.fmod(x, y), kinds=REAL, torch_name="FmodBackward1")
fmod_p.rules["jvp"] = binary_jvp(fmod_p, None, lambda x, y, out: neg(trunc(div(x, y))))
# floor_divide: numpy's //, floor(x / y) as numpy computes it (consistent with rem)
floor_divide_p = binary("floor_divide", lambda x, y: xp.floor_divide(x, y), kinds=REAL)
floor_divide_p.rules["jvp"] = zero_jvp(floor_divide_p)


def comparison(name, impl, backend_name):
    """Define the row of a comparison primitive: a bool result with a zero derivative."""
    prim = binary(name, impl, out_dtype=np.dtype(bool), kinds=ANY,
                  facts=dict(scalar_operands=True, fast_impl=backend_call(backend_name)))
    prim.rules["jvp"] = zero_jvp(prim)
    return prim


lt_p = comparison("lt", lambda x, y: xp.less(x, y), "less")
le_p = comparison("le", lambda x, y: xp.less_equal(x, y), "less_equal")
gt_p = comparison("gt", lambda x, y: xp.greater(x, y), "greater")
ge_p = comparison("ge", lambda x, y: xp.greater_equal(x, y), "greater_equal")
eq_p = comparison("eq", lambda x, y: xp.equal(x, y), "equal")
ne_p = comparison("ne", lambda x, y: xp.not_equal(x, y), "not_equal")


# bitwise on integers, logical on bools (bool in, bool out), as JAX's and/or/xor/not
def _bitwise(name, impl):
    prim = binary(name, impl, kinds=INTEGRAL)
    prim.rules["jvp"] = zero_jvp(prim)
    return prim


and_p = _bitwise("and", lambda x, y: xp.bitwise_and(x, y))
or_p = _bitwise("or", lambda x, y: xp.bitwise_or(x, y))
xor_p = _bitwise("xor", lambda x, y: xp.bitwise_xor(x, y))
not_p = unary("not", lambda x: xp.invert(x), kinds=INTEGRAL, differentiable=False)


# --- select ----------------------------------------------------------------------------------

def _select_abstract(pred, on_true, on_false):
    if pred.dtype != np.bool_:
        raise DTypeError(f"select: the predicate must be bool, got {pred.dtype.name}.")
    dtype = same_dtype("select", [on_true, on_false])
    return ShapedArray(broadcast_shapes("select", pred.shape, on_true.shape, on_false.shape),
                       dtype)


def _select_jvp(primals, tangents):
    pred, a, b = primals
    _, ta, tb = tangents
    out = select(pred, a, b)
    zeros = np.zeros((), out.dtype)
    ta = zeros if type(ta) is Zero else ta
    tb = zeros if type(tb) is Zero else tb
    return out, broadcast_to(select(pred, ta, tb), shape_of(out))


def _select_transpose(ct, pred, a, b):
    if is_undefined(pred):
        raise TypeError("select: the predicate cannot be a linear input.")
    zeros = np.zeros((), ct.dtype)
    return [None,
            unbroadcast(select(pred, ct, zeros), a.aval.shape) if is_undefined(a) else None,
            unbroadcast(select(pred, zeros, ct), b.aval.shape) if is_undefined(b) else None]


select_p = define("select", impl=lambda p, a, b: xp.where(p, a, b),
                  abstract=_select_abstract, jvp=_select_jvp, transpose=_select_transpose,
                  props=("elementwise", "linear"), torch_name="WhereBackward0",
                  facts=dict(scalar_operands=True, fast_impl=backend_call("where")))
select_p.rules["batch"] = broadcasting_batch(select_p)


# --- bindable wrappers -----------------------------------------------------------------------

def _wrapper(prim, name):
    def bind(*args):
        return prim.bind(*args)
    bind.__name__ = bind.__qualname__ = name
    bind.__doc__ = f"Apply the `{prim.name}` primitive."
    return bind


neg = _wrapper(neg_p, "neg")
sin = _wrapper(sin_p, "sin")
cos = _wrapper(cos_p, "cos")
tan = _wrapper(tan_p, "tan")
asin = _wrapper(asin_p, "asin")
acos = _wrapper(acos_p, "acos")
atan = _wrapper(atan_p, "atan")
sinh = _wrapper(sinh_p, "sinh")
cosh = _wrapper(cosh_p, "cosh")
tanh = _wrapper(tanh_p, "tanh")
asinh = _wrapper(asinh_p, "asinh")
acosh = _wrapper(acosh_p, "acosh")
atanh = _wrapper(atanh_p, "atanh")
exp = _wrapper(exp_p, "exp")
exp2 = _wrapper(exp2_p, "exp2")
expm1 = _wrapper(expm1_p, "expm1")
log = _wrapper(log_p, "log")
xla_log = _wrapper(xla_log_p, "xla_log")
xla_exp = _wrapper(xla_exp_p, "xla_exp")
log2 = _wrapper(log2_p, "log2")
log10 = _wrapper(log10_p, "log10")
log1p = _wrapper(log1p_p, "log1p")
sqrt = _wrapper(sqrt_p, "sqrt")
norm_sqrt = _wrapper(norm_sqrt_p, "norm_sqrt")
rsqrt = _wrapper(rsqrt_p, "rsqrt")
cbrt = _wrapper(cbrt_p, "cbrt")
logistic = _wrapper(logistic_p, "logistic")
erf = _wrapper(erf_p, "erf")
erf_inv = _wrapper(erf_inv_p, "erf_inv")
sign = _wrapper(sign_p, "sign")
sgn = _wrapper(sgn_p, "sgn")
floor = _wrapper(floor_p, "floor")
ceil = _wrapper(ceil_p, "ceil")
round = _wrapper(round_p, "round")
trunc = _wrapper(trunc_p, "trunc")
is_finite = _wrapper(is_finite_p, "is_finite")
signbit = _wrapper(signbit_p, "signbit")
abs = _wrapper(abs_p, "abs")
real = _wrapper(real_p, "real")
imag = _wrapper(imag_p, "imag")
conj = _wrapper(conj_p, "conj")
complex = _wrapper(complex_p, "complex")
relu = _wrapper(relu_p, "relu")
add = _wrapper(add_p, "add")
sub = _wrapper(sub_p, "sub")
mul = _wrapper(mul_p, "mul")
div = _wrapper(div_p, "div")
pow = _wrapper(pow_p, "pow")
xla_pow = _wrapper(xla_pow_p, "xla_pow")
max = _wrapper(max_p, "max")
min = _wrapper(min_p, "min")
clamp = _wrapper(clamp_p, "clamp")
clamp_min = _wrapper(clamp_min_p, "clamp_min")
clamp_max = _wrapper(clamp_max_p, "clamp_max")
atan2 = _wrapper(atan2_p, "atan2")
rem = _wrapper(rem_p, "rem")
fmod = _wrapper(fmod_p, "fmod")
floor_divide = _wrapper(floor_divide_p, "floor_divide")
lt = _wrapper(lt_p, "lt")
le = _wrapper(le_p, "le")
gt = _wrapper(gt_p, "gt")
ge = _wrapper(ge_p, "ge")
eq = _wrapper(eq_p, "eq")
ne = _wrapper(ne_p, "ne")
and_ = _wrapper(and_p, "and_")
or_ = _wrapper(or_p, "or_")
xor = _wrapper(xor_p, "xor")
not_ = _wrapper(not_p, "not_")
select = _wrapper(select_p, "select")


def integer_pow(x, y: int):
    """x ** y for a Python int y."""
    return integer_pow_p.bind(x, y=int(y))


def scalar_pow(x, y: float):
    """x ** y for a Python float y, as PyTorch's pow(Tensor, Scalar) computes it (x^0.5 and
    x^-0.5 as sqrt and 1/sqrt: they differ from numpy's power at -0.0 and -inf)."""
    return scalar_pow_p.bind(x, y=float(y))
