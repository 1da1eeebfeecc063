"""XLA's CPU algorithms for a few elementary functions, written once over an array namespace
(`xp` inside a primitive implementation, `functrans.numpy` where the caller may be traced).

JAX's float results are whatever these algorithms give, not the correctly rounded values
numpy's libm returns: XLA's float64 log1p is a Cephes rational function on |x| < sqrt(2) - 1,
up to 128 ulp from numpy's near the ends of that range, and XLA's compiler fuses each
multiply-add into one singly rounded operation. Code that must draw JAX's numbers
(functrans.random, erf_inv) computes with these; everything else keeps numpy's functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fused_multiply_add", "log1p", "erf_float32"]

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


def log1p(ns: Any, x):
    """log(1 + x) as XLA's CPU backend computes it: Cephes' rational function for
    |x| < sqrt(2) - 1 (multiply-adds fused), log(1 + x) elsewhere."""
    x = ns.asarray(x)
    dtype = np.dtype(x.dtype)
    one = np.asarray(1, dtype)
    x2 = x * x
    small = _horner(ns, _LOG1P_P, x) / _horner(ns, _LOG1P_Q, x)
    small = fused_multiply_add(ns, np.asarray(-0.5, dtype), x2, (x * x2) * small)
    small = x + small
    small_x = ns.abs(x) < np.asarray(_LOG1P_SMALL, dtype)
    # each branch sees only its own range, so neither warns (log of <= 0 where x is small)
    large = ns.log(ns.where(small_x, one, x + one))
    return ns.where(small_x, small, large)
