# Unadjusted Langevin sampling of a Bayesian linear-regression posterior, written the way JAX's
# "pseudorandom numbers" and sampling tutorials pass keys around: keys split inside a
# lax.scan body, a batch of chains run by vmap over a batch of keys, the whole sampler under jit
# (with the step count static), and fold_in for per-chain streams. Written for functrans's test
# suite (data drawn with jax.random as well).

from functools import partial

import jax
import jax.numpy as jnp
from jax import grad, jit, lax, random, vmap

jax.config.update("jax_enable_x64", True)

key = random.PRNGKey(20240601)
key, x_key, noise_key = random.split(key, 3)
n, d = 50, 3
X = random.normal(x_key, (n, d))
w_true = jnp.array([1.0, -2.0, 0.5])
y = X @ w_true + 0.3 * random.normal(noise_key, (n,))


def log_posterior(w, sigma=0.3, prior_scale=2.0):
    resid = y - X @ w
    return -0.5 * jnp.sum(resid ** 2) / sigma ** 2 - 0.5 * jnp.sum(w ** 2) / prior_scale ** 2


def langevin_chain(key, w0, num_steps, step_size):
    def body(carry, _):
        key, w = carry
        key, sub = random.split(key)
        noise = random.normal(sub, w.shape)
        w = w + step_size * grad(log_posterior)(w) + jnp.sqrt(2.0 * step_size) * noise
        return (key, w), w

    _, samples = lax.scan(body, (key, w0), None, length=num_steps)
    return samples


@partial(jit, static_argnums=(2,))
def run_chains(keys, w0, num_steps, step_size):
    return vmap(langevin_chain, in_axes=(0, None, None, None))(keys, w0, num_steps, step_size)


chain_keys = vmap(lambda i: random.fold_in(key, i))(jnp.arange(4))
samples = run_chains(chain_keys, jnp.zeros(d), 300, 5e-4)
print("samples", samples.shape)
burned = samples[:, 100:]
print("posterior mean per chain\n", burned.mean(axis=1))
print("pooled mean", burned.reshape(-1, d).mean(axis=0))
print("pooled std", burned.reshape(-1, d).std(axis=0))

# the exact posterior, for comparison
precision = X.T @ X / 0.3 ** 2 + jnp.eye(d) / 2.0 ** 2
exact_mean = jnp.linalg.solve(precision, X.T @ y / 0.3 ** 2)
print("exact mean", exact_mean)

# keys also go through a Python loop with split, and into uniform / bernoulli / choice
key, *subkeys = random.split(key, 4)
draws = [random.uniform(subkeys[0], (3,)), random.bernoulli(subkeys[1], 0.3, (6,)),
         random.choice(subkeys[2], 10, (4,), replace=False)]
print("draws", draws[0], draws[1], draws[2])
print("key data", random.key_data(key))
