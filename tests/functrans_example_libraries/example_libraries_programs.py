"""Programs run with both jax.example_libraries (float64 enabled) and
functrans.example_libraries, and the records of JAX's results in jax_fixtures.json, which the
tests compare functrans against (live JAX too, when installed). Re-record with JAX installed:
`python tests/functrans_example_libraries/example_libraries_programs.py`.

Each stax network is initialised from several keys (the record holds its output shape and
every parameter) and applied to a fixed input (output and the gradient of a weighted sum with
respect to the parameters). Each optimiser trains a stax network for STEPS jitted steps; the
record holds the parameters after the steps in RECORDED_STEPS.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_fixtures.json")
KEYS = [0, 2**31 - 1]
STEPS = 30
RECORDED_STEPS = [1, 2, 5, 10, 20, 30]

_rng = np.random.default_rng(3)
X_VEC = _rng.standard_normal((6, 3))
X_IMG = _rng.standard_normal((2, 7, 6, 2))
Y = _rng.standard_normal((6, 1))


# name -> (program(stax) -> (init_fun, apply_fun), input shape, input)
def _mlp(s):
    return s.serial(s.Dense(5), s.Tanh, s.Dense(4), s.Relu, s.Dense(4, W_init=s.randn(0.5)),
                    s.Sigmoid, s.Dense(3), s.Elu, s.Dense(3), s.LeakyRelu, s.Dense(3),
                    s.Softplus, s.Dense(3), s.Gelu, s.Dense(3), s.Selu, s.Identity, s.Exp,
                    s.Dense(2), s.Softmax)


def _branches(s):
    return s.serial(s.shape_dependent(lambda shape: s.Dense(shape[-1] + 1)), s.FanOut(3),
                    s.parallel(s.Dense(2), s.serial(s.Tanh, s.Dense(2)), s.Identity),
                    s.parallel(s.Identity, s.Relu, s.Dense(2)),
                    s.FanOut(2), s.parallel(s.FanInSum, s.FanInConcat()), s.FanInConcat(),
                    s.LogSoftmax)


def _convnet(s):
    return s.serial(s.Conv(3, (3, 2), padding="SAME"), s.Relu,
                    s.Conv(4, (2, 2), strides=(2, 1)), s.BatchNorm(),
                    s.MaxPool((2, 2), padding="SAME"), s.SumPool((1, 2)),
                    s.AvgPool((2, 2), strides=(1, 1), padding="SAME"),
                    s.Flatten, s.Dense(3), s.BatchNorm(axis=(0,)), s.LogSoftmax)


def _conv_layouts(s):
    return s.serial(s.GeneralConv(("NCHW", "OIHW", "NHWC"), 3, (2, 3), strides=(1, 2),
                                  padding=((1, 0), (0, 2))), s.Tanh,
                    s.AvgPool((2, 2), spec="NHWC"), s.Flatten, s.Dense(2))


STAX = {
    "mlp": (_mlp, (-1, 3), X_VEC),
    "branches": (_branches, (-1, 3), X_VEC),
    "convnet": (_convnet, (2, 7, 6, 2), X_IMG),
    "conv_layouts": (_conv_layouts, (2, 2, 7, 6), np.transpose(X_IMG, (0, 3, 1, 2))),
}


def _train_net(s):
    return s.serial(s.Dense(6), s.Tanh, s.Dense(4), s.Tanh, s.Dense(1))


def loss(np_, apply_fun, params):
    r = apply_fun(params, X_VEC) - Y
    return np_.mean(r * r)


# name -> program(optimizers) -> (init_fun, update_fun, get_params)
OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_exponential_decay": lambda o: o.sgd(o.exponential_decay(0.2, 10, 0.5)),
    "sgd_inverse_time_decay": lambda o: o.sgd(o.inverse_time_decay(0.2, 5, 0.5)),
    "sgd_inverse_time_decay_staircase": lambda o: o.sgd(o.inverse_time_decay(0.2, 5, 0.5,
                                                                             staircase=True)),
    "sgd_polynomial_decay": lambda o: o.sgd(o.polynomial_decay(0.2, 20, 0.01, power=2.0)),
    "sgd_piecewise_constant": lambda o: o.sgd(o.piecewise_constant([5, 15], [0.2, 0.1, 0.02])),
    "momentum": lambda o: o.momentum(0.05, 0.9),
    "nesterov": lambda o: o.nesterov(0.05, 0.8),
    "adagrad": lambda o: o.adagrad(0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01, gamma=0.8, momentum=0.7),
    "adam": lambda o: o.adam(0.02),
    "adam_constant_schedule": lambda o: o.adam(o.constant(0.02), b1=0.8, b2=0.9, eps=1e-6),
    "adamax": lambda o: o.adamax(0.02),
    "sm3": lambda o: o.sm3(0.1),
}


# JAX's sm3 keeps the parameter's shape in its state, as pytree leaves, so its step cannot be
# jitted (in JAX either): it trains eagerly
EAGER = {"sm3"}

# optimisers also trained with clip_grads(grads, CLIP) in the step
CLIPPED, CLIP = ["sgd", "adam"], 0.5


def train(stax, optimizers, random, np_, grad, jit, name, clip=None):
    """STEPS jitted steps of optimiser `name` on the training network; parameters by step."""
    init_fun, apply_fun = _train_net(stax)
    _, params = init_fun(random.PRNGKey(0), (-1, 3))
    opt_init, opt_update, get_params = OPTIMIZERS[name](optimizers)

    def step(i, state):
        g = grad(lambda p: loss(np_, apply_fun, p))(get_params(state))
        if clip is not None:
            g = optimizers.clip_grads(g, clip)
        return opt_update(i, g, state)

    step = step if name in EAGER else jit(step)
    state = opt_init(params)
    history = []
    for i in range(STEPS):
        state = step(i, state)
        history.append(get_params(state))
    return history, state


def stax_record(stax, random, np_, grad, leaves, name, key):
    make, in_shape, x = STAX[name]
    init_fun, apply_fun = make(stax)
    out_shape, params = init_fun(random.PRNGKey(key), in_shape)
    out = apply_fun(params, x)
    w = np.cos(np.arange(np.size(out))).reshape(np.shape(out))
    g = grad(lambda p: np_.sum(apply_fun(p, x) * w))(params)
    return {"out_shape": [int(d) for d in out_shape], "params": flat(params, leaves),
            "out": np.asarray(out).ravel().tolist(), "grad": flat(g, leaves)}


def flat(tree, leaves):
    return [np.asarray(v, np.float64).ravel().tolist() for v in leaves(tree)]


def record():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.example_libraries import optimizers, stax

    out = {"jax": jax.__version__, "stax": {}, "optimizers": {}}
    for name in STAX:
        out["stax"][name] = {str(k): stax_record(stax, jax.random, jnp, jax.grad,
                                                 jax.tree.leaves, name, k) for k in KEYS}
    for name in OPTIMIZERS:
        for clip in (None, CLIP) if name in CLIPPED else (None,):
            history, _ = train(stax, optimizers, jax.random, jnp, jax.grad, jax.jit, name, clip)
            key = name if clip is None else f"{name}_clip_grads"
            out["optimizers"][key] = {str(k): flat(history[k - 1], jax.tree.leaves)
                                      for k in RECORDED_STEPS}
    with open(FIXTURES, "w") as f:
        json.dump(out, f, indent=0)


if __name__ == "__main__":
    record()
    print(f"wrote {FIXTURES}", file=sys.stderr)
