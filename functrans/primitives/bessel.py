"""Bessel functions of real order and argument: J and Y (first and second kind), I and K
(modified), and I scaled by exp(-|x|), with scipy.special's values (scipy is needed for them:
without it the rows raise DTypeError naming the fix).

Derivatives in x come from the recurrences (DLMF 10.6.1, 10.29.1), written in the rows
themselves so they nest to any order:
  J_v' = (J_{v-1} - J_{v+1}) / 2        Y_v' = (Y_{v-1} - Y_{v+1}) / 2
  I_v' = (I_{v-1} + I_{v+1}) / 2        K_v' = -(K_{v-1} + K_{v+1}) / 2
  ive_v' = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v
  j0' = -j1, j1' = (j0 - J_2) / 2, and y0, y1 alike (J_{-1} = -J_1, Y_{-1} = -Y_1).
The order v has no derivative (scipy, JAX and autograd define none): a nonzero tangent for it
raises ArgumentError naming the argument.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.primitives import special_math
from functrans.primitives.broadcasting import REAL_FLOAT
from functrans.primitives.elementwise import add, mul, neg, sign, sub, unary
from functrans.primitives.special import nary_row, no_derivative

__all__ = ["j0", "j1", "y0", "y1", "jv", "yv", "iv", "ive", "kv"]


def _impl(name):
    def impl(*args):
        args = [xp.asarray(a) for a in args]
        return special_math.scipy_only(name, *args, without="the Bessel functions other "
                                       "than i0, i0e, i1 and i1e are not available")
    impl.__name__ = f"{name}_impl"
    return impl


def _c(x, v):
    return np.asarray(v, x.dtype)


def _half(x):
    return mul(x, np.asarray(0.5, x.dtype))


_ORDER = "the order is a parameter of the family; scipy, JAX and autograd define no " \
         "derivative in it"

j0_p = unary("j0", _impl("j0"), lambda x, y: neg(j1(x)), kinds=REAL_FLOAT)
j1_p = unary("j1", _impl("j1"), lambda x, y: _half(sub(j0(x), jv(_c(x, 2), x))),
             kinds=REAL_FLOAT)
y0_p = unary("y0", _impl("y0"), lambda x, y: neg(y1(x)), kinds=REAL_FLOAT)
y1_p = unary("y1", _impl("y1"), lambda x, y: _half(sub(y0(x), yv(_c(x, 2), x))),
             kinds=REAL_FLOAT)


def _order_row(name, deriv):
    return nary_row(name, _impl(name), no_derivative(name, "v", _ORDER), deriv)


def _shifted(fn, v, x):
    """fn(v - 1, x) and fn(v + 1, x)."""
    one = _c(v, 1)
    return fn(sub(v, one), x), fn(add(v, one), x)


jv_p = _order_row("jv", lambda v, x, y: _half(sub(*_shifted(jv, v, x))))
yv_p = _order_row("yv", lambda v, x, y: _half(sub(*_shifted(yv, v, x))))
iv_p = _order_row("iv", lambda v, x, y: _half(add(*_shifted(iv, v, x))))
kv_p = _order_row("kv", lambda v, x, y: neg(_half(add(*_shifted(kv, v, x)))))
ive_p = _order_row("ive", lambda v, x, y: sub(_half(add(*_shifted(ive, v, x))),
                                               mul(sign(x), y)))

# rows built by elementwise's family helpers name their module in errors: this one
for _prim in (j0_p, j1_p, y0_p, y1_p, jv_p, yv_p, iv_p, kv_p, ive_p):
    _prim.module = __name__


def j0(x):
    """Apply the `j0` primitive: the Bessel function J_0."""
    return j0_p.bind(x)


def j1(x):
    """Apply the `j1` primitive: the Bessel function J_1."""
    return j1_p.bind(x)


def y0(x):
    """Apply the `y0` primitive: the Bessel function Y_0."""
    return y0_p.bind(x)


def y1(x):
    """Apply the `y1` primitive: the Bessel function Y_1."""
    return y1_p.bind(x)


def jv(v, x):
    """Apply the `jv` primitive: J_v(x)."""
    return jv_p.bind(v, x)


def yv(v, x):
    """Apply the `yv` primitive: Y_v(x)."""
    return yv_p.bind(v, x)


def iv(v, x):
    """Apply the `iv` primitive: I_v(x)."""
    return iv_p.bind(v, x)


def ive(v, x):
    """Apply the `ive` primitive: I_v(x) exp(-|x|)."""
    return ive_p.bind(v, x)


def kv(v, x):
    """Apply the `kv` primitive: K_v(x)."""
    return kv_p.bind(v, x)
