"""PINN workloads: differential operators of an MLP at 1,024 points and the gradient of a
residual loss on them with respect to the parameters, by several routes under jit, beside JAX
(jit) and PyTorch (torch.func) when they are installed, in one run.

Taylor workloads (the default; tanh MLP d-64-64-64-1, float64, 1,024 points, one core):
  W4  biharmonic:  Delta^2 u at every point, d = 2 and d = 5
  W5  third order: u_t + u_xxx + 0.5 u_xxt at every point, u(t, x) (d = 2)
  W6  grad loss:   d/dparams mean_i (L u(x_i) + f(x_i))^2 for each of them
Routes (each on the same directions and weights):
  collapsed-taylor  ft.biharmonic / ft.differential_operator: one collapsed Taylor pass
  jet (per dir)     ft.jet along each direction, vmapped, summed
  nested-jvp        (JAX) K nested jvps along each direction, vmapped, summed
  taylor-jet        (JAX) jax.experimental.jet along each direction, vmapped, summed
Memory: the peak of numpy's allocations during one call (tracemalloc) for functrans; XLA's
temporary and output buffers of the compiled program (memory_analysis) for JAX.

Laplacian workloads (--workloads laplacian):

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

    python benchmarks/bench_pinn.py                 # the Taylor workloads
    python benchmarks/bench_pinn.py --workloads laplacian            # d = 2 and d = 8
    python benchmarks/bench_pinn.py --workloads laplacian --dims 8 --repeats 20
    python benchmarks/bench_pinn.py --workloads accuracy     # the examples' time to accuracy
Reported times are the minimum over repeats (the machine is shared; the minimum is the least
disturbed run), in milliseconds of process CPU time (FUNCTRANS_BENCH_CLOCK=wall for wall
time); ratios are against the first route in the same run.
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
        t0 = common.clock()
        fn()
        times.append(common.clock() - t0)
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


# --- Taylor workloads: the biharmonic and a third-order operator ------------------------------

# u(t, x): u_t + u_xxx + 0.5 u_xxt, as multi-indices over (t, x)
THIRD_ORDER = {(1, 0): 1.0, (0, 3): 1.0, (2, 1): 0.0, (1, 2): 0.5}
THIRD_ORDER = {k: v for k, v in THIRD_ORDER.items() if v}


def taylor_plans(d):
    """{workload: (functrans operator, (directions, max order, {order: weights}))}: the
    directions and weights the collapsed pass uses, which the per-direction routes reuse."""
    from functrans.transforms.taylor.operators import biharmonic_directions, operator_plan
    dirs, w = biharmonic_directions(d)
    plans = {f"W4 biharmonic d={d}": (ft.biharmonic, (dirs, 4, {4: w}, 0.0))}
    if d == 2:
        plans["W5 u_t+u_xxx+u_xxt/2"] = (
            lambda f: ft.differential_operator(f, THIRD_ORDER),
            operator_plan(THIRD_ORDER, 2, "bench"))
    return plans


def _weighted_terms(terms_per_dir, weights, lib):
    """sum_k sum_r w_(k,r) (d^k along r): terms_per_dir[k] is an (R,) array."""
    total = 0.0
    for k, w in weights.items():
        total = total + lib.sum(terms_per_dir[k] * w)
    return total


def ft_taylor_routes(op, plan):
    dirs, order, weights, _ = plan

    def collapsed(params, X):
        return ft.vmap(op(lambda x: ft_mlp(params, x)))(X)

    def jet_per_direction(params, X):
        def one(x):
            zeros = [fnp.zeros_like(x)] * (order - 1)

            def along(v):
                _, terms = ft.jet(lambda y: ft_mlp(params, y), (x,), ([v, *zeros],))
                return fnp.stack([terms[k - 1] for k in range(1, order + 1)])
            per = ft.vmap(along)(dirs)                   # (R, K)
            return _weighted_terms({k: per[:, k - 1] for k in weights}, weights, fnp)
        return ft.vmap(one)(X)

    return {"collapsed-taylor": collapsed, "jet (per dir)": jet_per_direction}


def jax_taylor_routes(plan):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    mlp = functools.partial(common.tanh_mlp, jnp)
    dirs, order, weights, _ = plan
    dirs = jnp.asarray(dirs)

    def nested_jvp(params, X):
        def one(x):
            def along(v):
                g, out = (lambda y: mlp(params, y)), []
                for _ in range(order):
                    g = (lambda h: lambda y: jax.jvp(h, (y,), (v,))[1])(g)
                    out.append(g(x))
                return jnp.stack(out)
            per = jax.vmap(along)(dirs)
            return _weighted_terms({k: per[:, k - 1] for k in weights}, weights, jnp)
        return jax.vmap(one)(X)

    routes = {"nested-jvp": nested_jvp}
    try:
        from jax.experimental import jet

        def taylor_jet(params, X):
            def one(x):
                zeros = [jnp.zeros_like(x)] * (order - 1)

                def along(v):
                    _, terms = jet.jet(lambda y: mlp(params, y), (x,), ((v, *zeros),))
                    return jnp.stack(terms)
                per = jax.vmap(along)(dirs)
                return _weighted_terms({k: per[:, k - 1] for k in weights}, weights, jnp)
            return jax.vmap(one)(X)
        routes["taylor-jet"] = taylor_jet
    except ImportError:
        pass
    return routes, jax


def _ft_peak_bytes(fn):
    """Peak of numpy's allocations during one call (numpy reports them to tracemalloc)."""
    import tracemalloc
    fn()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _xla_temp_bytes(jitted, *args):
    try:
        stats = jitted.lower(*args).compile().memory_analysis()
        return stats.temp_size_in_bytes + stats.output_size_in_bytes
    except Exception:  # memory_analysis is not offered by every backend
        return None


def taylor_rows(name, op, plan, d, repeats, rng):
    params = init(rng, d)
    X = rng.uniform(-1, 1, (N_POINTS, d))
    src = np.sin(X).sum(1)
    rows, ref = [], None
    for route, fn in ft_taylor_routes(op, plan).items():
        f_op = ft.jit(fn)
        f_grad = ft.jit(ft.grad(ft_loss(fn)))
        val = np.asarray(f_op(params, X))
        ref = val if ref is None else ref
        assert np.allclose(val, ref, rtol=1e-9, atol=1e-9), route
        rows.append(("functrans", route, best_time(lambda: f_op(params, X), repeats),
                     best_time(lambda: f_grad(params, X, src), repeats),
                     _ft_peak_bytes(lambda: f_op(params, X)),
                     _ft_peak_bytes(lambda: f_grad(params, X, src))))
    got = jax_taylor_routes(plan)
    if got is not None:
        routes, jax = got
        import jax.numpy as jnp
        p = jax.tree_util.tree_map(jnp.asarray, params)

        def loss(fn):
            def f(params, X, src):
                r = fn(params, X) + src
                return jnp.mean(r * r)
            return f

        for route, fn in routes.items():
            f_op, f_grad = jax.jit(fn), jax.jit(jax.grad(loss(fn)))
            val = np.asarray(f_op(p, X))
            assert np.allclose(val, ref, rtol=1e-9, atol=1e-9), ("jax", route)
            rows.append(("jax", route,
                         best_time(lambda: jax.block_until_ready(f_op(p, X)), repeats),
                         best_time(lambda: jax.block_until_ready(f_grad(p, X, src)), repeats),
                         _xla_temp_bytes(f_op, p, X), _xla_temp_bytes(f_grad, p, X, src)))
    return rows


def _mib(b):
    return "-" if b is None else f"{b / 2 ** 20:.1f}"


def taylor_main(repeats):
    rng = np.random.default_rng(0)
    print(f"tanh MLP d-{WIDTH}-{WIDTH}-{WIDTH}-1, {N_POINTS} points, float64, min of "
          f"{repeats} runs (ms of {'wall' if common.clock is time.perf_counter else 'CPU'} "
          f"time); {common.PINNING}")
    for d in (2, 5):
        for name, (op, plan) in taylor_plans(d).items():
            rows = taylor_rows(name, op, plan, d, repeats, rng)
            print(f"\n{name}: {len(plan[0])} directions, order {plan[1]}")
            print(f"{'library':10s} {'route':17s} {'operator':>9s} {'ratio':>6s} "
                  f"{'grad loss':>10s} {'ratio':>6s} {'MiB op':>7s} {'MiB grad':>9s}")
            base_op, base_grad = rows[0][2], rows[0][3]
            for lib, route, t_op, t_grad, m_op, m_grad in rows:
                print(f"{lib:10s} {route:17s} {t_op:9.2f} {t_op / base_op:6.2f} "
                      f"{t_grad:10.2f} {t_grad / base_grad:6.2f} {_mib(m_op):>7s} "
                      f"{_mib(m_grad):>9s}")
            jax_rows = [r for r in rows if r[0] == "jax"]
            if jax_rows:
                best_op = min(r[2] for r in jax_rows)
                best_grad = min(r[3] for r in jax_rows)
                print(f"collapsed-taylor / JAX-jit best route: {base_op / best_op:.2f} "
                      f"(operator), {base_grad / best_grad:.2f} (grad of loss)  "
                      "[target <= 0.5]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", choices=["taylor", "laplacian", "accuracy", "all"],
                    default="taylor", help="accuracy: the examples' time to accuracy, minutes "
                    "(bench_pinn_training.py); not part of all")
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 8],
                    help="input dimensions of the Laplacian workloads")
    ap.add_argument("--repeats", type=int, default=None,
                    help="timed calls per route (default: 10; 3 for the Taylor workloads)")
    args = ap.parse_args()
    if args.workloads in ("taylor", "all"):
        taylor_main(args.repeats or 3)
    if args.workloads in ("laplacian", "all"):
        laplacian_main(args.dims, args.repeats or 10)
    if args.workloads == "accuracy":
        import bench_pinn_training
        bench_pinn_training.main()


def laplacian_main(dims, repeats):
    rng = np.random.default_rng(0)
    print(f"tanh MLP d-{WIDTH}-{WIDTH}-{WIDTH}-1, {N_POINTS} points, float64, min of "
          f"{repeats} runs (ms); {common.PINNING}")
    for d in dims:
        rows = run(d, repeats, rng)
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
