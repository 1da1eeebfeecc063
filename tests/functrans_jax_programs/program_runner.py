"""Runs a JAX program twice, once on JAX and once on functrans, and compares what each printed
and the results it left in its globals. Recorded JAX results (fixtures/<program>.npz) let the
comparison run without JAX. Re-record with JAX installed:
`python tests/functrans_jax_programs/program_runner.py [program ...]`.

A program is a file in programs/, written for JAX (`import jax`, `import jax.numpy as jnp`,
`from jax import grad, jit, vmap`, `from jax import random`, ...). Its text runs unchanged on
both sides: for functrans, the `__import__` its globals see maps every `jax` / `jax.<sub>` import
to `functrans` / `functrans.<sub>` (and `optax` to `functrans.optimizers`), which is exactly
"only the imports changed". Nothing is put into sys.modules, so JAX and functrans live side by
side in one process.

Printed numbers are compared to the last digit printed (the two sides print the same format;
a float64 difference of a few ulp may move the last printed digit by one). Results are compared
leaf by leaf: floats to RTOL relative to the leaf's largest magnitude, integers and booleans
exactly. A leaf too large to record in full is recorded as a digest (its sum of squares and its
dot product with a fixed random vector, with the scale each is compared against).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
FIXTURES = HERE / "fixtures"
RTOL = 1e-12
FULL_LEAF_LIMIT = 4096  # leaves up to this size are recorded in full, larger ones as digests

# program -> the globals it leaves whose values are compared (besides what it prints)
PROGRAM_RESULTS: dict[str, list[str]] = {
    "mnist_classifier_fromscratch": ["trajectory"],
    "pinn_burgers_random_init": ["trajectory"],
    "autodiff_cookbook": ["W", "b", "hvps", "H", "vmap_vs", "vmap_us", "per_example"],
    "quickstart": ["x", "naive", "by_hand", "vmapped"],
    "neural_network_data_loading": ["batched_preds", "trajectory"],
    "ode_rk4_scan": ["ys_true", "history", "sens_fwd", "sens_rev"],
    "gaussian_process_regression": ["history", "mu", "var"],
    "logistic_regression_newton": ["path", "covariance", "per_example"],
    "langevin_sampler_keys": ["samples", "exact_mean", "draws"],
    "custom_derivative_rules": [],
    "thinking_in_jax": ["y_smooth", "sums", "w"],
    "scan_training_loop": ["history"],
    "optax_training_loop": ["trajectory"],
    "pinn_poisson_stax": ["trajectory"],
    "heat_equation_at_updates": ["u_final", "du0", "dscale", "u_eager", "clipped"],
    "lstsq_polynomial_fit": ["coeffs", "residuals", "rank", "singular_values", "power"],
    "complex_and_fft_derivatives": ["complex_results", "fft_values", "fft_grads",
                                    "fft_jacobians"],
}


# what each library's programs import, read as functrans's module of the same role
REDIRECTS = {"jax": "functrans", "optax": "functrans.optimizers"}


def _redirected_import(redirects: dict[str, str]):
    """An `__import__` that reads `jax` as `functrans` and `jax.x.y` as `functrans.x.y` (likewise
    for each entry of `redirects`), and every other name as usual."""
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            for source, target in redirects.items():
                if name == source or name.startswith(source + "."):
                    name = target + name[len(source):]
                    if not fromlist and target != target.partition(".")[0]:
                        # `import optax`: bind the redirected module itself, not its top package
                        return importlib.import_module(name)
                    break
        return real_import(name, globals, locals, fromlist, level)

    return import_


@dataclass
class Run:
    stdout: str
    namespace: dict


def run_program(name: str, library: str) -> Run:
    """Execute programs/<name>.py as __main__, on JAX (library "jax") or with its imports read
    as functrans's (library "functrans"); capture its stdout."""
    path = PROGRAMS / f"{name}.py"
    code = compile(path.read_text(), str(path), "exec")
    own_builtins = dict(vars(builtins))
    if library == "functrans":
        own_builtins["__import__"] = _redirected_import(REDIRECTS)
    namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": own_builtins}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, namespace)
    return Run(out.getvalue(), namespace)


# -- printed numbers ---------------------------------------------------------------------------

# how a container prints an array leaf: jax `Array(1.5, dtype=float64)`, numpy `array(1.5)` or
# `np.float64(1.5)`; both read as `(1.5)`
_ARRAY_REPR = re.compile(r"\b(?:Array|array|np\.(?:float|int|uint)\d+|np\.bool_?)\(")
_DTYPE_REPR = re.compile(r",\s*dtype=\w+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _plain(text: str) -> str:
    return _DTYPE_REPR.sub("", _ARRAY_REPR.sub("(", text))


def printed_numbers(text: str) -> list[tuple[float, float]]:
    """Every number in `text`, with the value of one unit in its last printed digit."""
    found = []
    for token in _NUMBER.findall(_plain(text)):
        mantissa, _, exponent = token.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        unit = 10.0 ** (int(exponent or 0) - decimals)
        found.append((float(token), unit))
    return found


def words(text: str) -> str:
    """The text with its numbers taken out: what must read the same on both sides."""
    return _NUMBER.sub("#", _plain(text))


def compare_printed(got: str, want: str) -> None:
    """Same words, and each number equal to `want`'s up to one unit in the last printed digit."""
    assert words(got) == words(want), f"printed text differs:\n--- got\n{got}\n--- want\n{want}"
    pairs = list(zip(printed_numbers(got), printed_numbers(want)))
    for i, ((g, unit_g), (w, unit_w)) in enumerate(pairs):
        tol = max(unit_g, unit_w) * 1.0001 + RTOL * abs(w)
        assert abs(g - w) <= tol, f"printed number #{i}: got {g!r}, JAX printed {w!r}"


# -- results left in the program's globals -----------------------------------------------------

def leaves(tree) -> list[np.ndarray]:
    """The array leaves of nested tuples/lists/dicts (dicts in key order), as numpy arrays."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in leaves(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [np.array(tree)]


def _probe(size: int) -> np.ndarray:
    return np.random.default_rng(size).standard_normal(size)


def digest(leaf: np.ndarray) -> np.ndarray:
    """[sum of squares, its scale, dot with a fixed random vector, its scale]."""
    flat = leaf.astype(np.float64).ravel()
    terms = flat * _probe(flat.size)
    return np.array([np.sum(flat * flat), np.sum(flat * flat),
                     np.sum(terms), np.sum(np.abs(terms))])


def compare_leaf(got: np.ndarray, want: np.ndarray, where: str) -> None:
    assert got.shape == want.shape, f"{where}: shape {got.shape}, JAX's {want.shape}"
    if not np.issubdtype(want.dtype, np.inexact):
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * scale, err_msg=where)


def compare_digest(got_leaf: np.ndarray, want: np.ndarray, where: str) -> None:
    got = digest(got_leaf)
    for k, what in ((0, "sum of squares"), (2, "random projection")):
        assert abs(got[k] - want[k]) <= RTOL * 4 * want[k + 1], \
            f"{where}: {what} {got[k]!r}, JAX's {want[k]!r}"


def compare_results(got_ns: dict, want_ns: dict, names: list[str]) -> None:
    """The named globals of two runs, leaf by leaf."""
    for name in names:
        got, want = leaves(got_ns[name]), leaves(want_ns[name])
        assert len(got) == len(want), f"{name}: {len(got)} leaves, JAX's {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            compare_leaf(g, w, f"{name} leaf {i}")


# -- fixtures -----------------------------------------------------------------------------------

def record(name: str, run: Run, names: list[str]) -> Path:
    """Write JAX's stdout and results for `name` to fixtures/<name>.npz."""
    arrays = {"stdout": np.array(run.stdout)}
    for result in names:
        for i, leaf in enumerate(leaves(run.namespace[result])):
            key = f"{result}/{i}"
            if leaf.size > FULL_LEAF_LIMIT:
                arrays[key + "/digest"] = digest(leaf)
            else:
                arrays[key] = leaf
    FIXTURES.mkdir(exist_ok=True)
    path = FIXTURES / f"{name}.npz"
    np.savez_compressed(path, **arrays)
    return path


def compare_recorded(name: str, run: Run, names: list[str]) -> None:
    """A functrans run against the recorded JAX run: printed text and every named result."""
    with np.load(FIXTURES / f"{name}.npz") as fixture:
        compare_printed(run.stdout, str(fixture["stdout"]))
        for result in names:
            got = leaves(run.namespace[result])
            recorded = sorted({int(k.split("/")[1]) for k in fixture.files
                               if k.split("/")[0] == result})
            assert recorded == list(range(len(got))), \
                f"{result}: {len(got)} leaves, JAX's record has {len(recorded)}"
            for i, leaf in enumerate(got):
                key = f"{result}/{i}"
                if key in fixture.files:
                    compare_leaf(leaf, fixture[key], key)
                else:
                    compare_digest(leaf, fixture[key + "/digest"], key)


if __name__ == "__main__":
    import jax

    jax.config.update("jax_enable_x64", True)
    for program in sys.argv[1:] or sorted(PROGRAM_RESULTS):
        print(record(program, run_program(program, "jax"), PROGRAM_RESULTS[program]))
