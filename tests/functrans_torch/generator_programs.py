"""Sampling programs run under both PyTorch and functrans.torch, for the generator parity tests.

Each case is `fn(torch, n)`, one call of a random function with size n; `run_case` seeds the
default generator, calls the case for every size in SIZES in turn (so the stream, the float64
normal cache and the generator state carry from call to call, as they do in a program) and
returns every result and the generator state at the end. The recorded fixtures hold a digest
of each (case, seed) run, written by running this file under torch==2.13.0 (CPU build):
`python tests/functrans_torch/generator_programs.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator_fixtures.json")

# 45 small seeds and 5 that exercise the 32-bit truncation and PyTorch's reading of big and
# negative seeds
SEEDS = list(range(45)) + [2**32 + 7, 2**40 + 3, 67280421310721, 2**64 - 1, -5]
SIZES = list(range(1, 41))              # across the 16-element blocks of normal_
LARGE = 10**5
LARGE_SEEDS = [0, 1, 2**32 + 7]

CASES = {}
# cases whose PyTorch kernel depends on the machine (see functrans.torch._random): float32
# normal_ of 16+ contiguous elements uses PyTorch's AVX2 kernel; bernoulli_(float p) uses MKL's
# stream on Intel CPUs
AVX2_CASES = set()
PORTABLE_BERNOULLI_CASES = set()


def case(name, *, avx2=False, bernoulli=False):
    def register(fn):
        CASES[name] = fn
        if avx2:
            AVX2_CASES.add(name)
        if bernoulli:
            PORTABLE_BERNOULLI_CASES.add(name)
        return fn
    return register


for _dt in ("float32", "float64"):
    _f32 = _dt == "float32"

    case(f"rand_{_dt}")(lambda T, n, dt=_dt: T.rand(n, dtype=getattr(T, dt)))
    case(f"randn_{_dt}", avx2=_f32)(lambda T, n, dt=_dt: T.randn(n, dtype=getattr(T, dt)))
    case(f"randn_2d_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.randn(n, 3, dtype=getattr(T, dt)))
    case(f"uniform_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).uniform_(-1.3, 2.7))
    case(f"uniform_narrow_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).uniform_(0.1, 0.3))
    case(f"normal_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).normal_(0.3, 2.5))
    case(f"normal_strided_{_dt}")(
        lambda T, n, dt=_dt: _strided(T, n, getattr(T, dt)))
    case(f"normal_tensors_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.normal(T.arange(n, dtype=getattr(T, dt)) / 7,
                                      T.full((n,), 1.5, dtype=getattr(T, dt))))
    case(f"normal_mean_tensor_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.normal(T.arange(n, dtype=getattr(T, dt)), 2.0))
    case(f"normal_std_tensor_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.normal(0.5, T.full((n,), 3.0, dtype=getattr(T, dt))))
    case(f"rand_like_{_dt}")(lambda T, n, dt=_dt: T.rand_like(T.zeros(n, dtype=getattr(T, dt))))
    case(f"randn_like_{_dt}", avx2=_f32)(
        lambda T, n, dt=_dt: T.randn_like(T.zeros(2, n, dtype=getattr(T, dt))))
    case(f"random_{_dt}")(lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).random_())
    case(f"bernoulli_p_tensor_{_dt}")(
        lambda T, n, dt=_dt: T.bernoulli(T.linspace(0, 1, n, dtype=getattr(T, dt))))
    case(f"bernoulli_inplace_tensor_{_dt}")(
        lambda T, n, dt=_dt: T.zeros(n, dtype=getattr(T, dt)).bernoulli_(
            T.linspace(0, 1, n, dtype=getattr(T, dt))))
    case(f"bernoulli_p_float_{_dt}", bernoulli=True)(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).bernoulli_(0.3))
    case(f"exponential_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).exponential_(1.7))
    case(f"geometric_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).geometric_(0.3))
    case(f"log_normal_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).log_normal_(0.5, 0.7))
    case(f"cauchy_{_dt}")(
        lambda T, n, dt=_dt: T.empty(n, dtype=getattr(T, dt)).cauchy_(0.5, 2.0))


def _quietly(fn):
    """fn() without its warnings (PyTorch warns of bounds a float cannot hold exactly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _strided(T, n, dtype):
    """normal_ and uniform_ on a transposed view: PyTorch's scalar kernel, in memory order."""
    x = T.zeros(3, n, dtype=dtype)
    x.t().normal_(0.25, 1.5)
    x[:, ::2].t().uniform_(-1.0, 1.0) if n > 1 else None
    return x


case("normal_floats", avx2=True)(lambda T, n: T.normal(0.5, 2.0, size=(n,)))
case("randint")(lambda T, n: T.randint(-7, 30, (n,)))
case("randint_high_only")(lambda T, n: T.randint(10, (n, 2)))
case("randint_wide")(lambda T, n: T.randint(-5, 2**40, (n,)))
case("randint_float64")(lambda T, n: T.randint(3, 1000, (n,), dtype=T.float64))
case("randint_float32_beyond_2_24")(lambda T, n: _quietly(
    lambda: T.randint(-2**30 - 5, 2**29, (n,), dtype=T.float32)))
case("randint_like")(lambda T, n: T.randint_like(T.zeros(n, dtype=T.int32), 3, 9))
case("randperm")(lambda T, n: T.randperm(n))
case("random_int64")(lambda T, n: T.empty(n, dtype=T.int64).random_())
case("random_int32")(lambda T, n: T.empty(n, dtype=T.int32).random_())
case("random_bool")(lambda T, n: T.empty(n, dtype=T.bool).random_())
case("random_to")(lambda T, n: T.empty(n, dtype=T.int64).random_(17))
case("random_from_to")(lambda T, n: T.empty(n).random_(-4, 40))
case("bernoulli_p_float_fn", bernoulli=True)(lambda T, n: T.bernoulli(T.zeros(n), 0.6))
case("out_argument", avx2=True)(
    lambda T, n: T.cat([T.randn(n, out=T.empty(n, dtype=T.float64)).float(),
                        T.rand(n, out=T.empty(n, dtype=T.float64)).float(),
                        T.randn(n, out=T.empty(n)),
                        T.randint(0, 5, (n,), out=T.empty(n, dtype=T.int32)).float(),
                        T.randperm(n, out=T.empty(n, dtype=T.int64)).float()]))
case("generator_argument", avx2=True)(
    lambda T, n: T.randn(n, generator=T.Generator().manual_seed(n)) +
    T.rand(n, generator=T.Generator().manual_seed(7 * n)))


def run_case(T, name: str, seed: int, sizes=SIZES) -> list[np.ndarray]:
    """Seed, call case `name` for each size, and return the results and the final state."""
    T.manual_seed(seed)
    outs = [np.array(CASES[name](T, n).numpy()) for n in sizes]
    return outs + [np.array(T.get_rng_state().numpy())]


def digest(arrays) -> str:
    """A short digest of arrays' dtypes, shapes and bytes."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:20]


def record(T) -> dict:
    """Every digest, and the large runs'."""
    runs = {name: {str(s): digest(run_case(T, name, s)) for s in SEEDS} for name in CASES}
    large = {name: {str(s): digest(run_case(T, name, s, [LARGE])) for s in LARGE_SEEDS}
             for name in LARGE_CASES}
    return {"torch_version": T.__version__, "runs": runs, "large": large}


LARGE_CASES = ["rand_float32", "rand_float64", "randn_float32", "randn_float64",
               "uniform_float32", "normal_float64", "randint_wide", "randperm",
               "bernoulli_p_tensor_float32"]


if __name__ == "__main__":
    import torch

    with open(FIXTURES, "w") as f:
        json.dump(record(torch), f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {FIXTURES}")
