"""W4: nested grad, n = 1..8, of f(x) = sin(x) * exp(-x*x/2): equation counts.

For each n: JAX's make_jaxpr(grad^n(f)) count (the fixed reference figures, and a live count
when jax is installed), functrans' make_jaxpr count before the jit passes, and the count
after them (what jit runs). Target: after the passes, never more than JAX's at any n.
Also times jit(grad^n(f)) against JAX jit when installed (scalar input: pure overhead).

    python benchmarks/bench_jit_w4.py [--max-order 8] [--rounds 7]
"""

from __future__ import annotations

import argparse
import time

import bench_jit_common as common  # noqa: I001  (sets thread variables before numpy loads)

JAX_COUNTS = {1: 17, 2: 46, 3: 108, 4: 235, 5: 498, 6: 1053, 7: 2240, 8: 4795}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-order", type=int, default=8)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)

    import functrans as ft
    import functrans.numpy as fnp
    from functrans.transforms.jit import jit

    jax = common.optional_jax()

    def f(x):
        return fnp.sin(x) * fnp.exp(-x * x / 2)

    print("\nW4: equations of grad^n(sin(x) * exp(-x*x/2))")
    header = f"{'n':>3}{'JAX ref':>10}{'JAX live':>10}{'ours traced':>13}{'ours jit':>10}" \
             f"{'jit/JAX':>9}{'jit call':>12}{'JAX jit call':>14}{'1st call':>10}{'JAX 1st':>9}"
    print(f"(functrans jit backend: {common.jit_backend()}; 1st call = trace, passes, compile, "
          "run)")
    print(header)
    g = f
    jg_jax = None
    worst = 0.0
    for n in range(1, args.max_order + 1):
        g = ft.grad(g)
        jitted = jit(g)
        # first calls before any other trace of the same function: JAX keeps the program
        # make_jaxpr traces and its jit reuses it, which would leave only the compile to time
        start = time.perf_counter()
        jitted(0.5)
        first = f"{time.perf_counter() - start:.2f} s"
        traced = len(ft.make_jaxpr(g)(0.5).eqns)
        low = jitted.lower(0.5)
        live = "-"
        jax_time = jax_first = "-"
        if jax is not None:
            import jax.numpy as jnp
            jg_jax = (lambda x: jnp.sin(x) * jnp.exp(-x * x / 2)) if jg_jax is None else jg_jax
            jg_jax = jax.grad(jg_jax)
            jj = jax.jit(jg_jax)
            start = time.perf_counter()
            jax.block_until_ready(jj(0.5))
            jax_first = f"{time.perf_counter() - start:.2f} s"
            live = str(len(jax.make_jaxpr(jg_jax)(0.5).eqns))
            common.assert_close(f"order {n}", [jitted(0.5)], [float(jj(0.5))], rtol=1e-10)
        medians = common.time_interleaved(
            {"ours": lambda: jitted(0.5),
             **({"jax": lambda: jax.block_until_ready(jj(0.5))} if jax is not None else {})},
            rounds=args.rounds, target_seconds=0.005)
        if jax is not None:
            jax_time = f"{medians['jax'] * 1e6:.1f} us"
        ratio = low.eqns_after / JAX_COUNTS[n]
        worst = max(worst, ratio)
        print(f"{n:>3}{JAX_COUNTS[n]:>10}{live:>10}{traced:>13}{low.eqns_after:>10}"
              f"{ratio:>9.2f}{medians['ours'] * 1e6:>9.1f} us{jax_time:>14}{first:>10}"
              f"{jax_first:>9}")
    print(f"\nlargest (ours after passes) / JAX ratio: {worst:.2f}  (target <= 1.00)")


if __name__ == "__main__":
    main()
