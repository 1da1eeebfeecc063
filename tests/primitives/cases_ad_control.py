"""Cases for functrans/primitives/ad_control.py. stop_gradient's derivative is zero by design,
so finite differences do not apply (tests/transforms/test_custom.py checks the zero)."""

from functrans.primitives import ad_control as A
from primitives.cases import Case

CASES = [
    Case("stop_gradient", A.stop_gradient, [(3,)], differentiable=False),
    Case("stop_gradient", A.stop_gradient, [(2, 3)], differentiable=False,
         name="stop_gradient-2d"),
]
