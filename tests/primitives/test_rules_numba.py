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

# a case's program compounds each elementary function's TOLERANCE over a few operations;
# where it cancels (1 - tanh(x)^2 near |x| = 4, say) an element's relative error grows with
# its condition number, so each element is held to RTOL of its array's largest magnitude
RTOL = 64 * kernels.TOLERANCE


def _close(got, want, what):
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, what
        if g.dtype.kind in "fc":
            finite = np.abs(w[np.isfinite(w)])
            scale = finite.max(initial=0.0)
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=max(RTOL * scale, 1e-300),
                                       equal_nan=True, err_msg=what)
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


def _fused_program(fast, *args):
    """The equations of `fast`'s program for `args` after fusion."""
    from functrans.transforms.toolkit.codegen import _call_target
    closed = fast.lower(*args).jaxpr
    return kernels.fuse(closed.jaxpr, [_call_target(e, True) for e in closed.jaxpr.eqns])[0]


def _fused_eqns(fast, *args):
    return [e for e in _fused_program(fast, *args) if e.primitive is kernels.FUSED]


def test_vectorised_tanh_is_within_tolerance_of_numpys():
    # tanh in a loop of any size is the arithmetic one (kernels.VECTORISED); times 2 is exact
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(200_000) * 3, np.linspace(-25, 25, 200_001),
                        [0.625, -0.625, np.nextafter(0.625, 0), 19.06, 19.07, 40.0, 1e300,
                         1e-300, -1e-300, 5e-324, 0.0, -0.0, np.inf, -np.inf, np.nan]])
    fast = jit(lambda x: fnp.tanh(x) * 2.0, backend="numba")
    got, want = fast(x) / 2.0, np.tanh(x)
    assert len(_fused_eqns(fast, x)) == 1
    np.testing.assert_allclose(got, want, rtol=kernels.TOLERANCE, atol=0, equal_nan=True)
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))


def test_a_layer_and_its_backward_pass_fuse_around_the_products():
    # tanh(h @ w + b): the bias broadcasts as a row; backward, the outer product of the
    # output's cotangent (a column) with the last weights (a row), the tanh derivative
    # 1 - y * y and the bias gradient (a sum over rows) run in one loop
    def loss(w1, b1, w2, x):
        y = fnp.tanh(x @ w1 + b1)
        return fnp.sum((y @ w2) ** 2)

    rng = np.random.default_rng(4)
    args = (rng.standard_normal((3, 40)), rng.standard_normal(40),
            rng.standard_normal((40, 1)), rng.uniform(-1, 1, (300, 3)))
    def by_hand(w1, b1, w2, x):     # the chain rule written out in numpy
        y = np.tanh(x @ w1 + b1)
        g = 2 * (y @ w2)
        gz = (g @ w2.T) * (1 - y * y)
        return x.T @ gz, gz.sum(axis=0), y.T @ g

    grad = ft.grad(loss, argnums=(0, 1, 2))
    fast = jit(grad, backend="numba")
    _close(fast(*args), by_hand(*args), "layer gradient")
    fused = _fused_eqns(fast, *args)
    # forward, y alone leaves its kernel (x @ w1 is a short product: it runs there too);
    # backward, the product with the cotangent and its column sum
    assert [[v.aval.shape for v in e.outvars] for e in fused] == [[(300, 40)],
                                                                   [(300, 40), (40,)]], fused
    # y (96 KiB) lives in a workspace buffer; later calls reuse it and leave results alone
    assert "outs=(w" in fast.lower(*args).as_text("code")
    first = fast(*args)
    args2 = [a * 0.5 for a in args]
    for _ in range(2):
        _close(fast(*args2), by_hand(*args2), "layer gradient again")
    _close(first, by_hand(*args), "the first call's results")


@pytest.mark.parametrize("shape", [(300, 7), (5, 60, 7), (4, 3, 5, 7), (7,)], ids=str)
def test_operands_broadcast_in_one_loop(shape):
    # rows, columns, an operand broadcast along a middle axis (a forward-mode tangent block
    # times its primal factor), scalars, and a sum over the leading axes
    def f(x, row, col, mid, s):
        y = fnp.tanh(x * row + col) * s - mid
        return y * y, fnp.sum(y, axis=tuple(range(x.ndim - 1))) if x.ndim > 1 else y

    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    row = rng.standard_normal(shape[-1:])
    col = rng.standard_normal((*shape[:-1], 1)) if len(shape) > 1 else rng.standard_normal(1)
    mid = rng.standard_normal((shape[0], *(1,) * (len(shape) - 2), shape[-1])) \
        if len(shape) > 2 else np.float64(1.0)
    args = (x, row, col, mid, np.float64(0.5))
    y = np.tanh(x * row + col) * 0.5 - mid
    want = (y * y, y.sum(axis=tuple(range(x.ndim - 1))) if x.ndim > 1 else y)
    fast = jit(f, backend="numba")
    _close(fast(*args), want, f"broadcasts over {shape}")
    assert len(_fused_eqns(fast, *args)) == 1


@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)], ids=str)
def test_a_sum_over_axes_but_the_last_runs_in_the_loop(axes):
    # the weighted sum over the directions of a forward-mode block, (N, R, H) -> (N, H) under
    # vmap: the product and the sum in one pass, summed in numpy's order
    def f(a, b, w):
        return fnp.sum(a * b * w, axis=axes)

    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((50, 3, 8)), rng.standard_normal((50, 1, 8))
    w = rng.standard_normal((1, 3, 1))
    fast = jit(f, backend="numba")
    want = (a * b * w).sum(axis=axes)
    _close(fast(a, b, w), want, f"sum over {axes}")
    [e] = _fused_eqns(fast, a, b, w)
    assert [v.aval.shape for v in e.outvars] == [want.shape]


def test_an_equation_alone_is_a_loop_only_where_numpy_broadcasts_slowly():
    # (N, 1, H) * (1, R, H), a forward-mode block: numpy runs N * R inner loops of H
    rng = np.random.default_rng(7)
    col, row = rng.standard_normal((1024, 1, 64)), rng.standard_normal((1, 3, 64))
    fast = jit(lambda a, b: a * b, backend="numba")
    _close(fast(col, row), col * row, "broadcast product")
    assert len(_fused_eqns(fast, col, row)) == 1
    same = rng.standard_normal((1024, 3, 64))       # no broadcast: numpy's loop is as fast
    assert _fused_eqns(fast, same, same) == []
    small = jit(lambda a, b: a * b, backend="numba")  # too small to pay for a kernel
    assert _fused_eqns(small, col[:8], row) == []


def test_a_sum_ends_its_cluster():
    # the column sum is complete only when the loop ends: what reads it runs after
    def f(x):
        s = fnp.sum(x * x, axis=0)
        return fnp.exp(x * 0.5) + s

    x = np.random.default_rng(6).standard_normal((50, 8))
    want = np.exp(x * 0.5) + np.sum(x * x, axis=0)
    _close(jit(f, backend="numba")(x), want, "a sum read by the same shape's map")


@pytest.mark.parametrize("k", [1, 2, 3], ids=lambda k: f"k={k}")
def test_a_short_product_runs_in_the_loop(k):
    # the first layer of a network of k inputs: x @ w over an axis of length k, as a sum of k
    # products of a column of x and a row of w, fused with the bias and tanh
    def layer(x, w, wt, b):
        return fnp.tanh(x @ w + b) + fnp.tanh(x @ wt.T)

    rng = np.random.default_rng(7)
    args = (rng.standard_normal((300, k)), rng.standard_normal((k, 16)),
            rng.standard_normal((16, k)), rng.standard_normal(16))
    x, w, wt, b = args
    fast = jit(layer, backend="numba")
    _close(fast(*args), np.tanh(x @ w + b) + np.tanh(x @ wt.T), f"short product, k = {k}")
    program = _fused_program(fast, *args)
    assert [e.primitive.name for e in program if e.primitive.name != "transpose"] == \
        ["fused"], program
