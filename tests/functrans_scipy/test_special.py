"""functrans.scipy.special against scipy.special (values, dtypes), eagerly and traced, with
derivatives against closed forms (softmax) and finite differences."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import special as fsp
from functrans.test_util import check_grads

sps = pytest.importorskip("scipy.special")


def traced(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs[0] if len(outs) == 1 else tuple(outs)


def assert_matches(out, ref, rtol=1e-12):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=0)


def both(f, g, *args, rtol=1e-12):
    ref = g(*args)
    if isinstance(ref, tuple):
        for o, r in zip(f(*args), ref):
            assert_matches(o, r, rtol)
        for o, r in zip(traced(f, *args), ref):
            assert_matches(o, r, rtol)
        return
    assert_matches(f(*args), ref, rtol)
    assert_matches(traced(f, *args), ref, rtol)


def softmax_np(x, axis=None):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


X = np.random.default_rng(0).uniform(-3, 3, (3, 4))


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(axis, keepdims):
    both(lambda a: fsp.logsumexp(a, axis=axis, keepdims=keepdims),
         lambda a: sps.logsumexp(a, axis=axis, keepdims=keepdims), X)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=lambda d: d.__name__)
def test_logsumexp_dtypes(dtype):
    a = (X * 2).astype(dtype)
    both(lambda y: fsp.logsumexp(y, axis=1), lambda y: sps.logsumexp(y, axis=1), a, rtol=2e-6)


def test_logsumexp_0d_and_size_0():
    both(fsp.logsumexp, sps.logsumexp, np.float64(1000.0))
    for shape, axis in [((0,), None), ((0, 3), 0), ((2, 0), 1), ((0, 3), None)]:
        z = np.zeros(shape)
        # the closed form (scipy 1.17 itself fails on size-0 input reduced over several axes)
        for keepdims in (False, True):
            ref = np.full(np.sum(z, axis=axis, keepdims=keepdims).shape, -np.inf)
            if len(shape) == 1 or axis is not None:
                assert_matches(sps.logsumexp(z, axis=axis, keepdims=keepdims), ref)
            assert_matches(fsp.logsumexp(z, axis=axis, keepdims=keepdims), ref)
            assert_matches(traced(lambda y: fsp.logsumexp(y, axis=axis, keepdims=keepdims), z),
                           ref)


def test_logsumexp_is_stable_and_handles_infinities():
    big = np.array([[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1e308]])
    both(lambda y: fsp.logsumexp(y, axis=1), lambda y: sps.logsumexp(y, axis=1), big)
    special = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0], [-np.inf, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warnings on the way (inf - inf, log 0)
        both(lambda y: fsp.logsumexp(y, axis=1), lambda y: sps.logsumexp(y, axis=1), special)


def test_logsumexp_with_weights_and_signs():
    rng = np.random.default_rng(1)
    b = rng.uniform(0.1, 2.0, X.shape)
    for axis in (None, 0, 1):
        both(lambda a, w: fsp.logsumexp(a, axis=axis, b=w),
             lambda a, w: sps.logsumexp(a, axis=axis, b=w), X, b)
    bvec = np.array([1.0, 0.0, 2.0, 0.5])  # broadcast weights, one of them zero
    both(lambda a: fsp.logsumexp(a, axis=1, b=bvec),
         lambda a: sps.logsumexp(a, axis=1, b=bvec), X)
    signed = np.array([[1.0, -1.0, 0.5, -2.0]])
    both(lambda a: fsp.logsumexp(a, axis=1, b=signed, return_sign=True),
         lambda a: sps.logsumexp(a, axis=1, b=signed, return_sign=True), X)
    both(lambda a: fsp.logsumexp(a, b=np.array([1.0, -1.0]), return_sign=True),
         lambda a: sps.logsumexp(a, b=np.array([1.0, -1.0]), return_sign=True),
         np.array([2.0, 2.0]))
    # a negative total without return_sign is nan, as in scipy
    out = fsp.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -2.0]))
    assert np.isnan(out) and np.isnan(sps.logsumexp([1.0, 2.0], b=[1.0, -2.0]))
    both(lambda a: fsp.logsumexp(a, b=np.zeros(2)), lambda a: sps.logsumexp(a, b=np.zeros(2)),
         np.array([1.0, 2.0]))


def test_logsumexp_gradient_is_softmax_at_large_inputs():
    x = np.array([[1000.0, 1001.0, 999.5], [-1000.0, -1000.0, -998.0]])
    g = ft.grad(lambda a: fnp.sum(fsp.logsumexp(a, axis=1)))(x)
    np.testing.assert_allclose(g, softmax_np(x, axis=1), rtol=1e-13)
    g = ft.grad(fsp.logsumexp)(x)
    np.testing.assert_allclose(g, softmax_np(x), rtol=1e-12, atol=1e-300)
    # finite differences with a step that is meaningful at 1000
    check_grads(lambda a: fsp.logsumexp(a, axis=1), (x,), order=2, eps=1e-5)
    _, t = ft.jvp(lambda a: fsp.logsumexp(a, axis=0), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, [1.0, 1.0, 1.0], rtol=1e-14)


def test_logsumexp_gradient_with_ties_and_weights():
    x = np.array([2.0, 2.0, 1.0])
    np.testing.assert_allclose(ft.grad(fsp.logsumexp)(x), softmax_np(x), rtol=1e-14)
    b = np.array([0.5, 2.0, 1.0])
    check_grads(lambda a, w: fsp.logsumexp(a, b=w), (x, b), order=2)
    check_grads(lambda a: fsp.logsumexp(a, axis=0, keepdims=True), (X,), order=2)


def test_logsumexp_under_vmap():
    out = ft.vmap(lambda r: fsp.logsumexp(r))(X)
    np.testing.assert_allclose(out, sps.logsumexp(X, axis=1), rtol=1e-13)
    out = ft.vmap(lambda c: fsp.logsumexp(c, keepdims=True), in_axes=1)(X)
    np.testing.assert_allclose(out, sps.logsumexp(X, axis=0)[:, None], rtol=1e-13)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax_log_softmax(axis):
    both(lambda a: fsp.softmax(a, axis=axis), lambda a: sps.softmax(a, axis=axis), X)
    both(lambda a: fsp.log_softmax(a, axis=axis), lambda a: sps.log_softmax(a, axis=axis), X)
    check_grads(lambda a: fsp.softmax(a, axis=axis), (X,), order=2)
    check_grads(lambda a: fsp.log_softmax(a, axis=axis), (X,), order=1)
    big = X * 1000
    both(lambda a: fsp.softmax(a, axis=axis), lambda a: sps.softmax(a, axis=axis), big,
         rtol=1e-9)


def test_expit_logit():
    p = np.array([0.01, 0.3, 0.5, 0.99])
    both(fsp.expit, sps.expit, X)
    both(fsp.expit, sps.expit, X.astype(np.float32), rtol=1e-6)
    both(fsp.logit, sps.logit, p)
    both(fsp.expit, sps.expit, np.array([1, 2]))
    check_grads(fsp.expit, (X,), order=2)
    check_grads(fsp.logit, (p,), order=2, rtol=1e-4)


def test_xlogy():
    x = np.array([0.0, 0.0, 2.0, -1.5, 0.0, 3.0])
    y = np.array([0.0, 2.0, 3.0, 0.5, np.inf, 1e-3])
    both(fsp.xlogy, sps.xlogy, x, y)
    both(fsp.xlogy, sps.xlogy, np.array([0, 1, 2]), np.array([0, 1, 4]))
    rng = np.random.default_rng(2)
    check_grads(fsp.xlogy, (rng.uniform(-2, 2, 5), rng.uniform(0.2, 3, 5)), order=2)
    gx, gy = ft.grad(lambda a, b: fnp.sum(fsp.xlogy(a, b)), (0, 1))(x[:2], y[:2])
    # at x == 0: d/dx = log y for positive finite y (as in JAX), 0 where log y is not finite
    np.testing.assert_allclose(gx, [0.0, np.log(2.0)])
    np.testing.assert_allclose(gy, [0.0, 0.0])


def test_functrans_scipy_imports_without_scipy():
    """functrans.scipy is numpy only: importing and using it never loads scipy (checked in a
    fresh interpreter, since this one has scipy loaded), so it works where scipy is absent."""
    code = ("import sys\n"
            "import functrans.scipy.special as s, numpy as np\n"
            "print(float(s.logsumexp(np.zeros(2))), 'scipy' in sys.modules)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    value, scipy_loaded = out.stdout.split()
    assert abs(float(value) - np.log(2)) < 1e-15
    assert scipy_loaded == "False", "importing or calling functrans.scipy loaded scipy"
