"""Abstract values (functrans/core/avals.py): shape and dtype, weak types, and the aval of
every kind of value a program may see."""

from __future__ import annotations

import numpy as np
import pytest

from functrans.core.avals import (ShapedArray, get_aval, is_float, is_valid_value, ndim_of,
                                  shape_of, weak_scalar_type)
from functrans.errors import DTypeError


def test_equality_is_shape_and_dtype_and_ignores_weak_type():
    a = ShapedArray((2, 3), np.float32)
    assert a == ShapedArray([2, 3], "float32") == a.weakened()
    assert hash(a) == hash(a.weakened())
    assert a != ShapedArray((3, 2), np.float32) and a != ShapedArray((2, 3), np.float64)
    assert a != (2, 3)
    assert a.ndim == 2 and a.size == 6
    assert ShapedArray((), np.float64).size == 1 and ShapedArray((0, 4), np.int8).size == 0


def test_printing_uses_short_dtype_names():
    assert str(ShapedArray((2, 3), np.float32)) == "f32[2,3]"
    assert str(ShapedArray((), np.bool_)) == "bool[]"
    assert repr(ShapedArray((4,), np.int64)) == "ShapedArray(i64[4])"


def test_update_keeps_weakness_only_while_the_dtype_is_kept():
    w = ShapedArray((), np.float64, weak_type=True)
    assert w.update(shape=(3,)).weak_type and w.update(shape=(3,)).shape == (3,)
    assert not w.update(dtype=np.float32).weak_type
    assert w.update(dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("x,shape,dtype,weak", [
    (np.zeros((2, 3), np.float32), (2, 3), np.float32, False),
    (np.float32(1.5), (), np.float32, False),
    (1.5, (), np.float64, True),
    (2, (), np.asarray(2).dtype, True),
    (1j, (), np.complex128, True),
    (True, (), np.bool_, False),
])
def test_get_aval_of_concrete_values(x, shape, dtype, weak):
    a = get_aval(x)
    assert a.shape == shape and a.dtype == dtype and a.weak_type == weak


def test_get_aval_rejects_what_cannot_be_an_array_and_names_the_fix():
    with pytest.raises(DTypeError, match="numpy.asarray"):
        get_aval("text")
    with pytest.raises(DTypeError, match="builtins.object"):
        get_aval(object())


def test_is_float_covers_floating_and_complex_only():
    assert is_float(np.dtype(np.float16)) and is_float(np.dtype(np.complex64))
    assert is_float(np.float32)  # a scalar type, not a dtype
    assert not is_float(np.dtype(np.int64)) and not is_float(np.dtype(np.bool_))


def test_weak_scalar_type_is_the_python_type_of_a_python_scalar_only():
    assert weak_scalar_type(1.0) is float and weak_scalar_type(3) is int
    assert weak_scalar_type(2j) is complex
    assert weak_scalar_type(True) is None  # numpy promotes bool as its own dtype
    assert weak_scalar_type(np.float64(1.0)) is None
    assert weak_scalar_type(np.ones(2)) is None


def test_shape_and_ndim_helpers_match_numpy():
    for x in (np.zeros((2, 0, 3)), 1.0, [1, 2], np.float32(3)):
        assert shape_of(x) == np.shape(x) and ndim_of(x) == np.ndim(x)


def test_valid_values():
    assert all(is_valid_value(x) for x in (np.ones(2), np.int8(1), 1, 2.0, True, 1j))
    assert not any(is_valid_value(x) for x in ("a", None, [1.0], object()))
