"""The generated code: names from the IR only, buffers released after their last use, direct
backend calls (their bits are checked against the impls in tests/primitives/test_rules.py),
and the debugging view."""

import io
import re
import threading
import tokenize
import tracemalloc

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.primitives.registry import REGISTRY
from functrans.transforms.jit import compile_program, jit as jit_any_backend


def jit(fun, **kwargs):
    """These tests are about the numpy code generator (buffers, workspaces, source text)."""
    return jit_any_backend(fun, backend="numpy", **kwargs)

_IR_NAME = re.compile(r"^(def|program|del|return|try|finally|held|[acfkpvw]\d+)$")


def names_in(source: str) -> set[str]:
    toks = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.string for t in toks if t.type == tokenize.NAME}


def test_generated_names_come_only_from_the_ir():
    def f(x, y):
        return fnp.sum(fnp.tanh(x @ y) * 2.0, axis=0), fnp.transpose(x)
    f.__name__ = "evil; import os"
    x, y = np.ones((3, 4)), np.ones((4, 2))
    xs, ys = np.stack([x, x]), np.stack([y, y])
    for g, args in ((jit(f), (x, y)), (jit(ft.grad(lambda x, y: fnp.sum(f(x, y)[0]))), (x, y)),
                    (jit(ft.vmap(f)), (xs, ys))):
        low = g.lower(*args)
        source = low.source
        # keywords are parameter names fixed by the primitive rows (and numpy's axis/dtype)
        keywords = {k for e in low.jaxpr.eqns for k in e.params} | {"axis", "dtype", "out"}
        bad = {n for n in names_in(source) if not _IR_NAME.match(n)} - keywords
        assert not bad, (bad, source)
        assert "evil" not in source and "import" not in source


@pytest.mark.parametrize("names", [("lambda", "from"), ("class",), ("not a name", "x-y")])
def test_params_named_like_keywords_or_not_names_at_all_pass_through_a_dict(names):
    # `f0(a0, lambda=p0)` was a SyntaxError from the generated code
    from functrans.core.avals import ShapedArray
    from functrans.core.primitive import Primitive
    shift = Primitive("shift_by_params", module="a test")
    shift.impl = lambda x, **params: x + sum(params.values())
    shift.abstract_eval = lambda x, **params: ShapedArray(x.shape, x.dtype)
    params = {n: float(i + 1) for i, n in enumerate(names)} | {"plain": 10.0}
    f = lambda x: shift.bind(x * 2.0, **params)  # noqa: E731
    expected = 2.0 * np.arange(3.0) + sum(params.values())
    np.testing.assert_array_equal(jit(f)(np.arange(3.0)), expected)
    low = jit(f).lower(np.arange(3.0))
    assert "plain=" in low.source and "**p" in low.source  # plain names stay readable
    np.testing.assert_array_equal(jit(lambda x: jit(f)(x) * 1.0)(np.arange(3.0)), expected)


def test_intermediates_are_deleted_after_their_last_use():
    def f(x):
        y = fnp.sin(x)
        z = fnp.cos(x)
        return fnp.exp(y) * z + y
    source = jit(f).lower(np.ones(3)).source
    lines = source.splitlines()
    defined = [m.group(1) for m in (re.match(r"\s+(v\d+) =", ln) for ln in lines) if m]
    returned = re.search(r"return \[(.*)\]", source).group(1).split(", ")
    for v in defined:
        if v in returned:
            continue
        uses = [i for i, ln in enumerate(lines) if re.search(rf"\b{v}\b", ln)
                and not ln.strip().startswith("del")]
        dels = [i for i, ln in enumerate(lines) if ln.strip().startswith("del")
                and re.search(rf"\b{v}\b", ln)]
        assert len(dels) == 1 and dels[0] == uses[-1] + 1, (v, source)


def test_a_long_chain_keeps_only_a_few_buffers_alive():
    n, steps = 250_000, 40          # 2 MB per buffer

    def chain(x):
        for _ in range(steps):
            x = fnp.sin(x) + 1.0
        return x
    jf = jit(chain)
    x = np.linspace(0, 1, n)
    jf(x)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        jf(x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 4 * x.nbytes, f"peak {peak / x.nbytes:.1f} buffers"


def test_buffers_are_reused_only_when_nothing_else_can_see_them():
    x = np.linspace(-1.0, 1.0, 4096)

    def f(x):
        y = fnp.sin(x)            # a fresh buffer
        z = fnp.reshape(y, (64, 64))  # a view of it, alive until the end
        w = fnp.cos(y) * 2.0      # y dies here, but z still reads its buffer
        return z + fnp.reshape(w, (64, 64)), fnp.exp(x) + 1.0
    jf = jit(f)
    with np.errstate(all="ignore"):
        for got, want in zip(jf(x), f(x)):
            assert np.array_equal(got, want)
    source = jf.lower(x).source
    assert "out=" in source                       # exp(x) + 1.0 reuses exp's buffer
    cos_line = next(ln for ln in source.splitlines() if ln.rstrip().endswith("# cos"))
    assert "out=" not in cos_line, source
    assert np.array_equal(x, np.linspace(-1.0, 1.0, 4096))   # inputs are never written


def test_each_output_is_an_array_of_its_own():
    """Equal results merged by CSE, a value returned twice and a returned constant come back
    as separate arrays, as in eager mode: changing one in place leaves the others alone."""
    c = np.arange(3.0)
    x = np.ones(3)
    outs = jit(lambda a: (a + 1.0, a + 1.0, fnp.sin(a), fnp.sin(a), c))(x)
    assert len({id(o) for o in outs}) == 5
    for o in outs:
        o += 10.0
    np.testing.assert_array_equal(outs[1], np.full(3, 12.0))
    np.testing.assert_array_equal(outs[3], np.sin(x) + 10.0)
    np.testing.assert_array_equal(c, np.arange(3.0))


def _mlp_layer(x, w):
    # large intermediates consumed by ufuncs, a matmul and a reduction: workspace candidates
    h = fnp.tanh(x @ w)
    s = 1.0 - h * h
    return fnp.sum(s * h, axis=1), fnp.reshape(h, (-1,))     # an output viewing an intermediate


def test_large_intermediates_live_in_a_workspace_reused_across_calls():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((512, 64)), rng.standard_normal((64, 64))
    jf = jit(_mlp_layer)
    source = jf.lower(x, w).source
    assert "= held =" in source and "out=w" in source, source
    first = jf(x, w)
    kept = [np.copy(a) for a in first]
    second = jf(2 * x, w)                      # a second call reuses the workspace...
    for got, want in zip(first, kept):         # ...and leaves the first call's outputs alone
        assert np.array_equal(got, want)
    for got, want in zip(second, _mlp_layer(2 * x, w)):
        assert np.array_equal(got, want)
    for got in second:
        assert not any(np.shares_memory(got, a) for a in first)


def test_small_programs_have_no_workspace():
    source = jit(_mlp_layer).lower(np.ones((4, 3)), np.ones((3, 3))).source
    assert "held" not in source and "try" not in source


def test_concurrent_calls_of_one_program_do_not_share_buffers():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 64))
    xs = [rng.standard_normal((512, 64)) for _ in range(4)]
    want = [_mlp_layer(x, w) for x in xs]
    jf = jit(_mlp_layer)
    jf(xs[0], w)
    start = threading.Barrier(len(xs))
    errors = []

    def run(k):
        start.wait()
        for _ in range(30):
            got = jf(xs[k], w)
            if not all(np.array_equal(a, b) for a, b in zip(got, want[k])):
                errors.append(k)
                return
    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_a_failing_call_releases_the_workspace():
    x = np.ones((512, 64))
    f = lambda x: fnp.sqrt(fnp.tanh(x) * 2.0) * 3.0      # noqa: E731
    jf = jit(f)
    assert "held" in jf.lower(x).source
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        jf(-x)                                             # raises inside the program
    assert np.array_equal(jf(x), f(x))
    held = re.search(r"= held = (f\d+)\(\)", jf.lower(x).source).group(1)
    workspace = jf.lower(x).compile().fn.__globals__[held].__self__
    assert workspace.lock.acquire(blocking=False)          # released after the failure
    workspace.lock.release()


def test_integer_division_keeps_the_full_impl():
    avals = [ft.ShapedArray((3,), np.int64)] * 2
    div_p = REGISTRY["div"]
    assert div_p.facts["fast_impl"](avals, avals[:1], {}) is None
    jf = jit(lambda x, y: div_p.bind(x, y))  # integer div_p truncates towards zero
    assert list(jf(np.array([7, -7, 3]), np.array([2, 2, 3]))) == [3, -3, 1]


def test_each_program_is_compiled_once():
    closed = jit(lambda x: fnp.sin(x) * 2.0).lower(np.ones(3)).jaxpr
    assert compile_program(closed) is compile_program(closed)


def test_lower_shows_the_optimized_program_the_code_and_the_counts():
    def f(x):
        return fnp.sum(fnp.sin(x) * 1.0 + 0.0)
    low = jit(f).lower(np.ones(3))
    assert (low.eqns_before, low.eqns_after) == (4, 2)
    text = low.as_text()
    assert "optimized program: 4 -> 2 equations" in text
    assert "def program(a0):" in text and "# sin" in text
    assert "mul" in low.as_text("traced") and "mul" not in str(low.jaxpr)
    assert low.compile()(np.zeros(3))[0] == 0.0
    with pytest.raises(ValueError, match="as_text"):
        low.as_text("nonsense")


def test_warnings_inside_programs_behave_like_eager():
    f = jit(lambda x: fnp.log(x))
    with np.errstate(divide="ignore"):
        assert f(np.zeros(1))[0] == -np.inf
    with pytest.raises(RuntimeWarning):
        with np.errstate(divide="warn"):
            f(np.zeros(1))


def test_workspaces_stay_under_their_budget(monkeypatch):
    from functrans.transforms.toolkit import codegen
    x, w = np.ones((512, 64)), np.ones((64, 64))
    monkeypatch.setattr(codegen, "WORKSPACE_LIMIT_BYTES", codegen._workspace_total[0])
    jf = jit(_mlp_layer)
    held = re.search(r"= held = (f\d+)\(\)", jf.lower(x, w).source).group(1)
    workspace = jf.lower(x, w).compile().fn.__globals__[held].__self__
    for got, want in zip(jf(x, w), _mlp_layer(x, w)):    # no room: the call allocates
        assert np.array_equal(got, want)
    assert workspace.buffers is None
    monkeypatch.setattr(codegen, "WORKSPACE_LIMIT_BYTES", 1 << 40)
    jf(x, w)
    assert workspace.buffers is not None


def test_loop_bodies_reuse_a_workspace_and_one_shot_programs_do_not():
    rng = np.random.default_rng(2)
    w = rng.standard_normal((64, 64)) / 8
    h0 = rng.standard_normal((512, 64))

    def step(h, _):
        z = fnp.tanh(h @ w)
        return z * (1.0 - z * z), fnp.sum(z * z, axis=1)   # intermediates of 256 KiB

    h, ys = ft.lax.scan(step, h0, None, length=12)
    want_h, want_ys = h0, []
    for _ in range(12):
        z = np.tanh(want_h @ w)
        want_h, y = z * (1.0 - z * z), np.sum(z * z, axis=1)
        want_ys.append(y)
    np.testing.assert_allclose(h, want_h, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ys, np.stack(want_ys), rtol=1e-13, atol=1e-15)
    closed = ft.make_jaxpr(lambda h: ft.lax.scan(step, h, None, length=12))(h0)
    body = closed.jaxpr.eqns[-1].params["jaxpr"]
    assert "out=w" in compile_program(body, workspace=True).source
    assert "out=w" not in compile_program(body).source
