"""PRNG keys and the threefry2x32 generator behind them: seeding, split, fold_in and raw bits,
bit for bit as JAX's default implementation (threefry2x32, partitionable counters).

A key is two uint32 words. `PRNGKey(seed)` returns them as a uint32[2] array (JAX's legacy
keys); `key(seed)` wraps them in a `KeyArray`, a typed key whose shape leaves out the two
words (JAX's new-style keys). Both kinds go through jit, vmap (a batch of keys), scan and
pytrees: a raw key is an array, a KeyArray a pytree node whose one leaf is its uint32 data.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

import functrans.numpy as fnp
from functrans.core.array import as_array
from functrans.core.avals import ndim_of, shape_of
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.bits import shift_left, shift_right_logical, threefry2x32
from functrans.primitives.shape_ops import convert_element_type, iota_p, reshape
from functrans.tree_util import register_pytree_node

__all__ = ["KeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split",
           "fold_in", "bits"]

_IMPL = "threefry2x32"
_U32 = np.dtype(np.uint32)


class KeyArray:
    """An array of PRNG keys (JAX's typed keys, `jax.random.key`): its shape is the shape of
    the key array, without the two uint32 words each key holds; `key_data` returns those.

    >>> import functrans as ft
    >>> k = ft.random.key(0)
    >>> k.shape, ft.random.split(k, 3).shape
    ((), (3,))
    """

    __slots__ = ("_data",)

    def __init__(self, data):
        if tuple(shape_of(data))[-1:] != (2,) or fnp.asarray(data).dtype != _U32:
            raise ShapeError(f"KeyArray: key data must be uint32 with a last axis of 2, got "
                             f"{getattr(data, 'dtype', type(data))}{list(shape_of(data))}. "
                             "Build keys with functrans.random.key(seed) or wrap_key_data.")
        self._data = data

    shape = property(lambda self: tuple(shape_of(self._data))[:-1],
                     doc="The shape of the key array (without the key words).")
    ndim = property(lambda self: ndim_of(self._data) - 1, doc="The number of key axes.")
    size = property(lambda self: math.prod(self.shape), doc="The number of keys.")
    dtype = property(lambda self: KeyDtype(), doc="key<fry>, as JAX prints it.")

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a single key (shape ()); split it first.")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index) -> KeyArray:
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            raise IndexError("KeyArray: index the key axes without `...`.")
        return KeyArray(self._data[index + (slice(None),)])

    def reshape(self, *shape) -> KeyArray:
        """The keys in a new shape."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return KeyArray(fnp.reshape(self._data, (*shape, 2)))

    def __eq__(self, other):
        if not isinstance(other, KeyArray):
            return NotImplemented
        return fnp.all(self._data == other._data, axis=-1)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else fnp.logical_not(eq)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Array(shape={self.shape}, dtype=key<fry>) overlaying:\n{self._data!r}"


class KeyDtype:
    """The dtype of a KeyArray (JAX's key<fry>)."""

    name = "key<fry>"

    def __eq__(self, other):
        return isinstance(other, KeyDtype) or other == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "key<fry>"

    __str__ = __repr__


register_pytree_node(KeyArray, lambda k: ((k._data,), None), lambda _, leaves: KeyArray(*leaves))


# --- taking keys apart and putting them back -------------------------------------------------

def unwrap(k, name: str, allow_batched: bool = False) -> tuple[Any, bool]:
    """(uint32 data of `k` with last axis 2, whether `k` was a typed KeyArray)."""
    if isinstance(k, KeyArray):
        data, typed = k._data, True
    else:
        data, typed = k, False
        dtype = data.dtype if hasattr(data, "dtype") else np.asarray(data).dtype
        if dtype != _U32 or tuple(shape_of(data))[-1:] != (2,):
            raise DTypeError(f"{name}: expected a PRNG key (a uint32[2] array from PRNGKey "
                             f"or a key from functrans.random.key), got {dtype}"
                             f"{list(shape_of(data))}. Make one with "
                             "functrans.random.PRNGKey(seed).")
    if not allow_batched and ndim_of(data) != 1:
        raise ShapeError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(shape_of(data))[:-1]} != (). Use functrans.vmap for "
                         "batching, or index one key.")
    return data, typed


def rewrap(data, typed: bool):
    return KeyArray(data) if typed else data


def _seed_data(seed):
    """The two key words of an integer seed: its high and low 32 bits (a 32-bit seed has no
    high bits), as JAX's threefry_seed."""
    if isinstance(seed, (bool, np.bool_)) or isinstance(seed, KeyArray):
        raise TypeError(f"PRNGKey: the seed must be an integer, got {seed!r}.")
    if isinstance(seed, int):
        if not -2**63 <= seed < 2**64:
            raise OverflowError(f"PRNGKey: seed {seed} does not fit in 64 bits.")
        return np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], _U32)
    seed = fnp.asarray(seed)
    if ndim_of(seed):
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape "
                        f"{tuple(shape_of(seed))} != (). Use functrans.vmap for batching.")
    if not np.issubdtype(seed.dtype, np.integer):
        raise TypeError(f"PRNGKey: the seed must be an integer, got {seed.dtype}. Convert "
                        "with int(seed) or .astype(int).")
    hi = shift_right_logical(seed, np.asarray(32, seed.dtype))
    lo = fnp.bitwise_and(seed, np.asarray(0xFFFFFFFF, seed.dtype)) \
        if seed.dtype.itemsize > 4 else seed
    return fnp.stack([convert_element_type(hi, _U32), convert_element_type(lo, _U32)])


def PRNGKey(seed: int | Any) -> Any:
    """A legacy PRNG key from an integer seed: a uint32[2] array (its high and low 32 bits),
    functrans's `Array` as JAX's keys are its arrays.

    >>> import functrans as ft
    >>> ft.random.PRNGKey(42)
    array([ 0, 42], dtype=uint32)
    """
    return as_array(_seed_data(seed))


def key(seed: int | Any, *, impl: str | None = None) -> KeyArray:
    """A typed PRNG key (a scalar KeyArray) from an integer seed, as `jax.random.key`.

    >>> import functrans as ft
    >>> ft.random.key_data(ft.random.key(42))
    array([ 0, 42], dtype=uint32)
    """
    _check_impl(impl)
    return KeyArray(_seed_data(seed))


def _check_impl(impl):
    if impl is not None and str(impl) != _IMPL:
        raise ValueError(f"PRNG implementation {impl!r} is not available; functrans has "
                         f"{_IMPL!r} only (JAX's default).")


def key_data(keys: Any) -> Any:
    """The uint32 words under a key array: shape `keys.shape + (2,)`.

    >>> import functrans as ft
    >>> ft.random.key_data(ft.random.split(ft.random.key(0))).shape
    (2, 2)
    """
    data, _ = unwrap(keys, "key_data", allow_batched=True)
    return data.copy() if isinstance(data, np.ndarray) else data   # never the caller's buffer


def wrap_key_data(key_bits_array: Any, *, impl: str | None = None) -> KeyArray:
    """A typed key array over uint32 key words (last axis 2): the inverse of `key_data`.

    >>> import functrans as ft, numpy as np
    >>> ft.random.wrap_key_data(np.array([0, 42], np.uint32)).shape
    ()
    """
    _check_impl(impl)
    if isinstance(key_bits_array, np.ndarray):   # the key must not change with the caller's array
        key_bits_array = key_bits_array.copy()
    return KeyArray(key_bits_array)


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation: 'threefry2x32'.

    >>> import functrans as ft
    >>> ft.random.key_impl(ft.random.key(0))
    'threefry2x32'
    """
    unwrap(keys, "key_impl", allow_batched=True)
    return _IMPL


# --- the generator ---------------------------------------------------------------------------

def _counters(shape: tuple[int, ...]):
    """(high, low) 32-bit halves of the row-major position of each element of `shape`, as
    JAX's iota_2x32_shape; the high half is a broadcast zero (positions stay below 2**32)."""
    size = math.prod(shape)
    if size >= 2**32:
        raise ValueError(f"random bits of shape {shape}: {size} values exceed the 2**32 "
                         "counters this implementation supports.")
    zero = np.zeros((), _U32)
    if not shape:
        return zero, zero
    lo = reshape(iota_p.bind(dtype=_U32, shape=(size,), dimension=0), shape)
    return zero, lo


def _hash(data, shape):
    """threefry2x32 of the key in `data` (uint32[2]) over the counters of `shape`."""
    hi, lo = _counters(shape)
    return threefry2x32(data[0], data[1], hi, lo)


def split_data(data, shape: tuple[int, ...]):
    """Keys split from the key in `data`: uint32[*shape, 2] (JAX's partitionable split)."""
    bits1, bits2 = _hash(data, shape)
    return fnp.stack([bits1, bits2], axis=len(shape))


def random_bits(data, bit_width: int, shape: tuple[int, ...]):
    """uint{bit_width} random bits of `shape` from the key in `data`."""
    bits1, bits2 = _hash(data, shape)
    dtype = np.dtype(f"uint{bit_width}")
    if bit_width == 64:
        hi = convert_element_type(bits1, dtype)
        lo = convert_element_type(bits2, dtype)
        return fnp.bitwise_or(shift_left(hi, np.asarray(32, dtype)), lo)
    word = fnp.bitwise_xor(bits1, bits2)
    return word if bit_width == 32 else convert_element_type(word, dtype)


def canonical_shape(shape, name: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of non-negative ints, got "
                        f"{shape!r}.") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"{name}: shape {shape} has a negative dimension.")
    return shape


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (or an array of keys of shape `num`) from one key.

    >>> import functrans as ft
    >>> ft.random.split(ft.random.PRNGKey(0)).shape
    (2, 2)
    """
    data, typed = unwrap(key, "split")
    shape = canonical_shape(num, "split")
    return rewrap(split_data(data, shape), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and a 32-bit integer `data` (a step number, a device id ...).

    >>> import functrans as ft
    >>> ft.random.fold_in(ft.random.PRNGKey(0), 1).shape
    (2,)
    """
    k, typed = unwrap(key, "fold_in")
    if ndim_of(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{tuple(shape_of(data))} != (). Use functrans.vmap for batching.")
    if isinstance(data, int):
        msg = np.asarray(data & 0xFFFFFFFF, _U32)
    else:
        msg = convert_element_type(fnp.asarray(data), _U32)
    # the key hashes the counter pair (0, data): JAX's threefry_2x32(key, threefry_seed(data))
    a, b = threefry2x32(k[0], k[1], np.zeros((), _U32), msg)
    return rewrap(fnp.stack([a, b]), typed)


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (default uint64, JAX's default under x64).

    >>> import functrans as ft
    >>> ft.random.bits(ft.random.PRNGKey(0), (3,), "uint32").dtype
    dtype('uint32')
    """
    data, _ = unwrap(key, "bits")
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise DTypeError(f"bits: dtype must be an unsigned int dtype, got {dtype}.")
    return random_bits(data, dtype.itemsize * 8, canonical_shape(shape, "bits"))
