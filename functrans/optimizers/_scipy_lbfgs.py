"""L-BFGS through scipy.optimize (an optional extra), over the raveled parameters: how
physics-informed networks are usually finished after Adam."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from functrans.flatten_util import ravel_pytree


class LBFGSResult(NamedTuple):
    """What minimize_lbfgs returns: the parameters found and scipy's report."""

    params: Any          # the final parameters, as a pytree like the initial ones
    loss: float
    nit: int             # iterations
    nfev: int            # loss-and-gradient evaluations
    message: str
    success: bool


def minimize_lbfgs(value_and_grad_fn: Callable, params, *, maxiter: int = 15000,
                   maxfun: int | None = None, maxcor: int = 50, maxls: int = 50,
                   ftol: float = float(np.finfo(float).eps), gtol: float = 1e-12,
                   callback: Callable | None = None) -> LBFGSResult:
    """Minimise with scipy.optimize.minimize(method="L-BFGS-B", jac=True) over the raveled
    parameters. `value_and_grad_fn(params) -> (loss, grads)` (e.g. ft.jit(ft.value_and_grad(
    loss))); `callback(params, loss)` is called after every iteration. The defaults are the
    settings physics-informed network papers use (memory 50, tolerance at machine epsilon).

    scipy stops at the first of: `maxiter` iterations, `maxfun` evaluations (default 5/4 of
    maxiter), a reduction (f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= ftol (for a loss below 1
    an absolute test: with ftol at machine epsilon, a step that gains less than 2.2e-16),
    a largest gradient component <= gtol, or a line search that finds no decrease in `maxls`
    evaluations; the result's `message` says which. A PINN's loss usually still falls when
    `maxiter` is what stopped it: raise it.
    """
    try:
        from scipy.optimize import minimize
    except ImportError:
        raise ImportError("minimize_lbfgs needs scipy, an optional extra: pip install scipy "
                          "(or pip install 'functrans[examples]').") from None
    flat0, unravel = ravel_pytree(params)
    flat0 = np.asarray(flat0, np.float64)
    last = {}

    def fun(x):
        loss, grads = value_and_grad_fn(unravel(x))
        g, _ = ravel_pytree(grads)
        last["loss"] = float(loss)
        return float(loss), np.asarray(g, np.float64)

    def cb(x):
        if callback is not None:
            callback(unravel(x), last.get("loss"))

    res = minimize(fun, flat0, jac=True, method="L-BFGS-B", callback=cb,
                   options={"maxiter": maxiter, "maxfun": maxfun or maxiter * 5 // 4,
                            "maxcor": maxcor, "maxls": maxls, "ftol": ftol, "gtol": gtol})
    return LBFGSResult(unravel(res.x), float(res.fun), int(res.nit), int(res.nfev),
                       str(res.message), bool(res.success))
