"""numpy.pad over the `pad` primitive ('constant') and slices joined by `concatenate' (the
other modes): every mode is linear in the array, and 'constant' in constant_values too."""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.trace import Tracer
from functrans.core.ownership import owned
from functrans.numpy._core import asarray
from functrans.primitives import shape_ops as S
from functrans.primitives.shape_ops import slice_

__all__ = ["pad"]

_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pairs(value, ndim, name):
    """numpy's per-axis (before, after) pairs from a scalar, a pair or one pair per axis."""
    arr = np.asarray(value)
    try:
        return np.broadcast_to(arr, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(f"pad: {name} of shape {arr.shape} does not broadcast to (ndim, 2) = "
                         f"({ndim}, 2); give a scalar, a (before, after) pair or one pair per "
                         "axis.") from None


def _along(x, axis, start, stop, step=1):
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return slice_(x, starts, limits, strides)


def _reversed(x, axis, start, stop):
    """x[start:stop] along `axis`, reversed."""
    return S.rev(_along(x, axis, start, stop), (axis,))


def _edges(x, axis, lo, hi, mode):
    n = x.shape[axis]
    if mode == "edge":
        def rep(part, k):
            shape = list(part.shape)
            shape[axis] = k
            return S.broadcast_in_dim(part, tuple(shape), tuple(range(x.ndim)))
        return rep(_along(x, axis, 0, 1), lo), rep(_along(x, axis, n - 1, n), hi)
    limit = {"reflect": n - 1, "symmetric": n, "wrap": n}[mode]
    if lo > limit or hi > limit:
        raise NotImplementedError(
            f"pad: mode={mode!r} with pad widths ({lo}, {hi}) larger than {limit} along an axis "
            f"of size {n} (numpy repeats the {mode} then) is not supported; pad in several "
            "calls of smaller widths.")
    if mode == "reflect":
        return _reversed(x, axis, 1, lo + 1), _reversed(x, axis, n - 1 - hi, n - 1)
    if mode == "symmetric":
        return _reversed(x, axis, 0, lo), _reversed(x, axis, n - hi, n)
    return _along(x, axis, n - lo, n), _along(x, axis, 0, hi)  # wrap


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad for modes 'constant' (constant_values may be traced), 'edge', 'reflect',
    'symmetric' and 'wrap'.

    >>> import functrans.numpy as fnp
    >>> fnp.pad(fnp.array([1.0, 2.0]), (1, 2), constant_values=9).tolist()
    [9.0, 1.0, 2.0, 9.0, 9.0]
    """
    x = asarray(array)
    if isinstance(pad_width, Tracer):
        raise TypeError("pad: pad_width must be concrete integers (it decides the result's "
                        "shape); pass Python ints or a numpy array, not a traced value.")
    if callable(mode) or mode not in _MODES:
        raise NotImplementedError(f"pad: mode={mode!r} is not supported; use one of {_MODES}.")
    allowed = {"constant_values"} if mode == "constant" else {"reflect_type"} \
        if mode in ("reflect", "symmetric") else set()
    extra = set(kwargs) - allowed
    if extra:
        raise TypeError(f"pad: unsupported keyword arguments {sorted(extra)} for "
                        f"mode={mode!r}.")
    if kwargs.get("reflect_type", "even") != "even":
        raise NotImplementedError("pad: reflect_type='odd' is not supported; use the default "
                                  "'even'.")
    widths = _pairs(pad_width, x.ndim, "pad_width")
    widths = [(operator.index(lo), operator.index(hi)) for lo, hi in widths]
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError(f"pad: pad widths must be non-negative, got {widths}.")
    if not any(lo or hi for lo, hi in widths):
        return owned(x, array)  # nothing to pad: a copy, as numpy's
    if mode == "constant":
        value = kwargs.get("constant_values", 0)
        if isinstance(value, Tracer) and value.ndim == 0:
            return S.pad(x, S.convert_element_type(value, x.dtype),
                         tuple((lo, hi, 0) for lo, hi in widths))
        if isinstance(value, Tracer):
            raise TypeError("pad: a traced constant_values must be a scalar; pad axis by axis "
                            "for several traced values.")
        values = _pairs(value, x.ndim, "constant_values")
        if len({v for pair in values for v in pair}) == 1:
            return S.pad(x, np.asarray(values[0][0]).astype(x.dtype),
                         tuple((lo, hi, 0) for lo, hi in widths))
        for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):  # numpy's order
            config = [(0, 0, 0)] * x.ndim
            config[axis] = (lo, 0, 0)
            x = S.pad(x, np.asarray(vlo).astype(x.dtype), tuple(config))
            config[axis] = (0, hi, 0)
            x = S.pad(x, np.asarray(vhi).astype(x.dtype), tuple(config))
        return x
    for axis, (lo, hi) in enumerate(widths):
        if not lo and not hi:
            continue
        if x.shape[axis] == 0:
            raise ValueError(f"pad: cannot pad axis {axis} of size 0 with mode={mode!r} "
                             "(there is nothing to copy); use mode='constant'.")
        before, after = _edges(x, axis, lo, hi, mode)
        x = S.concatenate([p for p, k in ((before, lo), (x, 1), (after, hi)) if k], axis)
    return x
