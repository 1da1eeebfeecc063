"""Viscous Burgers with a physics-informed network (Raissi, Perdikaris and Karniadakis 2019).

    u_t + u u_x - nu u_xx = 0,  nu = 0.01/pi,  x in [-1, 1], t in [0, 1],
    u(0, x) = -sin(pi x),  u(t, -1) = u(t, 1) = 0.

The published setup: 8 hidden layers of 20 tanh units, 100 initial/boundary points, 10,000
collocation points, L-BFGS. The reference solution is computed here by the Cole-Hopf formula
with Gauss-Hermite quadrature; no data is downloaded. The residual needs u, u_t, u_x and u_xx
at every collocation point: one forward pass of `hessian_diag`'s (value, gradient, diagonal)
propagation, with the second-order part along x only, vmapped over the points, then grad
with respect to the parameters.

Schedule (full run): inputs scaled to [-1, 1]; Adam first (5,000 steps on random batches of
2,000 of the collocation points, learning rate 1e-3 decaying to 1e-4; the published run is
L-BFGS only, which stalls near 1e-2 in float64 here), then L-BFGS on all 10,000 points
(memory 50, up to 20,000 iterations).

    python examples/pinn_burgers.py            # full run
    python examples/pinn_burgers.py --quick    # seconds; loose error
"""

from __future__ import annotations

import math  # noqa: E402
import os
import sys

# small matrices: BLAS threads only contend (and spin) on a shared machine
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import time  # noqa: E402

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)                       # pinn_common
sys.path.append(os.path.dirname(_HERE))          # functrans from a source checkout

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from pinn_common import (init_mlp, lhs, mlp, parse_args, predict, relative_l2,  # noqa: E402
                         report, save_figure, train)

NU = 0.01 / math.pi
LB, UB = np.array([0.0, -1.0]), np.array([1.0, 1.0])     # (t, x)


def burgers_reference(t, x, nu=NU, n_quad=250):
    """Cole-Hopf: u = -int sin(pi(x-e)) F(x-e) G(e) de / int F(x-e) G(e) de, with
    F(y) = exp(-cos(pi y) / (2 pi nu)) and G the heat kernel; Gauss-Hermite in e = sqrt(4 nu t)
    z, shifted by the largest exponent (log-sum-exp) so nothing overflows."""
    from scipy.special import roots_hermite
    z, w = roots_hermite(n_quad)
    t = np.asarray(t, np.float64)[..., None]
    x = np.asarray(x, np.float64)[..., None]
    y = x - np.sqrt(4 * nu * t) * z
    expo = -np.cos(np.pi * y) / (2 * np.pi * nu)
    expo = expo - expo.max(axis=-1, keepdims=True)
    k = w * np.exp(expo)
    return -np.sum(np.sin(np.pi * y) * k, axis=-1) / np.sum(k, axis=-1)


def u_net(params, z):
    return mlp(params, z, LB, UB)


def make_loss(z_u, u_data):
    """loss(params, z_f): initial/boundary misfit plus the mean squared residual at z_f."""
    def residual(params, z):
        # gradient along (t, x), second derivative along x only (u_tt is never needed)
        u, du, d2u = ft.value_grad_and_hessian_diag(lambda q: u_net(params, q), indices=[1])(z)
        u_t, u_x, u_xx = du[0], du[1], d2u[0]
        return u_t + u * u_x - NU * u_xx

    def loss(params, z_f):
        u = ft.vmap(lambda z: u_net(params, z))(z_u)
        f = ft.vmap(lambda z: residual(params, z))(z_f)
        e = u - u_data
        return fnp.mean(e * e) + fnp.mean(f * f)

    return loss, residual


def data(rng, n_u, n_f):
    """n_u points on t = 0 and x = +-1 with their values, and n_f collocation points."""
    n0 = n_u // 2
    x0 = rng.uniform(-1, 1, n0)
    tb = rng.uniform(0, 1, n_u - n0)
    xb = rng.choice([-1.0, 1.0], n_u - n0)
    z_u = np.concatenate([np.stack([np.zeros(n0), x0], 1), np.stack([tb, xb], 1)])
    u_data = np.concatenate([-np.sin(np.pi * x0), np.zeros(n_u - n0)])
    z_f = np.concatenate([lhs(rng, n_f, LB, UB), z_u])
    return z_u, u_data, z_f


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=5000, lbfgs_iters=20000,
                      quick_adam=200, quick_lbfgs=200, extra=[
                          (("--n-f",), dict(type=int, default=None,
                                            help="collocation points (10000; quick 500)")),
                          (("--layers",), dict(type=int, default=None,
                                               help="hidden layers (8; quick 4)")),
                          (("--width",), dict(type=int, default=20)),
                          (("--batch",), dict(type=int, default=None,
                                              help="Adam's collocation points per step "
                                                   "(2000; quick: all)"))])
    n_f = args.n_f or (500 if args.quick else 10000)
    layers = args.layers or (4 if args.quick else 8)
    if args.batch is None and not args.quick:
        args.batch = 2000
    rng = np.random.default_rng(args.seed)
    z_u, u_data, z_f = data(rng, 100, n_f)
    params = init_mlp(rng, [2] + [args.width] * layers + [1])
    loss, _ = make_loss(z_u, u_data)
    t0 = time.perf_counter()
    params, history = train(loss, params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=1e-3, lr_decay=0.1,
                            points=z_f, batch_size=args.batch, seed=args.seed,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget)
    wall = time.perf_counter() - t0

    t = np.linspace(0, 0.99, 100)
    x = np.linspace(-1, 1, 256)
    T, X = np.meshgrid(t, x, indexing="ij")
    exact = burgers_reference(T, X)
    pred = predict(u_net, params, np.stack([T.ravel(), X.ravel()], 1)).reshape(T.shape)
    err = relative_l2(pred, exact)
    print(f"wall time: {wall:.1f} s ({len(history)} steps; {n_f} collocation points, "
          f"{layers}x{args.width} tanh)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_burgers.png", history, [
            ("u (PINN)", pred.T, [0, 0.99, -1, 1], "t", "x"),
            ("|error|", np.abs(pred - exact).T, [0, 0.99, -1, 1], "t", "x"),
            ("u at t = 0.25, 0.5, 0.75 (dashed: PINN)", [
                (x, exact[k], f"exact t={t[k]:.2f}", f"C{j}-") for j, k in enumerate((25, 50, 75))
            ] + [(x, pred[k], f"PINN t={t[k]:.2f}", f"C{j}--")
                 for j, k in enumerate((25, 50, 75))], None, "x", "u")],
            f"Burgers, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
