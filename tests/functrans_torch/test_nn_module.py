"""functrans.torch.nn.Module behaviour the parity programs (test_nn_parity.py) do not observe:
copying and pickling, dtype conversions of .grad, hooks that always run, devices, and where
optimisers holding the parameters see conversions."""

import copy
import pickle

import numpy as np
import pytest

import functrans.torch as torch

nn = torch.nn


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))


def test_deepcopy_gives_independent_parameters():
    net = _net()
    net(torch.ones(1, 2)).sum().backward()
    twin = copy.deepcopy(net)
    for p, q in zip(net.parameters(), twin.parameters()):
        assert type(q) is nn.Parameter and q is not p and q.requires_grad
        assert not np.shares_memory(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        assert q.grad is None  # Parameter.__deepcopy__ copies data, as PyTorch's does
    with torch.no_grad():
        twin[0].weight.add_(1.0)
    assert not torch.allclose(twin[0].weight, net[0].weight)


def test_pickle_round_trip():
    net = _net()
    back = pickle.loads(pickle.dumps(net))
    assert repr(back) == repr(net)
    x = torch.tensor([[0.5, -1.0]])
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    assert all(type(p) is nn.Parameter for p in back.parameters())


def test_conversions_keep_parameter_objects_and_convert_grads():
    net = _net()
    params = list(net.parameters())
    net(torch.ones(4, 2)).sum().backward()
    net.double()
    assert all(p is q for p, q in zip(params, net.parameters()))
    assert all(p.dtype == torch.float64 and p.grad.dtype == torch.float64 for p in params)
    net.half()
    assert all(p.dtype == torch.float16 for p in params)
    net.type(torch.float32)
    assert all(p.dtype == torch.float32 for p in params)


def test_buffers_convert_only_when_floating():
    m = nn.Module()
    m.register_buffer("steps", torch.tensor(3))
    m.register_buffer("scale", torch.tensor(2.0))
    m.double()
    assert m.steps.dtype == torch.int64 and m.scale.dtype == torch.float64


def test_gpu_requests_fail():
    net = _net()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        net.cuda()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        net.to("cuda")
    with pytest.raises(RuntimeError, match="not linked with support for mps devices"):
        net.to("mps")
    assert net.to("cpu") is net and net.to(torch.device("cpu")) is net


def test_always_call_hook_runs_when_forward_raises():
    calls = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: calls.append("plain"))
    m.register_forward_hook(lambda mod, args, out: calls.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(torch.ones(1))
    assert calls == [None]


def test_bad_pre_hook_result_with_kwargs():
    lin = nn.Linear(1, 1)
    lin.register_forward_pre_hook(lambda m, a, k: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        lin(torch.ones(1))


def test_dir_and_submodule_lookup():
    net = _net()
    names = dir(net)
    assert "forward" in names and "0" not in names and "_modules" in names
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        net.get_submodule("5")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.get_submodule("0.weight")
    with pytest.raises(AttributeError, match="`0` is not an nn.Parameter"):
        net.get_parameter("0")


def test_state_dict_entries_are_detached_views_and_load_copies():
    net = _net()
    state = net.state_dict()
    assert state["0.weight"].grad_fn is None and not state["0.weight"].requires_grad
    assert np.shares_memory(state["0.weight"].numpy(), net[0].weight.detach().numpy())
    other = _net()
    source = {k: v.clone() * 0 for k, v in state.items()}
    other.load_state_dict(source)
    assert not np.shares_memory(source["0.weight"].numpy(), other[0].weight.detach().numpy())
    assert float(other[0].weight.detach().abs().sum()) == 0.0


def test_load_state_dict_assign_replaces_parameters():
    net = _net()
    new = {k: v.clone() + 1 for k, v in net.state_dict().items()}
    net.load_state_dict(new, assign=True)
    assert type(net[0].weight) is nn.Parameter and net[0].weight.requires_grad
    np.testing.assert_array_equal(net[0].weight.detach().numpy(), new["0.weight"].numpy())


def test_parameter_requires_a_tensor():
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        nn.Parameter([1.0, 2.0])
