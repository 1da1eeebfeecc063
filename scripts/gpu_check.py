"""One run on a GPU machine: the primitive case table on CuPy, and the PINN workload of
benchmarks/bench_pinn.py on CuPy against numpy on the same machine.

    PYTHONPATH=. python scripts/gpu_check.py --out gpu_check.md

1. pytest on tests/primitives/test_rules_cupy.py (every case: values, jit, JVP, VJP, vmap),
   counting passed / failed / skipped;
2. the forward-Laplacian route of bench_pinn.py (tanh MLP d-64-64-64-1, float64, under jit):
   W2 the Laplacian at every point, W3 the gradient of the Poisson loss with respect to the
   parameters, at 1,024 and 100,000 points, d = 2 and 8; time per call on numpy and on CuPy
   (best of the timed calls after a warm-up call; numpy at 100,000 points: one call, its
   compile included, as a call there takes seconds), and their ratio.

Both parts keep to a time budget (--budget seconds in all, default 330): the case table stops
starting tests past its share and the benchmark skips rows past the rest, saying so. Without
CuPy or a GPU the script says it skipped and writes that to --out. numpy runs as bench_pinn.py
runs it, on one core (bench_jit_common pins the process), the figure the other benchmarks use.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1024, 100_000)
DIMS = (2, 8)


def cupy_status() -> str | None:
    """None when CuPy imports and sees a GPU, else why not."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a CUDA library missing at import
        return f"CuPy does not import ({type(e).__name__}: {e})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return f"CuPy sees no GPU ({type(e).__name__}: {e})"
    return None if n > 0 else "CuPy sees no GPU"


class Counter:
    """A pytest plugin: counts outcomes, and skips tests once the deadline has passed."""

    def __init__(self, deadline: float):
        self.deadline = deadline
        self.counts = {"passed": 0, "failed": 0, "skipped": 0}
        self.failures: list[str] = []
        self.out_of_time = 0

    def pytest_runtest_setup(self, item):
        if time.monotonic() > self.deadline:
            self.out_of_time += 1
            import pytest
            pytest.skip("gpu_check: time budget spent")

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1
            if report.outcome == "failed":
                self.failures.append(report.nodeid.split("::", 1)[-1])


def run_case_table(seconds: float) -> Counter:
    import pytest
    counter = Counter(time.monotonic() + seconds)
    pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--tb=line",
                 "--rootdir", str(ROOT), str(ROOT / "tests/primitives/test_rules_cupy.py")],
                plugins=[counter])
    return counter


def pinn_workloads(d: int, n: int, seed: int = 0):
    """bench_pinn.py's parameters, points and jitted W2 / W3 functions (forward Laplacian)."""
    import numpy as np
    import bench_pinn as bp
    import functrans as ft
    rng = np.random.default_rng(seed)
    params = bp.init(rng, d)
    X = rng.uniform(-1, 1, (n, d))
    src = np.sin(X).sum(1)
    return params, X, src, ft.jit(bp.ft_lap_forward), ft.jit(ft.grad(bp.ft_loss(bp.ft_lap_forward)))


def best_call(fn, sync, calls: int, deadline: float, warm_up: bool = True) -> float:
    """Best seconds per call over `calls` timed calls (fewer past the deadline; at least one),
    after a warm-up call unless `warm_up` is False (then the first call's time includes jit's
    trace and compile, small beside a call on 100,000 points)."""
    if warm_up:
        sync(fn())
    best = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        sync(fn())
        best = min(best, time.perf_counter() - t0)
        if time.monotonic() > deadline:
            break
    return best


def run_benchmark(seconds: float, sizes=SIZES, dims=DIMS) -> list[tuple]:
    import cupy
    import numpy as np
    deadline = time.monotonic() + seconds
    rows = []

    def device_sync(out):
        cupy.cuda.Device().synchronize()
        return out

    def on_host(out):
        return out

    for n in sizes:
        for d in dims:
            if time.monotonic() > deadline:
                rows.append((n, d, None, None, None, None, "skipped: time budget spent"))
                continue
            params, X, src, lap, grad = pinn_workloads(d, n)
            gparams = [(cupy.asarray(w), cupy.asarray(b)) for w, b in params]
            gX, gsrc = cupy.asarray(X), cupy.asarray(src)
            big = n > 10_000  # numpy: one call (a call takes seconds), warm-up included
            note = "numpy: one call, jit's compile included" if big else ""
            gpu_lap = best_call(lambda: lap(gparams, gX), device_sync, 20, deadline)
            gpu_grad = best_call(lambda: grad(gparams, gX, gsrc), device_sync, 20, deadline)
            cpu_lap = best_call(lambda: lap(params, X), on_host, 1 if big else 5, deadline,
                                warm_up=not big)
            # the device computes what numpy computes
            np.testing.assert_allclose(cupy.asnumpy(lap(gparams, gX)), lap(params, X),
                                       rtol=1e-9, atol=1e-9)
            if time.monotonic() > deadline:
                rows.append((n, d, cpu_lap, gpu_lap, None, gpu_grad,
                             "numpy W3 skipped: time budget spent"))
                continue
            cpu_grad = best_call(lambda: grad(params, X, src), on_host, 1 if big else 5,
                                 deadline, warm_up=not big)
            rows.append((n, d, cpu_lap, gpu_lap, cpu_grad, gpu_grad, note))
    return rows


def _ms(t) -> str:
    return "" if t is None else f"{t * 1e3:.2f}"


def _ratio(cpu, gpu) -> str:
    return "" if cpu is None or gpu is None else f"{cpu / gpu:.1f}x"


def markdown(device: str, counter: Counter | None, rows, note: str = "") -> str:
    lines = ["# GPU check", "", f"device: {device}", ""]
    if note:
        lines += [note, ""]
    if counter is not None:
        c = counter.counts
        lines += ["## Primitive case table on CuPy (tests/primitives/test_rules_cupy.py)", "",
                  f"passed {c.get('passed', 0)}, failed {c.get('failed', 0)}, skipped "
                  f"{c.get('skipped', 0)} (of which {counter.out_of_time} for the time budget)",
                  ""]
        if counter.failures:
            lines += ["failed: " + ", ".join(counter.failures[:40]), ""]
    if rows:
        lines += ["## PINN (bench_pinn.py's forward Laplacian, tanh MLP d-64-64-64-1, float64, "
                  "jit): ms per call", "",
                  "| points | d | W2 numpy | W2 CuPy | ratio | W3 numpy | W3 CuPy | ratio | note |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for n, d, cl, gl, cg, gg, why in rows:
            lines.append(f"| {n:,} | {d} | {_ms(cl)} | {_ms(gl)} | {_ratio(cl, gl)} | "
                         f"{_ms(cg)} | {_ms(gg)} | {_ratio(cg, gg)} | {why} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="markdown file to write the figures to")
    ap.add_argument("--budget", type=float, default=330.0,
                    help="seconds for both parts together (default 330)")
    ap.add_argument("--skip-table", action="store_true", help="only the benchmark")
    ap.add_argument("--quick", action="store_true",
                    help="the benchmark at 256 points, d = 2 only (to test this script)")
    args = ap.parse_args(argv)
    start = time.monotonic()
    sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]
    why = cupy_status()
    if why is not None:
        text = markdown("none", None, [], f"skipped: {why}")
        Path(args.out).write_text(text)
        print(f"gpu_check: skipped: {why}")
        return 0
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    device = f"{props['name'].decode() if isinstance(props['name'], bytes) else props['name']}" \
             f", CuPy {cupy.__version__}"
    counter = None
    if not args.skip_table:
        counter = run_case_table(args.budget * 0.4)
        print(f"gpu_check: case table on CuPy: {counter.counts}", flush=True)
    left = max(args.budget - (time.monotonic() - start), 10.0)
    rows = run_benchmark(left, (256,), (2,)) if args.quick else run_benchmark(left)
    text = markdown(device, counter, rows)
    Path(args.out).write_text(text)
    print(text)
    return 1 if counter is not None and counter.counts.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
