"""The whole primitive case table (values, jit, JVP, VJP, batching) with CuPy inputs on a GPU:
results must be CuPy arrays equal to the numpy results (see library_cases.py). Skipped unless
CuPy imports and sees a GPU; scripts/gpu_check.py runs it on a GPU machine."""

import numpy as np
import pytest

from primitives.cases import all_cases
from primitives.library_cases import Library, check_jvp_vjp, check_values, \
    check_vmap

cupy = pytest.importorskip("cupy")
try:
    _GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception:  # CuPy installed without a driver or device
    _GPUS = 0
pytestmark = pytest.mark.skipif(_GPUS == 0, reason="CuPy sees no GPU")

CASES = all_cases()

CUPY = Library("cupy", lambda a: cupy.asarray(np.asarray(a)), cupy.asnumpy,
               lambda x: isinstance(x, cupy.ndarray), refuses_numpy_operands=True)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_on_cupy(case):
    check_values(CUPY, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.differentiable], ids=str)
def test_jvp_and_vjp_on_cupy(case):
    check_jvp_vjp(CUPY, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=str)
def test_vmap_on_cupy(case):
    check_vmap(CUPY, case)


def test_jit_runs_on_the_device():
    import functrans as ft
    import functrans.numpy as fnp
    f = ft.jit(ft.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)))
    x = np.linspace(-1.0, 1.0, 7)
    out = f(cupy.asarray(x))
    assert isinstance(out, cupy.ndarray)
    # d/dx tanh(x)^2 = 2 tanh(x) (1 - tanh(x)^2)
    np.testing.assert_allclose(cupy.asnumpy(out), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
                               rtol=1e-12)
    assert f.cache_info().currsize == 1
