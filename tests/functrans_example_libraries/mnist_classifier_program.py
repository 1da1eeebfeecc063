"""A training program of the kind of JAX's examples/mnist_classifier.py (jax-ml/jax, Apache-2.0):
a stax network trained by example_libraries.optimizers.momentum, written for this test suite, on
synthetic MNIST-shaped data and for a few steps, run with JAX's imports or with only those imports
changed to functrans's. Re-record JAX's trace with JAX installed:
`python tests/functrans_example_libraries/mnist_classifier_program.py`.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mnist_classifier_jax.json")

JAX_IMPORTS = """
import numpy.random as npr
import jax.numpy as jnp
from jax import jit, grad, random
from jax.example_libraries import optimizers
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, Relu, LogSoftmax
"""

FUNCTRANS_IMPORTS = """
import numpy.random as npr
import functrans.numpy as jnp
from functrans import jit, grad, random
from functrans.example_libraries import optimizers
from functrans.example_libraries import stax
from functrans.example_libraries.stax import Dense, Relu, LogSoftmax
"""

# the program after its imports; the data are synthetic and NUM_STEPS steps record the loss,
# the accuracy and the weights
PROGRAM = """
def nll(params, batch):
    x, y = batch
    return -jnp.mean(jnp.sum(y * net_apply(params, x), axis=1))


def hit_rate(params, batch):
    x, y = batch
    return jnp.mean(jnp.argmax(net_apply(params, x), axis=1) == jnp.argmax(y, axis=1))


net_init, net_apply = stax.serial(Dense(1024), Relu, Dense(1024), Relu, Dense(10), LogSoftmax)


def minibatches(images, labels, size, seed=0):
    order_rng = npr.RandomState(seed)
    n = images.shape[0]
    while True:
        order = order_rng.permutation(n)
        for k in range(-(-n // size)):
            pick = order[k * size:(k + 1) * size]
            yield images[pick], labels[pick]


opt_init, opt_update, get_params = optimizers.momentum(1e-3, mass=0.9)


@jit
def train_step(step, state, batch):
    return opt_update(step, grad(nll)(get_params(state), batch), state)


_, params0 = net_init(random.key(0), (-1, 784))
state = opt_init(params0)
stream = minibatches(TRAIN_IMAGES, TRAIN_LABELS, 128)
for step in range(NUM_STEPS):
    batch = next(stream)
    params = get_params(state)
    RECORD(nll(params, batch), hit_rate(params, batch), params)
    state = train_step(step, state, batch)
"""

NUM_STEPS = 8


def synthetic_mnist(n=300, seed=0):
    """MNIST-shaped data: 784 pixels in [0, 1] whose class shifts the mean of a band."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.random((n, 784)) * 0.5
    for k in range(10):
        images[labels == k, 78 * k:78 * (k + 1)] += 0.5
    return images, np.eye(10)[labels]


def run(imports: str) -> list[dict]:
    """The program under `imports`: per step, the loss, the accuracy and a digest of every
    weight (its sum, its sum of squares and its first entries)."""
    trace = []

    def record(loss, accuracy, params):
        leaves = [np.asarray(p, np.float64) for layer in params for p in layer]
        trace.append({"loss": float(loss), "accuracy": float(accuracy),
                      "sums": [float(p.sum()) for p in leaves],
                      "squares": [float((p * p).sum()) for p in leaves],
                      "firsts": [p.ravel()[:4].tolist() for p in leaves]})

    images, labels = synthetic_mnist()
    namespace = {"TRAIN_IMAGES": images, "TRAIN_LABELS": labels, "NUM_STEPS": NUM_STEPS,
                 "RECORD": record}
    exec(imports + PROGRAM, namespace)
    return trace


if __name__ == "__main__":
    import jax
    jax.config.update("jax_enable_x64", True)
    with open(FIXTURE, "w") as f:
        json.dump({"jax": jax.__version__, "trace": run(JAX_IMPORTS)}, f, indent=0)
    print(f"wrote {FIXTURE}", file=sys.stderr)
