"""custom_jvp rules defined with symbolic_zeros=True: zero tangents arrive as SymbolicZero
(as in JAX, under grad, jvp, jacfwd, vmap and jit alike) and a rule may return one. Checked
against JAX, including which tangents the rule saw as symbolic."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.transforms.custom import SymbolicZero

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
JaxSymbolicZero = pytest.importorskip("jax.custom_derivatives").SymbolicZero

X = np.linspace(-1.0, 1.0, 4)


def _sin_times(m, T, SZ, seen):
    @T.custom_jvp
    def f(a, b):
        return m.sin(a) * b

    def f_jvp(primals, tangents):
        a, b = primals
        a_dot, b_dot = tangents
        seen.append((isinstance(a_dot, SZ), isinstance(b_dot, SZ)))
        out = m.sin(a) * b
        t = 0.0 * out
        if not isinstance(a_dot, SZ):
            t = t + m.cos(a) * b * a_dot
        if not isinstance(b_dot, SZ):
            t = t + m.sin(a) * b_dot * 3.0  # not the true derivative: shows the rule ran
        return out, t

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


PROGRAMS = {
    "grad_a": lambda m, T, f: T.grad(lambda a: m.sum(f(a, 2.0)))(X),
    "grad_b": lambda m, T, f: T.grad(lambda b: m.sum(f(X, b)))(2.0),
    "jvp_both": lambda m, T, f: T.jvp(f, (X, 2.0), (X, 1.0)),
    "jacfwd_a": lambda m, T, f: T.jacfwd(lambda a: f(a, 2.0))(X),
    "vmap_grad": lambda m, T, f: T.vmap(T.grad(lambda a: f(a, 2.0)))(X),
    "jit_grad": lambda m, T, f: T.jit(T.grad(lambda a: m.sum(f(a, 2.0))))(X),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_symbolic_zero_tangents_match_jax(name):
    seen, seen_jax = [], []
    out = PROGRAMS[name](fnp, ft, _sin_times(fnp, ft, SymbolicZero, seen))
    ref = PROGRAMS[name](jnp, jax, _sin_times(jnp, jax, JaxSymbolicZero, seen_jax))
    assert seen == seen_jax
    for o, r in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(o, r, rtol=1e-12)


def _pair(m, T, SZ):
    @T.custom_jvp
    def g(a):
        return a * 2.0, a

    # the second output's tangent is returned as a symbolic zero
    g.defjvp(lambda p, t: (g(*p), (t[0] * 2.0, SZ.from_primal_value(p[0]))),
             symbolic_zeros=True)
    return g


def test_rule_may_return_a_symbolic_zero():
    out = ft.jvp(_pair(fnp, ft, SymbolicZero), (X,), (X,))
    ref = jax.jvp(_pair(jnp, jax, JaxSymbolicZero), (X,), (X,))
    for o, r in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(o, r)

    def loss(m, T, SZ):
        return lambda a: m.sum(_pair(m, T, SZ)(a)[0] + _pair(m, T, SZ)(a)[1])
    np.testing.assert_allclose(ft.grad(loss(fnp, ft, SymbolicZero))(X),
                               jax.grad(loss(jnp, jax, JaxSymbolicZero))(X))


def test_without_symbolic_zeros_the_rule_sees_arrays():
    seen = []

    @ft.custom_jvp
    def f(a, b):
        return a * b

    def f_jvp(primals, tangents):
        seen.append([isinstance(t, SymbolicZero) for t in tangents])
        np.testing.assert_array_equal(tangents[1], 0.0)  # b is not differentiated
        return f(*primals), tangents[0] * primals[1] + primals[0] * tangents[1]

    f.defjvp(f_jvp)
    assert float(ft.grad(f)(3.0, 2.0)) == 2.0
    assert seen == [[False, False]]


def test_symbolic_zero_describes_the_zero():
    z = SymbolicZero.from_primal_value(np.ones((2, 3), np.float32))
    assert (z.shape, z.dtype, bool(z)) == ((2, 3), np.float32, False)
    np.testing.assert_array_equal(z.instantiate(), np.zeros((2, 3), np.float32))


# --- custom_vjp -----------------------------------------------------------------------------

def _sin_pair(m, T, SZ, seen):
    @T.custom_vjp
    def f(a, b):
        return m.sin(a) * b, a * 2.0

    def fwd(a, b):
        seen.append(("fwd", a.perturbed, b.perturbed))
        return f(a.value, b.value), (a.value, b.value)

    def bwd(res, g):
        a, b = res
        g_sin, g_double = g
        seen.append(("bwd", isinstance(g_sin, SZ), isinstance(g_double, SZ)))
        a_ct, b_ct = 0.0 * a, None
        if not isinstance(g_sin, SZ):
            a_ct = a_ct + g_sin * m.cos(a) * b
            b_ct = m.sum(g_sin * m.sin(a))
        if not isinstance(g_double, SZ):
            a_ct = a_ct + 10.0 * g_double  # not the true derivative: shows the rule ran
        return a_ct, b_ct

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


VJP_PROGRAMS = {
    "grad_a_first": lambda m, T, f: T.grad(lambda a: m.sum(f(a, 2.0)[0]))(X),
    "grad_b_first": lambda m, T, f: T.grad(lambda b: m.sum(f(X, b)[0]))(2.0),
    "grad_a_second": lambda m, T, f: T.grad(lambda a: m.sum(f(a, 2.0)[1]))(X),
    "grad_both": lambda m, T, f: T.grad(lambda a, b: m.sum(f(a, b)[0] + f(a, b)[1]),
                                        argnums=(0, 1))(X, 2.0),
    "vmap_grad": lambda m, T, f: T.vmap(T.grad(lambda a: f(a, 2.0)[0]))(X),
    "jit_grad": lambda m, T, f: T.jit(T.grad(lambda a: m.sum(f(a, 2.0)[1])))(X),
    "jacrev": lambda m, T, f: T.jacrev(lambda a: f(a, 2.0))(X),
}


@pytest.mark.parametrize("name", VJP_PROGRAMS)
def test_custom_vjp_symbolic_zeros_match_jax(name):
    seen, seen_jax = [], []
    out = VJP_PROGRAMS[name](fnp, ft, _sin_pair(fnp, ft, SymbolicZero, seen))
    ref = VJP_PROGRAMS[name](jnp, jax, _sin_pair(jnp, jax, JaxSymbolicZero, seen_jax))
    assert seen == seen_jax  # which arguments were perturbed, which cotangents symbolic
    for o, r in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)):
        np.testing.assert_allclose(o, r, rtol=1e-12)
