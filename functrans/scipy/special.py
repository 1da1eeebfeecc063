"""scipy.special functions over functrans primitives: logsumexp and softmax, the gamma family,
the incomplete gamma and beta functions, the error functions and the normal distribution's,
the scaled Bessel functions, zeta, Spence's function, the logistic and entropy helpers. Works
on arrays eagerly and on tracers alike; scipy itself is not needed (where it is installed the
special-function rows compute its values). Derivatives are JAX's (each function's docstring
says where JAX defines none, and what functrans does there).

>>> import numpy as np
>>> from functrans.scipy.special import logsumexp
>>> float(logsumexp(np.array([1000.0, 1000.0])))  # no overflow: the max is shifted out
1000.6931471805599
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrans.errors import ArgumentError, ArgumentTypeError, DTypeError
from functrans.numpy._core import asarray, promote
from functrans.numpy import sinc  # numpy's sinc, which scipy.special re-exports
from functrans.numpy._reductions import normalize_axes
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import bessel as B
from functrans.primitives import special as S
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.binary_math import xlogy_p
from functrans.primitives.shape_ops import broadcast_to, reshape

__all__ = ["logsumexp", "softmax", "log_softmax", "expit", "logit", "xlogy", "xlog1py", "entr",
           "gamma", "gammaln", "loggamma", "gammasgn", "rgamma", "digamma", "psi", "polygamma",
           "multigammaln", "gammainc", "gammaincc", "beta", "betaln", "betainc", "erf", "erfc",
           "erfinv", "erfcinv", "erfcx", "ndtr", "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e",
           "j0", "j1", "y0", "y1", "jv", "yv", "jn", "yn", "iv", "ive", "kv",
           "zeta", "sinc", "spence"]


def _inexact(*xs):
    """Operands promoted together, ints and bools going to float64 (scipy's rule)."""
    xs = [asarray(x) for x in xs]
    dtype = np.result_type(*[x.dtype for x in xs])
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return promote(*xs, dtype=dtype)


def _real(name, *xs):
    """_inexact's operands, refused when complex: the special-function rows are real."""
    out = _inexact(*xs)
    if out[0].dtype.kind == "c":
        raise DTypeError(f"functrans.scipy.special.{name}: complex input ({out[0].dtype}) is not "
                         "supported; these functions take real floats. Pass the real and "
                         "imaginary parts separately, or real input.")
    return out


def _const(x, v):
    return np.asarray(v, x.dtype)


def _and(p, q):
    return E.select(p, q, np.asarray(False))


def _not(p):
    return E.eq_p.bind(p, np.asarray(False))


def _isfinite(x):
    # comparisons, so no inf - inf warning; nan compares false
    return _and(E.lt_p.bind(x, _const(x, np.inf)), E.gt_p.bind(x, _const(x, -np.inf)))


def _keep(x, shape, axes):
    return reshape(x, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) along `axis`, computed stably: with m = max(a) (a stop-gradient
    shift, taken over the entries whose weight b is nonzero), log(sum(b * exp(a - m))) + m.
    Its derivative in `a` is softmax(a) (weighted by b). `return_sign=True` returns
    (log|s|, sign(s)) for weights of either sign; otherwise a negative sum gives nan.

    >>> import numpy as np
    >>> from functrans.scipy.special import logsumexp
    >>> logsumexp(np.array([[0.0, 0.0], [1.0, 1.0]]), axis=1) - np.log(2)
    array([0., 1.])
    """
    if b is None:
        a, = _inexact(a)
    else:
        a, b = _inexact(a, b)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = broadcast_to(a, shape), broadcast_to(b, shape)
        # entries weighted by 0 take no part, not even in the shift (scipy's rule)
        a = E.select(E.ne_p.bind(b, _const(b, 0)), a, _const(a, -np.inf))
    shape = a.shape
    axes = normalize_axes(axis, a.ndim, "logsumexp")
    empty = any(shape[i] == 0 for i in axes)
    if empty:
        m = m_out = np.zeros((), a.dtype)  # an empty sum: nothing to shift by
    else:
        a_const = stop_gradient_p.bind(a)  # the shift carries no derivative
        m = R.reduce_max(a_const, axes) if axes else a_const
        m = E.select(_isfinite(m), m, _const(m, 0))
        m_out = _keep(m, shape, axes) if keepdims else m
        m = _keep(m, shape, axes)
    e = E.exp_p.bind(E.sub(a, m))
    if b is not None:
        e = E.mul(b, e)
    s = R.reduce_sum(e, axes)
    if keepdims:
        s = _keep(s, shape, axes)
    zero = _const(s, 0)
    if return_sign:
        pos, neg = E.gt_p.bind(s, zero), E.lt_p.bind(s, zero)
        sign = E.select(pos, _const(s, 1), E.select(neg, _const(s, -1), zero))
        s = E.select(neg, E.neg(s), s)
    # log of the sum, guarded: 0 -> -inf, negative -> nan, with no log(0) evaluated
    pos = E.gt_p.bind(s, zero)
    log_s = E.log_p.bind(E.select(pos, s, _const(s, 1)))
    fallback = E.select(E.eq_p.bind(s, zero), _const(s, -np.inf), _const(s, np.nan))
    out = E.add(E.select(pos, log_s, fallback), m_out)
    return (out, sign) if return_sign else out


def log_softmax(x, axis=None):
    """x - logsumexp(x) along `axis` (all axes by default, as in scipy).

    >>> import numpy as np
    >>> from functrans.scipy.special import log_softmax
    >>> np.exp(log_softmax(np.array([0.0, 0.0])))
    array([0.5, 0.5])
    """
    x, = _inexact(x)
    return E.sub(x, logsumexp(x, axis, keepdims=True))


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) along `axis` (all axes by default, as in scipy), computed as
    exp(log_softmax(x)) so large inputs do not overflow."""
    return E.exp_p.bind(log_softmax(x, axis))


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    x, = _inexact(x)
    return E.logistic_p.bind(x)


def logit(p):
    """log(p / (1 - p)), the inverse of expit (-inf at 0 and inf at 1, with numpy's
    divide-by-zero warning)."""
    p, = _inexact(p)
    return E.log_p.bind(E.div(p, E.sub(_const(p, 1), p)))


def xlogy(x, y):
    """x * log(y), and 0 where x == 0 unless y is NaN. Derivatives are log(y) in x and x / y
    in y, as in JAX, except where x == 0 and y is not a positive finite number: both are 0
    there (JAX gives inf or nan). Real operands bind the xlogy row
    (functrans/primitives/binary_math.py)."""
    x, y = _inexact(x, y)
    if x.dtype.kind != "c":
        return xlogy_p.bind(x, y)
    zero = _const(x, 0)
    x_zero = E.eq_p.bind(x, zero)
    y_ok = _and(E.gt_p.bind(y, _const(y, 0)), _isfinite(y))
    # where x == 0 and log(y) is not finite, use y = 1: x * log(1) = 0 with finite derivatives
    y_safe = E.select(_and(x_zero, _not(y_ok)), _const(y, 1), y)
    return E.mul(x, E.log_p.bind(y_safe))


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), and 0 where x == 0 (even where y is -1). Derivatives log1p(y) in x and
    x / (1 + y) in y, as in JAX, except where x == 0 and y is not above -1: both are 0 there
    (JAX gives inf or nan), as in xlogy."""
    x, y = _real("xlog1py", x, y)
    x_zero = E.eq_p.bind(x, _const(x, 0))
    y_ok = _and(E.gt_p.bind(y, _const(y, -1)), _isfinite(y))
    y_safe = E.select(_and(x_zero, _not(y_ok)), _const(y, 0), y)
    return E.mul(x, E.log1p(y_safe))


def entr(x: Any) -> Any:
    """-x log(x) for x > 0, 0 at 0, -inf below (scipy.special.entr). Its derivative is
    -(log(x) + 1); at x == 0 it is 0 here (JAX gives the one-sided limit, inf)."""
    x, = _real("entr", x)
    pos = E.gt_p.bind(x, _const(x, 0))
    safe = E.select(pos, x, _const(x, 1))
    value = E.neg(E.mul(safe, E.log(safe)))
    rest = E.select(E.eq_p.bind(x, _const(x, 0)), _const(x, 0), _const(x, -np.inf))
    return E.select(pos, value, E.select(E.ne_p.bind(x, x), x, rest))   # nan stays nan


# --- the gamma function and its relatives ------------------------------------------------------

def gamma(x: Any) -> Any:
    """The gamma function (scipy.special.gamma); derivative gamma(x) digamma(x).

    >>> from functrans.scipy.special import gamma
    >>> float(gamma(5.0))
    24.0
    """
    x, = _real("gamma", x)
    return S.gamma(x)


def gammaln(x: Any) -> Any:
    """log |gamma(x)| (scipy.special.gammaln); derivative digamma(x)."""
    x, = _real("gammaln", x)
    return S.lgamma(x)


def loggamma(x: Any) -> Any:
    """The principal branch of log gamma (scipy.special.loggamma) on real input: gammaln
    for x >= 0, nan below (complex input is not supported)."""
    x, = _real("loggamma", x)
    out = S.lgamma(x)
    return E.select(E.lt_p.bind(x, _const(x, 0)), _const(x, np.nan), out)


def gammasgn(x: Any) -> Any:
    """The sign of gamma(x) (scipy.special.gammasgn): +1 above 0, alternating between the
    poles below (nan at them); no derivative (0, as JAX's)."""
    x, = _real("gammasgn", x)
    return E.sign(S.gamma(x))


def rgamma(x: Any) -> Any:
    """1 / gamma(x) (scipy.special.rgamma): 0 at the poles; derivative -digamma(x) / gamma(x)."""
    x, = _real("rgamma", x)
    pole = _and(E.le_p.bind(x, _const(x, 0)), E.eq_p.bind(x, E.floor(x)))
    safe = E.select(pole, _const(x, 1), x)
    return E.select(pole, _const(x, 0), E.div(_const(x, 1), S.gamma(safe)))


def digamma(x: Any) -> Any:
    """psi(x) = d/dx log gamma(x) (scipy.special.digamma); derivative polygamma(1, x)."""
    x, = _real("digamma", x)
    return S.digamma(x)


psi = digamma


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma (scipy.special.polygamma). Differentiable in x
    (polygamma(n + 1, x)); n is an integer order: differentiating in it raises, as in JAX."""
    n, x = _real("polygamma", n, x)
    return S.polygamma(n, x)


def _dimension(d) -> int:
    """multigammaln's d as a Python int: a concrete integral number (3, 3.0, np.int64(3))."""
    try:
        value = float(d) if not isinstance(d, bool) else None
    except (TypeError, ValueError):
        value = None
    if value is None or np.ndim(d) != 0 or value != int(value) or value < 1:
        raise ArgumentTypeError(f"multigammaln: d must be a positive integer (the dimension), "
                                f"known while tracing; got {d!r}. Pass d as an int such as 3.")
    return int(value)


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension d (scipy.special.multigammaln):
    d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j = 0 .. d - 1. Unlike scipy, a <= (d - 1)
    / 2 is not checked (it gives inf or a finite value of the sum, as in JAX)."""
    d = _dimension(d)
    a, = _real("multigammaln", a)
    out = _const(a, d * (d - 1) / 4 * np.log(np.pi))
    for j in range(d):
        out = E.add(out, S.lgamma(E.sub(a, _const(a, j / 2))))
    return out


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc).
    Derivatives as JAX's: in x, x^(a-1) e^-x / gamma(a); in a, igamma_grad_a (whose own
    derivative in a JAX does not define: a second derivative in a raises)."""
    a, x = _real("gammainc", a, x)
    return S.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (scipy.special.gammaincc); derivatives those of gammainc, negated."""
    a, x = _real("gammaincc", a, x)
    return S.igammac(a, x)


def betaln(a: Any, b: Any) -> Any:
    """log |beta(a, b)| (scipy.special.betaln) as gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _real("betaln", a, b)
    return E.sub(E.add(S.lgamma(a), S.lgamma(b)), S.lgamma(E.add(a, b)))


def _gamma_sign(x):
    # the sign of gamma(x) (no derivative): +1 above 0, alternating between the poles below
    return E.sign(S.gamma(x))


def beta(a: Any, b: Any) -> Any:
    """The beta function gamma(a) gamma(b) / gamma(a + b) (scipy.special.beta), as JAX
    computes it: sign * exp(betaln(a, b)), so large arguments do not overflow."""
    a, b = _real("beta", a, b)
    sign = E.mul(E.mul(_gamma_sign(a), _gamma_sign(b)), _gamma_sign(E.add(a, b)))
    return E.mul(sign, E.exp(betaln(a, b)))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (scipy.special.betainc).
    Differentiable in x; in a and b JAX defines no derivative, and neither does functrans:
    differentiating in them raises ArgumentError."""
    a, b, x = _real("betainc", a, b, x)
    shape = np.broadcast_shapes(a.shape, b.shape, x.shape)
    return S.betainc(broadcast_to(a, shape), broadcast_to(b, shape), broadcast_to(x, shape))


# --- the error functions and the normal distribution -------------------------------------------

def erf(x: Any) -> Any:
    """The error function (scipy.special.erf)."""
    x, = _inexact(x)        # complex too: scipy's values, the holomorphic derivative
    return E.erf(x)


def erfc(x: Any) -> Any:
    """1 - erf(x), accurate where erf is near 1 (scipy.special.erfc)."""
    x, = _inexact(x)        # complex too: scipy's values, the holomorphic derivative
    return S.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of erf (scipy.special.erfinv); derivative sqrt(pi)/2 exp(erfinv(x)^2)."""
    x, = _real("erfinv", x)
    return E.erf_inv(x)


def erfcinv(y: Any) -> Any:
    """The inverse of erfc (scipy.special.erfcinv) on [0, 2], as -ndtri(y / 2) / sqrt(2)
    (accurate in both tails); derivative -sqrt(pi)/2 exp(erfcinv(y)^2)."""
    y, = _real("erfcinv", y)
    return E.mul(_const(y, -np.sqrt(0.5)), S.ndtri(E.mul(y, _const(y, 0.5))))


def erfcx(x: Any) -> Any:
    """exp(x^2) erfc(x) without overflow (scipy.special.erfcx); derivative 2 x erfcx(x) -
    2/sqrt(pi), as JAX's."""
    x, = _real("erfcx", x)
    return S.erfcx(x)


def ndtr(x: Any) -> Any:
    """The standard normal CDF (scipy.special.ndtr), from erf near 0 and erfc in the tails
    (JAX's composition)."""
    x, = _real("ndtr", x)
    half_sqrt_2 = _const(x, 0.5 * np.sqrt(2.0))
    z = E.mul(x, half_sqrt_2)
    az = E.abs(z)
    one, two = _const(x, 1), _const(x, 2)
    tails = E.select(E.gt_p.bind(z, _const(x, 0)), E.sub(two, S.erfc(az)), S.erfc(az))
    y = E.select(E.lt_p.bind(az, half_sqrt_2), E.add(one, E.erf(z)), tails)
    return E.mul(_const(x, 0.5), y)


def ndtri(p: Any) -> Any:
    """The standard normal quantile, inverse of ndtr (scipy.special.ndtri); derivative
    sqrt(2 pi) exp(ndtri(p)^2 / 2)."""
    p, = _real("ndtri", p)
    return S.ndtri(p)


def log_ndtr(x: Any) -> Any:
    """log of the standard normal CDF, accurate in both tails (scipy.special.log_ndtr);
    derivative exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi), as JAX's."""
    x, = _real("log_ndtr", x)
    return S.log_ndtr(x)


# --- modified Bessel functions ------------------------------------------------------------------

def i0e(x: Any) -> Any:
    """exp(-|x|) I0(x) (scipy.special.i0e); derivative i1e(x) - sign(x) i0e(x)."""
    x, = _real("i0e", x)
    return S.i0e(x)


def i1e(x: Any) -> Any:
    """exp(-|x|) I1(x) (scipy.special.i1e); derivative i0e(x) - i1e(x) (sign(x) + 1/x), 1/2 at
    |x| <= eps (JAX's rule)."""
    x, = _real("i1e", x)
    return S.i1e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function I0 (scipy.special.i0), as exp(|x|) i0e(x)."""
    x, = _real("i0", x)
    return E.mul(E.exp(E.abs(x)), S.i0e(x))


def i1(x: Any) -> Any:
    """The modified Bessel function I1 (scipy.special.i1), as exp(|x|) i1e(x)."""
    x, = _real("i1", x)
    return E.mul(E.exp(E.abs(x)), S.i1e(x))


# --- Bessel functions of real order (scipy's values; scipy needed) ----------------------------

def j0(x: Any) -> Any:
    """The Bessel function of the first kind J_0 (scipy.special.j0); derivative -J_1."""
    x, = _real("j0", x)
    return B.j0(x)


def j1(x: Any) -> Any:
    """The Bessel function J_1 (scipy.special.j1); derivative (J_0 - J_2) / 2."""
    x, = _real("j1", x)
    return B.j1(x)


def y0(x: Any) -> Any:
    """The Bessel function of the second kind Y_0 (scipy.special.y0); derivative -Y_1."""
    x, = _real("y0", x)
    return B.y0(x)


def y1(x: Any) -> Any:
    """The Bessel function Y_1 (scipy.special.y1); derivative (Y_0 - Y_2) / 2."""
    x, = _real("y1", x)
    return B.y1(x)


def jv(v: Any, z: Any) -> Any:
    """J_v(z) for real order v (scipy.special.jv); derivative in z (J_{v-1} - J_{v+1}) / 2,
    none in v (it raises ArgumentError)."""
    v, z = _real("jv", v, z)
    return B.jv(v, z)


def yv(v: Any, z: Any) -> Any:
    """Y_v(z) for real order v (scipy.special.yv); derivative in z (Y_{v-1} - Y_{v+1}) / 2."""
    v, z = _real("yv", v, z)
    return B.yv(v, z)


def jn(n: Any, x: Any) -> Any:
    """J_n(x) for integer order n (scipy.special.jn, which is jv)."""
    return jv(n, x)


def yn(n: Any, x: Any) -> Any:
    """Y_n(x) for integer order n (scipy.special.yn; here yv's values, equal to rounding)."""
    return yv(n, x)


def iv(v: Any, z: Any) -> Any:
    """The modified Bessel function I_v(z) (scipy.special.iv); derivative in z
    (I_{v-1} + I_{v+1}) / 2."""
    v, z = _real("iv", v, z)
    return B.iv(v, z)


def ive(v: Any, z: Any) -> Any:
    """exp(-|z|) I_v(z) (scipy.special.ive); derivative in z
    (ive(v-1, z) + ive(v+1, z)) / 2 - sign(z) ive(v, z)."""
    v, z = _real("ive", v, z)
    return B.ive(v, z)


def kv(v: Any, z: Any) -> Any:
    """The modified Bessel function of the second kind K_v(z) (scipy.special.kv); derivative
    in z -(K_{v-1} + K_{v+1}) / 2."""
    v, z = _real("kv", v, z)
    return B.kv(v, z)


# --- zeta and Spence's function -----------------------------------------------------------------

def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function sum_k (k + q)^-x (scipy.special.zeta with q). Derivatives:
    in q, -x zeta(x + 1, q); in x, that of Euler-Maclaurin's truncated series (as JAX).
    q=None (Riemann's zeta) is not supported, as in JAX."""
    if q is None:
        raise ArgumentError("zeta: the Riemann zeta function (q=None) is not implemented, as "
                            "in JAX. Pass q=1.0 for x > 1, which is the same function there.")
    x, q = _real("zeta", x, q)
    return S.zeta(x, q)


def spence(x: Any) -> Any:
    """Spence's function, the integral from 1 to x of log(t) / (1 - t) (scipy.special.spence
    on real input: nan below 0); derivative log(x) / (1 - x), -1 at x = 1."""
    x, = _real("spence", x)
    return S.spence(x)
