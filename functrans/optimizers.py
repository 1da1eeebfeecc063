"""Optimisers over pytrees of parameters, in the functional init/update style.

An optimiser is a pair of pure functions: `init(params) -> state` and
`update(grads, state, params) -> (updates, state)`; `apply_updates(params, updates)` adds the
updates. Learning rates are numbers or schedules (functions of the step count). The arithmetic
goes through functrans.numpy, so an update step can itself be traced by jit.

>>> import numpy as np
>>> from functrans import optimizers as optim
>>> opt = optim.adam(0.1)
>>> params = {"w": np.array([1.0, -2.0])}
>>> state = opt.init(params)
>>> updates, state = opt.update({"w": np.array([0.5, -0.5])}, state, params)
>>> optim.apply_updates(params, updates)["w"].round(6).tolist()
[0.9, -1.9]

`minimize_lbfgs` hands the flattened parameters to scipy's L-BFGS-B (scipy is an optional
extra), which is how physics-informed networks are usually finished after Adam.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

import functrans.numpy as fnp
from functrans.errors import ArgumentError
from functrans.flatten_util import ravel_pytree
from functrans.tree_util import tree_map

__all__ = ["Optimizer", "sgd", "adam", "apply_updates", "constant_schedule",
           "exponential_decay", "piecewise_constant", "cosine_decay", "minimize_lbfgs",
           "LBFGSResult"]

Schedule = Callable[[Any], Any]


class Optimizer(NamedTuple):
    """A pair of pure functions: init(params) -> state; update(grads, state, params) ->
    (updates, state)."""

    init: Callable
    update: Callable


def apply_updates(params, updates):
    """params + updates, leaf by leaf."""
    return tree_map(lambda p, u: fnp.add(p, u), params, updates)


# --- learning-rate schedules ------------------------------------------------------------------
# Each schedule takes the step count as a Python int (then it returns a Python float) or as an
# array or traced value (inside a jitted step: then it computes with functrans.numpy), with the
# same values either way.

def _is_python_step(step) -> bool:
    return isinstance(step, int | np.integer)


def constant_schedule(value: float) -> Schedule:
    """The same learning rate at every step."""
    return lambda step: value


def exponential_decay(init_value: float, decay_steps: int, decay_rate: float,
                      staircase: bool = False, end_value: float | None = None) -> Schedule:
    """init_value * decay_rate ** (step / decay_steps), floored at end_value if given; with
    `staircase`, the exponent is the whole number of decay_steps done.

    >>> exponential_decay(1.0, 10, 0.5)(20)
    0.25
    """
    if decay_steps <= 0:
        raise ArgumentError(f"exponential_decay: decay_steps must be positive, got "
                            f"{decay_steps}.")
    if decay_rate <= 0:
        raise ArgumentError(f"exponential_decay: decay_rate must be positive, got {decay_rate} "
                            "(a rate of 0.5 halves the learning rate every decay_steps).")

    def schedule(step):
        if _is_python_step(step):
            p = step // decay_steps if staircase else step / decay_steps
            v = init_value * decay_rate ** p
            return max(v, end_value) if end_value is not None else v
        p = (fnp.floor_divide if staircase else fnp.divide)(step, decay_steps)
        v = fnp.multiply(init_value, fnp.exp(fnp.multiply(p, math.log(decay_rate))))
        return v if end_value is None else fnp.maximum(v, end_value)

    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[i] for boundaries[i-1] <= step < boundaries[i] (len(values) = len(boundaries)+1).

    >>> [piecewise_constant([10, 20], [1.0, 0.1, 0.01])(s) for s in (0, 10, 25)]
    [1.0, 0.1, 0.01]
    """
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ArgumentError(f"piecewise_constant: needs one more value than boundaries, got "
                            f"{len(values)} values and {len(boundaries)} boundaries.")

    def schedule(step):
        if _is_python_step(step):
            return values[sum(step >= b for b in boundaries)]
        v = values[0]
        for b, nxt in zip(boundaries, values[1:]):
            v = fnp.where(fnp.greater_equal(step, b), nxt, v)
        return v

    return schedule


def cosine_decay(init_value: float, decay_steps: int, alpha: float = 0.0) -> Schedule:
    """Cosine from init_value down to alpha * init_value over decay_steps, then flat.

    >>> round(cosine_decay(1.0, 100)(50), 12)
    0.5
    """
    if decay_steps <= 0:
        raise ArgumentError(f"cosine_decay: decay_steps must be positive, got {decay_steps}.")

    def schedule(step):
        if _is_python_step(step):
            t = min(step, decay_steps) / decay_steps
            return init_value * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * t)) + alpha)
        t = fnp.divide(fnp.minimum(step, decay_steps), decay_steps)
        cosine = fnp.multiply(0.5, fnp.add(1.0, fnp.cos(fnp.multiply(math.pi, t))))
        return fnp.multiply(init_value, fnp.add(fnp.multiply(1 - alpha, cosine), alpha))

    return schedule


def _as_schedule(lr) -> Schedule:
    return lr if callable(lr) else constant_schedule(lr)


# --- optimisers ---------------------------------------------------------------------------------

class SGDState(NamedTuple):
    step: int
    momentum: Any


def sgd(learning_rate, momentum: float | None = None, nesterov: bool = False) -> Optimizer:
    """Stochastic gradient descent, with optional (Nesterov) momentum."""
    lr = _as_schedule(learning_rate)

    def init(params):
        m = tree_map(lambda p: np.zeros_like(np.asarray(p)), params) if momentum else None
        return SGDState(0, m)

    def update(grads, state, params=None):
        rate = lr(state.step)
        if not momentum:
            upd = tree_map(lambda g: fnp.multiply(g, -rate), grads)
            return upd, SGDState(state.step + 1, None)
        m = tree_map(lambda v, g: fnp.add(fnp.multiply(v, momentum), g), state.momentum, grads)
        d = tree_map(lambda v, g: fnp.add(fnp.multiply(v, momentum), g), m, grads) \
            if nesterov else m
        return tree_map(lambda x: fnp.multiply(x, -rate), d), SGDState(state.step + 1, m)

    return Optimizer(init, update)


class AdamState(NamedTuple):
    step: int
    mu: Any
    nu: Any


def adam(learning_rate, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma and Ba), bias-corrected; learning_rate may be a schedule."""
    lr = _as_schedule(learning_rate)

    def init(params):
        zeros = tree_map(lambda p: np.zeros_like(np.asarray(p)), params)
        return AdamState(0, zeros, tree_map(np.copy, zeros))

    def update(grads, state, params=None):
        step = state.step + 1
        mu = tree_map(lambda m, g: fnp.add(fnp.multiply(m, b1), fnp.multiply(g, 1 - b1)),
                      state.mu, grads)
        nu = tree_map(lambda v, g: fnp.add(fnp.multiply(v, b2),
                                           fnp.multiply(fnp.multiply(g, g), 1 - b2)),
                      state.nu, grads)
        c1 = 1 - b1 ** step
        c2 = 1 - b2 ** step
        rate = lr(state.step)
        upd = tree_map(lambda m, v: fnp.multiply(
            fnp.divide(fnp.divide(m, c1), fnp.add(fnp.sqrt(fnp.divide(v, c2)), eps)), -rate),
            mu, nu)
        return upd, AdamState(step, mu, nu)

    return Optimizer(init, update)


# --- L-BFGS through scipy -----------------------------------------------------------------------

class LBFGSResult(NamedTuple):
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
