# Complex differentiation and the FFT family under every transform: grad of real-valued functions
# of complex inputs (JAX's convention, df/dx - i df/dy), holomorphic grad / jacfwd / jacrev /
# hessian, jvp and vjp with complex tangents and cotangents, vmap of grad, and jnp.fft's
# transforms (n, s, axes, norm) with their first and second derivatives.
# Written for functrans's test suite.

import numpy as np

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(17)
z = rng.uniform(0.3, 1.5, 3) + 1j * rng.uniform(-1.0, 1.0, 3)   # right half plane
x = rng.standard_normal(4)
t_z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
c_z = rng.standard_normal(3) + 1j * rng.standard_normal(3)


# --- complex numbers ---------------------------------------------------------------------------

def real_loss(w):
    # a real-valued, non-holomorphic function of complex w
    return jnp.sum(jnp.abs(jnp.sin(w) * w) ** 2 + jnp.real(jnp.exp(w)) * jnp.imag(jnp.log(w))
                   + jnp.angle(w) * jnp.abs(w) + jnp.real(jnp.conj(w) * jnp.tanh(w)))


def holo(w):
    # holomorphic on the right half plane
    return jnp.sum(jnp.sin(w) * jnp.exp(w) / (1 + w * w) + jnp.sqrt(w) * jnp.log1p(w)
                   + w ** 3 - jnp.arctan(w) + jnp.cosh(w) ** 2)


@jax.jit   # one compilation for the whole table (op-by-op, JAX would compile each operation)
def complex_derivatives(z, x, t_z, c_z):
    return {
        "grad_real_loss": jax.grad(real_loss)(z),
        "value_and_grad": jax.value_and_grad(real_loss)(z),
        "grad_parts": [jax.grad(lambda w: jnp.sum(f(w)))(z)
                       for f in (jnp.real, jnp.imag, jnp.abs, jnp.angle,
                                 lambda w: jnp.real(jnp.conj(w)) * jnp.imag(w))],
        "vmap_grad_abs": jax.vmap(jax.grad(lambda w: jnp.abs(jnp.tanh(w)) ** 3))(z),
        "grad_holomorphic": jax.grad(holo, holomorphic=True)(z),
        "jacfwd_holomorphic": jax.jacfwd(lambda w: jnp.cos(w) * w ** 3, holomorphic=True)(z),
        "jacrev_holomorphic": jax.jacrev(lambda w: jnp.tanh(w) / w + jnp.outer(w, w).sum(0),
                                         holomorphic=True)(z),
        "hessian_holomorphic": jax.hessian(holo, holomorphic=True)(z),
        "jacrev_real_of_complex": jax.jacrev(
            lambda w: jnp.abs(w) * jnp.real(w) + jnp.imag(w))(z),
        "jacfwd_complex_of_real": jax.jacfwd(lambda a: jnp.exp(1j * a) * a)(x),
        "grad_through_complex": jax.grad(
            lambda a: jnp.sum(jnp.real(jnp.exp(1j * a) * a ** 2)))(x),
        "hessian_of_parts": jax.hessian(
            lambda xy: real_loss(xy[0] + 1j * xy[1]))(jnp.stack([z.real, z.imag])),
        "jvp": jax.jvp(lambda w: jnp.abs(w) ** 2 + jnp.conj(w) * jnp.sin(w), (z,), (t_z,)),
        "vjp": jax.vjp(lambda w: jnp.conj(w) * jnp.sin(w) + jnp.abs(w), z)[1](c_z),
        "vjp_of_real_input": jax.vjp(lambda a: jnp.exp(1j * a[:3]) * a[1:], x)[1](c_z),
        "sign_and_parts": [jnp.sign(z), jnp.real(z), jnp.imag(z), jnp.conj(z), jnp.angle(z),
                           jnp.angle(z, deg=True), jnp.abs(z)],
    }


complex_results = complex_derivatives(z, x, t_z, c_z)


# --- the FFT family ----------------------------------------------------------------------------

a = rng.standard_normal((4, 6))
ac = a + 1j * rng.standard_normal((4, 6))
spectrum = np.fft.rfft(rng.standard_normal((4, 6)))          # (4, 4) Hermitian half spectrum
spectrum2 = np.fft.rfft2(rng.standard_normal((4, 6)))


def loss(F):
    # a smooth nonlinear real scalar of a (complex or real) transform
    return jnp.sum(jnp.sin(jnp.real(F)) * jnp.cos(jnp.imag(F)) + 0.1 * jnp.abs(F) ** 2)


TRANSFORMS = [
    ("fft", lambda v: jnp.fft.fft(v)),
    ("fft_n_axis_ortho", lambda v: jnp.fft.fft(v, n=5, axis=0, norm="ortho")),
    ("fft_n_longer", lambda v: jnp.fft.fft(v, n=8)),
    ("ifft_forward", lambda v: jnp.fft.ifft(v, norm="forward")),
    ("ifft_n", lambda v: jnp.fft.ifft(v, n=3, axis=0)),
    ("fft2", lambda v: jnp.fft.fft2(v, s=(3, 7))),
    ("ifft2_ortho", lambda v: jnp.fft.ifft2(v, norm="ortho")),
    ("fftn_axes", lambda v: jnp.fft.fftn(v, axes=(1, 0))),
    ("ifftn", lambda v: jnp.fft.ifftn(v, s=(5, 4), axes=(0, 1))),
]
REAL_TRANSFORMS = [
    ("rfft", lambda v: jnp.fft.rfft(v)),
    ("rfft_odd_n", lambda v: jnp.fft.rfft(v, n=5, axis=0)),
    ("rfft_ortho", lambda v: jnp.fft.rfft(v, norm="ortho")),
    ("rfft2", lambda v: jnp.fft.rfft2(v, s=(4, 7))),
    ("rfftn_forward", lambda v: jnp.fft.rfftn(v, norm="forward")),
    ("irfft_of_rfft", lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * (1 + 0.5j), n=7)),
]
HALF_SPECTRUM_TRANSFORMS = [   # complex input, real output
    ("irfft", lambda v: jnp.fft.irfft(v)),
    ("irfft_odd", lambda v: jnp.fft.irfft(v, n=7, norm="ortho")),
    ("irfft_axis0", lambda v: jnp.fft.irfft(v, n=4, axis=0)),
    ("irfft2", lambda v: jnp.fft.irfft2(v, s=(4, 5))),
    ("irfftn_forward", lambda v: jnp.fft.irfftn(v, norm="forward")),
]

@jax.jit
def transforms(a, ac, spectrum, spectrum2):
    values = {name: T(ac) for name, T in TRANSFORMS}
    values.update({name: T(a) for name, T in REAL_TRANSFORMS})
    values.update({name: T(spectrum) for name, T in HALF_SPECTRUM_TRANSFORMS})
    values.update({
        "irfft2_spectrum": jnp.fft.irfft2(spectrum2),
        "fftshift": jnp.fft.fftshift(a), "ifftshift": jnp.fft.ifftshift(a, axes=1),
        "fftshift_axes": jnp.fft.fftshift(ac, axes=(0,)),
    })
    return values


fft_values = transforms(a, ac, spectrum, spectrum2)
fft_values.update({"fftfreq": jnp.fft.fftfreq(7, 0.25), "rfftfreq": jnp.fft.rfftfreq(8, 0.5),
                   "fftfreq_even": jnp.fft.fftfreq(6)})


@jax.jit
def transform_derivatives(a, ac, spectrum):
    grads = {}
    for name, T in TRANSFORMS:
        f = lambda v, T=T: loss(T(v))
        grads[name] = [jax.grad(f)(ac), jax.grad(f)(a), jax.hessian(f)(a[:2, :3])]
    for name, T in REAL_TRANSFORMS:
        f = lambda v, T=T: loss(T(v))
        grads[name] = [jax.grad(f)(a), jax.hessian(f)(a[:3]),
                       jax.vmap(jax.grad(f))(jnp.stack([a, 2 * a]))]
    for name, T in HALF_SPECTRUM_TRANSFORMS:
        f = lambda v, T=T: loss(T(v))
        grads[name] = [jax.grad(f)(spectrum),
                       jax.jacrev(lambda v, T=T: T(v)[0, :3])(spectrum)]
    return grads


fft_grads = transform_derivatives(a, ac, spectrum)


@jax.jit
def transform_jacobians(x, z, c_z, ac):
    return {
        "jacfwd_rfft": jax.jacfwd(lambda v: jnp.fft.rfft(v))(x),
        "jacfwd_fft_of_real": jax.jacfwd(lambda v: jnp.fft.fft(v, n=6, norm="ortho"))(x),
        "jacrev_irfft": jax.jacrev(lambda v: jnp.fft.irfft(v, n=4))(z),
        "jacrev_fft_holomorphic": jax.jacrev(jnp.fft.fft, holomorphic=True)(z),
        "jacfwd_ifft_holomorphic": jax.jacfwd(lambda v: jnp.fft.ifft(v, n=4),
                                              holomorphic=True)(z),
        "jvp_rfft": jax.jvp(lambda v: jnp.fft.rfft(v, n=5), (x,), (x[::-1],)),
        "vjp_irfft": jax.vjp(lambda v: jnp.fft.irfft(v, n=4), z)[1](x),
        "vjp_rfft": jax.vjp(lambda v: jnp.fft.rfft(v, n=6), x)[1](
            jnp.concatenate([c_z, c_z[:1]])),
        "vmap_fft": jax.vmap(lambda v: jnp.fft.fft(v, n=4), in_axes=1)(ac),
    }


fft_jacobians = transform_jacobians(x, z, c_z, ac)

print("complex derivatives:", len(complex_results), "results;",
      "fft transforms:", len(fft_values), "values,", len(fft_grads), "derivative sets")
