"""Time to accuracy of the PINN examples, beside JAX on the same schedule.

Each example's own training (examples/pinn_common.train: Adam, then scipy's L-BFGS) runs twice
from the same start: once as shipped, functrans jit computing the loss and its gradient, and
once with the same loss written in JAX (its fastest route for the gradient of a second-order
residual, Hessian-vector products: jvp of grad) under jax.jit. Everything else is shared: the
optimizers, the points, the initial parameters, and the test error, computed with functrans
every CHECK steps; a run stops the first time that error is at or below the example's target.
Reported: the wall time to get there (the error checks not counted), the steps it took, and
the time per step.

    python benchmarks/bench_pinn.py --workloads accuracy
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "examples")
CHECK = 100           # steps between error checks


def _examples():
    """The examples' modules (imported from the source tree's examples/)."""
    sys.path.insert(0, _EXAMPLES)
    import pinn_common
    import pinn_heat
    import pinn_poisson_2d
    import pinn_poisson_nd
    return SimpleNamespace(common=pinn_common, heat=pinn_heat, poisson_2d=pinn_poisson_2d,
                           poisson_nd=pinn_poisson_nd)


def _jax_net(jnp, lb, ub):
    """examples/pinn_common.mlp in JAX: inputs scaled from [lb, ub] to [-1, 1], tanh layers."""
    def net(params, z):
        h = (z - lb) * (2.0 / (ub - lb)) - 1.0
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return (h @ w + b)[0]
    return net


def _jax_laplacian(jax, jnp, u, z):
    """sum_k (H e_k)_k, the Hessian-vector products by jvp of grad, vmapped over the e_k."""
    basis = jnp.eye(z.shape[0], dtype=z.dtype)
    return jnp.sum(jax.vmap(lambda e: jax.jvp(jax.grad(u), (z,), (e,))[1] @ e)(basis))


def problems(ex, jax, jnp, only=None):
    """{name: (initial params, functrans loss, JAX loss, u_net, test points, exact there,
    target error)} for the examples' default (full) runs, seed 0."""
    makers = {"Poisson 2D": _poisson_2d, "heat": _heat, "Poisson d = 10": _poisson_nd}
    return {name: make(ex, jax, jnp) for name, make in makers.items()
            if only is None or name in only}


def _poisson_2d(ex, jax, jnp):
    m = ex.poisson_2d
    run = m.setup(0)
    net = _jax_net(jnp, m.LB, m.UB)
    source = 2 * np.pi ** 2 * m.exact(run.z_f)

    def loss(params):
        lap = jax.vmap(lambda z: _jax_laplacian(jax, jnp, lambda q: net(params, q), z))(run.z_f)
        r, ub = lap + source, jax.vmap(lambda z: net(params, z))(run.z_b)
        return jnp.mean(r * r) + jnp.mean(ub * ub)

    return (run.params, m.make_loss(run.z_f, run.z_b), loss, m.u_net,
            np.stack([run.X.ravel(), run.Y.ravel()], 1), run.exact.ravel(), 1e-3)


def _heat(ex, jax, jnp):
    m = ex.heat
    run = m.setup(0)
    net = _jax_net(jnp, m.LB, m.UB)
    e_x = np.array([1.0, 0.0])

    def loss(params):
        def residual(z):        # the gradient and the Hessian's first column in one jvp
            du, hx = jax.jvp(jax.grad(lambda q: net(params, q)), (z,), (e_x,))
            return du[1] - m.ALPHA * hx[0]             # u_t - 0.4 u_xx
        r = jax.vmap(residual)(run.z_f)
        e = jax.vmap(lambda z: net(params, z))(run.z_u) - run.u_data
        return jnp.mean(r * r) + jnp.mean(e * e)

    return (run.params, m.make_loss(run.z_f, run.z_u, run.u_data), loss, m.u_net,
            np.stack([run.X.ravel(), run.T.ravel()], 1), run.exact.ravel(), 1e-3)


def _poisson_nd(ex, jax, jnp):
    m = ex.poisson_nd
    args = SimpleNamespace(dim=10, seed=0, quick=False, n_f=None)
    d, z_f, z_b, params = m.setup(args)
    ft_loss, u_net = m.make_loss(z_f, z_b, d)
    z_f, source, z_b, u_b = m.point_arrays(z_f, z_b)
    net = _jax_net(jnp, np.zeros(d), np.ones(d))

    def loss(params):
        lap = jax.vmap(lambda z: _jax_laplacian(jax, jnp, lambda q: net(params, q), z))(z_f)
        r, e = lap + source, jax.vmap(lambda z: net(params, z))(z_b) - u_b
        return jnp.mean(r * r) + jnp.mean(e * e)

    z_test = m.error_points(args)
    return params, ft_loss, loss, u_net, z_test, m.exact(z_test), 2e-3


def time_to_accuracy(ex, params, value_and_grad, loss, u_net, points, exact, target,
                     adam_steps, max_lbfgs):
    """Train with the example's schedule until the test error is at or below `target`.
    Returns (seconds without the error checks, steps, error reached or None)."""
    spent, reached = [0.0], []

    def until(p):
        t = time.perf_counter()
        err = ex.common.relative_l2(ex.common.predict(u_net, p, points), exact)
        spent[0] += time.perf_counter() - t
        if err <= target:
            reached.append(err)
        return err <= target

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # the training's own log lines
        _, history = ex.common.train(loss, params, adam_steps=adam_steps,
                                     lbfgs_iters=max_lbfgs, lr=2e-3, progress=False,
                                     log_every=CHECK, value_and_grad=value_and_grad,
                                     until=until)
    return time.perf_counter() - t0 - spent[0], len(history), reached[0] if reached else None


def main(adam_steps: int = 3000, max_lbfgs: int = 20000, only=None) -> None:
    """The table; `only`: the names of the examples to run (default: all)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    ex = _examples()
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    print(f"time to accuracy, seed 0: Adam {adam_steps} steps, then L-BFGS (up to "
          f"{max_lbfgs} iterations); the test error checked every {CHECK} steps; wall time")
    print(f"{'example':16s} {'target':>7s} {'library':10s} {'seconds':>8s} {'steps':>6s} "
          f"{'ms/step':>8s} {'error':>9s}")
    for name, (params, loss, jax_loss, u_net, points, exact, target) in \
            problems(ex, jax, jnp if jax else None, only).items():
        routes = {"functrans": None}
        if jax is not None:
            jvg = jax.jit(jax.value_and_grad(jax_loss))

            def value_and_grad(p, jvg=jvg):
                value, grads = jvg(p)
                return float(value), jax.tree_util.tree_map(np.asarray, grads)
            routes["JAX jit"] = value_and_grad
        times = {}
        for library, vg in routes.items():
            seconds, steps, err = time_to_accuracy(ex, params, vg, loss, u_net, points, exact,
                                                   target, adam_steps, max_lbfgs)
            times[library] = seconds if err is not None else None
            print(f"{name:16s} {target:7.0e} {library:10s} {seconds:8.1f} {steps:6d} "
                  f"{1e3 * seconds / steps:8.2f} "
                  f"{'not met' if err is None else f'{err:.2e}':>9s}", flush=True)
        if times.get("JAX jit") and times["functrans"]:
            print(f"{'':16s} functrans / JAX jit: {times['functrans'] / times['JAX jit']:.2f}")


if __name__ == "__main__":
    main()
