"""functrans.torch's PyTorch semantics beyond the parity programs: the tape's place among the
transforms, version counters, views, grad accumulation identity, grad mode per thread, hooks."""

import copy
import threading

import numpy as np
import pytest

import functrans as ft
import functrans.torch as torch
from functrans.core.trace import Tracer
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.torch._tensor import TAPE_MAIN

# --- the tape among the transforms -------------------------------------------------------------

def test_tensors_belong_to_the_tape_between_eager_and_transforms():
    x = torch.tensor([1.0])
    assert isinstance(x, Tracer)
    assert x._trace.main is TAPE_MAIN and TAPE_MAIN.level == 0.5


def test_primitives_bound_on_tensors_record_onto_the_tape():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    y = R.reduce_sum(E.mul(E.sin(x), x), (0,))
    assert isinstance(y, torch.Tensor) and type(y.grad_fn).__name__ == "SumBackward1"
    y.backward()
    v = np.array([0.5, 1.0], np.float32)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(v) * v + np.sin(v), rtol=1e-6)


def test_functional_vjp_runs_on_tensors_and_its_result_is_differentiable():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    out, f_vjp = ft.vjp(lambda t: E.mul(E.sin(t), t), x)
    assert isinstance(out, torch.Tensor)
    (g,) = f_vjp(torch.ones(2))
    assert isinstance(g, torch.Tensor) and g.requires_grad
    g.sum().backward()  # d/dx (cos x * x + sin x) = 2 cos x - x sin x
    v = np.array([0.5, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(v) - v * np.sin(v), rtol=1e-6)


def test_make_jaxpr_of_a_backward_program_uses_the_primitive_table():
    from functrans.torch._programs import PROGRAMS
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    x.exp().sum()
    progs = [PROGRAMS.get(k) for k in PROGRAMS.keys() if k[0].name == "ExpBackward0"]
    assert progs and progs[-1].used_outputs == (0,) and progs[-1].used_inputs == ()
    assert [e.primitive.name for e in progs[-1].jaxpr.eqns] == ["mul"]


# --- version counters and views ----------------------------------------------------------------

def test_version_counter_counts_inplace_ops():
    x = torch.zeros(3)
    assert x._version == 0
    x.add_(1)
    x.mul_(2)
    x[0] = 5.0
    x.zero_()
    x.fill_(3.0)
    x.copy_(torch.ones(3))
    x += 1
    assert x._version == 7 and x.tolist() == [2.0, 2.0, 2.0]


def test_detach_shares_the_version_counter_data_does_not():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    d.add_(1)
    assert x._version == 1 and x.tolist() == [2.0, 3.0]
    x.data.add_(1)
    assert x._version == 1 and x.tolist() == [3.0, 4.0]


def test_views_share_storage_and_version():
    x = torch.arange(6.0)
    v = x.view(2, 3)[1]
    v.fill_(0.0)
    assert x.tolist() == [0.0, 1.0, 2.0, 0.0, 0.0, 0.0]
    assert x._version == 1 and v._version == 1


def test_inplace_on_a_view_of_a_leaf_is_refused():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        x[0].mul_(2)


def test_inplace_on_a_view_rewrites_the_base_history():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    row = y[1:]
    row.mul_(x[:2])          # y = [x0, x1 * x0, x2 * x1]
    assert type(y.grad_fn).__name__ == "CopySlices" and y._version == 1
    assert type(row.grad_fn).__name__ == "AsStridedBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0 + 2.0, 1.0 + 3.0, 2.0]


def test_a_view_taken_before_an_inplace_op_on_its_base_is_regenerated():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    first = y[0]
    y.mul_(3)
    (first * 2).backward()   # first is now 3 * x0: its grad_fn was taken again from y
    assert first.item() == 3.0 and x.grad.tolist() == [6.0, 0.0]


def test_a_view_made_under_no_grad_cannot_be_modified_with_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[0]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                           "modified inplace with grad mode enabled"):
        v.mul_(2)


def test_saved_leaf_modified_under_no_grad_raises_at_backward():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (w * x).sum()
    with torch.no_grad():
        w -= 0.1
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\] is at version 1; "
                                           r"expected version 0 instead"):
        y.backward()


def test_inplace_result_type_must_be_castable():
    x = torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.mul_(1.5)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the "
                                           r"broadcast shape \[2, 2\]"):
        torch.zeros(2).add_(torch.ones(2, 2))


# --- gradients ---------------------------------------------------------------------------------

def test_grad_accumulates_in_place_into_the_same_tensor():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [5.0, 5.0] and g._version == 1


def test_first_grad_is_a_copy_of_the_gradient_passed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    v = torch.tensor([1.0, 1.0])
    x.backward(v)
    x.grad.add_(1)
    assert v.tolist() == [1.0, 1.0] and x.grad.tolist() == [2.0, 2.0]


def test_retained_grads_accumulate():
    x = torch.tensor([1.0], requires_grad=True)
    h = x * 2
    h.retain_grad()
    y = h * h
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.tolist() == [8.0] and x.grad.tolist() == [16.0]


def test_hooks_can_be_removed():
    x = torch.tensor([1.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    (x * 2).backward()
    handle.remove()
    (x * 2).backward()
    assert x.grad.tolist() == [202.0]


def test_grad_mode_is_per_thread():
    seen = {}

    def worker():
        seen["thread"] = torch.is_grad_enabled()

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert not torch.is_grad_enabled()
    assert seen["thread"] is True


def test_bare_no_grad_decorator_and_set_grad_enabled_decorator():
    @torch.no_grad
    def f(t):
        return t * 2

    @torch.set_grad_enabled(False)
    def g(t):
        return t * 2

    x = torch.tensor([1.0], requires_grad=True)
    assert torch.is_grad_enabled()
    assert not f(x).requires_grad and not g(x).requires_grad
    assert (x * 2).requires_grad


def test_backward_through_a_freed_node_without_saved_values_is_allowed_but_not_through_saves():
    x = torch.tensor([2.0], requires_grad=True)
    y = x.sin() + 1
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_second_order_through_many_ops():
    x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    y = (torch.tanh(x) * x.exp() / (1 + x ** 2)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    # against the functional API on the same primitives
    import functrans.numpy as fnp
    f = lambda v: fnp.sum(fnp.tanh(v) * fnp.exp(v) / (1 + v ** 2))  # noqa: E731
    v = np.array([0.3, 0.7])
    np.testing.assert_allclose(g.detach().numpy(), ft.grad(f)(v), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), ft.grad(lambda u: fnp.sum(ft.grad(f)(u)))(v),
                               rtol=1e-12)


def test_gradcheck_of_ops_in_float64():
    x = torch.tensor([[0.3, -0.7, 1.1], [0.2, 0.5, -1.3]], dtype=torch.float64,
                     requires_grad=True)
    w = torch.tensor([[0.5], [-0.25], [1.5]], dtype=torch.float64, requires_grad=True)
    fns = [lambda a, b: torch.softmax(a @ b, 0), lambda a, b: (a.abs() + 1).log() @ b,
           lambda a, b: a.max(1).values * b.sum(), lambda a, b: torch.cat([a, b.t()]).std(0),
           lambda a, b: a[:, [0, 2]].norm() * b.prod(), lambda a, b: a.clamp(-0.6, 0.6) @ b,
           lambda a, b: torch.where(a > 0, a.sigmoid(), a.tanh()).cumsum(1)]
    for fn in fns:
        assert torch.autograd.gradcheck(fn, (x, w))
        assert torch.autograd.gradgradcheck(fn, (x, w))


def test_zero_derivatives_are_declared_not_missing():
    x = torch.tensor([1.5, -0.5], requires_grad=True)
    (x.floor() + x.sign() + x.round()).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_a_missing_derivative_rule_is_reported_at_backward():
    from functrans.core.primitive import Primitive
    from functrans.torch._record import prim_op, run
    prim = Primitive("double_without_rules", module="elementwise")  # not in the table
    prim.impl = lambda x: x * 2
    prim.abstract_eval = lambda a: a
    x = torch.tensor([1.5], requires_grad=True)
    y = run(prim_op(prim, "DoubleBackward0"), (x,), (x._value,))
    assert y.tolist() == [3.0] and y.grad_fn.name() == "DoubleBackward0"
    with pytest.raises(RuntimeError, match="the derivative for 'DoubleBackward0' is not "
                                           "implemented: primitive 'double_without_rules' has "
                                           "no jvp rule"):
        y.backward()


def test_legacy_constructor_and_isinstance():
    t = torch.Tensor([1, 2])
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    assert torch.Tensor(2, 3).shape == torch.Size([2, 3])
    assert torch.is_tensor(t) and not torch.is_tensor(np.zeros(2))
    # as in PyTorch, a device equals a device, not its string
    assert torch.device("cpu") == torch.device("cpu") and torch.device("cpu") != "cpu"
    assert str(torch.device("cpu")) == "cpu"
    # a CUDA device is a valid object; data on it gets PyTorch's CPU-build error
    assert torch.device("cuda:0").index == 0
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.zeros(1, device="cuda:0")


# torch.Tensor(*args) as PyTorch's argument parser reads it: each case gives the tensor's shape,
# dtype, grad_fn name and values (None where PyTorch leaves the memory uninitialised), or the error
LEGACY_CASES = {
    "int_tensor_kept": lambda lib: lib.Tensor(lib.tensor([1, 2])),
    "float64_tensor_kept": lambda lib: lib.Tensor(lib.tensor([1.5], dtype=lib.float64)),
    "size_object": lambda lib: lib.Tensor(lib.Size([2, 3])),
    "sizes": lambda lib: lib.Tensor(2, 3),
    "numpy_int_size": lambda lib: lib.Tensor(np.int64(2)),
    "zero_d_int_array_size": lambda lib: lib.Tensor(np.array(2)),
    "bool_after_a_size": lambda lib: lib.Tensor(2, True),
    "no_arguments": lambda lib: lib.Tensor(),
    "zero": lambda lib: lib.Tensor(0),
    "list_data": lambda lib: lib.Tensor([1, 2]),
    "tuple_data": lambda lib: lib.Tensor((2, 3)),
    "zero_d_float_array_data": lambda lib: lib.Tensor(np.array(2.5)),
    "range_data": lambda lib: lib.Tensor(range(3)),
    "float": lambda lib: lib.Tensor(3.0),
    "bool": lambda lib: lib.Tensor(True),
    "numpy_float": lambda lib: lib.Tensor(np.float64(2.0)),
    "none": lambda lib: lib.Tensor(None),
    "str": lambda lib: lib.Tensor("ab"),
    "negative": lambda lib: lib.Tensor(-1),
    "negative_second": lambda lib: lib.Tensor(2, -1, -3),
    "negative_in_size_object": lambda lib: lib.Tensor(lib.Size([2, -1])),
    "float_after_a_size": lambda lib: lib.Tensor(2, 3.0),
    "list_after_a_size": lambda lib: lib.Tensor(2, [3]),
    "tensor_and_int": lambda lib: lib.Tensor(lib.tensor([1.0]), 2),
    "float_and_int": lambda lib: lib.Tensor(2.0, 3),
    "size_object_and_int": lambda lib: lib.Tensor(lib.Size([2]), 3),
    "tensor_with_device": lambda lib: lib.Tensor(lib.tensor([1.0]), device="cpu"),
    "sizes_with_device": lambda lib: lib.Tensor(2, device="cpu"),
    "meta_device": lambda lib: lib.Tensor(2, device="meta"),
    "typed_tensor_of_another_dtype": lambda lib: lib.FloatTensor(lib.tensor([1, 2])),
    "typed_float": lambda lib: lib.FloatTensor(3.0),
    "typed_numpy_int_size": lambda lib: lib.LongTensor(np.int64(2)),
    "new_float": lambda lib: lib.ones(2).new(3.0),
    "new_tensor_with_device": lambda lib: lib.ones(2).new(lib.ones(2), device="cpu"),
}


UNINITIALISED = {"size_object", "sizes", "numpy_int_size", "zero_d_int_array_size",
                 "bool_after_a_size", "sizes_with_device", "typed_numpy_int_size"}


def _legacy(lib, name):
    try:
        t = LEGACY_CASES[name](lib)
    except Exception as e:  # the error is the observation
        return [type(e).__name__, str(e).split("\n")[0]]
    fn = t.grad_fn
    return [list(t.shape), str(t.dtype), fn and type(fn).__name__,
            None if name in UNINITIALISED else t.tolist()]


LEGACY_RECORDED = {  # PyTorch 2.13's observations
    'int_tensor_kept': [[2], 'torch.int64', None, [1, 2]],
    'float64_tensor_kept': [[1], 'torch.float64', None, [1.5]],
    'size_object': [[2, 3], 'torch.float32', None, None],
    'sizes': [[2, 3], 'torch.float32', None, None],
    'numpy_int_size': [[2], 'torch.float32', None, None],
    'zero_d_int_array_size': [[2], 'torch.float32', None, None],
    'bool_after_a_size': [[2, 1], 'torch.float32', None, None],
    'no_arguments': [[0], 'torch.float32', None, []],
    'zero': [[0], 'torch.float32', None, []],
    'list_data': [[2], 'torch.float32', None, [1.0, 2.0]],
    'tuple_data': [[2], 'torch.float32', None, [2.0, 3.0]],
    'zero_d_float_array_data': [[], 'torch.float32', None, 2.5],
    'range_data': [[3], 'torch.float32', None, [0.0, 1.0, 2.0]],
    'float': ['TypeError', 'new(): data must be a sequence (got float)'],
    'bool': ['TypeError', 'new(): data must be a sequence (got bool)'],
    'numpy_float': ['TypeError', 'new(): data must be a sequence (got numpy.float64)'],
    'none': ['TypeError', 'new(): data must be a sequence (got NoneType)'],
    'str': ['TypeError', "new(): invalid data type 'str'"],
    'negative': ['RuntimeError', 'Trying to create tensor with negative dimension -1: [-1]'],
    'negative_second': ['RuntimeError',
        'Trying to create tensor with negative dimension -1: [2, -1, -3]'],
    'negative_in_size_object': ['RuntimeError',
        'Trying to create tensor with negative dimension -1: [2, -1]'],
    'float_after_a_size': ['TypeError',
        'new(): argument \'size\' failed to unpack the object at pos 2 with error "type must be '
        'tuple of ints,but got float"'],
    'list_after_a_size': ['TypeError',
        'new(): argument \'size\' failed to unpack the object at pos 2 with error "type must be '
        'tuple of ints,but got list"'],
    'tensor_and_int': ['TypeError',
        'new() received an invalid combination of arguments - got (Tensor, int), but expected '
        'one of:'],
    'float_and_int': ['TypeError',
        'new() received an invalid combination of arguments - got (float, int), but expected one '
        'of:'],
    'size_object_and_int': ['TypeError',
        'new() received an invalid combination of arguments - got (torch.Size, int), but '
        'expected one of:'],
    'tensor_with_device': ['RuntimeError',
        'Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not '
        'supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.'],
    'sizes_with_device': [[2], 'torch.float32', None, None],
    'meta_device': ['RuntimeError',
        'legacy constructor expects device type: cpu but device type: meta was passed'],
    'typed_tensor_of_another_dtype': ['TypeError',
        'expected TensorOptions(dtype=float, device=cpu, layout=Strided, requires_grad=false '
        '(default), pinned_memory=false (default), memory_format=(nullopt)) (got '
        'TensorOptions(dtype=long int, device=cpu, layout=Strided, requires_grad=false '
        '(default), pinned_memory=false (default), memory_format=(nullopt)))'],
    'typed_float': ['TypeError', 'new(): data must be a sequence (got float)'],
    'typed_numpy_int_size': [[2], 'torch.int64', None, None],
    'new_float': ['TypeError', 'new(): data must be a sequence (got float)'],
    'new_tensor_with_device': ['RuntimeError',
        'Legacy tensor new of the form tensor.new(tensor, device=device) is not supported.  Use '
        'torch.as_tensor(...) instead.'],
}


@pytest.mark.parametrize("name", LEGACY_CASES)
def test_legacy_constructor_reads_arguments_as_recorded_pytorch(name):
    assert _legacy(torch, name) == LEGACY_RECORDED[name]


@pytest.mark.parametrize("name", LEGACY_CASES)
def test_legacy_constructor_reads_arguments_as_live_pytorch(name):
    real = pytest.importorskip("torch")
    assert _legacy(torch, name) == _legacy(real, name)


@pytest.mark.parametrize("lib", ["functrans", "torch"])
def test_legacy_constructor_of_a_tensor_is_an_alias(lib):
    t_lib = torch if lib == "functrans" else pytest.importorskip("torch")
    x = t_lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    a = t_lib.Tensor(y)
    assert a._base is y and type(a.grad_fn).__name__ == "AliasBackward0"
    (a * a).sum().backward()
    assert x.grad.tolist() == [8.0, 16.0]
    n = t_lib.tensor([1, 2])
    m = t_lib.Tensor(n)
    m[0] = 5  # the same storage and version counter
    assert n.tolist() == [5, 2] and n._version == m._version == 1

    class Sub(t_lib.Tensor):
        pass
    assert type(Sub([1.0])) is Sub and type(Sub(n)) is Sub


def test_numpy_sees_tensors_as_arrays_and_operators_still_record():
    t = torch.ones(2)
    s = np.sin(t)  # a ufunc on a tensor that needs no grad: numpy's value, as a tensor
    assert isinstance(s, torch.Tensor)
    np.testing.assert_allclose(s.numpy(), np.sin(np.ones(2)), rtol=1e-7)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.sin(x)
    y = np.array([3.0, 4.0]) * x  # ndarray * tensor runs the tensor operator
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_is_laid_out_like_its_parameter(create_graph):
    # PyTorch's AccumulateGrad gives .grad the parameter's strides: the backward of X @ W.T
    # computes W's gradient transposed, yet W.grad.view(-1) works (optimisers rely on it)
    W = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    X = torch.tensor([[1.0, -1.0], [0.5, 2.0]])
    (X @ W.T).pow(2).sum().backward(create_graph=create_graph)
    assert W.grad.is_contiguous()
    expected = 2 * ((X @ W.T).T @ X)
    np.testing.assert_allclose(W.grad.view(-1).detach().numpy(),
                               expected.detach().numpy().ravel())


@pytest.mark.parametrize("fn", [lambda x: x.max(0), lambda x: x.max(0, keepdim=True),
                                lambda x: x.sort(0), lambda x: x.topk(1, 0),
                                lambda x: x.cummax(0), lambda x: x.median(0, keepdim=True)],
                         ids=["max", "max-keepdim", "sort", "topk", "cummax", "median"])
def test_returned_indices_changed_in_place_raise_at_backward(fn):
    # the node saves the indices it returns, as PyTorch's: changing them in place never moves
    # the gradient, backward raises PyTorch's version error instead
    x = torch.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    values, indices = fn(x)
    torch.autograd.grad(values.sum(), x, retain_graph=True)
    indices.zero_()
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[torch.LongTensor "
                       r"\[.*\]\] is at version 1; expected version 0 instead"):
        torch.autograd.grad(values.sum(), x)


def test_printing_with_no_edge_items_shows_the_size_as_pytorch():
    # PyTorch 2.13 adds size= to a non-empty tensor whenever edgeitems is 0
    torch.set_printoptions(threshold=1, edgeitems=0)
    try:
        assert repr(torch.arange(10.0)) == "tensor([...], size=(10,))"
    finally:
        torch.set_printoptions(profile="default")
    assert repr(torch.arange(3.0)) == "tensor([0., 1., 2.])"


def test_deepcopy_of_a_non_leaf_gives_pytorchs_whole_message():
    with pytest.raises(RuntimeError, match=r"deepcopy protocol at the moment\.  If you were "
                       "attempting to deepcopy a module"):
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
