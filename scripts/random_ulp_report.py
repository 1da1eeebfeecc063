"""How far functrans.random's draws are from JAX's: the largest distance in ulps (units in the
last place, counted across zero) per sampler, in float32 and float64, over many random keys;
for integer, boolean and index samplers the count of entries that differ. Needs jax.

    python scripts/random_ulp_report.py [--keys 200] [SAMPLER ...]

JAX's samplers run as called (vmapped over the keys, parameters as arguments); functrans' under
jit(vmap). The bounds the tests hold are in tests/functrans_random/jax_programs.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # this checkout's functrans

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
LOGITS = np.log(np.array([[0.1, 0.2, 0.7, 0.1], [0.5, 0.25, 0.25, 0.1]]))
P10 = np.linspace(0.1, 1.0, 10)
S = (16,)
SAMPLERS = {
    "uniform": lambda r, k, d: r.uniform(k, S, d, -2.0, 3.0),
    "normal": lambda r, k, d: r.normal(k, S, d),
    "truncated_normal": lambda r, k, d: r.truncated_normal(k, -2.0, 1.5, S, d),
    "exponential": lambda r, k, d: r.exponential(k, S, d),
    "laplace": lambda r, k, d: r.laplace(k, S, d),
    "logistic": lambda r, k, d: r.logistic(k, S, d),
    "gumbel": lambda r, k, d: r.gumbel(k, S, d),
    "gamma": lambda r, k, d: r.gamma(k, np.array([0.3, 1.0, 2.5, 10.0]), (4, 4), d),
    "loggamma": lambda r, k, d: r.loggamma(k, np.array([0.01, 0.5, 3.0, 10.0]), (4, 4), d),
    "beta": lambda r, k, d: r.beta(k, 2.0, 0.5, S, d),
    "dirichlet": lambda r, k, d: r.dirichlet(k, np.array([0.5, 1.0, 3.0]), (5,), d),
    "multivariate_normal": lambda r, k, d: r.multivariate_normal(
        k, np.zeros(3, d), COV.astype(d), (5,), d),
    "orthogonal": lambda r, k, d: r.orthogonal(k, 4, dtype=d),
    "bernoulli": lambda r, k, d: r.bernoulli(k, np.asarray(0.3, d), S),
    "categorical": lambda r, k, d: r.categorical(k, LOGITS.astype(d), shape=(3, 2)),
    "choice_p": lambda r, k, d: r.choice(k, 10, (7,), p=(P10 / P10.sum()).astype(d)),
    "randint": lambda r, k, d: r.randint(k, S, -5, 17),
    "permutation": lambda r, k, d: r.permutation(k, 20),
}


def distance(got, want) -> int:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if got.dtype.kind != "f":
        return int((got != want).sum())
    ints = np.dtype(f"int{got.dtype.itemsize * 8}")

    def ordinal(x):
        i = x.view(ints).astype(np.int64)
        return np.where(i < 0, -(i & np.int64(np.iinfo(ints).max)), i)
    return int(np.abs(ordinal(got) - ordinal(want)).max()) if got.size else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("samplers", nargs="*", default=list(SAMPLERS))
    args = parser.parse_args(argv)
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr

    import functrans as ft
    import functrans.random as fr
    keys = np.random.default_rng(5).integers(0, 2**32, (args.keys, 2),
                                             dtype=np.uint64).astype(np.uint32)
    print(f"{'sampler':22s} float32 float64   (JAX {jax.__version__}, {args.keys} keys)")
    for name in args.samplers:
        fn = SAMPLERS[name]
        row = []
        for dtype in (np.float32, np.float64):
            want = jax.vmap(lambda k: fn(jr, k, dtype))(keys)
            got = ft.jit(ft.vmap(lambda k: fn(fr, k, dtype)))(keys)
            row.append(distance(got, want))
        print(f"{name:22s} {row[0]:7d} {row[1]:7d}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
