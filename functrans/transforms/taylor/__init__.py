"""Taylor mode: truncated Taylor series pushed forward through a program.

`jet` (JAX's signature) carries, for every value, its primal and K derivative coefficients of a
curve through it; each primitive maps them by its Taylor rule (rules.py: the row's own, a
family rule from the table's facts, or the generic rule derived from the row's JVP).
"""

from functrans.transforms.taylor.api import jet  # noqa: F401

__all__ = ["jet"]
