"""examples/pinn_distributed.py --quick on a LocalCluster of 2 worker processes: it trains,
prints its relative L2 error, and its loss trajectory equals the single-process numpy run's
(same seed, same points) to 1e-10 (float64; the chunks' partial sums add in another order)."""

import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "pinn_distributed.py")


def _run(tmp_path, name, *extra):
    history = tmp_path / f"{name}.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, SCRIPT, "--quick", "--no-progress", "--no-figure",
                           "--history", str(history), *extra], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    m = re.search(r"relative L2 error: ([0-9.eE+-]+)", proc.stdout)
    assert m, proc.stdout[-2000:]
    return float(m.group(1)), [row[2] for row in json.loads(history.read_text())], proc.stdout


def test_distributed_run_matches_the_numpy_run(tmp_path):
    pytest.importorskip("scipy")        # L-BFGS (the examples extra)
    pytest.importorskip("dask.array")
    pytest.importorskip("distributed")
    err_np, losses_np, _ = _run(tmp_path, "numpy", "--single-process")
    err, losses, out = _run(tmp_path, "dask", "--workers", "2")
    assert "dask: 2 workers, 2 chunks" in out
    assert err < 0.1, f"relative L2 error {err:.3e}"
    assert len(losses) == len(losses_np) > 100
    worst = max(abs(a - b) / abs(b) for a, b in zip(losses, losses_np))
    assert worst < 1e-10, f"loss trajectories differ by {worst:.2e} (relative)"
    assert abs(err - err_np) <= 1e-8 * err_np
