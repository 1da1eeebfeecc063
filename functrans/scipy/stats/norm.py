"""The normal distribution (scipy.stats.norm): loc is the mean, scale the standard deviation.

>>> from functrans.scipy.stats import norm
>>> float(norm.cdf(0.0))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the normal density at x (scipy.stats.norm.logpdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    z = standardize(x, loc, scale)
    return -0.5 * z * z - fnp.log(scale) - _LOG_SQRT_2PI


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density at x (scipy.stats.norm.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (scipy.stats.norm.cdf), by ndtr."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.ndtr(standardize(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x), accurate far in the lower tail (scipy.stats.norm.logcdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.log_ndtr(standardize(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) = cdf(-x) about loc (scipy.stats.norm.sf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.ndtr(-standardize(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x), accurate far in the upper tail (scipy.stats.norm.logsf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return special.log_ndtr(-standardize(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function, the inverse of cdf (scipy.stats.norm.ppf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc + scale * special.ndtri(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of sf (scipy.stats.norm.isf): loc - scale ndtri(q)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc - scale * special.ndtri(q)
