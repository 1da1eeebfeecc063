"""The JAX-style printer on hand-built programs: naming, literals, params, nested programs."""

from textwrap import dedent

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, literal
from functrans.core.pretty import _name
from functrans.core.primitive import Primitive

F64 = ShapedArray((), np.float64)


def prim(name, multiple_results=False):
    return Primitive(name, multiple_results=multiple_results)


def test_variable_names_continue_past_z_like_jax():
    assert [_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == \
        ["a", "b", "z", "ba", "bb", "bz", "ca", "baz", "bba"]


def test_literals_print_by_dtype():
    p = prim("f")
    x = Var(ShapedArray((2,), np.float64))
    out = Var(ShapedArray((2,), np.float64))
    lits = [literal(2.0), literal(np.float32(0.5)), literal(-3), literal(True), literal(False)]
    eqn = Eqn(p, [x, *lits], [out], {})
    assert str(Jaxpr([], [x], [out], [eqn])) == dedent("""\
        { lambda ; a:f64[2]. let
            b:f64[2] = f a 2.0 0.5 -3 True False
          in (b,) }""")
    assert lits[2].aval == ShapedArray((), np.int64) and lits[3].aval.dtype == np.bool_


def test_params_print_sorted_with_dtypes_by_name():
    p = prim("convert")
    x, y = Var(F64), Var(ShapedArray((), np.float32))
    eqn = Eqn(p, [x], [y], {"new_dtype": np.dtype(np.float32), "axes": (0, 1), "a": None})
    assert repr(eqn) == "b:f32[] = convert[a=None axes=(0, 1) new_dtype=float32] a"


def test_multiple_results_constvars_and_shapes():
    split = prim("split", multiple_results=True)
    c = Var(ShapedArray((2, 3), np.float32))
    x = Var(ShapedArray((4,), np.int32))
    o1, o2 = Var(ShapedArray((2,), np.int32)), Var(ShapedArray((2,), np.int32))
    jaxpr = Jaxpr([c], [x], [o2, o1, c], [Eqn(split, [x], [o1, o2], {"n": 2})])
    assert str(ClosedJaxpr(jaxpr, [np.zeros((2, 3), np.float32)])) == dedent("""\
        { lambda a:f32[2,3]; b:i32[4]. let
            c:i32[2] d:i32[2] = split[n=2] b
          in (d, c, a) }""")


def test_nested_programs_in_params_are_indented_with_fresh_names():
    inner_x, inner_y = Var(F64), Var(F64)
    inner = Jaxpr([], [inner_x], [inner_y], [Eqn(prim("sin"), [inner_x], [inner_y], {})])
    x, y = Var(F64), Var(F64)
    outer = Jaxpr([], [x], [y], [Eqn(prim("call"), [x], [y],
                                     {"jaxpr": ClosedJaxpr(inner, [])})])
    assert str(outer) == dedent("""\
        { lambda ; a:f64[]. let
            b:f64[] = call[jaxpr={ lambda ; a:f64[]. let
                b:f64[] = sin a
              in (b,) }] a
          in (b,) }""")


def test_literal_outputs_and_empty_programs():
    lit = Literal(np.float64(1.0), F64)
    assert str(Jaxpr([], [], [lit, lit], [])) == dedent("""\
        { lambda ; . let
          in (1.0, 1.0) }""")
