"""Programs drawn from both jax.random (float64 enabled) and functrans.random, and the records
of JAX's results in jax_fixtures.json, which the tests compare functrans against (live JAX too,
when installed). Re-record with JAX installed: `python tests/functrans_random/jax_programs.py`.

Bits, integers, booleans and permutations must be equal. Floats are compared in ulps (units in
the last place, counted across zero), against the bound each sampler lists. The samplers compute
with XLA's own algorithms where JAX's numbers depend on them (functrans/primitives/xla_math.py:
log1p, log, exp and pow as XLA's CPU backend compiles them, float32 erf, erf_inv's polynomials,
fused multiply-adds, products with a constant's reciprocal; single-precision QR and Cholesky
through scipy's LAPACK, which JAX calls), so every float sampler here is within 2 ulp of JAX's
(JAX's values as its own samplers compute them when called, eagerly or with the parameters as
arguments: a jitted program whose gamma parameter is a compile-time constant folds
c = 1/(3 sqrt(d)) in another order, and its draws move by up to 46 ulp), bit for bit on the
machine that recorded them, except:
- float32 gamma: XLA's float32 1/sqrt is the CPU's reciprocal-square-root estimate refined by
  Newton steps (one on AMD, two on Intel), so JAX's c moves by an ulp with the CPU, and v = (1 +
  x c)^3 amplifies that where 1 + x c is small; the bound is about twice the worst seen over
  300 random keys (25 ulp).
- without scipy, float32 orthogonal uses numpy's LAPACK, whose float32 QR rounds differently (an
  absolute bound then).
The ulp bounds hold on other machines too where their C library's log and pow round as glibc's
(float64 log, pow) and numpy's float32 LAPACK is scipy's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_fixtures.json")

N_KEYS = 1000  # raw-bits cases: random keys, shapes and widths
SHAPES = [(), (1,), (2,), (3,), (5,), (2, 3), (4, 1), (3, 1, 2), (7,)]
WIDTHS = [32, 64, 8, 16]
COV = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
P10 = list(np.linspace(0.1, 1.0, 10) / np.linspace(0.1, 1.0, 10).sum())
LOGITS = [[0.1, 0.2, 0.7, 0.1], [0.5, 0.25, 0.25, 0.1]]
HAS_SCIPY = importlib.util.find_spec("scipy") is not None

# name -> (program(random module, key), bound for floats: int ulps, or float absolute)
PROGRAMS = {
    "uniform": (lambda r, k: r.uniform(k, (6,)), 0),
    "uniform_f32_range": (lambda r, k: r.uniform(k, (6,), "float32", -2.0, 3.0), 0),
    "uniform_f64_range": (lambda r, k: r.uniform(k, (6,), "float64", -2.0, 3.0), 2),
    "uniform_f16": (lambda r, k: r.uniform(k, (6,), "float16"), 0),
    "normal": (lambda r, k: r.normal(k, (3, 2)), 2),
    "normal_f32": (lambda r, k: r.normal(k, (6,), "float32"), 2),
    "truncated_normal": (lambda r, k: r.truncated_normal(k, -2.0, 1.5, (6,)), 2),
    "truncated_normal_f32": (lambda r, k: r.truncated_normal(k, -0.5, 2.0, (6,), "float32"),
                             2),
    "randint": (lambda r, k: r.randint(k, (6,), -5, 17), 0),
    "randint_int32": (lambda r, k: r.randint(k, (6,), 0, 1000, "int32"), 0),
    "randint_uint8_256": (lambda r, k: r.randint(k, (6,), 0, 256, "uint8"), 0),
    "bernoulli": (lambda r, k: r.bernoulli(k, 0.3, (8,)), 0),
    "choice": (lambda r, k: r.choice(k, 10, (5,)), 0),
    "choice_no_replace": (lambda r, k: r.choice(k, 10, (5,), replace=False), 0),
    "choice_p": (lambda r, k: r.choice(k, np.arange(10.0) * 2, (7,), p=np.array(P10)), 0),
    "choice_p_no_replace": (lambda r, k: r.choice(k, 10, (4,), replace=False,
                                                  p=np.array(P10)), 0),
    "permutation": (lambda r, k: r.permutation(k, 20), 0),
    "permutation_axis1": (lambda r, k: r.permutation(k, np.arange(12.0).reshape(4, 3), axis=1),
                          0),
    "permutation_independent": (lambda r, k: r.permutation(
        k, np.arange(12.0).reshape(3, 4), axis=1, independent=True), 0),
    "categorical": (lambda r, k: r.categorical(k, np.log(np.array(LOGITS)), shape=(3, 2)), 0),
    "categorical_no_replace": (lambda r, k: r.categorical(
        k, np.log(np.array(LOGITS)), shape=(3, 2), replace=False), 0),
    "gumbel": (lambda r, k: r.gumbel(k, (6,)), 2),
    "gumbel_f32": (lambda r, k: r.gumbel(k, (6,), "float32"), 2),
    "exponential": (lambda r, k: r.exponential(k, (6,)), 2),
    "exponential_f32": (lambda r, k: r.exponential(k, (6,), "float32"), 2),
    "laplace": (lambda r, k: r.laplace(k, (6,)), 2),
    "laplace_f32": (lambda r, k: r.laplace(k, (6,), "float32"), 2),
    "logistic": (lambda r, k: r.logistic(k, (6,)), 2),
    "logistic_f32": (lambda r, k: r.logistic(k, (6,), "float32"), 2),
    "gamma": (lambda r, k: r.gamma(k, np.array([0.3, 1.0, 2.5, 10.0]), (2, 4)), 2),
    "gamma_f32": (lambda r, k: r.gamma(k, 0.7, (4,), "float32"), 50),
    "loggamma": (lambda r, k: r.loggamma(k, 0.01, (4,)), 2),
    "beta": (lambda r, k: r.beta(k, 2.0, 0.5, (4,)), 2),
    "dirichlet": (lambda r, k: r.dirichlet(k, np.array([0.5, 1.0, 3.0]), (2,)), 2),
    "multivariate_normal": (lambda r, k: r.multivariate_normal(
        k, np.array([1.0, -1.0, 0.0]), np.array(COV), (3,)), 2),
    # LAPACK's QR on both sides: equal in float64; in float32 scipy's LAPACK (JAX's) where
    # installed, else numpy's, which rounds differently (an absolute bound)
    "orthogonal": (lambda r, k: r.orthogonal(k, 4), 2),
    "orthogonal_batch_wide": (lambda r, k: r.orthogonal(k, 3, (2,), m=5), 2),
    "orthogonal_f32": (lambda r, k: r.orthogonal(k, 5, dtype="float32"),
                       2 if HAS_SCIPY else 1e-5),
    "bits_default": (lambda r, k: r.bits(k, (4,)), 0),
    "split_typed": (lambda r, k: r.key_data(r.split(r.wrap_key_data(k), (2, 3))), 0),
}

# LAPACK's QR kernels (OpenBLAS picks them by CPU: AVX2, AVX-512) round differently from one
# machine to the next, so a draw recorded on one machine is compared with an absolute bound
# (up to 18 ulp seen on an AVX2 machine against records from another); the live comparisons,
# both sides on one machine, keep the ulp bound above
ACROSS_MACHINES = {"orthogonal": 1e-12, "orthogonal_batch_wide": 1e-12, "orthogonal_f32": 1e-5}

SAMPLER_KEYS = [[0, 0], [0, 42], [1797259609, 2579123966], [4294967295, 1], [123456, 654321]]


def bits_cases():
    """The raw-bits cases: (key, shape, bit width) for N_KEYS random keys."""
    rng = np.random.default_rng(20240601)
    keys = rng.integers(0, 2**32, (N_KEYS, 2), dtype=np.uint64).astype(np.uint32)
    return [(keys[i], SHAPES[i % len(SHAPES)], WIDTHS[(i // len(SHAPES)) % len(WIDTHS)])
            for i in range(N_KEYS)]


SEEDS = [0, 1, 42, -1, -7, 2**31 - 1, 2**31, 2**32 + 5, 2**62 + 3, -(2**40)]


def record():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr

    def listed(x):
        x = np.asarray(x)
        return {"dtype": x.dtype.name, "shape": list(x.shape), "values": x.ravel().tolist()}

    out = {"jax_version": jax.__version__, "bits": [], "split": [], "fold_in": [],
           "seeds": {}, "samplers": {}}
    for key, shape, width in bits_cases():
        k = np.asarray(key, np.uint32)
        out["bits"].append(listed(jr.bits(k, shape, f"uint{width}")))
    rng = np.random.default_rng(7)
    for key, _, _ in bits_cases()[:200]:
        k = np.asarray(key, np.uint32)
        out["split"].append(listed(jr.split(k, 3)))
        out["fold_in"].append([int(d := rng.integers(0, 2**32)), listed(jr.fold_in(k, d))])
    for s in SEEDS:
        out["seeds"][str(s)] = listed(jr.PRNGKey(s))
    for name, (fn, _) in PROGRAMS.items():
        out["samplers"][name] = [listed(fn(jr, np.asarray(k, np.uint32))) for k in SAMPLER_KEYS]
    with open(FIXTURES, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    record()
    print(f"wrote {FIXTURES}", file=sys.stderr)
