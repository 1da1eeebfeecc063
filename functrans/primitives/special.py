"""Special-function primitives (scipy.special's, as lax's rows in JAX): gamma and its
logarithm, digamma and polygamma, the incomplete gamma and beta functions, Hurwitz zeta,
erfc and erfcx, the normal quantile and log-CDF, the scaled Bessel functions i0e and i1e,
Spence's function.

Values: scipy.special's where scipy is installed, else the numpy algorithms of
functrans/primitives/special_math.py (scipy is optional). Derivatives are JAX's rules
(jax/_src/lax/special.py). Where JAX defines none, the row says so: betainc in a and b,
polygamma in n and igamma_grad_a in a raise as JAX does; zeta in x is the derivative of the
truncated series JAX differentiates (d/dq is exact).
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, shape_of
from functrans.core.symbolic import Zero
from functrans.errors import ArgumentError
from functrans.primitives import special_math
from functrans.primitives.broadcasting import FLOAT, REAL_FLOAT, broadcasting_batch, nary_aval
from functrans.primitives.elementwise import abs as abs_
from functrans.primitives.elementwise import (add, add_tangents, binary, div, eq, exp, gt, log,
                                              log1p, mul, neg, select, sign, sub, unary)
from functrans.primitives.elementwise import pow as pow_
from functrans.primitives.layout import broadcast_to
from functrans.primitives.registry import define

__all__ = ["lgamma", "gamma", "digamma", "polygamma", "igamma", "igammac", "igamma_grad_a",
           "betainc", "zeta", "erfc", "erfcx", "ndtri", "log_ndtr", "i0e", "i1e", "spence"]


def _scipy_special():
    try:
        import scipy.special
    except ImportError:
        return None
    return scipy.special


def _impl(scipy_name, fallback):
    """An impl computing scipy.special.<scipy_name> where scipy is installed, `fallback`
    (special_math's numpy algorithm) otherwise; the result in the operands' dtype."""
    def impl(*args):
        args = [xp.asarray(a) for a in args]
        dtype = args[0].dtype
        if dtype.kind == "c":
            return special_math.scipy_only(scipy_name, *args,
                                           without=f"{scipy_name} takes real floats")
        sp = _scipy_special()
        if sp is None:
            return xp.asarray(fallback(*args)).astype(dtype, copy=False)
        with np.errstate(all="ignore"):
            return getattr(sp, scipy_name)(*args).astype(dtype, copy=False)
    impl.__name__ = f"{scipy_name}_impl"
    return impl


def _const(x, v):
    return np.asarray(v, x.dtype)


def no_derivative(prim, arg, why):
    """The derivative factor of an argument the row does not differentiate: it raises, so
    only a nonzero tangent for that argument is refused."""
    def refuse(*primals):
        raise ArgumentError(
            f"{prim}: no derivative with respect to its argument `{arg}` ({why}). "
            f"Differentiate with respect to the other arguments only: pass `{arg}` as a "
            "constant, outside argnums, or through stop_gradient.")
    return refuse


def nary_jvp(prim, *derivs):
    """The JVP sum_i t_i * derivs[i](*primals, out) of a broadcasting n-ary primitive, each
    term built only where its tangent is nonzero."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        shape = shape_of(out)
        t_out = Zero(ShapedArray(shape, out.dtype))
        for t, d in zip(tangents, derivs):
            if type(t) is Zero:
                continue
            t_out = add_tangents(t_out, broadcast_to(mul(t, d(*primals, out)), shape))
        return out, t_out
    return jvp


def nary_row(name, impl, *derivs, torch_name=None):
    """A broadcasting row of real floats whose JVP is nary_jvp's with `derivs`."""
    prim = binary(name, impl, kinds=REAL_FLOAT, torch_name=torch_name)
    prim.rules["jvp"] = nary_jvp(prim, *derivs)
    return prim


# --- gamma and its relatives -----------------------------------------------------------------

# d lgamma = digamma
lgamma_p = unary("lgamma", _impl("gammaln", special_math.lgamma),
                 lambda x, y: digamma(x), kinds=REAL_FLOAT, torch_name="LgammaBackward0")
# d gamma = gamma digamma
gamma_p = unary("gamma", _impl("gamma", special_math.gamma),
                lambda x, y: mul(y, digamma(x)), kinds=REAL_FLOAT)
# d digamma = polygamma(1, .)
digamma_p = unary("digamma", _impl("digamma", special_math.digamma),
                  lambda x, y: polygamma(_const(x, 1), x), kinds=REAL_FLOAT,
                  torch_name="DigammaBackward0")
# d/dx polygamma(n, x) = polygamma(n + 1, x); n is an integer order (JAX: no derivative)
polygamma_p = nary_row("polygamma", _impl("polygamma", special_math.polygamma),
                    no_derivative("polygamma", "n", "the order is an integer; JAX defines no "
                                   "derivative in it either"),
                    lambda n, x, y: polygamma(add(n, _const(n, 1)), x),
                    torch_name="PolygammaBackward0")


def _igamma_dx(a, x, out=None):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
    return exp(sub(mul(sub(a, _const(a, 1)), log(x)), add(x, lgamma(a))))


# the derivative of the regularized lower incomplete gamma function in a (scipy has none):
# d/dx of it is d/dx P(a, x) (log x - digamma(a)); JAX defines no derivative in a
igamma_grad_a_p = nary_row(
    "igamma_grad_a", lambda a, x: xp.asarray(special_math.igamma_grad_a(a, x)),
    no_derivative("igamma_grad_a", "a", "the second derivative of gammainc in a; JAX "
                   "defines none"),
    lambda a, x, y: mul(_igamma_dx(a, x), sub(log(x), digamma(a))))
igamma_p = nary_row("igamma", _impl("gammainc", special_math.igamma),
                 lambda a, x, y: igamma_grad_a(a, x), _igamma_dx)
igammac_p = nary_row("igammac", _impl("gammaincc", special_math.igammac),
                  lambda a, x, y: neg(igamma_grad_a(a, x)),
                  lambda a, x, y: neg(_igamma_dx(a, x)))


def _betainc_dx(a, b, x, out):
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
    lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return exp(sub(add(mul(sub(b, _const(b, 1)), log1p(neg(x))),
                       mul(sub(a, _const(a, 1)), log(x))), lbeta))


_BETAINC_AB = "JAX defines none: 'Betainc gradient with respect to a and b not supported'"
betainc_p = define("betainc", impl=_impl("betainc", special_math.betainc),
                   abstract=nary_aval("betainc", kinds=REAL_FLOAT), props=("elementwise",))
betainc_p.rules["batch"] = broadcasting_batch(betainc_p)
betainc_p.rules["jvp"] = nary_jvp(betainc_p, no_derivative("betainc", "a", _BETAINC_AB),
                                  no_derivative("betainc", "b", _BETAINC_AB), _betainc_dx)


def _bernoulli_ratios(m):
    """(2j + 2)! / B_(2j + 2) for j < m (12, -720, 30240, ...), from the Bernoulli numbers'
    recurrence in exact fractions."""
    from fractions import Fraction
    from math import comb, factorial
    b = [Fraction(1)]
    for n in range(1, 2 * m + 1):
        b.append(-sum(comb(n + 1, k) * b[k] for k in range(n)) / (n + 1))
    return [float(factorial(2 * j + 2) / b[2 * j + 2]) for j in range(m)]


_ZETA_TERMS = 16                                  # N = M = 16, JAX's float64 choice
_ZETA_RATIOS = _bernoulli_ratios(_ZETA_TERMS)


def _zeta_dx(x, q, y):
    # d/dx of Euler-Maclaurin's form of zeta(x, q) with N terms summed and M corrections
    # (Johansson 2015, eq. 5; what JAX differentiates, jax.scipy.special.zeta):
    #   zeta = sum_{k<N} (q+k)^-x + (q+N)^(1-x)/(x-1) + (q+N)^-x (1/2 + sum_j T_j),
    #   T_j = prod_{m<=2j} (x+m)/(q+N) / ratio_j,  dT_j/dx = T_j sum_{m<=2j} 1/(x+m)
    one = _const(x, 1)
    d = Zero(None)
    for k in range(_ZETA_TERMS):
        qk = add(q, _const(q, k))
        d = add_tangents(d, neg(mul(log(qk), pow_(qk, neg(x)))))
    w = add(q, _const(q, _ZETA_TERMS))
    log_w = log(w)
    x1 = sub(x, one)
    integral = div(pow_(w, sub(one, x)), x1)
    d = add(d, neg(add(mul(log_w, integral), div(integral, x1))))
    t0 = pow_(w, neg(x))
    prod = one
    inv_sum = _const(x, 0)
    series, dseries = _const(x, 0.5), _const(x, 0)
    for j, ratio in enumerate(_ZETA_RATIOS):
        for m in ((0,) if j == 0 else (2 * j - 1, 2 * j)):
            xm = add(x, _const(x, m))
            prod = mul(prod, div(xm, w))
            inv_sum = add(inv_sum, div(one, xm))
        t = div(prod, _const(x, ratio))
        series = add(series, t)
        dseries = add(dseries, mul(t, inv_sum))
    return add(d, add(mul(neg(mul(log_w, t0)), series), mul(t0, dseries)))


# Hurwitz zeta(x, q): d/dq = -x zeta(x + 1, q); in x there is no closed form: the derivative
# of Euler-Maclaurin's truncated series (JAX's choice), written in rows so it nests
zeta_p = nary_row("zeta", _impl("zeta", special_math.zeta), _zeta_dx,
               lambda x, q, y: neg(mul(x, zeta(add(x, _const(x, 1)), q))))

# --- error function relatives ----------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / np.sqrt(np.pi)
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)

# d erfc = -2/sqrt(pi) exp(-x^2)
# (complex z: holomorphic, scipy's values)
erfc_p = unary("erfc", _impl("erfc", special_math.erfc),
               lambda x, y: mul(_const(x, -_TWO_OVER_SQRT_PI), exp(neg(mul(x, x)))),
               kinds=FLOAT, torch_name="ErfcBackward0")
# y = erfcx(x) = exp(x^2) erfc(x): d y = 2 x y - 2/sqrt(pi)
erfcx_p = unary("erfcx", _impl("erfcx", special_math.erfcx),
                lambda x, y: sub(mul(_const(x, 2), mul(x, y)), _const(x, _TWO_OVER_SQRT_PI)),
                kinds=REAL_FLOAT)
# y = ndtri(p): d y = 1 / pdf(y) = sqrt(2 pi) exp(y^2 / 2)
ndtri_p = unary("ndtri", _impl("ndtri", special_math.ndtri),
                lambda p, y: exp(add(mul(_const(y, 0.5), mul(y, y)), _const(y, _LOG_SQRT_2PI))),
                kinds=REAL_FLOAT)
# y = log ndtr(x): d y = pdf(x) / ndtr(x) = exp(-x^2/2 - log sqrt(2 pi) - y)  (JAX's form)
log_ndtr_p = unary("log_ndtr", _impl("log_ndtr", special_math.log_ndtr),
                   lambda x, y: exp(sub(neg(add(mul(_const(x, 0.5), mul(x, x)),
                                                _const(x, _LOG_SQRT_2PI))), y)),
                   kinds=REAL_FLOAT)

# --- Bessel functions ------------------------------------------------------------------------

# y = i0e(x) = exp(-|x|) I0(x): d y = i1e(x) - sign(x) y
i0e_p = unary("i0e", _impl("i0e", special_math.i0e),
              lambda x, y: sub(i1e(x), mul(sign(x), y)), kinds=REAL_FLOAT)


def _i1e_deriv(x, y):
    # d i1e = i0e(x) - y (sign(x) + 1/x), 1/2 at |x| <= eps (JAX's rule, its cut included)
    eps = _const(x, np.finfo(x.dtype).eps)
    not_tiny = gt(abs_(x), eps)
    safe = select(not_tiny, x, broadcast_to(eps, shape_of(x)))
    d = sub(i0e(safe), mul(y, add(sign(safe), div(_const(x, 1), safe))))
    return select(not_tiny, d, broadcast_to(_const(x, 0.5), shape_of(x)))


i1e_p = unary("i1e", _impl("i1e", special_math.i1e), _i1e_deriv, kinds=REAL_FLOAT)

# --- Spence's function -----------------------------------------------------------------------


def _spence_deriv(x, y):
    # d/dx spence(x) = log(x) / (1 - x), -1 at x = 1 (its limit)
    one = eq(x, _const(x, 1))
    safe = select(one, broadcast_to(_const(x, 2), shape_of(x)), x)
    return select(one, broadcast_to(_const(x, -1), shape_of(x)),
                  div(log(safe), sub(_const(x, 1), safe)))


spence_p = unary("spence", _impl("spence", special_math.spence), _spence_deriv,
                 kinds=REAL_FLOAT)


# rows built by elementwise's family helpers (unary, binary) live here: errors that name a
# row's file must name this one
for _prim in (lgamma_p, gamma_p, digamma_p, polygamma_p, igamma_grad_a_p, igamma_p, igammac_p,
              betainc_p, zeta_p, erfc_p, erfcx_p, ndtri_p, log_ndtr_p, i0e_p, i1e_p, spence_p):
    _prim.module = __name__


# --- bindable wrappers -----------------------------------------------------------------------

def _wrapper(prim):
    def bind(*args):
        return prim.bind(*args)
    bind.__name__ = bind.__qualname__ = prim.name
    bind.__doc__ = f"Apply the `{prim.name}` primitive."
    return bind


lgamma = _wrapper(lgamma_p)
gamma = _wrapper(gamma_p)
digamma = _wrapper(digamma_p)
polygamma = _wrapper(polygamma_p)
igamma = _wrapper(igamma_p)
igammac = _wrapper(igammac_p)
igamma_grad_a = _wrapper(igamma_grad_a_p)
betainc = _wrapper(betainc_p)
zeta = _wrapper(zeta_p)
erfc = _wrapper(erfc_p)
erfcx = _wrapper(erfcx_p)
ndtri = _wrapper(ndtri_p)
log_ndtr = _wrapper(log_ndtr_p)
i0e = _wrapper(i0e_p)
i1e = _wrapper(i1e_p)
spence = _wrapper(spence_p)
