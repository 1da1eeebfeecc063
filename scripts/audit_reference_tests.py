"""Which names of the numpy/scipy surface have tests that compare them with their reference
libraries, found by running the tests and watching the calls.

    python scripts/audit_reference_tests.py [TEST_PATH ...] [--json OUT] [--all]

For every name in NAMES (the lists of issue 17: numpy names, numpy.fft, numpy.linalg,
scipy.linalg, scipy.special, scipy.stats, scipy.signal, scipy.integrate) the script wraps the
functrans function and the functions of the same name in numpy/scipy and in JAX, runs the
tests under pytest in this process (default: tests/functrans_numpy, tests/functrans_scipy,
tests/functrans_jax_programs), and records, per test, which of them a test file or a program
module of the tests called directly (calls from inside functrans, or from a compiled program,
do not count). A name then gets:

- value: a test called it and numpy's/scipy's function of the same name;
- jax: a test called it and JAX's (live), or called it in a test module that reads recorded
  JAX fixtures (a `*fixtures*.json` beside it, or a `*_programs` module that writes one);
- fd: a test called it while functrans.test_util.check_grads (or check_jvp/check_vjp) ran, or
  in a test whose name says central or finite differences.

It prints one line per name, the missing columns first; --all prints every name. This is a
call trace, not a proof: a test that calls both functions but compares something else still
counts, so read the tests a gap line points at.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

_STATS_METHODS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "pmf", "logpmf")

# group -> (functrans module, numpy/scipy module, JAX module, names)
NAMES = {
    "numpy": ("functrans.numpy", "numpy", "jax.numpy", [
        "r_", "c_", "append", "rot90", "rollaxis", "gradient", "partition", "median",
        "nanmedian", "percentile", "quantile", "logaddexp2", "real", "imag", "conj", "angle",
        "einsum", "trapezoid", "interp", "polyval", "histogram", "unravel_index"]),
    "numpy.fft": ("functrans.numpy.fft", "numpy.fft", "jax.numpy.fft", [
        "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
        "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]),
    "numpy.linalg": ("functrans.numpy.linalg", "numpy.linalg", "jax.numpy.linalg", [
        "svd", "eigh", "eigvalsh", "eig", "eigvals", "qr", "pinv", "lstsq", "matrix_power",
        "matrix_rank", "norm", "cond", "multi_dot", "tensorsolve", "tensorinv"]),
    "scipy.linalg": ("functrans.scipy.linalg", "scipy.linalg", "jax.scipy.linalg", [
        "solve_triangular", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve", "expm",
        "sqrtm", "block_diag"]),
    "scipy.special": ("functrans.scipy.special", "scipy.special", "jax.scipy.special", [
        "gamma", "gammaln", "loggamma", "digamma", "polygamma", "multigammaln", "gammainc",
        "gammaincc", "beta", "betaln", "betainc", "erf", "erfc", "erfinv", "erfcx", "ndtr",
        "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e", "expit", "logit", "xlogy", "xlog1py",
        "entr", "zeta", "sinc", "spence"]),
    "scipy.stats": ("functrans.scipy.stats", "scipy.stats", "jax.scipy.stats", [
        "norm", "t", "gamma", "beta", "chi2", "poisson", "dirichlet", "multivariate_normal",
        "expon", "uniform", "laplace", "logistic", "cauchy"]),
    "scipy.signal": ("functrans.scipy.signal", "scipy.signal", "jax.scipy.signal",
                     ["convolve", "correlate"]),
    "scipy.integrate": ("functrans.scipy.integrate", "scipy.integrate", "jax.scipy.integrate",
                        ["trapezoid"]),
}
# names whose reference lives elsewhere: sinc is numpy's, not scipy.special's
_REFERENCE_OVERRIDES = {("scipy.special", "sinc"): ("numpy", "sinc"),
                        ("scipy.special", "sinc", "jax"): ("jax.numpy", "sinc")}
_VALUE_ONLY = {("numpy", "histogram"), ("numpy.linalg", "matrix_rank"),
               ("numpy", "unravel_index"), ("numpy.fft", "fftfreq"),
               ("numpy.fft", "rfftfreq")}  # no derivative to compare


def _optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class _Recorder:
    """Per test: the keys (group, name, role) called from test code; role is ft/ref/jax."""

    def __init__(self):
        self.test = None
        self.grads_depth = 0
        self.calls: dict[str, set] = defaultdict(set)
        self.in_grads: dict[str, set] = defaultdict(set)

    def hit(self, key):
        if self.test is None:
            return
        caller = sys._getframe(2).f_code.co_filename
        # test code, or check_grads handed the function itself
        if not (caller.startswith(str(TESTS)) or (self.grads_depth and key[2] == "ft"
                                                  and caller.endswith("test_util.py"))):
            return
        self.calls[self.test].add(key)
        if self.grads_depth and key[2] == "ft":
            self.in_grads[self.test].add(key)


REC = _Recorder()


class _Proxy:
    """Stands for an object used by indexing (numpy's r_ and c_)."""

    def __init__(self, obj, key):
        self._obj, self._key = obj, key

    def __getitem__(self, item):
        REC.hit(self._key)
        return self._obj[item]

    def __getattr__(self, attr):
        return getattr(self._obj, attr)


def _wrap(obj, key):
    if callable(obj) and not isinstance(obj, type):
        @functools.wraps(obj)
        def wrapper(*args, **kwargs):
            REC.hit(key)
            return obj(*args, **kwargs)
        wrapper.__audit_original__ = obj
        return wrapper
    if hasattr(obj, "__getitem__"):
        return _Proxy(obj, key)
    return obj


def _patch(module, attr, key, undo):
    if module is None or not hasattr(module, attr):
        return False
    original = getattr(module, attr)
    if getattr(original, "__audit_original__", None) is not None:
        return True
    undo.append((module, attr, original))
    setattr(module, attr, _wrap(original, key))
    return True


def _patch_all():
    undo, present = [], {}
    for group, (ft_name, ref_name, jax_name, names) in NAMES.items():
        ft_mod, ref_mod, jax_mod = _optional(ft_name), _optional(ref_name), _optional(jax_name)
        for name in names:
            if group == "scipy.stats":
                present[(group, name)] = _patch_distribution(ft_mod, ref_mod, jax_mod, group,
                                                             name, undo)
                continue
            present[(group, name)] = _patch(ft_mod, name, (group, name, "ft"), undo)
            ref = _REFERENCE_OVERRIDES.get((group, name), (ref_name, name))
            _patch(_optional(ref[0]), ref[1], (group, name, "ref"), undo)
            jref = _REFERENCE_OVERRIDES.get((group, name, "jax"), (jax_name, name))
            _patch(_optional(jref[0]), jref[1], (group, name, "jax"), undo)
    import functrans.test_util as tu

    for fn in ("check_grads", "check_jvp", "check_vjp"):
        original = getattr(tu, fn)

        @functools.wraps(original)
        def counted(*args, __original=original, **kwargs):
            REC.grads_depth += 1
            try:
                return __original(*args, **kwargs)
            finally:
                REC.grads_depth -= 1
        undo.append((tu, fn, original))
        setattr(tu, fn, counted)
    return undo, present


def _patch_distribution(ft_mod, ref_mod, jax_mod, group, dist, undo):
    found = False
    ft_dist = getattr(ft_mod, dist, None) if ft_mod is not None else None
    for method in _STATS_METHODS:
        key = (group, dist, "ft")
        if ft_dist is not None and _patch(ft_dist, method, key, undo):
            found = True
            _patch(getattr(ref_mod, dist, None), method, (group, dist, "ref"), undo)
            _patch(_optional(f"jax.scipy.stats.{dist}"), method, (group, dist, "jax"), undo)
    return found


class _Plugin:
    def __init__(self):
        self.fixture_modules: set[str] = set()
        self.test_names: dict[str, str] = {}

    def pytest_runtest_setup(self, item):
        REC.test = item.nodeid
        self.test_names[item.nodeid] = item.name
        path = Path(str(item.fspath))
        if path not in self.__dict__.setdefault("_seen", {}):
            text = path.read_text()
            self._seen[path] = "fixtures" in text and (".json" in text or "_programs" in text)
        if self._seen[path]:
            self.fixture_modules.add(item.nodeid)

    def pytest_runtest_teardown(self, item):
        REC.test = None
        self.done = getattr(self, "done", 0) + 1
        if self.done % 200 == 0:
            print(f"... {self.done} tests run", file=sys.__stderr__, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="test files or folders")
    parser.add_argument("--json", type=Path, help="write the table here")
    parser.add_argument("--all", action="store_true", help="print every name, not only gaps")
    args = parser.parse_args(argv)
    paths = args.paths or [str(TESTS / d) for d in
                           ("functrans_numpy", "functrans_scipy", "functrans_jax_programs")]
    undo, present = _patch_all()
    plugin = _Plugin()
    import pytest

    try:
        pytest.main([*paths, "-p", "no:cacheprovider", "-p", "no:xdist", "-p",
                     "no:terminal", "-W", "ignore"], plugins=[plugin])
    finally:
        for module, attr, original in reversed(undo):
            setattr(module, attr, original)
    table = {}
    for (group, name), exists in present.items():
        row = {"exists": exists, "value": False, "jax": False, "fd": False}
        for test, keys in REC.calls.items():
            if (group, name, "ft") not in keys:
                continue
            row["value"] |= (group, name, "ref") in keys
            row["jax"] |= (group, name, "jax") in keys or test in plugin.fixture_modules
            short = plugin.test_names.get(test, "")
            row["fd"] |= (group, name, "ft") in REC.in_grads[test] or any(
                w in short for w in ("central", "finite_diff", "fd"))
        if (group, name) in _VALUE_ONLY:
            row["jax"] = row["fd"] = None
        table[f"{group}.{name}"] = row
    for full, row in sorted(table.items(), key=lambda kv: (all(v is not False for v in
                                                                 kv[1].values()), kv[0])):
        gaps = [k for k, v in row.items() if v is False]
        if gaps or args.all:
            print(f"{full:38s} {'missing: ' + ', '.join(gaps) if gaps else 'ok'}")
    complete = sum(all(v is not False for v in row.values()) for row in table.values())
    print(f"{complete} of {len(table)} names have every check")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
