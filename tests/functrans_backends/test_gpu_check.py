"""scripts/gpu_check.py's parts that run without a GPU: the skip path, the outcome counter,
the report table, and the benchmark's workloads (on numpy)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_check.py"


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_cupy_it_says_it_skipped(tmp_path):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here: the skip path does not apply")
    except ImportError:
        pass
    out = tmp_path / "gpu.md"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "skipped" in run.stdout and "CuPy" in run.stdout
    assert "skipped: CuPy does not import" in out.read_text()


def test_counter_counts_outcomes_and_enforces_the_deadline():
    gc = _load()
    counter = gc.Counter(deadline=float("inf"))

    class Report:
        def __init__(self, when, outcome, nodeid="t.py::test_x[case]"):
            self.when, self.outcome, self.nodeid = when, outcome, nodeid

    for r in [Report("setup", "passed"), Report("call", "passed"), Report("call", "failed"),
              Report("setup", "skipped")]:
        counter.pytest_runtest_logreport(r)
    assert counter.counts == {"passed": 1, "failed": 1, "skipped": 1}
    assert counter.failures == ["test_x[case]"]
    late = gc.Counter(deadline=0.0)
    with pytest.raises(pytest.skip.Exception):
        late.pytest_runtest_setup(None)
    assert late.out_of_time == 1


def test_report_table():
    gc = _load()
    counter = gc.Counter(deadline=float("inf"))
    counter.counts.update(passed=10, failed=0, skipped=1)
    text = gc.markdown("GPU X", counter, [(1024, 2, 0.010, 0.002, 0.030, 0.003, ""),
                                          (100_000, 8, None, None, None, None, "skipped")])
    assert "passed 10, failed 0, skipped 1" in text
    assert "| 1,024 | 2 | 10.00 | 2.00 | 5.0x | 30.00 | 3.00 | 10.0x |  |" in text
    assert "| 100,000 | 8 |" in text and "skipped" in text


def test_workloads_are_bench_pinns_on_numpy():
    # in a fresh process: importing bench_pinn pins the process to one CPU
    code = """
import sys, numpy as np
sys.path[:0] = [sys.argv[1], sys.argv[1] + '/benchmarks']
import importlib.util
spec = importlib.util.spec_from_file_location('gc', sys.argv[1] + '/scripts/gpu_check.py')
gc = importlib.util.module_from_spec(spec); spec.loader.exec_module(gc)
params, X, src, lap, grad = gc.pinn_workloads(2, 16)
import bench_pinn as bp
u = lambda x: float(bp.ft_mlp(params, x))
h, x0 = 1e-4, X[0]
fd = sum((u(x0 + h * e) - 2 * u(x0) + u(x0 - h * e)) / h ** 2 for e in np.eye(2))
g = grad(params, X, src)
print(X.shape, src.shape, abs(float(np.asarray(lap(params, X))[0]) - fd) < 1e-5,
      len(g) == len(params), g[0][0].shape == params[0][0].shape)
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", code, str(ROOT)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    # the Laplacian agrees with central second differences of the network at one point
    assert run.stdout.split() == ["(16,", "2)", "(16,)", "True", "True", "True"], run.stdout
