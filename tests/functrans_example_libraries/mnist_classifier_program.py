"""JAX's examples/mnist_classifier.py (stax + example_libraries.optimizers.momentum), its body
as JAX ships it, on synthetic MNIST-shaped data and for a few steps, run with JAX's imports or
with only those imports changed to functrans's. Re-record JAX's trace with JAX installed:
`python tests/functrans_example_libraries/mnist_classifier_program.py`.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mnist_classifier_jax.json")

JAX_IMPORTS = """
import itertools
import numpy.random as npr
import jax.numpy as jnp
from jax import jit, grad, random
from jax.example_libraries import optimizers
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, Relu, LogSoftmax
"""

FUNCTRANS_IMPORTS = """
import itertools
import numpy.random as npr
import functrans.numpy as jnp
from functrans import jit, grad, random
from functrans.example_libraries import optimizers
from functrans.example_libraries import stax
from functrans.example_libraries.stax import Dense, Relu, LogSoftmax
"""

# the example's code from `def loss` on; `datasets.mnist()` is replaced by synthetic data and
# the epoch loop by NUM_STEPS steps that record the loss and the weights
PROGRAM = """
def loss(params, batch):
  inputs, targets = batch
  preds = predict(params, inputs)
  return -jnp.mean(jnp.sum(preds * targets, axis=1))

def accuracy(params, batch):
  inputs, targets = batch
  target_class = jnp.argmax(targets, axis=1)
  predicted_class = jnp.argmax(predict(params, inputs), axis=1)
  return jnp.mean(predicted_class == target_class)

init_random_params, predict = stax.serial(
    Dense(1024), Relu,
    Dense(1024), Relu,
    Dense(10), LogSoftmax)

rng = random.key(0)
step_size = 0.001
batch_size = 128
momentum_mass = 0.9
train_images, train_labels = TRAIN_IMAGES, TRAIN_LABELS
num_train = train_images.shape[0]
num_complete_batches, leftover = divmod(num_train, batch_size)
num_batches = num_complete_batches + bool(leftover)

def data_stream():
  rng = npr.RandomState(0)
  while True:
    perm = rng.permutation(num_train)
    for i in range(num_batches):
      batch_idx = perm[i * batch_size:(i + 1) * batch_size]
      yield train_images[batch_idx], train_labels[batch_idx]
batches = data_stream()

opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

@jit
def update(i, opt_state, batch):
  params = get_params(opt_state)
  return opt_update(i, grad(loss)(params, batch), opt_state)

_, init_params = init_random_params(rng, (-1, 28 * 28))
opt_state = opt_init(init_params)
itercount = itertools.count()

for _ in range(NUM_STEPS):
  batch = next(batches)
  RECORD(loss(get_params(opt_state), batch), accuracy(get_params(opt_state), batch),
         get_params(opt_state))
  opt_state = update(next(itercount), opt_state, batch)
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
