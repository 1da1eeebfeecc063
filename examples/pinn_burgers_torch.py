"""The Burgers residual written tensor-style, PyTorch-fashion, on functrans' torch shim.

`import functrans.torch as torch` and the usual PINN code: leaf tensors with requires_grad,
`torch.autograd.grad(..., create_graph=True)` for u_t, u_x and u_xx, `loss.backward()` for the
parameter gradients. The script checks that this gives the same loss and gradient as the
functional version (examples/pinn_burgers.py: hessian_diag, vmap, value_and_grad), then trains
with Adam on the tensor-style gradients and reports the error against the Cole-Hopf reference.

    python examples/pinn_burgers_torch.py            # 2,000 Adam steps
    python examples/pinn_burgers_torch.py --quick    # seconds; loose error
"""

from __future__ import annotations

import os
import sys
import time  # noqa: E402

# small matrices: BLAS threads only contend (and spin) on a shared machine
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)                       # pinn_common, pinn_burgers
sys.path.append(os.path.dirname(_HERE))          # functrans from a source checkout

import functrans as ft  # noqa: E402
import functrans.torch as torch  # noqa: E402
from functrans import optimizers as optim  # noqa: E402
from pinn_burgers import LB, NU, UB, burgers_reference, data, make_loss, u_net  # noqa: E402
from pinn_common import (Progress, init_mlp, parse_args, predict, relative_l2,  # noqa: E402
                         report, save_figure)


def torch_loss(weights, t_u, x_u, u_data, t_f, x_f):
    """The PINN loss as PyTorch code would write it; weights is a list of (W, b) tensors."""
    lb = torch.tensor(LB).reshape(1, 2)
    scale = torch.tensor(2.0 / (UB - LB)).reshape(1, 2)

    def net(t, x):
        h = (torch.cat([t, x], dim=1) - lb) * scale - 1.0
        for W, b in weights[:-1]:
            h = torch.tanh(h @ W + b)
        W, b = weights[-1]
        return h @ W + b

    u = net(t_f, x_f)
    u_t, u_x = torch.autograd.grad(u, [t_f, x_f], grad_outputs=torch.ones_like(u),
                                   create_graph=True)
    u_xx, = torch.autograd.grad(u_x, x_f, grad_outputs=torch.ones_like(u_x),
                                create_graph=True)
    f = u_t + u * u_x - NU * u_xx
    e = net(t_u, x_u) - u_data
    return (e ** 2).mean() + (f ** 2).mean()


def torch_value_and_grad(params, z_u, u_data, z_f):
    """Loss and parameter gradients by loss.backward() on fresh leaf tensors."""
    weights = [(torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True))
               for W, b in params]
    cols = lambda z, j: torch.tensor(z[:, j:j + 1], requires_grad=True)  # noqa: E731
    loss = torch_loss(weights, cols(z_u, 0), cols(z_u, 1),
                      torch.tensor(u_data.reshape(-1, 1)), cols(z_f, 0), cols(z_f, 1))
    loss.backward()
    grads = [(W.grad.numpy(), b.grad.numpy()) for W, b in weights]
    return float(loss.item()), grads


def max_grad_difference(g1, g2):
    return max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / (1e-300 + np.max(
        np.abs(np.asarray(b)))))) for a, b in zip(ft.tree_util.tree_leaves(g1),
                                                  ft.tree_util.tree_leaves(g2)))


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=2000, lbfgs_iters=0,
                      quick_adam=200, quick_lbfgs=0,
                      extra=[(("--n-f",), dict(type=int, default=None,
                                               help="collocation points (2000; quick 300)"))])
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (300 if args.quick else 2000)
    z_u, u_data, z_f = data(rng, 100, n_f)
    layers = 4 if args.quick else 8
    params = init_mlp(rng, [2] + [20] * layers + [1])

    # the same loss and gradient, tensor-style and functional
    functional = ft.value_and_grad(make_loss(z_u, u_data)[0])
    l_fn, g_fn = functional(params, z_f)
    l_t, g_t = torch_value_and_grad(params, z_u, u_data, z_f)
    loss_diff = abs(l_t - float(l_fn)) / abs(float(l_fn))
    grad_diff = max_grad_difference(g_t, g_fn)
    print(f"tensor-style vs functional: loss {l_t:.12e} vs {float(l_fn):.12e} (relative "
          f"difference {loss_diff:.1e}); gradient max relative difference {grad_diff:.1e}")
    if not (loss_diff < 1e-10 and grad_diff < 1e-8):
        raise SystemExit("tensor-style and functional losses disagree")

    # train on the tensor-style gradients
    opt = optim.adam(optim.exponential_decay(2e-3, max(args.adam_steps, 1), 0.1))
    state = opt.init(params)
    history = []
    bar = Progress(args.adam_steps, "adam (tensor-style)", not args.no_progress)
    t0 = time.perf_counter()
    for step in range(args.adam_steps):
        loss, grads = torch_value_and_grad(params, z_u, u_data, z_f)
        updates, state = opt.update(grads, state, params)
        params = [tuple(np.asarray(a) for a in p) for p in optim.apply_updates(params, updates)]
        history.append(("adam", step, loss))
        bar.update(loss)
        if args.log_every and step % args.log_every == 0:
            print(f"adam {step}: loss {loss:.3e}", flush=True)
        if args.time_budget and time.perf_counter() - t0 > args.time_budget:
            break
    bar.close()
    wall = time.perf_counter() - t0
    t = np.linspace(0, 0.99, 100)
    x = np.linspace(-1, 1, 256)
    T, X = np.meshgrid(t, x, indexing="ij")
    exact = burgers_reference(T, X)
    pred = predict(u_net, params, np.stack([T.ravel(), X.ravel()], 1)).reshape(T.shape)
    err = relative_l2(pred, exact)
    print(f"wall time: {wall:.1f} s ({len(history)} Adam steps on tensor-style gradients)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_burgers_torch.png", history, [
            ("u (PINN, tensor-style)", pred.T, [0, 0.99, -1, 1], "t", "x"),
            ("|error|", np.abs(pred - exact).T, [0, 0.99, -1, 1], "t", "x")],
            f"Burgers, tensor-style training, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
