# Gaussian-process regression in the manner of JAX's examples/gaussian_process_regression.py
# (jax-ml/jax, Apache-2.0): a squared-exponential kernel built by nested vmap, the negative log
# marginal likelihood through a Cholesky factor, its gradient with respect to the (softplus-
# transformed) kernel parameters, a few steps of momentum gradient descent under jit, and the
# posterior mean and variance. Written for functrans's test suite (numpy data, plain momentum in
# place of the example's optimiser library).

import numpy as np

import jax
import jax.numpy as jnp
from jax import grad, jit, vmap

jax.config.update("jax_enable_x64", True)


def softplus(x):
    return jnp.logaddexp(x, 0.0)


def cov_map(cov_func, xs, xs2=None):
    if xs2 is None:
        return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs)
    return vmap(lambda x: vmap(lambda y: cov_func(x, y))(xs))(xs2).T


def exp_quadratic(x1, x2):
    return jnp.exp(-jnp.sum((x1 - x2) ** 2))


def gp(params, x, y, xtest=None, compute_marginal_likelihood=False):
    noise = softplus(params["noise"])
    amp = softplus(params["amplitude"])
    ls = softplus(params["lengthscale"])
    ymean = jnp.mean(y)
    y = y - ymean
    x = x / ls
    train_cov = amp * cov_map(exp_quadratic, x) + jnp.eye(x.shape[0]) * (noise + 1e-6)
    chol = jnp.linalg.cholesky(train_cov)
    kinvy = jnp.linalg.solve(chol.T, jnp.linalg.solve(chol, y))
    if compute_marginal_likelihood:
        log2pi = jnp.log(2.0 * jnp.pi)
        ml = jnp.sum(-0.5 * jnp.dot(y.T, kinvy) - jnp.sum(jnp.log(jnp.diag(chol)))
                     - (x.shape[0] / 2.0) * log2pi)
        ml -= jnp.sum(-0.5 * jnp.log(2 * jnp.pi) - jnp.log(amp) - 0.5 * jnp.log(amp) ** 2)
        return -ml

    xtest = xtest / ls
    cross_cov = amp * cov_map(exp_quadratic, x, xtest)
    mu = jnp.dot(cross_cov.T, kinvy) + ymean
    v = jnp.linalg.solve(chol, cross_cov)
    var = amp * cov_map(exp_quadratic, xtest) - jnp.dot(v.T, v)
    return mu, var


marginal_likelihood = jit(lambda params, x, y: gp(params, x, y,
                                                   compute_marginal_likelihood=True))
grad_fun = jit(grad(marginal_likelihood))
predict = jit(lambda params, x, y, xtest: gp(params, x, y, xtest))

rng = np.random.default_rng(0)
num_points = 40
x = (rng.uniform(size=num_points) * 4.0 - 2.0)[:, None]
y = jnp.sin(x[:, 0] * 2.0) + 0.2 * rng.standard_normal(num_points)
params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 2.0,
          "lengthscale": jnp.zeros((1, 1))}
momentums = {k: v * 0.0 for k, v in params.items()}
scales = {k: v * 0.0 + 1.0 for k, v in params.items()}
lr, c = 0.01, 0.9

history = []
for i in range(60):
    g = grad_fun(params, x, y)
    for k in params:
        momentums[k] = c * momentums[k] + (1 - c) * g[k]
        scales[k] = c * scales[k] + (1 - c) * g[k] ** 2
        params[k] = params[k] - lr * momentums[k] / jnp.sqrt(scales[k] + 1e-5)
    value = marginal_likelihood(params, x, y)
    history.append((value, dict(params)))
    if i % 15 == 0:
        print("Step {} negative marginal likelihood {:.12e}".format(i, float(value)))

print({k: softplus(v)[0, 0] for k, v in params.items()})
xtest = jnp.linspace(-3.0, 3.0, 9)[:, None]
mu, var = predict(params, x, y, xtest)
std = jnp.sqrt(jnp.diag(var))
print("posterior mean", mu)
print("posterior std", std)
