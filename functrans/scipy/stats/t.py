"""Student's t distribution (scipy.stats.t) with `df` degrees of freedom.

The CDF goes through the regularized incomplete beta function, which (as in JAX) has no
derivative in its shape arguments: cdf/sf and their logs are differentiable in x, loc and
scale, and differentiating them in df raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import log_probability_pair, promote_inexact, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the t density (scipy.stats.t.logpdf), written as JAX writes it."""
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    z = standardize(x, loc, scale)
    half_df = df / 2
    normalize = (special.gammaln(half_df) + fnp.log(scale * scale * np.pi * df) / 2
                 - special.gammaln(half_df + 0.5))
    return -(normalize + (half_df + 0.5) * fnp.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The t density (scipy.stats.t.pdf)."""
    return fnp.exp(logpdf(x, df, loc, scale))


def _lower_tail(z, df):
    # P(T <= z) for z <= 0: I_{df / (df + z^2)}(df / 2, 1 / 2) / 2
    w = df / (df + z * z)
    return 0.5 * special.betainc(df / 2, fnp.full_like(w, 0.5), w)


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(T <= x) (scipy.stats.t.cdf), by the incomplete beta function."""
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    z = standardize(x, loc, scale)
    lower = _lower_tail(-fnp.abs(z), df)
    return fnp.where(z > 0, 1 - lower, lower)


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """P(T > x) (scipy.stats.t.sf)."""
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    return cdf(-x, df, -loc, scale)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(T <= x) (scipy.stats.t.logcdf)."""
    return log_probability_pair(cdf(x, df, loc, scale), sf(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log P(T > x) (scipy.stats.t.logsf)."""
    return log_probability_pair(sf(x, df, loc, scale), cdf(x, df, loc, scale))
