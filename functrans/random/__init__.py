"""JAX's random key API on functrans: the same keys and the same bits as JAX's default
generator (threefry2x32 with partitionable counters), and samplers derived from the bits as
JAX derives them.

>>> import functrans as ft
>>> key = ft.random.PRNGKey(0)
>>> key, sub = ft.random.split(key)
>>> ft.random.normal(sub, (2, 3)).shape
(2, 3)
"""

from functrans.random._distributions import (  # noqa: F401
    bernoulli, beta, categorical, choice, dirichlet, exponential, gamma, gumbel, laplace,
    loggamma, logistic, multivariate_normal, normal, orthogonal, permutation, randint,
    truncated_normal, uniform)
from functrans.random._keys import (  # noqa: F401
    KeyArray, PRNGKey, bits, fold_in, key, key_data, key_impl, split, wrap_key_data)

__all__ = [
    "KeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
    "bits", "uniform", "normal", "truncated_normal", "randint", "bernoulli", "choice",
    "permutation", "categorical", "gumbel", "gamma", "loggamma", "beta", "dirichlet",
    "exponential", "laplace", "logistic", "multivariate_normal", "orthogonal"]
