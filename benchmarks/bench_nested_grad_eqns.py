"""Size of nested derivative programs: equations in make_jaxpr of the n-th nested grad of
f(x) = sin(x) * exp(-x*x/2), for n = 1..8, beside JAX's count when JAX is installed.

    python benchmarks/bench_nested_grad_eqns.py [--max-order 8]

Target: never more equations than JAX. Both are counted without dead-code elimination.
"""

from __future__ import annotations

import argparse
import time

import functrans as ft
import functrans.numpy as fnp


def functrans_counts(max_order: int) -> list[tuple[int, float]]:
    g = lambda x: fnp.sin(x) * fnp.exp(-x * x / 2)
    rows = []
    for _ in range(max_order):
        g = ft.grad(g)
        start = time.perf_counter()
        n = len(ft.make_jaxpr(g)(1.0).eqns)
        rows.append((n, time.perf_counter() - start))
    return rows


def jax_counts(max_order: int) -> list[tuple[int, float]] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    g = lambda x: jnp.sin(x) * jnp.exp(-x * x / 2)
    rows = []
    for _ in range(max_order):
        g = jax.grad(g)
        start = time.perf_counter()
        n = len(jax.make_jaxpr(g)(1.0).eqns)
        rows.append((n, time.perf_counter() - start))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-order", type=int, default=8)
    args = p.parse_args(argv)
    ours = functrans_counts(args.max_order)
    theirs = jax_counts(args.max_order)
    print("equations in make_jaxpr(grad^n(f)), f(x) = sin(x) * exp(-x*x/2)")
    header = f"{'n':>2} {'functrans':>10} {'trace s':>8}"
    if theirs is not None:
        import jax
        header += f" {'jax ' + jax.__version__:>12} {'trace s':>8} {'ratio':>6}"
    print(header)
    worst = 0.0
    for n, (ne, t) in enumerate(ours, 1):
        line = f"{n:>2} {ne:>10} {t:>8.3f}"
        if theirs is not None:
            je, jt = theirs[n - 1]
            worst = max(worst, ne / je)
            line += f" {je:>12} {jt:>8.3f} {ne / je:>6.2f}"
        print(line)
    if theirs is None:
        print("(jax is not installed: install it to print its counts beside ours)")
    else:
        print(f"largest ratio functrans/jax: {worst:.2f} (target <= 1.00)")
    return ours, theirs


if __name__ == "__main__":
    main()
