"""The IR's data types (functrans/core/ir.py): variables, literals, equations, programs, and
what a ClosedJaxpr promises its callers (derived-program cache, unaliased results)."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.avals import ShapedArray
from functrans.core.ir import DERIVED_CACHE_SIZE, ClosedJaxpr, Eqn, Jaxpr, Literal, Var, literal
from functrans.primitives.elementwise import mul_p, sin_p


def test_vars_are_distinct_by_identity_and_typed_by_their_aval():
    a = ShapedArray((2, 3), np.float32)
    u, v = Var(a), Var(a)
    assert u is not v and u != v and len({u, v}) == 2
    assert u.aval == v.aval == ShapedArray((2, 3), "float32")
    assert u.count < v.count  # numbered in creation order: the printer names them by it


def test_literal_takes_the_numpy_dtype_of_its_value():
    assert literal(2.5).aval == ShapedArray((), np.float64)
    assert literal(np.float32(1)).aval == ShapedArray((), np.float32)
    assert literal(3).aval.dtype == np.asarray(3).dtype
    lit = literal(True)
    assert lit.aval.dtype == np.bool_ and lit.val == True  # noqa: E712 (a numpy bool)
    assert np.ndim(lit.val) == 0


def test_a_hand_built_program_has_the_avals_of_its_variables():
    f64 = ShapedArray((3,), np.float64)
    x, c, y, z = Var(f64), Var(f64), Var(f64), Var(f64)
    eqns = [Eqn(sin_p, [x], [y], {}), Eqn(mul_p, [y, c], [z], {})]
    jaxpr = Jaxpr([c], [x], [z], eqns)
    assert jaxpr.in_avals == [f64] and jaxpr.out_avals == [f64]
    closed = ClosedJaxpr(jaxpr, [np.full(3, 2.0)])
    xs = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(closed(xs)[0], 2.0 * np.sin(xs), rtol=1e-15)
    text = str(closed)
    assert "sin" in text and "mul" in text


def test_closed_jaxpr_checks_its_consts_match_its_constvars():
    f64 = ShapedArray((), np.float64)
    with pytest.raises(AssertionError):
        ClosedJaxpr(Jaxpr([Var(f64)], [], [], []), [])


def test_calling_a_program_never_returns_an_input_or_a_constant():
    const = np.arange(3.0)
    closed = ft.make_jaxpr(lambda x: (x, const))(np.ones(3))
    x = np.ones(3)
    out_x, out_c = closed(x)
    np.testing.assert_array_equal(out_x, x)
    np.testing.assert_array_equal(out_c, const)
    assert not np.shares_memory(out_x, x)
    assert not any(np.shares_memory(out_c, c) for c in closed.consts)


def test_literals_in_equations_are_read_as_values():
    closed = ft.make_jaxpr(lambda x: x * 3.0 + 1.0)(np.ones(2))
    lits = [a for e in closed.eqns for a in e.invars if type(a) is Literal]
    assert sorted(float(a.val) for a in lits) == [1.0, 3.0]
    np.testing.assert_array_equal(closed(np.array([1.0, 2.0]))[0], [4.0, 7.0])


def test_derived_programs_are_cached_per_program_and_bounded():
    closed = ft.make_jaxpr(lambda x: fnp.sin(x))(np.ones(2))
    built = []

    def build(k):
        built.append(k)
        return ("program", k)

    assert closed.derived.get_or_build("jvp", lambda: build("jvp")) == ("program", "jvp")
    assert closed.derived.get_or_build("jvp", lambda: build("again")) == ("program", "jvp")
    assert built == ["jvp"]
    for k in range(3 * DERIVED_CACHE_SIZE):
        closed.derived.get_or_build(k, lambda k=k: build(k))
    assert len(closed.derived.keys()) <= DERIVED_CACHE_SIZE
    other = ft.make_jaxpr(lambda x: fnp.sin(x))(np.ones(2))
    assert other.derived.get("jvp") is None  # each program has its own
