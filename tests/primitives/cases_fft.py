"""Cases for the fft primitive (functrans/primitives/fft.py): each transform type over one and
several trailing axes, even and odd lengths (rfft's and irfft's Hermitian mask differs), with
leading axes left alone."""

import numpy as np

from functrans.primitives.fft import fft
from primitives.cases_complex import plane
from primitives.cases import Case, real


def _op(fft_type, lengths):
    return lambda x: fft(x, fft_type, lengths)


CASES = [
    Case("fft", _op("fft", (4,)), [(2, 4)], domain=plane, fixed_shapes=True, name="fft-1d"),
    Case("fft", _op("fft", (3, 2)), [(3, 2)], domain=plane, fixed_shapes=True, name="fft-2d"),
    Case("fft", _op("ifft", (5,)), [(5,)], domain=plane, fixed_shapes=True, name="ifft-1d"),
    Case("fft", _op("ifft", (2, 3)), [(2, 2, 3)], domain=plane, fixed_shapes=True,
         name="ifft-2d"),
    Case("fft", _op("rfft", (6,)), [(2, 6)], domain=real, fixed_shapes=True, name="rfft-even"),
    Case("fft", _op("rfft", (3, 5)), [(3, 5)], domain=real, fixed_shapes=True,
         name="rfft-odd-2d"),
    Case("fft", _op("irfft", (6,)), [(2, 4)], domain=plane, fixed_shapes=True,
         name="irfft-even"),
    Case("fft", _op("irfft", (5,)), [(3,)], domain=plane, fixed_shapes=True, name="irfft-odd"),
    Case("fft", _op("irfft", (2, 4)), [(2, 3)], domain=plane, fixed_shapes=True,
         name="irfft-2d"),
    Case("fft", lambda x: fft(x.astype(np.complex128), "fft", (3,)), [(3,)],
         fixed_shapes=True, name="fft-of-real"),
]
