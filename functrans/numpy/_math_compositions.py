"""Elementwise functions written as compositions of existing rows: logaddexp2 (logaddexp in
base 2) and angle (the argument of a complex number; on real input 0 or pi, with derivative
zero). Their derivatives come from the rows they are made of.

>>> import functrans.numpy as fnp
>>> float(fnp.logaddexp2(1.0, 1.0))
2.0
"""

from __future__ import annotations

import numpy as np

from functrans.numpy import _elementwise as E
from functrans.numpy._core import asarray, result_dtype

__all__ = ["logaddexp2", "angle"]

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
