"""The heat equation with a physics-informed network.

    u_t = 0.4 u_xx on [0, 1] x [0, 1],  u(0, t) = u(1, t) = 0,  u(x, 0) = sin(pi x);
    exact u = exp(-0.4 pi^2 t) sin(pi x).

u_t and u_xx at every collocation point come from one forward pass of `hessian_diag`'s
(value, gradient, Hessian diagonal) propagation, vmapped over the points. Adam (3,000 steps),
then L-BFGS up to 40,000 iterations, or until scipy's tolerance (a reduction of the loss at
machine epsilon) ends it: seed 0 after 39,346 iterations (error 8.4e-6), seed 1 at the cap
(1.0e-5); the earlier cap of 15,000 left 4.0e-5 and 1.8e-5 (examples/README.md).

    python examples/pinn_heat.py            # full run
    python examples/pinn_heat.py --quick    # seconds; loose error
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

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

ALPHA = 0.4
LB, UB = np.zeros(2), np.ones(2)          # (x, t)


def u_net(params, z):
    return mlp(params, z, LB, UB)


def exact(x, t):
    return np.exp(-ALPHA * np.pi ** 2 * t) * np.sin(np.pi * x)


def make_loss(z_f, z_u, u_data):
    def residual(params, z):
        _, du, d2u = ft.value_grad_and_hessian_diag(lambda q: u_net(params, q), indices=[0])(z)
        return du[1] - ALPHA * d2u[0]                     # u_t - 0.4 u_xx

    def loss(params):
        r = ft.vmap(lambda z: residual(params, z))(z_f)
        e = ft.vmap(lambda z: u_net(params, z))(z_u) - u_data
        return fnp.mean(r * r) + fnp.mean(e * e)

    return loss


def conditions(rng, n):
    """Points on x = 0, x = 1 (u = 0) and t = 0 (u = sin(pi x)), with their values."""
    n0 = n // 2
    x0 = rng.uniform(0, 1, n0)
    tb = rng.uniform(0, 1, n - n0)
    xb = (np.arange(n - n0) % 2).astype(float)
    z = np.concatenate([np.stack([x0, np.zeros(n0)], 1), np.stack([xb, tb], 1)])
    return z, exact(z[:, 0], z[:, 1])


def setup(seed, quick=False, n_f=None):
    """A run's problem: collocation points `z_f`, condition points `z_u` with their values
    `u_data`, the initial `params`, and the 101 x 101 grid `X`, `T` the error is measured on
    with `exact` there."""
    rng = np.random.default_rng(seed)
    z_f = lhs(rng, n_f or (200 if quick else 2000), LB, UB)
    z_u, u_data = conditions(rng, 64 if quick else 300)
    params = init_mlp(rng, [2, 32, 32, 32, 1] if not quick else [2, 20, 20, 1])
    X, T = np.meshgrid(np.linspace(0, 1, 101), np.linspace(0, 1, 101), indexing="ij")
    return SimpleNamespace(z_f=z_f, z_u=z_u, u_data=u_data, params=params, X=X, T=T,
                           exact=exact(X, T))


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=3000, lbfgs_iters=40000,
                      quick_adam=150, quick_lbfgs=150,
                      extra=[(("--n-f",), dict(type=int, default=None,
                                               help="collocation points (2000; quick 200)"))])
    run = setup(args.seed, args.quick, args.n_f)
    X, T, ex, params = run.X, run.T, run.exact, run.params
    pts = np.stack([X.ravel(), T.ravel()], 1)
    t0 = time.perf_counter()
    params, history = train(make_loss(run.z_f, run.z_u, run.u_data), params,
                            adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget, monitor=lambda p: (
                                f"error {relative_l2(predict(u_net, p, pts), ex.ravel()):.3e}"))
    wall = time.perf_counter() - t0
    pred = predict(u_net, params, pts).reshape(X.shape)
    err = relative_l2(pred, ex)
    print(f"wall time: {wall:.1f} s ({len(history)} steps)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_heat.png", history, [
            ("u (PINN)", pred, [0, 1, 0, 1], "t", "x"),
            ("|error|", np.abs(pred - ex), [0, 1, 0, 1], "t", "x")],
            f"Heat equation, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
