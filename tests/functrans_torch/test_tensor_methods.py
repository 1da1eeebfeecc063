"""Tensor's methods as _tensor_methods installs them: the table of torch functions with self
first, their in-place forms, and the in-place overwrites (fill_, zero_, copy_) PyTorch's way.
Expected values are PyTorch 2.13's, recorded here (and checked live when torch is installed)."""

import inspect

import numpy as np
import pytest

import functrans.torch as torch
from functrans.torch import _tensor_methods


# the table's names that are also torch functions (contiguous, view, expand, ... are methods only)
@pytest.mark.parametrize("name", [n for n in _tensor_methods._FUNCTIONS.split()
                                  if hasattr(torch, n)])
def test_a_table_method_is_the_torch_function_of_its_name(name):
    fn = getattr(torch, name)
    # a module earlier in the search order defining the same name would shadow the function
    assert inspect.unwrap(getattr(torch.Tensor, name)) is inspect.unwrap(fn)


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


def _assign(x, idx, v):
    x[idx] = v


# writes whose value does not fit: (tensor shape, the write); PyTorch's errors, recorded below
SHAPE_WRITES = {
    "row_gets_a_matrix": ((2, 3), lambda lib, x: _assign(x, 0, lib.ones(2, 3))),
    "row_gets_a_matrix_while_recording": (
        (2, 3), lambda lib, x: _assign(x.requires_grad_().clone(), 0, lib.ones(2, 3))),
    "ellipsis_gets_wider_rows": ((2, 3), lambda lib, x: _assign(x, Ellipsis, lib.ones(3, 3))),
    "slice_gets_short_rows": ((2, 3), lambda lib, x: _assign(x, slice(None), lib.ones(2))),
    "element_gets_a_vector": ((2, 3), lambda lib, x: _assign(x, (0, 1), lib.ones(2))),
    "column_gets_too_many": ((2, 3), lambda lib, x: _assign(x, (slice(None), 0), lib.ones(3))),
    "leading_unit_axes_dropped": ((2, 3), lambda lib, x: _assign(x, 0, lib.ones(1, 2, 3))),
    "int_tensor_row": ((2, 3), lambda lib, x: _assign(x.long(), 0, lib.ones(2, 3).long())),
    "index_list_gets_too_many": (
        (2, 3), lambda lib, x: _assign(x, lib.tensor([0, 1]), lib.ones(5, 2, 3))),
    "index_list_while_recording": (
        (2, 3), lambda lib, x: _assign(x.requires_grad_().clone(), lib.tensor([0, 1]),
                                       lib.ones(5, 2, 3))),
    "mask_gets_short_rows": ((2, 3), lambda lib, x: _assign(x, lib.tensor([True, False]),
                                                            lib.ones(2))),
    "list_value": ((2, 3), lambda lib, x: _assign(x, 0, [1.0, 2.0, 3.0])),
    "array_value": ((2, 3), lambda lib, x: _assign(x, 0, np.ones(3))),
    "copy_mismatched": ((2, 3), lambda lib, x: x.copy_(lib.ones(2))),
    "copy_mismatched_while_recording": (
        (2, 3), lambda lib, x: x.requires_grad_().clone().copy_(lib.ones(2))),
    "copy_into_a_view": ((2, 3), lambda lib, x: x[0].copy_(lib.ones(2))),
    "copy_wider": ((3,), lambda lib, x: x.copy_(lib.ones(2, 3))),
    "copy_more_axes": ((2, 3), lambda lib, x: x.copy_(lib.ones(1, 2, 3))),
    "copy_into_a_leaf": ((2,), lambda lib, x: x.requires_grad_().copy_(lib.ones(3))),
    "copy_a_list": ((2,), lambda lib, x: x.copy_([1.0, 2.0])),
}

SHAPE_WRITES_RECORDED = {  # PyTorch 2.13's errors, and the tensor after them
    'row_gets_a_matrix': ['RuntimeError',
        'expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be '
        'greater or equal to the number of dimensions in the tensor (2)',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'row_gets_a_matrix_while_recording': ['RuntimeError',
        'expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be '
        'greater or equal to the number of dimensions in the tensor (2)',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'ellipsis_gets_wider_rows': ['RuntimeError',
        'The expanded size of the tensor (2) must match the existing size (3) at non-singleton '
        'dimension 0.  Target sizes: [2, 3].  Tensor sizes: [3, 3]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'slice_gets_short_rows': ['RuntimeError',
        'The expanded size of the tensor (3) must match the existing size (2) at non-singleton '
        'dimension 1.  Target sizes: [2, 3].  Tensor sizes: [2]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'element_gets_a_vector': ['RuntimeError',
        'expand(torch.FloatTensor{[2]}, size=[]): the number of sizes provided (0) must be '
        'greater or equal to the number of dimensions in the tensor (1)',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'column_gets_too_many': ['RuntimeError',
        'The expanded size of the tensor (2) must match the existing size (3) at non-singleton '
        'dimension 0.  Target sizes: [2].  Tensor sizes: [3]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'leading_unit_axes_dropped': ['RuntimeError',
        'expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be '
        'greater or equal to the number of dimensions in the tensor (2)',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'int_tensor_row': ['RuntimeError',
        'expand(torch.LongTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be '
        'greater or equal to the number of dimensions in the tensor (2)',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'index_list_gets_too_many': ['RuntimeError',
        'shape mismatch: value tensor of shape [5, 2, 3] cannot be broadcast to indexing result '
        'of shape [2, 3]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'index_list_while_recording': ['RuntimeError',
        'shape mismatch: value tensor of shape [5, 2, 3] cannot be broadcast to indexing result '
        'of shape [2, 3]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'mask_gets_short_rows': ['RuntimeError',
        'shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of '
        'shape [1, 3]',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'list_value': ['TypeError',
        "can't assign a list to a torch.FloatTensor",
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'array_value': ['TypeError',
        "can't assign a numpy.ndarray to a torch.FloatTensor",
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'copy_mismatched': ['RuntimeError',
        'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension '
        '1',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'copy_mismatched_while_recording': ['RuntimeError',
        'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension '
        '1',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'copy_into_a_view': ['RuntimeError',
        'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension '
        '0',
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'copy_wider': ['RuntimeError',
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
        [0.0, 0.0, 0.0]],
    'copy_more_axes': ['RuntimeError',
        "output with shape [2, 3] doesn't match the broadcast shape [1, 2, 3]",
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
    'copy_into_a_leaf': ['RuntimeError',
        'a leaf Variable that requires grad is being used in an in-place operation.',
        [0.0, 0.0]],
    'copy_a_list': ['TypeError',
        "copy_(): argument 'other' (position 1) must be Tensor, not list",
        [0.0, 0.0]],
}


def _write_error(lib, name):
    shape, write = SHAPE_WRITES[name]
    x = lib.zeros(shape)
    try:
        write(lib, x)
    except Exception as e:  # the error is the observation
        return [type(e).__name__, str(e).split("\n")[0], x.tolist()]
    return ["no error", "", x.tolist()]


@pytest.mark.parametrize("name", SHAPE_WRITES)
def test_a_value_that_does_not_fit_gets_recorded_pytorch_error(name):
    assert _write_error(torch, name) == SHAPE_WRITES_RECORDED[name]


@pytest.mark.parametrize("name", SHAPE_WRITES)
def test_a_value_that_does_not_fit_gets_live_pytorch_error(name):
    real = pytest.importorskip("torch")
    assert _write_error(torch, name) == _write_error(real, name)


@pytest.mark.parametrize("lib", ["functrans", "torch"])
def test_values_that_fit_are_written(lib):
    t_lib = torch if lib == "functrans" else pytest.importorskip("torch")
    x = t_lib.zeros(2, 3)
    x[0] = t_lib.ones(1, 1, 3)  # leading unit axes dropped
    x[1] = np.float64(2.0)  # a numpy scalar is a number
    x[t_lib.tensor([0])] = t_lib.ones(1, 1, 3) * 3
    assert x.tolist() == [[3.0] * 3, [2.0] * 3]
    assert x.copy_(4.0).tolist() == [[4.0] * 3] * 2  # copy_ takes a number


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


@pytest.mark.parametrize("py, name", [(float, "float64"), (complex, "complex128"),
                                      (int, "int64"), (bool, "bool")])
def test_a_python_type_as_dtype_is_pytorchs_whatever_the_default(py, name):
    # PyTorch 2.13: dtype=float is torch.float64 and x.to(complex) complex128, under float32
    assert torch.zeros(2, dtype=py).dtype == getattr(torch, name)
    assert torch.ones(2).to(py).dtype == getattr(torch, name)


def test_to_with_copy_and_iteration_record_pytorchs_nodes():
    # PyTorch 2.13: x.to(copy=True) is ToCopyBackward0; iterating unbinds (UnbindBackward0 views)
    x = torch.ones(3, requires_grad=True)
    assert x.to(torch.float32, copy=True).grad_fn.name() == "ToCopyBackward0"
    assert x.to(copy=True).grad_fn.name() == "ToCopyBackward0"
    assert {t.grad_fn.name() for t in x} == {"UnbindBackward0"}
    assert all(t._base is x for t in x)
