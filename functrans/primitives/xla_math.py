"""XLA's CPU algorithms for a few elementary functions, written once over an array namespace
(`xp` inside a primitive implementation, `functrans.numpy` where the caller may be traced).

JAX's float results are whatever these algorithms give, not the correctly rounded values
numpy's libm returns: XLA's float64 log1p is a Cephes rational function on |x| < sqrt(2) - 1,
up to 128 ulp from numpy's near the ends of that range, and XLA's compiler fuses each
multiply-add into one singly rounded operation. Its float32 log and exp are Eigen's
polynomials, its float64 log and pow the C library's (numpy's vectorised loops differ by an
ulp), its float64 exp a rational function of its own. Code that must draw JAX's numbers
(functrans.random through the xla_log/xla_exp/xla_pow rows, erf_inv) computes with these;
everything else keeps numpy's functions. Single-precision QR and Cholesky go through scipy's
LAPACK when it is installed, as JAX's do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["fused_multiply_add", "log1p", "erf_float32", "log", "exp", "pow", "scipy_lapack_single"]

# Cephes' log1p on |x| < sqrt(2) - 1: x - x^2/2 + x^3 P(x)/Q(x); coefficients highest first
_LOG1P_P = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0,
            2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
            2.0039553499201281259648e1)
_LOG1P_Q = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1,
            2.2176239823732856465394e2, 3.0909872225312059774938e2, 2.1642788614495947685003e2,
            6.0118660497603843919306e1)
_LOG1P_SMALL = 0.41421356237309504880


# XLA's float32 erf (Eigen's rational interpolant): x P(x^2) / Q(x^2), +-1 beyond the clamp
_ERF32_P = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
            0.18520832239976145, 1.128379143519084)
_ERF32_Q = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
            0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)
_ERF32_CLAMP = 3.832506856900711


def fused_multiply_add(ns: Any, a, b, c):
    """a * b + c rounded once, as a fused multiply-add: for float32 through float64 (the
    product is exact there); for float64 by Dekker's exact product and Knuth's exact sum, the
    error terms added back before the last rounding."""
    dtype = np.dtype(ns.asarray(a).dtype)
    if dtype != np.float64:
        wide = np.dtype(np.float64)
        return (ns.asarray(a).astype(wide) * ns.asarray(b).astype(wide)
                + ns.asarray(c).astype(wide)).astype(dtype)
    b, c = ns.asarray(b).astype(dtype), ns.asarray(c).astype(dtype)
    split = np.float64(2.0**27 + 1)

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi
    (ah, al), (bh, bl) = halves(a), halves(b)
    p = a * b
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # a*b == p + e exactly
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)                       # p + c == s + t exactly
    out = s + (t + e)
    return ns.where(ns.isfinite(out), out, p + c)


def _horner(ns, coeffs, x):
    dtype = np.dtype(ns.asarray(x).dtype)
    acc = ns.zeros_like(x)
    for c in coeffs:
        acc = fused_multiply_add(ns, acc, x, np.asarray(c, dtype))
    return acc


def erf_float32(ns: Any, x):
    """erf of a float32 array as XLA's CPU backend computes it (JAX's float32 erf)."""
    x = ns.asarray(x)
    dtype = np.dtype(np.float32)
    x2 = x * x
    p = _horner(ns, _ERF32_P, x2)
    q = _horner(ns, _ERF32_Q, x2)
    one = ns.where(x < 0, np.asarray(-1, dtype), np.asarray(1, dtype))
    return ns.where(ns.abs(x) >= np.asarray(_ERF32_CLAMP, dtype), one, (x * p) / q)


def log1p(ns: Any, x, log=None):
    """log(1 + x) as XLA's CPU backend computes it: Cephes' rational function for
    |x| < sqrt(2) - 1 (multiply-adds fused), log(1 + x) elsewhere, by `log` (ns.log unless
    given: pass XLA's log, `log` below or its primitive, for JAX's values there too)."""
    log = ns.log if log is None else log
    x = ns.asarray(x)
    dtype = np.dtype(x.dtype)
    one = np.asarray(1, dtype)
    x2 = x * x
    small = _horner(ns, _LOG1P_P, x) / _horner(ns, _LOG1P_Q, x)
    small = fused_multiply_add(ns, np.asarray(-0.5, dtype), x2, (x * x2) * small)
    small = x + small
    small_x = ns.abs(x) < np.asarray(_LOG1P_SMALL, dtype)
    # each branch sees only its own range, so neither warns (log of <= 0 where x is small)
    large = log(ns.where(small_x, one, x + one))
    return ns.where(small_x, small, large)


# --- log and exp as XLA's CPU backend compiles them (numpy arrays only) ------------------------
#
# float32: XLA inlines Eigen's vectorised plog/pexp (Cephes' polynomials, the polynomial for log
# split into three interleaved chains), every multiply-add fused; denormal inputs and results
# read as zero (the CPU runs with flush-to-zero). float64: log and pow call the C library's
# (glibc's) scalar functions, which numpy's vectorised loops differ from by an ulp; exp is XLA's
# own range reduction and Pade-type rational function.

def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


_LOG32_CHAINS = ((0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A), (0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50),
                 (0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))
_EXP32_POLY = (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA)
_LN2_HI32, _LN2_LO32 = _f32(0x3F318000), _f32(0xB95E8083)    # ln 2 = hi + lo
_EXP64_P = (0x3F2089CDD5E44BE8, 0x3F9F06D10CCA2C7E, 0x3FF0000000000000)
_EXP64_Q = (0x3EC92EB6BC365FA0, 0x3F64AE39B508B6C0, 0x3FCD17099887E074, 0x4000000000000000)


def _f64(bits: int) -> np.float64:
    return np.array(bits, np.uint64).view(np.float64)[()]


def _fma32(a, b, c):
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64)).astype(np.float32)


def _flush_denormals(x):
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros((), x.dtype), x), x)


def _libm(fn, *args):
    """fn (a scalar C library function from Python's math) over float64 arrays; NaN where it
    raises (a domain error or an overflow), for the caller to fill with numpy's value."""
    def safe(*a):
        try:
            return fn(*a)
        except (ValueError, OverflowError):
            return math.nan
    return np.frompyfunc(safe, len(args), 1)(*args).astype(np.float64)


def _log32(x):
    f32 = np.float32
    x = _flush_denormals(np.asarray(x, f32))
    bits = np.where(x > 0, x, f32(1)).view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 126).astype(f32)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(f32)   # in [0.5, 1)
    below = m < _f32(0x3F3504F3)                                            # sqrt(1/2)
    e = e - below.astype(f32)
    r = (m - f32(1)) + np.where(below, m, f32(0))
    r2 = r * r
    r3 = r2 * r
    chains = []
    for c0, c1, c2 in _LOG32_CHAINS:
        chains.append(_fma32(_fma32(r, _f32(c0), _f32(c1)), r, _f32(c2)))
    y = _fma32(_fma32(chains[0], r3, chains[1]), r3, chains[2])
    y = _fma32(y, r3, e * _LN2_LO32)
    out = _fma32(e, _LN2_HI32, _fma32(f32(-0.5), r2, r) + y)
    out = np.where(x == 0, f32(-np.inf), np.where(x == np.inf, f32(np.inf), out))
    return np.where((x < 0) | np.isnan(x), f32(np.nan), out)


def _exp32(x):
    f32 = np.float32
    x = np.asarray(x, f32)
    xc = np.clip(x, f32(-87.8), f32(88.8))
    n = np.clip(np.floor(_fma32(xc, _f32(0x3FB8AA3B), f32(0.5))), f32(-127), f32(127))
    r = _fma32(-n, _LN2_LO32, _fma32(-n, _LN2_HI32, xc))
    y = np.full(r.shape, _f32(_EXP32_POLY[0]), f32)
    for c in (*_EXP32_POLY[1:], None):
        y = _fma32(y, r, f32(0.5) if c is None else _f32(c))
    y = _fma32(y, r * r, r) + f32(1)
    scale = np.where(n == -127, f32(0), np.exp2(n.astype(np.float64)).astype(f32))
    return np.where(np.isnan(x), x, _flush_denormals(y * scale))


def _exp64(x):
    f64 = np.float64
    x = np.asarray(x, f64)
    lo, hi = _f64(0xC086232BDD7ABCD2), _f64(0x40862E42FEFA39EF)
    xc = np.clip(x, lo, hi)
    fma = fused_multiply_add
    n = np.floor(fma(np, xc, _f64(0x3FF71547652B82FE), f64(0.5)))
    g = fma(np, -n, _f64(0x3FE62E4000000000), xc)
    g = fma(np, -n, _f64(0x3EB7F7D1CF79ABCA), g)
    g2 = g * g
    p = np.full(g.shape, _f64(_EXP64_P[0]))
    for c in _EXP64_P[1:]:
        p = fma(np, p, g2, _f64(c))
    q = np.full(g.shape, _f64(_EXP64_Q[0]))
    for c in _EXP64_Q[1:]:
        q = fma(np, q, g2, _f64(c))
    pg = p * g
    y = fma(np, pg / (q - pg), f64(2), f64(1))
    k = np.clip(n, -2099, 2099).astype(np.int64)     # 2^k applied as 2^b 2^b 2^b 2^(k - 3b)
    b = k >> 2
    step = np.ldexp(f64(1), b)
    y = y * step * step * step * np.ldexp(f64(1), k - 3 * b)
    y = np.where(x < lo, f64(0), np.where(x > hi, f64(np.inf), y))
    return np.where(np.isnan(x), x, _flush_denormals(y))


def log(x):
    """log of a float32 or float64 numpy array with the values XLA's CPU backend gives."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _log32(x)
    if x.dtype != np.float64:
        return np.log(x)
    x = _flush_denormals(x)   # XLA's CPU reads denormals as zero
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.array(np.log(x))   # a writable array, 0-d included
    ok = np.isfinite(x) & (x > 0)
    if ok.any():
        out[ok] = _libm(math.log, x[ok])
    return out


def pow(x, y):
    """x ** y of float32 or float64 numpy arrays with the values XLA's CPU backend gives: the
    C library's pow (float32: powf, here float64's pow rounded once more, which differs by
    an ulp on about 0.1% of inputs), results below the smallest normal flushed to zero."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    dtype = x.dtype
    if dtype not in (np.float32, np.float64):
        return np.power(x, y)
    with np.errstate(all="ignore"):
        out = np.array(np.power(x.astype(np.float64), y.astype(np.float64)))
    ok = np.isfinite(out) & (out != 0)
    if ok.any():
        exact = _libm(math.pow, x[ok].astype(np.float64), y[ok].astype(np.float64))
        out[ok] = np.where(np.isnan(exact), out[ok], exact)
    out = out.astype(dtype)
    return _flush_denormals(out) if dtype == np.float32 else out


def exp(x):
    """exp of a float32 or float64 numpy array with the values XLA's CPU backend gives."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _exp32(x)
    if x.dtype == np.float64:
        return _exp64(x)
    return np.exp(x)


# --- single-precision LAPACK ------------------------------------------------------------------
#
# JAX calls LAPACK through scipy's bindings. numpy's own LAPACK rounds float32 and complex64
# factorisations differently (its QR's Q agrees in about a quarter of the entries), scipy's gives
# JAX's values exactly; float64 agrees either way. scipy is optional: without it numpy's stays.

def _scipy_linalg():
    try:
        import scipy.linalg
    except ImportError:
        return None
    return scipy.linalg


def scipy_lapack_single(name: str, a, **kwargs):
    """scipy.linalg.<name>(matrix, **kwargs) over the leading axes of a float32/complex64 `a`
    (JAX's values); None for other dtypes, without scipy, or where scipy raises (the caller
    then uses numpy's)."""
    a = np.asarray(a)
    linalg = _scipy_linalg() if a.dtype in (np.float32, np.complex64) else None
    if linalg is None:
        return None
    fn = getattr(linalg, name)
    mats = a.reshape(-1, *a.shape[-2:])
    try:
        outs = [fn(m, check_finite=False, **kwargs) for m in mats]
    except (ValueError, np.linalg.LinAlgError):
        return None
    if not outs:
        return None
    if isinstance(outs[0], tuple):
        return [np.stack([o[i] for o in outs]).reshape(*a.shape[:-2], *outs[0][i].shape)
                for i in range(len(outs[0]))]
    return np.stack(outs).reshape(*a.shape[:-2], *outs[0].shape)
