"""Cases for the fft primitive (functrans/primitives/fft.py): each transform type over one and
several trailing axes, even and odd lengths (rfft's and irfft's Hermitian mask differs), with
leading axes left alone. A real input keeps a real output (the real and imaginary parts of a
rotated spectrum), as the table's real-input checks take; test_rule_properties.py draws rfft
with its complex output."""

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives.fft import fft
from primitives.cases_complex import plane
from primitives.cases import Case, real


def _op(fft_type, lengths):
    return lambda x: fft(x, fft_type, lengths)


def _real_op(fft_type, lengths):
    # Re and Im of the spectrum times 1 - 2i: every entry of rfft's output reaches the result
    def fn(x):
        y = E.mul(fft(x, fft_type, lengths), np.asarray(1 - 2j, np.complex128))
        return E.real(y), E.imag(y)
    return fn


CASES = [
    Case("fft", _op("fft", (4,)), [(2, 4)], domain=plane, fixed_shapes=True, name="fft-1d"),
    Case("fft", _op("fft", (3, 2)), [(3, 2)], domain=plane, fixed_shapes=True, name="fft-2d"),
    Case("fft", _op("ifft", (5,)), [(5,)], domain=plane, fixed_shapes=True, name="ifft-1d"),
    Case("fft", _op("ifft", (2, 3)), [(2, 2, 3)], domain=plane, fixed_shapes=True,
         name="ifft-2d"),
    Case("fft", _real_op("rfft", (6,)), [(2, 6)], domain=real, fixed_shapes=True, name="rfft-even"),
    Case("fft", _real_op("rfft", (3, 5)), [(3, 5)], domain=real, fixed_shapes=True,
         name="rfft-odd-2d"),
    Case("fft", _op("irfft", (6,)), [(2, 4)], domain=plane, fixed_shapes=True,
         name="irfft-even"),
    Case("fft", _op("irfft", (5,)), [(3,)], domain=plane, fixed_shapes=True, name="irfft-odd"),
    Case("fft", _op("irfft", (2, 4)), [(2, 3)], domain=plane, fixed_shapes=True,
         name="irfft-2d"),
    Case("fft", lambda x: _real_op("fft", (3,))(E.convert_element_type(x, np.complex128)),
         [(3,)], fixed_shapes=True, name="fft-of-real"),
]
