"""PINN workloads: the Laplacian of an MLP at 1,024 points, and the gradient of the Poisson
residual loss with respect to the parameters, by three routes under jit, beside JAX (jit) and
PyTorch (torch.func) when they are installed, in one run.

Workloads (tanh MLP d-64-64-64-1, float64, 1,024 points):
  W2  laplacian:  Laplacian u(x_i) at every point
  W3  grad loss:  d/dparams mean_i (Laplacian u(x_i) + f(x_i))^2
Routes:
  forward-laplacian   ft.laplacian (one forward pass of value, gradient block, Laplacian)
  hessian-trace       vmap(trace(hessian(u)))         (forward over reverse, full Hessian)
  jvp-of-grad         sum_k jvp(grad u, e_k)_k         (Hessian-vector products, vmapped)
  taylor-jet          (JAX) jax.experimental.jet along each e_k, summed
  by hand (fwd-lap)   (JAX) the forward Laplacian written out for this MLP; not a library
                      route, so it is shown beside the others but not counted as JAX's best

    python benchmarks/bench_pinn.py                 # d = 2 and d = 8
    python benchmarks/bench_pinn.py --dims 8 --repeats 20
Reported times are the minimum over repeats (the machine is shared; the minimum is the least
disturbed run), in milliseconds; ratios are against forward-laplacian in the same run.
"""

from __future__ import annotations

import argparse
import functools
import time

# first: one core everywhere (numpy's BLAS, XLA, torch) before numpy loads, a like-for-like
# comparison with no thread pools spinning against each other on a shared machine
import bench_jit_common as common
import numpy as np

import functrans as ft
import functrans.numpy as fnp

WIDTH, DEPTH, N_POINTS = 64, 3, 1024
HAND = "by hand (fwd-lap)"    # a hand-written program, not a JAX transform: shown, not "best"


def init(rng, d):
    sizes = [d] + [WIDTH] * DEPTH + [1]
    return [(rng.standard_normal((a, b)) * np.sqrt(2.0 / (a + b)), 0.1 * rng.standard_normal(b))
            for a, b in zip(sizes[:-1], sizes[1:])]


# --- functrans routes -----------------------------------------------------------------------

ft_mlp = functools.partial(common.tanh_mlp, fnp)


def ft_lap_forward(params, X):
    return ft.vmap(ft.laplacian(lambda x: ft_mlp(params, x)))(X)


def ft_lap_hessian(params, X):
    d = X.shape[1]
    eye = np.eye(d)
    return ft.vmap(lambda x: fnp.sum(ft.hessian(lambda y: ft_mlp(params, y))(x) * eye))(X)


def ft_lap_jvp_of_grad(params, X):
    d = X.shape[1]
    eye = np.eye(d)
    g = ft.grad(lambda y: ft_mlp(params, y))

    def one(x):
        hv = ft.vmap(lambda e: ft.jvp(g, (x,), (e,))[1])(eye)     # rows H e_k
        return fnp.sum(hv * eye)

    return ft.vmap(one)(X)


def ft_loss(lap_fn):
    def loss(params, X, f):
        r = lap_fn(params, X) + f
        return fnp.mean(r * r)
    return loss


# --- JAX routes -------------------------------------------------------------------------------

def jax_routes():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    mlp = functools.partial(common.tanh_mlp, jnp)

    def hessian_trace(params, X):
        return jax.vmap(lambda x: jnp.trace(jax.hessian(lambda y: mlp(params, y))(x)))(X)

    def jvp_of_grad(params, X):
        g = jax.grad(lambda y: mlp(params, y))

        def one(x):
            eye = jnp.eye(x.shape[0])
            return jnp.sum(jax.vmap(lambda e: jax.jvp(g, (x,), (e,))[1])(eye) * eye)

        return jax.vmap(one)(X)

    def loss(lap):
        def f(params, X, src):
            r = lap(params, X) + src
            return jnp.mean(r * r)
        return f

    routes = {"hessian-trace": hessian_trace, "jvp-of-grad": jvp_of_grad}
    try:  # Taylor mode: the second-order coefficient along each e_k is e_k^T H e_k
        from jax.experimental import jet

        def taylor_jet(params, X):
            def one(x):
                zeros = jnp.zeros_like(x)

                def along(e):
                    _, (_, second) = jet.jet(lambda y: mlp(params, y), (x,), ((e, zeros),))
                    return second
                return jnp.sum(jax.vmap(along)(jnp.eye(x.shape[0])))
            return jax.vmap(one)(X)
        routes["taylor-jet"] = taylor_jet
    except ImportError:
        pass

    def by_hand(params, X):
        # the forward Laplacian written out for this MLP: what ft.laplacian derives
        def one(x):
            h, G, L = x, jnp.eye(x.shape[0]), jnp.zeros_like(x)
            for W, b in params[:-1]:
                z, Gz, Lz = h @ W + b, G @ W, L @ W
                h = jnp.tanh(z)
                d1 = 1.0 - h * h
                G, L = Gz * d1, d1 * Lz - 2.0 * h * d1 * jnp.sum(Gz * Gz, 0)
            return (L @ params[-1][0])[0]
        return jax.vmap(one)(X)
    routes[HAND] = by_hand
    lap = {k: jax.jit(v) for k, v in routes.items()}
    grad = {k: jax.jit(jax.grad(loss(v))) for k, v in routes.items()}

    def block(x):
        return jax.block_until_ready(x)

    return lap, grad, block, (lambda p: jax.tree_util.tree_map(jnp.asarray, p))


# --- PyTorch routes ---------------------------------------------------------------------------

def torch_routes():
    try:
        import torch
        from torch.func import grad, hessian, jvp, vmap
    except ImportError:
        return None
    torch.set_num_threads(1)

    mlp = functools.partial(common.tanh_mlp, torch)

    def hessian_trace(params, X):
        return vmap(lambda x: torch.trace(hessian(lambda y: mlp(params, y))(x)))(X)

    def jvp_of_grad(params, X):
        g = grad(lambda y: mlp(params, y))
        eye = torch.eye(X.shape[1], dtype=X.dtype)

        def one(x):
            return torch.sum(vmap(lambda e: jvp(g, (x,), (e,))[1])(eye) * eye)

        return vmap(one)(X)

    routes = {"hessian-trace": hessian_trace, "jvp-of-grad": jvp_of_grad}

    def grad_of(lap):
        def f(params, X, src):
            ps = [(W.detach().requires_grad_(), b.detach().requires_grad_()) for W, b in params]
            r = lap(ps, X) + src
            loss = torch.mean(r * r)
            return torch.autograd.grad(loss, [t for p in ps for t in p], allow_unused=True)
        return f

    lap = {k: (lambda v: lambda p, X: v(p, X).detach())(v) for k, v in routes.items()}
    grads = {k: grad_of(v) for k, v in routes.items()}

    def convert(p):
        return [(torch.tensor(W), torch.tensor(b)) for W, b in p]

    return lap, grads, (lambda x: x), convert


# --- timing -----------------------------------------------------------------------------------

def best_time(fn, repeats):
    fn()  # compile / warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def run(d, repeats, rng):
    jit = ft.jit
    params = init(rng, d)
    X = rng.uniform(-1, 1, (N_POINTS, d))
    src = np.sin(X).sum(1)
    rows = []
    routes = {"forward-laplacian": ft_lap_forward, "hessian-trace": ft_lap_hessian,
              "jvp-of-grad": ft_lap_jvp_of_grad}
    ref = None
    for name, lap in routes.items():
        f_lap = jit(lap)
        f_grad = jit(ft.grad(ft_loss(lap)))
        val = np.asarray(f_lap(params, X))
        ref = val if ref is None else ref
        assert np.allclose(val, ref, rtol=1e-10, atol=1e-10), name
        rows.append(("functrans", name, best_time(lambda: f_lap(params, X), repeats),
                     best_time(lambda: f_grad(params, X, src), repeats)))
    for lib, routes_fn in (("jax", jax_routes), ("torch", torch_routes)):
        got = routes_fn()
        if got is None:
            continue
        laps, grads, block, convert = got
        p = convert(params)
        Xl, srcl = (X, src) if lib == "jax" else tuple(
            __import__("torch").tensor(a) for a in (X, src))
        for name in laps:
            val = np.asarray(block(laps[name](p, Xl)))
            assert np.allclose(val, ref, rtol=1e-9, atol=1e-9), (lib, name)
            rows.append((lib, name, best_time(lambda: block(laps[name](p, Xl)), repeats),
                         best_time(lambda: block(grads[name](p, Xl, srcl)), repeats)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 8])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"tanh MLP d-{WIDTH}-{WIDTH}-{WIDTH}-1, {N_POINTS} points, float64, min of "
          f"{args.repeats} runs (ms); {common.PINNING}")
    for d in args.dims:
        rows = run(d, args.repeats, rng)
        base_lap, base_grad = rows[0][2], rows[0][3]
        print(f"\nd = {d}")
        print(f"{'library':10s} {'route':18s} {'W2 laplacian':>13s} {'ratio':>6s} "
              f"{'W3 grad loss':>13s} {'ratio':>6s}")
        for lib, name, t_lap, t_grad in rows:
            print(f"{lib:10s} {name:18s} {t_lap:13.2f} {t_lap / base_lap:6.2f} "
                  f"{t_grad:13.2f} {t_grad / base_grad:6.2f}")
        ft_rows = {name: (a, b) for lib, name, a, b in rows if lib == "functrans"}
        fwd, hes = ft_rows["forward-laplacian"], ft_rows["hessian-trace"]
        print(f"functrans forward-laplacian vs hessian-trace: {hes[0] / fwd[0]:.2f}x faster "
              f"(laplacian), {hes[1] / fwd[1]:.2f}x (grad of loss)")
        jax_rows = [(a, b) for lib, name, a, b in rows if lib == "jax" and name != HAND]
        if jax_rows:
            best = min(a for a, _ in jax_rows), min(b for _, b in jax_rows)
            print(f"functrans forward-laplacian / JAX-jit best transform route: "
                  f"{fwd[0] / best[0]:.2f} (laplacian), {fwd[1] / best[1]:.2f} (grad of loss)  "
                  "[< 1: functrans faster]")
        hand = [(a, b) for lib, name, a, b in rows if lib == "jax" and name == HAND]
        if hand:
            print(f"functrans forward-laplacian / JAX-jit by hand: {fwd[0] / hand[0][0]:.2f} "
                  f"(laplacian), {fwd[1] / hand[0][1]:.2f} (grad of loss)")


if __name__ == "__main__":
    main()
