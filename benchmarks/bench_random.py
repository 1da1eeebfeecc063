"""functrans.random against jax.random (float64 enabled, CPU): the time of one draw of
`normal(key, (n,))` and `uniform(key, (n,))`, eager and jitted, best of repeats. JAX's times
wait for the result (block_until_ready); without JAX installed only functrans' are printed.

    python benchmarks/bench_random.py [--size 1000000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import functrans as ft


def best_ms(fn, repeat: int) -> float:
    fn()  # warm up (and compile, for jit)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    n, r = args.size, args.repeat
    rows = []
    key = ft.random.PRNGKey(0)
    for name in ("normal", "uniform"):
        sample = getattr(ft.random, name)
        jitted = ft.jit(lambda k, sample=sample: sample(k, (n,)))
        rows.append((f"functrans {name} eager", best_ms(lambda: sample(key, (n,)), r)))
        rows.append((f"functrans {name} jit", best_ms(lambda: jitted(key), r)))
    try:
        import jax
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        jkey = jax.random.PRNGKey(0)
        for name in ("normal", "uniform"):
            sample = getattr(jax.random, name)
            jitted = jax.jit(lambda k, sample=sample: sample(k, (n,)))
            rows.append((f"jax {name} eager",
                         best_ms(lambda: sample(jkey, (n,)).block_until_ready(), r)))
            rows.append((f"jax {name} jit", best_ms(lambda: jitted(jkey).block_until_ready(), r)))
    for label, ms in rows:
        print(f"{label:28s} {ms:8.1f} ms   (n={n}, float64)")
    np.testing.assert_array_equal(np.asarray(ft.random.uniform(key, (5,))),
                                  np.asarray(ft.jit(lambda k: ft.random.uniform(k, (5,)))(key)))


if __name__ == "__main__":
    main()
