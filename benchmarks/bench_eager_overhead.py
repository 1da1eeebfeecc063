"""Eager overhead: a functrans.numpy call on concrete arrays against the bare numpy call.

Each case times both calls on the same 1000-element float64 arrays (best-of-repeats of many
calls, interleaved so machine noise hits both alike) and reports their ratio; the summary line
is the median ratio over the cases (target: at most 1.5x).

    python benchmarks/bench_eager_overhead.py [--size 1000] [--number 2000] [--repeat 7]
                                              [--inputs numpy|functrans]

With `--inputs functrans` the functrans calls get the same data as functrans's own arrays
(`fnp.asarray`, what functrans.numpy returns when it makes the arrays), numpy its plain arrays:
the cost of computing on functrans's `Array` (docs/arrays.md).
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np

import functrans.numpy as fnp


def cases(n: int, inputs: str = "numpy"):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    c = x > 0
    fx, fy, fc = (x, y, c) if inputs == "numpy" else map(fnp.asarray, (x, y, c))
    return [
        ("sin(x)", lambda: np.sin(x), lambda: fnp.sin(fx)),
        ("exp(x)", lambda: np.exp(x), lambda: fnp.exp(fx)),
        ("tanh(x)", lambda: np.tanh(x), lambda: fnp.tanh(fx)),
        ("add(x, y)", lambda: np.add(x, y), lambda: fnp.add(fx, fy)),
        ("multiply(x, y)", lambda: np.multiply(x, y), lambda: fnp.multiply(fx, fy)),
        ("x * 2.0", lambda: np.multiply(x, 2.0), lambda: fnp.multiply(fx, 2.0)),
        ("divide(x, y)", lambda: np.divide(x, y), lambda: fnp.divide(fx, fy)),
        ("sum(x)", lambda: np.sum(x), lambda: fnp.sum(fx)),
        ("mean(x)", lambda: np.mean(x), lambda: fnp.mean(fx)),
        ("where(c, x, y)", lambda: np.where(c, x, y), lambda: fnp.where(fc, fx, fy)),
        ("less(x, y)", lambda: np.less(x, y), lambda: fnp.less(fx, fy)),
    ]


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main(argv=None) -> list[tuple[str, float, float]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--inputs", choices=("numpy", "functrans"), default="numpy")
    args = p.parse_args(argv)
    rows = []
    for name, ref, ours in cases(args.size, args.inputs):
        np.testing.assert_allclose(np.asarray(ours()), ref())
        t_np, t_ft = [], []
        for _ in range(args.repeat):  # interleave so drifts in machine load hit both
            t_np.append(best(ref, args.number, 1))
            t_ft.append(best(ours, args.number, 1))
        rows.append((name, min(t_np), min(t_ft)))
    print(f"eager overhead, {args.size}-element float64 arrays (best of {args.repeat} x "
          f"{args.number} calls; functrans given {args.inputs} arrays)")
    print(f"{'call':<16}{'numpy us':>10}{'functrans us':>14}{'ratio':>8}")
    for name, a, b in rows:
        print(f"{name:<16}{a * 1e6:>10.2f}{b * 1e6:>14.2f}{b / a:>8.2f}")
    med = statistics.median(b / a for _, a, b in rows)
    print(f"median ratio: {med:.2f}x (target <= 1.5x)")
    return rows


if __name__ == "__main__":
    main()
