"""Elementwise maps in one varying operand: Faa di Bruno's formula.

For y = f(x) pointwise and an input curve with derivative terms x_1..x_K,

    y_k = sum_j f^(j)(x_0) B_(k,j)(x_1, .., x_(k-j+1))

with B the partial Bell polynomials (B_(n,k) = sum_i C(n-1, i-1) x_i B_(n-i,k-1)). The scalar
derivatives f^(j)(x_0) come from the row's JVP (the generic rule along a unit series), computed
once on the primal's shape, so the work per direction is a few products per order, where the
generic rule would push every direction through the JVP program order by order.
"""

from __future__ import annotations

from math import comb

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import add, mul
from functrans.primitives.layout import broadcast_to


def _scaled(x, c):
    return x if c == 1 else mul(x, np.array(c, get_aval(x).dtype))


def _sum(a, b):
    if a is None:
        return b
    return a if b is None else add(a, b)


def _prod(a, b):
    return None if a is None or b is None else mul(a, b)


def bell(terms, order: int):
    """B[n][k] for 1 <= k <= n <= order from terms x_1..x_order (None or Zero: zero); None
    marks a known-zero polynomial."""
    xs = [None if t is None or type(t) is Zero else t for t in terms]
    b = [[None] * (order + 1) for _ in range(order + 1)]
    for n in range(1, order + 1):
        b[n][1] = xs[n - 1]
        for k in range(2, n + 1):
            acc = None
            for i in range(1, n - k + 2):
                if k - 1 == 1:
                    prev = xs[n - i - 1]
                else:
                    prev = b[n - i][k - 1]
                acc = _sum(acc, _prod(_scaled(xs[i - 1], comb(n - 1, i - 1))
                                      if xs[i - 1] is not None else None, prev))
            b[n][k] = acc
    return b


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


def combine(fs, b, k: int, out_aval):
    """y_k = sum_j f_j B[k][j]; Zero when every product is known zero."""
    acc = None
    for j in range(1, k + 1):
        if b[k][j] is None or type(fs[j - 1]) is Zero:
            continue
        acc = _sum(acc, mul(fs[j - 1], b[k][j]))
    if acc is None:
        return Zero(out_aval)
    return broadcast_to(acc, out_aval.shape) if get_aval(acc).shape != out_aval.shape else acc


def elementwise_rule(prim, primals, series, **params):
    """Taylor rule of an elementwise primitive varying in one operand."""
    i = next(j for j, s in enumerate(series) if any(type(t) is not Zero for t in s))
    order = len(series[i])
    y, fs = derivatives(prim, params, primals, i, order)
    b = bell(series[i], order)
    aval = get_aval(y)
    return y, tuple(combine(fs, b, k, aval) for k in range(1, order + 1))
