"""functrans.numpy's dtype names and queries against numpy's (and jax.numpy's names)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

NAMES = ["bool_", "complex64", "complex128", "float16", "float32", "float64", "int8", "int16",
         "int32", "int64", "uint8", "uint16", "uint32", "uint64", "floating", "integer",
         "inexact", "number", "dtype", "finfo", "iinfo", "issubdtype", "newaxis"]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_names_are_numpys(name):
    ours, numpys = getattr(fnp, name), getattr(np, name)
    if isinstance(numpys, type) and issubclass(numpys, np.generic) and numpys is not \
            np.dtype and not numpys.__name__[0].isupper() and ours is not numpys:
        # the concrete scalar types are callable on traced values (as in jax.numpy) and are
        # numpy's everywhere else: as a dtype, in ==, hash, isinstance and issubclass
        assert np.dtype(ours) == np.dtype(numpys) and ours == numpys and numpys == ours
        assert hash(ours) == hash(numpys) and isinstance(numpys(1), ours)
        assert issubclass(numpys, ours) and type(ours(1)) is numpys
    else:
        assert ours is numpys


def test_scalar_type_casts_a_traced_value_and_stops_its_derivative():
    import functrans as ft

    def f(w):
        idx = fnp.int64(w[:, -1])  # as autograd's test_cast_to_int
        assert idx.dtype == np.int64
        return fnp.sum(fnp.take(w[:, :-1], idx, axis=0)) + fnp.sum(fnp.float64(w) * w)

    w = np.ones((3, 4))
    g = ft.grad(f)(w)
    want = np.zeros((3, 4))
    want[1, :-1] = 3.0  # row 1 taken three times; the index column gets nothing from it
    np.testing.assert_array_equal(g, want + 2 * w)


def test_jax_style_dtype_code_runs_eagerly_and_traced():
    x = np.linspace(0.0, 1.0, 4)

    def f(v):
        eps = float(fnp.finfo(v.dtype).eps)  # a weak Python float keeps float32
        return v.astype(fnp.float32)[fnp.newaxis] + eps, fnp.result_type(v, 1.0)

    out, dtype = f(x)
    assert out.dtype == np.float32 and out.shape == (1, 4) and dtype == np.float64
    traced = ft.jit(lambda v: f(v)[0])(x)
    np.testing.assert_array_equal(traced, x.astype(np.float32)[None] + float(np.finfo(float).eps))


def test_result_type_and_can_cast_follow_numpy_on_traced_values():
    f32 = np.ones(3, np.float32)
    seen = {}

    def f(v):
        seen["rt"] = (fnp.result_type(v, 1.0), fnp.result_type(v, 1), fnp.result_type(v, np.int64),
                      fnp.result_type(v, np.float64(2)))
        seen["cast"] = (fnp.can_cast(v, np.float64), fnp.can_cast(v, np.int32))
        return v

    ft.jit(f)(f32)
    assert seen["rt"] == (np.result_type(f32, 1.0), np.result_type(f32, 1),
                          np.result_type(f32, np.int64), np.result_type(f32, np.float64(2)))
    assert seen["cast"] == (np.can_cast(f32, np.float64), np.can_cast(f32, np.int32))
    assert fnp.promote_types(np.int8, np.uint8) == np.promote_types(np.int8, np.uint8)
