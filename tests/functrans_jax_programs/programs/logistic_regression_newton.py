# Logistic regression fitted by Newton's method, as the JAX documentation's autodiff examples do
# it: the negative log-likelihood written with jax.nn.log_sigmoid, the Newton step from
# jax.hessian and jnp.linalg.solve under jit, per-example log-likelihood gradients by vmap(grad),
# and a Laplace approximation of the posterior (the inverse Hessian at the optimum). Written for
# functrans's test suite (numpy-generated data).

import numpy as np

import jax
import jax.numpy as jnp
from jax import grad, hessian, jit, vmap

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(42)
n, d = 200, 4
features = np.concatenate([np.ones((n, 1)), rng.standard_normal((n, d - 1))], axis=1)
w_true = np.array([-0.5, 1.5, -2.0, 0.75])
labels = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-features @ w_true))).astype(np.float64)


def log_likelihood_one(w, x, y):
    z = jnp.dot(x, w)
    return y * jax.nn.log_sigmoid(z) + (1.0 - y) * jax.nn.log_sigmoid(-z)


def negative_log_posterior(w, prior_precision=0.1):
    ll = vmap(log_likelihood_one, in_axes=(None, 0, 0))(w, features, labels)
    return -jnp.sum(ll) + 0.5 * prior_precision * jnp.dot(w, w)


@jit
def newton_step(w):
    g = grad(negative_log_posterior)(w)
    H = hessian(negative_log_posterior)(w)
    return w - jnp.linalg.solve(H, g), negative_log_posterior(w), jnp.linalg.norm(g)


w = jnp.zeros(d)
path = []
for it in range(5):
    w, value, grad_norm = newton_step(w)
    path.append((value, grad_norm, w))
    print(f"iteration {it}  loss {float(value):.15e}  |grad| {float(grad_norm):.6e}")
print("w_map", w)

covariance = jnp.linalg.inv(hessian(negative_log_posterior)(w))
print("posterior std", jnp.sqrt(jnp.diag(covariance)))
per_example = vmap(grad(log_likelihood_one), in_axes=(None, 0, 0))(w, features, labels)
print("per-example gradient norms, first five", jnp.linalg.norm(per_example, axis=1)[:5])
probabilities = jax.nn.sigmoid(features @ w)
print("training accuracy", jnp.mean((probabilities > 0.5) == (labels > 0.5)))
print("mean log-likelihood", jnp.mean(vmap(log_likelihood_one, in_axes=(None, 0, 0))(
    w, features, labels)))
