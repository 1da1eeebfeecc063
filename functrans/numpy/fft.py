"""functrans.numpy.fft: numpy.fft's discrete Fourier transforms over the `fft` primitive
(functrans/primitives/fft.py), with numpy's `n`, `s`, `axes` and `norm` handled by layout rows
(crop or zero-pad, move the axes last, scale), as jax.numpy.fft does. Values are numpy's;
derivatives (every order, any transform) are JAX's: the transforms are linear, and a real
input's derivative is the real part of the complex cotangent's transform.

Differences from numpy: repeated entries in `axes` are refused (as in JAX); `out=` is not
taken (functrans arrays are immutable values).

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.fft.fft(np.array([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from functrans.core.trace import Tracer
from functrans.errors import ArgumentError, DTypeError, ShapeError
from functrans.numpy._core import asarray
from functrans.numpy._shape import roll
from functrans.primitives import elementwise as E
from functrans.primitives.fft import fft as _fft_p
from functrans.primitives.shape_ops import convert_element_type, pad, transpose

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]

_NORMS = (None, "backward", "ortho", "forward")


def _complex_dtype(dtype) -> np.dtype:
    # numpy >= 2: float16 and float32 transform in complex64, the rest (ints, bools) complex128
    return np.dtype(np.complex128) if dtype.kind in "biu" else np.result_type(dtype,
                                                                              np.complex64)


def _real_input(a, name):
    if a.dtype.kind == "c":
        raise DTypeError(f"{name}: needs a real input, got {a.dtype.name} (numpy refuses it "
                         "too). Use the complex transform (fft, fftn) or take fnp.real first.")
    return convert_element_type(a, np.finfo(_complex_dtype(a.dtype)).dtype)


def _norm_factor(norm, size: int, inverse: bool, name: str):
    """The scale numpy's `norm` applies beyond the primitive's (which has 1/size on the inverse
    transforms, as numpy's default "backward" norm)."""
    if norm not in _NORMS:
        raise ArgumentError(f'{name}: invalid norm value {norm!r}; should be "backward", '
                            '"ortho" or "forward" (or None, meaning "backward").')
    if norm in (None, "backward"):
        return None
    if norm == "ortho":
        return math.sqrt(size) if inverse else 1 / math.sqrt(size)
    return float(size) if inverse else 1 / size


def _axes_and_lengths(a, s, axes, name, inverse_real):
    """numpy's _cook_nd_args: the axes transformed (normalized, checked) and the length of each
    (for irfft, the last is the output length)."""
    if axes is None:
        axes = list(range(-len(s), 0)) if s is not None else list(range(a.ndim))
    axes = [operator.index(ax) for ax in axes]
    for ax in axes:
        if not -a.ndim <= ax < a.ndim:
            raise ShapeError(f"{name}: axis {ax} is out of bounds for an array of dimension "
                             f"{a.ndim}.")
    axes = [ax % a.ndim for ax in axes]
    if len(set(axes)) != len(axes):
        raise ArgumentError(f"{name}: repeated axes {tuple(axes)} are not supported (as in "
                            "JAX); apply the transform twice instead.")
    if s is None:
        s = [a.shape[ax] for ax in axes]
        if inverse_real and axes:
            s[-1] = 2 * (a.shape[axes[-1]] - 1)
    else:
        s = [a.shape[ax] if n == -1 else operator.index(n) for n, ax in zip(s, axes)]
        if len(s) != len(axes):
            raise ShapeError(f"{name}: s {tuple(s)} and axes {tuple(axes)} have different "
                             "lengths; give one length per transformed axis.")
    for n in s:
        if n < 1:
            raise ArgumentError(f"{name}: invalid number of FFT data points ({n}) specified; "
                                "each length must be at least 1.")
    return axes, s


def _transform(a, s, axes, norm, fft_type, name):
    """numpy's n-dimensional transform of kind `fft_type` over `axes` with lengths `s`."""
    a = asarray(a)
    inverse_real = fft_type == "irfft"
    axes, s = _axes_and_lengths(a, s, axes, name, inverse_real)
    out_dtype = None  # irfft of a real float input: numpy keeps its dtype
    if fft_type == "rfft":
        a = _real_input(a, name)
    elif a.dtype.kind != "c":
        if inverse_real and a.dtype.kind == "f":
            out_dtype = a.dtype
        a = convert_element_type(a, _complex_dtype(a.dtype))
    if not axes:  # nothing to transform: numpy returns the (converted) input
        return E.mul(a, np.ones((), a.dtype))
    # crop or zero-pad each axis to the length the transform reads
    lengths = list(s)
    if inverse_real:
        lengths[-1] = s[-1] // 2 + 1
    config = [(0, 0, 0)] * a.ndim
    for ax, n in zip(axes, lengths):
        config[ax] = (0, n - a.shape[ax], 0)
    a = pad(a, np.zeros((), a.dtype), config)
    # the transformed axes last, in the order given
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = rest + axes
    moved = perm != list(range(a.ndim))
    if moved:
        a = transpose(a, perm)
    out = _fft_p(a, fft_type, s)
    factor = _norm_factor(norm, math.prod(s), fft_type in ("ifft", "irfft"), name)
    if factor is not None:
        out = E.mul(out, np.asarray(factor, out.dtype))
    if moved:
        out = transpose(out, list(np.argsort(perm)))
    if out_dtype is not None and out.dtype != out_dtype:
        out = convert_element_type(out, out_dtype)
    return out


def _one_axis(n, axis):
    return (None if n is None else [n]), [axis]


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.fft: the 1-D discrete Fourier transform along `axis`, cropped or zero-padded
    to `n` points."""
    return _transform(a, *_one_axis(n, axis), norm, "fft", "fft")


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.ifft: the inverse of fft along `axis`."""
    return _transform(a, *_one_axis(n, axis), norm, "ifft", "ifft")


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.rfft: fft of a real input, its n//2 + 1 non-negative frequencies."""
    return _transform(a, *_one_axis(n, axis), norm, "rfft", "rfft")


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.irfft: the real inverse of rfft, `n` output points (default
    2 * (a.shape[axis] - 1))."""
    return _transform(a, *_one_axis(n, axis), norm, "irfft", "irfft")


_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _swapped(norm, name):
    if norm not in _SWAPPED:
        _norm_factor(norm, 1, False, name)  # raises, naming the valid values
    return _SWAPPED[norm]


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.hfft: the real fft of a signal with Hermitian symmetry, given by its first
    half (irfft of the conjugate, with the norm's direction swapped)."""
    a = asarray(a)
    a = E.conj(a) if a.dtype.kind == "c" else a
    return _transform(a, *_one_axis(n, axis), _swapped(norm, "hfft"), "irfft", "hfft")


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """numpy.fft.ihfft: the inverse of hfft, for a real input (the conjugate of rfft, with the
    norm's direction swapped)."""
    return E.conj(_transform(a, *_one_axis(n, axis), _swapped(norm, "ihfft"), "rfft", "ihfft"))


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
    """numpy.fft.fft2: the 2-D discrete Fourier transform over `axes`."""
    return _transform(a, s, axes, norm, "fft", "fft2")


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """numpy.fft.ifft2: the inverse of fft2."""
    return _transform(a, s, axes, norm, "ifft", "ifft2")


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """numpy.fft.rfft2: the 2-D transform of a real input (the last axis halved)."""
    return _transform(a, s, axes, norm, "rfft", "rfft2")


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
    """numpy.fft.irfft2: the real inverse of rfft2."""
    return _transform(a, s, axes, norm, "irfft", "irfft2")


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """numpy.fft.fftn: the n-D discrete Fourier transform over `axes` (default: all, or the
    last len(s))."""
    return _transform(a, s, axes, norm, "fft", "fftn")


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """numpy.fft.ifftn: the inverse of fftn."""
    return _transform(a, s, axes, norm, "ifft", "ifftn")


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """numpy.fft.rfftn: the n-D transform of a real input (the last axis halved)."""
    return _transform(a, s, axes, norm, "rfft", "rfftn")


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
    """numpy.fft.irfftn: the real inverse of rfftn."""
    return _transform(a, s, axes, norm, "irfft", "irfftn")


def _shift(x, axes, sign):
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(operator.index(ax) for ax in axes)
    if not axes:  # nothing to shift: a copy, as numpy's
        return E.mul(x, np.ones((), x.dtype))
    return roll(x, [sign * (x.shape[ax] // 2) for ax in axes], axes)


def fftshift(x, axes: int | Sequence[int] | None = None):
    """numpy.fft.fftshift: the zero frequency moved to the centre (a roll by n//2)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes: int | Sequence[int] | None = None):
    """numpy.fft.ifftshift: the inverse of fftshift (a roll by -(n//2))."""
    return _shift(x, axes, -1)


def _frequencies(ints, n, d, name):
    n = operator.index(n)
    if n < 1:
        raise ArgumentError(f"{name}: n must be a positive integer, got {n}.")
    if isinstance(d, Tracer):  # a traced sample spacing: numpy's k * (1 / (n d))
        scale = E.div(np.ones((), d.dtype), E.mul(np.asarray(n, d.dtype), d))
        return E.mul(ints.astype(d.dtype), scale)
    return None


def fftfreq(n: int, d: float = 1.0):
    """numpy.fft.fftfreq: the sample frequencies of an n-point fft, for sample spacing d
    (which may be traced)."""
    n = operator.index(n)
    ints = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    traced = _frequencies(ints, n, d, "fftfreq")
    return traced if traced is not None else np.fft.fftfreq(n, d)


def rfftfreq(n: int, d: float = 1.0):
    """numpy.fft.rfftfreq: the sample frequencies of an n-point rfft (n//2 + 1 of them)."""
    n = operator.index(n)
    traced = _frequencies(np.arange(0, n // 2 + 1), n, d, "rfftfreq")
    return traced if traced is not None else np.fft.rfftfreq(n, d)
