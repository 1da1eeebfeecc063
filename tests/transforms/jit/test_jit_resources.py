"""Resources held by jit: caches are bounded and thread-safe, workspace buffers stay within
their byte budget and go with the cache, and threads calling one jitted function at once get
the results of eager evaluation."""

import gc
import os
import platform
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.cache import LRUCache
from functrans.core.ir import DERIVED_CACHE_SIZE
from functrans.transforms.jit import jit as jit_any_backend, set_workspace_limit, workspace_bytes
from functrans.transforms.toolkit import codegen

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))


def jit(fun, **kwargs):
    """These tests are about the numpy code generator's workspaces and caches."""
    return jit_any_backend(fun, backend="numpy", **kwargs)


@pytest.fixture
def fast_switching():
    """Threads switch every microsecond, so races show up in a short test."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def run_threads(n, target):
    """Run target(i) on n threads started together; re-raise the first failure."""
    start = threading.Barrier(n)
    errors = []

    def body(i):
        start.wait()
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001  (reported below, with its thread)
            errors.append((i, e))

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise AssertionError(f"thread {errors[0][0]} failed") from errors[0][1]


# --- the cache class -------------------------------------------------------------------------

def test_lru_cache_keeps_the_most_recent_entries_and_reports_evictions():
    evicted = []
    c = LRUCache(2, on_evict=evicted.append, register=False)
    assert c.put("a", 1) == 1 and c.put("b", 2) == 2
    assert c.get("a") == 1                       # "a" is now the most recent
    c.put("c", 3)
    assert c.keys() == ["a", "c"] and evicted == [2]
    assert c.put("a", 10) == 1                   # the first value stored wins
    assert c.get_or_build("d", lambda: 4) == 4 and evicted == [2, 3]
    c.clear()
    assert len(c) == 0 and sorted(evicted) == [1, 2, 3, 4]
    assert c.info().maxsize == 2
    with pytest.raises(ValueError, match="cache_size must be at least 1"):
        LRUCache(0)


def test_lru_cache_under_threads_stays_consistent(fast_switching):
    c = LRUCache(3, register=False)
    evicted = []
    c._on_evict = evicted.append

    def hammer(i):
        for k in range(3000):
            key = (i + k) % 7
            v = c.get(key)
            assert v is None or v == key * 10
            if v is None:
                assert c.put(key, key * 10) == key * 10
            assert len(c) <= 3
    run_threads(8, hammer)
    info = c.info()
    assert info.currsize <= 3 and info.hits + info.misses == 8 * 3000
    assert sorted(c.keys()) == sorted(set(c.keys())) and all(v % 10 == 0 for v in evicted)


# --- threads calling one jitted function -------------------------------------------------------

def _f(x, y):
    h = fnp.tanh(x * y) + 1.0
    return fnp.sum(h * h, axis=-1), h * x      # a reduction and a large output


def _f_numpy(x, y):
    h = np.tanh(x * y) + 1.0
    return np.sum(h * h, axis=-1), h * x


# 8 shapes: small ones, and ones whose intermediates (>= 64 KiB) live in a workspace
SHAPES = [(3,), (5, 4), (7,), (2, 3, 2), (160, 64), (96, 128), (200, 50), (64, 160)]


@pytest.mark.parametrize("cache_size,shapes,n_calls", [
    (2, [(k,) for k in range(3, 11)], 300),   # the reproducer: once a KeyError in get/put
    (2, SHAPES, 60),      # evictions free workspaces while other threads run programs
    (64, SHAPES, 60)])
def test_eight_threads_over_eight_shapes_get_eager_results(fast_switching, cache_size, shapes,
                                                           n_calls):
    rng = np.random.default_rng(0)
    args = [(rng.standard_normal(s), rng.standard_normal(s[-1:])) for s in shapes]
    want = [_f_numpy(*a) for a in args]
    jf = jit(_f, cache_size=cache_size)

    def calls(t):
        for i in range(n_calls):
            k = (t + i) % len(shapes)
            got = jf(*args[k])
            for g, w in zip(got, want[k]):
                np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-13)
                assert not np.shares_memory(g, args[k][0])
    run_threads(8, calls)
    assert jf.cache_info().currsize <= cache_size


def test_threads_never_share_one_workspace():
    # every thread computes on its own input; a shared buffer would mix their results
    rng = np.random.default_rng(1)
    y = rng.standard_normal(64)
    xs = [rng.standard_normal((256, 64)) for _ in range(8)]
    want = [_f_numpy(x, y) for x in xs]
    jf = jit(_f)
    jf(xs[0], y), jf(xs[0], y)                 # the second call allocates the workspace
    assert jf.lower(xs[0], y).compile().workspace.buffers is not None

    def calls(t):
        for _ in range(40):
            got = jf(xs[t], y)
            for g, w in zip(got, want[t]):
                np.testing.assert_array_equal(g, w)
    run_threads(8, calls)


def test_threads_tracing_the_same_signature_share_one_cache_entry(fast_switching):
    jf = jit(lambda x: fnp.sin(x) * 2.0, cache_size=4)
    x = np.linspace(0, 1, 5)
    lowered = []
    run_threads(8, lambda t: lowered.append(jf.lower(x).jaxpr))
    assert jf.cache_info().currsize == 1
    assert all(j is lowered[0] for j in lowered)


# --- workspace buffers: a byte budget, freed with the cache ------------------------------------

def _layer(x):
    h = fnp.tanh(x) * 2.0 + 1.0               # intermediates of x's size: workspace slots
    g = fnp.sin(h) * h
    return fnp.sum(g * g + h)


def _workspace_of(jf, *args):
    return jf.lower(*args).compile().workspace


def test_a_program_called_once_holds_no_workspace():
    gc.collect()
    before = workspace_bytes()
    jf = jit(_layer)
    jf(np.ones(1_000_000))                     # 8 MB intermediates
    assert workspace_bytes() == before
    ws = _workspace_of(jf, np.ones(1_000_000))
    assert ws is not None and ws.buffers is None
    jf(np.ones(1_000_000))                     # called again: now it pays to keep buffers
    assert ws.buffers is not None and workspace_bytes() == before + ws.nbytes
    jf.clear_cache()
    assert ws.buffers is None and workspace_bytes() == before


def test_workspaces_of_many_shapes_stay_within_the_budget_and_go_with_the_cache():
    # the reproducer of the RSS growth: many distinct sizes, each called twice
    gc.collect()
    before = workspace_bytes()
    budget = 4 << 20
    old = set_workspace_limit(before + budget)
    try:
        jf = jit(_layer, cache_size=16)
        for n in range(16_384, 16_384 + 64 * 300, 64):
            x = np.linspace(0.0, 1.0, n)
            for _ in range(2):
                assert float(jf(x)) == pytest.approx(float(_layer(x)), rel=1e-12)
            assert workspace_bytes() - before <= budget
        cached = jf._cache.values()
        accounted = sum(e._compiled.workspace.nbytes for e in cached
                        if e._compiled is not None and e._compiled.workspace.buffers is not None)
        assert workspace_bytes() - before == accounted > 0
        jf.clear_cache()
        assert workspace_bytes() == before
    finally:
        set_workspace_limit(old)


def test_evicted_programs_free_their_workspace_without_the_garbage_collector():
    gc.collect()
    before = workspace_bytes()
    jf = jit(_layer, cache_size=2)
    programs = []
    gc.disable()                               # freeing must not wait for a collection
    try:
        for n in (20_000, 30_000, 40_000, 50_000):
            x = np.ones(n)
            jf(x), jf(x)
            programs.append(weakref.ref(jf.lower(x).compile()))
        assert [p() is None for p in programs] == [True, True, False, False]
        assert workspace_bytes() - before == sum(p().workspace.nbytes for p in programs[2:])
        ft.clear_caches()                      # the module-level clear frees them too
        assert workspace_bytes() == before
        assert all(p() is None for p in programs)
    finally:
        gc.enable()


def test_no_workspace_beyond_the_budget_and_results_unchanged():
    gc.collect()
    old = set_workspace_limit(workspace_bytes())   # no room left
    try:
        jf = jit(_layer)
        x = np.linspace(0, 1, 50_000)
        for _ in range(3):
            assert float(jf(x)) == pytest.approx(float(_layer(x)), rel=1e-12)
        assert _workspace_of(jf, x).buffers is None
    finally:
        set_workspace_limit(old)
    jf(x)
    assert _workspace_of(jf, x).buffers is not None


def test_workspace_limit_is_checked_and_documented_default():
    assert codegen._limit_from_environment() == 256 << 20 or \
        "FUNCTRANS_JIT_WORKSPACE_BYTES" in __import__("os").environ
    for bad in (-1, 1.5, "1MB", True):
        with pytest.raises(ValueError, match="non-negative integer number of bytes"):
            set_workspace_limit(bad)


def test_workspace_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("FUNCTRANS_JIT_WORKSPACE_BYTES", "12345")
    assert codegen._limit_from_environment() == 12345
    monkeypatch.setenv("FUNCTRANS_JIT_WORKSPACE_BYTES", "lots")
    with pytest.raises(ValueError, match="FUNCTRANS_JIT_WORKSPACE_BYTES='lots'.*in bytes"):
        codegen._limit_from_environment()


# --- programs derived per batch size, per nonzero pattern: bounded ------------------------------

def test_vmap_of_jit_keeps_a_bounded_number_of_batched_programs():
    jf = jit(lambda x: fnp.sin(x) * x)
    x = np.linspace(0, 1, 3)
    program = jf.lower(x).jaxpr
    for b in range(1, 3 * DERIVED_CACHE_SIZE):
        xs = np.linspace(0, 1, 3 * b).reshape(b, 3)
        np.testing.assert_allclose(ft.vmap(jf)(xs), np.sin(xs) * xs, rtol=1e-14)
        assert len(program.derived) <= DERIVED_CACHE_SIZE
    assert {k[0] for k in program.derived.keys() if isinstance(k, tuple)} >= {"vmap"}


def test_jit_of_vmap_of_jit_is_bounded_at_every_level():
    inner = jit(lambda x: fnp.cos(x) + x)
    outer = jit(ft.vmap(inner), cache_size=8)
    for b in range(1, 40):
        xs = np.linspace(0, 1, 2 * b).reshape(b, 2)
        np.testing.assert_allclose(outer(xs), np.cos(xs) + xs, rtol=1e-14)
    assert outer.cache_info().currsize <= 8
    program = inner.lower(np.ones(2)).jaxpr
    assert len(program.derived) <= DERIVED_CACHE_SIZE


FAULTS = """
import resource
import numpy as np
import functrans as ft

ft.jit(lambda x: x + 1.0)(np.ones(3))      # compiling a program decides malloc's settings

def step():     # arrays of 0.3 to 2 MB coming and going, as a program's intermediates do
    live = [np.ones(n) for n in (40_000, 90_000, 130_000, 60_000, 250_000)]
    del live[1:3]
    live += [np.ones(n) for n in (70_000, 160_000)]

step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 50)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc settings")
def test_freed_memory_is_kept_for_the_next_call():
    # toolkit.heap: without it each step faults its fresh pages in again (about 1,300 faults)
    def faults(keep):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        env.update(PYTHONPATH=ROOT, FUNCTRANS_KEEP_FREED_MEMORY=keep)
        proc = subprocess.run([sys.executable, "-c", FAULTS], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return float(proc.stdout.split()[-1])

    assert faults("1") < 20
    assert faults("0") > 500
