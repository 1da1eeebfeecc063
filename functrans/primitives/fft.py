"""The discrete Fourier transform: one primitive, `fft`, as JAX's lax.fft_p. It transforms the
trailing len(fft_lengths) axes of its operand, with one of four types:

  fft    complex -> complex, sum_j x_j exp(-2 pi i jk/n)
  ifft   complex -> complex, the inverse (with its 1/n, as numpy.fft.ifft)
  rfft   real -> complex, the first n//2 + 1 outputs of fft (the rest are their conjugates)
  irfft  complex -> real, the inverse of rfft: the input's last axis holds n//2 + 1 entries of
         a Hermitian spectrum, whose imaginary parts at 0 (and n/2) are ignored

Values are numpy.fft's (numpy >= 2 keeps float32/complex64 precision). The op is linear over
the reals, so its JVP is the op on the tangent. Its transpose pairs a cotangent c with a value
y by Re(c y), without conjugation (JAX's convention, see the complex rows of elementwise.py):
the fft and ifft matrices are symmetric, so each is its own transpose; rfft's and irfft's are
JAX's, an irfft (rfft) with the Hermitian-redundancy mask. functrans.numpy.fft builds numpy's
functions (axes, n, s, norm) from this row and the layout rows.
"""

from __future__ import annotations

import math

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import conj, mul
from functrans.primitives.layout import linear_jvp, moveaxis
from functrans.primitives.registry import define

FFT_TYPES = ("fft", "ifft", "rfft", "irfft")


def fft(x, fft_type: str, fft_lengths):
    """The `fft_type` transform of the trailing len(fft_lengths) axes of `x` (lax.fft)."""
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(int(n) for n in fft_lengths))


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _real_dtype(dtype) -> np.dtype:
    return np.finfo(dtype).dtype


def _fft_abstract(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: unknown fft_type {fft_type!r}; use one of {FFT_TYPES}.")
    if not 1 <= k <= x.ndim or any(n < 1 for n in fft_lengths):
        raise ShapeError(f"fft: fft_lengths {fft_lengths} must be 1 to {x.ndim} positive "
                         f"lengths for an operand of shape {x.shape}.")
    lead, minor = x.shape[:-k], x.shape[-k:]
    if fft_type == "rfft":
        if x.dtype.kind != "f":
            raise DTypeError(f"fft: rfft needs a real float operand, got {x.dtype.name}. Use "
                             "fft for complex input, or take the real part first.")
        if minor != fft_lengths:
            raise ShapeError(f"fft: rfft operand shape {x.shape} must end in fft_lengths "
                             f"{fft_lengths}.")
        return ShapedArray((*lead, *fft_lengths[:-1], fft_lengths[-1] // 2 + 1),
                           _complex_dtype(x.dtype))
    if x.dtype.kind != "c":
        raise DTypeError(f"fft: {fft_type} needs a complex operand, got {x.dtype.name}. "
                         "Convert first (functrans.numpy.fft does), e.g. x.astype(complex).")
    if fft_type == "irfft":
        if minor[:-1] != fft_lengths[:-1] or minor[-1] != fft_lengths[-1] // 2 + 1:
            raise ShapeError(f"fft: irfft operand shape {x.shape} must end in "
                             f"{(*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)} for "
                             f"fft_lengths {fft_lengths}.")
        return ShapedArray((*lead, *fft_lengths), _real_dtype(x.dtype))
    if minor != fft_lengths:
        raise ShapeError(f"fft: {fft_type} operand shape {x.shape} must end in fft_lengths "
                         f"{fft_lengths}.")
    return ShapedArray(x.shape, x.dtype)


def _fft_impl(x, *, fft_type, fft_lengths):
    x = xp.asarray(x)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == "fft":
        out = xp.fft.fftn(x, axes=axes)
    elif fft_type == "ifft":
        out = xp.fft.ifftn(x, axes=axes)
    elif fft_type == "rfft":
        out = xp.fft.rfftn(x, axes=axes)
    else:
        out = xp.fft.irfftn(x, s=fft_lengths, axes=axes)
    # numpy computes in float32/complex64 for those inputs; keep the abstract dtype exactly
    want = _real_dtype(x.dtype) if fft_type == "irfft" else (
        _complex_dtype(x.dtype) if fft_type == "rfft" else x.dtype)
    return out if out.dtype == want else out.astype(want)


def _hermitian_mask(n: int, m: int, dtype):
    """1 at the entries rfft keeps once (0, and n/2 for even n), 2 at those standing for a
    conjugate pair: the weights of rfft's entries in the full spectrum."""
    mask = np.full(m, 2.0, dtype)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    return mask


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type in ("fft", "ifft"):  # symmetric matrices
        return [fft(ct, fft_type, fft_lengths)]
    n = fft_lengths[-1]
    size = math.prod(fft_lengths)
    if fft_type == "rfft":
        # Re(c . rfft(t)) = t . (size * irfft(conj(c) / mask)): irfft doubles the pairs back
        ct_dtype = np.dtype(ct.dtype)
        w = np.asarray(1 / _hermitian_mask(n, n // 2 + 1, _real_dtype(ct_dtype)), ct_dtype)
        out = fft(mul(conj(ct), w), "irfft", fft_lengths)
        return [mul(out, np.asarray(size, out.dtype))]
    # irfft: its transpose is conj(mask * rfft(c)) / size, as JAX's
    spectrum = fft(ct, "rfft", fft_lengths)
    w = np.asarray(_hermitian_mask(n, n // 2 + 1, _real_dtype(spectrum.dtype)) / size,
                   spectrum.dtype)
    return [conj(mul(spectrum, w))]


def _fft_batch(vals, dims, *, fft_type, fft_lengths):
    x, bd = vals[0], dims[0]
    # the transform reads the trailing axes: the batch axis goes first (it stays put when it
    # is among the leading axes already)
    if bd >= x.ndim - len(fft_lengths):
        x, bd = moveaxis(x, bd, 0), 0
    return fft(x, fft_type, fft_lengths), bd


fft_p = define("fft", impl=_fft_impl, abstract=_fft_abstract, transpose=_fft_transpose,
               batch=_fft_batch, props=("linear",),
               facts=dict(fresh_result=True))
fft_p.rules["jvp"] = linear_jvp(fft_p)
