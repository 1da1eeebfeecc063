"""The Laplace distribution (scipy.stats.laplace): density exp(-|x - loc| / scale) / (2 scale)."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.scipy.stats._core import promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_LOG2 = float(np.log(2))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the Laplace density (scipy.stats.laplace.logpdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return -fnp.abs(standardize(x, loc, scale)) - fnp.log(2 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The Laplace density (scipy.stats.laplace.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def _log_lower(y):
    # log P(Y <= y) of the standard Laplace: y - log 2 below 0, log1p(-exp(-y) / 2) above
    neg = fnp.minimum(y, 0)
    pos = fnp.maximum(y, 0)
    return fnp.where(y < 0, neg - _LOG2, fnp.log1p(-0.5 * fnp.exp(-pos)))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.laplace.logcdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return _log_lower(standardize(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) (scipy.stats.laplace.cdf)."""
    return fnp.exp(logcdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.laplace.logsf), by symmetry about loc."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return _log_lower(-standardize(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (scipy.stats.laplace.sf)."""
    return fnp.exp(logsf(x, loc, scale))
