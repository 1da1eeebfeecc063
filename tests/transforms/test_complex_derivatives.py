"""Complex numbers in grad, jacfwd, jacrev, hessian, jvp and vjp: JAX's convention (grad of a
real f of z = x + iy is df/dx - i df/dy; holomorphic=True gives f'(z)), JAX's dtype rules and
their messages, closed forms. JAX's own numbers for the same transforms are compared in
tests/functrans_jax_programs (program complex_and_fft_derivatives) and live below."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError

Z = np.array([0.5 + 1.25j, -1.0 + 0.5j, 2.0 - 0.75j])


def test_grad_of_a_real_function_of_z_is_df_dx_minus_i_df_dy():
    # |z|^2 = x^2 + y^2: 2x - 2iy = 2 conj(z); Re(z^3): d/dx = Re(3z^2), d/dy = -Im(3z^2)
    np.testing.assert_allclose(ft.grad(lambda z: fnp.sum(fnp.abs(z) ** 2))(Z), 2 * np.conj(Z))
    np.testing.assert_allclose(ft.grad(lambda z: fnp.sum(fnp.real(z ** 3)))(Z), 3 * Z ** 2)
    np.testing.assert_allclose(ft.grad(lambda z: fnp.sum(fnp.imag(z ** 3)))(Z),
                               -1j * 3 * Z ** 2)


def test_holomorphic_grad_jacobians_and_hessian_are_complex_derivatives():
    f = lambda z: fnp.sin(z) * z
    df = lambda z: np.cos(z) * z + np.sin(z)
    d2f = lambda z: -np.sin(z) * z + 2 * np.cos(z)
    z0 = Z[0]
    np.testing.assert_allclose(ft.grad(f, holomorphic=True)(z0), df(z0), rtol=1e-14)
    np.testing.assert_allclose(ft.grad(ft.grad(f, holomorphic=True), holomorphic=True)(z0),
                               d2f(z0), rtol=1e-14)
    for jac in (ft.jacfwd, ft.jacrev):
        np.testing.assert_allclose(jac(f, holomorphic=True)(Z), np.diag(df(Z)), rtol=1e-14)
    np.testing.assert_allclose(ft.hessian(lambda z: fnp.sum(f(z)), holomorphic=True)(Z),
                               np.diag(d2f(Z)), rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(ft.grad(f, holomorphic=True))(Z), df(Z), rtol=1e-14)
    v, g = ft.value_and_grad(f, holomorphic=True)(z0)
    assert v == f(z0) and np.isclose(g, df(z0), rtol=1e-14)


def test_jacrev_of_a_real_output_of_complex_input_and_jacfwd_of_complex_output():
    # jacrev: rows are grads (df/dx - i df/dy); jacfwd of real input, complex output: df/dx
    np.testing.assert_allclose(ft.jacrev(lambda z: fnp.abs(z) ** 2)(Z), np.diag(2 * np.conj(Z)))
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(ft.jacfwd(lambda x: fnp.exp(1j * x))(x),
                               np.diag(1j * np.exp(1j * x)), rtol=1e-15)


def test_jvp_and_vjp_with_complex_tangents_and_cotangents():
    f = lambda z: fnp.conj(z) * z + z ** 2   # |z|^2 + z^2: d = conj(z) t + z conj(t) + 2 z t
    t = np.array([1.0 - 2.0j, 0.5j, 3.0 + 0j])
    _, t_out = ft.jvp(f, (Z,), (t,))
    np.testing.assert_allclose(t_out, np.conj(Z) * t + Z * np.conj(t) + 2 * Z * t)
    # the transpose under Re(c t): c -> conj(z) c + conj(z c) + 2 z c
    c = np.array([0.25 + 1j, -1.0 + 0j, 2.0 - 0.5j])
    np.testing.assert_allclose(ft.vjp(f, Z)[1](c)[0],
                               np.conj(Z) * c + np.conj(Z * c) + 2 * Z * c)


@pytest.mark.parametrize("call,match", [
    (lambda: ft.grad(lambda z: z * z)(1j), "grad requires real-valued outputs.*complex128.*"
                                           "holomorphic=True.*ft.vjp"),
    (lambda: ft.jacrev(fnp.sin)(Z), "jacrev requires real-valued outputs.*holomorphic=True"),
    (lambda: ft.jacfwd(fnp.sin)(Z), "jacfwd requires real-valued inputs.*holomorphic=True"),
    (lambda: ft.grad(fnp.sin, holomorphic=True)(1.0), "holomorphic=True requires inputs with "
                                                     "complex dtype.*float64"),
    (lambda: ft.grad(fnp.abs, holomorphic=True)(1j), "holomorphic=True requires outputs with "
                                                    "complex dtype.*float64"),
    (lambda: ft.jacfwd(fnp.abs, holomorphic=True)(Z), "holomorphic=True requires outputs"),
    (lambda: ft.jvp(fnp.sin, (1.0,), (1j,)), "tangent is complex.*real axis"),
    (lambda: ft.vjp(fnp.sin, 1.0)[1](1j), "cotangent 0 is complex.*real part"),
])
def test_refusals_name_the_fix(call, match):
    with pytest.raises(DTypeError, match=match):
        call()


def test_matches_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    progs = [lambda m, z: m.sum(m.abs(m.tanh(z)) * m.angle(z) + m.real(m.log(z) * m.conj(z))),
             lambda m, z: m.sum(m.abs(m.sqrt(z) - m.exp(-z)) ** 3)]
    for p in progs:
        np.testing.assert_allclose(ft.grad(lambda z: p(fnp, z))(Z),
                                   jax.jit(jax.grad(lambda z: p(jnp, z)))(Z), rtol=1e-13)
    holo = lambda m, z: m.sum(m.sinh(z) / (2 + z) * m.log1p(z))
    np.testing.assert_allclose(ft.hessian(lambda z: holo(fnp, z), holomorphic=True)(Z),
                               jax.jit(jax.hessian(lambda z: holo(jnp, z), holomorphic=True))(Z),
                               rtol=1e-13, atol=1e-15)
