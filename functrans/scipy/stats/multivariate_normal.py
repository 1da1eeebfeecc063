"""The multivariate normal distribution (scipy.stats.multivariate_normal): `mean` (n,) and
covariance `cov` (n, n), a scalar (a multiple of the identity) or, with a scalar mean, the
variance; x's last axis holds the n coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.core.trace import Tracer
from functrans.errors import ShapeError
from functrans.scipy.stats._core import promote_inexact

__all__ = ["logpdf", "pdf", "entropy"]

_LOG_2PI = float(np.log(2 * np.pi))


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: Any = False) -> Any:
    """log of the multivariate normal density (scipy.stats.multivariate_normal.logpdf), by the
    Cholesky factor of cov (as JAX computes it). With allow_singular=True, as scipy: by the
    eigendecomposition of cov (its lower triangle), eigenvalues up to 1e6 eps max|s| (1e3 in
    float32) counted as zero, the pseudo-inverse and pseudo-determinant over the rest, and
    -inf off the support (x - mean outside the range of cov). Its derivative in cov is eigh's
    (JAX's), undefined where eigenvalues repeat, as at a rank-deficient cov with two zeros."""
    x, mean, cov = promote_inexact(x, mean, cov)
    if mean.ndim == 0:
        y = x - mean
        if allow_singular:
            return _singular_logpdf(y[..., None], fnp.reshape(cov, (1, 1)))
        return -0.5 * y * y / cov - 0.5 * (_LOG_2PI + fnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if cov.ndim == 0:
        if allow_singular:
            return _singular_logpdf(y, cov * fnp.eye(n, dtype=cov.dtype))
        return -0.5 * fnp.sum(y * y, axis=-1) / cov - n / 2 * (_LOG_2PI + fnp.log(cov))
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ShapeError(f"multivariate_normal.logpdf: cov has shape {tuple(cov.shape)} but "
                         f"mean has {n} entries; pass an ({n}, {n}) covariance matrix (or a "
                         "scalar for a multiple of the identity).")
    if allow_singular:
        return _singular_logpdf(y, cov)
    chol = fnp.linalg.cholesky(cov)
    # z = L^-1 (x - mean): the Mahalanobis distance is |z|^2
    z = fnp.einsum("...ij,...j->...i", fnp.linalg.inv(chol), y)
    log_det = fnp.sum(fnp.log(fnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * fnp.sum(z * z, axis=-1) - n / 2 * _LOG_2PI - log_det


def _singular_logpdf(y, cov):
    """scipy's _PSD route: eigh of cov, pseudo-inverse and pseudo-determinant over the
    eigenvalues above scipy's cutoff, -inf where y leaves the range of cov."""
    s, u = fnp.linalg.eigh(cov)
    factor = 1e6 if s.dtype == np.float64 else 1e3
    eps = factor * np.finfo(s.dtype).eps * fnp.max(fnp.abs(s), axis=-1, keepdims=True)
    _check_semidefinite(s, eps)
    keep = s > eps
    s_kept = fnp.where(keep, s, fnp.ones_like(s))
    w = fnp.einsum("...i,...ij->...j", y, u)        # y in cov's eigenbasis
    maha = fnp.sum(fnp.where(keep, w * w / s_kept, fnp.zeros_like(w)), axis=-1)
    rank = fnp.sum(keep, axis=-1).astype(s.dtype)
    log_pdet = fnp.sum(fnp.where(keep, fnp.log(s_kept), fnp.zeros_like(s)), axis=-1)
    out = -0.5 * (rank * _LOG_2PI + log_pdet + maha)
    # scipy's test |y's part in cov's null space| < 1e3 eps, squared on both sides
    off = fnp.sum(fnp.where(keep, fnp.zeros_like(w), w) ** 2, axis=-1)
    return fnp.where(off < (1e3 * eps[..., 0]) ** 2, out, -np.inf)


def _check_semidefinite(s, eps):
    values = [v.concrete_value() if isinstance(v, Tracer) else v for v in (s, eps)]
    if all(v is not None for v in values) and np.any(np.asarray(values[0]).min(axis=-1)
                                                     < -np.asarray(values[1])[..., 0]):
        raise ValueError("multivariate_normal: cov must be symmetric positive semidefinite "
                         "(it has an eigenvalue below -eps); check that it is a covariance.")


def pdf(x: Any, mean: Any, cov: Any, allow_singular: Any = False) -> Any:
    """The multivariate normal density (scipy.stats.multivariate_normal.pdf)."""
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


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
