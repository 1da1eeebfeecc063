"""Elementwise functions written as compositions of existing rows: logaddexp2 (logaddexp in
base 2), angle (the argument of a complex number; on real input 0 or pi, with derivative
zero) and real_if_close; and the complex-type tests iscomplexobj, isrealobj, iscomplex and
isreal. Their derivatives come from the rows they are made of.

>>> import functrans.numpy as fnp
>>> float(fnp.logaddexp2(1.0, 1.0))
2.0
"""

from __future__ import annotations

import numpy as np

from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype
from functrans.numpy._reductions import all as _all

__all__ = ["logaddexp2", "angle", "iscomplexobj", "isrealobj", "iscomplex", "isreal",
           "real_if_close"]

_LN2 = float(np.log(2.0))


def logaddexp2(x1, x2):
    """numpy.logaddexp2: log2(2**x1 + 2**x2), as logaddexp(x1 ln 2, x2 ln 2) / ln 2 (so the
    same stable evaluation and exact derivatives of every order; a few ulps from numpy's
    base-2 loop).

    >>> import functrans.numpy as fnp
    >>> float(fnp.logaddexp2(0.0, 0.0))
    1.0
    """
    x1, x2 = asarray(x1), asarray(x2)
    dtype = result_dtype(x1, x2, 1.0)
    if dtype.kind == "c":
        raise TypeError("logaddexp2: complex input is not supported (numpy has no complex "
                        "loop either); use log2 of a sum.")
    x1, x2 = asarray(x1, dtype), asarray(x2, dtype)
    ln2 = np.asarray(_LN2, dtype)
    return E.true_divide(E.logaddexp(E.multiply(x1, ln2), E.multiply(x2, ln2)), ln2)


def angle(z, deg: bool = False):
    """numpy.angle: the counterclockwise angle of z from the positive real axis, in radians
    (degrees if `deg`). On real input it is 0 for x >= +0 and pi for x <= -0 (numpy's
    arctan2(0, x)), a step whose derivative is zero; complex input is arctan2(imag, real).

    >>> import functrans.numpy as fnp
    >>> fnp.angle(fnp.array([-2.0, 3.0])).tolist()
    [3.141592653589793, 0.0]
    """
    z = asarray(z)
    if z.dtype.kind == "c":
        out = E.arctan2(E.imag(z), E.real(z))
    else:
        x = asarray(z, result_dtype(z, 1.0))
        step = E.where(E.signbit(x), np.asarray(np.pi, x.dtype), np.zeros((), x.dtype))
        out = E.where(E.isnan(x), x, step)
    return E.multiply(out, 180.0 / np.pi) if deg else out


def iscomplexobj(x) -> bool:
    """numpy.iscomplexobj: whether `x` has a complex dtype (known while tracing)."""
    return asarray(x).dtype.kind == "c"


def isrealobj(x) -> bool:
    """numpy.isrealobj: whether `x` has a non-complex dtype (known while tracing)."""
    return not iscomplexobj(x)


def iscomplex(x):
    """numpy.iscomplex: entrywise, whether the imaginary part is nonzero (all False, a
    constant, for a real dtype).

    >>> import functrans.numpy as fnp
    >>> fnp.iscomplex(fnp.array([1.0 + 1j, 2.0])).tolist()
    [True, False]
    """
    x = asarray(x)
    if x.dtype.kind != "c":
        return np.zeros(x.shape, bool)
    return E.not_equal(E.imag(x), 0)


def isreal(x):
    """numpy.isreal: entrywise, whether the imaginary part is zero (all True for a real
    dtype)."""
    x = asarray(x)
    if x.dtype.kind != "c":
        return np.ones(x.shape, bool)
    return E.equal(E.imag(x), 0)


def real_if_close(a, tol=100):
    """numpy.real_if_close: the real part of complex `a` when every imaginary part is below
    `tol` (in machine epsilons of the dtype when tol > 1), else `a`. The choice of result
    reads the values, so it needs them concrete (eager code, or grad of eager code); under jit
    it raises with the fix. The derivative is that of real (or of the identity).

    >>> import functrans.numpy as fnp
    >>> fnp.real_if_close(fnp.array([2.0 + 1e-20j])).tolist()
    [2.0]
    """
    a = asarray(a)
    if a.dtype.kind != "c":
        return E.positive(a)        # a result of its own, never the caller's array
    if tol > 1:
        tol = float(np.finfo(a.dtype).eps) * tol
    if bool(_all(E.less(E.absolute(E.imag(a)), tol))):
        return E.real(a)
    return E.positive(a)
