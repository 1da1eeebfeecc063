# Custom derivative rules the way the JAX documentation's "custom derivative rules" tutorial
# uses them: a numerically stable log1pexp with a custom_jvp (under jit, grad and vmap), a
# custom_jvp rule whose Python code branches on its primal (concrete outside jit), and a
# custom_vjp that clips gradients. Written for functrans's test suite.

import jax
import jax.numpy as jnp
from jax import custom_jvp, custom_vjp, grad, jit, vmap

jax.config.update("jax_enable_x64", True)


@custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
    return ans, ans_dot


print("log1pexp'", jit(grad(log1pexp))(3.0), grad(log1pexp)(100.0))
print("vmapped", vmap(jit(grad(log1pexp)))(jnp.arange(3.0)))


@custom_jvp
def kinked(x):
    return jnp.where(x >= 0, x, 2.0 * x)


@kinked.defjvp
def kinked_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    if x >= 0:
        return kinked(x), x_dot
    else:
        return kinked(x), 2.0 * x_dot


print("branching rule", grad(kinked)(1.0), grad(kinked)(-1.0))


@custom_vjp
def clip_gradient(lo, hi, x):
    return x


def clip_gradient_fwd(lo, hi, x):
    return x, (lo, hi)


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def clipped_sin(x):
    return jnp.sin(clip_gradient(-0.75, 0.75, x))


print("clipped gradients", vmap(grad(clipped_sin))(jnp.linspace(0.0, 10.0, 6)))
