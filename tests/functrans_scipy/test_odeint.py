"""odeint (functrans.experimental.ode and functrans.scipy.integrate) against JAX's
jax.experimental.ode.odeint: values and reverse-mode gradients in y0, t and the extra
arguments, recorded in odeint_jax_fixtures.json (re-record with JAX installed:
`python tests/functrans_scipy/test_odeint.py`) and live when JAX is installed; values against
closed forms and scipy's LSODA; gradients against float64 central differences."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.integrate as fsi
from functrans.errors import ArgumentError
from functrans.transforms.custom import CustomVJPForwardModeError
from functrans.experimental.ode import odeint

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "odeint_jax_fixtures.json")

_RNG = np.random.default_rng(3)
Y0, A1, A2 = _RNG.normal(size=3), _RNG.normal(size=3), _RNG.normal(size=3)
T = np.linspace(0.1, 0.3, 4)
W = _RNG.normal(size=(4, 3))


def _program(m, odeint_):
    """(ys, loss): HIPS autograd's test system, with a scalar loss for the gradients."""
    def func(y, t, a1, a2):
        return -m.sqrt(t) - y + a1 - m.mean((y + a2) ** 2)

    def ys(y0, t, a1, a2):
        return odeint_(func, y0, t, a1, a2)

    def loss(y0, t, a1, a2):
        return m.sum(ys(y0, t, a1, a2) * W)
    return ys, loss


def results(ft_, m, odeint_):
    ys, loss = _program(m, odeint_)
    grads = ft_.grad(loss, argnums=(0, 1, 2, 3))(Y0, T, A1, A2)
    return {"value": np.asarray(ys(Y0, T, A1, A2)),
            **{f"grad_{k}": np.asarray(g) for k, g in zip(("y0", "t", "a1", "a2"), grads)}}


def record() -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint
    res = results(jax, jnp, jax_odeint)
    with open(FIXTURES, "w") as f:
        json.dump({"jax_version": jax.__version__,
                   "results": {k: v.tolist() for k, v in res.items()}}, f, sort_keys=True)
        f.write("\n")


def _compare(got, want):
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-11, err_msg=k)


def test_equals_recorded_jax():
    with open(FIXTURES) as f:
        want = json.load(f)["results"]
    _compare(results(ft, fnp, odeint), want)


def test_equals_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint
    _compare(results(ft, fnp, odeint), results(jax, jnp, jax_odeint))


def _tight(func, y0, t, *args):
    """odeint at tolerances where the solution's rounding is below the differences' step:
    the adjoint gradient is that of the exact solution."""
    return odeint(func, y0, t, *args, rtol=1e-12, atol=1e-12)


def test_gradients_match_central_differences():
    _, loss = _program(fnp, _tight)
    grads = ft.grad(loss, argnums=(0, 1, 2, 3))(Y0, T, A1, A2)
    args = [Y0, T, A1, A2]
    rng = np.random.default_rng(0)
    for k, g in enumerate(grads):
        d = rng.normal(size=args[k].shape) * (0.1 if k == 1 else 1.0)  # keep t increasing
        eps = 1e-5
        plus = [a + eps * d if i == k else a for i, a in enumerate(args)]
        minus = [a - eps * d if i == k else a for i, a in enumerate(args)]
        fd = (loss(*plus) - loss(*minus)) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6, atol=1e-8)


def test_second_order_reverse_matches_differences_of_the_gradient():
    _, loss = _program(fnp, _tight)
    grad_y0 = ft.grad(loss)
    hvp = ft.grad(lambda y0: fnp.vdot(grad_y0(y0, T, A1, A2), A1))(Y0)
    eps = 1e-5
    fd = (grad_y0(Y0 + eps * A1, T, A1, A2) - grad_y0(Y0 - eps * A1, T, A1, A2)) / (2 * eps)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-8)


def test_values_equal_closed_form_and_pytrees():
    t = np.linspace(0.0, 2.0, 5)
    ys = odeint(lambda y, t, k: {"a": -k * y["a"], "b": fnp.sum(y["a"])},
                {"a": np.array([1.0, 2.0]), "b": np.zeros(())}, t, 0.5)
    np.testing.assert_allclose(ys["a"], np.exp(-0.5 * t)[:, None] * [1.0, 2.0], rtol=1e-7)
    np.testing.assert_allclose(ys["b"], 6.0 * (1 - np.exp(-0.5 * t)), rtol=1e-7, atol=1e-9)


def test_scipy_signature_equals_scipy():
    si = pytest.importorskip("scipy.integrate")
    t = np.linspace(0.0, 3.0, 7)
    y0 = np.array([1.0, 0.0])

    def f(y, t, w):
        return fnp.stack([y[1], -w ** 2 * y[0] + 0.1 * fnp.sin(t)])

    def f_np(y, t, w):
        return np.array([y[1], -w ** 2 * y[0] + 0.1 * np.sin(t)])

    got = fsi.odeint(f, y0, t, args=(1.3,))
    np.testing.assert_allclose(got, si.odeint(f_np, y0, t, args=(1.3,)), atol=1e-6)
    got_tfirst = fsi.odeint(lambda t, y, w: f(y, t, w), y0, t, args=(1.3,), tfirst=True)
    np.testing.assert_allclose(got_tfirst, got, rtol=1e-12)


def test_refusals_name_the_fix():
    with pytest.raises(ArgumentError, match="LSODA"):
        fsi.odeint(lambda y, t: -y, np.ones(1), np.array([0.0, 1.0]), full_output=1)
    with pytest.raises(TypeError, match="float times"):
        odeint(lambda y, t: -y, np.ones(1), np.array([0, 1]))
    with pytest.raises(CustomVJPForwardModeError):
        ft.jvp(lambda y0: odeint(lambda y, t: -y, y0, np.array([0.0, 1.0])), (np.ones(1),),
               (np.ones(1),))


if __name__ == "__main__":
    record()
