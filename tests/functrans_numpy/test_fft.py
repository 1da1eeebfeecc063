"""functrans.numpy.fft: numpy.fft's values and dtypes for every function and argument form (n, s,
axes, norm), derivatives against float64 central differences to second order (the transforms
are linear; what is checked is the transpose of each, rfft's and irfft's Hermitian mask
included), vmap and jit against eager, and the refusals. JAX's derivatives of the same
transforms are compared in tests/functrans_jax_programs (program complex_and_fft_derivatives,
recorded, and live when JAX is installed) and live below."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ArgumentError, DTypeError, ShapeError
from functrans.test_util import check_grads

RNG = np.random.default_rng(3)
A = RNG.standard_normal((4, 6))
AC = A + 1j * RNG.standard_normal((4, 6))
A3 = RNG.standard_normal((3, 4, 5))
HALF = np.fft.rfft(RNG.standard_normal((4, 6)))

# (function name, input, keyword arguments): numpy's argument forms
VALUE_CASES = [
    ("fft", AC, {}), ("fft", A, {"n": 4}), ("fft", A, {"n": 9, "axis": 0, "norm": "ortho"}),
    ("fft", A3, {"axis": 1, "norm": "forward"}), ("fft", np.arange(5), {}),
    ("fft", A.astype(np.float32), {}), ("fft", AC.astype(np.complex64), {"norm": "ortho"}),
    ("ifft", AC, {}), ("ifft", AC, {"norm": "forward", "n": 3}), ("ifft", A, {"axis": -2}),
    ("rfft", A, {}), ("rfft", A, {"n": 5, "axis": 0}), ("rfft", A, {"n": 11, "norm": "ortho"}),
    ("rfft", A.astype(np.float32), {}), ("rfft", np.arange(6), {}),
    ("irfft", HALF, {}), ("irfft", HALF, {"n": 7, "norm": "ortho"}),
    ("irfft", HALF, {"n": 3, "axis": 0}), ("irfft", HALF.astype(np.complex64), {}),
    ("irfft", A, {}),
    ("fft2", AC, {}), ("fft2", A3, {"s": (3, 8)}), ("fft2", A3, {"axes": (0, 2)}),
    ("ifft2", AC, {"norm": "ortho"}), ("ifft2", A3, {"s": (2, 2), "axes": (2, 0)}),
    ("rfft2", A, {}), ("rfft2", A3, {"axes": (1, 0), "s": (5, 3)}),
    ("irfft2", np.fft.rfft2(A3), {}), ("irfft2", np.fft.rfft2(A), {"s": (4, 7)}),
    ("fftn", AC, {}), ("fftn", A3, {"axes": (0,)}), ("fftn", A3, {"s": (2, 5), "axes": (2, 0)}),
    ("ifftn", A3, {"norm": "forward"}), ("ifftn", AC, {"s": (5, 4), "axes": (0, 1)}),
    ("rfftn", A3, {}), ("rfftn", A3, {"axes": (2, 1)}), ("rfftn", A, {"s": (3, 3),
                                                                       "axes": (0, 1)}),
    ("irfftn", np.fft.rfftn(A3), {}), ("irfftn", np.fft.rfftn(A3), {"s": (3, 4, 6), "axes": (0, 1, 2)}),
    ("irfftn", HALF, {"axes": (0, 1), "norm": "ortho"}),
    ("hfft", HALF, {}), ("hfft", HALF, {"n": 7, "norm": "ortho"}), ("hfft", A, {"axis": 0}),
    ("ihfft", A, {}), ("ihfft", A, {"n": 5, "norm": "forward", "axis": 0}),
    ("fftshift", A, {}), ("fftshift", A3, {"axes": 1}), ("fftshift", AC, {"axes": (0, 1)}),
    ("ifftshift", A, {}), ("ifftshift", A3, {"axes": (-1,)}), ("fftshift", A, {"axes": ()}),
]


@pytest.mark.parametrize("name,x,kwargs", VALUE_CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(VALUE_CASES)])
def test_values_and_dtypes_equal_numpy(name, x, kwargs):
    got, want = getattr(fnp.fft, name)(x, **kwargs), getattr(np.fft, name)(x, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.max(np.abs(want)))
    assert not np.shares_memory(np.asarray(got), x)
    np.testing.assert_allclose(ft.jit(lambda v: getattr(fnp.fft, name)(v, **kwargs))(x), got,
                               rtol=1e-15, atol=1e-15 * np.max(np.abs(want)))


@pytest.mark.parametrize("n,d", [(1, 1.0), (6, 1.0), (7, 0.25), (8, 0.5)])
def test_frequencies_equal_numpy(n, d):
    np.testing.assert_array_equal(fnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
    np.testing.assert_array_equal(fnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    # a traced sample spacing gives the same values, and the frequencies' derivative -f/d
    np.testing.assert_array_equal(ft.jit(lambda d: fnp.fft.fftfreq(n, d))(d),
                                  np.fft.fftfreq(n, d))
    np.testing.assert_allclose(ft.jacfwd(lambda d: fnp.fft.rfftfreq(n, d))(d),
                               -np.fft.rfftfreq(n, d) / d, rtol=1e-15)


def _loss(F):
    # a nonlinear real scalar of a transform, so second derivatives are not trivial
    return fnp.sum(fnp.sin(fnp.real(F)) * fnp.cos(fnp.imag(F)) + 0.1 * fnp.abs(F) ** 2)


DERIVATIVE_CASES = [
    ("fft", {}, AC[:2, :3]), ("fft", {"n": 5, "axis": 0, "norm": "ortho"}, A[:2, :3]),
    ("ifft", {"n": 2, "norm": "forward"}, AC[:2, :3]), ("fft2", {"s": (3, 4)}, AC[:2, :3]),
    ("ifftn", {"axes": (1, 0)}, A[:2, :3]), ("fftn", {"s": (3, 2), "axes": (1, 0)}, AC[:2, :3]),
    ("ifft2", {"norm": "ortho"}, A[:2, :3]),
    ("rfft", {}, A[:2]), ("rfft", {"n": 5}, A[:2, :4]), ("rfft", {"n": 3, "axis": 0}, A[:2, :3]),
    ("rfft2", {"norm": "ortho"}, A[:3, :3]), ("rfftn", {"s": (2, 5)}, A[:2, :4]),
    ("irfft", {}, HALF[:2]), ("irfft", {"n": 7}, HALF[:2]), ("irfft", {"n": 3, "axis": 0},
                                                             HALF[:3, :2]),
    ("irfft2", {"s": (3, 5)}, HALF[:3, :3]), ("irfftn", {"norm": "forward"}, HALF[:2, :3]),
    ("fftshift", {}, AC[:3, :3]), ("ifftshift", {"axes": 0}, A[:3, :2]),
    ("hfft", {"n": 5}, HALF[:2, :3]), ("ihfft", {"norm": "ortho"}, A[:2, :5]),
]


@pytest.mark.parametrize("name,kwargs,x", DERIVATIVE_CASES,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(DERIVATIVE_CASES)])
def test_derivatives_match_finite_differences(name, kwargs, x):
    fn = getattr(fnp.fft, name)
    # the transform itself (complex outputs: the pairing Re(c y) in reverse mode), and a real
    # loss of it, to second order in both modes
    check_grads(lambda v: fn(v, **kwargs), (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: _loss(fn(v, **kwargs)), (x,), order=2, modes=("fwd", "rev"))


def test_vmap_of_grad_equals_a_loop():
    f = lambda v: _loss(fnp.fft.rfft(v, n=5) * (1 + 2j)) + _loss(fnp.fft.irfft(
        fnp.fft.fft(v), n=4))
    batch = np.stack([A[:, :4], 2 * A[:, :4], -A[:, :4]])
    want = np.stack([ft.grad(f)(b) for b in batch])
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(batch), want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(ft.vmap(ft.grad(f), in_axes=2)(np.moveaxis(batch, 0, 2)), want,
                               rtol=1e-13, atol=1e-13)


def test_parseval_gradient_closed_form():
    # sum |fft(x)|^2 = n sum |x|^2 (Parseval), so its gradient is 2 n conj(x) (JAX's convention)
    x = AC[0]
    g = ft.grad(lambda v: fnp.sum(fnp.abs(fnp.fft.fft(v)) ** 2))(x)
    np.testing.assert_allclose(g, 2 * x.size * np.conj(x), rtol=1e-13)
    # ortho is unitary: the same with n = 1; holomorphic jacobian: the DFT matrix, symmetric
    g = ft.grad(lambda v: fnp.sum(fnp.abs(fnp.fft.fft(v, norm="ortho")) ** 2))(x)
    np.testing.assert_allclose(g, 2 * np.conj(x), rtol=1e-13)
    dft = np.fft.fft(np.eye(6))
    np.testing.assert_allclose(ft.jacrev(fnp.fft.fft, holomorphic=True)(x), dft, atol=1e-13)
    np.testing.assert_allclose(ft.jacfwd(fnp.fft.fft, holomorphic=True)(x), dft, atol=1e-13)


def test_make_jaxpr_shows_one_fft_equation():
    text = str(ft.make_jaxpr(lambda v: fnp.fft.rfft(v))(A))
    assert text.count(" fft[") == 1 and "fft_type='rfft'" in text, text


@pytest.mark.parametrize("call,error,match", [
    (lambda: fnp.fft.fft(A, norm="unitary"), ArgumentError, "invalid norm value.*ortho"),
    (lambda: fnp.fft.fft(A, n=0), ArgumentError, r"FFT data points \(0\)"),
    (lambda: fnp.fft.fftn(A, axes=(0, 0)), ArgumentError, "repeated axes.*twice"),
    (lambda: fnp.fft.fft(A, axis=2), ShapeError, "axis 2 is out of bounds"),
    (lambda: fnp.fft.fft2(A, s=(3,), axes=(0, 1)), ShapeError, "different lengths"),
    (lambda: fnp.fft.rfft(AC), DTypeError, "needs a real input.*complex128.*fnp.real"),
    (lambda: fnp.fft.fftfreq(0), ArgumentError, "positive integer"),
])
def test_bad_input_names_the_fix(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_matches_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    for name, kwargs, x in DERIVATIVE_CASES:
        f_ft = lambda v: _loss(getattr(fnp.fft, name)(v, **kwargs))
        f_jax = lambda v: jnp.sum(jnp.sin(jnp.real(F := getattr(jnp.fft, name)(v, **kwargs)))
                                  * jnp.cos(jnp.imag(F)) + 0.1 * jnp.abs(F) ** 2)
        np.testing.assert_allclose(ft.grad(f_ft)(x), jax.jit(jax.grad(f_jax))(x), rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name} {kwargs}")
