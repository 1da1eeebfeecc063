"""The chi-squared distribution (scipy.stats.chi2) with `df` degrees of freedom: the gamma
distribution with shape df / 2 and scale 2 scale."""

from __future__ import annotations

from typing import Any

from functrans.scipy.stats import gamma
from functrans.scipy.stats._core import promote_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _as_gamma(x, df, loc, scale):
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the chi-squared density (scipy.stats.chi2.logpdf)."""
    return gamma.logpdf(*_as_gamma(x, df, loc, scale))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-squared density (scipy.stats.chi2.pdf)."""
    return gamma.pdf(*_as_gamma(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (scipy.stats.chi2.cdf)."""
    return gamma.cdf(*_as_gamma(x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.chi2.logcdf)."""
    return gamma.logcdf(*_as_gamma(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (scipy.stats.chi2.sf)."""
    return gamma.sf(*_as_gamma(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.chi2.logsf)."""
    return gamma.logsf(*_as_gamma(x, df, loc, scale))
