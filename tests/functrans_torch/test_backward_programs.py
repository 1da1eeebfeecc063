"""The shim's backward programs (functrans/torch/_programs.py): the library's VJP of one op,
staged once per signature, reading exactly what the node must save, compiled by the program
toolkit, and cached in a bounded cache. Expected values are closed-form derivatives."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from functrans.core.avals import ShapedArray
from functrans.core.check import check_jaxpr
from functrans.core.ir import ClosedJaxpr
from functrans.primitives.elementwise import div_p, exp_p, mul_p, sin_p, tanh_p
from functrans.primitives.reductions import reduce_sum_p
from functrans.torch._programs import PROGRAMS, BackwardProgram, build_program, get_program
from functrans.torch._record import prim_op

F64 = ShapedArray((4,), np.float64)
X = np.array([-1.5, -0.25, 0.5, 2.0])
Y = np.array([0.75, 1.5, -2.0, 3.0])
CT = np.array([1.0, -2.0, 0.5, 3.0])


def _program(prim, n_in, diff=(0,), params=None, out=F64):
    return build_program(prim_op(prim), params or {}, [F64] * n_in, diff, [out])


def test_a_rule_reading_its_input_saves_the_input():
    prog = _program(sin_p, 1)
    assert (prog.used_inputs, prog.used_outputs, prog.diff_inputs) == ((0,), (), (0,))
    (g,) = prog.fn(X, CT)
    np.testing.assert_allclose(g, CT * np.cos(X), rtol=1e-15)  # d sin = cos


@pytest.mark.parametrize("prim,deriv_of_output", [
    (exp_p, lambda y: y),              # d exp(x) = exp(x): PyTorch saves the result
    (tanh_p, lambda y: 1.0 - y * y),   # d tanh(x) = 1 - tanh(x)^2
])
def test_a_rule_reading_its_output_saves_the_output_not_the_input(prim, deriv_of_output):
    prog = _program(prim, 1)
    assert prog.used_inputs == () and prog.used_outputs == (0,)
    y = prim.impl(X)
    (g,) = prog.fn(y, CT)
    np.testing.assert_allclose(g, CT * deriv_of_output(y), rtol=1e-14)


def test_only_the_inputs_needing_a_gradient_get_one_and_the_program_reads_only_what_it_uses():
    first = _program(mul_p, 2, diff=(0,))
    assert first.diff_inputs == (0,) and first.used_inputs == (1,)  # d(xy)/dx = y
    np.testing.assert_allclose(first.fn(Y, CT)[0], CT * Y, rtol=1e-15)
    both = _program(mul_p, 2, diff=(0, 1))
    assert both.used_inputs == (0, 1)
    gx, gy = both.fn(X, Y, CT)
    np.testing.assert_allclose(gx, CT * Y, rtol=1e-15)
    np.testing.assert_allclose(gy, CT * X, rtol=1e-15)


def test_div_reads_its_operands_as_pytorch_does():
    prog = _program(div_p, 2, diff=(0, 1))
    assert prog.used_outputs == ()  # PyTorch's div differentiates from a and b, not a / b
    assert prog.used_inputs == (0, 1)
    gx, gy = prog.fn(X, Y, CT)
    np.testing.assert_allclose(gx, CT / Y, rtol=1e-15)
    np.testing.assert_allclose(gy, -CT * X / (Y * Y), rtol=1e-14)


def test_a_reduction_broadcasts_the_cotangent_back():
    prog = build_program(prim_op(reduce_sum_p), {"axes": (0,)}, [F64], (0,),
                         [ShapedArray((), np.float64)])
    assert prog.used_inputs == () and prog.used_outputs == ()
    (g,) = prog.fn(np.float64(2.5))
    np.testing.assert_array_equal(g, np.full(4, 2.5))
    assert g.flags.writeable  # the engine may accumulate into it


def test_programs_are_well_formed_and_agree_with_their_compiled_form():
    for prim, ins, diff in [(sin_p, [X], (0,)), (exp_p, [X], (0,)), (mul_p, [X, Y], (0, 1)),
                            (div_p, [X, Y], (1,))]:
        prog = _program(prim, len(ins), diff)
        check_jaxpr(prog.jaxpr)
        outs = [prim.impl(*ins)]
        args = [ins[i] for i in prog.used_inputs] + [outs[k] for k in prog.used_outputs] + [CT]
        compiled = prog.fn(*args)
        evaluated = ClosedJaxpr(prog.jaxpr, prog.consts)(*args)
        for a, b in zip(compiled, evaluated):
            np.testing.assert_allclose(a, b, rtol=1e-15)


def _cached_program(op, vals, needs, outs):
    """get_program with no params (whether or not it still takes a hand-written params key)."""
    if "pkey" in inspect.signature(get_program).parameters:
        return get_program(op, {}, (), vals, needs, outs)
    return get_program(op, {}, vals, needs, outs)


def test_the_cache_returns_one_program_per_signature_and_is_bounded():
    op = prim_op(sin_p)
    x32 = np.ones(3, np.float32)
    p1 = _cached_program(op, [x32], (True,), [x32])
    assert _cached_program(op, [np.zeros(3, np.float32)], (True,), [x32]) is p1
    x5 = np.ones(5, np.float32)
    assert _cached_program(op, [x5], (True,), [x5]) is not p1
    x64 = np.ones(3, np.float64)
    assert _cached_program(op, [x64], (True,), [x64]) is not p1
    assert isinstance(p1, BackwardProgram)
    assert 0 < PROGRAMS.maxsize <= 1 << 16


def test_recording_the_same_op_twice_reuses_its_program():
    import functrans.torch as ftt
    x = ftt.tensor([1.0, 2.0], requires_grad=True)
    a, b = ftt.sin(x), ftt.sin(x * 2.0)
    assert a.grad_fn._prog is b.grad_fn._prog
    c = ftt.sin(ftt.tensor([1.0, 2.0, 3.0], requires_grad=True))
    assert c.grad_fn._prog is not a.grad_fn._prog
