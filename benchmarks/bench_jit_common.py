"""Shared setup of the jit benchmarks: one core everywhere, optional competitors, timing.

Import this module before numpy: it pins BLAS/OpenMP to one thread through the environment,
and the process to one CPU (`pin_to_one_cpu`).
Timing interleaves the contenders (round r times every contender once), so slow drifts of the
machine hit all alike; each round times a batch of calls, and a contender's figure is the
median over rounds of the per-call time. The clock is this process's CPU time (everything
runs on one thread, so it equals wall time on a quiet machine, and other processes sharing
the cores do not inflate it); set FUNCTRANS_BENCH_CLOCK=wall for wall-clock time.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")


def pin_to_one_cpu() -> str:
    """Bind this process to one CPU, so that no library can run on two cores. The thread
    variables above do not reach every pool: XLA's CPU runtime still ran products on two
    threads (process CPU time 1.7x wall time on a 2-core machine). Set FUNCTRANS_BENCH_PIN=0
    to leave the affinity alone. Returns a line for the benchmark's header."""
    if os.environ.get("FUNCTRANS_BENCH_PIN") == "0":
        return "CPU affinity left alone (FUNCTRANS_BENCH_PIN=0)"
    if not hasattr(os, "sched_setaffinity"):
        return "CPU affinity not settable on this platform: thread variables only"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}: every library on one core"


PINNING = pin_to_one_cpu()

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tanh_mlp(lib, params, x):
    """The benchmarks' network at one point: tanh hidden layers, then a linear scalar output.
    `lib` is the array namespace (functrans.numpy, jax.numpy, torch), so every library runs
    the same program."""
    h = x
    for w, b in params[:-1]:
        h = lib.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[0]


def optional_torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def optional_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


def optional_autograd():
    try:
        import autograd
        import autograd.numpy  # noqa: F401
    except ImportError:
        return None
    return autograd


clock = time.perf_counter if os.environ.get("FUNCTRANS_BENCH_CLOCK") == "wall" \
    else time.process_time


def calls_per_batch(fn, target_seconds: float = 0.02) -> int:
    """How many calls of `fn` fill about `target_seconds` (after a warm-up call)."""
    fn()
    t0 = time.perf_counter()
    fn()
    dt = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(target_seconds / dt))


def time_interleaved(contenders: dict, rounds: int = 15, target_seconds: float = 0.02) -> dict:
    """Median per-call seconds of each contender (name -> zero-argument callable)."""
    numbers = {k: calls_per_batch(fn, target_seconds) for k, fn in contenders.items()}
    samples: dict = {k: [] for k in contenders}
    for _ in range(rounds):
        for k, fn in contenders.items():
            n = numbers[k]
            t0 = clock()
            for _ in range(n):
                fn()
            samples[k].append((clock() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def print_table(title: str, medians: dict, reference: str, notes: dict | None = None) -> None:
    """Medians in microseconds and ratios to `reference`."""
    ref = medians[reference]
    clock_name = "wall-clock" if clock is time.perf_counter else "process CPU"
    print(f"\n{title}  [median of per-call {clock_name} time; {PINNING}]")
    print(f"{'contender':<44}{'median':>14}{'ratio':>10}")
    for k, t in medians.items():
        note = f"  {notes[k]}" if notes and k in notes else ""
        print(f"{k:<44}{t * 1e6:>11.1f} us{t / ref:>9.2f}x{note}")
    print(f"(ratios relative to: {reference})")


def assert_close(name: str, got, expected, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    got = [np.asarray(g, np.float64) for g in got]
    expected = [np.asarray(e, np.float64) for e in expected]
    for g, e in zip(got, expected):
        if not np.allclose(g, e, rtol=rtol, atol=atol):
            raise AssertionError(f"{name} disagrees with the reference: max abs error "
                                 f"{np.max(np.abs(g - e)):.3e}")


def jit_backend() -> str:
    """The backend ft.jit uses here by default: numba with the extra "fast", else numpy."""
    from functrans.transforms.toolkit import kernels
    return "numba" if kernels.available() else "numpy"
