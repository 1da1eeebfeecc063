"""High-dimensional Poisson with a physics-informed network and the forward Laplacian.

    -Laplacian u = (pi^2 / 4) sum_i sin(pi x_i / 2) on [0, 1]^d,  u = exact on the boundary;
    exact u = sum_i sin(pi x_i / 2),  d = 10 by default (--dim).

The Laplacian at each collocation point is `laplacian`: one forward pass carrying the value,
the d-row gradient block and the Laplacian through the network, instead of a d x d Hessian.
Adam (3,000 steps), then L-BFGS up to 14,000 iterations, the error falling all the way (seed 0:
7.9e-4 at 3,000, 5.5e-4 at 8,000, 3.6e-4 at 14,000; median of seeds 0, 1, 2: 3.6e-4,
examples/README.md).

    python examples/pinn_poisson_nd.py              # full run, d = 10
    python examples/pinn_poisson_nd.py --dim 20
    python examples/pinn_poisson_nd.py --quick      # seconds; loose error
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


def exact(z):
    return np.sum(np.sin(np.pi * z / 2), axis=-1)


def boundary_points(rng, n, d):
    """Uniform points of the cube with one coordinate each pinned to 0 or 1 (a face)."""
    z = rng.uniform(0, 1, (n, d))
    z[np.arange(n), rng.integers(0, d, n)] = rng.integers(0, 2, n).astype(float)
    return z


def make_point_loss(d):
    """The loss with its points as arguments, `loss(params, *point_arrays(z_f, z_b))`, and the
    network `u_net(params, z)` (examples/pinn_distributed.py passes dask arrays of points)."""
    lb, ub = np.zeros(d), np.ones(d)

    def u_net(params, z):
        return mlp(params, z, lb, ub)

    def loss(params, z_f, source, z_b, u_b):
        lap = ft.vmap(ft.laplacian(lambda z: u_net(params, z)))(z_f)
        r = lap + source
        e = ft.vmap(lambda z: u_net(params, z))(z_b) - u_b
        return fnp.mean(r * r) + fnp.mean(e * e)

    return loss, u_net


def point_arrays(z_f, z_b):
    """The arrays the loss reads: collocation points, the source term there, boundary points
    and the exact solution there."""
    return [z_f, np.pi ** 2 / 4 * np.sum(np.sin(np.pi * z_f / 2), axis=1), z_b, exact(z_b)]


def make_loss(z_f, z_b, d):
    """The loss of the parameters alone (the points closed over), and the network."""
    point_loss, u_net = make_point_loss(d)
    points = point_arrays(z_f, z_b)
    return (lambda params: point_loss(params, *points)), u_net


def setup(args):
    """The problem of a run: (d, collocation points, boundary points, initial parameters)."""
    d = args.dim
    rng = np.random.default_rng(args.seed)
    n_f = args.n_f or (200 if args.quick else 2000)
    z_f = lhs(rng, n_f, np.zeros(d), np.ones(d))
    z_b = boundary_points(rng, 100 if args.quick else 1000, d)
    width = 32 if args.quick else 64
    return d, z_f, z_b, init_mlp(rng, [d, width, width, width, 1])


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=3000, lbfgs_iters=14000,
                      quick_adam=150, quick_lbfgs=100,
                      extra=[(("--dim",), dict(type=int, default=10, help="dimension d")),
                             (("--n-f",), dict(type=int, default=None,
                                               help="collocation points (2000; quick 200)"))])
    d, z_f, z_b, params = setup(args)
    loss, u_net = make_loss(z_f, z_b, d)
    z_test = error_points(args)
    u_test = exact(z_test)
    t0 = time.perf_counter()
    params, history = train(loss, params, adam_steps=args.adam_steps,
                            lbfgs_iters=args.lbfgs_iters, lr=2e-3,
                            progress=not args.no_progress, log_every=args.log_every,
                            time_budget=args.time_budget, monitor=lambda p: (
                                f"error {relative_l2(predict(u_net, p, z_test), u_test):.3e}"))
    wall = time.perf_counter() - t0
    return finish(args, u_net, params, history, wall, "pinn_poisson_nd.png",
                  f"Poisson in d = {d}, relative L2 error {{err:.2e}} (10,000 random points)")


def error_points(args):
    """The 10,000 random points of the cube the error is measured on."""
    return np.random.default_rng(args.seed + 1000).uniform(0, 1, (10000, args.dim))


def finish(args, u_net, params, history, wall, figure, title):
    """The error on 10,000 random points, the wall-time line, the figure (`title` formats
    {err}) and the `relative L2 error:` line; returns the error."""
    d = args.dim
    z_test = error_points(args)
    err = relative_l2(predict(u_net, params, z_test), exact(z_test))
    print(f"wall time: {wall:.1f} s ({len(history)} steps, d = {d})")
    if not args.no_figure:
        # a 2-d slice through the cube: x_1, x_2 vary, the other coordinates at 0.5
        g = np.linspace(0, 1, 81)
        X, Y = np.meshgrid(g, g, indexing="ij")
        pts = np.full((X.size, d), 0.5)
        pts[:, 0], pts[:, 1] = X.ravel(), Y.ravel()
        ps = predict(u_net, params, pts).reshape(X.shape)
        es = exact(pts).reshape(X.shape)
        save_figure(args.figure or figure, history, [
            ("u on the (x1, x2) slice", ps.T, [0, 1, 0, 1], "x1", "x2"),
            ("|error| on the slice", np.abs(ps - es).T, [0, 1, 0, 1], "x1", "x2")],
            title.format(err=err))
    report(err)
    return err

if __name__ == "__main__":
    main()
