"""Array creation: array, zeros, ones, full, arange, linspace, eye, ...

These return concrete numpy arrays (constants to any trace). The `*_like` functions read only
the shape and dtype of their argument, so on a tracer they return a broadcast constant (a
`broadcast_in_dim` of a scalar when staged). `linspace` with traced endpoints is computed with
primitives, so it is differentiable in `start` and `stop`.
"""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.trace import Tracer
from functrans.errors import ConcretizationTypeError
from functrans.numpy._core import asarray
from functrans.primitives.shape_ops import broadcast_to

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity"]


def array(object, dtype=None, *, copy=True, ndmin=0):
    """numpy.array: a list containing tracers stacks them into a traced array."""
    out = asarray(object, dtype)
    if isinstance(out, np.ndarray) and copy and out is object:
        out = out.copy()
    if out.ndim < ndmin:
        from functrans.primitives.shape_ops import reshape
        out = reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def _shape_arg(shape, name):
    try:
        return tuple(operator.index(d) for d in shape) if np.iterable(shape) \
            else (operator.index(shape),)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got {shape!r}. "
                        "Shapes are static: read them from .shape, never from array values.") \
            from None


def zeros(shape, dtype=None):
    return np.zeros(_shape_arg(shape, "zeros"), dtype)


def ones(shape, dtype=None):
    return np.ones(_shape_arg(shape, "ones"), dtype)


def empty(shape, dtype=None):
    """Like numpy.empty but zero-filled: uninitialised memory is never useful to a trace."""
    return np.zeros(_shape_arg(shape, "empty"), dtype)


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tracer):
        fill_value = asarray(fill_value, dtype)
        return broadcast_to(fill_value, np.broadcast_shapes(_shape_arg(shape, "full"),
                                                            fill_value.shape))
    return np.full(_shape_arg(shape, "full"), fill_value, dtype)


def _like(name, a, fill, dtype, shape):
    if isinstance(a, Tracer):
        dtype = a.dtype if dtype is None else np.dtype(dtype)
        shape = a.shape if shape is None else _shape_arg(shape, name)
        if isinstance(fill, Tracer):
            return broadcast_to(asarray(fill, dtype), shape)
        return broadcast_to(np.asarray(fill, dtype), shape)
    a = np.asarray(a)
    shape = a.shape if shape is None else _shape_arg(shape, name)
    if isinstance(fill, Tracer):
        return broadcast_to(asarray(fill, a.dtype if dtype is None else dtype), shape)
    return np.full(shape, fill, a.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return _like("empty_like", a, 0, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    return _like("full_like", a, fill_value, dtype, shape)


def _static(x, fname, what):
    if isinstance(x, Tracer):
        val = x.concrete_value()
        if val is None:
            raise ConcretizationTypeError(
                f"{fname}: `{what}` is a traced value {x.aval.str_short()}, but it decides the "
                "shape of the result, which must be known while tracing. Pass a Python number "
                "(mark the argument static with static_argnums).")
        return np.asarray(val)[()]
    return x


def arange(start, stop=None, step=None, dtype=None):
    start = _static(start, "arange", "start")
    stop = _static(stop, "arange", "stop")
    step = _static(step, "arange", "step")
    if stop is None:
        return np.arange(start, step=step if step is not None else 1, dtype=dtype)
    return np.arange(start, stop, step if step is not None else 1, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace; differentiable in traced `start` and `stop`.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> float(ft.grad(lambda b: fnp.sum(fnp.linspace(0.0, b, 5)))(1.0))
    2.5
    """
    num = operator.index(_static(num, "linspace", "num"))
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative.")
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        return np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                           axis=axis)
    return _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis)


def _traced_linspace(start, stop, num, endpoint, retstep, dtype, axis):
    from functrans.numpy import _elementwise as E
    from functrans.numpy._core import result_dtype
    from functrans.numpy._shape import moveaxis, reshape
    start, stop = asarray(start), asarray(stop)
    dt = result_dtype(start, stop, 1.0)
    start, stop = asarray(start, dt), asarray(stop, dt)
    div = (num - 1) if endpoint else num
    shape = np.broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, shape), broadcast_to(stop, shape)
    delta = E.subtract(stop, start)
    step = E.true_divide(delta, div) if div > 0 else delta * np.nan
    frac = np.arange(num, dtype=dt).reshape((num,) + (1,) * len(shape))
    if div > 0:
        frac = frac / div
    out = E.add(reshape(start, (1, *shape)), E.multiply(frac, reshape(delta, (1, *shape))))
    if endpoint and num > 1:  # numpy makes the last sample exactly `stop`
        last = np.zeros((num,) + (1,) * len(shape), bool)
        last[-1] = True
        out = E.where(last, reshape(stop, (1, *shape)), out)
    out = moveaxis(out, 0, axis)
    if dtype is not None:
        out = asarray(out, dtype)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=float):
    return np.eye(N, M, k=k, dtype=dtype)


def identity(n, dtype=None):
    return np.identity(n, dtype)
