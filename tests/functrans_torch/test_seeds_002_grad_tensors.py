"""Seed 002 (Chinese): "backward 操作时 grad_tensors 参数的作用" — why backward on a non-scalar
needs grad_tensors, and that it computes a vector-Jacobian product instead of a Jacobian.

The snippets as written (the text numbers their lines; the numbers are not code)."""

import numpy as np
import pytest

import functrans.torch as torch

RELU = """
import torch
x = torch.arange(-8.0, 8.0, 0.1, requires_grad=True)
y = torch.relu(x)
y.backward(torch.ones_like(x), retain_graph=True)
"""

NON_SCALAR = """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x*x
y.backward()
"""


def test_relu_backward_with_grad_tensors(snippet):
    ns = snippet(RELU)
    x = ns["x"]
    assert x.shape == torch.Size([160]) and x.dtype == torch.float32
    assert ns["y"].grad_fn.name() == "ReluBackward0"
    np.testing.assert_array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(np.float32))
    # retain_graph=True: the graph can be differentiated again, and gradients accumulate
    ns["y"].backward(torch.ones_like(x))
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (x.detach().numpy() > 0))


def test_non_scalar_backward_without_grad_tensors_raises(snippet):
    with pytest.raises(RuntimeError) as e:
        snippet(NON_SCALAR, {"torch": torch})
    assert str(e.value) == "grad can be implicitly created only for scalar outputs"


def test_grad_tensors_is_the_vector_of_a_vector_jacobian_product(snippet):
    # "grad_tensors 参数实际上就是充当这个向量 v 的角色": backward(v) gives J^T v, no Jacobian
    ns = snippet(NON_SCALAR.replace("y.backward()", ""), {"torch": torch})
    x, y = ns["x"], ns["y"]
    v = torch.tensor([0.1, 1.0, 10.0])
    y.backward(v)
    jacobian = np.diag(2 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), jacobian.T @ v.numpy(), rtol=1e-6)
    # the same through torch.autograd.backward(tensors, grad_tensors=...)
    x.grad = None
    torch.autograd.backward(x * x, grad_tensors=v)
    np.testing.assert_allclose(x.grad.numpy(), jacobian.T @ v.numpy(), rtol=1e-6)


def test_none_grad_tensor_is_accepted_for_scalars():
    # "None is an acceptable value for all tensors that don't need gradient tensors"
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    torch.autograd.backward([(x * x).sum(), x * 2], grad_tensors=[None, torch.ones(3)])
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
