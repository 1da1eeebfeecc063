"""The Dirichlet distribution (scipy.stats.dirichlet) with concentration `alpha` (K,).

As in scipy, x holds the K coordinates along its first axis (further axes are points); K - 1
coordinates may be given, the last then being 1 minus their sum. Points off the open simplex
get -inf (logpdf) and 0 (pdf) as in JAX, where scipy raises ValueError.
"""

from __future__ import annotations

from typing import Any


import numpy as np

import functrans.numpy as fnp
from functrans.errors import ShapeError
from functrans.scipy import special
from functrans.scipy.stats._core import neg_inf_where, promote_inexact

__all__ = ["logpdf", "pdf", "rvs"]


def logpdf(x: Any, alpha: Any) -> Any:
    """log of the Dirichlet density at x (scipy.stats.dirichlet.logpdf)."""
    x, alpha = promote_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.logpdf: alpha must be one-dimensional (K,), got shape "
                         f"{tuple(alpha.shape)}. Pass the K concentrations as a vector.")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ShapeError(f"dirichlet.logpdf: x has shape {tuple(x.shape)} but alpha has K = {k} "
                         f"entries; x's first axis must have K or K - 1 entries (scipy's "
                         "layout: coordinates first, points after).")
    if x.shape[0] == k - 1:
        x = fnp.concatenate([x, (1 - fnp.sum(x, axis=0))[None]], axis=0)
    a = fnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    normalize = fnp.sum(special.gammaln(alpha)) - special.gammaln(fnp.sum(alpha))
    log_probs = fnp.sum(special.xlogy(a - 1, x), axis=0) - normalize
    on_simplex = fnp.all(x > 0, axis=0) & (fnp.abs(fnp.sum(x, axis=0) - 1) < 1e-6)
    return neg_inf_where(~on_simplex, log_probs)


def pdf(x: Any, alpha: Any) -> Any:
    """The Dirichlet density at x (scipy.stats.dirichlet.pdf)."""
    return fnp.exp(logpdf(x, alpha))




def rvs(alpha: Any, size: Any = 1, random_state: Any = None) -> Any:
    """Draws from the Dirichlet distribution (scipy.stats.dirichlet.rvs): numpy arrays of shape
    (size, K) from `random_state` (a numpy Generator or RandomState; by default numpy's global
    RandomState, as in scipy, so the same seed gives scipy's draws). Not traceable: sampling
    under a transform goes through functrans.random."""
    alpha = np.asarray(alpha, np.float64)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.rvs: alpha must be one-dimensional (K,), got shape "
                         f"{alpha.shape}. Pass the K concentrations as a vector.")
    state = np.random.mtrand._rand if random_state is None else random_state
    return state.dirichlet(alpha, size)
