# A fixed-step Runge-Kutta (RK4) integrator written with jax.lax.scan, as in the JAX ODE
# tutorials, differentiated end to end: the Lotka-Volterra predator-prey model's four rates are
# fitted to noisy observations by gradient descent on their logarithms, with value_and_grad of
# the scanned solve under jit, and the sensitivity of the final state to the rates by jacfwd and
# jacrev. Written for functrans's test suite.

import numpy as np

import jax
import jax.numpy as jnp
from jax import jit, lax

jax.config.update("jax_enable_x64", True)


def lotka_volterra(y, t, theta):
    alpha, beta, delta, gamma = theta
    prey, predator = y
    return jnp.array([alpha * prey - beta * prey * predator,
                      delta * prey * predator - gamma * predator])


def rk4_step(f, y, t, dt, theta):
    k1 = f(y, t, theta)
    k2 = f(y + dt / 2 * k1, t + dt / 2, theta)
    k3 = f(y + dt / 2 * k2, t + dt / 2, theta)
    k4 = f(y + dt * k3, t + dt, theta)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_rk4(f, y0, ts, theta):
    def body(y, t_pair):
        t0, t1 = t_pair
        y_next = rk4_step(f, y, t0, t1 - t0, theta)
        return y_next, y_next

    _, ys = lax.scan(body, y0, (ts[:-1], ts[1:]))
    return jnp.concatenate([y0[None], ys], axis=0)


ts = jnp.linspace(0.0, 10.0, 101)
y0 = jnp.array([1.0, 0.5])
theta_true = jnp.array([1.0, 0.6, 0.3, 0.8])
ys_true = odeint_rk4(lotka_volterra, y0, ts, theta_true)
noise = np.random.default_rng(0).normal(scale=0.02, size=ys_true.shape)
observed = ys_true + noise
print("final state, true rates:", ys_true[-1])


def loss(log_theta):
    ys = odeint_rk4(lotka_volterra, y0, ts, jnp.exp(log_theta))
    return jnp.mean((ys - observed) ** 2)


@jit
def step(log_theta, lr):
    value, g = jax.value_and_grad(loss)(log_theta)
    return log_theta - lr * g, value


log_theta = jnp.log(jnp.array([0.8, 0.5, 0.35, 0.9]))
history = []
for i in range(60):
    log_theta, value = step(log_theta, 0.01)
    history.append((value, log_theta))
    if i % 10 == 0:
        print(f"iteration {i:2d}  loss {float(value):.15e}")
theta_fit = jnp.exp(log_theta)
print("fitted rates", theta_fit)

final_state = lambda theta: odeint_rk4(lotka_volterra, y0, ts, theta)[-1]  # noqa: E731
sens_fwd = jax.jacfwd(final_state)(theta_fit)
sens_rev = jax.jacrev(final_state)(theta_fit)
print("d y(T) / d theta\n", sens_fwd)
print("forward and reverse agree:", jnp.allclose(sens_fwd, sens_rev, rtol=1e-10))
