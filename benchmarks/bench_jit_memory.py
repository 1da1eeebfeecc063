"""Memory held by jit: resident set size (RSS) over many distinct shapes, and after clearing.

    python benchmarks/bench_jit_memory.py            # 2,000 shapes, each called twice
    python benchmarks/bench_jit_memory.py --calls 1  # each shape called once
    python benchmarks/bench_jit_memory.py --shapes 500

Figures per phase: RSS (from /proc/self/statm, Linux, read before any forced garbage
collection), the bytes accounted in jit workspaces
(`functrans.transforms.jit.workspace_bytes()`), and live data: the bytes of live Python and
numpy heap allocations (tracemalloc, in a second run of the same loop, since tracing slows it)
plus the workspaces (mapped outside the heap, so tracemalloc does not see them).

Phases: a jitted function called on `--shapes` distinct sizes (16K to 144K float64
elements: intermediates of 128 KiB to 1.1 MiB, all workspace candidates), then after
`clear_cache()`, then one call on a 76 MB input, a second call, and after dropping that
function.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans.transforms import jit as jit_module  # noqa: E402

MB = 1e6


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def workspace_bytes() -> int:
    fn = getattr(jit_module, "workspace_bytes", None)
    return fn() if fn is not None else -1   # -1: this version has no such counter


def program(x):
    h = fnp.tanh(x) * 2.0 + 1.0
    g = fnp.sin(h) * h
    return fnp.sum(g * g + h)


def sizes(n: int):
    return [16_384 + 64 * k for k in range(n)]


def run(n_shapes: int, calls: int, measure_live: bool) -> list[tuple[str, float, float, float]]:
    rows = []

    def record(label):
        rss = rss_bytes()               # as the program sees it: no collection forced
        gc.collect()
        ws = max(workspace_bytes(), 0)
        live = tracemalloc.get_traced_memory()[0] + ws if measure_live else float("nan")
        rows.append((label, rss / MB, live / MB, workspace_bytes() / MB))

    record("start")
    f = ft.jit(program)
    for n in sizes(n_shapes):
        x = np.linspace(0.0, 1.0, n)
        for _ in range(calls):
            f(x)
    record(f"after {n_shapes} shapes x {calls} calls")
    f.clear_cache()
    record("after clear_cache()")
    del f
    record("after dropping the function")
    g = ft.jit(program)
    big = np.linspace(0.0, 1.0, 76_000_000 // 8)      # 76 MB
    g(big)
    record("one call on a 76 MB input")
    g(big)
    record("a second call on it")
    del big
    g.clear_cache()
    record("clear_cache(), input dropped")
    del g
    record("after dropping that function")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=2)
    parser.add_argument("--no-live", action="store_true", help="skip the tracemalloc run")
    args = parser.parse_args(argv)
    rows = run(args.shapes, args.calls, measure_live=False)
    if not args.no_live:
        tracemalloc.start()
        live = run(args.shapes, args.calls, measure_live=True)
        tracemalloc.stop()
        rows = [(r[0], r[1], lv[2], r[3]) for r, lv in zip(rows, live)]
    print(f"{'phase':45s} {'RSS MB':>8s} {'live MB':>8s} {'workspace MB':>13s}")
    for label, rss, live, ws in rows:
        print(f"{label:45s} {rss:8.1f} {live:8.1f} {ws:13.1f}")


if __name__ == "__main__":
    main()
