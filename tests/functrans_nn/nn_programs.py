"""Programs run with both jax.nn (float64 enabled) and functrans.nn, and the records of JAX's
results in jax_fixtures.json, which the tests compare functrans against (live JAX too, when
installed). Re-record with JAX installed: `python tests/functrans_nn/nn_programs.py`.

Activations are recorded with their first and second derivatives at points that include
every kink (0, +-1, 6), so that the derivative conventions at kinks are JAX's. Vector
functions (softmax, log_softmax, logsumexp, standardize) are recorded with the gradient of a
weighted sum. Initializers are recorded for several keys; their floats are compared in ulps
against the bound each lists: 0 for those made of uniform bits (equal to JAX's), and for the
normal ones the bound of the functrans.random sampler underneath plus one rounding of the
scale (the worst seen over 40 random keys was about half of it). Orthogonal matrices are
compared with an absolute tolerance (their QR is computed another way here).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_fixtures.json")

# every kink of the activations below, both sides of each, and the tails
POINTS = [-40.0, -7.0, -6.0, -2.5, -1.0 - 2**-20, -1.0, -1.0 + 2**-20, -0.5, -1e-3, 0.0, 1e-3,
          0.5, 1.0 - 2**-20, 1.0, 1.0 + 2**-20, 2.0, 6.0 - 2**-20, 6.0, 6.0 + 2**-20, 9.0, 40.0]

# name -> program(nn module, scalar x)
ACTIVATIONS = {
    "relu": lambda nn, x: nn.relu(x),
    "relu6": lambda nn, x: nn.relu6(x),
    "gelu_tanh": lambda nn, x: nn.gelu(x),
    "gelu_erf": lambda nn, x: nn.gelu(x, approximate=False),
    "silu": lambda nn, x: nn.silu(x),
    "swish": lambda nn, x: nn.swish(x),
    "elu": lambda nn, x: nn.elu(x),
    "elu_alpha": lambda nn, x: nn.elu(x, 0.3),
    "selu": lambda nn, x: nn.selu(x),
    "celu": lambda nn, x: nn.celu(x),
    "celu_alpha": lambda nn, x: nn.celu(x, 2.5),
    "softplus": lambda nn, x: nn.softplus(x),
    "sigmoid": lambda nn, x: nn.sigmoid(x),
    "log_sigmoid": lambda nn, x: nn.log_sigmoid(x),
    "soft_sign": lambda nn, x: nn.soft_sign(x),
    "hard_tanh": lambda nn, x: nn.hard_tanh(x),
    "leaky_relu": lambda nn, x: nn.leaky_relu(x),
    "leaky_relu_slope": lambda nn, x: nn.leaky_relu(x, 0.2),
}

X = [[0.3, -1.2, 2.0, 0.0], [5.0, 5.0, -3.0, 1.0], [-0.7, 0.1, 0.2, 40.0]]
W = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0], [-0.5, 0.75, 1.25, -3.0]]
MASK = [[True, True, False, True], [True, False, True, True], [False, True, True, True]]

# name -> program(nn module, numpy module, x (3, 4)): an array; the tests also take the
# gradient of sum(W * program)
VECTOR = {
    "softmax": lambda nn, np_, x: nn.softmax(x),
    "softmax_axis0": lambda nn, np_, x: nn.softmax(x, axis=0),
    "softmax_where": lambda nn, np_, x: nn.softmax(x, where=np.array(MASK)),
    "log_softmax": lambda nn, np_, x: nn.log_softmax(x),
    "log_softmax_axis0": lambda nn, np_, x: nn.log_softmax(x, axis=0),
    # -inf outside the mask; the weighted sum takes the entries inside it
    "log_softmax_where": lambda nn, np_, x: np_.where(
        np.array(MASK), nn.log_softmax(x, where=np.array(MASK)), 0.0),
    "logsumexp": lambda nn, np_, x: nn.logsumexp(x, axis=1, keepdims=True),
    "logsumexp_all": lambda nn, np_, x: nn.logsumexp(x) * np.ones((3, 4)),
    "standardize": lambda nn, np_, x: nn.standardize(x),
    "standardize_axis0": lambda nn, np_, x: nn.standardize(x, axis=0),
    "standardize_where": lambda nn, np_, x: nn.standardize(x, where=np.array(MASK)),
}

# name -> program(nn module): an array (no derivative)
ONE_HOT = {
    "one_hot": lambda nn: nn.one_hot(np.array([0, 2, 1, 3, -1]), 3),
    "one_hot_axis0": lambda nn: nn.one_hot(np.array([[0, 1], [2, 0]]), 4, axis=0),
    "one_hot_axis1_f32": lambda nn: nn.one_hot(np.array([[0, 1], [2, 0]]), 3,
                                               dtype=np.float32, axis=1),
    "one_hot_int": lambda nn: nn.one_hot(np.array([1, 0]), 2, dtype=np.int32),
}

# name -> (program(initializers module, key), bound in ulps)
INITIALIZERS = {
    "zeros": (lambda i, k: i.zeros(k, (2, 3)), 0),
    "ones_f32": (lambda i, k: i.ones(k, (3,), np.float32), 0),
    "constant": (lambda i, k: i.constant(-0.3)(k, (2, 2)), 0),
    "uniform": (lambda i, k: i.uniform()(k, (3, 4)), 0),
    "uniform_scale_f32": (lambda i, k: i.uniform(3.0)(k, (5,), np.float32), 0),
    "normal": (lambda i, k: i.normal()(k, (3, 4)), 31),
    "normal_f32": (lambda i, k: i.normal(0.5)(k, (6,), np.float32), 4),
    "truncated_normal": (lambda i, k: i.truncated_normal(0.7)(k, (3, 4)), 41),
    "truncated_normal_bounds": (lambda i, k: i.truncated_normal(1.0, lower=-1.0,
                                                                upper=0.5)(k, (6,)), 41),
    "glorot_uniform": (lambda i, k: i.glorot_uniform()(k, (4, 5)), 0),
    "glorot_normal": (lambda i, k: i.glorot_normal()(k, (4, 5)), 42),
    "xavier_uniform": (lambda i, k: i.xavier_uniform()(k, (3, 2)), 0),
    "xavier_normal": (lambda i, k: i.xavier_normal()(k, (3, 2)), 42),
    "he_uniform": (lambda i, k: i.he_uniform()(k, (4, 5)), 0),
    "he_normal": (lambda i, k: i.he_normal()(k, (4, 5)), 42),
    "kaiming_uniform": (lambda i, k: i.kaiming_uniform()(k, (2, 6)), 0),
    "kaiming_normal": (lambda i, k: i.kaiming_normal()(k, (2, 6)), 42),
    "lecun_uniform": (lambda i, k: i.lecun_uniform()(k, (4, 5)), 0),
    "lecun_normal": (lambda i, k: i.lecun_normal()(k, (4, 5)), 42),
    "lecun_normal_f32": (lambda i, k: i.lecun_normal()(k, (4, 5), np.float32), 10),
    "conv_he_normal": (lambda i, k: i.he_normal()(k, (3, 3, 2, 4)), 42),
    "vs_fan_out_normal": (lambda i, k: i.variance_scaling(0.5, "fan_out", "normal")(
        k, (3, 5)), 31),
    "vs_fan_geo_avg_uniform": (lambda i, k: i.variance_scaling(
        1.5, "fan_geo_avg", "uniform")(k, (3, 5)), 0),
    "vs_axes": (lambda i, k: i.variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis=(0, 1), out_axis=-1, batch_axis=2)(
            k, (2, 3, 4, 5)), 42),
    "vs_1d_in_axis": (lambda i, k: i.variance_scaling(1.0, "fan_in", "normal", in_axis=0,
                                                      out_axis=())(k, (7,)), 31),
}
# QR by Householder steps here, LAPACK's in JAX: the same unique factor, up to rounding
ORTHOGONAL = {
    "orthogonal": lambda i, k: i.orthogonal()(k, (4, 4)),
    "orthogonal_tall": lambda i, k: i.orthogonal(2.0)(k, (5, 3)),
    "orthogonal_wide": lambda i, k: i.orthogonal()(k, (2, 5)),
    "orthogonal_column_axis0": lambda i, k: i.orthogonal(column_axis=0)(k, (3, 2, 4)),
}


def mlp_program(jax, jnp, nn):
    """A two-layer classifier as JAX code writes it: weights from nn.initializers with split
    keys, gelu and relu layers, a log_softmax cross-entropy against one_hot labels; returns
    the loss and its gradient in every weight, after three plain gradient steps."""
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(7), 3)
    params = [nn.initializers.he_uniform()(k1, (4, 6)), nn.initializers.zeros(k1, (6,)),
              nn.initializers.glorot_normal()(k2, (6, 3)), nn.initializers.normal(0.1)(k3, (3,))]
    x = jax.random.normal(k3, (5, 4))
    labels = jnp.array([0, 2, 1, 1, 0])

    def loss(params):
        w1, b1, w2, b2 = params
        h = nn.gelu(x @ w1 + b1)
        logits = nn.relu6(h) @ w2 + b2 + nn.standardize(h @ w2)
        return -jnp.mean(jnp.sum(nn.one_hot(labels, 3) * nn.log_softmax(logits), axis=-1))

    step = jax.jit(lambda p: [w - 0.5 * g for w, g in zip(p, jax.grad(loss)(p))])
    for _ in range(3):
        params = step(params)
    return [loss(params)] + list(jax.grad(loss)(params))


INIT_KEYS = [[0, 0], [0, 42], [1797259609, 2579123966], [4294967295, 1], [123456, 654321]]


def listed(x):
    x = np.asarray(x)
    return {"dtype": x.dtype.name, "shape": list(x.shape), "values": x.ravel().tolist()}


def record():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.nn as jnn
    import jax.numpy as jnp

    out = {"jax_version": jax.__version__, "activations": {}, "vector": {}, "one_hot": {},
           "initializers": {}, "orthogonal": {}}
    x = jnp.array(POINTS)
    for name, fn in ACTIVATIONS.items():
        f = lambda t, fn=fn: fn(jnn, t)
        d1 = jax.grad(f)
        d2 = jax.grad(d1)
        out["activations"][name] = {"value": listed(jax.vmap(f)(x)),
                                    "d1": listed(jax.vmap(d1)(x)),
                                    "d2": listed(jax.vmap(d2)(x))}
    for name, fn in VECTOR.items():
        f = lambda t, fn=fn: fn(jnn, jnp, t)
        g = jax.grad(lambda t: jnp.sum(jnp.array(W) * f(t)))(jnp.array(X))
        out["vector"][name] = {"value": listed(f(jnp.array(X))), "grad": listed(g)}
    for name, fn in ONE_HOT.items():
        out["one_hot"][name] = listed(fn(jnn))
    for name, (fn, _) in INITIALIZERS.items():
        out["initializers"][name] = [listed(fn(jnn.initializers, np.asarray(k, np.uint32)))
                                     for k in INIT_KEYS]
    for name, fn in ORTHOGONAL.items():
        out["orthogonal"][name] = [listed(fn(jnn.initializers, np.asarray(k, np.uint32)))
                                   for k in INIT_KEYS]
    out["mlp"] = [listed(a) for a in mlp_program(jax, jnp, jnn)]
    with open(FIXTURES, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    record()
    print(f"wrote {FIXTURES}", file=sys.stderr)
