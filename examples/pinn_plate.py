"""A simply supported plate with a physics-informed network: the biharmonic equation.

    Delta^2 u = f on [0, 1]^2,  u = 0 and Delta u = 0 on the boundary (simply supported:
    no deflection and no bending moment on the straight edges);
    f = 4 pi^4 sin(pi x) sin(pi y),  exact u = sin(pi x) sin(pi y) (Navier's solution).

Delta^2 u at every collocation point is `ft.biharmonic`: one forward pass of collapsed
fourth-order Taylor mode along three lines 60 degrees apart, not four nested gradients;
Delta u on the boundary is `ft.laplacian`. Both are vmapped over the points and the loss is
differentiated with respect to the parameters. The residual is divided by 4 pi^4 and Delta u
by 2 pi^2 so every term of the loss is of order one.

Schedule (full run): 3 hidden layers of 32 tanh units, 2,000 interior collocation points
(Latin hypercube), 400 boundary points; Adam 500 steps (learning rate 2e-3 decaying to
2e-4), then L-BFGS up to 2,500 iterations.

    python examples/pinn_plate.py            # full run
    python examples/pinn_plate.py --quick    # seconds; loose error
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
sys.path.insert(0, _HERE)                       # pinn_common
sys.path.append(os.path.dirname(_HERE))          # functrans from a source checkout

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from pinn_common import (init_mlp, lhs, mlp, parse_args, predict, relative_l2,  # noqa: E402
                         report, save_figure, train)

LB, UB = np.zeros(2), np.ones(2)
LOAD = 4 * np.pi ** 4          # Delta^2 of sin(pi x) sin(pi y) is 4 pi^4 times it


def exact(x, y):
    return np.sin(np.pi * x) * np.sin(np.pi * y)


def u_net(params, z):
    return mlp(params, z, LB, UB)


def make_loss(z_f, z_b):
    f = exact(z_f[:, 0], z_f[:, 1])               # the load over 4 pi^4

    def loss(params):
        u = lambda q: u_net(params, q)
        r = ft.vmap(ft.biharmonic(u))(z_f) / LOAD - f
        u_b = ft.vmap(u)(z_b)
        lap_b = ft.vmap(ft.laplacian(u))(z_b) / (2 * np.pi ** 2)
        return fnp.mean(r * r) + fnp.mean(u_b * u_b) + fnp.mean(lap_b * lap_b)

    return loss


def boundary_points(rng, n):
    """n points spread over the four edges of the unit square."""
    s = rng.uniform(0, 1, n)
    side = np.arange(n) % 4
    fixed = (side % 2).astype(float)               # 0 or 1
    return np.where((side < 2)[:, None], np.stack([fixed, s], 1), np.stack([s, fixed], 1))


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=500, lbfgs_iters=2500,
                      quick_adam=150, quick_lbfgs=150,
                      extra=[(("--n-f",), dict(type=int, default=None,
                                               help="collocation points (2000; quick 200)"))])
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (200 if args.quick else 2000)
    z_f = lhs(rng, n_f, LB, UB)
    z_b = boundary_points(rng, 80 if args.quick else 400)
    params = init_mlp(rng, [2, 20, 20, 1] if args.quick else [2, 32, 32, 32, 1])
    t0 = time.perf_counter()
    params, history = train(make_loss(z_f, z_b), params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3, lr_decay=0.1,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget)
    wall = time.perf_counter() - t0
    x = np.linspace(0, 1, 101)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pred = predict(u_net, params, np.stack([X.ravel(), Y.ravel()], 1)).reshape(X.shape)
    ex = exact(X, Y)
    err = relative_l2(pred, ex)
    print(f"wall time: {wall:.1f} s ({len(history)} steps; {n_f} collocation points)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_plate.png", history, [
            ("u (PINN)", pred.T, [0, 1, 0, 1], "x", "y"),
            ("|error|", np.abs(pred - ex).T, [0, 1, 0, 1], "x", "y")],
            f"Simply supported plate, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
