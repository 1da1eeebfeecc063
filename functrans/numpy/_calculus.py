"""Numerical calculus and interpolation on sampled data: gradient (finite differences),
trapezoid (the trapezoidal rule), interp (piecewise-linear interpolation) and polyval
(Horner's rule). Each is a composition of elementwise, slicing and reduction rows, so it is
differentiable in every floating-point argument, to any order.

>>> import functrans.numpy as fnp
>>> float(fnp.trapezoid([0.0, 1.0, 2.0]))
2.0
"""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.trace import Tracer
from functrans.errors import ArgumentError, ShapeError
from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype
from functrans.numpy._creation import zeros_like
from functrans.numpy._indexing import take, take_along_axis
from functrans.numpy._reductions import normalize_axes
from functrans.numpy._reductions import sum as _sum
from functrans.numpy._shape import broadcast_to, concatenate, reshape
from functrans.numpy._sorting import argsort

__all__ = ["gradient", "trapezoid", "interp", "polyval"]


def _along(a, axis: int, sl: slice | int):
    """a[..., sl, ...] with `sl` on `axis` (an int index keeps the axis, length one)."""
    if isinstance(sl, int):
        sl = slice(sl, sl + 1) if sl != -1 else slice(-1, None)
    return a[(slice(None),) * axis + (sl,)]


def _spacings(varargs, f, axes, name):
    n = len(varargs)
    if n == 0:
        return [1.0] * len(axes)
    if n == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if n != len(axes):
        raise ArgumentError(f"{name}: give no spacing, one scalar, or one spacing per axis "
                            f"({len(axes)}); got {n}.")
    out = []
    for ax, d in zip(axes, varargs):
        if np.ndim(d) == 0:
            out.append(d)
            continue
        d = asarray(d)
        if d.ndim != 1:
            raise ShapeError(f"{name}: distances must be scalars or 1-d, got shape {d.shape}.")
        if d.shape[0] != f.shape[ax]:
            raise ShapeError(f"{name}: when 1-d, distances must match the length of the "
                             f"axis: {d.shape[0]} coordinates for axis {ax} of length "
                             f"{f.shape[ax]}.")
        diffx = E.subtract(d[1:], d[:-1])
        if not isinstance(diffx, Tracer) and np.all(np.asarray(diffx) == np.asarray(diffx)[0]):
            diffx = np.asarray(diffx)[0]  # uniform, as numpy takes it
        out.append(diffx)
    return out


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """numpy.gradient: second-order central differences inside, first- or second-order
    one-sided differences at the ends (`edge_order`); spacing as scalars or coordinates.

    >>> import functrans.numpy as fnp
    >>> fnp.gradient(fnp.array([1.0, 4.0, 9.0, 16.0])).tolist()
    [3.0, 4.0, 6.0, 7.0]
    """
    f = asarray(f)
    dtype = result_dtype(f, 1.0)
    f = asarray(f, dtype)
    axes = normalize_axes(axis, f.ndim, "gradient") if axis is not None else \
        tuple(range(f.ndim))
    if edge_order not in (1, 2):
        raise ArgumentError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}.")
    outs = []
    for ax, h in zip(axes, _spacings(varargs, f, axes, "gradient")):
        if f.shape[ax] < edge_order + 1:
            raise ValueError(f"gradient: shape of the array too small to calculate a "
                             f"numerical gradient along axis {ax}: at least {edge_order + 1} "
                             f"elements are required, got {f.shape[ax]}.")
        uniform = np.ndim(h) == 0
        shape = [1] * f.ndim
        shape[ax] = -1

        def col(v):  # a 1-d array of per-point weights, along `ax`
            return reshape(v, tuple(shape)) if np.ndim(v) else v

        fm, f0, fp = _along(f, ax, slice(None, -2)), _along(f, ax, slice(1, -1)), \
            _along(f, ax, slice(2, None))
        if uniform:
            inner = E.true_divide(E.subtract(fp, fm), E.multiply(2.0, h))
        else:
            dx1, dx2 = h[:-1], h[1:]
            a = E.true_divide(E.negative(dx2), E.multiply(dx1, E.add(dx1, dx2)))
            b = E.true_divide(E.subtract(dx2, dx1), E.multiply(dx1, dx2))
            c = E.true_divide(dx1, E.multiply(dx2, E.add(dx1, dx2)))
            inner = E.add(E.add(E.multiply(col(a), fm), E.multiply(col(b), f0)),
                          E.multiply(col(c), fp))
        g = [_along(f, ax, k) for k in (0, 1, 2, -3, -2, -1)] if f.shape[ax] >= 3 else \
            [_along(f, ax, k) for k in (0, 1, 1, 0, 0, 1)]
        if edge_order == 1:
            h0 = h if uniform else h[0]
            hn = h if uniform else h[-1]
            first = E.true_divide(E.subtract(g[1], g[0]), h0)
            last = E.true_divide(E.subtract(g[5], g[4]), hn)
        else:
            if uniform:
                a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
            else:
                dx1, dx2 = h[0], h[1]
                a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b = (dx1 + dx2) / (dx1 * dx2)
                c = -dx1 / (dx2 * (dx1 + dx2))
            first = a * g[0] + b * g[1] + c * g[2]
            if uniform:
                a, b, c = 0.5 / h, -2.0 / h, 1.5 / h
            else:
                dx1, dx2 = h[-2], h[-1]
                a = dx2 / (dx1 * (dx1 + dx2))
                b = -(dx2 + dx1) / (dx1 * dx2)
                c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            last = a * g[3] + b * g[4] + c * g[5]
        outs.append(asarray(concatenate([first, inner, last], axis=ax), dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """numpy.trapezoid: the integral of samples `y` along `axis` by the trapezoidal rule, at
    coordinates `x` (1-d along the axis, or y's shape) or uniform spacing `dx`.

    >>> import functrans.numpy as fnp
    >>> float(fnp.trapezoid([1.0, 2.0, 3.0], x=[0.0, 1.0, 3.0]))
    6.5
    """
    y = asarray(y)
    ax = normalize_axes(operator.index(axis), y.ndim, "trapezoid")[0]
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if x.ndim == 1:
            if x.shape[0] != y.shape[ax]:
                raise ShapeError(f"trapezoid: x has {x.shape[0]} coordinates but axis {ax} of "
                                 f"y (shape {y.shape}) has {y.shape[ax]} samples.")
            d = E.subtract(x[1:], x[:-1])
            shape = [1] * y.ndim
            shape[ax] = d.shape[0]
            d = reshape(d, tuple(shape))
        else:
            d = E.subtract(_along(x, ax, slice(1, None)), _along(x, ax, slice(None, -1)))
    mid = E.true_divide(E.add(_along(y, ax, slice(1, None)), _along(y, ax, slice(None, -1))),
                        2.0)
    return _sum(E.multiply(d, mid), axis=ax)


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: piecewise-linear interpolation of the points (xp, fp) at `x` (xp
    increasing). Differentiable in x, xp and fp; at a knot the slope is that of the segment
    to its right, as in jax.numpy (which finds segments the same way).

    >>> import functrans.numpy as fnp
    >>> fnp.interp([0.5, 2.0], [0.0, 1.0, 3.0], [0.0, 2.0, 0.0]).tolist()
    [1.0, 1.0]
    """
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ShapeError(f"interp: xp and fp must be 1-d, got shapes {xp.shape} and "
                         f"{fp.shape}.")
    if xp.shape[0] != fp.shape[0]:
        raise ShapeError(f"interp: xp and fp have different lengths ({xp.shape[0]} and "
                         f"{fp.shape[0]}); give one value per sample point.")
    if xp.shape[0] == 0:
        raise ValueError("interp: array of sample points is empty; give at least one.")
    if fp.dtype.kind == "c":
        raise TypeError("interp: complex fp is not supported; interpolate the real and "
                        "imaginary parts separately.")
    dtype = result_dtype(x, xp, fp, 1.0)
    x, xp, fp = asarray(x, dtype), asarray(xp, dtype), asarray(fp, dtype)
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value.")
        period = abs(period)
        x = E.remainder(x, period)
        xp = E.remainder(xp, period)
        order = argsort(xp)
        xp, fp = take_along_axis(xp, order, 0), take_along_axis(fp, order, 0)
        xp = concatenate([E.subtract(xp[-1:], period), xp, E.add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = broadcast_to(fp[0], x.shape)
    else:
        # i = searchsorted(xp, x, side="right"), clipped to the segments 1..n-1
        above = E.less_equal(xp, x[..., None])
        i = E.clip(_sum(above, axis=-1), 1, n - 1)
        lo_x, hi_x = take(xp, E.subtract(i, 1)), take(xp, i)
        lo_f, hi_f = take(fp, E.subtract(i, 1)), take(fp, i)
        dx = E.subtract(hi_x, lo_x)
        eps = np.spacing(np.finfo(dtype).eps)
        flat = E.less_equal(E.absolute(dx), eps)  # no NaN derivative on repeated knots
        slope = E.true_divide(E.subtract(hi_f, lo_f), E.where(flat, 1.0, dx))
        out = E.where(flat, lo_f, E.add(lo_f, E.multiply(E.subtract(x, lo_x), slope)))
    if period is None:
        out = E.where(E.less(x, xp[0]), fp[0] if left is None else left, out)
        out = E.where(E.greater(x, xp[-1]), fp[-1] if right is None else right, out)
    return asarray(out, dtype)


def polyval(p, x):
    """numpy.polyval: the polynomial with coefficients `p` (highest power first) at `x`, by
    Horner's rule.

    >>> import functrans.numpy as fnp
    >>> float(fnp.polyval([1.0, 0.0, -2.0], 3.0))
    7.0
    """
    p = asarray(p)
    if p.ndim != 1:
        raise ShapeError(f"polyval: p must be a 1-d sequence of coefficients, got shape "
                         f"{p.shape}.")
    x = asarray(x)
    y = zeros_like(x, dtype=result_dtype(p, x))
    for k in range(p.shape[0]):
        y = E.add(E.multiply(y, x), p[k])
    return y
