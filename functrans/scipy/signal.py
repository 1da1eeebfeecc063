"""scipy.signal's convolutions over functrans primitives (no scipy needed): `convolve` and
`correlate` of real N-d arrays, modes 'full', 'same' and 'valid'. The full convolution is a
sum of shifted, scaled copies of the larger operand (one per entry of the smaller: pad and
multiply rows), so it is bilinear and differentiable in both operands to any order.

>>> import functrans.scipy.signal as fss
>>> fss.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
"""

from __future__ import annotations

import itertools

import numpy as np

from functrans.errors import ArgumentError, ShapeError
from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype
from functrans.numpy._padding import pad
from functrans.numpy._shape import flip, reshape

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")


def _check(name, in1, in2, mode, method):
    if mode not in _MODES:
        raise ArgumentError(f"{name}: mode must be one of {', '.join(_MODES)}, got {mode!r}.")
    if method not in _METHODS:
        raise ArgumentError(f"{name}: method must be one of {', '.join(_METHODS)}, got "
                            f"{method!r} (all give the same values here).")
    a, v = asarray(in1), asarray(in2)
    if a.ndim != v.ndim:
        raise ShapeError(f"{name}: in1 and in2 should have the same dimensionality, got shapes "
                         f"{a.shape} and {v.shape}; reshape one of them.")
    if a.dtype.kind == "c" or v.dtype.kind == "c":
        raise TypeError(f"{name}: complex inputs are not supported; convolve the real and "
                        "imaginary parts separately.")
    dtype = result_dtype(a, v)
    if dtype.kind == "b":
        dtype = np.dtype(np.int64) if a.dtype.kind == v.dtype.kind == "b" else dtype
    return asarray(a, dtype), asarray(v, dtype)


def _full(a, v):
    """The full N-d convolution: sum over kernel entries k of v[k] * a shifted by k."""
    if v.size > a.size:
        a, v = v, a  # fewer terms; convolution commutes
    shape = tuple(n + m - 1 for n, m in zip(a.shape, v.shape))
    if a.ndim == 0:
        return E.multiply(a, v)
    out = None
    for k in itertools.product(*(range(m) for m in v.shape)):
        widths = [(ki, s - n - ki) for ki, s, n in zip(k, shape, a.shape)]
        term = pad(E.multiply(a, v[k]), widths)
        out = term if out is None else E.add(out, term)
    return out


def _centered(x, newshape):
    start = [(s - n) // 2 for s, n in zip(x.shape, newshape)]
    return x[tuple(slice(b, b + n) for b, n in zip(start, newshape))]


def convolve(in1, in2, mode: str = "full", method: str = "auto"):
    """scipy.signal.convolve of real N-d arrays ('full', 'same' as in1's shape, 'valid');
    `method` is accepted and all give the same values. Differentiable in both inputs.

    >>> import functrans.scipy.signal as fss
    >>> fss.convolve([1.0, 2.0, 3.0], [1.0, 1.0], mode="valid").tolist()
    [3.0, 5.0]
    """
    a, v = _check("convolve", in1, in2, mode, method)
    if a.ndim == 0:
        return E.multiply(a, v)
    if 0 in a.shape or 0 in v.shape:
        return np.zeros((0,) * a.ndim if mode != "same" else a.shape, a.dtype)
    full = _full(a, v)
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, a.shape)
    # valid: one input must be at least as large as the other along every axis
    if all(n >= m for n, m in zip(a.shape, v.shape)):
        big, small = a.shape, v.shape
    elif all(m >= n for n, m in zip(a.shape, v.shape)):
        big, small = v.shape, a.shape
    else:
        raise ShapeError(f"convolve: for 'valid' mode, one must be at least as large as the "
                         f"other in every dimension; got shapes {a.shape} and {v.shape}.")
    return _centered(full, tuple(b - s + 1 for b, s in zip(big, small)))


def correlate(in1, in2, mode: str = "full", method: str = "auto"):
    """scipy.signal.correlate of real N-d arrays: convolve(in1, in2 reversed on every axis),
    with scipy's modes and its order of the lags.

    >>> import functrans.scipy.signal as fss
    >>> fss.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [0.5, 2.0, 3.5, 3.0, 0.0]
    """
    a, v = _check("correlate", in1, in2, mode, method)
    if a.ndim == 0:
        return E.multiply(a, v)
    if mode == "valid" and not all(n >= m for n, m in zip(a.shape, v.shape)):
        if all(m >= n for n, m in zip(a.shape, v.shape)):
            # scipy swaps the inputs here and reverses the result
            return flip(convolve(v, flip(a), mode="valid"))
    return convolve(a, flip(v), mode=mode)
