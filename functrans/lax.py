"""`functrans.lax`: structured control flow, derivative control, convolutions and window
reductions, named as in `jax.lax`.

>>> import numpy as np
>>> import functrans as ft
>>> from functrans import lax
>>> float(ft.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0))
12.0
"""

import builtins
import operator

import numpy as np

import functrans.numpy as fnp
from functrans.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,
                                   conv_general_dilated, conv_general_permutations,
                                   conv_general_shape_tuple, conv_with_general_padding,
                                   padtype_to_pads, reduce_window_shape_tuple)
from functrans import convolution as _convolution
from functrans.errors import ShapeError
from functrans.primitives import elementwise as _elementwise
from functrans.primitives.ad_control import stop_gradient
from functrans.transforms.control_flow import cond, fori_loop, scan, switch, while_loop

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "stop_gradient",
           "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "clamp",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_dimension_numbers",
           "ConvDimensionNumbers", "conv_general_permutations", "conv_general_shape_tuple",
           "padtype_to_pads", "reduce_window", "reduce_window_shape_tuple", "add", "mul", "max",
           "min"]


# --- the binary operations reduce_window programs pass as `computation` ----------------------

def add(x, y):
    """x + y elementwise, as `jax.lax.add` (a `reduce_window` computation).

    >>> from functrans import lax
    >>> float(lax.add(1.0, 2.0))
    3.0
    """
    return _elementwise.add(x, y)


def mul(x, y):
    """x * y elementwise, as `jax.lax.mul`.

    >>> from functrans import lax
    >>> float(lax.mul(2.0, 3.0))
    6.0
    """
    return _elementwise.mul(x, y)


def max(x, y):  # noqa: A001  (jax.lax.max)
    """The larger of x and y elementwise, as `jax.lax.max`; as a `reduce_window` computation,
    each window's derivative goes to its first maximum.

    >>> from functrans import lax
    >>> float(lax.max(1.0, 2.0))
    2.0
    """
    return _elementwise.max(x, y)


def min(x, y):  # noqa: A001  (jax.lax.min)
    """The smaller of x and y elementwise, as `jax.lax.min`.

    >>> from functrans import lax
    >>> float(lax.min(1.0, 2.0))
    1.0
    """
    return _elementwise.min(x, y)


_AS_PRIMITIVE = {add: _elementwise.add, mul: _elementwise.mul, max: _elementwise.max,
                 min: _elementwise.min}


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """`jax.lax.reduce_window` for one operand: `computation` (lax.add, lax.max, lax.min or
    another binary elementwise function) folded over each window from `init_value`, which also
    fills the padding; with max or min each window's derivative goes to its first extremum.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.reduce_window(np.arange(6.0).reshape(2, 3), -np.inf, lax.max, (2, 2), (1, 1),
    ...                   "VALID").tolist()
    [[4.0, 5.0]]
    """
    return _convolution.reduce_window(operand, init_value,
                                      _AS_PRIMITIVE.get(computation, computation),
                                      window_dimensions, window_strides, padding,
                                      base_dilation, window_dilation)


def clamp(min, x, max):  # noqa: A002  (jax.lax.clamp's argument names)
    """`x` limited to [`min`, `max`] elementwise, as `jax.lax.clamp` (the bounds take x's dtype;
    `max` wins where min > max). Its derivative is JAX's: x's is 1 strictly inside and 0 at the
    bounds (the `clamp` row, which states PyTorch's beside it: docs/conventions.md).

    >>> import functrans as ft
    >>> from functrans import lax
    >>> float(lax.clamp(0.0, 2.5, 1.0)), float(ft.grad(lambda x: lax.clamp(0.0, x, 1.0))(1.0))
    (1.0, 0.0)
    """
    x = fnp.asarray(x)
    return _elementwise.clamp(x, fnp.asarray(min, x.dtype), fnp.asarray(max, x.dtype))


def map(f, xs):  # noqa: A001  (jax.lax.map)
    """`f` applied to each slice of `xs` along axis 0, results stacked: a scan without carry.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.map(lambda x: x * 2.0, np.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys




def dynamic_slice(operand, start_indices, slice_sizes):
    """The block of `operand` of shape `slice_sizes` starting at `start_indices`, which may be
    traced; as in JAX, each start is clamped so that the block lies inside `operand`.

    >>> import numpy as np
    >>> import functrans as ft
    >>> from functrans import lax
    >>> ft.jit(lambda i: lax.dynamic_slice(np.arange(6.0), (i,), (3,)))(4).tolist()
    [3.0, 4.0, 5.0]
    """
    x = fnp.asarray(operand)
    starts = list(start_indices)
    sizes = [operator.index(s) for s in slice_sizes]
    if len(starts) != x.ndim or len(sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: operand of shape {x.shape} needs {x.ndim} start "
                         f"indices and slice sizes, got {len(starts)} and {len(sizes)}.")
    for axis, (start, size) in enumerate(zip(starts, sizes)):
        dim = x.shape[axis]
        if not 0 <= size <= dim:
            raise ShapeError(f"dynamic_slice: slice size {size} along axis {axis} does not fit "
                             f"the operand's shape {x.shape}.")
        if size == dim:
            continue
        start = fnp.clip(fnp.asarray(start), 0, dim - size)
        x = fnp.take(x, start + np.arange(size, dtype=start.dtype), axis=axis)
    return x


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0):
    """`dynamic_slice` along one axis: `slice_size` entries from `start_index` (clamped).

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.dynamic_slice_in_dim(np.arange(6.0).reshape(2, 3), 1, 2, axis=1).tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    x = fnp.asarray(operand)
    axis = operator.index(axis) % builtins.max(x.ndim, 1)  # lax.max is the elementwise one
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True):
    """The entry at `index` (clamped) along `axis`, keeping that axis with size 1 unless
    `keepdims=False`.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.dynamic_index_in_dim(np.arange(6.0).reshape(2, 3), 1, keepdims=False).tolist()
    [3.0, 4.0, 5.0]
    """
    x = dynamic_slice_in_dim(operand, index, 1, axis)
    return x if keepdims else fnp.squeeze(x, axis=axis)
