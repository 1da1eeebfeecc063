"""Known-zero tangents and cotangents stay symbolic: no equations for them, and derivative
programs stay as small as JAX's."""

from textwrap import dedent

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans.core.ir import Literal
from functrans.transforms.jvp import jvp_jaxpr


def names(closed):
    return [e.primitive.name for e in closed.eqns]


def test_grad_wrt_one_argument_emits_nothing_for_the_other():
    closed = ft.make_jaxpr(ft.grad(lambda x, y: fnp.sin(x) * fnp.exp(y)))(1.0, 2.0)
    # primal: sin, cos (residual), exp, mul; backward: seed * exp(y), * cos(x). Nothing
    # differentiates exp(y): y's cotangent is never asked for.
    assert str(closed) == dedent("""\
        { lambda ; a:f64[] b:f64[]. let
            c:f64[] = sin a
            d:f64[] = cos a
            e:f64[] = exp b
            f:f64[] = mul c e
            g:f64[] = mul 1.0 e
            h:f64[] = mul g d
          in (h,) }""")


def test_separable_sum_differentiates_only_the_used_branch():
    f = lambda x, y: fnp.sum(fnp.sin(x)) + fnp.sum(fnp.exp(y) * fnp.tanh(y))
    closed = ft.make_jaxpr(ft.grad(f))(np.ones(3), np.ones(3))
    # y's branch appears only as primal work: no tanh derivative (1 - y^2) is formed
    assert names(closed).count("tanh") == 1 and "sub" not in names(closed)
    np.testing.assert_allclose(closed(np.ones(3), np.ones(3))[0], np.cos(np.ones(3)))


def test_no_dependence_gives_one_zero_fill_and_no_arithmetic():
    closed = ft.make_jaxpr(ft.grad(lambda x, y: y * 2.0))(np.ones(3), 1.0)
    assert names(closed) == ["mul", "broadcast_in_dim"]  # primal, then the zeros of x's shape


def test_integer_arguments_get_no_tangent_work():
    closed, out_nz = jvp_jaxpr(ft.make_jaxpr(lambda x, n: fnp.sin(x) * n)(1.0, np.int64(2)),
                               [True, False])
    assert out_nz == [True]
    # primal: convert, sin, mul; tangent: cos, mul t, mul n -- nothing for n's tangent
    assert names(closed).count("mul") == 3 and len(closed.eqns) == 6


def test_jvp_with_some_symbolic_zero_inputs_skips_their_work():
    prog = ft.make_jaxpr(lambda x, y: fnp.sin(x) + fnp.exp(y) * fnp.tanh(y))(1.0, 1.0)
    only_x, _ = jvp_jaxpr(prog, [True, False])
    both, _ = jvp_jaxpr(prog, [True, True])
    assert len(only_x.eqns) == len(prog.eqns) + 2  # cos x, mul t cos
    assert len(both.eqns) > len(only_x.eqns) + 4


def test_zero_cotangents_are_not_added_or_multiplied():
    # an output that does not depend on x contributes nothing to x's cotangent
    def f(x, y):
        return fnp.sin(x) * 3.0 + y * y

    closed = ft.make_jaxpr(ft.grad(f))(1.0, 2.0)
    for eqn in closed.eqns:
        for a in eqn.invars:
            assert not (isinstance(a, Literal) and float(a.val) == 0.0), eqn


def test_unused_outputs_of_vjp_get_no_cotangent_work():
    def f(x):
        return fnp.sin(x), fnp.exp(x) * fnp.tanh(x)

    closed = ft.make_jaxpr(lambda x: ft.vjp(f, x)[1]((1.0, 0.0)))(0.5)
    closed_sym = ft.make_jaxpr(lambda x: ft.vjp(lambda x: f(x)[0], x)[1](1.0))(0.5)
    # a concrete 0.0 cotangent is data, so its work stays (as in JAX); the symbolic version
    # (only the first output) has no work for the second
    assert len(closed_sym.eqns) < len(closed.eqns)


# equation counts of make_jaxpr of the n-th nested grad of sin(x) * exp(-x*x/2), recorded
# from JAX 0.10.2 (benchmarks/bench_nested_grad_eqns.py prints both live when JAX is there)
JAX_NESTED_GRAD_EQNS = {1: 17, 2: 46, 3: 108, 4: 235, 5: 498}


def test_nested_derivative_programs_are_no_larger_than_jax():
    f = lambda x: fnp.sin(x) * fnp.exp(-x * x / 2)
    g = f
    for n in range(1, 6):
        g = ft.grad(g)
        assert len(ft.make_jaxpr(g)(1.0).eqns) <= JAX_NESTED_GRAD_EQNS[n], n
