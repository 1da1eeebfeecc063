"""eval_jaxpr (functrans/core/eval.py): running a program by re-binding its equations, eagerly
on arrays, or under a transform when the arguments are tracers."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.eval import eval_jaxpr


def _f(x, y):
    return fnp.sin(x) * y + fnp.exp(-x * x), fnp.sum(x * y)


def test_eval_matches_the_closed_form():
    x, y = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    closed = ft.make_jaxpr(_f)(x, y)
    a, b = eval_jaxpr(closed.jaxpr, closed.consts, x, y)
    np.testing.assert_allclose(a, np.sin(x) * y + np.exp(-x * x), rtol=1e-15)
    np.testing.assert_allclose(b, np.sum(x * y), rtol=1e-15)


def test_eval_reads_consts_in_constvar_order():
    w1, w2 = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    closed = ft.make_jaxpr(lambda x: x * w1 + w2)(np.ones(2))
    assert len(closed.jaxpr.constvars) == 2
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, np.array([3.0, 4.0]))
    np.testing.assert_array_equal(out, [13.0, 28.0])
    (swapped,) = eval_jaxpr(closed.jaxpr, closed.consts[::-1], np.array([3.0, 4.0]))
    assert not np.array_equal(swapped, out)  # consts are positional, not matched by shape


def test_eval_of_multiple_result_equations():
    closed = ft.make_jaxpr(lambda x: fnp.split(x, 2))(np.arange(4.0))
    outs = eval_jaxpr(closed.jaxpr, closed.consts, np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(outs[0], [1.0, 2.0])
    np.testing.assert_array_equal(outs[1], [3.0, 4.0])


def test_eval_with_the_wrong_number_of_arguments_says_how_many():
    closed = ft.make_jaxpr(_f)(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="takes 2 inputs, got 1"):
        eval_jaxpr(closed.jaxpr, closed.consts, np.ones(2))


def test_eval_under_a_transform_differentiates_the_program():
    """Re-binding makes a staged program differentiable: grad through eval_jaxpr equals the
    closed-form derivative of sin(x) * y + exp(-x^2) summed."""
    x, y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4)
    closed = ft.make_jaxpr(_f)(x, y)

    def loss(x):
        return fnp.sum(eval_jaxpr(closed.jaxpr, closed.consts, x, y)[0])

    expected = np.cos(x) * y - 2.0 * x * np.exp(-x * x)
    np.testing.assert_allclose(ft.grad(loss)(x), expected, rtol=1e-13)
    batched = ft.vmap(lambda r: eval_jaxpr(closed.jaxpr, closed.consts, r, y)[1])(
        np.stack([x, 2.0 * x]))
    np.testing.assert_allclose(batched, [np.sum(x * y), np.sum(2.0 * x * y)], rtol=1e-14)


def test_eval_of_a_program_returning_an_input_or_a_literal():
    closed = ft.make_jaxpr(lambda x: (x, 2.0))(np.ones(2))
    x = np.array([5.0, 6.0])
    out_x, out_lit = eval_jaxpr(closed.jaxpr, closed.consts, x)
    np.testing.assert_array_equal(out_x, x)
    assert float(out_lit) == 2.0
