"""scipy's API over functrans primitives (no scipy needed): `functrans.scipy.special`,
`functrans.scipy.stats`, `functrans.scipy.linalg`, `functrans.scipy.signal`,
`functrans.scipy.integrate`.

>>> import functrans.scipy as fsp
>>> float(fsp.special.logsumexp([0.0, 0.0]))  # log 2
0.6931471805599453
"""

from functrans.scipy import special  # noqa: F401
from functrans.scipy import integrate, linalg, signal, stats  # noqa: F401

__all__ = ["special", "stats", "linalg", "signal", "integrate"]
