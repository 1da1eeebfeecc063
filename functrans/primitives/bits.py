"""Bit-level primitives: the threefry2x32 counter hash, logical shifts and bit casts.

They carry the random number generator (functrans.random): threefry2x32 turns (key, counter)
pairs into random uint32 words, the shifts and casts turn words into floats. None has a
derivative (integer outputs, or floats made from bits): each row says so with a zero JVP.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray
from functrans.errors import DTypeError
from functrans.primitives.broadcasting import INTEGRAL, broadcasting_batch, nary_aval, unary_batch
from functrans.primitives.layout import zero_jvp
from functrans.primitives.registry import define


# --- threefry2x32 ----------------------------------------------------------------------------

# Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
# SC 2011): rotation constants for the two alternating groups of four rounds, and the key
# schedule parity constant.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def _rotate_left(x, r, tmp):
    """x <- (x << r) | (x >> (32 - r)), in place (tmp is scratch of x's shape)."""
    xp.right_shift(x, np.uint32(32 - r), out=tmp)
    xp.left_shift(x, np.uint32(r), out=x)
    xp.bitwise_or(x, tmp, out=x)


_CHUNK = 1 << 16  # elements hashed at a time: the working arrays stay in cache


def _threefry2x32_impl(k1, k2, x1, x2):
    out_shape = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, x1, x2)))
    shape = out_shape or (1,)   # work on arrays: 0-d operations would give numpy scalars
    size = int(np.prod(shape))

    def flat(k):  # a scalar key word stays a scalar; others become one row of words
        k = xp.asarray(k, np.uint32)
        return k if k.ndim == 0 else xp.ascontiguousarray(xp.broadcast_to(k, shape)).reshape(-1)
    k1, k2 = flat(k1), flat(k2)
    ks = (k1, k2, k1 ^ k2 ^ _PARITY)
    # fresh arrays, updated in place below (uint32 arithmetic wraps modulo 2**32)
    def start(x, k):
        v = xp.add(xp.asarray(x, np.uint32).reshape(-1) if np.shape(x) == shape else
                   xp.broadcast_to(xp.asarray(x, np.uint32), shape).reshape(-1), k,
                   dtype=np.uint32)
        return v if v.shape == (size,) else xp.broadcast_to(v, (size,)).copy()
    a, b = start(x1, ks[0]), start(x2, ks[1])
    tmp = xp.empty(min(size, _CHUNK), np.uint32)
    for lo in range(0, size, _CHUNK):
        hi = min(lo + _CHUNK, size)
        _threefry_rounds(a[lo:hi], b[lo:hi], [k if k.ndim == 0 else k[lo:hi] for k in ks],
                         tmp[:hi - lo])
    return [a.reshape(out_shape), b.reshape(out_shape)]


def _threefry_rounds(a, b, ks, tmp):
    """The 20 rounds on one chunk, in place on a and b."""
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            xp.add(a, b, out=a)
            _rotate_left(b, r, tmp)
            xp.bitwise_xor(b, a, out=b)
        # key injection after every four rounds
        xp.add(a, ks[(group + 1) % 3], out=a)
        xp.add(b, ks[(group + 2) % 3], out=b)
        xp.add(b, np.uint32(group + 1), out=b)


def _threefry2x32_abstract(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    if any(a.dtype != np.uint32 for a in avals):
        raise DTypeError("threefry2x32: every operand must be uint32, got "
                         f"{[a.dtype.name for a in avals]}. Convert with .astype(np.uint32).")
    shape = nary_aval("threefry2x32")(*(ShapedArray(a.shape, np.dtype(np.uint32))
                                        for a in avals)).shape
    return [ShapedArray(shape, np.dtype(np.uint32))] * 2


def _threefry2x32_batch(vals, dims):
    out, bd = broadcasting_batch(threefry2x32_p)(vals, dims)
    return out, [bd, bd]


threefry2x32_p = define("threefry2x32", impl=_threefry2x32_impl,
                        abstract=_threefry2x32_abstract, multiple_results=True,
                        props=("elementwise",), facts=dict(fresh_result=True))
threefry2x32_p.rules["jvp"] = zero_jvp(threefry2x32_p)   # integer outputs: no derivative
threefry2x32_p.rules["batch"] = _threefry2x32_batch


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 hash of the counter pairs (x1, x2) under the key (k1, k2): two uint32
    arrays of the operands' broadcast shape."""
    return threefry2x32_p.bind(k1, k2, x1, x2)


# --- shifts ----------------------------------------------------------------------------------

def _shift_impl(direction):
    def impl(x, y):
        x = xp.asarray(x)
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        if np.ndim(y) == 0 and 0 <= int(y) < unsigned.itemsize * 8 and x.dtype == unsigned:
            return direction(x, x.dtype.type(y))   # the common case: a fixed in-range shift
        # on the unsigned view (two's complement wraps) both shifts are logical: zeros come in
        xu, yu = x.astype(unsigned), xp.asarray(y).astype(unsigned)
        # a shift by the bit width or more gives 0, as XLA's (C leaves it undefined); a
        # negative amount wraps to a huge one
        big = yu >= unsigned.itemsize * 8
        zero = np.zeros((), unsigned)
        out = xp.where(big, zero, direction(xu, xp.where(big, zero, yu)))
        return xp.asarray(out).astype(x.dtype)
    return impl


def _shift(name, direction):
    prim = define(name, impl=_shift_impl(direction),
                  abstract=nary_aval(name, kinds=INTEGRAL.replace("b", "")),
                  props=("elementwise",))
    prim.rules["jvp"] = zero_jvp(prim)
    prim.rules["batch"] = broadcasting_batch(prim)
    return prim


# on the unsigned view both shifts are logical: zeros come in
shift_left_p = _shift("shift_left", xp.left_shift)
shift_right_logical_p = _shift("shift_right_logical", xp.right_shift)


def shift_left(x, y):
    """x << y elementwise (integers of one dtype); a shift by the bit width or more gives 0."""
    return shift_left_p.bind(x, y)


def shift_right_logical(x, y):
    """x >> y elementwise with zeros shifted in (for signed x too); a shift by the bit width
    or more gives 0."""
    return shift_right_logical_p.bind(x, y)


# --- bitcast_convert_type --------------------------------------------------------------------

def _bitcast_abstract(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if x.dtype.itemsize != new_dtype.itemsize:
        raise DTypeError(f"bitcast_convert_type: {x.dtype.name} and {new_dtype.name} have "
                         "different widths; bit casts keep the width (use convert_element_type "
                         "to convert values).")
    return ShapedArray(x.shape, new_dtype)


def _bitcast_impl(x, *, new_dtype):
    x = xp.asarray(x)
    return x.view(new_dtype) if x.ndim else x.reshape(1).view(new_dtype).reshape(())


bitcast_convert_type_p = define("bitcast_convert_type", impl=_bitcast_impl,
                                abstract=_bitcast_abstract, props=("elementwise",))
# the same bits read as another type: no derivative in either direction
bitcast_convert_type_p.rules["jvp"] = zero_jvp(bitcast_convert_type_p)
bitcast_convert_type_p.rules["batch"] = unary_batch(bitcast_convert_type_p)


def bitcast_convert_type(x, new_dtype):
    """The bits of `x` read as `new_dtype` (of the same width)."""
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype)
