# A training loop compiled whole, in the style of modern JAX tutorials: parameters from
# jax.nn.initializers (he_normal / zeros) with split keys, momentum SGD written with jax.tree.map,
# and each epoch one lax.scan over minibatches cut with lax.dynamic_slice_in_dim from a
# jax.random.permutation of the data, the step under jit. A softmax classifier on two
# interleaved spirals (numpy-generated). Written for functrans's test suite (4 epochs).

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax, random

jax.config.update("jax_enable_x64", True)


def spirals(n, rng):
    t = np.sqrt(rng.uniform(size=n)) * 3 * np.pi
    labels = rng.integers(0, 2, size=n)
    sign = 2.0 * labels - 1.0
    x = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], axis=1) / (3 * np.pi)
    return x + 0.02 * rng.standard_normal(x.shape), labels


def init(key, sizes):
    he, zeros = jax.nn.initializers.he_normal(), jax.nn.initializers.zeros
    keys = random.split(key, len(sizes) - 1)
    return [{"w": he(k, (m, n), jnp.float64), "b": zeros(k, (n,), jnp.float64)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def logits_fn(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logp = jax.nn.log_softmax(logits_fn(params, x))
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, 2) * logp, axis=-1))


batch_size, lr, mass = 32, 0.1, 0.9


@jax.jit
def train_epoch(state, key, x, y):
    perm = random.permutation(key, x.shape[0])
    xs, ys = x[perm], y[perm]

    def step(state, i):
        params, velocity = state
        xb = lax.dynamic_slice_in_dim(xs, i * batch_size, batch_size)
        yb = lax.dynamic_slice_in_dim(ys, i * batch_size, batch_size)
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        velocity = jax.tree.map(lambda v, g: mass * v - lr * g, velocity, grads)
        params = jax.tree.map(lambda p, v: p + v, params, velocity)
        return (params, velocity), loss

    return lax.scan(step, state, jnp.arange(x.shape[0] // batch_size))


rng = np.random.default_rng(11)
x_train, y_train = spirals(256, rng)
key = random.key(3)
key, init_key = random.split(key)
params = init(init_key, [2, 32, 32, 2])
state = (params, jax.tree.map(jnp.zeros_like, params))
history = []
for epoch in range(4):
    key, epoch_key = random.split(key)
    state, losses = train_epoch(state, epoch_key, x_train, y_train)
    history.append((losses, state[0]))
    accuracy = jnp.mean(jnp.argmax(logits_fn(state[0], x_train), -1) == y_train)
    print(f"epoch {epoch}  mean loss {float(losses.mean()):.15e}  accuracy {float(accuracy)}")
print("parameter count", sum(p.size for p in jax.tree.leaves(state[0])))
