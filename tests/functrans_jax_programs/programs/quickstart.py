# The steps of JAX's quickstart (docs/quickstart, jax-ml/jax, Apache-2.0), retold as one program:
# jax.numpy as numpy, jit of the SELU activation, grad of a logistic sum checked against finite
# differences, a Hessian as jacfwd(jacrev), and a batched matrix-vector product three ways (a
# loop, by hand, and vmap). Written for functrans's test suite with smaller sizes.

import jax
import jax.numpy as jnp
from jax import grad, jacfwd, jacrev, jit, random, vmap

jax.config.update("jax_enable_x64", True)

key = random.key(1701)
x = jnp.arange(5.0)
print(x)


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


key, subkey = random.split(key)
x = random.normal(subkey, (1000,))
selu_jit = jit(selu)
print("selu sum", selu(x).sum(), selu_jit(x).sum())
print("selu head", selu_jit(x)[:4])


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


x_small = jnp.arange(3.0)
derivative_fn = grad(sum_logistic)
print(derivative_fn(x_small))


def first_finite_differences(f, x, eps=1e-3):
    return jnp.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps) for v in jnp.eye(len(x))])


print(first_finite_differences(sum_logistic, x_small))
print(grad(jit(grad(jit(grad(sum_logistic)))))(1.0))


def hessian(fun):
    return jit(jacfwd(jacrev(fun)))


print(hessian(sum_logistic)(x_small))

key1, key2 = random.split(key)
mat = random.normal(key1, (150, 100))
batched_x = random.normal(key2, (10, 100))


def apply_matrix(x):
    return jnp.dot(mat, x)


def naively_batched_apply_matrix(v_batched):
    return jnp.stack([apply_matrix(v) for v in v_batched])


@jit
def batched_apply_matrix(batched_x):
    return jnp.dot(batched_x, mat.T)


@jit
def vmap_batched_apply_matrix(batched_x):
    return vmap(apply_matrix)(batched_x)


naive = naively_batched_apply_matrix(batched_x)
by_hand = batched_apply_matrix(batched_x)
vmapped = vmap_batched_apply_matrix(batched_x)
print("batched", naive.shape, jnp.abs(naive).sum(), by_hand[0, :3], vmapped[-1, -3:])
print("agree", jnp.allclose(naive, by_hand, atol=1e-12), jnp.allclose(naive, vmapped, atol=1e-12))
