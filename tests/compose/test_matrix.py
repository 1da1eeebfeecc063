"""The composition matrix: a few programs x {jit, grad, jvp, vmap, jit(grad), grad(grad),
jacfwd(jacrev), vmap(grad), grad(vmap)}, each checked against an independent reference
(central differences in float64, a loop over slices, or the eager program)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

try:
    from functrans.transforms.jit import jit
except ImportError:  # pragma: no cover - jit is built in parallel
    jit = None

rng = np.random.default_rng(7)
W1 = rng.standard_normal((4, 3)) / 2
B1 = rng.standard_normal(4) / 2
W2 = rng.standard_normal(4)
X = rng.uniform(-1.2, 1.2, 3)
V = rng.standard_normal(3)
XS = rng.uniform(-1.2, 1.2, (5, 3))

PROGRAMS = {
    "mlp": lambda x: fnp.sum(fnp.tanh(W1 @ x + B1) * W2),
    "gauss_sin": lambda x: fnp.sum(fnp.sin(x) * fnp.exp(-x * x / 2)),
    "softplus": lambda x: fnp.sum(fnp.log(1.0 + fnp.exp(x))),
    "rational": lambda x: fnp.sum(x / (1.0 + x * x)),
    "where": lambda x: fnp.sum(fnp.where(x > 0.1, x * x, fnp.sin(x))),
    "reductions": lambda x: fnp.mean(x) * fnp.sum(x * x) + fnp.sum(fnp.sqrt(1.0 + x * x)),
}


def fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def fd_hessian(f, x, eps=1e-4):
    g = ft.grad(f)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def _need_jit():
    if jit is None:
        pytest.skip("functrans.transforms.jit is not available")


MODES = {
    "jit": lambda f: (_need_jit(), close(jit(f)(X), f(X), rtol=1e-13)),
    "grad": lambda f: close(ft.grad(f)(X), fd_grad(f, X)),
    "jvp": lambda f: close(ft.jvp(f, (X,), (V,))[1], fd_grad(f, X) @ V),
    "vmap": lambda f: close(ft.vmap(f)(XS), [f(x) for x in XS], rtol=1e-13),
    "jit(grad)": lambda f: (_need_jit(), close(jit(ft.grad(f))(X), ft.grad(f)(X), rtol=1e-13)),
    "grad(jit)": lambda f: (_need_jit(), close(ft.grad(jit(f))(X), ft.grad(f)(X), rtol=1e-13)),
    "grad(grad)": lambda f: close(
        ft.grad(ft.grad(lambda s: f(X + s * V)))(0.0), V @ fd_hessian(f, X) @ V, rtol=1e-5,
        atol=1e-6),
    "jacfwd(jacrev)": lambda f: close(ft.jacfwd(ft.jacrev(f))(X), fd_hessian(f, X), rtol=1e-5,
                                      atol=1e-6),
    "vmap(grad)": lambda f: close(ft.vmap(ft.grad(f))(XS), [fd_grad(f, x) for x in XS]),
    "grad(vmap)": lambda f: close(ft.grad(lambda xs: fnp.sum(ft.vmap(f)(xs)))(XS),
                                  [fd_grad(f, x) for x in XS]),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_composition_matrix(program, mode):
    MODES[mode](PROGRAMS[program])


def test_programs_themselves_match_numpy():
    ref = {
        "mlp": np.sum(np.tanh(W1 @ X + B1) * W2),
        "gauss_sin": np.sum(np.sin(X) * np.exp(-X * X / 2)),
        "softplus": np.sum(np.log1p(np.exp(X))),
        "rational": np.sum(X / (1 + X * X)),
        "where": np.sum(np.where(X > 0.1, X * X, np.sin(X))),
        "reductions": np.mean(X) * np.sum(X * X) + np.sum(np.sqrt(1 + X * X)),
    }
    for name, f in PROGRAMS.items():
        close(f(X), ref[name], rtol=1e-14)
