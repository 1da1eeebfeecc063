"""Convolutions and window reductions, composed from pad, strided slices and one dot_general.

The one implementation behind `functrans.lax.conv_general_dilated` / `reduce_window`, the
convolution and pooling layers of `functrans.example_libraries.stax` and functrans.torch's
`conv1d`/`conv2d` and pools. No primitive of its own: every window is a strided `slice` of the
padded operand (`pad` also inserts the zeros of an lhs dilation), so grad, vmap, jit, jvp and
hessian run through it with the table's existing rules.

>>> import numpy as np
>>> from functrans import lax
>>> x = np.arange(5.0).reshape(1, 1, 5)
>>> lax.conv_general_dilated(x, np.ones((1, 1, 2)), (1,), "VALID").tolist()
[[[1.0, 3.0, 5.0, 7.0]]]
"""

from __future__ import annotations

import itertools
import operator
from collections import namedtuple
from collections.abc import Callable, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans.errors import ArgumentError, ShapeError, UnsupportedFeatureError
from functrans.primitives import elementwise as E
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape_ops import pad, reshape, slice_, transpose

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "padtype_to_pads", "conv_general_shape_tuple", "reduce_window_shape_tuple",
           "conv_general_dilated", "conv", "conv_with_general_padding", "reduce_window",
           "window_slices"]

ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = """Where batch/feature and spatial axes sit: each spec is
(batch or out-feature axis, feature or in-feature axis, spatial axes...), as in JAX.

>>> from functrans import lax
>>> lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)).rhs_spec
(3, 2, 0, 1)
"""


def conv_general_permutations(dimension_numbers) -> tuple:
    """(lhs, rhs, out) axis orders of string specs such as ('NHWC', 'HWIO', 'NHWC'); spatial
    axes of lhs and out are matched to rhs's by letter, as JAX matches them.

    >>> from functrans import lax
    >>> lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b) in zip(dimension_numbers, charpairs):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(spec) != len(set(spec)):
            raise ArgumentError(f"conv dimension_numbers: spec {spec!r} must name {a!r} and "
                                f"{b!r} once each and no letter twice, as in "
                                "('NCHW', 'OIHW', 'NCHW').")
    spatial = [set(spec) - set(pair) for spec, pair in zip(dimension_numbers, charpairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise ArgumentError(f"conv dimension_numbers {dimension_numbers!r}: the three specs "
                            "must name the same spatial letters.")

    def perm(spec, pair):
        axes = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            axes.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *axes)

    return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, charpairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three strings, or a ConvDimensionNumbers) as axis orders;
    None means (N, C, spatial...) for lhs and out and (O, I, spatial...) for rhs.

    >>> from functrans import lax
    >>> lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ShapeError(f"conv: lhs and rhs need the same rank, at least 2; got shapes "
                         f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    specs = tuple(dimension_numbers)
    if len(specs) != 3 or any(len(s) != len(lhs_shape) for s in specs):
        raise ArgumentError(f"conv dimension_numbers {dimension_numbers!r}: need three specs "
                            f"of length {len(lhs_shape)} (the operands' rank).")
    if all(isinstance(s, str) for s in specs):
        return ConvDimensionNumbers(*conv_general_permutations(specs))
    return ConvDimensionNumbers(*(tuple(operator.index(i) for i in s) for s in specs))


def _dilate(size: int, d: int) -> int:
    return 0 if size == 0 else 1 + d * (size - 1)


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """(low, high) per dimension for 'VALID', 'SAME' (extra on the high side), 'SAME_LOWER'
    or explicit pairs, as jax.lax.padtype_to_pads.

    >>> from functrans import lax
    >>> lax.padtype_to_pads((5, 6), (2, 3), (1, 2), "SAME")
    [(0, 1), (0, 1)]
    """
    if not isinstance(padding, str):
        pads = [tuple(operator.index(p) for p in pair) for pair in padding]
        if len(pads) != len(in_shape) or any(len(p) != 2 for p in pads):
            raise ArgumentError(f"padding {padding!r}: need one (low, high) pair for each of "
                                f"the {len(in_shape)} window dimensions.")
        return pads
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind in ("SAME", "SAME_LOWER"):
        pads = []
        for n, w, s in zip(in_shape, window_shape, window_strides):
            total = max((-(-n // s) - 1) * s + w - n, 0)
            low = total // 2 if kind == "SAME" else -(-total // 2)
            pads.append((low, total - low))
        return pads
    raise ArgumentError(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or a sequence of "
                        f"(low, high) pairs, got {padding!r}.")


def _out_sizes(in_shape, window, strides, pads, base_dilation, window_dilation):
    sizes = []
    for n, w, s, (lo, hi), bd, wd in zip(in_shape, window, strides, pads, base_dilation,
                                         window_dilation):
        span = _dilate(n, bd) + lo + hi - _dilate(w, wd)
        sizes.append(max(span // s + 1, 0) if span >= 0 else 0)
    return sizes


def _ints(name, values, n, default=1):
    vals = (default,) * n if values is None else tuple(operator.index(v) for v in values)
    if len(vals) != n or any(v < 1 for v in vals):
        raise ArgumentError(f"conv/reduce_window: {name} {values!r} needs {n} positive "
                            "integers (one per window dimension).")
    return vals


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers=None, lhs_dilation=None,
                             rhs_dilation=None) -> tuple:
    """The shape conv_general_dilated gives (out_spec's layout), from shapes alone.

    >>> from functrans import lax
    >>> lax.conv_general_shape_tuple((8, 1, 28, 28), (6, 1, 5, 5), (1, 1), "VALID")
    (8, 6, 24, 24)
    """
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = len(lhs_shape) - 2
    lhs_sp = [lhs_shape[i] for i in dn.lhs_spec[2:]]
    rhs_sp = [rhs_shape[i] for i in dn.rhs_spec[2:]]
    strides = _ints("window_strides", window_strides, nsp)
    ldil, rdil = _ints("lhs_dilation", lhs_dilation, nsp), _ints("rhs_dilation", rhs_dilation, nsp)
    pads = padtype_to_pads(lhs_sp, [_dilate(k, d) for k, d in zip(rhs_sp, rdil)], strides,
                           padding)
    canonical = (lhs_shape[dn.lhs_spec[0]], rhs_shape[dn.rhs_spec[0]],
                 *_out_sizes(lhs_sp, rhs_sp, strides, pads, ldil, rdil))
    out = [0] * len(lhs_shape)
    for k, axis in enumerate(dn.out_spec):
        out[axis] = canonical[k]
    return tuple(out)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The shape reduce_window gives, from shapes alone.

    >>> from functrans import lax
    >>> lax.reduce_window_shape_tuple((8, 24, 24, 6), (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    (8, 12, 12, 6)
    """
    n = len(operand_shape)
    strides = _ints("window_strides", window_strides, n)
    bdil = _ints("base_dilation", base_dilation, n)
    wdil = _ints("window_dilation", window_dilation, n)
    dilated = [_dilate(d, b) for d, b in zip(operand_shape, bdil)]
    pads = padtype_to_pads(dilated, [_dilate(w, d) for w, d in zip(window_dimensions, wdil)],
                           strides, padding)
    return tuple(_out_sizes(operand_shape, window_dimensions, strides, pads, bdil, wdil))


def window_slices(x, window, strides, dilation=None):
    """One strided slice of `x` per window offset (row-major order), over the last
    len(window) axes: slice k holds, at output position i, x[i * stride + k * dilation].

    >>> import numpy as np
    >>> from functrans.convolution import window_slices
    >>> [s.tolist() for s in window_slices(np.arange(5.0), (2,), (2,))]
    [[0.0, 2.0], [1.0, 3.0]]
    """
    nw = len(window)
    lead = x.ndim - nw
    dilation = dilation or (1,) * nw
    sizes = _out_sizes(x.shape[lead:], window, strides, [(0, 0)] * nw, (1,) * nw, dilation)
    for offset in itertools.product(*(range(w) for w in window)):
        starts = [k * d for k, d in zip(offset, dilation)]
        limits = [min(s + (m - 1) * st + 1, n) if m else s
                  for s, m, st, n in zip(starts, sizes, strides, x.shape[lead:])]
        yield slice_(x, (0,) * lead + tuple(starts), tuple(x.shape[:lead]) + tuple(limits),
                     (1,) * lead + tuple(strides))


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None, dimension_numbers=None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision=None, preferred_element_type=None):
    """jax.lax.conv_general_dilated: an n-d convolution (cross-correlation, as in JAX) with
    strides, padding ('VALID', 'SAME', 'SAME_LOWER' or (low, high) pairs), lhs dilation (a
    transposed convolution), rhs (atrous) dilation and feature groups. `precision` is
    accepted and ignored (numpy computes in the operands' dtype).

    >>> import numpy as np
    >>> from functrans import lax
    >>> x, k = np.ones((1, 4, 4, 1)), np.ones((3, 3, 1, 2))
    >>> lax.conv_general_dilated(x, k, (1, 1), "SAME",
    ...                          dimension_numbers=("NHWC", "HWIO", "NHWC"))[0, :, :, 0].tolist()
    [[4.0, 6.0, 6.0, 4.0], [6.0, 9.0, 9.0, 6.0], [6.0, 9.0, 9.0, 6.0], [4.0, 6.0, 6.0, 4.0]]
    """
    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    if batch_group_count != 1:
        raise UnsupportedFeatureError(
            f"conv_general_dilated: batch_group_count={batch_group_count} is not supported "
            "(JAX uses it for the filter gradient of grouped convolutions). Use "
            "feature_group_count, or take the filter gradient with functrans.grad.")
    nsp = lhs.ndim - 2
    strides = _ints("window_strides", window_strides, nsp)
    ldil, rdil = _ints("lhs_dilation", lhs_dilation, nsp), _ints("rhs_dilation", rhs_dilation, nsp)
    groups = operator.index(feature_group_count)
    # channels last, so that each window's (C, K) block is contiguous for the product
    x = transpose(lhs, (dn.lhs_spec[0], *dn.lhs_spec[2:], dn.lhs_spec[1]))  # N, spatial..., C
    w = transpose(rhs, dn.rhs_spec)                                         # O, I, spatial...
    n, c = x.shape[0], x.shape[-1]
    o, i = w.shape[:2]
    if groups < 1 or c != i * groups or o % groups:
        raise ShapeError(f"conv_general_dilated: lhs has {c} features and rhs {i} input and "
                         f"{o} output features; with feature_group_count={groups} the lhs "
                         f"features must be {i} * {groups} and the output features a multiple "
                         f"of {groups}.")
    dtype = fnp.result_type(x, w) if preferred_element_type is None else preferred_element_type
    x, w = fnp.asarray(x, dtype), fnp.asarray(w, dtype)
    kernel = w.shape[2:]
    if isinstance(padding, str) and any(d != 1 for d in ldil):
        raise ArgumentError(f"conv_general_dilated: padding {padding!r} with lhs_dilation "
                            f"{ldil} (a transposed convolution): as in JAX, give the padding "
                            "as explicit (low, high) pairs.")
    pads = padtype_to_pads(x.shape[1:-1], [_dilate(k, d) for k, d in zip(kernel, rdil)],
                           strides, padding)
    config = ((0, 0, 0),) + tuple((lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)) + \
        ((0, 0, 0),)
    x = pad(x, np.zeros((), x.dtype), config)
    patches = list(window_slices(x, kernel + (1,), strides + (1,), rdil + (1,)))
    out_sp = tuple(patches[0].shape[1:-1])
    k = len(patches)
    # im2col: (N, out..., C, K) against (O, C, K), the groups a batch axis of the product
    cols = fnp.stack(patches, axis=-1)
    if groups == 1:
        y = dot_general(cols, reshape(w, (o, i, k)), (((nsp + 1, nsp + 2), (1, 2)), ((), ())))
    else:
        cols = reshape(cols, (n, *out_sp, groups, i, k))
        filters = reshape(w, (groups, o // groups, i, k))
        y = dot_general(cols, filters, (((nsp + 2, nsp + 3), (2, 3)), ((nsp + 1,), (0,))))
        y = transpose(y, (*range(1, nsp + 2), 0, nsp + 2))   # N, out..., G, O/G
        y = reshape(y, (n, *out_sp, o))
    # y is (N, out..., O): put N, O and the spatial axes where out_spec says
    source = (0, nsp + 1, *range(1, nsp + 1))
    perm = [0] * (nsp + 2)
    for axis, src in zip(dn.out_spec, source):
        perm[axis] = src
    return transpose(y, tuple(perm))


def conv(lhs, rhs, window_strides: Sequence[int], padding: str, precision=None,
         preferred_element_type=None):
    """jax.lax.conv: conv_general_dilated on NCHW inputs and OIHW filters, no dilation.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.conv(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), (1, 1), "VALID").tolist()
    [[[[4.0, 4.0], [4.0, 4.0]]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides: Sequence[int], padding,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision=None,
                              preferred_element_type=None):
    """jax.lax.conv_with_general_padding: conv_general_dilated on NCHW / OIHW layouts.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.conv_with_general_padding(np.ones((1, 1, 2)), np.ones((1, 1, 2)), (1,),
    ...                               [(1, 1)], None, None).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _choose(better):
    def step(acc, patch):
        # the first extremum of a window wins (later ties keep it), and a NaN wins: the
        # derivative goes to that one element, as JAX's reduce_window_max/min and PyTorch's
        # max pools send it (a fold of max would split it between ties)
        return E.select(E.or_(better(patch, acc), E.ne(patch, patch)), patch, acc)
    return step


_CHOOSERS = {E.max: _choose(E.gt), fnp.maximum: _choose(E.gt),
             E.min: _choose(E.lt), fnp.minimum: _choose(E.lt)}


def reduce_window(operand, init_value, computation: Callable, window_dimensions,
                  window_strides, padding, base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window for one operand: `computation` (a binary elementwise function
    such as lax.add or lax.max) folded over each window, starting from `init_value`, which also
    fills the padding. With a max or min, each window's derivative goes to its first extremum.

    >>> import numpy as np
    >>> from functrans.convolution import reduce_window
    >>> reduce_window(np.arange(6.0).reshape(2, 3), 0.0, np.add, (2, 2), (1, 1), "VALID").tolist()
    [[8.0, 12.0]]
    """
    x = fnp.asarray(operand)
    init = fnp.asarray(init_value, x.dtype)
    nd = x.ndim
    window = tuple(operator.index(w) for w in window_dimensions)
    if len(window) != nd:
        raise ShapeError(f"reduce_window: window_dimensions {window} need one entry per axis "
                         f"of the operand, of shape {x.shape}.")
    strides = _ints("window_strides", window_strides, nd)
    bdil = _ints("base_dilation", base_dilation, nd)
    wdil = _ints("window_dilation", window_dilation, nd)
    pads = padtype_to_pads([_dilate(d, b) for d, b in zip(x.shape, bdil)],
                           [_dilate(w, d) for w, d in zip(window, wdil)], strides, padding)
    if isinstance(init, np.ndarray):
        fill = init
    else:  # a traced init value: pad with zeros and put it in by select
        fill = np.zeros((), x.dtype)
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(pads, bdil))
    padded = pad(x, fill, config)
    if fill is not init:
        inside = pad(np.ones(x.shape, np.bool_), np.zeros((), np.bool_), config)
        padded = E.select(inside, padded, fnp.broadcast_to(init, padded.shape))
    step = _CHOOSERS.get(computation, computation)
    acc = None
    for patch in window_slices(padded, window, strides, wdil):
        acc = step(fnp.broadcast_to(init, patch.shape) if acc is None else acc, patch)
    if acc is None:  # an empty window
        shape = reduce_window_shape_tuple(x.shape, window, strides, pads, bdil, wdil)
        return fnp.broadcast_to(init, shape)
    return acc
