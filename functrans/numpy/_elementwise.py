"""numpy's elementwise functions over the elementwise primitives."""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray, promote, to_float
from functrans.primitives import elementwise as E

__all__ = ['sin', 'cos', 'exp', 'log', 'tanh', 'sqrt', 'negative', 'add', 'subtract', 'multiply', 'true_divide', 'divide', 'less', 'less_equal', 'greater', 'greater_equal', 'equal', 'not_equal', 'where']


def _unary_float(prim):
    def fn(x):
        return prim.bind(to_float(x))
    fn.__name__ = prim.name
    return fn


sin = _unary_float(E.sin_p)
cos = _unary_float(E.cos_p)
exp = _unary_float(E.exp_p)
log = _unary_float(E.log_p)
tanh = _unary_float(E.tanh_p)
sqrt = _unary_float(E.sqrt_p)


def negative(x):
    return E.neg_p.bind(asarray(x))


def add(x, y):
    return E.add_p.bind(*promote(x, y))


def subtract(x, y):
    return E.sub_p.bind(*promote(x, y))


def multiply(x, y):
    return E.mul_p.bind(*promote(x, y))


def true_divide(x, y):
    x, y = promote(x, y)
    if not np.issubdtype(x.dtype, np.inexact):
        x, y = promote(x, y, dtype=np.float64)
    return E.div_p.bind(x, y)


divide = true_divide


def _comparison(prim, name):
    def fn(x, y):
        return prim.bind(*promote(x, y))
    fn.__name__ = name
    return fn


less = _comparison(E.lt_p, "less")
less_equal = _comparison(E.le_p, "less_equal")
greater = _comparison(E.gt_p, "greater")
greater_equal = _comparison(E.ge_p, "greater_equal")
equal = _comparison(E.eq_p, "equal")
not_equal = _comparison(E.ne_p, "not_equal")


def where(condition, x, y):
    c = asarray(condition)
    if c.dtype != np.bool_:
        c = not_equal(c, 0)
    x, y = promote(x, y)
    return E.select_p.bind(c, x, y)
