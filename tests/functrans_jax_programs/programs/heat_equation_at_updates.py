# Explicit finite differences for the heat equation u_t = kappa(t) u_xx on [0, 1] with
# u(0) = u(1) = 0, written the JAX way: boundary values set with x.at[...].set, the interior
# advanced with x.at[1:-1].add, a diffusivity table (a concrete jnp array) indexed by the traced
# step counter inside lax.fori_loop under jit, and the gradient of the final energy with respect
# to the initial state and to a diffusivity scale. Written for functrans's test suite.

import jax
import jax.numpy as jnp
from jax import grad, jit, lax

jax.config.update("jax_enable_x64", True)

nx = 33
x = jnp.linspace(0.0, 1.0, nx)
dx = x[1] - x[0]
dt = 0.2 * dx ** 2
u0 = jnp.sin(jnp.pi * x) + 0.3 * jnp.sin(3 * jnp.pi * x) + 0.05 * x
u0 = u0.at[0].set(0.0).at[-1].set(0.0)
print("u0 boundary", u0[0], u0[-1], "max", u0.max())

kappas = jnp.array([0.5, 1.0, 2.0, 1.5])  # the diffusivity in each quarter of the run
num_steps = 200


def step(u, kappa):
    lap = (u[2:] - 2.0 * u[1:-1] + u[:-2]) / dx ** 2
    return u.at[1:-1].add(dt * kappa * lap)


@jit
def solve(u0, scale):
    def body(i, u):
        return step(u, scale * kappas[i * 4 // num_steps])
    return lax.fori_loop(0, num_steps, body, u0)


def energy(u0, scale):
    return 0.5 * jnp.sum(solve(u0, scale) ** 2) * dx


u_final = solve(u0, 1.0)
print("u(T) at x = 1/4, 1/2, 3/4:", u_final[nx // 4], u_final[nx // 2], u_final[3 * nx // 4])
print("energy", energy(u0, 1.0))
du0 = grad(energy)(u0, 1.0)
dscale = grad(energy, argnums=1)(u0, 1.0)
print("d energy / d u0 at the middle", du0[nx // 2], " d energy / d scale", dscale)

# the same run, stepped eagerly in Python with .at updates of every kind
u = u0
for i in range(num_steps):
    u = step(u, kappas[i * 4 // num_steps])
u_eager = u
print("eager equals jitted:", jnp.allclose(u_eager, u_final, rtol=1e-12, atol=1e-15))
clipped = u_eager.at[::4].min(0.2).at[1::4].max(0.1).at[2].multiply(3.0)
print("clipped", clipped[:6])
print("gathered", u_eager.at[jnp.array([1, 5, 9])].get())
