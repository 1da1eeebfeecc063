"""Bessel functions of real order and the error functions on complex input
(functrans.scipy.special): values equal scipy's, derivatives equal the recurrences' closed
forms and float64 central differences to second order, and the refusals (a derivative in the
order; scipy missing) name the fix."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
from functrans.errors import ArgumentError
from functrans.scipy import special as fsp
from functrans.test_util import check_grads

ss = pytest.importorskip("scipy.special")   # the values are scipy's: nothing to compare without

X = np.array([0.3, 1.7, 4.2, 11.5])
ORDERS = np.array([0.0, 1.0, 2.5, 4.0])


@pytest.mark.parametrize("name", ["j0", "j1", "y0", "y1"])
def test_fixed_order_values_and_derivatives(name):
    f = getattr(fsp, name)
    np.testing.assert_allclose(f(X), getattr(ss, name)(X), rtol=1e-14, atol=1e-300)
    check_grads(f, (X,), order=2, modes=("fwd", "rev"))
    # the derivative of J_n / Y_n is ss.jvp / ss.yvp (scipy's own derivative formula)
    order, family = int(name[1]), ss.jvp if name[0] == "j" else ss.yvp
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(X), family(order, X), rtol=1e-12)


@pytest.mark.parametrize("name", ["jv", "yv", "iv", "ive", "kv", "jn", "yn"])
def test_real_order_values_and_derivatives(name):
    f = getattr(fsp, name)
    orders = ORDERS if name not in ("jn", "yn") else ORDERS.astype(int)
    np.testing.assert_allclose(f(orders, X), getattr(ss, name)(orders, X), rtol=1e-13)
    check_grads(lambda x: f(orders, x), (X,), order=2, modes=("fwd", "rev"))
    want = {"jv": ss.jvp, "yv": ss.yvp, "iv": ss.ivp, "kv": ss.kvp, "jn": ss.jvp,
            "yn": ss.yvp}
    if name == "ive":   # d/dx [I_v(x) e^-x] for x > 0
        deriv = (ss.ivp(ORDERS, X) - ss.iv(ORDERS, X)) * np.exp(-X)
    else:
        deriv = want[name](orders, X)
    got = ft.jvp(lambda x: f(orders, x), (X,), (np.ones_like(X),))[1]
    np.testing.assert_allclose(got, deriv, rtol=1e-11)


def test_order_has_no_derivative():
    with pytest.raises(ArgumentError, match="`v`.*stop_gradient"):
        ft.grad(lambda v: fsp.jv(v, 2.0))(1.0)
    # a traced order with no tangent is fine (vmap over orders)
    np.testing.assert_allclose(ft.vmap(lambda v: fsp.iv(v, 2.0))(ORDERS), ss.iv(ORDERS, 2.0),
                               rtol=1e-14)


Z = np.array([0.3 + 0.7j, -1.2 + 0.1j, 2.0 - 1.5j])


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_error_functions_of_complex_input(name):
    f = getattr(fsp, name)
    np.testing.assert_allclose(f(Z), getattr(ss, name)(Z), rtol=1e-14)
    # holomorphic: d erf = 2/sqrt(pi) exp(-z^2)
    sign = 1.0 if name == "erf" else -1.0
    got = ft.vmap(ft.grad(f, holomorphic=True))(Z)
    np.testing.assert_allclose(got, sign * 2 / np.sqrt(np.pi) * np.exp(-Z ** 2), rtol=1e-13)
    check_grads(lambda z: ft.numpy.real(f(z)), (Z,), order=2, modes=("fwd", "rev"))


def test_without_scipy_the_rows_say_so():
    # a fresh interpreter in which importing scipy fails (test_special.py's finder)
    code = ("import importlib.abc, sys\n"
            "class NoScipy(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'scipy' or name.startswith('scipy.'):\n"
            "            raise ImportError('scipy is not installed (test)')\n"
            "sys.meta_path.insert(0, NoScipy())\n"
            "import numpy as np, functrans.scipy.special as fsp\n"
            "from functrans.errors import DTypeError\n"
            "for call in (lambda: fsp.j0(np.ones(2)), lambda: fsp.erf(np.ones(2) + 1j)):\n"
            "    try:\n"
            "        call()\n"
            "    except DTypeError as e:\n"
            "        assert 'pip install scipy' in str(e), e\n"
            "    else:\n"
            "        raise AssertionError('no error')\n"
            "print(float(fsp.erf(0.5)))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert abs(float(out.stdout) - 0.5204998778130465) < 1e-15
