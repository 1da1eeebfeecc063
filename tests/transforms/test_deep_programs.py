"""Deep programs: 100,000 chained primitive applications differentiate without recursion
(no RecursionError while transforming, nor while Python frees the chain) in bounded time."""

import gc
import sys
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp

N = 100_000


def chain(x, n=N):
    for _ in range(n):
        x = fnp.sin(x)
    return x


def sin_chain_derivative(x, n):
    """Closed form by the chain rule: prod of cos(x_k) along the iterates."""
    d = 1.0
    for _ in range(n):
        d *= np.cos(x)
        x = np.sin(x)
    return d


def test_grad_of_a_100k_primitive_chain():
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    g = ft.grad(chain)(0.5)
    elapsed = time.perf_counter() - start
    assert sys.getrecursionlimit() == limit  # nothing raised the limit to get through
    np.testing.assert_allclose(g, sin_chain_derivative(0.5, N), rtol=1e-9)
    assert elapsed < 60, f"grad of a {N}-step chain took {elapsed:.1f}s"


def test_staged_deep_program_checks_evaluates_transforms_and_frees():
    n = 20_000
    closed = ft.make_jaxpr(lambda x: chain(x, n))(0.5)
    assert len(closed.eqns) == n
    ft.check_jaxpr(closed)
    assert len(str(closed).splitlines()) == n + 2
    # differentiate the staged program itself (eval_jaxpr under the JVP trace)
    g = ft.grad(lambda x: closed(x)[0])(0.5)
    np.testing.assert_allclose(g, sin_chain_derivative(0.5, n), rtol=1e-9)
    grad_prog = ft.make_jaxpr(ft.grad(lambda x: chain(x, n)))(0.5)
    assert len(grad_prog.eqns) < 5 * n
    del closed, grad_prog
    gc.collect()  # freeing long programs must not recurse


def test_deep_nested_derivatives_of_a_long_chain():
    n = 2_000
    h = ft.grad(ft.grad(lambda x: chain(x, n)))(0.5)
    eps = 1e-4
    d = lambda x: sin_chain_derivative(x, n)
    np.testing.assert_allclose(h, (d(0.5 + eps) - d(0.5 - eps)) / (2 * eps), rtol=1e-5)
