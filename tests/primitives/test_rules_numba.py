"""The whole primitive case table through jit's numba backend (the extra "fast"): each case's
value, its value on 0-d inputs (a scalar program, one numba function of floats) and the
gradient of its sum (elementwise clusters fused into loop kernels) equal the eager numpy
results to the documented tolerance. Skipped without numba."""


import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from primitives.cases import all_cases
from functrans.primitives.registry import REGISTRY
from functrans.transforms.jit import jit
from functrans.transforms.toolkit import kernels
from functrans.tree_util import tree_flatten

pytest.importorskip("numba")

CASES = all_cases()

# a case's program compounds each elementary function's TOLERANCE over a few operations
RTOL = 64 * kernels.TOLERANCE


def _close(got, want, what):
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, what
        if g.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=1e-300, equal_nan=True,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_match_numpy(case):
    args = case.sample(np.random.default_rng(0))
    with np.errstate(all="ignore"):
        _close(jit(case.fn, backend="numba")(*args), case.fn(*args), str(case))


ELEMENTWISE = [c for c in CASES
               if "elementwise" in REGISTRY[c.prim].props and not c.fixed_shapes]


@pytest.mark.parametrize("case", ELEMENTWISE, ids=str)
def test_scalar_programs_match_numpy(case):
    args = [a.reshape(-1)[0].copy() for a in case.sample(np.random.default_rng(1))]
    with np.errstate(all="ignore"):
        want = case.fn(*args)
        _close(jit(case.fn, backend="numba")(*args), want, str(case))


@pytest.mark.parametrize("case", [c for c in CASES if c.differentiable], ids=str)
def test_gradients_match_numpy(case):
    args = case.sample(np.random.default_rng(2))
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    if not floats:
        pytest.skip("no float argument")

    def loss(*xs):  # the sum of the float outputs and of the complex ones' real parts
        return sum(fnp.sum(fnp.real(o)) for o in tree_flatten(case.fn(*xs))[0]
                   if fnp.asarray(o).dtype.kind in "fc")

    grad = ft.grad(loss, argnums=floats)
    with np.errstate(all="ignore"):
        _close(jit(grad, backend="numba")(*args), grad(*args), str(case))


def test_nested_derivatives_of_a_scalar_function_run_as_one_kernel():
    def f(x):
        return fnp.sin(x) * fnp.exp(-x * x / 2)

    g = f
    for _ in range(6):
        g = ft.grad(g)
    fast = jit(g, backend="numba")
    assert fast.lower(0.5).jaxpr.eqns  # a program of hundreds of equations
    for x in (0.5, -1.25, 3.0):
        _close(fast(x), jit(g, backend="numpy")(x), f"grad^6 at {x}")
    entry, _ = fast._entry((0.5,), {})
    assert entry.compiled().__qualname__.startswith("compile_scalar")  # one LLVM function


def test_scalar_programs_keep_numpys_special_values():
    # literals are exact (nan, inf, -0.0, 0.1); comparisons with nan; bool outputs
    def f(x, y):
        m = fnp.where(x >= y, x, y) + 0.1
        b = x > y  # a bool read twice as a double: converted once
        return (fnp.where(x > y, m, -0.0 * y), x != x, y > fnp.inf, fnp.sqrt(y) * fnp.nan,
                fnp.where(y == y, x, fnp.inf) - fnp.log(y), -y, b == b, b != (y < x))

    fast, exact = jit(f, backend="numba"), jit(f, backend="numpy")
    for x, y in [(0.5, np.nan), (np.nan, 1.0), (2.0, -0.0), (-0.0, 0.0), (np.inf, -np.inf)]:
        with np.errstate(all="ignore"):
            got, want = fast(x, y), exact(x, y)
        _close(got, want, f"at {x}, {y}")
        # the sign of zeros and infinities (a nan's sign bit is not part of its value)
        assert [np.signbit(g) for g in got if g == g] == [np.signbit(w) for w in want if w == w]
    assert fast._entry((0.5, 1.0), {})[0].compiled().__qualname__.startswith("compile_scalar")


def test_arithmetic_exceptions_become_numpy_values():
    f = jit(lambda x, y: (x / y, fnp.log(y), fnp.exp(x * 1e3), fnp.sqrt(-x)), backend="numba")
    with np.errstate(all="ignore"):
        want = (np.float64(1.0) / 0.0, np.log(0.0), np.exp(1e3), np.sqrt(-1.0))
    _close(f(1.0, 0.0), want, "division by zero, log(0), overflow, sqrt(-1)")


def test_fused_cluster_reads_each_input_once_and_writes_its_outputs():
    def f(x, w):
        y = fnp.tanh(x @ w)
        return (1.0 - y * y) * x, fnp.sum(y)

    x, w = np.random.default_rng(3).uniform(-1, 1, (2, 40, 40))
    fast = jit(f, backend="numba")
    source = fast.lower(x, w).jaxpr
    _close(fast(x, w), f(x, w), "fused")
    from functrans.transforms.toolkit.codegen import generate_source
    code = generate_source(source, fast=True)[0]
    assert "# fused" in code, code


def test_backend_names_are_checked():
    with pytest.raises(ValueError, match="backend='xla'"):
        jit(lambda x: x, backend="xla")


def test_importing_functrans_does_not_import_numba():
    import subprocess
    import sys
    code = ("import sys, functrans, functrans.numpy as fnp; "
            "functrans.jit(lambda x: x + 1.0, backend='numpy')(1.0); "
            "assert 'numba' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_kernels_persist_in_the_compilation_cache_dir(tmp_path):
    import subprocess
    import sys
    # a scalar program (LLVM object code) and a fused loop (numba's cache)
    code = f"""
import numpy as np, functrans as ft, functrans.numpy as fnp
from functrans.transforms.toolkit import kernels, scalar
ft.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
g = ft.grad(ft.grad(lambda x: fnp.sin(x) * fnp.exp(-x * x / 2)))
h = ft.grad(lambda x: fnp.sum(fnp.tanh(x) * x))
print(float(ft.jit(g)(0.5)), float(ft.jit(h)(np.linspace(0, 1, 8))[3]))
print(scalar.STATS["compiled"], scalar.STATS["loaded"],
      sum(sum(k.stats.cache_hits.values()) for k in kernels._KERNELS.values()))
"""
    first = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                           text=True).stdout.split()
    again = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                           text=True).stdout.split()
    assert first[:2] == again[:2], (first, again)
    assert first[2:] == ["1", "0", "0"] and again[2] == "0" and again[3] == "1" and \
        int(again[4]) > 0, (first, again)
    assert list(tmp_path.glob("functrans_kernel_*.py"))
    assert list(tmp_path.glob("functrans_llvm_*.o"))


@pytest.mark.parametrize("x", [1.5, -0.5, np.array([1.5, -0.5, 0.0, 0.25])],
                         ids=["pos", "neg", "array"])
def test_infinite_and_nan_literals(x):
    def f(x):
        y = fnp.where(x > 0, x * np.inf, np.nan)
        return fnp.minimum(x, -np.inf) * 0.5, fnp.maximum(y, 1.0) - x, fnp.hypot(x, np.inf)

    with np.errstate(all="ignore"):
        _close(jit(f, backend="numba")(x), f(x), "inf and nan literals")
