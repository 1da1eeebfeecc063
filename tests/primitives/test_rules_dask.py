"""The whole primitive case table (values, jit, JVP, VJP, batching) with dask.array inputs,
chunked in two along the first axis where it has two or more entries: results must be lazy
dask arrays equal to the numpy results (see library_cases.py)."""

import numpy as np
import pytest

from primitives.cases import all_cases
from primitives.library_cases import Library, check_jvp_vjp, check_values, \
    check_vmap

da = pytest.importorskip("dask.array")

CASES = all_cases()


def _make(a):
    a = np.asarray(a)
    chunks = tuple(max(1, -(-n // 2)) if i == 0 else max(n, 1) for i, n in enumerate(a.shape))
    return da.from_array(a, chunks=chunks)


def _back(x):
    return np.asarray(x.compute(scheduler="sync"))


DASK = Library("dask", _make, _back, lambda x: isinstance(x, da.Array))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_on_dask(case):
    check_values(DASK, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.differentiable], ids=str)
def test_jvp_and_vjp_on_dask(case):
    check_jvp_vjp(DASK, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=str)
def test_vmap_on_dask(case):
    check_vmap(DASK, case)


def test_inputs_stay_chunked():
    # the case table's arrays really are split: two chunks along the first axis
    assert _make(np.zeros((4, 3))).numblocks == (2, 1)
