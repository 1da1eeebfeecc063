"""`Array`: the concrete array functrans hands back, a numpy ndarray that also takes traced
indices and has JAX's `.at[...]`.

Eager functrans.numpy calls and the transforms (`jit`, `grad`, `vmap`, loops, ...) return
their arrays as `Array`, a subclass of `numpy.ndarray` that adds no data, so everything numpy
does with a plain array it does with one (`isinstance(x, np.ndarray)`, `np.asarray(x)`,
printing, pickling, `.tolist()`, numpy functions). What a plain ndarray cannot do, and JAX's
arrays can, is be indexed by a traced value: `table[i]` with `i` traced by `jit`, `vmap`,
`grad` or a loop body. `Array.__getitem__` sends such an index to functrans.numpy's indexing
(installed by functrans.numpy with `install_concrete_methods`, as the core knows no
primitive); any other index is numpy's own.

numpy ufuncs on an `Array` return an `Array` (numpy's rule for subclasses) but a numpy scalar
where numpy returns one (`np.sum(x)` is a float64, not a 0-d array). See docs/arrays.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrans.core.avals import CONCRETE_ARRAY_TYPES
from functrans.core.trace import Tracer

_ndarray = np.ndarray
_nd_getitem = np.ndarray.__getitem__
_nd_repr = np.ndarray.__repr__


class Array(np.ndarray):
    """A numpy array made by functrans: numpy's in every respect, and it also accepts traced
    indices and has `.at[...]` (functional updates), as JAX's arrays do.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> table = fnp.arange(6.0) * 10
    >>> float(ft.jit(lambda i: table[i])(2))
    20.0
    >>> table.at[1].set(-1.0)
    array([ 0., -1., 20., 30., 40., 50.])
    """

    __slots__ = ()

    def __getitem__(self, idx):
        t = type(idx)
        if t is int or t is slice or t is _ndarray:  # the common concrete keys, at C speed
            return _nd_getitem(self, idx)
        if _holds_tracer(idx):
            return _traced_getitem[0](self, idx)
        return _nd_getitem(self, idx)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # numpy's results for subclasses, except a numpy scalar where numpy gives one to a
        # plain array (np.sum(x), x.max()): a 0-d Array would print and compare differently
        if return_scalar:
            return arr[()]
        return arr if type(arr) is Array else arr.view(Array)

    def __repr__(self):
        # numpy's text (`array([1., 2.])`), so printed results, doctests and logs read as
        # they did when functrans returned plain arrays
        return _nd_repr(self.view(_ndarray))

    # arithmetic operators: numpy's ufuncs on plain views (see _operator)

    def block_until_ready(self) -> "Array":
        """The array itself: functrans computes synchronously on the CPU (JAX waits here)."""
        return self


CONCRETE_ARRAY_TYPES.add(Array)


_view = np.ndarray.view
# operands numpy's operators take directly; anything else (a tracer, a list, another
# subclass) goes to ndarray's own operator, which defers to a tracer's __array_ufunc__
_DIRECT = {_ndarray, float, int, bool, np.float64, np.float32, np.int64, np.bool_}


def _operator(ufunc, name: str, reflected: bool):
    """The operator `name` as numpy's `ufunc` run on plain views, its result an Array: numpy's
    own operator on a subclass costs about 0.6 us more per call (override checks and the
    wrap), this about 0.3."""
    fallback = getattr(_ndarray, name)

    def op(self, other):
        t = type(other)
        if t is Array:
            other = _view(other, _ndarray)
        elif t not in _DIRECT:
            return fallback(self, other)
        out = ufunc(other, _view(self, _ndarray)) if reflected else \
            ufunc(_view(self, _ndarray), other)
        try:
            return _view(out, Array)
        except TypeError:  # a numpy scalar: numpy's result for 0-d operands
            return out
    op.__name__ = op.__qualname__ = name
    return op


for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                      ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul)]:
    setattr(Array, f"__{_name}__", _operator(_ufunc, f"__{_name}__", False))
    setattr(Array, f"__r{_name}__", _operator(_ufunc, f"__r{_name}__", True))
for _name, _ufunc in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                      ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Array, f"__{_name}__", _operator(_ufunc, f"__{_name}__", False))
del _name, _ufunc


def _holds_tracer(idx) -> bool:
    if isinstance(idx, Tracer):
        return True
    if type(idx) is tuple or type(idx) is list:
        return any(_holds_tracer(i) for i in idx)
    return False


def _no_traced_indexing(x, idx):
    raise TypeError("functrans.numpy is not imported, so an Array cannot be indexed by a "
                    "traced value. Import functrans.numpy (import functrans.numpy as fnp).")


# functrans.numpy's getitem, installed when it is imported
_traced_getitem: list = [_no_traced_indexing]


def install_concrete_methods(getitem, methods: dict[str, Any]) -> None:
    """Give `Array` functrans.numpy's indexing for traced keys and further methods or
    properties (`at`, `device`); called once by functrans.numpy."""
    _traced_getitem[0] = getitem
    for name, fn in methods.items():
        setattr(Array, name, fn)


def as_array(x):
    """`x` as an `Array` when it is a plain numpy array (a view: no copy); anything else
    (a tracer, a numpy scalar, an Array, another backend's array) unchanged."""
    return x.view(Array) if type(x) is _ndarray else x


def as_arrays(out):
    """`as_array` over a function's result: an array, or a tuple or list of them (numpy's
    multi-result functions; named tuples keep their type)."""
    t = type(out)
    if t is _ndarray:
        return out.view(Array)
    if t is tuple or t is list:
        return t(as_array(o) for o in out)
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # a named tuple (eigh, svd, ...)
        return t(*(as_array(o) for o in out))
    return out


def as_plain(x):
    """`x` as a plain ndarray view when it is an `Array`: numpy's ufuncs run faster on plain
    arrays (a subclass costs an override check and a wrap per call)."""
    return x.view(_ndarray) if type(x) is Array else x
