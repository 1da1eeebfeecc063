"""Rows of the binary math functions whose derivative functrans and PyTorch state differently at
special points: xlogy, hypot, logaddexp (functrans.numpy's logaddexp2 is logaddexp of scaled
operands), fmax, fmin and copysign. Each row's `jvp` is the functional API's derivative (JAX's
formula, with the departures noted at each row), its `torch_jvp` PyTorch's (derivatives.yaml);
docs/conventions.md lists the points where they differ."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, shape_of
from functrans.core.symbolic import Zero
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.broadcasting import REAL, REAL_FLOAT, broadcasting_batch, nary_aval
from functrans.primitives.elementwise import (add, and_, binary_jvp, div, eq, exp, ge, gt,
                                              is_finite, le, log, lt, masked_jvp, mul, ne, neg,
                                              not_, or_, select, signbit, sub)
from functrans.primitives.elementwise import max as maximum
from functrans.primitives.layout import broadcast_to
from functrans.primitives.registry import define


def _c(x, v):
    return np.asarray(v, x.dtype)


def _define(name, impl, torch_name, kinds=REAL_FLOAT):
    prim = define(name, impl=impl, abstract=nary_aval(name, kinds=kinds),
                  props=("elementwise",), torch_name=torch_name)
    prim.rules["batch"] = broadcasting_batch(prim)
    return prim


def _row(name, impl, dx, dy, torch_dx, torch_dy, torch_name):
    """A binary elementwise row; dx(x, y, out) and dy give each operand's derivative factor
    under functrans's convention, torch_dx and torch_dy under PyTorch's."""
    prim = _define(name, impl, torch_name)
    prim.rules.update(jvp=binary_jvp(prim, dx, dy),
                      torch_jvp=binary_jvp(prim, torch_dx, torch_dy))
    return prim


# xlogy: x log(y), 0 where x == 0 unless y is NaN (scipy's, JAX's and PyTorch's value).
# functrans's derivatives are JAX's, log(y) in x and x / y in y, except where x == 0 and y is
# not a positive finite number: both are 0 there (as if y were 1; JAX gives inf or nan).
# PyTorch's xlogy_backward: log(y) in x, 0 where x == 0 and y <= 0; x / y in y, everywhere.
def _xlogy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where((x == 0) & (y == y), _c(x, 0), x * xp.log(y))


def _xlogy_no_log(x, y):
    """Where functrans's derivatives take y as 1: x == 0 and y not positive and finite."""
    return and_(eq(x, _c(x, 0)), not_(and_(gt(y, _c(y, 0)), is_finite(y))))


def _xlogy_dx(x, y, out):
    return log(select(_xlogy_no_log(x, y), _c(y, 1), y))


def _xlogy_dy(x, y, out):
    no_log = _xlogy_no_log(x, y)
    return select(no_log, _c(x, 0), div(x, select(no_log, _c(y, 1), y)))


def _xlogy_dx_torch(x, y, out):
    return select(and_(eq(x, _c(x, 0)), le(y, _c(y, 0))), _c(y, 0), log(y))


xlogy_p = _row("xlogy", _xlogy_impl, _xlogy_dx, _xlogy_dy,
               _xlogy_dx_torch, lambda x, y, out: div(x, y), "XlogyBackward0")


# logaddexp: log(exp(x) + exp(y)) without overflow, as m + log1p(s) with m = max(x, y) and
# 1 + s = exp(x - m) + exp(y - m) (s summed as expm1 of the larger gap plus exp of the other);
# an infinite max is the answer itself (inf, or -inf from -inf and -inf).
# functrans's derivatives are the softmax weights exp(x - m) / (1 + s), 1/2 each at a tie; where
# the max is infinite, max's (1 to the infinite side, 1/2 each at a tie; JAX 0.10 gives 1 and 1
# at x = y = inf, and exp(y) to y at x = inf). PyTorch's logaddexp_backward:
# 1 / (1 + exp(y - x)) in x, nan where x = y = +-inf.
def _logaddexp_impl(x, y):
    top = xp.maximum(x, y)
    finite = xp.isfinite(top) | (top != top)
    zero = _c(top, 0)
    m = xp.where(finite, top, zero)
    dx, dy = xp.where(finite, x - m, zero), xp.where(finite, y - m, zero)
    with np.errstate(over="ignore", invalid="ignore"):
        s = xp.where(x >= y, xp.expm1(dx) + xp.exp(dy), xp.exp(dx) + xp.expm1(dy))
        return xp.where(finite, m + xp.log1p(s), top)


def _logaddexp_d(x, y, out):
    top = maximum(x, y)
    hi = stop_gradient_p.bind(top)
    finite = or_(is_finite(hi), ne(hi, hi))
    zero = _c(hi, 0)
    m = select(finite, hi, zero)
    ex, ey = (exp(sub(select(finite, v, zero), m)) for v in (x, y))
    # max's derivative where the max is infinite: 1 where x is it, 1/2 at a tie
    at_top = select(eq(x, top), select(eq(y, top), _c(hi, 0.5), _c(hi, 1)), zero)
    return select(finite, div(ex, add(ex, ey)), at_top)


def _logaddexp_d_torch(x, y, out):
    return div(_c(x, 1), add(_c(x, 1), exp(sub(y, x))))


logaddexp_p = _row("logaddexp", _logaddexp_impl, _logaddexp_d,
                   lambda x, y, out: _logaddexp_d(y, x, out), _logaddexp_d_torch,
                   lambda x, y, out: _logaddexp_d_torch(y, x, out), "LogaddexpBackward0")


# hypot: sqrt(x^2 + y^2) without overflow, big * sqrt(1 + (small / big)^2) with |x| and |y|
# ordered by one comparison (inf where either is infinite, as numpy). functrans's derivatives
# are x / hypot and y / hypot, exact to every order at x = y as well (JAX's max and min split
# the second derivative there); at the origin the bigger operand (x at a tie) takes
# abs's derivative, 1 (JAX: 1/2 each), and where an operand is infinite both are nan (as JAX).
# PyTorch's hypot_backward: x / hypot and y / hypot everywhere, so nan at the origin, and 0 to
# a finite operand beside an infinite one.
def _hypot_impl(x, y):
    x, y = xp.abs(x), xp.abs(y)
    x_big = x >= y
    big, small = xp.where(x_big, x, y), xp.where(x_big, y, x)
    one = _c(x, 1)
    big_is_0 = big == 0
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = small / xp.where(big_is_0, one, big)
        out = xp.where(big_is_0, big, big * xp.sqrt(one + ratio * ratio))
    return xp.where((x == np.inf) | (y == np.inf), _c(x, np.inf), out)


def _hypot_d(first):
    def d(x, y, out):
        v, w = (x, y) if first else (y, x)
        zero = eq(out, _c(out, 0))
        # at the origin: 1 to the operand abs(x) >= abs(y) picks (x), 0 to the other
        origin = _c(out, 1 if first else 0)
        finite = select(zero, origin, div(v, select(zero, _c(out, 1), out)))
        return select(eq(out, _c(out, np.inf)), _c(out, np.nan), finite)
    return d


hypot_p = _row("hypot", _hypot_impl, _hypot_d(True), _hypot_d(False),
               lambda x, y, out: div(x, out), lambda x, y, out: div(y, out), "HypotBackward0")


# fmax, fmin: the larger (smaller) operand, a NaN losing to a number; on a tie, x (numpy's and
# PyTorch's value: fmax(-0.0, 0.0) is -0.0). Each operand's derivative is 1 where it is taken
# and 0 elsewhere; on a tie JAX (jnp.fmax: x where x > y or y is NaN) gives it wholly to y,
# PyTorch (fmax's backward: x >= y or y is NaN) wholly to x.
def _fm_row(name, impl, beats, torch_name):
    """fmax or fmin, where `beats(x, y)` says x is strictly larger (smaller)."""
    def x_taken(x, y, ties):  # where x's derivative is 1: it wins, y is NaN, or (ties) x == y
        taken = or_(beats(x, y), ne(y, y))
        return or_(taken, eq(x, y)) if ties else taken

    prim = _define(name, impl, torch_name, kinds=REAL)  # PyTorch's fmax takes integers too
    prim.rules.update(
        jvp=masked_jvp(prim, lambda x, y: x_taken(x, y, False),
                       lambda x, y: not_(x_taken(x, y, False))),
        torch_jvp=masked_jvp(prim, lambda x, y: x_taken(x, y, True),
                             lambda x, y: not_(x_taken(x, y, True))))
    return prim


fmax_p = _fm_row("fmax", lambda x, y: xp.where((x >= y) | (y != y), x, y), gt, "FmaxBackward0")
fmin_p = _fm_row("fmin", lambda x, y: xp.where((x <= y) | (y != y), x, y), lt, "FminBackward0")


# copysign: |x| with the sign bit of y. The derivative in y is zero under both conventions (no
# tangent flows); in x, JAX's (jnp.copysign) is abs's, +1 at 0 (-1 at NaN), times the sign
# taken, PyTorch's copysign_tensor_self_backward result / x, 0 at x = 0 (and NaN at NaN)
def _copysign_impl(x, y):
    mag = xp.abs(x)
    return xp.where(xp.signbit(y), -mag, mag)


def _x_only_jvp(prim, dx):
    def jvp(primals, tangents):
        x, y = primals
        tx = tangents[0]
        out = prim.bind(x, y)
        if type(tx) is Zero:  # a tangent in y alone: none flows
            return out, Zero(ShapedArray(shape_of(out), out.dtype))
        return out, broadcast_to(mul(tx, dx(x, y, out)), shape_of(out))
    return jvp


def _copysign_dx(x, y, out):
    abs_d = select(ge(x, _c(x, 0)), _c(x, 1), _c(x, -1))
    return select(signbit(y), neg(abs_d), abs_d)


def _copysign_dx_torch(x, y, out):
    # result / x masked to 0 at x = 0, where its own derivative still meets 0 / 0 (PyTorch's
    # masked_fill_ on the quotient: a second derivative of nan there)
    return select(eq(x, _c(x, 0)), _c(x, 0), div(out, x))


copysign_p = _define("copysign", _copysign_impl, "CopysignBackward0")
copysign_p.rules.update(jvp=_x_only_jvp(copysign_p, _copysign_dx),
                        torch_jvp=_x_only_jvp(copysign_p, _copysign_dx_torch))


def xlogy(x, y):
    """Bind the xlogy row: x log(y), 0 where x == 0 unless y is NaN."""
    return xlogy_p.bind(x, y)


def hypot(x, y):
    """Bind the hypot row: sqrt(x^2 + y^2) without overflow."""
    return hypot_p.bind(x, y)


def fmax(x, y):
    """Bind the fmax row: the larger operand, a NaN losing to a number."""
    return fmax_p.bind(x, y)


def fmin(x, y):
    """Bind the fmin row: the smaller operand, a NaN losing to a number."""
    return fmin_p.bind(x, y)


def copysign(x, y):
    """Bind the copysign row: |x| with the sign bit of y."""
    return copysign_p.bind(x, y)


def logaddexp(x, y):
    """Bind the logaddexp row: log(exp(x) + exp(y)) without overflow."""
    return logaddexp_p.bind(x, y)
