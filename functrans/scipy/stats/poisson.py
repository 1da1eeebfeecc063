"""The Poisson distribution (scipy.stats.poisson) with mean `mu`, shifted by `loc`.

>>> from functrans.scipy.stats import poisson
>>> round(float(poisson.pmf(0, 2.0)), 6)  # exp(-2)
0.135335
"""

from __future__ import annotations

from typing import Any


import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy.stats._core import log_probability, neg_inf_where, promote_inexact

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """log P(K = k) (scipy.stats.poisson.logpmf): -inf off the integers >= loc."""
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return neg_inf_where((x < 0) | (fnp.floor(x) != x), log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K = k) (scipy.stats.poisson.pmf)."""
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu) (scipy.stats.poisson.cdf)."""
    k, mu, loc = promote_inexact(k, mu, loc)
    x = fnp.floor(k - loc)
    safe = fnp.maximum(x, 0)
    return fnp.where(x < 0, 0.0, special.gammaincc(safe + 1, mu))


def sf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K > k) = gammainc(floor(k - loc) + 1, mu) (scipy.stats.poisson.sf)."""
    k, mu, loc = promote_inexact(k, mu, loc)
    x = fnp.floor(k - loc)
    safe = fnp.maximum(x, 0)
    return fnp.where(x < 0, 1.0, special.gammainc(safe + 1, mu))


def logcdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """log P(K <= k) (scipy.stats.poisson.logcdf)."""
    return log_probability(cdf(k, mu, loc))


def logsf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """log P(K > k) (scipy.stats.poisson.logsf)."""
    return log_probability(sf(k, mu, loc))


