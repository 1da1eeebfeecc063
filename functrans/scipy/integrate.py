"""scipy.integrate over functrans primitives (no scipy needed): `trapezoid`, numpy's
trapezoidal rule (functrans.numpy.trapezoid), differentiable in the samples and coordinates.

>>> import functrans.scipy.integrate as fsi
>>> float(fsi.trapezoid([0.0, 1.0, 4.0], x=[0.0, 1.0, 2.0]))
3.0
"""

from __future__ import annotations

from functrans.numpy._calculus import trapezoid as _trapezoid

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """scipy.integrate.trapezoid: the integral of `y` along `axis` by the trapezoidal rule
    (the same function as functrans.numpy.trapezoid)."""
    return _trapezoid(y, x=x, dx=dx, axis=axis)
