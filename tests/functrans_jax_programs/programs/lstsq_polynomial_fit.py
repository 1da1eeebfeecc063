# A least-squares polynomial fit with jnp.linalg.lstsq, as numpy-style fitting code does it, its
# residual examined through jnp.real / jnp.imag / jnp.conj of its discrete Fourier coefficients.
# Written for functrans's test suite.

import numpy as np

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(5)
t = np.linspace(-1.0, 1.0, 32)
y = 1.0 - 2.0 * t + 0.5 * t ** 3 + 0.05 * rng.standard_normal(t.shape)
A = jnp.stack([t ** k for k in range(4)], axis=1)
coeffs, residuals, rank, singular_values = jnp.linalg.lstsq(A, y)
print("coefficients", coeffs)
print("residual sum of squares", residuals, "rank", rank)
print("singular values", singular_values)

resid = y - A @ coeffs
spectrum = jnp.exp(-2j * jnp.pi * jnp.outer(jnp.arange(1, 5), jnp.arange(32)) / 32) @ resid
power = jnp.real(spectrum * jnp.conj(spectrum))
print("residual spectrum, real part", jnp.real(spectrum))
print("residual spectrum, imaginary part", jnp.imag(spectrum))
print("power", power)
