# A physics-informed network for the viscous Burgers equation u_t + u u_x = (0.01/pi) u_xx on
# x in [-1, 1], t in [0, 1], u(0, x) = -sin(pi x), u(t, -1) = u(t, 1) = 0 (Raissi, Perdikaris and
# Karniadakis 2019), in the style of the JAX PINN tutorials: a tanh MLP whose weights are drawn
# with jax.random (Glorot normal), derivatives of the network with respect to its inputs by
# nested grad, vmap over collocation points drawn with jax.random.uniform, and Adam written with
# jax.tree_util under jit. Written for functrans's test suite; the run is shortened to 40 steps.

import jax
import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.tree_util import tree_map

jax.config.update("jax_enable_x64", True)

NU = 0.01 / jnp.pi


def init_params(key, layers):
    keys = random.split(key, len(layers) - 1)
    params = []
    for k, n_in, n_out in zip(keys, layers[:-1], layers[1:]):
        w_key, b_key = random.split(k)
        std = jnp.sqrt(2.0 / (n_in + n_out))
        params.append({"W": std * random.normal(w_key, (n_in, n_out)),
                       "b": 0.1 * random.normal(b_key, (n_out,))})
    return params


def net(params, t, x):
    h = jnp.stack([2.0 * t - 1.0, x])
    for layer in params[:-1]:
        h = jnp.tanh(h @ layer["W"] + layer["b"])
    return (h @ params[-1]["W"] + params[-1]["b"])[0]


def residual(params, t, x):
    u = net(params, t, x)
    u_t = grad(net, argnums=1)(params, t, x)
    u_x = grad(net, argnums=2)(params, t, x)
    u_xx = grad(grad(net, argnums=2), argnums=2)(params, t, x)
    return u_t + u * u_x - NU * u_xx


def loss_fn(params, colloc, initial, boundary):
    r = vmap(residual, in_axes=(None, 0, 0))(params, colloc[:, 0], colloc[:, 1])
    u0 = vmap(net, in_axes=(None, 0, 0))(params, initial[:, 0], initial[:, 1])
    ub = vmap(net, in_axes=(None, 0, 0))(params, boundary[:, 0], boundary[:, 1])
    ic = -jnp.sin(jnp.pi * initial[:, 1])
    return jnp.mean(r ** 2) + jnp.mean((u0 - ic) ** 2) + jnp.mean(ub ** 2)


def adam_init(params):
    zeros = tree_map(jnp.zeros_like, params)
    return zeros, zeros


@jit
def train_step(params, m, v, step, colloc, initial, boundary):
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    loss, grads = jax.value_and_grad(loss_fn)(params, colloc, initial, boundary)
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    m_hat = tree_map(lambda m: m / (1 - b1 ** (step + 1)), m)
    v_hat = tree_map(lambda v: v / (1 - b2 ** (step + 1)), v)
    params = tree_map(lambda p, mh, vh: p - lr * mh / (jnp.sqrt(vh) + eps), params, m_hat, v_hat)
    return params, m, v, loss


if __name__ == "__main__":
    key = random.PRNGKey(1234)
    key, init_key, c_key, i_key, b_key, side_key = random.split(key, 6)
    params = init_params(init_key, [2, 20, 20, 20, 1])

    colloc = random.uniform(c_key, (256, 2), minval=jnp.array([0.0, -1.0]),
                            maxval=jnp.array([1.0, 1.0]))
    initial = jnp.stack([jnp.zeros(64), random.uniform(i_key, (64,), minval=-1.0, maxval=1.0)],
                        axis=1)
    sides = jnp.where(random.bernoulli(side_key, 0.5, (64,)), 1.0, -1.0)
    boundary = jnp.stack([random.uniform(b_key, (64,)), sides], axis=1)

    m, v = adam_init(params)
    trajectory = []  # (loss before the step, parameters after it), every step
    for step in range(40):
        params, m, v, loss = train_step(params, m, v, step, colloc, initial, boundary)
        trajectory.append((loss, params))
        if step % 10 == 0 or step == 39:
            print(f"step {step:3d}  loss {float(loss):.15e}")
    print("u(0.5, 0.0) =", float(net(params, 0.5, 0.0)))
