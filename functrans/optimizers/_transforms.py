"""Gradient transformations under optax's names, each the formula of optax's own (same order
of operations, so that float64 runs agree with optax step for step), and their states."""

from __future__ import annotations

from typing import Any, NamedTuple

import functrans.numpy as fnp
from functrans.errors import ArgumentError
from functrans.optimizers import _base
from functrans.optimizers._base import (EmptyState, owning, GradientTransformation, Schedule,
                                        _init_empty_state, bias_correction, cast_tree,
                                        full_like, global_norm, identity, masked, safe_increment,
                                        sum_of_squares,
                                        update_moment, zero_count)
from functrans.tree_util import tree_leaves, tree_map


def scale(step_size: float) -> GradientTransformation:
    """Multiplies the updates by a fixed `step_size`.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale(-0.5).update(np.array([2.0]), optim.EmptyState())[0]
    array([-1.])
    """
    def update(updates, state, params=None):
        return tree_map(lambda g: fnp.multiply(step_size, g), updates), state
    return GradientTransformation(_init_empty_state, update)


class ScaleByScheduleState(NamedTuple):
    """The step count a schedule is evaluated at (optax.ScaleByScheduleState).

    >>> from functrans import optimizers as optim
    >>> optim.scale_by_schedule(lambda k: 0.1).init([1.0])
    ScaleByScheduleState(count=array(0, dtype=int32))
    """

    count: Any


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """Multiplies the updates by step_size_fn(count), count being the number of updates so far.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_schedule(lambda k: 1.0 / (k + 1))
    >>> u, s = t.update(np.ones(1), t.init(np.ones(1)))
    >>> t.update(np.ones(1), s)[0]
    array([0.5])
    """
    def init(params):
        return ScaleByScheduleState(zero_count())

    def update(updates, state, params=None):
        step_size = step_size_fn(state.count)
        updates = tree_map(lambda g: fnp.multiply(fnp.asarray(step_size,
                                                              dtype=fnp.result_type(g)), g),
                           updates)
        return updates, ScaleByScheduleState(safe_increment(state.count))

    return GradientTransformation(init, update)


def scale_by_learning_rate(learning_rate: float | Schedule | None, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Multiplies the updates by -learning_rate (+learning_rate with flip_sign=False); a
    schedule is evaluated at the step count.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_learning_rate(0.1).update(np.array([2.0]), optim.EmptyState())[0]
    array([-0.2])
    """
    if learning_rate is None:
        return identity()
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: fnp.multiply(m, learning_rate(count)))
    return scale(m * learning_rate)


class ScaleByAdamState(NamedTuple):
    """Adam's step count and first and second moments (optax.ScaleByAdamState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_adam().init(np.zeros(1))
    ScaleByAdamState(count=array(0, dtype=int32), mu=array([0.]), nu=array([0.]))
    """

    count: Any
    mu: Any
    nu: Any


def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0,
                  mu_dtype=None, *, nesterov: bool = False) -> GradientTransformation:
    """Adam's rescaling: mu_hat / (sqrt(nu_hat + eps_root) + eps), the moments bias-corrected;
    with nesterov, NAdam's.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_adam(eps=0.0)
    >>> t.update(np.array([3.0, -0.5]), t.init(np.zeros(2)))[0].round(12)
    array([ 1., -1.])
    """
    def init(params):
        return ScaleByAdamState(zero_count(), full_like(params, 0, dtype=mu_dtype),
                                full_like(params, 0))

    def update(updates, state, params=None):
        mu = update_moment(updates, state.mu, b1, 1)
        nu = update_moment(updates, state.nu, b2, 2)
        count = safe_increment(state.count)
        if nesterov:
            mu_hat = tree_map(lambda m, g: fnp.add(fnp.multiply(b1, m),
                                                   fnp.multiply(1 - b1, g)),
                              bias_correction(mu, b1, safe_increment(count)),
                              bias_correction(updates, b1, count))
        else:
            mu_hat = bias_correction(mu, b1, count)
        nu_hat = bias_correction(nu, b2, count)
        updates = tree_map(lambda m, v: fnp.divide(m, fnp.add(fnp.sqrt(fnp.add(v, eps_root)),
                                                              eps)), mu_hat, nu_hat)
        nu = tree_map(lambda n, old: fnp.astype(n, fnp.result_type(old)), nu, state.nu)
        return updates, ScaleByAdamState(count, cast_tree(mu, mu_dtype), nu)

    return GradientTransformation(init, update)


class TraceState(NamedTuple):
    """The momentum accumulator of `trace` (optax.TraceState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.trace(0.9).init(np.zeros(1))
    TraceState(trace=array([0.]))
    """

    trace: Any


def trace(decay: float, nesterov: bool = False, accumulator_dtype=None) -> GradientTransformation:
    """Momentum: trace = g + decay * trace, the update being the trace (or g + decay * trace
    again, with nesterov).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.trace(0.5)
    >>> u, s = t.update(np.ones(1), t.init(np.zeros(1)))
    >>> t.update(np.ones(1), s)[0]
    array([1.5])
    """
    def init(params):
        return TraceState(full_like(params, 0, dtype=accumulator_dtype))

    def update(updates, state, params=None):
        step = lambda g, t: fnp.add(g, fnp.multiply(decay, t))  # noqa: E731
        new_trace = tree_map(step, updates, state.trace)
        updates = tree_map(step, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(cast_tree(new_trace, accumulator_dtype))

    return GradientTransformation(init, update)


class ScaleByRmsState(NamedTuple):
    """RMSProp's moving average of squared updates (optax.ScaleByRmsState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_rms().init(np.zeros(1))
    ScaleByRmsState(nu=array([0.]))
    """

    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """ScaleByRmsState with the step count bias correction needs.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_rms(bias_correction=True).init(np.zeros(1))
    ScaleByRmsWithCountState(count=array(0, dtype=int32), nu=array([0.]))
    """

    count: Any
    nu: Any


def _rescale(eps, eps_in_sqrt):
    """1/sqrt(v + eps) or 1/(sqrt(v) + eps): optax's two placements of eps."""
    if eps_in_sqrt:
        return lambda v: fnp.divide(1, fnp.sqrt(fnp.add(v, eps)))
    return lambda v: fnp.divide(1, fnp.add(fnp.sqrt(v), eps))


def scale_by_rms(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                 eps_in_sqrt: bool = True, bias_correction: bool = False
                 ) -> GradientTransformation:
    """Divides the updates by the root of the moving average of their squares.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_rms(decay=0.75, eps=0.0)
    >>> t.update(np.array([2.0]), t.init(np.zeros(1)))[0]   # nu = 0.25 * 2**2
    array([2.])
    """
    rescale = _rescale(eps, eps_in_sqrt)
    correct = bias_correction  # (the argument hides _base.bias_correction's name here)

    def init(params):
        nu = full_like(params, initial_scale)
        return ScaleByRmsWithCountState(zero_count(), nu) if correct else ScaleByRmsState(nu)

    def update(updates, state, params=None):
        nu = update_moment(updates, state.nu, decay, 2)
        if correct:
            count = safe_increment(state.count)
            nu_hat = _base.bias_correction(nu, decay, count)
        else:
            nu_hat = nu
        updates = tree_map(lambda n, g: fnp.multiply(rescale(n), g), nu_hat, updates)
        return updates, (ScaleByRmsWithCountState(count, nu) if correct else ScaleByRmsState(nu))

    return GradientTransformation(init, update)


class ScaleByRStdDevState(NamedTuple):
    """Centred RMSProp's moving averages of the updates and their squares
    (optax.ScaleByRStdDevState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_stddev().init(np.zeros(1))
    ScaleByRStdDevState(mu=array([0.]), nu=array([0.]))
    """

    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """ScaleByRStdDevState with the step count bias correction needs.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_stddev(bias_correction=True).init(np.zeros(1)).count
    array(0, dtype=int32)
    """

    count: Any
    mu: Any
    nu: Any


def scale_by_stddev(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                    eps_in_sqrt: bool = True, bias_correction: bool = False
                    ) -> GradientTransformation:
    """Divides the updates by the root of the moving variance (centred RMSProp).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_stddev(decay=0.5, eps=0.0)
    >>> t.update(np.array([2.0]), t.init(np.zeros(1)))[0]
    array([2.])
    """
    rescale = _rescale(eps, eps_in_sqrt)
    correct = bias_correction  # (the argument hides _base.bias_correction's name here)

    def init(params):
        mu, nu = full_like(params, 0), full_like(params, initial_scale)
        if correct:
            return ScaleByRStdDevWithCountState(zero_count(), mu, nu)
        return ScaleByRStdDevState(mu, nu)

    def update(updates, state, params=None):
        mu = update_moment(updates, state.mu, decay, 1)
        nu = update_moment(updates, state.nu, decay, 2)
        if correct:
            count = safe_increment(state.count)
            mu_hat, nu_hat = (_base.bias_correction(mu, decay, count),
                              _base.bias_correction(nu, decay, count))
        else:
            mu_hat, nu_hat = mu, nu
        updates = tree_map(lambda m, n, g: fnp.multiply(
            rescale(fnp.subtract(n, fnp.multiply(m, m))), g), mu_hat, nu_hat, updates)
        if correct:
            return updates, ScaleByRStdDevWithCountState(count, mu, nu)
        return updates, ScaleByRStdDevState(mu, nu)

    return GradientTransformation(init, update)


class ScaleByRssState(NamedTuple):
    """Adagrad's running sum of squared updates (optax.ScaleByRssState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_rss().init(np.zeros(1))
    ScaleByRssState(sum_of_squares=array([0.1]))
    """

    sum_of_squares: Any


def scale_by_rss(initial_accumulator_value: float = 0.1, eps: float = 1e-7
                 ) -> GradientTransformation:
    """Divides the updates by the root of the sum of all squared updates so far (Adagrad).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_rss(0.0, 0.0)
    >>> t.update(np.array([-3.0]), t.init(np.zeros(1)))[0]
    array([-1.])
    """
    def init(params):
        return ScaleByRssState(full_like(params, initial_accumulator_value))

    def update(updates, state, params=None):
        sums = tree_map(lambda g, t: fnp.add(fnp.multiply(g, g), t), updates,
                        state.sum_of_squares)
        inv = tree_map(lambda t: fnp.where(fnp.greater(t, 0),
                                           fnp.divide(1, fnp.sqrt(fnp.add(t, eps))), 0.0), sums)
        return tree_map(fnp.multiply, inv, updates), ScaleByRssState(sums)

    return GradientTransformation(init, update)


class WeightDecaySchedule(NamedTuple):
    """The step count a weight-decay schedule is evaluated at.

    >>> from functrans import optimizers as optim
    >>> optim.add_decayed_weights(lambda k: 0.1).init([1.0])
    WeightDecaySchedule(count=array(0, dtype=int32))
    """

    count: Any


def add_decayed_weights(weight_decay: float | Schedule = 0.0, mask=None
                        ) -> GradientTransformation:
    """updates + weight_decay * params (decoupled weight decay), on the leaves `mask` selects;
    weight_decay may be a schedule.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.add_decayed_weights(0.1)
    >>> t.update(np.array([1.0]), t.init(None), np.array([5.0]))[0]
    array([1.5])
    """
    def init(params):
        return WeightDecaySchedule(zero_count()) if callable(weight_decay) else EmptyState()

    def update(updates, state, params=None):
        if params is None:
            raise ArgumentError("add_decayed_weights needs the parameters: call "
                                "update(updates, state, params), as adamw's update requires.")
        new_state = WeightDecaySchedule(safe_increment(state.count)) if callable(weight_decay) \
            else state
        if isinstance(weight_decay, int | float) and weight_decay == 0.0:
            return updates, new_state
        s = weight_decay(state.count) if callable(weight_decay) else weight_decay
        return tree_map(lambda g, p: fnp.add(g, fnp.multiply(s, p)), updates, params), new_state

    tx = GradientTransformation(init, owning(update))
    return tx if mask is None else masked(tx, mask)


def clip(max_delta: float) -> GradientTransformation:
    """Clips each element of the updates to [-max_delta, max_delta].

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.clip(1.0).update(np.array([3.0, -0.5, -2.0]), optim.EmptyState())[0]
    array([ 1. , -0.5, -1. ])
    """
    def update(updates, state, params=None):
        return tree_map(lambda g: fnp.clip(g, -max_delta, max_delta), updates), state
    return GradientTransformation(_init_empty_state, update)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scales the updates down so that their global norm is at most max_norm.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.clip_by_global_norm(1.0).update([np.array([3.0]), np.array([4.0])],
    ...                                       optim.EmptyState())[0]
    [array([0.6]), array([0.8])]
    """
    def update(updates, state, params=None):
        norm = global_norm(updates)
        keep = fnp.less(norm, max_norm)
        # dividing by 1 where the norm is kept: no 0/0 when the updates are all zero
        safe_norm = fnp.where(keep, 1.0, norm)
        return tree_map(lambda t: fnp.where(keep, t, fnp.multiply(
            fnp.divide(t, fnp.astype(safe_norm, fnp.result_type(t))), max_norm)), updates), state

    return GradientTransformation(_init_empty_state, update)


class ScaleByLBFGSState(NamedTuple):
    """L-BFGS's step count, last parameters and updates, and its memory of their differences
    (optax.ScaleByLBFGSState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.scale_by_lbfgs(memory_size=2).init(np.zeros(1)).diff_params_memory
    array([[0.],
           [0.]])
    """

    count: Any
    params: Any
    updates: Any
    diff_params_memory: Any
    diff_updates_memory: Any
    weights_memory: Any


def _tree_vdot(a, b):
    total = 0
    for x, y in zip(tree_leaves(a), tree_leaves(b)):
        total = fnp.add(total, fnp.vdot(x, y))
    return total


def _memory_row(memory, idx):
    return tree_map(lambda m: fnp.take(m, idx, axis=0), memory)


def _precondition_by_lbfgs(updates, diff_params_memory, diff_updates_memory, weights_memory,
                           identity_scale, memory_idx):
    """The two-loop recursion: updates times L-BFGS's inverse-Hessian estimate, the memory
    read from its oldest entry (memory_idx) on, as optax's scans read it."""
    memory_size = fnp.shape(weights_memory)[0]
    indices = [fnp.mod(fnp.add(memory_idx, k), memory_size) for k in range(memory_size)]
    vec, alphas = updates, [None] * memory_size
    for k in reversed(range(memory_size)):
        idx = indices[k]
        dwi, dui = _memory_row(diff_params_memory, idx), _memory_row(diff_updates_memory, idx)
        alphas[k] = fnp.multiply(fnp.take(weights_memory, idx), _tree_vdot(dwi, vec))
        vec = tree_map(lambda v, u: fnp.add(v, fnp.multiply(fnp.negative(alphas[k]), u)),
                       vec, dui)
    vec = tree_map(lambda v: fnp.multiply(identity_scale, v), vec)
    for k in range(memory_size):
        idx = indices[k]
        dwi, dui = _memory_row(diff_params_memory, idx), _memory_row(diff_updates_memory, idx)
        beta = fnp.multiply(fnp.take(weights_memory, idx), _tree_vdot(dui, vec))
        vec = tree_map(lambda v, w: fnp.add(v, fnp.multiply(fnp.subtract(alphas[k], beta), w)),
                       vec, dwi)
    return vec


def scale_by_lbfgs(memory_size: int = 10, scale_init_precond: bool = True
                   ) -> GradientTransformation:
    """Multiplies the updates by L-BFGS's estimate of the inverse Hessian, from the last
    memory_size differences of parameters and updates (optax.scale_by_lbfgs); update needs
    the parameters.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.scale_by_lbfgs()
    >>> t.update(np.array([3.0, 4.0]), t.init(np.zeros(2)), np.zeros(2))[0]  # first: g / |g|
    array([0.6, 0.8])
    """
    if memory_size < 1:
        raise ArgumentError(f"scale_by_lbfgs: memory_size must be >= 1, got {memory_size}.")

    def init(params):
        def stacked():
            return tree_map(lambda p: fnp.zeros((memory_size,) + fnp.shape(p),
                                                dtype=fnp.result_type(p)), params)
        return ScaleByLBFGSState(zero_count(), full_like(params, 0), full_like(params, 0),
                                 stacked(), stacked(), fnp.zeros(memory_size))

    def update(updates, state, params=None):
        if params is None:
            raise ArgumentError("scale_by_lbfgs needs the parameters: call update(updates, "
                                "state, params).")
        memory_idx = fnp.mod(state.count, memory_size)
        prev_idx = fnp.mod(fnp.subtract(state.count, 1), memory_size)
        diff_params = tree_map(fnp.subtract, params, state.params)
        diff_updates = tree_map(fnp.subtract, updates, state.updates)
        vdot = _tree_vdot(diff_updates, diff_params)
        weight = fnp.where(fnp.equal(vdot, 0.0), 0.0,
                           fnp.divide(1.0, fnp.where(fnp.equal(vdot, 0.0), 1.0, vdot)))
        started = fnp.greater(state.count, 0)
        diff_params, diff_updates, weight = tree_map(
            lambda x: fnp.where(started, x, fnp.zeros_like(x)),
            (diff_params, diff_updates, weight))

        def set_row(memory, row):
            # memory.at[prev_idx].set(row), as a select: eager numpy arrays and traced alike
            hit = fnp.equal(fnp.arange(memory_size), prev_idx)
            return fnp.where(fnp.reshape(hit, (memory_size,) + (1,) * fnp.ndim(row)),
                             fnp.expand_dims(row, 0), memory)

        diff_params_memory = tree_map(set_row, state.diff_params_memory, diff_params)
        diff_updates_memory = tree_map(set_row, state.diff_updates_memory, diff_updates)
        weights_memory = set_row(state.weights_memory, weight)
        if scale_init_precond:
            numerator = _tree_vdot(diff_updates, diff_params)
            denominator = sum_of_squares(diff_updates)
            positive = fnp.greater(denominator, 0.0)
            identity_scale = fnp.where(positive, fnp.divide(
                numerator, fnp.where(positive, denominator, 1.0)), 1.0)
            capped_inv_norm = fnp.minimum(1.0, fnp.divide(1.0, global_norm(updates)))
            identity_scale = fnp.where(started, identity_scale, capped_inv_norm)
        else:
            identity_scale = 1.0
        precond = _precondition_by_lbfgs(updates, diff_params_memory, diff_updates_memory,
                                         weights_memory, identity_scale, memory_idx)
        return precond, ScaleByLBFGSState(safe_increment(state.count), params, updates,
                                           diff_params_memory, diff_updates_memory,
                                           weights_memory)

    return GradientTransformation(init, owning(update))
