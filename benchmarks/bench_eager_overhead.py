"""Eager overhead: a functrans.numpy call on concrete arrays against the bare numpy call.

Each case times both calls on the same 1000-element float64 arrays (best-of-repeats of many
calls, interleaved so machine noise hits both alike) and reports their ratio; the summary line
is the median ratio over the cases (target: at most 1.5x).

    python benchmarks/bench_eager_overhead.py [--size 1000] [--number 2000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np

import functrans.numpy as fnp


def cases(n: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    c = x > 0
    return [
        ("sin(x)", lambda: np.sin(x), lambda: fnp.sin(x)),
        ("exp(x)", lambda: np.exp(x), lambda: fnp.exp(x)),
        ("tanh(x)", lambda: np.tanh(x), lambda: fnp.tanh(x)),
        ("add(x, y)", lambda: np.add(x, y), lambda: fnp.add(x, y)),
        ("multiply(x, y)", lambda: np.multiply(x, y), lambda: fnp.multiply(x, y)),
        ("x * 2.0", lambda: np.multiply(x, 2.0), lambda: fnp.multiply(x, 2.0)),
        ("divide(x, y)", lambda: np.divide(x, y), lambda: fnp.divide(x, y)),
        ("sum(x)", lambda: np.sum(x), lambda: fnp.sum(x)),
        ("mean(x)", lambda: np.mean(x), lambda: fnp.mean(x)),
        ("where(c, x, y)", lambda: np.where(c, x, y), lambda: fnp.where(c, x, y)),
        ("less(x, y)", lambda: np.less(x, y), lambda: fnp.less(x, y)),
    ]


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main(argv=None) -> list[tuple[str, float, float]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args(argv)
    rows = []
    for name, ref, ours in cases(args.size):
        np.testing.assert_allclose(np.asarray(ours()), ref())
        t_np, t_ft = [], []
        for _ in range(args.repeat):  # interleave so drifts in machine load hit both
            t_np.append(best(ref, args.number, 1))
            t_ft.append(best(ours, args.number, 1))
        rows.append((name, min(t_np), min(t_ft)))
    print(f"eager overhead, {args.size}-element float64 arrays (best of {args.repeat} x "
          f"{args.number} calls)")
    print(f"{'call':<16}{'numpy us':>10}{'functrans us':>14}{'ratio':>8}")
    for name, a, b in rows:
        print(f"{name:<16}{a * 1e6:>10.2f}{b * 1e6:>14.2f}{b / a:>8.2f}")
    med = statistics.median(b / a for _, a, b in rows)
    print(f"median ratio: {med:.2f}x (target <= 1.5x)")
    return rows


if __name__ == "__main__":
    main()
