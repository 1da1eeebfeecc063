"""The multivariate normal distribution (scipy.stats.multivariate_normal): `mean` (n,) and
covariance `cov` (n, n), a scalar (a multiple of the identity) or, with a scalar mean, the
variance; x's last axis holds the n coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.errors import ArgumentError, ShapeError
from functrans.scipy.stats._core import promote_inexact

__all__ = ["logpdf", "pdf", "entropy"]

_LOG_2PI = float(np.log(2 * np.pi))


def _check_allow_singular(allow_singular, fname):
    if allow_singular:
        raise ArgumentError(f"multivariate_normal.{fname}: allow_singular=True is not supported "
                            "(the density uses the Cholesky factor of cov, which needs cov "
                            "positive definite). Regularise cov (cov + eps * I) instead.")


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: Any = False) -> Any:
    """log of the multivariate normal density (scipy.stats.multivariate_normal.logpdf), by the
    Cholesky factor of cov (as JAX computes it). allow_singular=True is not supported."""
    _check_allow_singular(allow_singular, "logpdf")
    x, mean, cov = promote_inexact(x, mean, cov)
    if mean.ndim == 0:
        y = x - mean
        return -0.5 * y * y / cov - 0.5 * (_LOG_2PI + fnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if cov.ndim == 0:
        return -0.5 * fnp.sum(y * y, axis=-1) / cov - n / 2 * (_LOG_2PI + fnp.log(cov))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ShapeError(f"multivariate_normal.logpdf: cov has shape {tuple(cov.shape)} but "
                         f"mean has {n} entries; pass an ({n}, {n}) covariance matrix (or a "
                         "scalar for a multiple of the identity).")
    chol = fnp.linalg.cholesky(cov)
    # z = L^-1 (x - mean): the Mahalanobis distance is |z|^2
    z = fnp.einsum("...ij,...j->...i", fnp.linalg.inv(chol), y)
    log_det = fnp.sum(fnp.log(fnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * fnp.sum(z * z, axis=-1) - n / 2 * _LOG_2PI - log_det


def pdf(x: Any, mean: Any, cov: Any, allow_singular: Any = False) -> Any:
    """The multivariate normal density (scipy.stats.multivariate_normal.pdf)."""
    _check_allow_singular(allow_singular, "pdf")
    return fnp.exp(logpdf(x, mean, cov))


def entropy(mean: Any = None, cov: Any = 1) -> Any:
    """The differential entropy (n (1 + log 2 pi) + log det cov) / 2
    (scipy.stats.multivariate_normal.entropy); the mean does not enter."""
    cov, = promote_inexact(cov)
    if cov.ndim == 0:
        n = 1 if mean is None else int(np.size(mean))
        return 0.5 * n * (1 + _LOG_2PI + fnp.log(cov))
    n = cov.shape[-1]
    _, log_det = fnp.linalg.slogdet(cov)
    return 0.5 * (n * (1 + _LOG_2PI) + log_det)
