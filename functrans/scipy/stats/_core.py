"""What the distributions share: argument promotion and the standardised variable."""

from __future__ import annotations

from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans.numpy._core import promote, result_dtype


def promote_inexact(*args) -> Any:
    """The arguments as arrays of one inexact dtype (numpy promotion, Python scalars weak;
    integers and booleans go to float64, as in scipy)."""
    dtype = result_dtype(*args)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return [fnp.asarray(a) for a in promote(*args, dtype=dtype)]


def standardize(x: Any, loc: Any, scale: Any) -> Any:
    """(x - loc) / scale, the variable of the standard distribution."""
    return (x - loc) / scale


def neg_inf_where(cond: Any, value: Any) -> Any:
    """value, or -inf where cond holds (outside a distribution's support)."""
    return fnp.where(cond, -np.inf, value)


def log_probability(p: Any) -> Any:
    """log(p) of a probability, -inf at p == 0 without numpy's divide-by-zero warning."""
    positive = p > 0
    return fnp.where(positive, fnp.log(fnp.where(positive, p, 1)), -np.inf)


def log_probability_pair(p: Any, q: Any) -> Any:
    """log(p) for a probability p whose complement q = 1 - p is also known: log(p) where p is
    small, log1p(-q) where p is near 1 (there log(p) would lose the digits q carries)."""
    small = p < 0.5
    return fnp.where(small, log_probability(p), fnp.log1p(-fnp.where(small, 0, q)))
