"""Operators and array methods of tracers, installed into the core's Tracer class."""

from __future__ import annotations

from functrans.core.trace import install_array_methods
from functrans.numpy import _elementwise as E
from functrans.numpy import _indexing as I
from functrans.numpy import _linalg as L
from functrans.numpy import _reductions as R
from functrans.numpy import _shape as S


def _swap(f):
    return lambda self, other: f(other, self)


install_array_methods({
    "__neg__": E.negative, "__pos__": lambda self: self,
    "__add__": E.add, "__radd__": _swap(E.add),
    "__sub__": E.subtract, "__rsub__": _swap(E.subtract),
    "__mul__": E.multiply, "__rmul__": _swap(E.multiply),
    "__truediv__": E.true_divide, "__rtruediv__": _swap(E.true_divide),
    "__matmul__": L.matmul, "__rmatmul__": _swap(L.matmul),
    "__lt__": E.less, "__le__": E.less_equal, "__gt__": E.greater, "__ge__": E.greater_equal,
    "__eq__": E.equal, "__ne__": E.not_equal,
    "__getitem__": I.getitem,
    "T": property(lambda self: S.transpose(self)),
    "reshape": lambda self, *shape: S.reshape(self, shape[0] if len(shape) == 1 else shape),
    "sum": lambda self, axis=None, keepdims=False: R.sum(self, axis, keepdims=keepdims),
    "mean": lambda self, axis=None, keepdims=False: R.mean(self, axis, keepdims=keepdims),
})
