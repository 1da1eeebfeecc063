"""The uniform distribution (scipy.stats.uniform) on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.scipy.stats._core import log_probability, neg_inf_where, promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(scale) on [loc, loc + scale], -inf elsewhere (scipy.stats.uniform.logpdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return neg_inf_where((x < loc) | (x > loc + scale), -fnp.log(scale) + 0 * x)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The uniform density (scipy.stats.uniform.pdf)."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X <= x) = clip((x - loc) / scale, 0, 1) (scipy.stats.uniform.cdf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return fnp.clip(standardize(x, loc, scale), 0, 1)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X <= x) (scipy.stats.uniform.logcdf)."""
    return log_probability(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(X > x) (scipy.stats.uniform.sf)."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return fnp.clip(1 - standardize(x, loc, scale), 0, 1)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(X > x) (scipy.stats.uniform.logsf)."""
    return log_probability(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """loc + q scale for q in [0, 1], nan outside (scipy.stats.uniform.ppf)."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return fnp.where((q < 0) | (q > 1), np.nan, loc + q * scale)
