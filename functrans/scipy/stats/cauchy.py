"""The Cauchy distribution (scipy.stats.cauchy): density 1 / (pi scale (1 + y^2))."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.scipy.stats._core import log_probability_pair, promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_PI = float(np.log(np.pi))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the Cauchy density (scipy.stats.cauchy.logpdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    y = standardize(x, loc, scale)
    return -_LOG_PI - fnp.log(scale) - fnp.log1p(y * y)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Cauchy density (scipy.stats.cauchy.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = 1/2 + arctan(y) / pi (scipy.stats.cauchy.cdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return 0.5 + fnp.arctan(standardize(x, loc, scale)) / np.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.cauchy.logcdf)."""
    return log_probability_pair(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) = 1/2 - arctan(y) / pi (scipy.stats.cauchy.sf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return 0.5 - fnp.arctan(standardize(x, loc, scale)) / np.pi


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.cauchy.logsf)."""
    return log_probability_pair(sf(x, loc, scale), cdf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function loc + scale tan(pi (q - 1/2)) (scipy.stats.cauchy.ppf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc + scale * fnp.tan(np.pi * (q - 0.5))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of sf, loc + scale tan(pi (1/2 - q)) (scipy.stats.cauchy.isf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc + scale * fnp.tan(np.pi * (0.5 - q))
