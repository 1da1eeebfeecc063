"""One training step of the d = 10 Poisson PINN (examples/pinn_distributed.py) on dask worker
processes against the same step on numpy in one process, measured in one run.

The step is `jit(value_and_grad(loss))(params, points...)` with its loss and gradients back in
the caller as numpy arrays: on dask, `functrans.backends.dask_jit.compute` of the call on
collocation points persisted on the workers (one chunk per worker).

Problem: tanh MLP 10-64-64-64-1, float64, workers x 100,000 collocation points (the Laplacian
by `laplacian`), workers x 1,000 boundary points.

BLAS threads: one, for the numpy process and for every worker process alike (set through
OMP/OPENBLAS/MKL_NUM_THREADS before numpy loads; the workers inherit them): each process uses
one core, and with --workers 2 the dask run uses the machine's two cores. `--numpy-threads 2`
adds the numpy step run in a child process with two BLAS threads (numpy's own way to use the
second core), for comparison.

Reported: the CPU seconds of a step, numpy's and each worker's (load-independent: on a shared
machine wall times measure the other work as much as this one), the median and minimum step
time over --repeats steps after a warm-up step (the
numpy and dask steps interleaved, so that both see the same load on a shared machine), the
speedup (numpy median / dask median), the tasks per step (those the workers ran, from the
task stream), and the scheduler overhead per step: the step's wall time minus the
compute time of its busiest worker (from the task stream), and the step time of the same
graph on 2 points per chunk (all overhead, no work).

    python benchmarks/bench_distributed.py                 # 2 workers x 100,000 points
    python benchmarks/bench_distributed.py --workers 1     # the 1-worker figure
    python benchmarks/bench_distributed.py --n-per-worker 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_ROOT, "examples"))
sys.path.append(_ROOT)

import functrans as ft  # noqa: E402
from pinn_common import init_mlp, lhs  # noqa: E402
from pinn_poisson_nd import boundary_points, make_point_loss, point_arrays  # noqa: E402

D, WIDTH = 10, 64


def problem(n_f, n_b, seed=0):
    rng = np.random.default_rng(seed)
    z_f = lhs(rng, n_f, np.zeros(D), np.ones(D))
    z_b = boundary_points(rng, n_b, D)
    params = init_mlp(rng, [D, WIDTH, WIDTH, WIDTH, 1])
    return params, point_arrays(z_f, z_b)


def timed(step, repeats):
    step()  # warm-up: trace, compile, first workspace
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times


def numpy_step(n_f, n_b):
    params, points = problem(n_f, n_b)
    vg = ft.jit(ft.value_and_grad(make_point_loss(D)[0]))
    return lambda: vg(params, *points)


def dask_step(client, n_f, n_b, n_chunks):
    import dask.array as da
    from distributed import wait

    from functrans.backends.dask_jit import compute
    params, points = problem(n_f, n_b)
    on = client.persist([da.from_array(x, chunks=(-(-len(x) // n_chunks), *x.shape[1:]))
                         for x in points])
    wait(on)
    vg = ft.jit(ft.value_and_grad(make_point_loss(D)[0]))
    return lambda: compute(vg(params, *on))


def task_stream_figures(client, step):
    """(tasks the workers ran, step wall time - the busiest worker's compute time) of a step."""
    from distributed import get_task_stream
    with get_task_stream(client) as ts:
        t0 = time.perf_counter()
        step()
        wall = time.perf_counter() - t0
    busy = {}
    for rec in ts.data:
        for s in rec["startstops"]:
            if s["action"] == "compute":
                busy[rec["worker"]] = busy.get(rec["worker"], 0.0) + s["stop"] - s["start"]
    return len({rec["key"] for rec in ts.data}), wall - max(busy.values())


def cpu_seconds(client, steps):
    """CPU seconds of one numpy step (this process) and of one dask step on each worker: what a
    step costs whatever else runs on the machine (wall times on a loaded machine are not)."""
    t0 = time.process_time()
    steps["numpy"]()
    cpu_np = time.process_time() - t0
    before = client.run(time.process_time)
    steps["dask"]()
    after = client.run(time.process_time)
    return cpu_np, sorted(after[w] - before[w] for w in after)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--n-per-worker", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--numpy-threads", type=int, default=1,
                    help="also time numpy with this many BLAS threads (child process)")
    ap.add_argument("--numpy-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n_f, n_b = args.workers * args.n_per_worker, args.workers * 1000
    if args.numpy_only:
        times = timed(numpy_step(n_f, n_b), args.repeats)
        print(f"{np.median(times):.4f} {min(times):.4f}")
        return
    print(f"load before: {os.getloadavg()[0]:.2f} (1-minute average), {os.cpu_count()} cores")
    print(f"problem: d = {D}, MLP {D}-{WIDTH}-{WIDTH}-{WIDTH}-1, {n_f} collocation points, "
          f"{n_b} boundary points; BLAS threads {os.environ['OPENBLAS_NUM_THREADS']} per "
          "process")
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        steps = {"numpy": numpy_step(n_f, n_b),
                 "dask": dask_step(client, n_f, n_b, args.workers)}
        for step in steps.values():
            step()  # warm-up: trace, compile, first workspace
        times = {name: [] for name in steps}
        for _ in range(args.repeats):  # interleaved: both see the same load
            for name, step in steps.items():
                t0 = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - t0)
        ref, result = steps["numpy"](), steps["dask"]()
        tasks, overhead = task_stream_figures(client, steps["dask"])
        cpu_np, cpu_workers = cpu_seconds(client, steps)
        empty = timed(dask_step(client, 2 * args.workers, 2 * args.workers, args.workers),
                      args.repeats)
    np_times = times["numpy"]
    print(f"numpy, 1 process:         median {np.median(np_times):.3f} s, "
          f"min {min(np_times):.3f} s")
    if args.numpy_threads > 1:
        env = dict(os.environ, OMP_NUM_THREADS=str(args.numpy_threads),
                   OPENBLAS_NUM_THREADS=str(args.numpy_threads),
                   MKL_NUM_THREADS=str(args.numpy_threads))
        out = subprocess.run([sys.executable, __file__, "--numpy-only", "--workers",
                              str(args.workers), "--n-per-worker", str(args.n_per_worker),
                              "--repeats", str(args.repeats)], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        print(f"numpy, 1 process, {args.numpy_threads} BLAS threads (run after): median "
              f"{float(out[0]):.3f} s, min {float(out[1]):.3f} s")
    times = times["dask"]
    ref_leaves = [np.asarray(x) for x in ft.tree_util.tree_leaves(ref)]
    err = max(float(np.max(np.abs(a - np.asarray(b))) / max(1.0, float(np.max(np.abs(a)))))
              for a, b in zip(ref_leaves, ft.tree_util.tree_leaves(result)))
    n_params = sum(int(np.size(x)) for x in ref_leaves[1:])
    print(f"dask, {args.workers} worker processes: median {np.median(times):.3f} s, "
          f"min {min(times):.3f} s")
    print(f"speedup (numpy median / dask median): {np.median(np_times) / np.median(times):.2f}x"
          "; step by step: " + " ".join(f"{a / b:.2f}" for a, b in zip(np_times, times)))
    print(f"tasks per step: {tasks} ({args.workers} chunks)")
    print(f"CPU seconds per step: numpy {cpu_np:.3f} s; dask workers "
          + ", ".join(f"{c:.3f}" for c in cpu_workers) + f" s (sum {sum(cpu_workers):.3f} s); "
          f"numpy CPU / busiest worker's CPU: {cpu_np / max(cpu_workers):.2f}x")
    print(f"scheduler overhead per step: {overhead * 1e3:.1f} ms (wall - busiest worker's "
          f"compute); the same step on 2 points per chunk: {np.median(empty) * 1e3:.1f} ms")
    print(f"bytes per step: parameters out {8 * n_params} B per chunk task, gradients back "
          f"{8 * n_params} B")
    print(f"max relative difference, dask vs numpy loss and gradients: {err:.1e}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
