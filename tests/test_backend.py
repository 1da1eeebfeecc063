"""functrans/backend.py: the array library is chosen from the inputs; numpy's namespace is the
default and nothing foreign is imported with functrans."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from functrans import backend
from functrans.errors import DTypeError

ROOT = Path(__file__).resolve().parents[1]


def test_import_functrans_imports_no_other_array_library():
    code = ("import sys, functrans, functrans.numpy, functrans.backend; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'cupy', 'distributed', 'array_api_compat')))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_numpy_inputs_need_no_adapter():
    assert backend.array_library([np.ones(2), 1.0, 3, np.float32(2)]) is None
    assert backend.get_backend() is np
    assert backend.xp.sin is np.sin


def test_two_libraries_in_one_call_name_the_fix():
    class FakeA:
        NAME = "liba"

    class FakeB:
        NAME = "libb"

    class A:
        pass

    class B:
        pass

    backend._ADAPTER_OF_TYPE.update({A: FakeA, B: FakeB})
    try:
        with pytest.raises(DTypeError, match="two array libraries, liba and libb.*Convert"):
            backend.array_library([A(), np.ones(1), B()])
    finally:
        del backend._ADAPTER_OF_TYPE[A], backend._ADAPTER_OF_TYPE[B]


def test_using_routes_only_the_calling_thread():
    da = pytest.importorskip("dask.array")
    from functrans.backends import dask as adapter
    seen = {}

    def elsewhere():
        seen["other"] = backend.xp.zeros(3)

    with backend.using(adapter):
        assert backend.get_backend() is adapter
        mine = backend.xp.zeros(3)
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    assert isinstance(mine, da.Array)
    assert type(seen["other"]) is np.ndarray  # numpy work in another thread stays numpy's
    assert backend.get_backend() is np and backend.xp.zeros is np.zeros
