"""Weight initializers, as `jax.nn.initializers`: each factory returns
`init(key, shape, dtype=float64)`, drawing from `functrans.random` with the key as JAX draws
from `jax.random`, so that the same key gives JAX's values (to within the samplers' ulp
bounds).

>>> import functrans as ft
>>> w = ft.nn.initializers.glorot_uniform()(ft.random.PRNGKey(0), (3, 4))
>>> w.shape, str(w.dtype)
((3, 4), 'float64')
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans import random
from functrans.errors import DTypeError, ShapeError
from functrans.random._keys import canonical_shape

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal",
           "lecun_uniform", "lecun_normal", "orthogonal"]

Initializer = Callable[..., Any]
"""An initializer: init(key, shape, dtype=None) -> array."""


def _dtype(dtype, name: str) -> np.dtype:
    dtype = np.dtype(np.float64 if dtype is None else dtype)  # functrans' default float
    if dtype.kind != "f":
        raise DTypeError(f"{name}: dtype must be a real float dtype, got {dtype}. Pass "
                         "float64, float32 or float16.")
    return dtype


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An array of zeros (the key is unused), float64 by default.

    >>> import functrans as ft
    >>> ft.nn.initializers.zeros(ft.random.PRNGKey(0), (2,)).tolist()
    [0.0, 0.0]
    """
    return fnp.zeros(canonical_shape(shape, "zeros"), np.dtype(np.float64 if dtype is None
                                                                else dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An array of ones (the key is unused), float64 by default.

    >>> import functrans as ft
    >>> ft.nn.initializers.ones(ft.random.PRNGKey(0), (2,)).tolist()
    [1.0, 1.0]
    """
    return fnp.ones(canonical_shape(shape, "ones"), np.dtype(np.float64 if dtype is None
                                                              else dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer that fills its shape with `value`.

    >>> import functrans as ft
    >>> ft.nn.initializers.constant(-7.0)(ft.random.PRNGKey(0), (2,)).tolist()
    [-7.0, -7.0]
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = np.dtype(np.float64 if dtype is None else dtype)
        return fnp.full(canonical_shape(shape, "constant"), value, dtype=dtype)
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale).

    >>> import functrans as ft
    >>> w = ft.nn.initializers.uniform(10.0)(ft.random.PRNGKey(0), (3,))
    >>> bool(((w >= 0) & (w < 10)).all())
    True
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype, "uniform")
        return random.uniform(key, shape, dtype) * np.asarray(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and standard deviation
    `stddev`.

    >>> import functrans as ft
    >>> ft.nn.initializers.normal(5.0)(ft.random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype, "normal")
        return random.normal(key, shape, dtype) * np.asarray(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer drawing from a standard normal truncated to (lower, upper), times
    `stddev` (no correction of the standard deviation for the truncation, as JAX).

    >>> import functrans as ft
    >>> w = ft.nn.initializers.truncated_normal(1.0)(ft.random.PRNGKey(0), (100,))
    >>> bool((abs(w) < 2).all())
    True
    """
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype, "truncated_normal")
        return (random.truncated_normal(key, lower, upper, shape, dtype)
                * np.asarray(stddev, dtype))
    return init


def _axes_size(shape: tuple[int, ...], axes: int | Sequence[int]) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape: tuple[int, ...], in_axis, out_axis, batch_axis) -> tuple[float, float]:
    """(fan_in, fan_out) of a weights tensor, as JAX: the input and output sizes times the
    receptive field (the product of the axes that are neither inputs, outputs nor batch)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ShapeError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    try:
        in_size = _axes_size(shape, in_axis)
        out_size = _axes_size(shape, out_axis)
        batch_size = _axes_size(shape, batch_axis)
    except IndexError:
        raise ShapeError(f"variance_scaling: in_axis={in_axis}, out_axis={out_axis} or "
                         f"batch_axis={batch_axis} is out of range for the shape {shape}. "
                         "Pass axes of the weights' shape.") from None
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(scale: Any, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """An initializer whose draws have variance scale / n, n by `mode`: "fan_in",
    "fan_out", "fan_avg" (their mean) or "fan_geo_avg" (their geometric mean), the fans
    counting the receptive field (axes that are neither in_axis, out_axis nor batch_axis).
    `distribution` is "truncated_normal" (a normal truncated at 2 standard deviations,
    rescaled to the variance), "normal" or "uniform".

    >>> import functrans as ft
    >>> init = ft.nn.initializers.variance_scaling(2.0, "fan_in", "normal")
    >>> init(ft.random.PRNGKey(0), (4, 5)).shape
    (4, 5)
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode!r}. Pass "
                         "'fan_in', 'fan_out', 'fan_avg' or 'fan_geo_avg'.")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution!r}. Pass 'truncated_normal', 'normal' or 'uniform'.")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype, "variance_scaling")
        shape = canonical_shape(shape, "variance_scaling")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.asarray(scale / denominator, dtype)
        if distribution == "truncated_normal":
            # the constant is the standard deviation of a standard normal truncated to (-2, 2)
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * np.sqrt(3 * variance)
    return init


def _fan_initializer(name: str, title: str, scale: float, mode: str, distribution: str):
    """The factory `name`: variance_scaling with these settings, its docstring said once."""
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (
        f"The {title} initializer: variance_scaling({scale}, \"{mode}\", \"{distribution}\").\n\n"
        ">>> import functrans as ft\n"
        f">>> ft.nn.initializers.{name}()(ft.random.PRNGKey(0), (2, 3)).shape\n"
        "(2, 3)\n")
    return factory


glorot_uniform = _fan_initializer("glorot_uniform", "Glorot (Xavier) uniform", 1.0, "fan_avg",
                                  "uniform")
glorot_normal = _fan_initializer("glorot_normal", "Glorot (Xavier) normal", 1.0, "fan_avg",
                                 "truncated_normal")
lecun_uniform = _fan_initializer("lecun_uniform", "LeCun uniform", 1.0, "fan_in", "uniform")
lecun_normal = _fan_initializer("lecun_normal", "LeCun normal", 1.0, "fan_in",
                                "truncated_normal")
he_uniform = _fan_initializer("he_uniform", "He (Kaiming) uniform", 2.0, "fan_in", "uniform")
he_normal = _fan_initializer("he_normal", "He (Kaiming) normal", 2.0, "fan_in",
                             "truncated_normal")

xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices: the shape is read as a matrix whose
    columns lie along `column_axis` and whose rows are all other axes; the smaller side is
    orthonormal. Drawn by functrans.random.orthogonal, as JAX, and multiplied by `scale`.

    >>> import functrans as ft, numpy as np
    >>> w = ft.nn.initializers.orthogonal()(ft.random.PRNGKey(0), (3, 3))
    >>> bool(np.allclose(w.T @ w, np.eye(3)))
    True
    """
    column_axis = operator.index(column_axis)

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype, "orthogonal")
        shape = canonical_shape(shape, "orthogonal")
        if len(shape) < 2:
            raise ShapeError(f"orthogonal initializer requires at least a 2D shape, got "
                             f"{shape}. Pass the shape of a matrix (or a stack of them).")
        if any(dim == 0 for dim in shape):
            return fnp.zeros(shape, dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = fnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = fnp.moveaxis(q, -1, column_axis)
        return np.asarray(scale, dtype) * q
    return init
