"""jit over chunked dask arrays (functrans.backends.dask_jit): results against closed forms
computed with numpy, the shape of the graph (one fused task per chunk), the fallback for
programs that mix points across chunks."""

import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from functrans.backends.dask_jit import compute, split_plan  # noqa: E402


def _points(rng, n, d, chunks):
    x = rng.uniform(-1, 1, (n, d))
    return x, da.from_array(x, chunks=(chunks, d))


def _program_runs(monkeypatch):
    """Counts the staged programs run (one per chunk per pass, one for the rest)."""
    from functrans.backends import dask_jit
    runs = []
    call = dask_jit._Task.__call__

    def counted(self, *args):
        runs.append(self)
        return call(self, *args)

    monkeypatch.setattr(dask_jit._Task, "__call__", counted)
    return runs


@pytest.mark.parametrize("chunks", [10, 7, 40])
def test_weight_gradient_matches_closed_form(chunks):
    # f(w) = mean_i tanh(x_i . w)^2, grad = (2/n) X^T (t (1 - t^2)), t = tanh(X w)
    rng = np.random.default_rng(0)
    x, xd = _points(rng, 40, 3, chunks)
    w = rng.standard_normal(3)

    def f(w, x):
        return fnp.mean(fnp.tanh(x @ w) ** 2)

    value, grad = compute(ft.jit(ft.value_and_grad(f))(w, xd))
    t = np.tanh(x @ w)
    np.testing.assert_allclose(value, np.mean(t ** 2), rtol=1e-13)
    np.testing.assert_allclose(grad, 2 / 40 * x.T @ (t * (1 - t ** 2)), rtol=1e-12,
                               atol=1e-15)


def test_one_fused_task_per_chunk_and_one_reduction(monkeypatch):
    rng = np.random.default_rng(1)
    x, xd = _points(rng, 60, 2, 20)
    w = rng.standard_normal((2, 5))

    def loss(w, x):
        h = fnp.tanh(x @ w)
        return fnp.sum(h * h)

    vg = ft.jit(ft.value_and_grad(loss))
    runs = _program_runs(monkeypatch)
    value, grad = compute(vg(w, xd), scheduler="sync")
    assert len(runs) == 3 + 1  # 60 points in chunks of 20: three fused tasks, then the rest
    h = np.tanh(x @ w)
    np.testing.assert_allclose(value, np.sum(h * h), rtol=1e-13)
    np.testing.assert_allclose(grad, x.T @ (2 * h * (1 - h * h)), rtol=1e-12)
    plan = split_plan(vg.lower(w, x).jaxpr, (None, 60))
    assert plan.reason is None and len(plan.passes) == 1


def test_max_and_min_gradients_run_in_passes(monkeypatch):
    # d max(h)/dw: the rows where h attains its max, averaged over ties (JAX's rule); the
    # count of ties is itself a reduction, so the gradient needs three passes over the chunks
    rng = np.random.default_rng(9)
    x, xd = _points(rng, 60, 2, 20)
    w = rng.standard_normal(2)

    def loss(w, x):
        h = fnp.tanh(x @ w)
        return fnp.sum(h * h) + fnp.max(h) - fnp.min(h)

    vg = ft.jit(ft.value_and_grad(loss))
    runs = _program_runs(monkeypatch)
    value, grad = compute(vg(w, xd), scheduler="sync")
    assert len(runs) == 3 * 3 + 1
    h = np.tanh(x @ w)
    np.testing.assert_allclose(value, np.sum(h * h) + h.max() - h.min(), rtol=1e-13)
    dh = 2 * h + (h == h.max()) - (h == h.min())
    np.testing.assert_allclose(grad, x.T @ (dh * (1 - h * h)), rtol=1e-12)


def test_per_point_output_stays_chunked():
    rng = np.random.default_rng(2)
    x, xd = _points(rng, 30, 4, 8)
    w = rng.standard_normal(4)
    f = ft.jit(lambda w, x: (fnp.sin(x @ w)[:, None] * x).T)  # a transposed per-point result
    out = f(w, xd)
    assert isinstance(out, da.Array) and out.chunks[1] == (8, 8, 8, 6)
    np.testing.assert_allclose(compute(out), (np.sin(x @ w)[:, None] * x).T, rtol=1e-14)


def test_reduced_value_feeding_per_point_work_runs_in_two_passes():
    # softmax-like normalisation: e / sum(e), then a weighted sum over the points
    rng = np.random.default_rng(3)
    x, xd = _points(rng, 50, 1, 12)
    y = rng.standard_normal(50)
    yd = da.from_array(y, chunks=12)

    def f(x, y):
        e = fnp.exp(x[:, 0])
        p = e / fnp.sum(e)
        return fnp.sum(p * y), p

    jf = ft.jit(f)
    value, p = compute(jf(xd, yd))
    e = np.exp(x[:, 0])
    np.testing.assert_allclose(p, e / e.sum(), rtol=1e-14)
    np.testing.assert_allclose(value, np.sum(e / e.sum() * y), rtol=1e-13)
    plan = split_plan(jf.lower(x, y).jaxpr, (50, 50))
    assert plan.reason is None and [p.level for p in plan.passes] == [0, 1]


def test_two_sets_of_points_of_different_lengths():
    rng = np.random.default_rng(4)
    a, ad = _points(rng, 30, 2, 15)
    b, bd = _points(rng, 8, 2, 3)   # rechunked to two chunks, like `a`
    w = rng.standard_normal(2)
    f = ft.jit(ft.grad(lambda w, a, b: fnp.mean((a @ w) ** 2) + fnp.mean(fnp.sin(b @ w))))
    g = compute(f(w, ad, bd))
    ref = 2 / 30 * a.T @ (a @ w) + b.T @ np.cos(b @ w) / 8
    np.testing.assert_allclose(g, ref, rtol=1e-13)


def test_pinn_gradient_against_finite_differences():
    # the Laplacian of a small tanh network, its residual loss and its parameter gradient
    rng = np.random.default_rng(5)
    d = 3
    z, zd = _points(rng, 24, d, 10)
    params = [(rng.standard_normal((d, 6)) * 0.5, rng.standard_normal(6) * 0.1),
              (rng.standard_normal((6, 1)) * 0.5, rng.standard_normal(1) * 0.1)]

    def u(params, x):
        (w1, b1), (w2, b2) = params
        return (fnp.tanh(x @ w1 + b1) @ w2 + b2)[0]

    def loss(params, z):
        lap = ft.vmap(ft.laplacian(lambda x: u(params, x)))(z)
        return fnp.mean((lap + 1.0) ** 2)

    value, grad = compute(ft.jit(ft.value_and_grad(loss))(params, zd))
    flat, unravel = ft.flatten_util.ravel_pytree(params)

    def lap_loss(p):  # the Laplacian in closed form: sum_k w2_k (-2 t_k (1 - t_k^2)) |w1_k|^2
        (w1, b1), (w2, b2) = unravel(p)
        t = np.tanh(z @ np.asarray(w1) + np.asarray(b1))
        lap = (-2 * t * (1 - t ** 2) * np.sum(np.asarray(w1) ** 2, axis=0)) @ np.asarray(w2)
        return np.mean((lap[:, 0] + 1.0) ** 2)

    np.testing.assert_allclose(value, lap_loss(np.asarray(flat)), rtol=1e-12)
    v = rng.standard_normal(flat.shape)
    eps = 1e-6
    fd = (lap_loss(np.asarray(flat) + eps * v) - lap_loss(np.asarray(flat) - eps * v)) / (2 * eps)
    g = np.asarray(ft.flatten_util.ravel_pytree(grad)[0])
    np.testing.assert_allclose(g @ v, fd, rtol=1e-6)


def test_program_mixing_points_falls_back_to_one_chunk_with_a_warning():
    rng = np.random.default_rng(6)
    x, xd = _points(rng, 20, 1, 5)
    f = ft.jit(lambda x: fnp.sort(x[:, 0])[:3] * 2.0)
    with pytest.warns(da.PerformanceWarning, match="cannot run chunk by chunk"):
        out = f(xd)
    np.testing.assert_array_equal(compute(out), np.sort(x[:, 0])[:3] * 2.0)


def test_closed_over_points_fall_back_correctly():
    rng = np.random.default_rng(7)
    x, xd = _points(rng, 16, 2, 4)
    c = rng.standard_normal((16, 2))   # parameter-sized in the program, but 16 rows
    f = ft.jit(lambda x: fnp.sum(x * c))
    with pytest.warns(da.PerformanceWarning, match="spans the points axis"):
        out = f(xd)
    np.testing.assert_allclose(compute(out), np.sum(x * c), rtol=1e-14)


def test_compute_passes_other_leaves_through():
    x = np.arange(3.0)
    tree = {"a": da.ones(4, chunks=2), "b": x, "c": 1.5}
    out = compute(tree)
    np.testing.assert_array_equal(out["a"], np.ones(4))
    assert out["b"] is x and out["c"] == 1.5


def test_results_do_not_alias_inputs():
    x = np.arange(6.0).reshape(3, 2)
    f = ft.jit(lambda w, x: (w, fnp.sum(x @ w)))
    w = np.ones(2)
    w_out, s = compute(f(w, da.from_array(x, chunks=(2, 2))))
    assert not np.shares_memory(w_out, w)
    np.testing.assert_array_equal(w_out, w)
    assert float(s) == float(np.sum(x))


def test_distributed_workers_run_the_chunks():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(8)
    x, _ = _points(rng, 40, 3, 20)
    w = rng.standard_normal(3)

    def f(w, x):
        return fnp.mean(fnp.tanh(x @ w) ** 2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own startup notices
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            xd = client.persist(da.from_array(x, chunks=(20, 3)))
            value, grad = compute(ft.jit(ft.value_and_grad(f))(w, xd))
    t = np.tanh(x @ w)
    np.testing.assert_allclose(value, np.mean(t ** 2), rtol=1e-13)
    np.testing.assert_allclose(grad, 2 / 40 * x.T @ (t * (1 - t ** 2)), rtol=1e-12)


def test_shared_chunk_work_runs_once(monkeypatch):
    # a per-point result and a reduced one of the same pass: each chunk's program runs once
    rng = np.random.default_rng(10)
    x, xd = _points(rng, 30, 2, 10)
    f = ft.jit(lambda x: (fnp.sin(x), fnp.sum(fnp.sin(x)), fnp.max(x)))
    runs = _program_runs(monkeypatch)
    s, total, top = compute(f(xd), scheduler="sync")
    assert len(runs) == 3 + 1
    np.testing.assert_allclose(s, np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(total, np.sin(x).sum(), rtol=1e-13)
    assert top == x.max()


def test_dask_points_under_an_outer_transform_name_the_fix():
    from functrans.errors import ArgumentTypeError
    xd = da.ones((4, 2), chunks=(2, 2))
    f = ft.jit(lambda w, x: fnp.sum(x @ w))
    with pytest.raises(ArgumentTypeError, match=r"jit\(grad\(f\)\)"):
        ft.grad(lambda w: f(w, xd))(np.ones(2))
