# The tour of the JAX documentation's autodiff cookbook (docs/notebooks/autodiff_cookbook,
# jax-ml/jax, Apache-2.0), retold as one program: grad and its argnums, value_and_grad, checking
# against finite differences, Hessian-vector products three ways, jacfwd / jacrev / hessian,
# Jacobian-matrix and matrix-Jacobian products with vmap, and per-example gradients, on logistic
# regression with jax.random data. Written for functrans's test suite.

import jax
import jax.numpy as jnp
from jax import grad, jacfwd, jacrev, jit, jvp, random, vjp, vmap

jax.config.update("jax_enable_x64", True)

key = random.PRNGKey(0)

# Derivatives of tanh, to third order
grad_tanh = grad(jnp.tanh)
print("tanh' (2.0) =", grad_tanh(2.0))
print("tanh'''(2.0) =", grad(grad(grad(jnp.tanh)))(2.0))


# Logistic regression
def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)


inputs = jnp.array([[0.52, 1.12, 0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])


def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


key, W_key, b_key = random.split(key, 3)
W = random.normal(W_key, (3,))
b = random.normal(b_key, ())

W_grad = grad(loss, argnums=0)(W, b)
print("W_grad", W_grad)
b_grad = grad(loss, 1)(W, b)
print("b_grad", b_grad)
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print("W_grad", W_grad, "b_grad", b_grad)

# Differentiating with respect to a dict of parameters
def loss2(params_dict):
    preds = predict(params_dict["W"], params_dict["b"], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


print("dict grads", grad(loss2)({"W": W, "b": b}))

loss_value, Wb_grad = jax.value_and_grad(loss, (0, 1))(W, b)
print("loss value", loss_value)
print("loss value", loss(W, b))

# Checking against finite differences along a random direction
eps = 1e-4
key, subkey = random.split(key)
vec = random.normal(subkey, W.shape)
unitvec = vec / jnp.sqrt(jnp.vdot(vec, vec))
W_grad_numerical = (loss(W + eps / 2.0 * unitvec, b) - loss(W - eps / 2.0 * unitvec, b)) / eps
print("W_dirderiv_numerical", round(float(W_grad_numerical), 6))
print("W_dirderiv_autodiff", round(float(jnp.vdot(grad(loss)(W, b), unitvec)), 6))


# Hessian-vector products
def hvp_rev_rev(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)


def hvp_fwd_rev(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def hvp_rev_fwd(f, x, v):
    g = lambda x: jvp(f, (x,), (v,))[1]  # noqa: E731
    return grad(g)(x)


def f(X):
    return jnp.sum(jnp.tanh(X) ** 2)


key, subkey1, subkey2 = random.split(key, 3)
X = random.normal(subkey1, (30, 40))
V = random.normal(subkey2, (30, 40))
hvps = (hvp_rev_rev(f, X, V), hvp_fwd_rev(f, (X,), (V,)), hvp_rev_fwd(f, X, V))
print("hvp entries", hvps[0][0, :3], hvps[1][0, :3], hvps[2][0, :3])
print("hvp norms", jnp.linalg.norm(hvps[0]), jnp.linalg.norm(hvps[1]),
      jnp.linalg.norm(hvps[2]))
ans = jnp.tensordot(jax.hessian(f)(X), V, 2)
print("hvp vs hessian", jnp.allclose(ans, hvps[1], 1e-10, 1e-10))

# Jacobians and Hessians
J = jacfwd(predict, argnums=0)(W, b, inputs)
print("jacfwd result, with shape", J.shape)
print(J)
J = jacrev(predict, argnums=0)(W, b, inputs)
print("jacrev result, with shape", J.shape)
print(J)


def hessian(f):
    return jacfwd(jacrev(f))


H = hessian(predict)(W, b, inputs)
print("hessian, with shape", H.shape)
print(H)

# Jacobian-matrix and matrix-Jacobian products
key, sub = random.split(key)
W_big = random.normal(sub, (50, 40))
key, sub = random.split(key)
x_big = random.normal(sub, (40,))
f_big = lambda x: jnp.tanh(W_big @ x)  # noqa: E731
key, sub = random.split(key)
M = random.normal(sub, (40, 6))
pushfwd = lambda v: jvp(f_big, (x_big,), (v,))[1]  # noqa: E731
vmap_vs = vmap(pushfwd, in_axes=1, out_axes=1)(M)
print("jmp", vmap_vs.shape, jnp.sum(vmap_vs), vmap_vs[:2, :2])
y, vjp_fun = vjp(f_big, x_big)
key, sub = random.split(key)
U = random.normal(sub, (3, 50))
vmap_us = vmap(lambda u: vjp_fun(u)[0])(U)
print("mjp", vmap_us.shape, jnp.sum(vmap_us), vmap_us[:2, :2])

# Per-example gradients of a batch, compiled
per_example_grads = jit(vmap(grad(lambda W, x, t: -jnp.log(
    predict(W, b, x) * t + (1 - predict(W, b, x)) * (1 - t))), in_axes=(None, 0, 0)))
per_example = per_example_grads(W, inputs, targets)
print("per-example gradients", per_example)
print("their sum equals the batch gradient:", jnp.allclose(per_example.sum(0), grad(loss)(W, b)))
