"""functrans.scipy.signal (convolve, correlate) and functrans.scipy.integrate (trapezoid)
against scipy: values on every mode and shape pairing, eagerly, under jit and vmap;
derivatives by float64 central differences to second order (their JAX derivatives are
checked with the numpy names, tests/functrans_numpy/test_names.py); clear errors; and no
scipy needed to import or use them."""

import os
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
import functrans.scipy.integrate as fsi
import functrans.scipy.signal as fss
from functrans.errors import ArgumentError, ShapeError
from functrans.test_util import check_grads

SHAPES = [((7,), (3,)), ((3,), (7,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)),
          ((3, 4, 2), (2, 2, 2)), ((5,), (5,)), ((1, 4), (3, 1))]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_values_equal_scipy(name, mode, sa, sb):
    signal = pytest.importorskip("scipy.signal")
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    ours, theirs = getattr(fss, name), getattr(signal, name)
    try:
        want = theirs(a, b, mode=mode)
    except ValueError:
        with pytest.raises(ShapeError, match="at least as large"):
            ours(a, b, mode=mode)
        return
    for f in (ours, ft.jit(ours, static_argnums=(2,))):
        got = f(a, b, mode)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    got = ft.vmap(lambda x: ours(x, b, mode=mode))(np.stack([a, 2 * a]))
    np.testing.assert_allclose(got[1], theirs(2 * a, b, mode=mode), rtol=1e-12, atol=1e-13)


def test_integer_inputs_keep_scipys_dtype():
    signal = pytest.importorskip("scipy.signal")
    a, b = np.arange(4), np.array([1, -2])
    for name in ("convolve", "correlate"):
        got, want = getattr(fss, name)(a, b), getattr(signal, name)(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_derivatives_match_central_differences(mode):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(2, 2))
    check_grads(lambda x, y: fss.convolve(x, y, mode=mode), (a, b), order=2)
    check_grads(lambda x, y: fss.correlate(x ** 2, y, mode=mode), (a, b), order=2)


def test_trapezoid_equals_scipy_and_differentiates():
    integrate = pytest.importorskip("scipy.integrate")
    rng = np.random.default_rng(2)
    y, x = rng.normal(size=(3, 5)), np.cumsum(rng.uniform(0.1, 1.0, 5))
    for kw in ({}, {"dx": 0.25}, {"x": x}, {"axis": 0, "x": x[:3]}, {"x": rng.normal(size=(3, 5))}):
        np.testing.assert_allclose(fsi.trapezoid(y, **kw), integrate.trapezoid(y, **kw),
                                   rtol=1e-13)
    check_grads(lambda v, c: fsi.trapezoid(v ** 2, x=c), (y, x), order=2)


def test_bad_input_names_the_problem():
    with pytest.raises(ShapeError, match="same dimensionality"):
        fss.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ArgumentError, match="mode must be one of"):
        fss.correlate(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ArgumentError, match="method"):
        fss.convolve(np.ones(3), np.ones(2), method="winograd")
    with pytest.raises(TypeError, match="real and imaginary parts"):
        fss.convolve(np.ones(3) * 1j, np.ones(2))
    with pytest.raises(ShapeError, match="coordinates"):
        fsi.trapezoid(np.ones(4), x=np.ones(3))


def test_signal_and_integrate_import_without_scipy():
    """Importing and using functrans.scipy.signal / integrate never loads scipy (checked in a
    fresh interpreter, since this one may have scipy loaded)."""
    code = ("import sys\n"
            "import functrans.scipy.signal as s, functrans.scipy.integrate as i, numpy as np\n"
            "print(float(s.convolve(np.ones(2), np.ones(2))[1] + i.trapezoid(np.ones(3))),"
            " 'scipy' in sys.modules)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    value, scipy_loaded = out.stdout.split()
    assert float(value) == 4.0
    assert scipy_loaded == "False", "importing or calling functrans.scipy loaded scipy"
