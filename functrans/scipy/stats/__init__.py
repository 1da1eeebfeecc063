"""scipy.stats distributions over functrans primitives, one module per distribution as in
jax.scipy.stats: each offers scipy's pdf/logpdf (pmf/logpmf for poisson), cdf/logcdf and
sf/logsf with scipy's loc/scale and shape arguments. scipy is not needed.

>>> from functrans.scipy import stats
>>> round(float(stats.norm.logpdf(0.0)), 6)  # -log sqrt(2 pi)
-0.918939
"""

from functrans.scipy.stats import (beta, cauchy, chi2, dirichlet, expon, gamma,  # noqa: F401
                                   laplace, logistic, multivariate_normal, norm, poisson, t,
                                   uniform)

__all__ = ["beta", "cauchy", "chi2", "dirichlet", "expon", "gamma", "laplace", "logistic",
           "multivariate_normal", "norm", "poisson", "t", "uniform"]
