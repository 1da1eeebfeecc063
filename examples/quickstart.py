"""functrans in one minute: derivatives by nesting, the programs behind them, and vmap.

    python examples/quickstart.py
"""

import numpy as np

import functrans as ft
import functrans.numpy as fnp


def f(x):
    return fnp.sin(x) * fnp.exp(-x * x / 2)


# 1. Any order of derivative by nesting grad: no create_graph flag, no special mode.
print("derivatives of f(x) = sin(x) * exp(-x^2/2) at x = 0.5")
g = f
for n in range(5):
    print(f"  f{chr(39) * n:<5} = {float(g(0.5)):+.12f}")
    g = ft.grad(g)
d4_sin = ft.grad(ft.grad(ft.grad(ft.grad(fnp.sin))))
print(f"  and sin'''' (0.5) = {float(d4_sin(0.5)):.12f} = sin(0.5) = {np.sin(0.5):.12f}")

# 2. Every transform rewrites a small typed program (a jaxpr); make_jaxpr shows it.
print("\nthe program of f:")
print(ft.make_jaxpr(f)(0.5))
print("the program of grad(f): the forward pass, then the derivative, one primitive a line")
print(ft.make_jaxpr(ft.grad(f))(0.5))

# 3. vmap vectorises any of them: f'' at many points in one batched program.
xs = np.linspace(-2.0, 2.0, 5)
d2 = ft.vmap(ft.grad(ft.grad(f)))(xs) + 0.0  # + 0.0 prints -0.0 as 0.0
eps = 1e-4
fd = (f(xs + eps) - 2 * f(xs) + f(xs - eps)) / eps ** 2
print("f'' at", xs)
print("  vmap(grad(grad(f))):", np.array2string(d2, precision=6))
print("  finite differences: ", np.array2string(fd, precision=6))

# 4. Jacobians and Hessians of vector functions, forward or reverse mode, same numbers.
W = np.array([[1.0, -2.0, 0.5], [0.3, 0.8, -1.0]])
h = lambda x: fnp.tanh(W @ x)
x0 = np.array([0.1, 0.2, 0.3])
print("\njacfwd(h) == jacrev(h):", np.allclose(ft.jacfwd(h)(x0), ft.jacrev(h)(x0)))
H = ft.hessian(lambda x: fnp.sum(h(x) ** 2))(x0)
print("Hessian of |h|^2 (symmetric):")
print(np.array2string(H, precision=4))
