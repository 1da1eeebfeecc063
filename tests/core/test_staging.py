"""make_jaxpr: programs pinned as golden strings in JAX's text format.

Closure-captured arrays become constvars, Python and numpy scalars become literals, pytree
arguments and results are flattened in JAX's leaf order, static_argnums are baked in.
"""

from textwrap import dedent

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr


def golden(text: str) -> str:
    return dedent(text).strip()


def staged(f, *args, **kw):
    closed = ft.make_jaxpr(f, **kw)(*args)
    check_jaxpr(closed)
    return closed


def test_elementwise_program():
    f = lambda x: fnp.sin(x) * fnp.exp(-x * x / 2)
    assert str(staged(f, 1.0)) == golden("""
        { lambda ; a:f64[]. let
            b:f64[] = sin a
            c:f64[] = neg a
            d:f64[] = mul c a
            e:f64[] = div d 2.0
            f:f64[] = exp e
            g:f64[] = mul b f
          in (g,) }""")


def test_closure_captured_array_becomes_a_constvar_and_scalars_literals():
    w = np.arange(3.0)
    closed = staged(lambda x: fnp.sum(x * w) + 2, np.ones(3))
    assert str(closed) == golden("""
        { lambda a:f64[3]; b:f64[3]. let
            c:f64[3] = mul b a
            d:f64[] = reduce_sum[axes=(0,)] c
            e:f64[] = add d 2.0
          in (e,) }""")
    # make_jaxpr hands the caller a copy: writing into it must not change w
    assert len(closed.consts) == 1 and np.array_equal(closed.consts[0], w)
    assert not np.shares_memory(closed.consts[0], w)
    # the same captured array used twice is one constvar
    closed = staged(lambda x: x * w + w, np.ones(3))
    assert len(closed.jaxpr.constvars) == 1


def test_numpy_scalars_and_0d_arrays_become_literals_of_their_dtype():
    x32 = np.ones(2, np.float32)
    assert str(staged(lambda x: x + np.float32(1.5), x32)) == golden("""
        { lambda ; a:f32[2]. let
            b:f32[2] = add a 1.5
          in (b,) }""")
    assert str(staged(lambda x: x * -2, np.array([1, 2]))) == golden("""
        { lambda ; a:i64[2]. let
            b:i64[2] = mul a -2
          in (b,) }""")
    closed = staged(lambda x: x * np.array(3.0), 1.0)
    assert closed.jaxpr.constvars == [] and "mul a 3.0" in str(closed)


def test_pytree_arguments_and_results_flatten_in_jax_order():
    f = lambda p, s: {"sum": p["w"] * s, "pair": [p["b"], None]}
    closed = staged(f, {"w": np.ones(2, np.float32), "b": 3}, np.float32(2.0))
    # inputs: p's leaves in sorted-key order (b, w), then s; outputs: 'pair' before 'sum'
    assert str(closed) == golden("""
        { lambda ; a:i64[] b:f32[2] c:f32[]. let
            d:f32[2] = mul b c
          in (a, d) }""")
    out = ft.tree_util.tree_unflatten(closed.out_tree, closed(3, np.ones(2, np.float32), 2.0))
    assert set(out) == {"sum", "pair"} and out["pair"][1] is None


def test_static_argnums_are_baked_into_the_program():
    def f(x, n, scale):
        for _ in range(n):  # Python control flow on a static value is fine
            x = fnp.sin(x)
        return x * scale

    assert str(staged(f, 1.0, 2, 3.0, static_argnums=(1,))) == golden("""
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = sin a
            d:f64[] = sin c
            e:f64[] = mul d b
          in (e,) }""")
    assert str(staged(lambda x, k: x * k, 2.0, 3, static_argnums=1)) == golden("""
        { lambda ; a:f64[]. let
            b:f64[] = mul a 3.0
          in (b,) }""")


def test_outputs_that_are_inputs_or_literals():
    assert str(staged(lambda x: (x, x), 1.0)) == golden("""
        { lambda ; a:f64[]. let
          in (a, a) }""")
    assert str(staged(lambda: 1.0)) == golden("""
        { lambda ; . let
          in (1.0,) }""")


def test_one_equation_per_primitive_application():
    def f(x):
        y = x
        for _ in range(7):
            y = fnp.tanh(y) + x
        return y

    closed = staged(f, np.ones(4))
    assert [e.primitive.name for e in closed.eqns] == ["tanh", "add"] * 7


def test_make_jaxpr_of_grad_shows_the_derivative_program():
    f = lambda x: fnp.sin(x) * x
    assert str(staged(ft.grad(f), 1.0)) == golden("""
        { lambda ; a:f64[]. let
            b:f64[] = sin a
            c:f64[] = cos a
            d:f64[] = mul b a
            e:f64[] = mul b 1.0
            f:f64[] = mul 1.0 a
            g:f64[] = mul f c
            h:f64[] = add e g
          in (h,) }""")  # JAX 0.10 prints this program too (add_any for add, `_` for d)


def test_the_program_evaluates_to_the_function():
    f = lambda x, y: fnp.sum(fnp.tanh(x) * y) / 3.0
    x, y = np.linspace(-1, 1, 5), np.linspace(0, 2, 5)
    closed = staged(f, x, y)
    np.testing.assert_allclose(closed(x, y)[0], np.sum(np.tanh(x) * y) / 3.0, rtol=1e-14)


def test_public_ir_attributes_read_like_jax():
    closed = staged(lambda x: fnp.sin(x) + 1.0, np.ones(2))
    jaxpr = closed.jaxpr
    assert [v.aval for v in jaxpr.invars] == [ft.ShapedArray((2,), np.float64)]
    eqn = jaxpr.eqns[0]
    assert eqn.primitive.name == "sin" and eqn.params == {}
    assert eqn.invars == jaxpr.invars and eqn.outvars == jaxpr.eqns[1].invars[:1]
    assert jaxpr.outvars == jaxpr.eqns[1].outvars
    assert closed.consts == []


def test_unsupported_argument_types_are_named():
    with pytest.raises(TypeError, match="builtins.str"):
        ft.make_jaxpr(lambda x: x)("abc")
    with pytest.raises(TypeError, match="builtins.object"):
        ft.make_jaxpr(lambda x: x)(object())
