"""The nonlinear Schrodinger equation with a physics-informed network (Raissi, Perdikaris and
Karniadakis 2019, section 3.1.1).

    i h_t + 0.5 h_xx + |h|^2 h = 0,  x in [-5, 5], t in [0, pi/2],
    h(0, x) = 2 sech(x),  h periodic in x (h and h_x equal at x = -5 and x = 5).

The network has two real outputs, h = u + i v; the residual's real and imaginary parts are
-v_t + 0.5 u_xx + (u^2 + v^2) u and u_t + 0.5 v_xx + (u^2 + v^2) v. All of (u, v), their
gradients and their second derivatives along x come from one forward pass of
`ft.value_grad_and_hessian_diag(..., indices=[1])` (the Hessian diagonal carried along x
only), vmapped over the collocation points. The reference solution is computed at run time
by the split-step Fourier method (`pde_reference.schrodinger`: Strang splitting, the linear
part exact in Fourier space, the nonlinear part exact in closed form); its own relative error
on |h| is below 1e-5 (tests/examples/test_pde_reference.py). The error is reported on |h|
over Raissi's 201 x 256 grid, as published (1.97e-3 for 5 x 100 tanh units, 20,000
collocation points and L-BFGS).

Periodicity is built into the network instead of a boundary loss: x enters through
(cos(pi x / 5), sin(pi x / 5)), a periodic embedding as in Wang, Sankaran and Perdikaris,
"Respecting causality is all you need for training physics-informed neural networks" (2022)
and Dong and Ni, "A method for representing periodic functions and enforcing exactly periodic
boundary conditions with deep neural networks" (J. Comput. Phys. 2021), so h and all its
x-derivatives are periodic exactly and the only data are the initial values.

Schedule (full run, sized for about half an hour on one core): 4 hidden layers of 64 tanh
units, 5,000 collocation points (Latin hypercube), 256 initial points; Adam 2,000 steps
(learning rate 2e-3 decaying to 2e-4, random batches of 1,000 points), then L-BFGS until
the time budget (default 1,500 s of training; `--time-budget`) or 20,000 iterations.

    python examples/pinn_schrodinger.py            # full run
    python examples/pinn_schrodinger.py --quick    # seconds; loose error
"""

from __future__ import annotations

import os
import sys

# small matrices: BLAS threads only contend (and spin) on a shared machine
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import time  # noqa: E402

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)                       # pinn_common, pde_reference
sys.path.append(os.path.dirname(_HERE))          # functrans from a source checkout

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
import pde_reference  # noqa: E402
from pinn_common import (init_mlp, lhs, mlp, parse_args, predict, relative_l2,  # noqa: E402
                         report, save_figure, train)

T_END = np.pi / 2
LB, UB = np.array([0.0, -5.0]), np.array([T_END, 5.0])     # (t, x)
OMEGA = np.pi / 5.0                                          # period 10 in x


def h_net(params, z):
    """(u, v) at z = (t, x): t scaled to [-1, 1], x through a periodic embedding."""
    t = z[0] * (2.0 / T_END) - 1.0
    features = fnp.stack([t, fnp.cos(OMEGA * z[1]), fnp.sin(OMEGA * z[1])])
    return mlp(params, features)


def make_loss(z0, h0):
    """loss(params, z_f): the initial misfit of (u, v) plus the mean squared residual."""
    def residual(params, z):
        h, dh, d2h = ft.value_grad_and_hessian_diag(lambda q: h_net(params, q), indices=[1])(z)
        u, v = h[0], h[1]
        sq = u * u + v * v
        f_u = -dh[1, 0] + 0.5 * d2h[0, 0] + sq * u
        f_v = dh[0, 0] + 0.5 * d2h[1, 0] + sq * v
        return fnp.stack([f_u, f_v])

    def loss(params, z_f):
        e = ft.vmap(lambda z: h_net(params, z))(z0) - h0
        f = ft.vmap(lambda z: residual(params, z))(z_f)
        return fnp.mean(e * e) * 2 + fnp.mean(f * f) * 2        # sums over u and v

    return loss


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=2000, lbfgs_iters=20000,
                      quick_adam=150, quick_lbfgs=150, extra=[
                          (("--n-f",), dict(type=int, default=None,
                                            help="collocation points (5000; quick 500)")),
                          (("--width",), dict(type=int, default=None,
                                              help="hidden units per layer (64; quick 32)")),
                          (("--layers",), dict(type=int, default=None,
                                               help="hidden layers (4; quick 3)")),
                          (("--batch",), dict(type=int, default=None,
                                              help="Adam's points per step (1000; quick: all)"))])
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (500 if args.quick else 5000)
    width = args.width or (32 if args.quick else 64)
    layers = args.layers or (3 if args.quick else 4)
    if args.batch is None and not args.quick:
        args.batch = 1000
    if args.time_budget is None and not args.quick:
        args.time_budget = 1500.0
    z_f = lhs(rng, n_f, LB, UB)
    x0 = np.linspace(-5.0, 5.0, 257)[:-1]
    z0 = np.stack([np.zeros_like(x0), x0], 1)
    h0 = np.stack([2.0 / np.cosh(x0), np.zeros_like(x0)], 1)
    params = init_mlp(rng, [3] + [width] * layers + [2])
    t0 = time.perf_counter()
    params, history = train(make_loss(z0, h0), params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3, lr_decay=0.1,
                            points=z_f, batch_size=args.batch, seed=args.seed,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget)
    wall = time.perf_counter() - t0

    t, x, h_ref = pde_reference.schrodinger()
    T, X = np.meshgrid(t, x, indexing="ij")
    uv = predict(h_net, params, np.stack([T.ravel(), X.ravel()], 1))
    pred = np.hypot(uv[:, 0], uv[:, 1]).reshape(T.shape)
    exact = np.abs(h_ref)
    err = relative_l2(pred, exact)
    print(f"wall time: {wall:.1f} s ({len(history)} steps; {n_f} collocation points, "
          f"{layers}x{width} tanh)")
    if not args.no_figure:
        extent = [0, T_END, -5, 5]
        save_figure(args.figure or "pinn_schrodinger.png", history, [
            ("|h| (PINN)", pred.T, extent, "t", "x"),
            ("| |h| error |", np.abs(pred - exact).T, extent, "t", "x"),
            ("|h| at t = 0.59, 0.79, 0.98 (dashed: PINN)", [
                (x, exact[k], f"reference t={t[k]:.2f}", f"C{j}-")
                for j, k in enumerate((75, 100, 125))
            ] + [(x, pred[k], f"PINN t={t[k]:.2f}", f"C{j}--")
                 for j, k in enumerate((75, 100, 125))], None, "x", "|h|")],
            f"Nonlinear Schrodinger, relative L2 error on |h| {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
