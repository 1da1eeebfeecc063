"""The Allen-Cahn equation with physics-informed networks, marching in time.

    u_t - 1e-4 u_xx + 5 u^3 - 5 u = 0,  x in [-1, 1], t in [0, 1],
    u(0, x) = x^2 cos(pi x),  u periodic in x.

A single network trained on the whole domain (float32, plain MLP, boundary loss) is the
textbook failure of PINNs here: it converges to a wrong, smooth solution. What practitioners
do, and what this script does:

- time-marching: [0, 1] is cut into windows, trained one after the other, each on its
  window and from the previous window's values at the window's start (Wight and
  Zhao, "Solving Allen-Cahn and Cahn-Hilliard equations using the adaptive physics informed
  neural networks", Commun. Comput. Phys. 29, 2021; the causality argument of Wang, Sankaran
  and Perdikaris, "Respecting causality is all you need for training physics-informed neural
  networks", arXiv:2203.07404, 2022, and their CMAME 2024 paper);
- a periodic embedding of x, (cos(pi x), sin(pi x), cos(2 pi x), sin(2 pi x)), so u and all
  its x-derivatives are periodic exactly and there is no boundary loss (Wang, Sankaran and
  Perdikaris; Dong and Ni, J. Comput. Phys. 2021);
- float64 throughout, Adam then L-BFGS;
- each window after the first starts from the last one's values exactly (a hard initial
  condition): its solution is u(t, x) = net(t, x) - net(t0, x) + u_prev(t0, x), equal to
  u_prev at t0 whatever the parameters, and equal to the network itself while the parameters
  are the ones u_prev was trained to (`continued`). With a soft initial-condition loss instead,
  each window adds its own misfit to what it inherits, and the error grows from window to
  window: an interface that starts out of place stays out of place (translation is a neutral
  mode of Allen-Cahn). The first window fits x^2 cos(pi x), weighted 100, as a loss: its x
  derivative is not periodic, so no periodic network can equal it;
- residual-based adaptive points: each window trains in rounds, and after each round points
  drawn where the residual is large join the window's set (`pinn_common.residual_adaptive`,
  the RAD distribution of Wu, Zhu, Tan, Kartha and Lu, CMAME 403, 2023): the interfaces,
  about sqrt(eps / gamma) wide, are where the error sits, and uniform points rarely land
  there.

u, u_t and u_xx at a point come from one forward pass of
`ft.value_grad_and_hessian_diag(..., indices=[1])`, vmapped over the points (and, in a
continued window, net(t0, x) and its u_xx from a second). The reference is computed at run
time by the split-step Fourier method (`pde_reference.allen_cahn`; its own relative error is
below 1e-5, tests/examples/test_pde_reference.py) on Raissi's 201 x 512 grid; each window's
error on its times is printed when it ends.

Schedule (full run, sized for about 40 minutes on one core): 5 windows of 0.2, one network
of 3 hidden layers of 64 tanh units carried from window to window (each window starts from
the previous window's parameters, t scaled over all of [0, 1]); per window 2,000 collocation
points (Latin hypercube), then 4 rounds of L-BFGS on all points, 1,000 adaptive points
(drawn from 40,000 candidates) joining after each of the first three. The first window
starts with Adam, 500 steps (learning rate 2e-3 decaying to 2e-4, random batches of 500
points); the others with L-BFGS. Each round runs up to 10,000 iterations or its share of the
time budget (default 2,400 s of training, counted in CPU time, `--time-budget`: a fifth per
window, a quarter of that per round; the first round of the first window gets twice its
share, half of it Adam's).

    python examples/pinn_allen_cahn.py            # full run
    python examples/pinn_allen_cahn.py --quick    # seconds; loose error
"""

from __future__ import annotations

import functools
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
                         report, residual_adaptive, save_figure, train)

EPS, GAMMA = 1e-4, 5.0
IC_WEIGHT = 100.0


def u_net(params, z):
    """u at z = (t, x): t scaled from [0, 1] to [-1, 1], x embedded periodically."""
    t = 2.0 * z[0] - 1.0
    px = np.pi * z[1]
    features = fnp.stack([t, fnp.cos(px), fnp.sin(px), fnp.cos(2 * px), fnp.sin(2 * px)])
    return mlp(params, features)


def residual(params, z):
    """u_t - eps u_xx + gamma (u^3 - u) at one point z = (t, x)."""
    u, du, d2u = ft.value_grad_and_hessian_diag(lambda q: u_net(params, q), indices=[1])(z)
    return du[0] - EPS * d2u[0] + GAMMA * (u * u * u - u)


def continued(params, t0, start):
    """u(t, x) = net(t, x) - net(t0, x) + start(x): equal to `start` at t0 exactly, whatever the
    parameters (a hard initial condition), and equal to the network itself when it is the
    network `start` came from (so a window begins where the last one left off)."""
    return lambda z: u_net(params, z) - u_net(params, fnp.stack([t0, z[1]])) + start(z[1])


def continued_residual(params, z, t0):
    """The residual of `continued` at z = (t, x, s, s_xx), the start's value s and second
    derivative s_xx at x carried with the point (they do not depend on the parameters)."""
    u, du, d2u = ft.value_grad_and_hessian_diag(lambda q: u_net(params, q), indices=[1])(z[:2])
    v, _, d2v = ft.value_grad_and_hessian_diag(
        lambda x: u_net(params, fnp.stack([t0, x])))(z[1])
    u = u - v + z[2]
    return du[0] - EPS * (d2u[0] - d2v + z[3]) + GAMMA * (u * u * u - u)


def make_loss(z0, u0):
    """loss(params, z_f) on the first window: the weighted initial misfit plus the residual."""
    def loss(params, z_f):
        e = ft.vmap(lambda z: u_net(params, z))(z0) - u0
        f = ft.vmap(lambda z: residual(params, z))(z_f)
        return IC_WEIGHT * fnp.mean(e * e) + fnp.mean(f * f)

    return loss


def with_start(start, z):
    """Points z = (t, x) extended with start(x) and its second derivative."""
    s, _, d2s = ft.jit(ft.vmap(ft.value_grad_and_hessian_diag(start)))(z[:, 1])
    return np.concatenate([z, np.stack([s, d2s], 1)], 1)


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=500, lbfgs_iters=10000,
                      quick_adam=100, quick_lbfgs=50, extra=[
                          (("--windows",), dict(type=int, default=None,
                                                help="time windows (5; quick 2)")),
                          (("--n-f",), dict(type=int, default=None,
                                            help="collocation points per window "
                                                 "(2000; quick 300)")),
                          (("--rounds",), dict(type=int, default=None,
                                               help="L-BFGS rounds per window, adaptive "
                                                    "points added between them (4; quick 2)")),
                          (("--n-add",), dict(type=int, default=None,
                                              help="adaptive points added after a round "
                                                   "(1000; quick 150)")),
                          (("--width",), dict(type=int, default=None,
                                              help="hidden units per layer (64; quick 20)")),
                          (("--batch",), dict(type=int, default=None,
                                              help="Adam's points per step (500; quick: all)"))])
    rng = np.random.default_rng(args.seed)
    windows = args.windows or (2 if args.quick else 5)
    n_f = args.n_f or (300 if args.quick else 2000)
    rounds = args.rounds or (2 if args.quick else 4)
    n_add = args.n_add or (150 if args.quick else 1000)
    width = args.width or (20 if args.quick else 64)
    if args.batch is None and not args.quick:
        args.batch = 500
    if args.time_budget is None and not args.quick:
        args.time_budget = 2400.0
    budget = None if args.time_budget is None else args.time_budget / windows / rounds
    t_end = 0.5 if args.quick else 1.0         # quick: the first half, before the layers sharpen
    edges = np.linspace(0.0, t_end, windows + 1)
    x0 = np.linspace(-1.0, 1.0, 513)[:-1]
    u0 = x0 * x0 * np.cos(np.pi * x0)
    t, x, exact = pde_reference.allen_cahn()
    keep = t <= t_end + 1e-12
    t, exact = t[keep], exact[keep]
    owner = np.minimum(np.searchsorted(edges, t, side="right") - 1, windows - 1)
    pred = np.empty_like(exact)
    history, solutions = [], []
    params = init_mlp(rng, [5, width, width, width, 1])
    t_start = time.perf_counter()
    for w, (t0, t1) in enumerate(zip(edges[:-1], edges[1:])):
        lb, ub = [t0, -1.0], [t1, 1.0]
        print(f"window {w + 1}/{windows}: t in [{t0:.2f}, {t1:.2f}]", flush=True)
        if w == 0:              # the initial values x^2 cos(pi x) are not periodic in u_x: fit them
            loss = make_loss(np.stack([np.full_like(x0, t0), x0], 1), u0)
            residuals = ft.jit(ft.vmap(residual, in_axes=(None, 0)))
            extend = np.asarray
        else:                   # later windows start from the last one's values exactly
            start = (lambda u, t0: lambda x: u(fnp.stack([t0, x])))(solutions[-1], t0)
            residuals = ft.jit(ft.vmap(functools.partial(continued_residual, t0=t0),
                                       in_axes=(None, 0)))
            loss = (lambda res: lambda p, z: fnp.mean(res(p, z) ** 2))(residuals)
            extend = functools.partial(with_start, start)
        z_f = extend(lhs(rng, n_f, lb, ub))
        for r in range(rounds):
            # later windows start from the previous window's network (it already continues the
            # solution past t0), with L-BFGS only: Adam's first steps would throw that start away
            first = w == 0 and r == 0
            params, hist = train(loss, params, adam_steps=args.adam_steps if first else 0,
                                 lbfgs_iters=args.lbfgs_iters, lr=2e-3, lr_decay=0.1,
                                 points=z_f, batch_size=args.batch, seed=args.seed + w,
                                 progress=not args.no_progress, log_every=args.log_every,
                                 time_budget=budget and budget * (2 if first else 1))
            # later phases renamed: the figure marks where the first window's L-BFGS began
            history += hist if first else [(f"{ph} (window {w + 1})", k, v)
                                           for ph, k, v in hist]
            if r < rounds - 1:
                z_f = np.concatenate([z_f, extend(residual_adaptive(
                    rng, lambda z: residuals(params, extend(z)), n_add, lb, ub, 20 * n_f))])
        solutions.append(functools.partial(u_net, params) if w == 0
                         else continued(params, t0, start))
        T, X = np.meshgrid(t[owner == w], x, indexing="ij")
        pred[owner == w] = predict(lambda _, z: solutions[w](z), None,
                                   np.stack([T.ravel(), X.ravel()], 1)).reshape(T.shape)
        print(f"window {w + 1}: relative L2 error on its times "
              f"{relative_l2(pred[owner == w], exact[owner == w]):.2e}", flush=True)
    wall = time.perf_counter() - t_start

    err = relative_l2(pred, exact)
    print(f"wall time: {wall:.1f} s ({len(history)} steps; {windows} windows of {n_f} "
          f"collocation points and {n_add} x {rounds - 1} adaptive ones, 3x{width} tanh)")
    if not args.no_figure:
        extent = [0, t_end, -1, 1]
        save_figure(args.figure or "pinn_allen_cahn.png", history, [
            ("u (PINN)", pred.T, extent, "t", "x"),
            ("|error|", np.abs(pred - exact).T, extent, "t", "x"),
            ("u at three times (dashed: PINN)", [
                (x, exact[k], f"reference t={t[k]:.2f}", f"C{j}-")
                for j, k in enumerate((len(t) // 4, len(t) // 2, len(t) - 1))
            ] + [(x, pred[k], f"PINN t={t[k]:.2f}", f"C{j}--")
                 for j, k in enumerate((len(t) // 4, len(t) // 2, len(t) - 1))], None, "x",
             "u")],
            f"Allen-Cahn (time-marching), relative L2 error {err:.2e}")
    report(err)
    return err


if __name__ == "__main__":
    main()
