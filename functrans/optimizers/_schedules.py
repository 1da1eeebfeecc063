"""Learning-rate schedules under optax's names and formulas: functions of the step count.

Each schedule computes with functrans.numpy, so the count may be traced (inside a jitted step,
where optimisers pass their int32 counter); given a Python int it returns a Python float.
Dtypes follow JAX's: an int32 count divided by an int gives float32 there (jnp.true_divide), so
optax's linear, polynomial and exponential schedules run in float32 on its int32 counter even
with float64 enabled; they do here too, so that training runs agree with optax bit for bit.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans.errors import ArgumentError

Schedule = Callable[[Any], Any]


def _python_float_for_python_step(schedule: Schedule) -> Schedule:
    """A Python int step gives a Python float (printable, comparable) rather than a 0-d array."""
    @functools.wraps(schedule)
    def wrapped(count):
        value = schedule(count)
        return float(value) if isinstance(count, int) and not isinstance(count, bool) else value
    return wrapped


def _count_over(count, n: int):
    """count / n in JAX's dtype: float32 for an int32 count (optax's step counter), float64 for
    a Python int or an int64."""
    if not isinstance(count, int):
        dtype = fnp.result_type(count)
        if np.issubdtype(dtype, np.integer):
            count = fnp.astype(count, np.float32 if dtype.itemsize <= 4 else np.float64)
    return fnp.divide(count, n)


def constant_schedule(value: float) -> Schedule:
    """The same value at every step.

    >>> from functrans import optimizers as optim
    >>> optim.constant_schedule(0.1)(1000)
    0.1
    """
    return lambda count: value


def polynomial_schedule(init_value: float, end_value: float, power: float,
                        transition_steps: int, transition_begin: int = 0) -> Schedule:
    """From init_value to end_value over transition_steps, as (1 - fraction done) ** power,
    starting at transition_begin; a constant init_value when transition_steps <= 0 (optax).

    >>> from functrans import optimizers as optim
    >>> optim.polynomial_schedule(1.0, 0.0, 2, 10)(5)
    0.25
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)
    transition_begin = max(transition_begin, 0)

    @_python_float_for_python_step
    def schedule(count):
        count = fnp.clip(fnp.subtract(count, transition_begin), 0, transition_steps)
        frac = fnp.subtract(1, _count_over(count, transition_steps))
        return fnp.add(fnp.multiply(init_value - end_value, fnp.power(frac, power)), end_value)

    return schedule


def linear_schedule(init_value: float, end_value: float, transition_steps: int,
                    transition_begin: int = 0) -> Schedule:
    """A straight line from init_value to end_value over transition_steps, flat after.

    >>> from functrans import optimizers as optim
    >>> [optim.linear_schedule(0.0, 1.0, 4)(k) for k in (0, 2, 4, 9)]
    [0.0, 0.5, 1.0, 1.0]
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def exponential_decay(init_value: float, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: float | None = None) -> Schedule:
    """init_value * decay_rate ** ((count - transition_begin) / transition_steps), the
    exponent floored with `staircase`; bounded by end_value when given (a floor when the rate
    decays, a ceiling when it grows).

    Unlike optax, which turns a non-positive transition_steps or a zero decay_rate silently into
    a constant schedule, these raise ArgumentError.

    >>> from functrans import optimizers as optim
    >>> optim.exponential_decay(1.0, 10, 0.5)(20)
    0.25
    """
    if transition_steps <= 0:
        raise ArgumentError(f"exponential_decay: transition_steps must be positive, got "
                            f"{transition_steps}; for a constant rate use constant_schedule.")
    if decay_rate <= 0:
        raise ArgumentError(f"exponential_decay: decay_rate must be positive, got {decay_rate} "
                            "(a rate of 0.5 halves the value every transition_steps).")
    transition_begin = max(transition_begin, 0)
    clip = fnp.maximum if decay_rate < 1.0 else fnp.minimum

    @_python_float_for_python_step
    def schedule(count):
        decreased = fnp.subtract(count, transition_begin)
        p = _count_over(decreased, transition_steps)
        if staircase:
            p = fnp.floor(p)
        value = fnp.where(fnp.less_equal(decreased, 0), init_value,
                          fnp.multiply(init_value, fnp.power(decay_rate, p)))
        return value if end_value is None else clip(value, end_value)

    return schedule


def piecewise_constant_schedule(init_value: float,
                                boundaries_and_scales: dict[int, float] | None = None
                                ) -> Schedule:
    """init_value, multiplied by scales[b] from each boundary b on (optax's form).

    >>> from functrans import optimizers as optim
    >>> s = optim.piecewise_constant_schedule(1.0, {10: 0.5, 20: 0.1})
    >>> [s(k) for k in (0, 10, 25)]
    [1.0, 0.5, 0.05]
    """
    pairs = sorted((boundaries_and_scales or {}).items())
    if any(scale < 0 for _, scale in pairs):
        raise ArgumentError(f"piecewise_constant_schedule: the scales must be non-negative, got "
                            f"{dict(pairs)}.")

    @_python_float_for_python_step
    def schedule(count):
        v = init_value
        for threshold, scale in pairs:
            # 1 before the threshold, 0 from it on (optax's formula, so values agree bit for bit)
            before = fnp.maximum(0.0, fnp.sign(fnp.subtract(threshold, count)))
            v = fnp.add(fnp.multiply(v, before),
                        fnp.multiply(fnp.multiply(fnp.subtract(1, before), scale), v))
        return fnp.asarray(v)

    return schedule


def piecewise_constant(boundaries: Sequence[int], values: Sequence[float]) -> Schedule:
    """values[i] for boundaries[i-1] <= step < boundaries[i] (len(values) = len(boundaries)+1);
    the values form of `piecewise_constant_schedule`.

    >>> from functrans import optimizers as optim
    >>> [optim.piecewise_constant([10, 20], [1.0, 0.1, 0.01])(s) for s in (0, 10, 25)]
    [1.0, 0.1, 0.01]
    """
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ArgumentError(f"piecewise_constant: needs one more value than boundaries, got "
                            f"{len(values)} values and {len(boundaries)} boundaries.")

    @_python_float_for_python_step
    def schedule(count):
        v = fnp.asarray(values[0])
        for b, nxt in zip(boundaries, values[1:]):
            v = fnp.where(fnp.greater_equal(count, b), nxt, v)
        return v

    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0,
                          exponent: float = 1.0) -> Schedule:
    """init_value * ((1 - alpha) * (0.5 (1 + cos(pi t / decay_steps))) ** exponent + alpha),
    t the count held at decay_steps: from init_value down to alpha * init_value, then flat.

    >>> from functrans import optimizers as optim
    >>> round(optim.cosine_decay_schedule(1.0, 100)(50), 12)
    0.5
    """
    if not decay_steps > 0:
        raise ArgumentError(f"cosine_decay_schedule: decay_steps must be positive, got "
                            f"{decay_steps}.")

    @_python_float_for_python_step
    def schedule(count):
        count = fnp.minimum(float(count) if isinstance(count, int) else count, float(decay_steps))
        cosine = fnp.multiply(0.5, fnp.add(1, fnp.cos(
            fnp.divide(fnp.multiply(math.pi, count), float(decay_steps)))))
        decayed = fnp.add(fnp.multiply(1 - alpha, fnp.power(cosine, exponent)), alpha)
        return fnp.multiply(init_value, decayed)

    return schedule


def cosine_decay(init_value: float, decay_steps: int, alpha: float = 0.0) -> Schedule:
    """The earlier name of `cosine_decay_schedule`.

    >>> from functrans import optimizers as optim
    >>> optim.cosine_decay(2.0, 10, alpha=0.1)(10)
    0.2
    """
    return cosine_decay_schedule(init_value, decay_steps, alpha)


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """schedules[0] until boundaries[0], then schedules[1] counted from there, and so on.

    >>> from functrans import optimizers as optim
    >>> s = optim.join_schedules([optim.constant_schedule(1.0),
    ...                           optim.linear_schedule(1.0, 0.0, 10)], [5])
    >>> [s(k) for k in (0, 5, 10)]
    [1.0, 1.0, 0.5]
    """
    schedules, boundaries = list(schedules), list(boundaries)
    if len(schedules) != len(boundaries) + 1:
        raise ArgumentError(f"join_schedules: needs one more schedule than boundaries, got "
                            f"{len(schedules)} schedules and {len(boundaries)} boundaries.")

    @_python_float_for_python_step
    def schedule(count):
        pieces = [schedules[0](count)] + [later(fnp.subtract(count, boundary))
                                          for boundary, later in zip(boundaries, schedules[1:])]
        if not isinstance(count, int) and any(fnp.result_type(p) == np.float32 for p in pieces):
            # on an int32 count JAX gives the count-dividing schedules float32 and the others
            # weakly typed float64, which the float32 pieces then round (as optax's join does)
            pieces = [fnp.astype(p, np.float32) for p in pieces]
        out = pieces[0]
        for boundary, piece in zip(boundaries, pieces[1:]):
            out = fnp.where(fnp.less(count, boundary), out, piece)
        return out

    return schedule


def warmup_cosine_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                 decay_steps: int, end_value: float = 0.0,
                                 exponent: float = 1.0) -> Schedule:
    """Linear from init_value to peak_value over warmup_steps, then a cosine decay to
    end_value at decay_steps (counted from the start, warmup included).

    >>> from functrans import optimizers as optim
    >>> s = optim.warmup_cosine_decay_schedule(0.0, 1.0, 10, 110)
    >>> [round(s(k), 12) for k in (0, 5, 10, 60, 110)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha,
                                                 exponent)], [warmup_steps])


def warmup_exponential_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                      transition_steps: int, decay_rate: float,
                                      transition_begin: int = 0, staircase: bool = False,
                                      end_value: float | None = None) -> Schedule:
    """Linear from init_value to peak_value over warmup_steps, then an exponential decay.

    >>> from functrans import optimizers as optim
    >>> s = optim.warmup_exponential_decay_schedule(0.0, 1.0, 10, 10, 0.5)
    >>> [s(k) for k in (5, 10, 20)]
    [0.5, 1.0, 0.5]
    """
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           exponential_decay(peak_value, transition_steps, decay_rate,
                                             transition_begin, staircase, end_value)],
                          [warmup_steps])
