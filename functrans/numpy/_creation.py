"""Array creation: array, zeros, ones, ... (concrete numpy arrays, constants to any trace)."""

from __future__ import annotations

import numpy as np

from functrans.numpy._core import asarray

__all__ = ["array", "asarray", "zeros", "ones"]


def array(object, dtype=None):
    return asarray(object, dtype)


def zeros(shape, dtype=None):
    return np.zeros(shape, dtype)


def ones(shape, dtype=None):
    return np.ones(shape, dtype)
