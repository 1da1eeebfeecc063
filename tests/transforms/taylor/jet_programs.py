"""Programs pushed through jax.experimental.jet (float64) and functrans.jet, and the records
of JAX's results in jax_jet_fixtures.json, which test_jet.py compares functrans against (live
JAX too, when installed). Only primitives JAX's jet has a rule for appear here. Re-record with
JAX installed: `python tests/transforms/taylor/jet_programs.py`.
"""

from __future__ import annotations

import json
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_jet_fixtures.json")
ORDER = 4

_W = np.random.default_rng(5).standard_normal((3, 4)) * 0.5


def _mlp(m):
    def f(x):
        h = m.tanh(x @ _W + 0.1)
        return m.sum(m.tanh(h) * h, axis=-1)
    return f


# name -> (program(numpy-like module) -> function of arrays, domains of its arguments)
PROGRAMS = {
    "sin_cos": (lambda m: lambda x: m.sin(x) * m.cos(2.0 * x), ["real"]),
    "exp_log": (lambda m: lambda x: m.exp(x) + m.log(x), ["positive"]),
    "tanh": (lambda m: lambda x: m.tanh(x), ["real"]),
    "logistic": (lambda m: lambda x: 1.0 / (1.0 + m.exp(-x)), ["real"]),
    "sqrt_rsqrt": (lambda m: lambda x: m.sqrt(x) + 1.0 / m.sqrt(x + 1.0), ["positive"]),
    "pow": (lambda m: lambda x, y: x ** y, ["positive", "real"]),
    "integer_pow": (lambda m: lambda x: x ** 3 - 2.0 * x ** 2, ["real"]),
    "div": (lambda m: lambda x, y: x / y, ["real", "positive"]),
    "mul_add": (lambda m: lambda x, y: x * y + x - y, ["real", "real"]),
    "log1p_expm1": (lambda m: lambda x: m.log1p(x) * m.expm1(x), ["positive"]),
    "sinh_cosh": (lambda m: lambda x: m.sinh(x) - m.cosh(x) * x, ["real"]),
    "asinh_atanh": (lambda m: lambda x: m.arcsinh(x) + m.arctanh(0.5 * x), ["unit"]),
    "atan2": (lambda m: lambda x, y: m.arctan2(x, y), ["real", "positive"]),
    "erf": (lambda m: lambda x: m.erf(x) if hasattr(m, "erf") else None, ["real"]),
    "matmul": (lambda m: lambda x: m.sin(x @ _W), ["real"]),
    "reductions": (lambda m: lambda x: m.sum(x * x) + m.max(x), ["real"]),
    "reshape_transpose": (lambda m: lambda x: m.reshape(m.exp(x), (1, 3)).T * 2.0, ["real"]),
    "concat_where": (lambda m: lambda x: m.where(x > 0, m.concatenate([x, x * x])[:3], -x),
                     ["away_from_zero"]),
    "cumsum": (lambda m: lambda x: m.cumsum(m.sin(x)), ["real"]),
    "mlp": (_mlp, ["real"]),
}

DOMAINS = {
    "real": lambda rng, s: rng.uniform(-1.5, 1.5, s),
    "positive": lambda rng, s: rng.uniform(0.3, 2.0, s),
    "unit": lambda rng, s: rng.uniform(-0.8, 0.8, s),
    "away_from_zero": lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.3, 1.5, s),
}


def inputs(name):
    """(primals, series) of the program: shape (3,) arguments, ORDER random terms each."""
    rng = np.random.default_rng(sum(map(ord, name)))
    doms = PROGRAMS[name][1]
    primals = tuple(DOMAINS[d](rng, (3,)) for d in doms)
    series = tuple([0.5 * rng.standard_normal(3) for _ in range(ORDER)] for _ in doms)
    return primals, series


def jax_module():
    import jax.numpy as jnp
    import jax.scipy.special as jss

    class M:
        def __getattr__(self, name):
            return jss.erf if name == "erf" else getattr(jnp, name)
    return M()


def record():
    import jax
    from jax.experimental import jet
    jax.config.update("jax_enable_x64", True)
    m = jax_module()
    out = {}
    for name, (prog, _) in PROGRAMS.items():
        primals, series = inputs(name)
        y, terms = jet.jet(prog(m), primals, series)
        out[name] = {"primal": np.asarray(y).tolist(),
                     "terms": [np.asarray(t).tolist() for t in terms]}
    with open(FIXTURES, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    record()
