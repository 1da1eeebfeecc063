"""scipy's API over functrans primitives (no scipy needed): `functrans.scipy.special`.

>>> import functrans.scipy as fsp
>>> float(fsp.special.logsumexp([0.0, 0.0]))  # log 2
0.6931471805599453
"""

from functrans.scipy import special  # noqa: F401
from functrans.scipy import integrate, signal  # noqa: F401

__all__ = ["special", "signal", "integrate"]
