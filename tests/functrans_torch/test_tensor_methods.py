"""Tensor's methods as _tensor_methods installs them: the table of torch functions with self
first, their in-place forms, and the in-place overwrites (fill_, zero_, copy_) PyTorch's way.
Expected values are PyTorch 2.13's, recorded here (and checked live when torch is installed)."""

import inspect

import numpy as np
import pytest

import functrans.torch as torch
from functrans.torch import _tensor_methods


@pytest.mark.parametrize("name", _tensor_methods._FUNCTIONS.split())
def test_a_table_method_is_the_torch_function_of_its_name(name):
    fn = getattr(torch, name, None)
    if fn is None:
        pytest.skip(f"torch.{name} is a Tensor method only")
    # a module earlier in the search order defining the same name would shadow the function
    assert getattr(torch.Tensor, name) is inspect.unwrap(fn)


@pytest.mark.parametrize("name", ["add", "mul", "clamp_min", "sigmoid", "neg"])
def test_an_inplace_method_writes_the_function_result_into_self(name):
    x = torch.tensor([0.5, -1.0, 2.0])
    args = () if name in ("sigmoid", "neg") else (0.25,)
    expected = getattr(torch, name)(x, *args).numpy().copy()
    assert getattr(x, name + "_")(*args) is x
    np.testing.assert_array_equal(x.numpy(), expected)


def _overwrites(lib):
    """(values, dtype, grad_fn name, number of next_functions) after PyTorch's overwrites."""
    out = []
    x = lib.ones(3, requires_grad=True).clone()
    x.fill_(2)
    out.append((x.tolist(), type(x.grad_fn).__name__, len(x.grad_fn.next_functions)))
    x = lib.ones(3, requires_grad=True).clone()
    x.fill_(lib.tensor(2.5, requires_grad=True))
    out.append((x.tolist(), type(x.grad_fn).__name__, len(x.grad_fn.next_functions)))
    x = lib.ones(3, requires_grad=True).clone()
    x.zero_()
    out.append((x.tolist(), type(x.grad_fn).__name__, len(x.grad_fn.next_functions)))
    x = lib.zeros(2, 3)
    x.copy_(lib.tensor([1.0, 2.0, 3.0]))  # broadcast
    out.append((x.tolist(), None, 0))
    x = lib.zeros(3, dtype=lib.int64)
    x.copy_(lib.tensor([1.5, 2.0, -3.7]))  # copy_ casts, truncating toward zero
    out.append((x.tolist(), None, 0))
    return out


RECORDED = [([2.0, 2.0, 2.0], "FillBackward2", 1), ([2.5, 2.5, 2.5], "FillBackward3", 2),
            ([0.0, 0.0, 0.0], "ZeroBackward0", 1), ([[1.0, 2.0, 3.0]] * 2, None, 0),
            ([1, 2, -3], None, 0)]


def test_overwrites_match_recorded_pytorch():
    assert _overwrites(torch) == RECORDED


def test_overwrites_match_live_pytorch():
    real = pytest.importorskip("torch")
    assert _overwrites(real) == RECORDED


def test_overwrite_refuses_a_shape_that_does_not_broadcast_to_self():
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        torch.zeros(3).copy_(torch.zeros(2, 3))


def test_the_gradient_of_copy_flows_to_the_source_only():
    src = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    x = torch.ones(2, requires_grad=True)
    y = x.clone()
    y.copy_(src)
    (y * torch.tensor([3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [3.0, 4.0])
    assert src.grad.dtype == torch.float64
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_a_non_number_operand_is_a_type_error_as_in_pytorch():
    # before, a string was read as a complex number and failed deep inside numpy
    with pytest.raises(TypeError, match="Could not infer dtype of str"):
        torch.add(torch.tensor([1.0]), "x")
    with pytest.raises(TypeError, match="Could not infer dtype of str"):
        torch.tensor([1.0, "x"])


INFERENCE_WRITES = {"setitem": lambda t: t.__setitem__(0, 1.0), "uniform_": lambda t: t.uniform_(),
                    "squeeze_": lambda t: t.squeeze_(), "add_": lambda t: t.add_(1),
                    "zero_": lambda t: t.zero_()}


@pytest.mark.parametrize("lib", ["functrans", "torch"])
@pytest.mark.parametrize("name", INFERENCE_WRITES)
def test_an_inference_tensor_refuses_every_inplace_write_outside_inference_mode(lib, name):
    t_lib = torch if lib == "functrans" else pytest.importorskip("torch")
    with t_lib.inference_mode():
        t = t_lib.zeros(3)
    # PyTorch 2.13's message, as recorded
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        INFERENCE_WRITES[name](t)
    with t_lib.inference_mode():  # inside the mode the same write is allowed
        INFERENCE_WRITES[name](t)


def test_a_refused_sampler_draws_nothing():
    g = torch.Generator().manual_seed(3)
    with torch.inference_mode():
        t = torch.zeros(3)
    with pytest.raises(RuntimeError):
        t.normal_(generator=g)
    fresh = torch.Generator().manual_seed(3)
    np.testing.assert_array_equal(torch.randn(2, generator=g).numpy(),
                                  torch.randn(2, generator=fresh).numpy())
