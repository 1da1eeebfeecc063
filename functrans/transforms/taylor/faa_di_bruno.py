"""Elementwise maps in one varying operand: Faa di Bruno's formula.

For y = f(x) pointwise and an input curve with derivative terms x_1..x_K,

    y_k = sum over partitions m of k (m_i parts of size i) of
          k! / prod_i (m_i! i!^m_i) * f^(|m|)(x_0) * prod_i x_i^m_i

The scalar derivatives f^(j)(x_0) come from the row's JVP (the generic rule along a unit
series), computed once on the primal's shape; the constant of each partition is folded into
them there, and each monomial prod_i x_i^m_i is one product of a smaller one, shared between
orders, so a term costs one product and one sum per partition and never a scaling pass over
the (often much larger) series.
"""

from __future__ import annotations

import functools
from math import factorial

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import add, mul
from functrans.primitives.layout import broadcast_to


@functools.lru_cache(maxsize=64)      # one entry per order asked for
def partitions(k: int) -> tuple:
    """The partitions of k as (exponents m_1..m_k, number of parts, Faa di Bruno constant)."""
    out = []

    def rec(n, largest, parts):
        if n == 0:
            m = [0] * k
            for p in parts:
                m[p - 1] += 1
            c = factorial(k)
            for i, e in enumerate(m, 1):
                c //= factorial(e) * factorial(i) ** e
            out.append((tuple(m), len(parts), c))
            return
        for p in range(min(n, largest), 0, -1):
            rec(n - p, p, parts + [p])

    rec(k, k, [])
    return tuple(out)


class Monomials:
    """prod_i x_i^m_i from the terms x_1.., each built as one product of a cached smaller
    one; None when a factor is known zero."""

    def __init__(self, terms):
        self.xs = [None if t is None or type(t) is Zero else t for t in terms]
        self.cache = {}

    def get(self, m):
        m = tuple(m) + (0,) * (len(self.xs) - len(m))
        hit = self.cache.get(m, False)
        if hit is not False:
            return hit
        i = max(j for j, e in enumerate(m) if e)
        x = self.xs[i]
        if x is None:
            val = None
        elif sum(m) == 1:
            val = x
        else:
            rest = self.get(m[:i] + (m[i] - 1,) + m[i + 1:])
            val = None if rest is None else mul(rest, x)
        self.cache[m] = val
        return val


class ScaledDerivatives:
    """c * f^(j), cached: the partition constants are applied on the derivatives' shape."""

    def __init__(self, fs):
        self.fs = fs
        self.cache = {}

    def get(self, j, c):
        key = (j, c)
        if key not in self.cache:
            f = self.fs[j - 1]
            self.cache[key] = None if type(f) is Zero else (
                f if c == 1 else mul(f, np.array(c, get_aval(f).dtype)))
        return self.cache[key]


def term(k, fs: ScaledDerivatives, mono: Monomials, out_aval, skip_top=False):
    """y_k (Zero when every product is known zero); `skip_top` leaves out the partition with
    x_k itself (f' x_k, added by the caller)."""
    acc = None
    for m, j, c in partitions(k):
        if skip_top and m[k - 1]:
            continue
        x = mono.get(m)
        f = fs.get(j, c)
        if x is None or f is None:
            continue
        p = mul(f, x)
        acc = p if acc is None else add(acc, p)
    if acc is None:
        return Zero(out_aval)
    return broadcast_to(acc, out_aval.shape) if get_aval(acc).shape != out_aval.shape else acc


def derivatives(prim, params, primals, i: int, order: int):
    """f^(1..order)(x_0) of p in its operand i (the others fixed), on the output's shape."""
    from functrans.transforms.taylor.rules import generic_rule
    x = primals[i]
    aval = get_aval(x)
    unit = (broadcast_to(np.ones((), aval.dtype), aval.shape),
            *(Zero(aval) for _ in range(order - 1)))
    series = [unit if j == i else tuple(Zero(get_aval(p)) for _ in range(order))
              for j, p in enumerate(primals)]
    y, fs = generic_rule(prim, primals, series, **params)
    return y, list(fs)


def real_operand(x) -> bool:
    """Whether Faa di Bruno applies in operand x: scalar derivatives along the real line
    describe every curve only in a real operand (a complex one may vary in any direction of
    the plane, where |z| or conj(z) have no single derivative); complex operands take the
    generic rule, which follows the row's JVP."""
    return get_aval(x).dtype.kind == "f"


def elementwise_rule(prim, primals, series, **params):
    """Taylor rule of an elementwise primitive varying in one operand."""
    i = next(j for j, s in enumerate(series) if any(type(t) is not Zero for t in s))
    order = len(series[i])
    y, fs = derivatives(prim, params, primals, i, order)
    scaled, mono = ScaledDerivatives(fs), Monomials(series[i])
    aval = get_aval(y)
    return y, tuple(term(k, scaled, mono, aval) for k in range(1, order + 1))
