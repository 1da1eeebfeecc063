# A physics-informed network for the 2-D Poisson problem -(u_xx + u_yy) = 2 pi^2 sin(pi x)
# sin(pi y) on the unit square with u = 0 on the boundary, written against the older JAX research
# API that many PINN repositories use: jax.example_libraries.stax to build and initialise the
# network from a jax.random key, jax.example_libraries.optimizers.adam with an exponential-decay
# step size, jax.hessian for the Laplacian, vmap over collocation points and opt_update under jit.
# Written for functrans's test suite (30 steps).

import jax
import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Dense, Tanh

jax.config.update("jax_enable_x64", True)

init_fun, apply_fun = stax.serial(Dense(16), Tanh, Dense(16), Tanh, Dense(1))
key = random.PRNGKey(7)
key, init_key, in_key, bd_key = random.split(key, 4)
_, params = init_fun(init_key, (-1, 2))


def u(params, xy):
    return apply_fun(params, xy)[0]


def source(xy):
    return 2.0 * jnp.pi ** 2 * jnp.sin(jnp.pi * xy[0]) * jnp.sin(jnp.pi * xy[1])


def residual(params, xy):
    laplacian = jnp.trace(jax.hessian(u, argnums=1)(params, xy))
    return laplacian + source(xy)


interior = random.uniform(in_key, (128, 2))
t = random.uniform(bd_key, (64,))
boundary = jnp.concatenate([jnp.stack([t[:16], jnp.zeros(16)], 1),
                            jnp.stack([t[16:32], jnp.ones(16)], 1),
                            jnp.stack([jnp.zeros(16), t[32:48]], 1),
                            jnp.stack([jnp.ones(16), t[48:]], 1)])


def loss(params):
    r = vmap(residual, in_axes=(None, 0))(params, interior)
    ub = vmap(u, in_axes=(None, 0))(params, boundary)
    return jnp.mean(r ** 2) + 10.0 * jnp.mean(ub ** 2)


opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(1e-2, 10, 0.9))
opt_state = opt_init(params)


@jit
def step(i, opt_state):
    params = get_params(opt_state)
    value, g = jax.value_and_grad(loss)(params)
    return opt_update(i, g, opt_state), value


trajectory = []
for i in range(30):
    opt_state, value = step(i, opt_state)
    trajectory.append((value, get_params(opt_state)))
    if i % 10 == 0:
        print("iteration {} loss {:.15e}".format(i, float(value)))
params = get_params(opt_state)
print("u(0.5, 0.5) =", u(params, jnp.array([0.5, 0.5])))
print("global norm of the parameters", optimizers.l2_norm(params))
