"""Every PINN example's --quick run: it finishes, saves its figure (when matplotlib is there)
and prints a relative L2 error below a loose bound. The full runs' errors are in the examples'
docstrings and README; these only guard against breakage."""

import os
import re
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

# script -> loose bound on the --quick run's relative L2 error
BOUNDS = {
    "pinn_poisson_1d.py": 2e-2,
    "pinn_poisson_2d.py": 0.2,
    "pinn_heat.py": 5e-2,
    "pinn_poisson_nd.py": 0.1,
    "pinn_burgers.py": 0.6,
    "pinn_burgers_torch.py": 0.95,
    "pinn_kdv.py": 2e-2,
    "pinn_plate.py": 5e-2,
    "pinn_schrodinger.py": 0.6,
    "pinn_allen_cahn.py": 0.2,
}


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.parametrize("script", sorted(BOUNDS))
def test_quick_run(script, tmp_path):
    pytest.importorskip("scipy")  # L-BFGS and the Burgers reference (the examples extra)
    figure = tmp_path / (script[:-3] + ".png")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, script), "--quick",
                           "--no-progress", "--figure", str(figure)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    m = re.search(r"relative L2 error: ([0-9.eE+-]+)", proc.stdout)
    assert m, proc.stdout[-2000:]
    err = float(m.group(1))
    assert err < BOUNDS[script], f"{script} --quick: relative L2 error {err:.3e}"
    if _has_matplotlib():
        assert figure.exists() and figure.stat().st_size > 0
    print(f"{script} --quick: error {err:.3e}, {wall:.1f} s")


def _run_snippet(code, tmp_path):
    """What `code` prints, run in a fresh interpreter that imports the examples' modules."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, EXAMPLES] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                            if p]))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


UNTIL = """
import numpy as np
import functrans.numpy as fnp
import pinn_common

checks = []

def until(p):
    checks.append(float(np.abs(p[0] - 3.0).max()))
    return checks[-1] < 1e-6

params, history = pinn_common.train(lambda p: fnp.sum((p[0] - 3.0) ** 2), [np.zeros(2)],
                                    adam_steps=20, lbfgs_iters=500, lr=0.1, progress=False,
                                    log_every=1, until=until)
print(len(history), *checks)
"""


def test_training_stops_the_first_time_until_answers_true(tmp_path):
    # the time-to-accuracy runs of benchmarks/bench_pinn_training.py rely on it
    pytest.importorskip("scipy")
    steps, *checks = _run_snippet(UNTIL, tmp_path).split("\n")[-2].split()
    checks = [float(c) for c in checks]
    assert checks[-1] < 1e-6 and all(c >= 1e-6 for c in checks[:-1])
    # Adam's 20 steps, then L-BFGS, checked after every step: it stops early
    assert int(steps) == len(checks) < 520


CONTINUED = """
import numpy as np
import functrans.numpy as fnp
import pinn_allen_cahn as ac
from pinn_common import init_mlp

rng = np.random.default_rng(0)
p, q = init_mlp(rng, [5, 8, 8, 1]), init_mlp(rng, [5, 8, 8, 1])
t0, x = 0.3, rng.uniform(-1, 1, 5)
start = lambda x: fnp.cos(3.0 * x) * fnp.sin(x)

# the start's values at t0 whatever the parameters
u = ac.continued(q, t0, start)
print(max(abs(float(u(np.array([t0, xi]))) - np.cos(3 * xi) * np.sin(xi)) for xi in x))

# the network itself when the start is that network's values at t0
v = ac.continued(p, t0, lambda x: ac.u_net(p, fnp.stack([t0, x])))
z = np.stack([rng.uniform(0.3, 0.5, 5), x], 1)
print(max(abs(float(v(zi)) - float(ac.u_net(p, zi))) for zi in z))

# the residual from the carried start (s, s_xx) against central differences of u in float64
r = np.asarray([ac.continued_residual(q, zi, t0=t0) for zi in ac.with_start(start, z)])
h, k = 1e-5, 1e-4
U = lambda t, x: float(u(np.array([t, x])))
fd = np.array([(U(t + h, x) - U(t - h, x)) / (2 * h)
               - ac.EPS * (U(t, x + k) - 2 * U(t, x) + U(t, x - k)) / (k * k)
               + ac.GAMMA * (U(t, x) ** 3 - U(t, x)) for t, x in z])
print(np.abs(r - fd).max())
"""


def test_allen_cahn_window_continues_the_last_one_exactly(tmp_path):
    at_start, continuation, residual = (float(s) for s in _run_snippet(CONTINUED,
                                                                        tmp_path).split())
    assert at_start < 1e-15 and continuation < 1e-15
    assert residual < 1e-7
