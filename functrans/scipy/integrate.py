"""scipy.integrate over functrans primitives (no scipy needed): `trapezoid`, numpy's
trapezoidal rule (functrans.numpy.trapezoid), differentiable in the samples and coordinates;
`odeint` with scipy's signature over functrans.experimental.ode's adaptive solver.

>>> import functrans.scipy.integrate as fsi
>>> float(fsi.trapezoid([0.0, 1.0, 4.0], x=[0.0, 1.0, 2.0]))
3.0
"""

from __future__ import annotations

from typing import Any, Callable

from functrans.errors import ArgumentError
from functrans.experimental import ode as _ode
from functrans.numpy._calculus import trapezoid as _trapezoid

__all__ = ["trapezoid", "odeint"]


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """scipy.integrate.trapezoid: the integral of `y` along `axis` by the trapezoidal rule
    (the same function as functrans.numpy.trapezoid)."""
    return _trapezoid(y, x=x, dx=dx, axis=axis)


_LSODA_ONLY = ("Dfun", "col_deriv", "full_output", "ml", "mu", "tcrit", "h0", "hmin", "ixpr",
               "mxhnil", "mxordn", "mxords", "printmessg")


def odeint(func: Callable, y0: Any, t: Any, args: tuple = (), *, rtol: float | None = None,
           atol: float | None = None, hmax: float = 0.0, mxstep: int = 0,
           tfirst: bool = False, **lsoda: Any) -> Any:
    """scipy.integrate.odeint's signature: y at the times `t` for y' = func(y, t, *args)
    (func(t, y, *args) with tfirst=True), y(t[0]) = y0, shape (len(t), *y0.shape).

    Solved by functrans.experimental.ode.odeint (Dormand-Prince, as JAX's) rather than
    LSODA, so the values agree with scipy's to the tolerances (default 1.49012e-8, scipy's),
    not to rounding; reverse-mode derivatives in y0, t and args by the adjoint method, as JAX
    and HIPS autograd compute them. LSODA's own options are refused.

    >>> import numpy as np, functrans.scipy.integrate as fsi
    >>> ys = fsi.odeint(lambda y, t: -y, np.array([1.0]), np.array([0.0, 1.0]))
    >>> float(abs(ys[1, 0] - np.exp(-1.0))) < 1e-7
    True
    """
    given = sorted(k for k, v in lsoda.items() if k in _LSODA_ONLY and v not in (None, 0, 0.0))
    unknown = sorted(k for k in lsoda if k not in _LSODA_ONLY)
    if unknown:
        raise TypeError(f"odeint() got unexpected keyword arguments {unknown}.")
    if given:
        raise ArgumentError(f"odeint: {given} are options of scipy's LSODA solver, which "
                            "functrans does not use (its solver is Dormand-Prince with "
                            "rtol/atol error control). Leave them out.")
    if not isinstance(args, tuple):
        args = (args,)
    f = (lambda y, s, *a: func(s, y, *a)) if tfirst else func
    tol = 1.49012e-8
    return _ode.odeint(f, y0, t, *args, rtol=tol if rtol is None else rtol,
                       atol=tol if atol is None else atol,
                       mxstep=mxstep if mxstep > 0 else float("inf"),
                       hmax=hmax if hmax > 0 else float("inf"))
