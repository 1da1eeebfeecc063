"""odeint: an adaptive Runge-Kutta solver with the adjoint derivative, as jax.experimental.ode.

The forward solve is Dormand-Prince 5(4) with local error control (mean squared ratio of the
error estimate to atol + rtol * |y|, step factor 0.9 r^(-1/5) clipped to [0.2, 10]) and the
initial step of Hairer, Norsett and Wanner (Solving ODEs I, sec. II.4); each output time is
read off the step that passes it by the 4th-order interpolant of the Dopri step. This is
JAX's algorithm, so the values agree with jax.experimental.ode.odeint to rounding and with
scipy's LSODA to the tolerances.

Reverse mode is the adjoint method: from the cotangent g of the outputs, the augmented system
  d/ds [y, a, t_bar, args_bar] = [-f(y, -s), a^T df/dy, a^T df/dt, a^T df/dargs]
is integrated backwards between output times with the same solver (s = -t), and the time
cotangents add f(y_i, t_i) . g_i (JAX's odeint_rev). The adjoint solve is itself odeint, so
reverse mode nests to any order. Forward mode (jvp) is not defined, as in JAX: it raises
CustomVJPForwardModeError.

>>> import numpy as np, functrans as ft
>>> from functrans.experimental.ode import odeint
>>> ys = odeint(lambda y, t, k: -k * y, np.array([1.0]), np.array([0.0, 1.0]), 2.0)
>>> float(abs(ys[1, 0] - np.exp(-2.0))) < 1e-7
True
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ArgumentTypeError, DTypeError
from functrans.flatten_util import ravel_pytree
from functrans.transforms.custom import custom_vjp
from functrans.transforms.vjp import vjp
from functrans.transforms.vmap import vmap
from functrans.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# Dormand-Prince 5(4): the nodes, the stage weights, the 5th-order solution's weights and the
# difference of the 5th- and 4th-order weights (the error estimate)
_ALPHA = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_BETA = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]])
_C_SOL = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_C_ERR = np.array([35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085,
                   125 / 192 - 451 / 720, -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300,
                   -1 / 60])
# the weights of the solution at the step's midpoint (Shampine's dense output for Dopri)
_C_MID = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                   -2691868925 / 45128329728, 187940372067 / 1594534317056,
                   -1776094331 / 19743644256, 11237099 / 235043384]) / 2


def _rk_step(f, y0, f0, t0, dt):
    """One Dopri step: (y1, f(y1), error estimate, the 7 stage derivatives)."""
    dtype = y0.dtype
    k = [f0]
    for i in range(6):
        yi = y0 + dt * fnp.dot(np.asarray(_BETA[i, :i + 1], dtype), fnp.stack(k))
        k.append(f(yi, t0 + dt * _ALPHA[i]))
    ks = fnp.stack(k)
    y1 = y0 + dt * fnp.dot(np.asarray(_C_SOL, dtype), ks)
    return y1, ks[-1], dt * fnp.dot(np.asarray(_C_ERR, dtype), ks), ks


def _interpolant(y0, y1, ks, dt):
    """The quartic's coefficients (highest first) through y0, y1, the midpoint value and the
    end slopes, in the step's relative time."""
    y_mid = y0 + dt * fnp.dot(np.asarray(_C_MID, y0.dtype), ks)
    dy0, dy1 = dt * ks[0], dt * ks[-1]
    a = -2 * dy0 + 2 * dy1 - 8 * y0 - 8 * y1 + 16 * y_mid
    b = 5 * dy0 - 3 * dy1 + 18 * y0 + 14 * y1 - 32 * y_mid
    c = -4 * dy0 + dy1 - 11 * y0 - 5 * y1 + 16 * y_mid
    return fnp.stack([a, b, c, dy0, y0])


def _error_ratio(err, rtol, atol, y0, y1):
    scale = atol + rtol * fnp.maximum(fnp.abs(y0), fnp.abs(y1))
    return fnp.sqrt(fnp.mean((err / scale) ** 2))


def _next_step(dt, ratio):
    """The step after one with error ratio `ratio` (factor in [0.2, 10]; no shrinking after
    an accepted step)."""
    lowest = fnp.where(ratio < 1, 1.0, 0.2)
    safe = fnp.where(ratio == 0, 1.0, ratio)
    factor = fnp.minimum(10.0, fnp.maximum(0.9 * safe ** -0.2, lowest))
    return fnp.where(ratio == 0, dt * 10.0, dt * factor)


def _first_step(f, t0, y0, f0, rtol, atol):
    scale = atol + fnp.abs(y0) * rtol
    d0 = fnp.linalg.norm(y0 / scale)
    d1 = fnp.linalg.norm(f0 / scale)
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = fnp.where(small, 1e-6, 0.01 * d0 / fnp.where(small, 1.0, d1))
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = fnp.linalg.norm((f1 - f0) / scale) / h0
    tiny = (d1 <= 1e-15) & (d2 <= 1e-15)
    h1 = fnp.where(tiny, fnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / fnp.where(tiny, 1.0, fnp.maximum(d1, d2))) ** (1 / 5))
    return fnp.minimum(100 * h0, h1)


def _solve(f, rtol, atol, mxstep, hmax, y0, ts):
    """y(ts) for y' = f(y, t), y(ts[0]) = y0 (flat y0)."""
    f0 = f(y0, ts[0])
    dt = fnp.clip(_first_step(f, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    coeffs = fnp.stack([y0] * 5)

    def to_time(carry, target):
        def running(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, ks = _rk_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeffs = _interpolant(y, y1, ks, dt)
            dt_next = fnp.clip(_next_step(dt, ratio), 0.0, hmax)
            ok = ratio <= 1.0
            return (i + 1, fnp.where(ok, y1, y), fnp.where(ok, f1, fy),
                    fnp.where(ok, t + dt, t), dt_next, fnp.where(ok, t, last_t),
                    fnp.where(ok, new_coeffs, coeffs))

        _, *carry = lax.while_loop(running, step, (0, *carry))
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        y_target = coeffs[0]
        for c in range(1, 5):                       # Horner's rule along the coefficients
            y_target = y_target * s + coeffs[c]
        return tuple(carry), y_target

    init = (y0, f0, ts[0], dt, ts[0], coeffs)
    with _trial_steps():
        _, ys = lax.scan(to_time, init, ts[1:])
    return fnp.concatenate([y0[None], ys])


def _trial_steps():
    """numpy's errors silenced where the solve runs: a trial step too long for the error
    control may overflow or divide by zero before it is rejected (the staged loop runs where
    it is called)."""
    return np.errstate(all="ignore")


def _solve_vjp_fwd(f, rtol, atol, mxstep, hmax, y0, ts, *args):
    with _trial_steps():
        ys = _solve_adjoint(f, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_vjp_bwd(f, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res
    ys, ts, g = fnp.asarray(ys), fnp.asarray(ts), fnp.asarray(g)   # indexed by traced i

    def augmented(state, s, *args):
        y, y_bar = state[0], state[1]
        y_dot, f_vjp = vjp(lambda y, t, *a: f(y, t, *a), y, -s, *args)
        return (-y_dot, *f_vjp(y_bar))

    def back_to(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = fnp.dot(f(ys[i], ts[i], *args), g[i])      # moving the output time t_i
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, args_bar), fnp.stack([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], fnp.zeros((), ts.dtype), tree_map(fnp.zeros_like, args))
    with _trial_steps():
        (y_bar, t0_bar, args_bar), rev_t_bars = lax.scan(
            back_to, init, np.arange(ts.shape[0] - 1, 0, -1))
    ts_bar = fnp.concatenate([t0_bar[None], rev_t_bars[::-1]])
    return (y_bar, ts_bar, *args_bar)


def _solve_with_args(f, rtol, atol, mxstep, hmax, y0, ts, *args):
    return _solve(lambda y, t: f(y, t, *args), rtol, atol, mxstep, hmax, y0, ts)


_solve_adjoint = custom_vjp(_solve_with_args, nondiff_argnums=(0, 1, 2, 3, 4))
_solve_adjoint.defvjp(_solve_vjp_fwd, _solve_vjp_bwd)


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """jax.experimental.ode.odeint: y at the times `t` (increasing) for y' = func(y, t, *args),
    y(t[0]) = y0; y0 and the result are pytrees of float arrays, the result's leaves with a
    leading axis of len(t). Differentiable in reverse mode in y0, t and args (the adjoint
    method); `func` must not close over values being differentiated (pass them in args)."""
    for a in tree_leaves(args):
        if not hasattr(a, "dtype") and not isinstance(a, int | float | complex):
            raise ArgumentTypeError(f"odeint: the extra arguments must be arrays or scalars "
                                    f"(pytrees of them), got {type(a).__name__}. Close over "
                                    "other values in func.")
    t = fnp.asarray(t)
    if t.dtype.kind != "f" or t.ndim != 1:
        raise DTypeError(f"odeint: t must be a 1-d array of float times, got "
                         f"{t.dtype.name}{list(t.shape)}.")
    flat, unravel = ravel_pytree(y0)
    if flat.dtype.kind != "f":
        flat = fnp.asarray(flat, np.float64)
    dtype = np.result_type(flat.dtype, t.dtype)
    flat, t = fnp.asarray(flat, dtype), fnp.asarray(t, dtype)

    def flat_func(y, t, *args):
        return ravel_pytree(func(unravel(y), t, *args))[0]

    with _trial_steps():
        ys = _solve_adjoint(flat_func, float(rtol), float(atol), float(mxstep), float(hmax),
                            flat, t, *args)
    return vmap(unravel)(ys)        # each row as y0's tree, the leaves stacked on axis 0
