"""A PINN built from torch.nn: derivatives of the network with respect to its inputs by
autograd.grad(create_graph=True), checked against float64 central differences, and against a
live PyTorch model whose weights are copied across through state_dict. (The same residual is
compared with PyTorch's recorded values in test_nn_parity.py, pinn_burgers_*.)"""

import math

import numpy as np
import pytest
from torch_nn_programs import pinn_net, pinn_residual

import functrans.torch as torch


def _model(seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return pinn_net(torch).to(dtype)


def _points(n=6):
    x = torch.linspace(-1.0, 1.0, n, dtype=torch.float64).reshape(n, 1)
    t = torch.linspace(0.1, 0.9, n, dtype=torch.float64).reshape(n, 1)
    return x, t


def test_input_derivatives_match_central_differences():
    net = _model()
    x, t = _points()
    _, u_x, u_t, u_xx, _ = pinn_residual(torch, net, x.clone().requires_grad_(),
                                         t.clone().requires_grad_())

    def u(xs, ts):
        with torch.no_grad():
            return net(torch.cat([xs, ts], dim=1)).numpy()

    h = 1e-4
    fd_x = (u(x + h, t) - u(x - h, t)) / (2 * h)
    fd_t = (u(x, t + h) - u(x, t - h)) / (2 * h)
    fd_xx = (u(x + h, t) - 2 * u(x, t) + u(x - h, t)) / h ** 2
    np.testing.assert_allclose(u_x.detach().numpy(), fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(u_t.detach().numpy(), fd_t, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(u_xx.detach().numpy(), fd_xx, rtol=1e-4, atol=1e-6)


def test_parameter_gradient_of_the_residual_loss_matches_central_differences():
    net = _model(seed=1)
    x, t = _points()

    def loss_value():
        _, _, _, _, f = pinn_residual(torch, net, x.clone().requires_grad_(),
                                      t.clone().requires_grad_())
        return (f ** 2).mean()

    net.zero_grad()
    loss_value().backward()
    w = net[2].weight
    analytic = w.grad.numpy().copy()
    h = 1e-6
    for i, j in [(0, 0), (3, 7), (19, 19)]:
        with torch.no_grad():
            w[i, j] += h
        up = loss_value().item()
        with torch.no_grad():
            w[i, j] -= 2 * h
        down = loss_value().item()
        with torch.no_grad():
            w[i, j] += h
        assert math.isclose(analytic[i, j], (up - down) / (2 * h), rel_tol=1e-5, abs_tol=1e-9)


def test_training_loop_written_for_pytorch_runs(snippet):
    ns = snippet("""
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                              nn.Linear(16, 1))
        t = torch.linspace(0, 1, 30).view(-1, 1).requires_grad_(True)
        losses = []
        for step in range(60):
            model.zero_grad()
            u = model(t)
            du = torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)[0]
            loss = torch.mean((du + u) ** 2) + (model(torch.zeros(1, 1)) - 1).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.05 * p.grad
            losses.append(loss.item())
    """)
    losses = ns["losses"]
    assert losses[-1] < 0.5 * losses[0]
    assert all(p.grad is not None for p in ns["model"].parameters())


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_matches_live_pytorch_with_weights_copied_through_state_dict(dtype_name):
    real = pytest.importorskip("torch")
    if not hasattr(real, "autograd"):
        pytest.skip("PyTorch is not installed")
    real.manual_seed(0)
    ref = pinn_net(real).to(getattr(real, dtype_name))
    net = pinn_net(torch).to(getattr(torch, dtype_name))
    state = {k: torch.tensor(v.numpy()) for k, v in ref.state_dict().items()}
    assert repr(net.load_state_dict(state)) == "<All keys matched successfully>"
    rtol, atol = (1e-4, 1e-6) if dtype_name == "float32" else (1e-10, 1e-13)
    x = np.linspace(-1, 1, 16).reshape(-1, 1)
    t = np.linspace(0, 1, 16).reshape(-1, 1)
    results = []
    for lib, model in ((real, ref), (torch, net)):
        dt = getattr(lib, dtype_name)
        xs = lib.tensor(x, dtype=dt, requires_grad=True)
        ts = lib.tensor(t, dtype=dt, requires_grad=True)
        outs = pinn_residual(lib, model, xs, ts)
        loss = (outs[-1] ** 2).mean() + ((outs[0] - lib.sin(math.pi * xs)) ** 2).mean()
        model.zero_grad()
        loss.backward()
        results.append([o.detach().numpy() for o in outs] + [loss.detach().numpy()]
                       + [p.grad.numpy() for p in model.parameters()])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
