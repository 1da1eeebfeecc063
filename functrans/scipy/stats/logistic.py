"""The logistic distribution (scipy.stats.logistic): CDF expit((x - loc) / scale)."""

from __future__ import annotations

from typing import Any

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _softplus(y):
    # log(1 + exp(y)) without overflow
    return fnp.maximum(y, 0) + fnp.log1p(fnp.exp(-fnp.abs(y)))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the logistic density (scipy.stats.logistic.logpdf): -|y| - 2 log1p(exp(-|y|))
    - log(scale), y = (x - loc) / scale."""
    x, loc, scale = promote_inexact(x, loc, scale)
    y = fnp.abs(standardize(x, loc, scale))
    return -y - 2 * fnp.log1p(fnp.exp(-y)) - fnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic density (scipy.stats.logistic.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = expit((x - loc) / scale) (scipy.stats.logistic.cdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.expit(standardize(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) = -softplus(-(x - loc) / scale) (scipy.stats.logistic.logcdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return -_softplus(-standardize(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) = expit(-(x - loc) / scale) (scipy.stats.logistic.sf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.expit(-standardize(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.logistic.logsf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return -_softplus(standardize(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function loc + scale logit(q) (scipy.stats.logistic.ppf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc + scale * special.logit(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of sf, loc - scale logit(q) (scipy.stats.logistic.isf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc - scale * special.logit(q)
