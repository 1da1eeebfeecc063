"""Flattening user functions: an output leaf that is not an array is named by its place in the
output (not mistaken for a bad input), under every transform."""

import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.errors import DTypeError

TRANSFORMS = {
    "jit(f)": lambda f: ft.jit(f)(1.0),
    "make_jaxpr": lambda f: ft.make_jaxpr(f)(1.0),
    "vjp": lambda f: ft.vjp(f, 1.0),
    "jvp": lambda f: ft.jvp(f, (1.0,), (1.0,)),
    "linearize": lambda f: ft.linearize(f, 1.0),
    "vmap": lambda f: ft.vmap(f)(np.ones(2)),
    "checkpoint": lambda f: ft.grad(lambda x: ft.checkpoint(f)(x)[0])(1.0),
    "cond": lambda f: lax.cond(True, f, f, 1.0),
}


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("out, where, kind", [
    (lambda x: (x, "label"), "output[1]", "str"),
    (lambda x: (x, {"loss": x, "tag": "train"}), "output[1]['tag']", "str"),
    (lambda x: (x, object()), "output[1]", "object"),
])
def test_a_non_array_output_is_named_by_its_path_and_type(name, out, where, kind):
    # once: "functrans cannot use a value of type builtins.str as an array. Pass numpy
    # arrays ..." which reads as if an argument were wrong
    with pytest.raises(DTypeError) as info:
        TRANSFORMS[name](out)
    msg = str(info.value)
    assert f"{where} of the function has type {kind}" in msg, msg
    assert "Return the" in msg and "outside the transformed function" in msg  # the fix
    assert name.split("(")[0] in msg
    assert isinstance(info.value, TypeError)


def test_a_whole_output_that_is_not_an_array_and_grad():
    with pytest.raises(DTypeError, match="the output of the function has type str"):
        ft.jit(lambda x: "done")(1.0)
    with pytest.raises(DTypeError, match="the output of the function has type str"):
        ft.grad(lambda x: "done")(1.0)


def test_arrays_scalars_none_and_array_likes_are_accepted_outputs():
    out = ft.jit(lambda x: (x, 2, None, {"a": np.float32(1.0)}))(1.0)
    assert out[1] == 2 and out[2] is None and out[3]["a"] == 1.0
