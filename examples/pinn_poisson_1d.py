"""Poisson 1D with a physics-informed network.

    -u''(x) = pi^2 sin(pi x) on [-1, 1],  u(-1) = u(1) = 0;  exact u = sin(pi x).

u'' at every collocation point comes from `laplacian` (one forward pass of value, gradient and
second derivative), vmapped over the points; the loss gradient with respect to the parameters
is `value_and_grad` of that, compiled once. Adam, then L-BFGS.

    python examples/pinn_poisson_1d.py            # full run
    python examples/pinn_poisson_1d.py --quick    # seconds; loose error
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
from pinn_common import (init_mlp, mlp, parse_args, predict, relative_l2, report,  # noqa: E402
                         save_figure, train)


def u_net(params, x):
    return mlp(params, x)


def exact(x):
    return np.sin(np.pi * x)


def make_loss(x_f, x_b):
    source = np.pi ** 2 * np.sin(np.pi * x_f[:, 0])

    def loss(params):
        lap = ft.vmap(ft.laplacian(lambda x: u_net(params, x)))(x_f)
        r = lap + source                                   # -u'' - f = 0
        ub = ft.vmap(lambda x: u_net(params, x))(x_b)
        return fnp.mean(r * r) + fnp.mean(ub * ub)

    return loss


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=2000, lbfgs_iters=3000,
                      quick_adam=150, quick_lbfgs=150,
                      extra=[(("--n-f",), dict(type=int, default=None,
                                               help="collocation points (200; quick 64)"))])
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (64 if args.quick else 200)
    x_f = rng.uniform(-1, 1, (n_f, 1))
    x_b = np.array([[-1.0], [1.0]])
    params = init_mlp(rng, [1, 20, 20, 20, 1] if not args.quick else [1, 16, 16, 1])
    t0 = time.perf_counter()
    params, history = train(make_loss(x_f, x_b), params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget)
    wall = time.perf_counter() - t0
    x = np.linspace(-1, 1, 1001)
    pred = predict(u_net, params, x[:, None])
    err = relative_l2(pred, exact(x))
    print(f"wall time: {wall:.1f} s ({len(history)} steps)")
    if not args.no_figure:
        save_figure(args.figure or "pinn_poisson_1d.png", history, [
            ("u", [(x, exact(x), "exact"), (x, pred, "PINN")], None, "x", "u"),
            ("|error|", [(x, np.abs(pred - exact(x)), "|u - exact|")], None, "x", "")],
            f"Poisson 1D, relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
