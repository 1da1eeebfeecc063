# A training loop in the style of optax's getting-started guide and the JAX/Flax tutorials: an MLP
# whose weights come from jax.nn.initializers (keys split with jax.random), a loss under
# jax.value_and_grad, and an optax chain of global-norm clipping and AdamW on a piecewise-constant
# schedule, applied in a jitted step with optax.apply_updates. Written for functrans's test
# suite (a synthetic regression task, 50 steps).

import numpy as np

import jax
import jax.numpy as jnp
import optax
from jax import random

jax.config.update("jax_enable_x64", True)


def init_mlp(key, sizes):
    glorot = jax.nn.initializers.glorot_normal()
    params = []
    for k, (n_in, n_out) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": glorot(k, (n_in, n_out), jnp.float64), "b": jnp.zeros(n_out)})
    return params


def mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.gelu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


rng = np.random.default_rng(3)
x_train = rng.uniform(-2.0, 2.0, size=(128, 2))
y_train = np.sin(x_train[:, :1] * x_train[:, 1:]) + 0.1 * rng.standard_normal((128, 1))

# a stepwise decay: optax computes schedules of its int32 step count in float32, and XLA rounds
# the float32 arithmetic of linear and cosine schedules differently under jax.jit than eagerly
# (one float32 ulp, 1e-7), so a run with those matches JAX's eager schedule, not its jitted one
schedule = optax.piecewise_constant_schedule(1e-2, {20: 0.5, 30: 0.2})
optimizer = optax.chain(optax.clip_by_global_norm(1.0),
                        optax.adamw(learning_rate=schedule, weight_decay=1e-4))
params = init_mlp(random.PRNGKey(0), [2, 32, 32, 1])
opt_state = optimizer.init(params)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


trajectory = []
for step in range(50):
    params, opt_state, loss = train_step(params, opt_state, x_train, y_train)
    trajectory.append((loss, params))
    if step % 10 == 0:
        print(f"step {step:2d}  lr {float(schedule(step)):.6e}  loss {float(loss):.15e}")
print("final loss", loss_fn(params, x_train, y_train))
