"""Cases for the bit-level primitives (functrans/primitives/bits.py): threefry2x32, the shifts
and bit casts. All have integer (or bit-made) outputs, hence no derivative to check; the hash's
values are checked against published test vectors in tests/random/test_keys.py."""

import numpy as np

from functrans.primitives import bits as B
from primitives.cases import Case


def words(rng, shape):
    return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)


def words64(rng, shape):
    return rng.integers(0, 2**63, shape, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def amounts(rng, shape):
    """Shift amounts in [0, 40): some of them at or past the 32-bit width."""
    return rng.integers(0, 40, shape).astype(np.uint32)


def signed(rng, shape):
    return rng.integers(-2**31, 2**31, shape).astype(np.int32)


def signed_amounts(rng, shape):
    return rng.integers(0, 35, shape).astype(np.int32)


CASES = [
    Case("threefry2x32", B.threefry2x32, [(4,), (4,), (4,), (4,)], domain=words,
         differentiable=False),
    Case("threefry2x32", B.threefry2x32, [(), (), (2, 3), (3,)], domain=words,
         differentiable=False, name="threefry2x32-broadcast"),
    Case("shift_left", B.shift_left, [(5,), (5,)], domain=[words, amounts],
         differentiable=False),
    Case("shift_right_logical", B.shift_right_logical, [(5,), (5,)], domain=[words, amounts],
         differentiable=False),
    Case("shift_right_logical", B.shift_right_logical, [(5,), (5,)],
         domain=[signed, signed_amounts], differentiable=False, name="shift_right_logical-int"),
    Case("shift_left", lambda x: B.shift_left(x, np.uint32(3)), [(2, 3)], domain=words,
         differentiable=False, name="shift_left-scalar"),
    Case("bitcast_convert_type", lambda x: B.bitcast_convert_type(x, np.float32), [(4,)],
         domain=words, differentiable=False),
    Case("bitcast_convert_type", lambda x: B.bitcast_convert_type(x, np.float64), [(2, 2)],
         domain=words64, differentiable=False, name="bitcast_convert_type-64"),
]
