"""The Korteweg-de Vries equation with a physics-informed network: a travelling soliton.

    u_t + 6 u u_x + u_xxx = 0,  x in [-6, 6], t in [0, 2];
    exact u = (c / 2) sech^2(sqrt(c) / 2 (x - c t - x0)),  c = 2, x0 = -2,

with u(0, x) and u(t, +-6) taken from the exact solution. The linear part u_t + u_xxx at a
point is one call of `ft.differential_operator` (one forward pass of collapsed Taylor mode
at order 3 along the directions that span u_t and u_xxx); u and u_x for the nonlinear term
come from one `jvp` along x. Both are vmapped over the collocation points, and the loss is
differentiated with respect to the parameters as any other program.

Schedule (full run): 4 hidden layers of 32 tanh units, 3,000 collocation points (Latin
hypercube), 400 initial/boundary points; Adam 2,000 steps (learning rate 2e-3 decaying to
2e-4, random batches of 1,000 points), then L-BFGS up to 8,000 iterations.

    python examples/pinn_kdv.py            # full run
    python examples/pinn_kdv.py --quick    # seconds; loose error
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

C, X0 = 2.0, -2.0
LB, UB = np.array([0.0, -6.0]), np.array([2.0, 6.0])     # (t, x)


def exact(t, x):
    return 0.5 * C / np.cosh(0.5 * np.sqrt(C) * (x - C * t - X0)) ** 2


def u_net(params, z):
    return mlp(params, z, LB, UB)


def make_loss(z_u, u_data):
    """loss(params, z_f): mean squared residual at z_f plus the initial/boundary misfit."""
    def residual(params, z):
        u = lambda q: u_net(params, q)
        lin = ft.differential_operator(u, {(1, 0): 1.0, (0, 3): 1.0})(z)     # u_t + u_xxx
        val, u_x = ft.jvp(u, (z,), (np.array([0.0, 1.0]),))
        return lin + 6.0 * val * u_x

    def loss(params, z_f):
        r = ft.vmap(lambda z: residual(params, z))(z_f)
        e = ft.vmap(lambda z: u_net(params, z))(z_u) - u_data
        return fnp.mean(r * r) + fnp.mean(e * e)

    return loss


def conditions(rng, n):
    """n points: half on t = 0, half on x = +-6, with the exact values there."""
    n0 = n // 2
    x0 = rng.uniform(LB[1], UB[1], n0)
    tb = rng.uniform(LB[0], UB[0], n - n0)
    xb = np.where(np.arange(n - n0) % 2, UB[1], LB[1])
    z = np.concatenate([np.stack([np.zeros(n0), x0], 1), np.stack([tb, xb], 1)])
    return z, exact(z[:, 0], z[:, 1])


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=2000, lbfgs_iters=8000,
                      quick_adam=150, quick_lbfgs=150, extra=[
                          (("--n-f",), dict(type=int, default=None,
                                            help="collocation points (3000; quick 300)")),
                          (("--batch",), dict(type=int, default=None,
                                              help="Adam's points per step (1000; quick: all)"))])
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (300 if args.quick else 3000)
    if args.batch is None and not args.quick:
        args.batch = 1000
    z_f = lhs(rng, n_f, LB, UB)
    z_u, u_data = conditions(rng, 100 if args.quick else 400)
    params = init_mlp(rng, [2, 20, 20, 1] if args.quick else [2, 32, 32, 32, 32, 1])
    t0 = time.perf_counter()
    params, history = train(make_loss(z_u, u_data), params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3, lr_decay=0.1,
                            points=z_f, batch_size=args.batch, seed=args.seed,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget)
    wall = time.perf_counter() - t0
    t = np.linspace(LB[0], UB[0], 101)
    x = np.linspace(LB[1], UB[1], 241)
    T, X = np.meshgrid(t, x, indexing="ij")
    pred = predict(u_net, params, np.stack([T.ravel(), X.ravel()], 1)).reshape(T.shape)
    ex = exact(T, X)
    err = relative_l2(pred, ex)
    print(f"wall time: {wall:.1f} s ({len(history)} steps; {n_f} collocation points)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_kdv.png", history, [
            ("u (PINN)", pred.T, [LB[0], UB[0], LB[1], UB[1]], "t", "x"),
            ("|error|", np.abs(pred - ex).T, [LB[0], UB[0], LB[1], UB[1]], "t", "x"),
            ("u at t = 0, 1, 2 (dashed: PINN)", [
                (x, ex[k], f"exact t={t[k]:.1f}", f"C{j}-") for j, k in enumerate((0, 50, 100))
            ] + [(x, pred[k], f"PINN t={t[k]:.1f}", f"C{j}--")
                 for j, k in enumerate((0, 50, 100))], None, "x", "u")],
            f"KdV soliton, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
