"""Recording (functrans/torch/_record.py): which ops leave a node on the tape, what the node is
called and where its edges lead, what it saves and when a saved value is stale."""

from __future__ import annotations

import numpy as np
import pytest

import functrans.torch as ftt


def test_a_node_is_named_as_pytorch_names_it_and_edges_lead_to_the_inputs():
    x = ftt.tensor([1.0, 2.0], requires_grad=True)
    y = ftt.exp(x * 3.0)
    assert type(y.grad_fn).__name__ == "ExpBackward0"
    (mul, nr), = y.grad_fn.next_functions
    assert type(mul).__name__ == "MulBackward0" and nr == 0
    (acc, _), (const, _) = mul.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert const is None  # a number is no input of the node


def test_a_nodes_metadata_is_one_dict_kept_with_it():
    y = (ftt.tensor([1.0], requires_grad=True) * 2.0).sum()
    y.grad_fn.metadata["seen"] = 1  # as PyTorch's: the same dict on each access
    assert y.grad_fn.metadata == {"seen": 1}
    assert y.grad_fn.next_functions[0][0].metadata == {}


def test_nothing_is_recorded_without_an_input_requiring_grad_or_under_no_grad():
    x = ftt.tensor([1.0, 2.0])
    y = ftt.sin(x)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    w = ftt.tensor([1.0, 2.0], requires_grad=True)
    with ftt.no_grad():
        z = w * 2.0
    assert not z.requires_grad and z.grad_fn is None
    assert (w * 2.0).requires_grad


def test_results_are_the_forward_values():
    x = ftt.tensor([0.5, 1.5], dtype=ftt.float64, requires_grad=True)
    y = ftt.tanh(x) * x
    np.testing.assert_allclose(y.detach().numpy(), np.tanh([0.5, 1.5]) * [0.5, 1.5],
                               rtol=1e-15)


def test_a_saved_input_changed_in_place_is_an_error_at_backward():
    x = ftt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = ftt.sin(h)  # sin saves its input h
    h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_an_input_the_rule_does_not_read_may_change_in_place():
    x = ftt.tensor([1.0, 2.0], dtype=ftt.float64, requires_grad=True)
    h = x * 1.0
    y = h + 2.0  # add's backward reads nothing
    h.mul_(5.0)  # after y was computed: y's graph does not go through mul_
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_exp_saves_its_result_not_its_input():
    """PyTorch's exp backward reads exp(x): changing x in place afterwards is no error and
    leaves the gradient at exp of the value x had."""
    x = ftt.tensor([0.0, 1.0], dtype=ftt.float64, requires_grad=True)
    h = x * 1.0
    y = ftt.exp(h)
    h.add_(1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-15)
