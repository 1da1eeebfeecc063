"""The shim's backward engine (functrans/torch/_engine.py): the order nodes run in, gradients
summed over paths, leaves' .grad accumulation, freed graphs, create_graph, autograd.grad's
captures, hooks. Expected gradients are closed forms; the live comparison with PyTorch runs
when it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import functrans.torch as ftt

XS = [0.3, -1.2, 2.0]


def _x():
    return ftt.tensor(XS, dtype=ftt.float64, requires_grad=True)


def test_gradients_of_a_value_used_twice_are_summed_before_its_node_runs():
    x = _x()
    seen = []
    h = ftt.sin(x)
    h.register_hook(lambda g: seen.append(np.array(g.detach().numpy())))
    y = (h * h + 3.0 * h).sum()  # two paths into h: d/dh = 2h + 3
    y.backward()
    v = np.array(XS)
    assert len(seen) == 1  # sin's node runs once, with the sum of both paths
    np.testing.assert_allclose(seen[0], 2.0 * np.sin(v) + 3.0, rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), (2.0 * np.sin(v) + 3.0) * np.cos(v), rtol=1e-14)


def test_leaf_grad_accumulates_over_backward_calls():
    x = _x()
    (x * x).sum().backward()
    (3.0 * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.array(XS) + 3.0, rtol=1e-15)


def test_a_freed_graph_cannot_run_again_unless_retained():
    x = _x()
    y = (ftt.exp(x) * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    v = np.array(XS)
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.exp(v) * (1.0 + v), rtol=1e-14)
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()


def test_create_graph_records_the_gradient_so_it_can_be_differentiated():
    x = _x()
    (g,) = ftt.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    (h,) = ftt.autograd.grad(g.sum(), x)
    v = np.array(XS)
    np.testing.assert_allclose(g.detach().numpy(), 3.0 * v ** 2, rtol=1e-14)
    np.testing.assert_allclose(h.numpy(), 6.0 * v, rtol=1e-14)


def test_autograd_grad_captures_inputs_without_touching_leaves():
    x, w = _x(), ftt.tensor([2.0, 0.5, -1.0], dtype=ftt.float64, requires_grad=True)
    mid = x * w
    (g_mid,) = ftt.autograd.grad(ftt.tanh(mid).sum(), mid)
    m = np.array(XS) * np.array([2.0, 0.5, -1.0])
    np.testing.assert_allclose(g_mid.numpy(), 1.0 - np.tanh(m) ** 2, rtol=1e-14)
    assert x.grad is None and w.grad is None


def test_autograd_grad_of_an_unused_input():
    x, z = _x(), _x()
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        ftt.autograd.grad((x * 2.0).sum(), [x, z])
    gx, gz = ftt.autograd.grad((x * 2.0).sum(), [x, z], allow_unused=True)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0, 2.0])
    assert gz is None


def test_roots_are_checked_as_pytorch_checks_them():
    x = _x()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        ftt.tensor([1.0]).sum().backward()
    y = x * 2.0
    y.backward(gradient=ftt.tensor([1.0, 10.0, 100.0], dtype=ftt.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 20.0, 200.0])


def test_a_tensor_hook_replaces_the_gradient_flowing_on():
    x = _x()
    y = x * 3.0
    y.register_hook(lambda g: g * 10.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [30.0, 30.0, 30.0])


def test_nodes_run_newest_first():
    """PyTorch runs the ready node with the highest sequence number first; the hooks of two
    independent branches fire in the reverse of the order they were recorded in."""
    x = _x()
    order = []
    a = ftt.sin(x)
    b = ftt.cos(x)
    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    (a + b).sum().backward()
    assert order == ["b", "a"]


def test_matches_live_pytorch_on_a_branching_program():
    torch = pytest.importorskip("torch")

    def run(lib, mk):
        x = mk([0.3, -1.2, 2.0])
        w = mk([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
        h = lib.tanh(w @ x)
        y = (h * h).sum() + (lib.exp(-x) * x).sum()
        (gx, gw) = lib.autograd.grad(y, [x, w], create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum() + gw.sum(), x)
        return [np.asarray(t.detach().numpy()) for t in (gx, gw, ggx)]

    ours = run(ftt, lambda v: ftt.tensor(v, dtype=ftt.float64, requires_grad=True))
    theirs = run(torch, lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
