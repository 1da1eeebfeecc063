"""functrans/backends/dask.py: dask arrays in, lazy dask arrays out, for eager
functrans.numpy calls and every transform; nothing is computed behind the caller's back."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _untouchable(shape=(6,), chunks=3):
    """A dask array whose computation raises: a result built from it proves nothing ran."""
    def boom(block):
        raise AssertionError("a dask array was computed")
    return da.map_blocks(boom, da.zeros(shape, chunks=chunks), dtype=np.float64)


def loss(x):
    return fnp.sum(fnp.tanh(x) ** 2)


@pytest.mark.parametrize("call", [
    lambda x: fnp.sin(x), lambda x: fnp.add(x, np.ones(6)), lambda x: fnp.sum(x),
    lambda x: fnp.mean(x * 2.0), lambda x: fnp.where(x > 0, x, 0.0), lambda x: fnp.sort(x),
    lambda x: fnp.asarray(x), lambda x: fnp.array(x), lambda x: fnp.stack([x, x]),
    lambda x: fnp.cumsum(x), lambda x: fnp.linalg.norm(x), lambda x: fnp.exp(x).copy(),
    lambda x: ft.grad(loss)(x), lambda x: ft.jit(loss)(x), lambda x: ft.vmap(fnp.sin)(x),
    lambda x: ft.jit(ft.grad(loss))(x), lambda x: ft.jvp(loss, (x,), (x,))[1],
    lambda x: ft.vjp(fnp.sin, x)[1](x)[0], lambda x: ft.hessian(loss)(x[:2]),
], ids=["sin", "add-numpy", "sum", "mean", "where", "sort", "asarray", "array", "stack",
        "cumsum", "norm", "copy", "grad", "jit", "vmap", "jit-grad", "jvp", "vjp", "hessian"])
def test_results_are_lazy_dask_arrays(call):
    out = call(_untouchable())
    assert isinstance(out, da.Array), type(out)


def test_values_match_numpy_and_closed_forms():
    x = np.linspace(-1.0, 1.0, 6)
    dx = da.from_array(x, chunks=3)
    # d/dx sum tanh(x)^2 = 2 tanh(x) (1 - tanh(x)^2)
    expected = 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
    for f in (ft.grad(loss), ft.jit(ft.grad(loss))):
        np.testing.assert_allclose(f(dx).compute(), expected, rtol=1e-12)
    np.testing.assert_allclose(fnp.sin(dx).compute(), np.sin(x), rtol=0, atol=0)


def test_elementwise_work_stays_chunked():
    x = da.from_array(np.linspace(0.0, 1.0, 8), chunks=2)
    assert fnp.sin(x).numblocks == (4,)
    assert ft.jit(lambda v: fnp.exp(v) * 2.0)(x).numblocks == (4,)


def test_jit_on_dask_runs_the_numpy_program_per_chunk():
    # chunked dask arguments are lowered to tasks running the numpy program on each block
    # (functrans.backends.dask_jit): the numpy compilation serves both, the result stays lazy
    f = ft.jit(loss)
    x = np.linspace(-1.0, 1.0, 6)
    a = f(x)
    b = f(da.from_array(x, chunks=3))
    c = f(x + 1.0)
    assert type(a) is not da.Array and isinstance(b, da.Array) and type(c) is not da.Array
    assert f.cache_info().currsize == 1 and f.trace_count == 1
    np.testing.assert_allclose(b.compute(), a, rtol=1e-14)


def test_unknown_chunk_sizes_name_the_fix():
    x = da.from_array(np.arange(6.0), chunks=3)
    y = x[x > 2]  # shape (nan,)
    with pytest.raises(DTypeError, match="compute_chunk_sizes"):
        ft.grad(loss)(y)


def test_mixing_numpy_and_python_scalars_is_fine():
    x = da.from_array(np.arange(4.0), chunks=2)
    out = fnp.multiply(fnp.add(x, np.arange(4.0)), 2)
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), 4 * np.arange(4.0))


def test_whole_array_primitives_stay_lazy_and_exact():
    from functrans.backends import dask as adapter
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4)) + 4 * np.eye(4)
    got = fnp.linalg.inv(da.from_array(a, chunks=(2, 4, 4)))
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), np.linalg.inv(a), rtol=1e-12)
    assert "inv" in adapter.WHOLE_ARRAY


def test_on_a_cluster_of_worker_processes():
    # the tasks carry primitives by name: a worker process runs its own registered row
    distributed = pytest.importorskip("distributed")
    x = np.linspace(-1.0, 1.0, 8)
    dx = da.from_array(x, chunks=4)
    g = ft.jit(ft.grad(lambda v: fnp.sum(fnp.tanh(v) ** 2 + fnp.sort(v))))(dx)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        got = g.compute()
    # d/dx tanh(x)^2 = 2 tanh(x) (1 - tanh(x)^2); the sorted sum's gradient is all ones
    np.testing.assert_allclose(got, 2 * np.tanh(x) * (1 - np.tanh(x) ** 2) + 1, rtol=1e-12)
