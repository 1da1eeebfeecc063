"""check_jaxpr: one malformed program per invariant, each caught with a message naming it;
and every transform's output program passes the checker."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.avals import ShapedArray
from functrans.core.check import check_jaxpr
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, literal
from functrans.errors import InvalidJaxprError
from functrans.primitives.elementwise import add_p, sin_p
from functrans.primitives.reductions import reduce_sum_p

V3 = ShapedArray((3,), np.float64)
S = ShapedArray((), np.float64)


def bad(jaxpr, match):
    with pytest.raises(InvalidJaxprError, match=match):
        check_jaxpr(jaxpr)


def test_a_well_formed_program_passes():
    x, y, z = Var(V3), Var(V3), Var(V3)
    check_jaxpr(Jaxpr([], [x], [z], [Eqn(sin_p, [x], [y], {}),
                                      Eqn(add_p, [y, literal(1.0)], [z], {})]))


def test_use_before_definition():
    x, y, z = Var(V3), Var(V3), Var(V3)
    bad(Jaxpr([], [x], [z], [Eqn(add_p, [x, y], [z], {}), Eqn(sin_p, [x], [y], {})]),
        r"equation 0 \(add\): variable .* used before it is defined")


def test_unbound_output():
    x, y = Var(V3), Var(V3)
    bad(Jaxpr([], [x], [y], []), "outvars: variable .* used before it is defined")


def test_single_assignment_of_equation_outputs():
    x, y = Var(V3), Var(V3)
    bad(Jaxpr([], [x], [y], [Eqn(sin_p, [x], [y], {}), Eqn(sin_p, [x], [y], {})]),
        r"equation 1 \(sin\): variable .* assigned twice")


def test_single_assignment_of_inputs_and_constvars():
    x = Var(V3)
    bad(Jaxpr([], [x, x], [x], []), "invars: variable .* assigned twice")
    bad(Jaxpr([x], [x], [x], []), "invars: variable .* assigned twice")


def test_binders_must_be_vars():
    x = Var(V3)
    bad(Jaxpr([], [x], [x], [Eqn(sin_p, [x], [literal(1.0)], {})]), "is not a Var")


def test_literals_are_scalars():
    x, y = Var(V3), Var(V3)
    lit = Literal(np.ones(3), V3)
    bad(Jaxpr([], [x], [y], [Eqn(add_p, [x, lit], [y], {})]), "is not a scalar")


def test_literal_value_matches_its_type():
    x, y = Var(S), Var(S)
    lit = Literal(np.int64(1), S)  # typed f64[] but holds an int64
    bad(Jaxpr([], [x], [y], [Eqn(add_p, [x, lit], [y], {})]), "literal .* int64 .* f64")


def test_shape_rule_rejects_the_operands():
    x, y, z = Var(V3), Var(ShapedArray((4,), np.float64)), Var(V3)
    bad(Jaxpr([], [x, y], [z], [Eqn(add_p, [x, y], [z], {})]),
        r"equation 0 \(add\): the shape rule rejects its inputs: .*\(3,\) and \(4,\)")


def test_output_types_agree_with_the_shape_rule():
    x, y = Var(V3), Var(ShapedArray((3,), np.float32))
    bad(Jaxpr([], [x], [y], [Eqn(sin_p, [x], [y], {})]),
        r"outputs typed \['f32\[3\]'\] but the shape rule gives \['f64\[3\]'\]")
    y = Var(S)
    bad(Jaxpr([], [x], [y], [Eqn(reduce_sum_p, [x], [y], {"axes": ()})]),
        "shape rule gives")


def test_equation_output_count():
    x, y, z = Var(V3), Var(V3), Var(V3)
    bad(Jaxpr([], [x], [y], [Eqn(sin_p, [x], [y, z], {})]), "outputs typed")


def test_closed_jaxpr_consts_match_constvars_in_number_and_type():
    c, x, y = Var(V3), Var(V3), Var(V3)
    jaxpr = Jaxpr([c], [x], [y], [Eqn(add_p, [c, x], [y], {})])
    closed = ClosedJaxpr(jaxpr, [np.ones(3)])
    check_jaxpr(closed)
    closed.consts = []
    bad(closed, "consts and constvars differ in number")
    bad(ClosedJaxpr(jaxpr, [np.ones(4)]), r"const 0 .* f64\[4\] .* constvar typed f64\[3\]")


def test_nested_programs_in_params_are_checked():
    from functrans.core.primitive import Primitive
    call = Primitive("call")
    call.abstract_eval = lambda x, *, jaxpr: x
    ix, iy = Var(S), Var(S)
    inner = Jaxpr([], [ix], [iy], [])  # iy is never bound
    x, y = Var(S), Var(S)
    bad(Jaxpr([], [x], [y], [Eqn(call, [x], [y], {"jaxpr": ClosedJaxpr(inner, [])})]),
        "used before it is defined")


def _programs():
    """A few programs and every transform of them, as ClosedJaxprs."""
    w = np.linspace(0.5, 1.5, 3)
    f = lambda x: fnp.sum(fnp.tanh(x * w) * fnp.sin(x)) / 2.0
    x = np.linspace(-1, 1, 3)
    yield "f", ft.make_jaxpr(f)(x)
    yield "grad", ft.make_jaxpr(ft.grad(f))(x)
    yield "grad grad", ft.make_jaxpr(ft.grad(lambda s: ft.grad(f)(s * x)[0]))(0.3)
    yield "jvp", ft.make_jaxpr(lambda x, t: ft.jvp(f, (x,), (t,)))(x, x)
    yield "vmap grad", ft.make_jaxpr(ft.vmap(ft.grad(f)))(np.ones((2, 3)))
    yield "hessian", ft.make_jaxpr(ft.hessian(f))(x)
    yield "jacfwd jacrev", ft.make_jaxpr(ft.jacfwd(ft.jacrev(f)))(x)


@pytest.mark.parametrize("name,closed", list(_programs()), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_every_transform_emits_a_well_formed_program(name, closed):
    check_jaxpr(closed)


def test_ir_to_ir_passes_emit_well_formed_programs():
    from functrans.transforms.jvp import jvp_jaxpr
    from functrans.transforms.partial_eval import partial_eval_jaxpr
    from functrans.transforms.toolkit import batch_jaxpr, transpose_jaxpr
    w = np.linspace(0.5, 1.5, 3)
    closed = ft.make_jaxpr(lambda x, y: fnp.sum(fnp.sin(x * w) * y))(np.ones(3), np.ones(3))
    jvp_closed, _ = jvp_jaxpr(closed, [True, False])
    check_jaxpr(jvp_closed)
    check_jaxpr(batch_jaxpr(closed, [0, None], 5, hoisted=False)[0])
    for part in partial_eval_jaxpr(jvp_closed, [False, False, True])[:2]:
        check_jaxpr(part)
    linear = ft.make_jaxpr(lambda t: fnp.sum(t * w) * 2.0)(np.ones(3))
    check_jaxpr(transpose_jaxpr(linear, [True]))
