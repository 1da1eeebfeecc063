"""Cases for the binary math rows (functrans/primitives/binary_math.py), away from their special
points (x = 0 for xlogy and copysign, the origin for hypot, infinite operands for logaddexp,
ties for fmax and fmin)."""

from functrans.primitives import binary_math as B
from primitives.cases import Case, away_from_zero, positive, real

CASES = [
    Case("xlogy", B.xlogy, [(2, 3), (2, 3)], domain=[away_from_zero, positive]),
    Case("xlogy", B.xlogy, [(4,), ()], domain=[real, positive], name="xlogy-scalar"),
    Case("hypot", B.hypot, [(2, 3), (2, 3)]),
    Case("hypot", B.hypot, [(3,), ()], name="hypot-scalar"),
    Case("logaddexp", B.logaddexp, [(2, 3), (2, 3)]),
    Case("logaddexp", B.logaddexp, [(3,), (2, 1)], name="logaddexp-broadcast"),
    Case("fmax", B.fmax, [(2, 3), (2, 3)]),
    Case("fmin", B.fmin, [(3,), (2, 1)]),
    Case("copysign", B.copysign, [(2, 3), (2, 3)], domain=away_from_zero),
    Case("copysign", B.copysign, [(4,), ()], domain=away_from_zero, name="copysign-scalar"),
]
