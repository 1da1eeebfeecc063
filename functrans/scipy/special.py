"""scipy.special functions over functrans primitives: logsumexp, softmax, log_softmax, expit,
logit, xlogy. Works on arrays eagerly and on tracers alike; scipy itself is not needed.

>>> import numpy as np
>>> from functrans.scipy.special import logsumexp
>>> float(logsumexp(np.array([1000.0, 1000.0])))  # no overflow: the max is shifted out
1000.6931471805599
"""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray, promote
from functrans.numpy._reductions import normalize_axes
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.shape_ops import broadcast_to, reshape

__all__ = ["logsumexp", "softmax", "log_softmax", "expit", "logit", "xlogy"]


def _inexact(*xs):
    """Operands promoted together, ints and bools going to float64 (scipy's rule)."""
    xs = [asarray(x) for x in xs]
    dtype = np.result_type(*[x.dtype for x in xs])
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return promote(*xs, dtype=dtype)


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
    """x * log(y), and 0 where x == 0 (even where y is 0). Derivatives are log(y) in x and
    x / y in y, as in JAX, except where x == 0 and y is not a positive finite number: both
    are 0 there (JAX gives inf or nan)."""
    x, y = _inexact(x, y)
    zero = _const(x, 0)
    x_zero = E.eq_p.bind(x, zero)
    y_ok = _and(E.gt_p.bind(y, _const(y, 0)), _isfinite(y))
    # where x == 0 and log(y) is not finite, use y = 1: x * log(1) = 0 with finite derivatives
    y_safe = E.select(_and(x_zero, _not(y_ok)), _const(y, 1), y)
    return E.mul(x, E.log_p.bind(y_safe))
