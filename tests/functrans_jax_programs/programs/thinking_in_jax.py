# The examples of the JAX documentation's "Thinking in JAX" / "Key concepts" pages (jax-ml/jax,
# Apache-2.0), retold as one program: smoothing a noisy signal with jnp.convolve, jax.numpy's
# promotion, jit of a normalisation, static arguments
# (static_argnums / static_argnames), structured control flow (lax.cond, lax.switch,
# lax.while_loop, lax.fori_loop), lax.dynamic_slice with a traced start, and the gradient of a
# convolution's fit. Written for functrans's test suite.

from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jax import grad, jit, lax, random

jax.config.update("jax_enable_x64", True)

x = jnp.linspace(0, 10, 200)
y = jnp.sin(x) + 0.2 * np.random.default_rng(1701).standard_normal(200)
window = jnp.ones(10) / 10
y_smooth = jnp.convolve(y, window, mode="same")
print("smoothed", y_smooth[:4], y_smooth[-3:])
print("full", jnp.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5])))
print("valid", jnp.convolve(y[:12], window[:5], mode="valid"))

print(jnp.add(1, 1.0))


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


norm_compiled = jit(norm)
X = random.normal(random.PRNGKey(1701), (100, 4))
print("norm agrees:", jnp.allclose(norm(X), norm_compiled(X), atol=1e-12))
print("normalised", norm_compiled(X)[0])


@partial(jit, static_argnums=(1,))
def f(x, neg):
    return -x if neg else x


@partial(jit, static_argnames=["n"])
def g(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


print(f(1.0, True), f(1.0, False), g(10.0, 20))


@jit
def piecewise(x):
    branch = lax.cond(x > 0.0, lambda x: jnp.sin(x), lambda x: x ** 2, x)
    which = jnp.clip(jnp.floor(x).astype(int), 0, 2)
    return branch + lax.switch(which, [jnp.cos, jnp.exp, lambda x: 1.0 / (1.0 + x)], x)


print("piecewise", [float(piecewise(v)) for v in (-1.5, 0.3, 1.7, 2.9)])
print("d piecewise", [float(grad(piecewise)(v)) for v in (-1.5, 0.3, 1.7, 2.9)])


@jit
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), steps + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


print("collatz", collatz_steps(27), collatz_steps(97))


@jit
def moving_sums(y, width):
    def body(i, acc):
        return acc.at[i].set(jnp.sum(lax.dynamic_slice(y, (i,), (5,))) * width)
    return lax.fori_loop(0, y.shape[0] - 4, body, jnp.zeros(y.shape[0] - 4))


sums = moving_sums(y[:20], 0.2)
print("moving sums", sums[:5])
print("as a convolution", jnp.convolve(y[:20], jnp.full(5, 0.2), mode="valid")[:5])


def fit_loss(w):
    return jnp.mean((jnp.convolve(y, w, mode="same") - jnp.sin(x)) ** 2)


w = window
for i in range(8):
    value, dw = jax.value_and_grad(fit_loss)(w)
    w = w - 0.05 * dw
    print(f"fit step {i}  loss {float(value):.15e}")
