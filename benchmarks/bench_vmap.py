"""vmap workloads on the W1 network (MLP 2-64-64-64-1, tanh, float64, 1,024 points, 1 thread).

  V1  per-example gradients: d/dparams (u(x_i) - y_i)^2 for every point i, all parameters
      functrans jit(vmap(grad(loss), in_axes=(None, 0, 0))) and eager vmap(grad), beside a
      hand-vectorised numpy per-example gradient (forward for the whole batch, backward with
      outer products per example) and JAX jit(vmap(grad)).   Target: jit <= 2x numpy.
  V2  Laplacian of u at every point: functrans jit(vmap(trace(hessian(u)))) and eager, beside
      a hand-written numpy forward Laplacian (value, gradient and Laplacian through the
      layers), ft.laplacian under jit(vmap), and JAX jit(vmap(trace(hessian))).

Every contender is checked against the numpy reference before timing. Times are medians over
interleaved rounds of per-call process CPU time (FUNCTRANS_BENCH_CLOCK=wall for wall clock);
see bench_jit_common.py. Equation counts of make_jaxpr at batch 10 and 1,024 are printed too.

    python benchmarks/bench_vmap.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import itertools

import bench_jit_common as common  # first: sets the thread variables before numpy loads
import numpy as np

SIZES = (2, 64, 64, 64, 1)
N_POINTS = 1024


def make_problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n))
              for m, n in itertools.pairwise(SIZES)]
    x = rng.uniform(-1.0, 1.0, (N_POINTS, SIZES[0]))
    y = np.sin(3.0 * x[:, 0]) * np.cos(2.0 * x[:, 1])
    return params, x, y


# --- hand-written numpy -----------------------------------------------------------------------

def numpy_per_example_grad(params, x, y):
    """Forward for the whole batch keeping activations; backward per example, vectorised:
    the weight gradient of example i is the outer product h_i g_i^T."""
    hs = [x]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w + b))
    w, b = params[-1]
    g = 2.0 * (hs[-1] @ w + b - y[:, None])          # (B, 1): d loss_i / d u_i
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        h = hs[i]
        grads.append((h[:, :, None] * g[:, None, :], g))
        if i:
            g = (g @ w.T) * (1.0 - h * h)             # through tanh: 1 - tanh^2
    return grads[::-1]


def numpy_forward_laplacian(params, x):
    """Value t (B, n), gradient G (d, B, n) = dt/dx and Laplacian L (B, n) through each layer:
    z = t W + b gives G_z = G W, L_z = L W; t = tanh(z) gives G_t = t' G_z and
    L_t = t' L_z + t'' sum_k G_z[k]^2, with t' = 1 - t^2 and t'' = -2 t t'. In-place where a
    temporary dies, as one would write it by hand."""
    d, n_pts = x.shape[1], x.shape[0]
    w, b = params[0]
    t = np.tanh(x @ w + b)
    t1 = 1.0 - t * t
    G = w[:, None, :] * t1                            # d z / d x_k = W[k] at every point
    L = t * t1
    L *= -2.0 * np.sum(w * w, axis=0)
    for w, b in params[1:-1]:
        m, n = w.shape
        z = t @ w
        z += b
        t = np.tanh(z, out=z)
        gz = (G.reshape(d * n_pts, m) @ w).reshape(d, n_pts, n)
        t1 = t * t
        np.subtract(1.0, t1, out=t1)
        s = gz[0] * gz[0]
        for k in range(1, d):
            s += gz[k] * gz[k]
        L = L @ w
        L *= t1
        c = t * t1
        c *= -2.0
        c *= s
        L += c
        gz *= t1
        G = gz
    w, _ = params[-1]
    return (L @ w)[:, 0]


# --- functrans --------------------------------------------------------------------------------

def functrans_programs():
    import functrans as ft
    import functrans.numpy as fnp

    def u(params, x):
        return common.tanh_mlp(fnp, params, x)

    def loss(params, x, y):
        r = u(params, x) - y
        return r * r

    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))

    def hessian_trace(params, x):
        return fnp.trace(ft.hessian(lambda z: u(params, z))(x))

    lap_hessian = ft.vmap(hessian_trace, in_axes=(None, 0))
    lap_forward = ft.vmap(lambda params, x: ft.laplacian(lambda z: u(params, z))(x),
                          in_axes=(None, 0)) if hasattr(ft, "laplacian") else None
    return ft, per_example, lap_hessian, lap_forward


def equation_counts(ft, f, args_of_batch):
    """(traced equations at batch 10, at batch N_POINTS, after the jit passes at N_POINTS)."""
    small = len(ft.make_jaxpr(f)(*args_of_batch(10)).jaxpr.eqns)
    big = len(ft.make_jaxpr(f)(*args_of_batch(N_POINTS)).jaxpr.eqns)
    low = ft.jit(f).lower(*args_of_batch(N_POINTS))
    return small, big, low.eqns_after


# --- JAX --------------------------------------------------------------------------------------

def jax_programs(jax):
    import jax.numpy as jnp

    def u(params, x):
        return common.tanh_mlp(jnp, params, x)

    def loss(params, x, y):
        r = u(params, x) - y
        return r * r

    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    lap = jax.jit(jax.vmap(lambda p, x: jnp.trace(jax.hessian(lambda z: u(p, z))(x)),
                           in_axes=(None, 0)))
    return per_example, lap


def flat_grads(grads):
    return [np.asarray(a) for pair in grads for a in pair]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)

    params, x, y = make_problem()
    ft, per_example, lap_hessian, lap_forward = functrans_programs()

    # --- V1: per-example gradients ------------------------------------------------------------
    ref = flat_grads(numpy_per_example_grad(params, x, y))
    jit_pe = ft.jit(per_example)
    common.assert_close("functrans jit(vmap(grad))", flat_grads(jit_pe(params, x, y)), ref)
    common.assert_close("functrans vmap(grad)", flat_grads(per_example(params, x, y)), ref)
    v1 = {
        "numpy hand-vectorised per-example grad": lambda: numpy_per_example_grad(params, x, y),
        "functrans jit(vmap(grad))": lambda: jit_pe(params, x, y),
        "functrans vmap(grad) (eager)": lambda: per_example(params, x, y),
    }

    # --- V2: Laplacian ------------------------------------------------------------------------
    lap_ref = numpy_forward_laplacian(params, x)
    jit_lh = ft.jit(lap_hessian)
    common.assert_close("functrans jit(vmap(trace(hessian)))", [jit_lh(params, x)], [lap_ref])
    common.assert_close("functrans vmap(trace(hessian))", [lap_hessian(params, x)], [lap_ref])
    v2 = {
        "numpy hand-written forward Laplacian": lambda: numpy_forward_laplacian(params, x),
        "functrans jit(vmap(trace(hessian)))": lambda: jit_lh(params, x),
        "functrans vmap(trace(hessian)) (eager)": lambda: lap_hessian(params, x),
    }
    if lap_forward is not None:
        jit_lf = ft.jit(lap_forward)
        common.assert_close("functrans jit(vmap(laplacian))", [jit_lf(params, x)], [lap_ref])
        v2["functrans jit(vmap(ft.laplacian))"] = lambda: jit_lf(params, x)

    jax = common.optional_jax()
    if jax is not None:
        jax_pe, jax_lap = jax_programs(jax)
        jparams = jax.tree_util.tree_map(jax.numpy.asarray, params)
        jx, jy = jax.numpy.asarray(x), jax.numpy.asarray(y)
        common.assert_close("JAX jit(vmap(grad))", flat_grads(jax_pe(jparams, jx, jy)), ref)
        common.assert_close("JAX jit(vmap(trace(hessian)))",
                            [np.asarray(jax_lap(jparams, jx))], [lap_ref])
        v1["JAX jit(vmap(grad)) (XLA)"] = \
            lambda: jax.block_until_ready(jax_pe(jparams, jx, jy))
        v2["JAX jit(vmap(trace(hessian))) (XLA)"] = \
            lambda: jax.block_until_ready(jax_lap(jparams, jx))

    net = "-".join(map(str, SIZES))
    m1 = common.time_interleaved(v1, rounds=args.rounds)
    common.print_table(f"V1: per-example gradients of (u(x_i) - y_i)^2, MLP {net} (tanh), "
                       f"{N_POINTS} points, float64, 1 thread", m1,
                       "numpy hand-vectorised per-example grad")
    m2 = common.time_interleaved(v2, rounds=args.rounds)
    common.print_table(f"V2: Laplacian of u at {N_POINTS} points in 2-d", m2,
                       "numpy hand-written forward Laplacian")

    r1 = m1["functrans jit(vmap(grad))"] / m1["numpy hand-vectorised per-example grad"]
    r2 = m2["functrans jit(vmap(trace(hessian)))"] / m2["numpy hand-written forward Laplacian"]
    print(f"\njit(vmap(grad)) / numpy per-example grad           = {r1:.2f}  (target <= 2.00)")
    print(f"jit(vmap(trace(hessian))) / numpy forward Laplacian = {r2:.2f}")

    c1 = equation_counts(ft, per_example, lambda b: (params, x[:b], y[:b]))
    c2 = equation_counts(ft, lap_hessian, lambda b: (params, x[:b]))
    print("\nequations     traced (batch 10)  traced (batch 1024)  after jit passes")
    for name, (small, big, after) in (("vmap(grad)", c1), ("vmap(hessian)", c2)):
        print(f"{name:<14}{small:>17}{big:>21}{after:>18}")
    return m1, m2


if __name__ == "__main__":
    main()
