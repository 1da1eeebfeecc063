"""The gamma distribution (scipy.stats.gamma) with shape `a`.

Its CDF is the regularized incomplete gamma function: differentiable in a (JAX's
igamma_grad_a) and in x, loc and scale; a second derivative in a raises, as in JAX.
"""

from __future__ import annotations

from typing import Any

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import (log_probability_pair, neg_inf_where, promote_inexact,
                                        standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the gamma density (scipy.stats.gamma.logpdf); -inf below loc."""
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    below = x < loc
    y = fnp.where(below, 1, standardize(x, loc, scale))   # no log of y < 0 (masked anyway)
    log_probs = special.xlogy(a - 1, y) - y - (special.gammaln(a) + fnp.log(scale))
    return neg_inf_where(below, log_probs)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma density (scipy.stats.gamma.pdf)."""
    return fnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = gammainc(a, (x - loc) / scale) (scipy.stats.gamma.cdf)."""
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    return special.gammainc(a, fnp.maximum(standardize(x, loc, scale), 0))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) = gammaincc(a, (x - loc) / scale) (scipy.stats.gamma.sf)."""
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    return special.gammaincc(a, fnp.maximum(standardize(x, loc, scale), 0))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.gamma.logcdf)."""
    return log_probability_pair(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.gamma.logsf)."""
    return log_probability_pair(sf(x, a, loc, scale), cdf(x, a, loc, scale))
