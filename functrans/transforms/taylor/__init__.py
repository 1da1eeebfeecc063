"""Taylor mode: truncated Taylor series pushed forward through a program.

`jet` (JAX's signature) carries, for every value, its primal and K derivative coefficients of a
curve through it; each primitive maps them by its Taylor rule (rules.py: the row's own, a
family rule from the table's facts, or the generic rule derived from the row's JVP).

`collapsed_taylor` (collapsed.py) carries the lower terms per direction and the top term summed
over directions, in one forward pass; operators.py builds the named operators on it: the
weighted Laplacian, the biharmonic, linear combinations of partial derivatives given by
multi-indices, and stochastic (Hutchinson / STDE) estimators.
"""

from functrans.transforms.taylor.api import jet  # noqa: F401
from functrans.transforms.taylor.operators import (  # noqa: F401
    biharmonic, biharmonic_estimate, collapsed_taylor, differential_operator,
    laplacian_estimate, weighted_laplacian)

__all__ = ["jet", "collapsed_taylor", "weighted_laplacian", "biharmonic",
           "differential_operator", "laplacian_estimate", "biharmonic_estimate",
           # the submodules, so that the API reference documents them
           "api", "collapsed", "faa_di_bruno", "operators", "programs", "rules", "trace"]
