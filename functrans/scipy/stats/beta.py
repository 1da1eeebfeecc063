"""The beta distribution (scipy.stats.beta) with shapes `a` and `b` on [loc, loc + scale].

Its CDF is the regularized incomplete beta function, which (as in JAX) has no derivative in
a and b: cdf/sf and their logs are differentiable in x, loc and scale only.
"""

from __future__ import annotations

from typing import Any

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import (log_probability_pair, neg_inf_where, promote_inexact,
                                        standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the beta density (scipy.stats.beta.logpdf); -inf outside [loc, loc + scale]."""
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    outside = (x < loc) | (x > loc + scale)
    y = fnp.where(outside, 0.5, standardize(x, loc, scale))   # no log of y outside [0, 1]
    log_linear = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y)
    log_probs = log_linear - special.betaln(a, b) - fnp.log(scale)
    return neg_inf_where(outside, log_probs)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta density (scipy.stats.beta.pdf)."""
    return fnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = betainc(a, b, (x - loc) / scale) (scipy.stats.beta.cdf)."""
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return special.betainc(a, b, fnp.clip(standardize(x, loc, scale), 0, 1))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) = betainc(b, a, 1 - (x - loc) / scale) (scipy.stats.beta.sf)."""
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return special.betainc(b, a, fnp.clip(1 - standardize(x, loc, scale), 0, 1))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.beta.logcdf)."""
    return log_probability_pair(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.beta.logsf)."""
    return log_probability_pair(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
