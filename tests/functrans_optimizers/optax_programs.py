"""Programs run with both optax (JAX with float64 enabled) and functrans.optimizers, and the
records of optax's results in optax_fixtures.json, which the tests compare functrans against
(live optax too, when installed). Re-record with optax installed:
`python tests/functrans_optimizers/optax_programs.py`.

Each optimiser trains a small tanh network for STEPS steps from the same start; the record
holds the parameters after the steps in RECORDED_STEPS and the leaves of the final state (the
step counts among them). Each schedule is recorded at every count in COUNTS, given as Python
ints (float64 values) and as int32 arrays, optax's step counter (where optax's linear,
polynomial and exponential schedules compute in float32, JAX's dtype for int32 / int).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optax_fixtures.json")
STEPS = 50
RECORDED_STEPS = [1, 2, 3, 4, 5, 10, 20, 30, 40, 50]
COUNTS = list(range(0, 61))

_rng = np.random.default_rng(7)
PARAMS0 = {"w1": _rng.standard_normal((2, 3)), "b1": 0.1 * _rng.standard_normal(3),
           "w2": _rng.standard_normal(3)}
X = _rng.standard_normal((5, 2))
Y = _rng.standard_normal(5)


def loss(np_, params):
    """Mean squared error of a one-hidden-layer tanh network."""
    h = np_.tanh(X @ params["w1"] + params["b1"])
    r = h @ params["w2"] - Y
    return np_.mean(r * r)


# name -> program(optimizers module): a GradientTransformation
OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_momentum": lambda o: o.sgd(0.05, momentum=0.9),
    "sgd_nesterov": lambda o: o.sgd(0.05, momentum=0.8, nesterov=True),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.2, 10, 0.5,
                                                                 transition_begin=5)),
    "adam": lambda o: o.adam(0.05),
    "adam_betas_eps_root": lambda o: o.adam(0.03, b1=0.8, b2=0.95, eps=1e-6, eps_root=1e-10),
    "adam_nesterov": lambda o: o.adam(0.02, nesterov=True),
    "adam_cosine": lambda o: o.adam(o.cosine_decay_schedule(0.05, 30, alpha=0.1)),
    "adam_warmup_cosine": lambda o: o.adam(o.warmup_cosine_decay_schedule(
        0.0, 0.05, 10, 40, end_value=1e-3)),
    "adamw": lambda o: o.adamw(0.05, weight_decay=0.1),
    "adamw_mask": lambda o: o.adamw(0.05, weight_decay=0.3,
                                    mask={"w1": True, "b1": False, "w2": True}),
    "adamw_scheduled_decay": lambda o: o.adamw(0.05, weight_decay=o.linear_schedule(0.0, 0.2,
                                                                                    20)),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_centered_momentum": lambda o: o.rmsprop(0.01, decay=0.8, centered=True,
                                                     momentum=0.5),
    "rmsprop_nesterov_eps_outside": lambda o: o.rmsprop(0.01, momentum=0.7, nesterov=True,
                                                        eps_in_sqrt=False, initial_scale=0.1),
    "rmsprop_bias_correction": lambda o: o.rmsprop(0.01, bias_correction=True),
    # at step 1 the centred, bias-corrected variance is g*g - g*g: eps keeps it well-posed
    "rmsprop_centered_bias_correction": lambda o: o.rmsprop(0.01, centered=True, eps=0.1,
                                                            bias_correction=True),
    "adagrad": lambda o: o.adagrad(0.1),
    "chain_clip_by_global_norm_adam": lambda o: o.chain(o.clip_by_global_norm(0.3),
                                                        o.adam(0.05)),
    "chain_clip_decay_sgd": lambda o: o.chain(
        o.clip(0.05), o.add_decayed_weights(1e-2), o.sgd(o.piecewise_constant_schedule(
            0.5, {10: 0.5, 25: 0.2}), momentum=0.9)),
    "chain_scale_by_adam_schedule": lambda o: o.chain(
        o.scale_by_adam(b1=0.5), o.scale_by_schedule(o.linear_schedule(-0.05, -0.01, 30))),
    "chain_trace_scale": lambda o: o.chain(o.trace(0.6), o.scale(-0.02)),
    # L-BFGS without optax's default zoom line search (not in functrans yet)
    "lbfgs_without_linesearch": lambda o: o.lbfgs(0.02, linesearch=None),
    "chain_scale_by_lbfgs_memory_3": lambda o: o.chain(
        o.scale_by_lbfgs(memory_size=3, scale_init_precond=False), o.scale(-0.05)),
}

# name -> program(optimizers module): a schedule
SCHEDULES = {
    "constant": lambda o: o.constant_schedule(0.3),
    "exponential_decay": lambda o: o.exponential_decay(1e-2, 7, 0.3),
    "exponential_decay_begin_staircase": lambda o: o.exponential_decay(
        1.0, 4, 0.5, transition_begin=10, staircase=True),
    "exponential_decay_end_value": lambda o: o.exponential_decay(1.0, 2, 0.5, end_value=0.1),
    "exponential_growth_end_value": lambda o: o.exponential_decay(0.1, 5, 1.5, end_value=2.0),
    "piecewise_constant_schedule": lambda o: o.piecewise_constant_schedule(
        2.0, {5: 0.5, 20: 0.1, 40: 3.0}),
    "cosine_decay_schedule": lambda o: o.cosine_decay_schedule(2.0, 40, alpha=0.1),
    "cosine_decay_schedule_exponent": lambda o: o.cosine_decay_schedule(1.0, 30,
                                                                        exponent=2.0),
    "warmup_cosine_decay_schedule": lambda o: o.warmup_cosine_decay_schedule(
        1e-4, 1e-2, 10, 50, end_value=1e-5),
    "warmup_exponential_decay_schedule": lambda o: o.warmup_exponential_decay_schedule(
        0.0, 1.0, 8, 6, 0.7, transition_begin=4, end_value=0.05),
    "linear_schedule": lambda o: o.linear_schedule(1.0, 0.1, 25, transition_begin=10),
    "polynomial_schedule": lambda o: o.polynomial_schedule(1.0, 0.01, 3, 45),
    "join_schedules": lambda o: o.join_schedules(
        [o.constant_schedule(1.0), o.linear_schedule(1.0, 0.0, 10),
         o.cosine_decay_schedule(0.5, 20)], [15, 30]),
}


def train(optimizers, np_, grad, jit, opt, params):
    """STEPS steps of `opt` from `params`: the parameters after each step, the final state."""
    def step(params, state):
        updates, state = opt.update(grad(lambda p: loss(np_, p))(params), state, params)
        return optimizers.apply_updates(params, updates), state

    step = jit(step)
    state = opt.init(params)
    history = []
    for _ in range(STEPS):
        params, state = step(params, state)
        history.append(params)
    return history, state


def flat(tree, leaves):
    return [np.asarray(x, np.float64).ravel().tolist() for x in leaves(tree)]


def record():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import optax

    out = {"optax": optax.__version__, "jax": jax.__version__, "optimizers": {},
           "schedules": {}}
    for name, make in OPTIMIZERS.items():
        history, state = train(optax, jnp, jax.grad, lambda f: f, make(optax), PARAMS0)
        out["optimizers"][name] = {
            "params": {str(k): flat(history[k - 1], jax.tree.leaves) for k in RECORDED_STEPS},
            "state": flat(state, jax.tree.leaves)}
    for name, make in SCHEDULES.items():
        s = make(optax)
        out["schedules"][name] = {
            "python": [float(s(k)) for k in COUNTS],
            "int32": [float(s(jnp.int32(k))) for k in COUNTS],
            "int32_dtype": str(jnp.asarray(s(jnp.int32(1))).dtype)}
    with open(FIXTURES, "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    record()
    print(f"wrote {FIXTURES}", file=sys.stderr)
