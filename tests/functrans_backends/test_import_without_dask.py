"""`import functrans` and jit on numpy arrays never import dask or distributed (they are
optional: functrans.backends.dask_jit imports them when called with dask arrays)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_import_functrans_does_not_import_dask():
    code = ("import sys, numpy as np, functrans as ft, functrans.numpy as fnp\n"
            "ft.jit(lambda x: fnp.sum(x))(np.ones(3))\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]"
            ", sorted(m for m in sys.modules if m.startswith('dask'))\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
