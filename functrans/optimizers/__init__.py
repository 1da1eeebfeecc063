"""Optimisers over pytrees of parameters under optax's names, with optax's shape.

An optimiser is a `GradientTransformation`: a pair of pure functions `init(params) -> state` and
`update(updates, state, params=None) -> (updates, state)`; `apply_updates(params, updates)` adds
the updates. Optimisers are chains of small transformations (`chain(clip_by_global_norm(1.0),
adam(1e-3))`), and learning rates are numbers or schedules (functions of the step count, which
each optimiser keeps in its state as an int32, as optax does). The arithmetic goes through
functrans.numpy, so a whole training step can be traced by jit; in float64 the values equal
optax's step for step.

>>> import numpy as np
>>> from functrans import optimizers as optim
>>> opt = optim.adam(0.1)
>>> params = {"w": np.array([1.0, -2.0])}
>>> state = opt.init(params)
>>> updates, state = opt.update({"w": np.array([0.5, -0.5])}, state, params)
>>> optim.apply_updates(params, updates)["w"].round(6).tolist()
[0.9, -1.9]

Not here (yet): optax's zoom line search, which `optax.lbfgs` uses by default (it needs the loss
inside `update`); `lbfgs(learning_rate, linesearch=None)` and `scale_by_lbfgs` are optax's.
For L-BFGS with a line search use `minimize_lbfgs`, which hands the flattened parameters to
scipy's L-BFGS-B (scipy is an optional extra), as physics-informed networks are usually
finished after Adam.
"""

from __future__ import annotations

from functrans.optimizers._aliases import adagrad, adam, adamw, lbfgs, rmsprop, sgd
from functrans.optimizers._base import (EmptyState, GradientTransformation,
                                        GradientTransformationExtraArgs, MaskedNode, MaskedState,
                                        Schedule, apply_updates, chain, global_norm, identity,
                                        masked, with_extra_args_support)
from functrans.optimizers._schedules import (constant_schedule, cosine_decay,
                                             cosine_decay_schedule, exponential_decay,
                                             join_schedules, linear_schedule, piecewise_constant,
                                             piecewise_constant_schedule, polynomial_schedule,
                                             warmup_cosine_decay_schedule,
                                             warmup_exponential_decay_schedule)
from functrans.optimizers._scipy_lbfgs import LBFGSResult, minimize_lbfgs
from functrans.optimizers._transforms import (
    ScaleByAdamState, ScaleByLBFGSState, ScaleByRmsState, ScaleByRmsWithCountState,
    ScaleByRssState, ScaleByRStdDevState, ScaleByRStdDevWithCountState, ScaleByScheduleState,
    TraceState, WeightDecaySchedule, add_decayed_weights, clip, clip_by_global_norm, scale,
    scale_by_adam, scale_by_lbfgs, scale_by_learning_rate, scale_by_rms, scale_by_rss,
    scale_by_schedule, scale_by_stddev, trace)

Optimizer = GradientTransformation  # the name this module used before it took optax's

__all__ = [
    # the transformation type and its combinators
    "GradientTransformation", "GradientTransformationExtraArgs", "Optimizer", "EmptyState",
    "apply_updates", "chain", "identity", "masked", "MaskedState", "MaskedNode",
    "with_extra_args_support", "global_norm", "Schedule",
    # optimisers
    "sgd", "adam", "adamw", "rmsprop", "adagrad", "lbfgs",
    # transformations and their states
    "scale", "scale_by_learning_rate", "scale_by_schedule", "ScaleByScheduleState",
    "scale_by_adam", "ScaleByAdamState", "trace", "TraceState", "scale_by_rms",
    "ScaleByRmsState", "ScaleByRmsWithCountState", "scale_by_stddev", "ScaleByRStdDevState",
    "ScaleByRStdDevWithCountState", "scale_by_rss", "ScaleByRssState", "add_decayed_weights",
    "WeightDecaySchedule", "clip", "clip_by_global_norm", "scale_by_lbfgs", "ScaleByLBFGSState",
    # schedules
    "constant_schedule", "exponential_decay", "piecewise_constant_schedule",
    "piecewise_constant", "cosine_decay_schedule", "cosine_decay", "polynomial_schedule",
    "linear_schedule", "join_schedules", "warmup_cosine_decay_schedule",
    "warmup_exponential_decay_schedule",
    # L-BFGS through scipy
    "minimize_lbfgs", "LBFGSResult",
]
