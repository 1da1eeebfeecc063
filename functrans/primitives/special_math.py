"""Special functions in numpy alone: the fallback of the special-function rows
(functrans/primitives/special.py) where scipy is not installed, and `igamma_grad_a`, which scipy
lacks. float64 throughout (other float dtypes are computed in float64 and rounded back), to
within a few ulp to a few hundred ulp of scipy's Cephes/Boost values (tests compare the two).

The algorithms: gamma and lgamma from Python's math module (the C library's); digamma by
recurrence to x >= 10 and its asymptotic series; Hurwitz zeta by Euler-Maclaurin summation
(Cephes' scheme); the incomplete gamma and beta functions by their power series and continued
fractions (Numerical Recipes' modified Lentz), the derivative of the incomplete gamma in `a` by
carrying d/da through the same recurrences (XLA's scheme); the modified Bessel functions I0, I1
by their power series below 20 and Hankel's asymptotic series above; Spence's function by
Cephes' rational function.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["gamma", "lgamma", "loggamma", "digamma", "polygamma", "zeta", "erfc", "erfcx",
           "ndtri", "log_ndtr", "igamma", "igammac", "igamma_grad_a", "betainc", "i0e",
           "i1e", "spence", "scipy_only"]

_EPS = np.finfo(np.float64).eps


def scipy_only(name: str, *args, without: str):
    """scipy.special.<name>(*args) in the operands' dtype, for the values this module has no
    numpy algorithm for; without scipy, DTypeError naming the fix (`without` says what works
    then)."""
    try:
        import scipy.special
    except ImportError:
        from functrans.errors import DTypeError
        raise DTypeError(f"{name}: needs scipy (pip install scipy), whose values functrans "
                         f"uses here; without it {without}.") from None
    with np.errstate(all="ignore"):
        out = getattr(scipy.special, name)(*args)
    return np.asarray(out).astype(np.result_type(*args), copy=False)


_TINY = 1e-300


def _float64(fn):
    """fn computed on float64 copies of its arguments, the result in their common dtype."""
    def wrapped(*args):
        args = [np.asarray(a) for a in args]
        dtype = np.result_type(*args)
        if not np.issubdtype(dtype, np.floating):
            dtype = np.dtype(np.float64)
        args = np.broadcast_arrays(*[a.astype(np.float64) for a in args])
        with np.errstate(all="ignore"):
            out = fn(*args)
        return np.asarray(out, np.float64).astype(dtype, copy=False)
    wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
    return wrapped


def _scalar_map(fn, x, on_error):
    """fn (a Python float function) over an array; `on_error(v)` where it raises."""
    def safe(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return on_error(v)
    return np.asarray(np.frompyfunc(safe, 1, 1)(x), np.float64)


def _gamma_error(v):
    if math.isnan(v) or v == -math.inf:
        return math.nan
    if v == 0:
        return math.copysign(math.inf, v)
    if v < 0 and v == math.floor(v):
        return math.nan
    return math.inf if v > 0 or math.floor(v) % 2 == 0 else -math.inf


@_float64
def gamma(x):
    """Gamma function (scipy.special.gamma): inf at +-0 with 0's sign, nan at the negative
    integers."""
    return _scalar_map(math.gamma, x, _gamma_error)


@_float64
def lgamma(x):
    """log |Gamma(x)| (scipy.special.gammaln): inf at the poles."""
    return np.where(x == -np.inf, -np.inf, _scalar_map(math.lgamma, x, lambda v: math.inf))


@_float64
def loggamma(x):
    """The principal branch of log Gamma on the reals (scipy.special.loggamma): nan below 0."""
    return np.where(x < 0, np.nan, lgamma(x))


def _digamma(x):
    neg = x < 0
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    z = np.where(neg, 1 - x, x)
    acc = np.zeros_like(z)
    for _ in range(10):
        small = z < 10
        acc = acc - np.where(small, 1 / np.where(small, z, 1), 0)
        z = np.where(small, z + 1, z)
    z2 = 1 / (z * z)
    series = z2 * (1 / 12 - z2 * (1 / 120 - z2 * (1 / 252 - z2 * (1 / 240 - z2 * (1 / 132)))))
    out = np.log(z) - 0.5 / z - series + acc
    out = np.where(neg, out - np.pi / np.tan(np.pi * x), out)
    pole = (x <= 0) & (x == np.floor(x))
    out = np.where(pole, np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), np.nan), out)
    return np.where(x == np.inf, np.inf, np.where(x == -np.inf, np.nan, out))


digamma = _float64(_digamma)
digamma.__doc__ = "The digamma function psi = d/dx log Gamma (scipy.special.digamma)."

# Bernoulli-number denominators of Euler-Maclaurin's remainder terms: (2j)! / B_2j
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta(x, q):
    # sum_{k<n} (q + k)^-x, then the integral and Euler-Maclaurin's corrections from q + n
    finite_q = q[np.isfinite(q)]
    shift = max(0.0, -float(finite_q.min())) if finite_q.size else 0.0
    n = int(min(10 + math.ceil(shift), 100_000))
    s = np.zeros_like(q)
    for k in range(n):
        s = s + (q + k) ** -x
    w = q + n
    b = w ** -x
    s = s + b * w / (x - 1) + 0.5 * b
    a = np.ones_like(x)
    k = 0.0
    for coeff in _ZETA_A:
        a = a * (x + k)
        b = b / w
        s = s + a * b / coeff
        k += 1.0
        a = a * (x + k)
        b = b / w
        k += 1.0
    pole_q = (q <= 0) & (q == np.floor(q))
    bad = (x < 1) | ((q <= 0) & ~pole_q & (x != np.floor(x))) | np.isnan(x) | np.isnan(q)
    out = np.where(pole_q | (x == 1), np.inf, s)
    out = np.where(q > 1e8, (1 / (x - 1) + 1 / (2 * q)) * q ** (1 - x), out)
    return np.where(bad, np.nan, out)


zeta = _float64(_zeta)
zeta.__doc__ = "The Hurwitz zeta function sum_k (k + q)^-x (scipy.special.zeta(x, q))."


@_float64
def polygamma(n, x):
    """The n-th derivative of digamma (scipy.special.polygamma): (-1)^(n+1) n! zeta(n+1, x)
    for n >= 1."""
    fact = _scalar_map(math.gamma, n + 1, lambda v: math.nan)
    sign = np.where(np.mod(n, 2) == 0, -1.0, 1.0)
    out = sign * fact * _zeta(n + 1, x)
    return np.where(n == 0, _digamma(x), np.where((n < 0) | (n != np.floor(n)), np.nan, out))


@_float64
def erfc(x):
    """1 - erf(x), accurate where erf(x) is near 1 (scipy.special.erfc)."""
    return _scalar_map(math.erfc, x, lambda v: math.nan)


# erfcx(x) ~ P(1 / x^2) / (x sqrt(pi)), P's coefficients (-1)^k (2k-1)!! / 2^k, highest first
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75,
                     -0.5, 1.0)


def _erfcx(x):
    big = x > 25
    xs = np.where(big, 1.0, x)
    direct = np.exp(xs * xs) * erfc(xs)
    xb = np.where(big, x, 30.0)
    t = 1 / (xb * xb)
    p = np.zeros_like(t)
    for c in _ERFCX_ASYMPTOTIC:
        p = p * t + c
    return np.where(big, p / (xb * np.sqrt(np.pi)), np.where(x < -26.7, np.inf, direct))


erfcx = _float64(_erfcx)
erfcx.__doc__ = "exp(x^2) erfc(x), without overflow for large x (scipy.special.erfcx)."


def _log_ndtr(x):
    sqrt_half = np.sqrt(0.5)
    pos = x > 0
    upper = np.log1p(-0.5 * erfc(np.where(pos, x, 0) * sqrt_half))
    xn = np.where(pos, 0, x)
    lower = np.log(0.5 * _erfcx(-xn * sqrt_half)) - 0.5 * xn * xn
    return np.where(pos, upper, lower)


log_ndtr = _float64(_log_ndtr)
log_ndtr.__doc__ = "log of the standard normal CDF, accurate far in both tails."

# P. J. Acklam's rational approximation of the normal quantile (relative error 1.2e-9),
# refined by one Halley step on ndtr
_ACKLAM_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_ACKLAM_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
             6.680131188771972e+01, -1.328068155288572e+01)
_ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
             -2.549671361605072e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
             3.754408661907416e+00)


def _polyval(coeffs, t):
    acc = np.zeros_like(t)
    for c in coeffs:
        acc = acc * t + c
    return acc


@_float64
def ndtri(p):
    """The standard normal quantile, the inverse of ndtr (scipy.special.ndtri)."""
    lo = p < 0.02425
    hi = p > 1 - 0.02425
    pc = np.clip(p, _TINY, 1 - _EPS / 2)
    q = pc - 0.5
    r = q * q
    mid = q * _polyval(_ACKLAM_A, r) / (_polyval(_ACKLAM_B, r) * r + 1)
    tail_p = np.where(hi, 1 - pc, pc)
    s = np.sqrt(-2 * np.log(np.where(lo | hi, tail_p, 0.5)))
    tail = _polyval(_ACKLAM_C, s) / (_polyval(_ACKLAM_D, s) * s + 1)
    x = np.where(lo, tail, np.where(hi, -tail, mid))
    # Halley: e = ndtr(x) - p, from the tail nearer to p so that no digits cancel
    upper = x > 0
    e = np.where(upper, (1 - p) - 0.5 * erfc(x * np.sqrt(0.5)),
                 0.5 * erfc(-x * np.sqrt(0.5)) - p)
    u = e * np.sqrt(2 * np.pi) * np.exp(0.5 * x * x)
    x = x - u / (1 + 0.5 * x * u)
    out = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
    return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, out)


def _iterate(step, state, max_iter):
    """Run `state = step(state, i)` for i = 1, 2, ... until it reports convergence everywhere
    (the step returns (state, converged)) or max_iter steps."""
    for i in range(1, max_iter + 1):
        state, done = step(state, i)
        if np.all(done):
            break
    return state


def _igamma_parts(a, x, derivative):
    """(P(a, x), Q(a, x)) and, with `derivative`, dP/da: the series on x < a + 1, Q's
    continued fraction elsewhere, d/da carried through either recurrence."""
    use_series = x < a + 1
    # series: P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))
    sa = np.where(use_series, a, 1.0)
    sx = np.where(use_series, x, 0.5)

    def series_step(state, n):
        term, dterm, total, dtotal = state
        term = term * sx / (sa + n)
        dterm = dterm * sx / (sa + n) - term / (sa + n)
        return (term, dterm, total + term, dtotal + dterm), np.abs(term) <= np.abs(total) * _EPS
    one = np.ones_like(sa)
    _, _, total, dtotal = _iterate(series_step, (one, 0 * one, one, 0 * one), 5000)
    log_pre = sa * np.log(sx) - sx - lgamma(sa + 1)
    pre = np.exp(log_pre)
    p_series = pre * total
    dp_series = p_series * (np.log(sx) - _digamma(sa + 1)) + pre * dtotal

    # continued fraction: Q = x^a e^-x / Gamma(a) * h (modified Lentz, d/da alongside)
    ca = np.where(use_series, 1.0, a)
    cx = np.where(use_series, 3.0, x)
    b = cx + 1 - ca
    db = -np.ones_like(b)
    c = np.full_like(b, 1 / _TINY)
    dc = np.zeros_like(b)
    d = 1 / b
    dd = -db / (b * b)

    def cf_step(state, i):
        b, c, dc, d, dd, h, dh = state
        an = -i * (i - ca)
        dan = i
        b = b + 2
        dnew = an * d + b
        ddnew = dan * d + an * dd + db
        dnew = np.where(np.abs(dnew) < _TINY, _TINY, dnew)
        cnew = b + an / c
        dcnew = db + (dan * c - an * dc) / (c * c)
        cnew = np.where(np.abs(cnew) < _TINY, _TINY, cnew)
        d = 1 / dnew
        dd = -ddnew / (dnew * dnew)
        delta = d * cnew
        ddelta = dd * cnew + d * dcnew
        dh_new = dh * delta + h * ddelta
        h = h * delta
        done = np.abs(delta - 1) <= _EPS
        if derivative:
            # for integer a the fraction ends (an = 0 at i = a) but its derivative does not
            done = done & (np.abs(dh_new - dh) <= _EPS * np.abs(dh_new))
        dh = dh_new
        return (b, cnew, dcnew, d, dd, h, dh), done
    state = _iterate(cf_step, (b, c, dc, d, dd, d, dd), 5000)
    h, dh = state[5], state[6]
    cpre = np.exp(ca * np.log(cx) - cx - lgamma(ca))
    q_cf = cpre * h
    dq_cf = q_cf * (np.log(cx) - _digamma(ca)) + cpre * dh
    p = np.where(use_series, p_series, 1 - q_cf)
    q = np.where(use_series, 1 - p_series, q_cf)
    dp = np.where(use_series, dp_series, -dq_cf)
    bad = (a < 0) | (x < 0) | np.isnan(a) | np.isnan(x)
    zero_x = x == 0
    inf_x = x == np.inf
    p = np.where(zero_x, 0.0, np.where(inf_x, 1.0, p))
    q = np.where(zero_x, 1.0, np.where(inf_x, 0.0, q))
    dp = np.where(zero_x | inf_x, 0.0, dp)
    zero_a = (a == 0) & (x > 0)
    p, q = np.where(zero_a, 1.0, p), np.where(zero_a, 0.0, q)
    return np.where(bad, np.nan, p), np.where(bad, np.nan, q), np.where(bad, np.nan, dp)


@_float64
def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x) (scipy.special.gammainc)."""
    return _igamma_parts(a, x, False)[0]


@_float64
def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (scipy.special.gammaincc)."""
    return _igamma_parts(a, x, False)[1]


@_float64
def igamma_grad_a(a, x):
    """d/da P(a, x), the derivative of the regularized lower incomplete gamma function in its
    first argument (jax.lax.igamma_grad_a; scipy has none)."""
    return _igamma_parts(a, x, True)[2]


@_float64
def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (scipy.special.betainc): Numerical
    Recipes' continued fraction, on I_{1-x}(b, a) where x is past the mean."""
    flip = x > (a + 1) / (a + b + 2)
    aa, bb = np.where(flip, b, a), np.where(flip, a, b)
    xx = np.where(flip, 1 - x, x)
    qab, qap, qam = aa + bb, aa + 1, aa - 1
    c = np.ones_like(xx)
    d = 1 - qab * xx / qap
    d = 1 / np.where(np.abs(d) < _TINY, _TINY, d)

    def step(state, m):
        c, d, h = state
        m2 = 2 * m
        for num in (m * (bb - m) * xx / ((qam + m2) * (aa + m2)),
                    -(aa + m) * (qab + m) * xx / ((aa + m2) * (qap + m2))):
            d = 1 + num * d
            d = 1 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1 + num / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            delta = d * c
            h = h * delta
        return (c, d, h), np.abs(delta - 1) <= _EPS
    _, _, h = _iterate(step, (c, d, d), 10000)
    with np.errstate(divide="ignore"):
        log_pre = (lgamma(qab) - lgamma(aa) - lgamma(bb) + aa * np.log(xx)
                   + bb * np.log1p(-xx))
    part = np.exp(log_pre) * h / aa
    out = np.where(flip, 1 - part, part)
    out = np.where(x == 0, 0.0, np.where(x == 1, 1.0, out))
    return np.where((a <= 0) | (b <= 0) | (x < 0) | (x > 1) | np.isnan(a + b + x), np.nan, out)


def _bessel_ie(x, order):
    ax = np.abs(x)
    small = ax <= 20
    xs = np.where(small, ax, 0.0)
    # I_v(x) = (x/2)^v sum_k (x^2/4)^k / (k! (k + v)!)
    t = (xs / 2) ** order / math.factorial(order)
    total = t
    for k in range(1, 80):
        t = t * (xs * xs / 4) / (k * (k + order))
        total = total + t
    series = total * np.exp(-xs)
    # Hankel: I_v(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(v) / x^k
    xl = np.where(small, 30.0, ax)
    mu = 4.0 * order * order
    term = np.ones_like(xl)
    acc = term
    for k in range(1, 40):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * xl)
        acc = acc + term
    asym = acc / np.sqrt(2 * np.pi * xl)
    out = np.where(small, series, asym)
    out = np.where(ax == np.inf, 0.0, out)
    return np.where(x < 0, -out, out) if order % 2 else out


@_float64
def i0e(x):
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0
    (scipy.special.i0e)."""
    return _bessel_ie(x, 0)


@_float64
def i1e(x):
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1
    (scipy.special.i1e)."""
    return _bessel_ie(x, 1)


_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


@_float64
def spence(x):
    """Spence's function, integral from 1 to x of log(t) / (1 - t) (scipy.special.spence, on
    the reals: nan below 0)."""
    over2 = x > 2
    z = np.where(over2, 1 / x, x)
    over15 = z > 1.5
    under05 = z < 0.5
    w = np.where(over15, 1 / z - 1, np.where(under05, -z, z - 1))
    y = -w * _polyval(_SPENCE_A, w) / _polyval(_SPENCE_B, w)
    zsafe = np.where(under05 & (z > 0), z, 0.5)
    y = np.where(under05, np.pi ** 2 / 6 - np.log(zsafe) * np.log1p(-zsafe) - y, y)
    lz = np.log(np.where(over2 | over15, z, 1.0))
    y = np.where(over2 | over15, -0.5 * lz * lz - y, y)
    y = np.where(x == 0, np.pi ** 2 / 6, np.where(x == 1, 0.0, y))
    return np.where((x < 0) | np.isnan(x) | (x == np.inf), np.nan, y)
