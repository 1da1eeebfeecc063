"""The exponential distribution (scipy.stats.expon): rate 1 / scale, starting at loc."""

from __future__ import annotations

from typing import Any

import functrans.numpy as fnp
from functrans.scipy.stats._core import (log_probability_pair, neg_inf_where, promote_inexact,
                                        standardize)

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the exponential density (scipy.stats.expon.logpdf); -inf below loc."""
    x, loc, scale = promote_inexact(x, loc, scale)
    y = standardize(x, loc, scale)
    return neg_inf_where(y < 0, -y - fnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The exponential density (scipy.stats.expon.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = 1 - exp(-(x - loc) / scale) (scipy.stats.expon.cdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    y = fnp.maximum(standardize(x, loc, scale), 0)
    return -fnp.expm1(-y)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.expon.logcdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    y = fnp.maximum(standardize(x, loc, scale), 0)
    return log_probability_pair(-fnp.expm1(-y), fnp.exp(-y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (scipy.stats.expon.sf)."""
    return fnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) = -(x - loc) / scale above loc, 0 below (scipy.stats.expon.logsf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return -fnp.maximum(standardize(x, loc, scale), 0)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function -log1p(-q) scale + loc (scipy.stats.expon.ppf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return -fnp.log1p(-q) * scale + loc
