"""functrans.lax.conv_general_dilated, conv, conv_with_general_padding and reduce_window
against JAX (the record in lax_convolution_jax_fixtures.json always, live JAX when installed)
and against float64 central differences; every transform runs through them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import errors, lax
from functrans.test_util import check_grads
from lax_convolution_cases import CONV, FIXTURES, WINDOW, filled, operands, results

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)["cases"]

NAMES = sorted((*CONV, *WINDOW))


def _close(got, want, what):
    got, want = np.asarray(got), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, JAX's {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)


def test_every_case_is_recorded():
    assert sorted(RECORDED) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_values_and_grads_equal_recorded_jax(name):
    got = results(ft, lax, name)
    assert sorted(got) == sorted(RECORDED[name])
    for kind, want in RECORDED[name].items():
        _close(got[kind], want, f"{name} {kind}")


@pytest.mark.parametrize("name", NAMES)
def test_values_and_grads_equal_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    want = results(jax, jax.lax, name)
    got = results(ft, lax, name)
    for kind in want:
        _close(got[kind], want[kind], f"{name} {kind} (live JAX)")


@pytest.mark.parametrize("name", sorted(CONV))
def test_conv_derivatives_match_central_differences_to_second_order(name):
    *shapes, call = CONV[name]
    check_grads(lambda x, w: call(lax, x, w), operands(shapes), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(WINDOW))
def test_reduce_window_derivatives_match_central_differences(name):
    *shapes, call = WINDOW[name]
    check_grads(lambda x: call(lax, x), operands(shapes), order=2, modes=("fwd", "rev"))


def test_conv_under_vmap_equals_a_loop_and_jit_equals_eager():
    *shapes, call = CONV["explicit_pads_rhs_dilation_groups"]
    x, w = operands(shapes)
    xs = np.stack([x, 2.0 * x, -x])
    batched = ft.vmap(lambda x: call(lax, x, w))(xs)
    np.testing.assert_allclose(batched, np.stack([call(lax, xi, w) for xi in xs]), rtol=1e-13)
    ws = np.stack([w, w[::-1]])
    over_w = ft.vmap(lambda w: call(lax, x, w))(ws)
    np.testing.assert_allclose(over_w, np.stack([call(lax, x, wi) for wi in ws]), rtol=1e-13)
    np.testing.assert_allclose(ft.jit(lambda x, w: call(lax, x, w))(x, w), call(lax, x, w),
                               rtol=1e-13)


def test_conv_matches_a_direct_sum_over_the_window():
    # out[n, o, i, j] = sum_{c, a, b} x[n, c, i*s + a*d, j*s + b*d] w[o, c, a, b]
    x, w = filled((1, 2, 6, 7)), filled((3, 2, 2, 3), 0.3)
    out = lax.conv_general_dilated(x, w, (2, 1), "VALID", rhs_dilation=(2, 2))
    want = np.zeros(out.shape)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            patch = x[0, :, 2 * i:2 * i + 3:2, j:j + 5:2]
            want[0, :, i, j] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2]))
    np.testing.assert_allclose(out, want, rtol=1e-13)


def test_conv_shape_tuple_and_make_jaxpr_agree_with_the_result():
    x, w = filled((2, 7, 6, 3)), filled((3, 3, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    shape = lax.conv_general_shape_tuple(x.shape, w.shape, (2, 2), "SAME", dn)
    assert shape == lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn).shape
    jaxpr = ft.make_jaxpr(lambda x, w: lax.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=dn))(x, w)
    assert "dot_general" in str(jaxpr)
    assert lax.conv_dimension_numbers(x.shape, w.shape, dn) == lax.ConvDimensionNumbers(
        (0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))


def test_max_window_sends_the_derivative_to_the_first_maximum_as_jax():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 1.0, 3.0]])
    g = ft.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2),
                                            "VALID").sum())(x)
    np.testing.assert_array_equal(g, [[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])


def test_conv_result_does_not_alias_its_operands():
    x, w = filled((1, 1, 3, 3)), np.ones((1, 1, 1, 1))
    out = lax.conv(x, w, (1, 1), "VALID")
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)


def test_bad_arguments_raise_errors_that_name_the_fix():
    x, w = filled((1, 4, 5, 5)), filled((2, 2, 3, 3))
    with pytest.raises(errors.UnsupportedFeatureError, match="batch_group_count=2"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2)
    with pytest.raises(errors.ShapeError, match="feature_group_count=3"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=3)
    with pytest.raises(errors.ShapeError, match="same rank"):
        lax.conv_general_dilated(x[0], w, (1, 1), "VALID")
    with pytest.raises(errors.ArgumentError, match="'VALID', 'SAME'"):
        lax.conv_general_dilated(x, w, (1, 1), "FULL", feature_group_count=2)
    with pytest.raises(errors.ArgumentError, match="window_strides"):
        lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2)
    with pytest.raises(errors.ArgumentError, match="'N' and 'C' once"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                 dimension_numbers=("NNHW", "OIHW", "NCHW"))
    with pytest.raises(errors.ArgumentError, match="explicit"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2),
                                 feature_group_count=2)
    with pytest.raises(errors.ShapeError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID")
    assert fnp.shape(lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                              feature_group_count=2)) == (1, 2, 3, 3)
