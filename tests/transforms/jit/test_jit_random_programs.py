"""Property tests: random programs (with inf, nan, signed zeros and huge values among the
inputs) give the same results after every pass, after the whole pipeline and through the
generated code as when run eagerly. Bit for bit (values and nan positions), except programs
using the one reassociating rewrite (a sum of a broadcast), which agree to 1e-12.
Every pass's output also passes check_jaxpr."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.transforms.jit import compile_program, jit, optimize
from functrans.transforms.toolkit import kernels
from functrans.transforms.toolkit.optimize import PASSES, optimize_with_stats

# a program compounds each elementary function's TOLERANCE over a few operations
FAST_RTOL = 64 * kernels.TOLERANCE

SHAPES = [(), (4,), (3, 4), (3, 1), (1, 4)]
BIG_SHAPES = [(), (64,), (48, 64), (48, 1), (1, 64)]  # big enough for in-place buffer reuse
HUGE_SHAPES = [(), (64,), (160, 64), (160, 1), (1, 64)]  # 80 KiB: workspace buffers too
SPECIALS = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e300, -1e-310, 1.0])

UNARY = {
    "sin": fnp.sin, "cos": fnp.cos, "exp": fnp.exp, "log": fnp.log, "tanh": fnp.tanh,
    "sqrt": fnp.sqrt, "neg": lambda x: -x,
    "mul1": lambda x: x * 1.0, "1mul": lambda x: 1.0 * x, "add0": lambda x: x + 0.0,
    "0add": lambda x: 0.0 + x, "sub0": lambda x: x - 0.0, "0sub": lambda x: 0.0 - x,
    "div1": lambda x: x / 1.0,
    "mul0": lambda x: x * 0.0, "subself": lambda x: x - x, "divself": lambda x: x / x,
    "negneg": lambda x: -(-x), "mulm1": lambda x: x * -1.0, "square": lambda x: x * x,
    "mul_ones": lambda x: x * fnp.ones(x.shape, x.dtype),
    "add_zeros": lambda x: fnp.zeros((2, *x.shape), x.dtype) + x,
    "mul_zeros": lambda x: x * fnp.zeros(x.shape, x.dtype),
    "mul_full": lambda x: x * fnp.full(x.shape, 0.5, x.dtype),
    "T": lambda x: fnp.transpose(x), "TT": lambda x: fnp.transpose(fnp.transpose(x)),
    "reshape_chain": lambda x: fnp.reshape(fnp.reshape(x, (-1,)), x.shape),
    "expand_squeeze": lambda x: fnp.squeeze(fnp.expand_dims(x, 0), 0),
    "const_expr": lambda x: x * (fnp.exp(np.asarray(0.5, x.dtype)) - 1.0),
    "const_nan": lambda x: x + fnp.log(np.linspace(-1.0, 3.0, x.shape[-1]).astype(x.dtype))
    if x.shape else x + fnp.log(np.asarray(-1.0, x.dtype)),
    "sum_all": lambda x: fnp.sum(x),
    "sum0": lambda x: fnp.sum(x, axis=0) if x.ndim else x,
    "bsum": lambda x: fnp.sum(fnp.broadcast_to(x, (3, *x.shape)), axis=0),
    "where": lambda x: fnp.where(x > 0, x, -x),
    "cse_dup": lambda x: fnp.sin(x) + fnp.sin(x),
    "commuted": lambda x: x * 3.0 + 3.0 * x,
    "bcast_mul": lambda x: fnp.broadcast_to(fnp.sum(x, axis=0) if x.ndim else x, x.shape) * x,
    "bcast_add_T": lambda x: x + fnp.broadcast_to(fnp.sum(x, axis=-1, keepdims=True), x.shape)
    if x.ndim else x,
}
BINARY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "add_neg": lambda x, y: x + (-y),
    "neg_add": lambda x, y: (-x) + y, "sub_neg": lambda x, y: x - (-y),
    "negmul": lambda x, y: (-x) * (-y), "max": fnp.maximum,
    "select": lambda x, y: fnp.where(x < y, x, y),
}
REASSOCIATING = {"bsum"}


class Program:
    """A random straight-line program over a pool of values, replayable on tracers."""

    def __init__(self, n_inputs, steps, outputs):
        self.n_inputs = n_inputs
        self.steps = steps        # (op name, operand pool indices)
        self.outputs = outputs

    def __call__(self, *args):
        pool = list(args)
        for op, idx in self.steps:
            fn = UNARY.get(op) or BINARY[op]
            pool.append(fn(*[pool[i] for i in idx]))
        return tuple(pool[i] for i in self.outputs)

    @property
    def reassociates(self):
        return any(op in REASSOCIATING for op, _ in self.steps)

    def __repr__(self):
        return f"Program({self.n_inputs}, {self.steps}, {self.outputs})"


def sample_inputs(rng, shapes, dtype):
    out = []
    for s in shapes:
        x = rng.uniform(-3.0, 3.0, s)
        if rng.random() < 0.6:
            mask = rng.random(s) < 0.3
            x = np.where(mask, rng.choice(SPECIALS, s), x)
        with np.errstate(over="ignore"):  # 1e300 becomes inf in float32
            out.append(np.asarray(x, dtype))
    return out


def random_program(rng, n_steps=None, shapes=SHAPES):
    """A program and inputs; operands are chosen while running it, so shapes always fit."""
    dtype = np.float64 if rng.random() < 0.8 else np.float32
    n_inputs = int(rng.integers(1, 4))
    args = sample_inputs(rng, [shapes[i] for i in rng.integers(0, len(shapes), n_inputs)],
                         dtype)
    pool = list(args)
    steps = []
    n_steps = int(rng.integers(2, 12)) if n_steps is None else n_steps
    with np.errstate(all="ignore"):
        while len(steps) < n_steps:
            i = int(rng.integers(len(pool)))
            if rng.random() < 0.55:
                op = list(UNARY)[rng.integers(len(UNARY))]
                idx = (i,)
            else:
                op = list(BINARY)[rng.integers(len(BINARY))]
                fits = [j for j, v in enumerate(pool) if _broadcasts(pool[i], v)]
                idx = (i, fits[rng.integers(len(fits))])
            fn = UNARY.get(op) or BINARY[op]
            pool.append(fn(*[pool[j] for j in idx]))
            steps.append((op, idx))
    n_out = int(rng.integers(1, 3))
    outputs = [len(pool) - 1] + [int(j) for j in rng.integers(0, len(pool), n_out - 1)]
    return Program(n_inputs, steps, outputs), args


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
        return True
    except ValueError:
        return False


def assert_same(got, expected, reassociates, what):
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (what, g.dtype, e.dtype, g.shape,
                                                          e.shape)
        if reassociates:
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=0, equal_nan=True, err_msg=what)
        else:
            assert np.array_equal(g, e, equal_nan=True), f"{what}: {g} != {e}"


def assert_close_fast(got, expected, what):
    """jit's numba backend: numpy's results to the documented tolerance (the C library's
    elementary functions differ from numpy's vectorised ones in the last bits), with nan,
    infinities and signs of infinities where numpy has them."""
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, what
        np.testing.assert_allclose(g, e, rtol=FAST_RTOL, atol=1e-300, equal_nan=True,
                                   err_msg=what)


def check_program(seed, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    prog, args = random_program(rng, shapes=shapes)
    with np.errstate(all="ignore"):
        expected = prog(*args)
        closed = ft.make_jaxpr(prog)(*args)
        ft.check_jaxpr(closed)
        for name, p in PASSES:
            out = p(closed)
            ft.check_jaxpr(out)
            assert_same(ft.eval_jaxpr(out.jaxpr, out.consts, *args), expected,
                        prog.reassociates, f"{name} on {prog}")
        opt, _ = optimize_with_stats(closed, check=ft.check_jaxpr)
        assert_same(ft.eval_jaxpr(opt.jaxpr, opt.consts, *args), expected, prog.reassociates,
                    f"pipeline on {prog}")
        assert_same(compile_program(closed)(*args), expected, False, f"codegen of {prog}")
        assert_same(compile_program(opt)(*args), expected, prog.reassociates,
                    f"codegen after passes on {prog}")
        jf = jit(prog, backend="numpy")
        first = jf(*args)
        assert_same(first, expected, prog.reassociates, f"jit of {prog}")
        fast = jit(prog, backend="numba") if kernels.available() else None
        first_fast = None
        if fast is not None:
            first_fast = fast(*args)
            assert_close_fast(first_fast, expected, f"numba jit of {prog}")
        if shapes is HUGE_SHAPES:     # later calls reuse the workspace (loop kernels write
            args2 = [a[::-1] * 0.5 if np.ndim(a) else a for a in args]   # there too), and
            expected2 = prog(*args2)                                     # leave the first
            assert_same(jf(*args2), expected2, prog.reassociates, f"jit again of {prog}")
            assert_same(first, expected, prog.reassociates, f"first outputs of {prog}")
            if fast is not None:
                for _ in range(2):
                    assert_close_fast(fast(*args2), expected2, f"numba jit again of {prog}")
                assert_close_fast(first_fast, expected, f"first numba outputs of {prog}")
    assert optimize(opt) is opt or len(optimize(opt).eqns) == len(opt.eqns)


@pytest.mark.parametrize("seed", range(200))
def test_random_programs_preserve_eager_results(seed):
    check_program(seed)


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_on_big_arrays_reuse_buffers_safely(seed):
    check_program(10_000 + seed, BIG_SHAPES)


@pytest.mark.parametrize("seed", range(100))
def test_random_programs_on_huge_arrays_reuse_workspaces_safely(seed):
    check_program(20_000 + seed, HUGE_SHAPES)


def test_random_programs_property():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=60, deadline=None)
    @hypothesis.given(st.integers(min_value=0, max_value=2**32 - 1))
    def prop(seed):
        check_program(seed)

    prop()


@pytest.mark.parametrize("seed", range(20))
def test_random_programs_gradients_through_jit(seed):
    """grad of a random program's sum, jitted and eager, on finite inputs."""
    rng = np.random.default_rng(1000 + seed)
    prog, sample = random_program(rng)
    args = [rng.uniform(0.5, 1.5, np.shape(a)) for a in sample]

    def loss(*xs):
        return sum(fnp.sum(o) for o in prog(*xs))

    with np.errstate(all="ignore"):
        expected = ft.grad(loss, argnums=tuple(range(len(args))))(*args)
        got = jit(ft.grad(loss, argnums=tuple(range(len(args)))))(*args)
        got2 = ft.grad(jit(loss), argnums=tuple(range(len(args))))(*args)
    for g, g2, e in zip(got, got2, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-300, equal_nan=True)
        np.testing.assert_allclose(g2, e, rtol=1e-12, atol=1e-300, equal_nan=True)
