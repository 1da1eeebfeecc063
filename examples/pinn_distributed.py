"""The d-dimensional Poisson PINN of pinn_poisson_nd.py, its collocation points on a dask cluster.

    -Laplacian u = (pi^2 / 4) sum_i sin(pi x_i / 2) on [0, 1]^d,  u = exact on the boundary.

The collocation points (and the source term at them) are dask arrays chunked by rows and
persisted on the workers of a dask.distributed cluster. The loss takes them as arguments, so
`jit(value_and_grad(loss))` called on them runs one fused task per chunk (the jitted numpy
program on that chunk's rows) and sums the chunks' partial losses and gradients with dask's
tree reductions (functrans.backends.dask_jit). Per step only the parameters go out to the
workers and gradients (the size of the parameters) come back.

    python examples/pinn_distributed.py                    # LocalCluster: one worker per core
    python examples/pinn_distributed.py --workers 4
    python examples/pinn_distributed.py --scheduler tcp://HOST:8786   # a running cluster
    python examples/pinn_distributed.py --single-process   # the same run on numpy, no dask
    python examples/pinn_distributed.py --quick            # seconds; loose error

For the same seed the points, the initial network and so the loss trajectory are those of
pinn_poisson_nd.py and of --single-process (to float64 rounding: the chunks' sums are added in
another order). `--history PATH` saves the trajectory as JSON.
"""

from __future__ import annotations

import json
import os
import sys

# one BLAS thread per worker process (and in the single-process run): the cores are the workers
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import time  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)                       # pinn_common, pinn_poisson_nd
sys.path.append(os.path.dirname(_HERE))          # functrans from a source checkout

import functrans as ft  # noqa: E402
from pinn_common import parse_args, train  # noqa: E402
from pinn_poisson_nd import finish, make_point_loss, point_arrays, setup  # noqa: E402


def start_client(args):
    """A dask.distributed Client: of the cluster at --scheduler, or of a LocalCluster of
    --workers worker processes (one per core by default), one thread each."""
    from distributed import Client, LocalCluster
    if args.scheduler:
        return Client(args.scheduler), None
    n = args.workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def persisted(client, arrays, n_chunks):
    """numpy arrays of points as dask arrays of `n_chunks` row chunks, held by the workers."""
    import dask.array as da
    out = []
    for x in arrays:
        rows = -(-len(x) // n_chunks)
        out.append(da.from_array(x, chunks=(rows, *x.shape[1:])))
    return client.persist(out)


def main():
    args = parse_args(__doc__.splitlines()[0], adam_steps=3000, lbfgs_iters=3000,
                      quick_adam=150, quick_lbfgs=50,
                      extra=[(("--dim",), dict(type=int, default=10, help="dimension d")),
                             (("--n-f",), dict(type=int, default=None,
                                               help="collocation points (2000; quick 200)")),
                             (("--scheduler",), dict(default=None,
                                                     help="address of a running dask "
                                                          "scheduler, tcp://HOST:PORT")),
                             (("--workers",), dict(type=int, default=None,
                                                   help="LocalCluster worker processes "
                                                        "(default: one per core)")),
                             (("--chunks",), dict(type=int, default=None,
                                                  help="row chunks (default: one per "
                                                       "worker)")),
                             (("--single-process",), dict(action="store_true",
                                                          help="numpy in this process, no "
                                                               "dask")),
                             (("--history",), dict(default=None,
                                                   help="save the loss trajectory (JSON)"))])
    d, z_f, z_b, params = setup(args)
    n_f = len(z_f)
    points = point_arrays(z_f, z_b)
    loss, u_net = make_point_loss(d)
    value_and_grad = ft.jit(ft.value_and_grad(loss))
    client = cluster = None
    if args.single_process:
        def step(p):
            return value_and_grad(p, *points)
        where = "numpy, one process"
    else:
        from functrans.backends.dask_jit import compute
        client, cluster = start_client(args)
        n_workers = len(client.scheduler_info()["workers"])
        n_chunks = args.chunks or n_workers
        on_workers = persisted(client, points, n_chunks)

        def step(p):
            return compute(value_and_grad(p, *on_workers))
        where = f"dask: {n_workers} workers, {n_chunks} chunks ({client.scheduler.address})"
    print(f"{where}: {n_f} collocation points, d = {d}", flush=True)
    try:
        t0 = time.perf_counter()
        params, history = train(loss, params, adam_steps=args.adam_steps,
                                lbfgs_iters=args.lbfgs_iters, lr=2e-3,
                                progress=not args.no_progress, log_every=args.log_every,
                                time_budget=args.time_budget, value_and_grad=step)
        wall = time.perf_counter() - t0
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    if args.history:
        with open(args.history, "w") as f:
            json.dump([[phase, k, loss] for phase, k, loss in history], f)
    return finish(args, u_net, params, history, wall, "pinn_distributed.png",
                  f"Poisson in d = {d} on {where}, relative L2 error {{err:.2e}}")

if __name__ == "__main__":
    main()
