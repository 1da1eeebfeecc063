"""Convolution and window-reduction cases run with jax.lax and functrans.lax, and the record of
JAX's results in lax_convolution_jax_fixtures.json, which test_lax_convolution.py compares
functrans against (and live JAX too, when installed). Re-record with JAX installed:
`python tests/transforms/lax_convolution_cases.py`.

Each case is (operand shapes, call(lax, x[, w])); recorded: the value and the gradient of
sum(out * W) (W fixed, cos-filled) with respect to every operand, in float64.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "lax_convolution_jax_fixtures.json")


def filled(shape, phase=0.0):
    """sin(1 + phase), sin(2 + phase), ... in `shape` (float64): fixed, tie-free numbers."""
    n = math.prod(shape)
    return np.sin(np.arange(1, n + 1) + phase).reshape(shape)


CONV = {
    "nchw_valid": ((2, 3, 6, 5), (4, 3, 3, 2),
                   lambda lax, x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID")),
    "nhwc_same_strided": ((2, 7, 6, 3), (3, 3, 3, 4),
                          lambda lax, x, w: lax.conv_general_dilated(
                              x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "explicit_pads_rhs_dilation_groups": ((2, 4, 7, 6), (6, 2, 3, 2),
                                          lambda lax, x, w: lax.conv_general_dilated(
                                              x, w, (2, 1), [(1, 2), (0, 1)],
                                              rhs_dilation=(1, 2), feature_group_count=2)),
    "lhs_dilation_transposed": ((1, 2, 4, 3), (2, 2, 3, 3),
                                lambda lax, x, w: lax.conv_general_dilated(
                                    x, w, (1, 1), [(2, 2), (1, 2)], lhs_dilation=(2, 2))),
    "negative_padding_depthwise": ((1, 3, 5, 5), (3, 1, 3, 3),
                                   lambda lax, x, w: lax.conv_general_dilated(
                                       x, w, (1, 1), [(-1, 2), (2, 0)], lhs_dilation=(2, 1),
                                       rhs_dilation=(1, 2), feature_group_count=3)),
    "conv1d_nwc_same_lower": ((2, 9, 3), (3, 3, 2),
                              lambda lax, x, w: lax.conv_general_dilated(
                                  x, w, (2,), "SAME_LOWER",
                                  dimension_numbers=("NWC", "WIO", "NWC"))),
    "mixed_layouts": ((2, 5, 6, 4), (2, 3, 4, 4),
                      lambda lax, x, w: lax.conv_general_dilated(
                          x, w, (1, 1), "SAME", dimension_numbers=("NWHC", "WHIO", "NCHW"))),
    "conv_3d": ((1, 2, 4, 4, 3), (2, 2, 2, 3, 2),
                lambda lax, x, w: lax.conv_general_dilated(x, w, (1, 2, 1), "SAME")),
    "lax_conv": ((2, 3, 5, 5), (2, 3, 2, 2),
                 lambda lax, x, w: lax.conv(x, w, (1, 2), "SAME")),
    "conv_with_general_padding": ((2, 3, 5, 4), (2, 3, 3, 2),
                                  lambda lax, x, w: lax.conv_with_general_padding(
                                      x, w, (1, 1), [(1, 1), (0, 2)], (1, 2), (2, 1))),
}

WINDOW = {
    "max_2x2_stride2": ((3, 6, 4), lambda lax, x: lax.reduce_window(
        x, -np.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID")),
    "max_same_overlapping": ((2, 5, 7), lambda lax, x: lax.reduce_window(
        x, -np.inf, lax.max, (1, 3, 3), (1, 2, 1), "SAME")),
    "add_padded": ((2, 5, 4), lambda lax, x: lax.reduce_window(
        x, 0.0, lax.add, (1, 2, 3), (1, 1, 2), [(0, 0), (1, 1), (2, 1)])),
    "add_base_dilation": ((4, 3), lambda lax, x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 1), "VALID", base_dilation=(2, 1))),
    "add_window_dilation": ((6, 5), lambda lax, x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 1), "VALID", window_dilation=(2, 2))),
    "min_strided": ((6, 5), lambda lax, x: lax.reduce_window(
        x, np.inf, lax.min, (2, 3), (2, 1), "SAME")),
}


def operands(shapes):
    return [filled(s, phase=0.5 * k) for k, s in enumerate(shapes)]


def results(ft, lax, name):
    """{'value': ..., 'grad_0': ..., ...} of case `name`, computed with `ft` (functrans or
    jax) and its lax module."""
    if name in CONV:
        *shapes, call = CONV[name]
    else:
        *shapes, call = WINDOW[name]
    args = operands(shapes)
    value = np.asarray(call(lax, *args))
    weights = np.cos(np.arange(value.size)).reshape(value.shape)
    grads = ft.grad(lambda *a: (call(lax, *a) * weights).sum(),
                    argnums=tuple(range(len(args))))(*args)
    out = {"value": value}
    out.update({f"grad_{k}": np.asarray(g) for k, g in enumerate(grads)})
    return out


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    from jax import lax
    record = {"jax_version": jax.__version__,
              "cases": {name: {k: v.tolist() for k, v in results(jax, lax, name).items()}
                        for name in (*CONV, *WINDOW)}}
    with open(FIXTURES, "w") as f:
        json.dump(record, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(record['cases'])} cases to {FIXTURES}")


if __name__ == "__main__":
    main()
