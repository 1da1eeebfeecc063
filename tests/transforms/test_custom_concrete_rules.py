"""custom_jvp / custom_vjp rules that branch on their primal inputs in Python: outside jit
(eager grad, jvp, vjp, linearize, hessian) the rule sees concrete primals and runs, as in JAX;
under jit or vmap the same `if` on a traced value raises JAX's error, naming the fix.
Expected values are closed forms (each branch's derivative written out), and live JAX's when
it is installed."""

import functools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import TracerBoolConversionError


def _program(lib, jnp):
    """The same program on either library: three custom rules whose Python branches on primals."""

    @lib.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        if x > 0 and y < 5:                       # concrete primals: a plain Python branch
            return f(x, y), jnp.cos(x) * y * tx + jnp.sin(x) * ty
        return f(x, y), 10.0 * tx + 0.0 * ty

    @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
    def g(n, x):
        return x ** n

    @g.defjvp
    def g_jvp(n, primals, tangents):
        (x,), (t,) = primals, tangents
        if x < 0:
            return g(n, x), 0.0 * t
        return g(n, x), n * x ** (n - 1) * t

    @lib.custom_vjp
    def h(x):
        return jnp.exp(x)

    def h_fwd(x):
        return jnp.exp(x), (x, 1.0 if x > 1.0 else 2.0)

    def h_bwd(res, ct):
        return (res[1] * ct,)

    h.defvjp(h_fwd, h_bwd)

    def prog(x):
        return f(x * 2.0, x + 1.0) + g(3, x - 0.5) + h(x) + f(-x, 1.0)

    return f, g, prog


def _prog_grad(x):
    """Closed form of d prog / dx with each rule's branch chosen by hand."""
    a, b = 2 * x, x + 1
    df = (np.cos(a) * b * 2 + np.sin(a)) if (a > 0 and b < 5) else 10.0 * 2
    dg = 0.0 if x - 0.5 < 0 else 3 * (x - 0.5) ** 2
    dh = 1.0 if x > 1.0 else 2.0
    df_neg = -np.cos(-x) if -x > 0 else -10.0
    return df + dg + dh + df_neg


@pytest.mark.parametrize("x", [0.7, 1.7, 0.3, -0.4])
def test_rule_branching_on_primals_runs_under_eager_grad(x):
    _, _, prog = _program(ft, fnp)
    np.testing.assert_allclose(ft.grad(prog)(x), _prog_grad(x), rtol=1e-14)
    np.testing.assert_allclose(ft.vjp(prog, x)[1](1.0)[0], _prog_grad(x), rtol=1e-14)
    np.testing.assert_allclose(ft.value_and_grad(prog)(x)[1], _prog_grad(x), rtol=1e-14)


def test_custom_jvp_rule_branching_on_primals_runs_under_eager_jvp_and_linearize():
    f, g, _ = _program(ft, fnp)
    # branch taken: cos(x) y tx + sin(x) ty; not taken (x <= 0): 10 tx
    out, t = ft.jvp(f, (0.5, 2.0), (1.0, 3.0))
    np.testing.assert_allclose(t, np.cos(0.5) * 2.0 + np.sin(0.5) * 3.0, rtol=1e-15)
    np.testing.assert_allclose(out, np.sin(0.5) * 2.0, rtol=1e-15)
    np.testing.assert_allclose(ft.jvp(f, (-0.5, 2.0), (1.0, 3.0))[1], 10.0)
    np.testing.assert_allclose(ft.linearize(lambda x: g(3, x), -2.0)[1](1.0), 0.0)
    np.testing.assert_allclose(ft.linearize(lambda x: g(3, x), 2.0)[1](1.0), 12.0)
    gx, gy = ft.grad(f, argnums=(0, 1))(0.5, 7.0)               # y >= 5: the other branch
    assert (float(gx), float(gy)) == (10.0, 0.0)


def test_branching_rules_under_second_order_eager_transforms():
    f, _, prog = _program(ft, fnp)
    # the rule's own tangent expression is differentiated again: d/dx [cos(x) y] = -sin(x) y
    np.testing.assert_allclose(ft.grad(ft.grad(lambda x: f(x, 2.0)))(0.5), -np.sin(0.5) * 2.0,
                               rtol=1e-14)
    # d2/dx2 of the branch-taken pieces at x = 0.7 (h's and f(-x)'s derivatives are constant)
    x = 0.7
    want = -4 * np.sin(2 * x) * (x + 1) + 4 * np.cos(2 * x) + 6 * (x - 0.5)
    np.testing.assert_allclose(ft.hessian(prog)(x), want, rtol=1e-13)
    np.testing.assert_allclose(ft.jacfwd(ft.jacrev(prog))(x), want, rtol=1e-13)


def test_branching_on_a_traced_primal_names_the_fix():
    f, _, prog = _program(ft, fnp)
    for transformed in (ft.jit(ft.grad(prog)), ft.grad(ft.jit(prog))):
        with pytest.raises(TracerBoolConversionError, match="static_argnums|where"):
            transformed(0.7)
    with pytest.raises(TracerBoolConversionError, match="vmap"):
        ft.vmap(ft.grad(lambda x: f(x, 2.0)))(np.array([0.5, -0.5]))


def test_branching_rules_equal_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    _, _, prog_ft = _program(ft, fnp)
    f_jax, _, prog_jax = _program(jax, jnp)
    for x in (0.7, 1.7, 0.3, -0.4):
        np.testing.assert_allclose(ft.grad(prog_ft)(x), jax.grad(prog_jax)(x), rtol=1e-14)
    np.testing.assert_allclose(ft.hessian(prog_ft)(0.7), jax.hessian(prog_jax)(0.7), rtol=1e-13)
    with pytest.raises(jax.errors.TracerBoolConversionError):   # JAX refuses under jit too
        jax.jit(jax.grad(prog_jax))(0.7)
