"""Reverse mode (vjp, grad, value_and_grad): values against closed forms, pytrees, argnums,
has_aux as in JAX, and the errors for misuse."""

from collections import namedtuple

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError, ShapeError

Params = namedtuple("Params", "w b")
X = np.array([0.3, -1.2, 2.0])


def test_grad_of_closed_forms():
    assert float(ft.grad(lambda a: a * a * a)(3.0)) == 27.0
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.sin(x)))(X), np.cos(X),
                               rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.exp(x) / x))(X),
                               np.exp(X) / X - np.exp(X) / X ** 2, rtol=1e-14)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.tanh(x) * x))(X),
                               np.tanh(X) + X * (1 - np.tanh(X) ** 2), rtol=1e-14)


def test_grad_argnums_int_negative_and_tuple():
    f = lambda x, y, z: x * y * y + z
    assert float(ft.grad(f, argnums=1)(2.0, 3.0, 5.0)) == 12.0
    assert float(ft.grad(f, argnums=-1)(2.0, 3.0, 5.0)) == 1.0
    g = ft.grad(f, argnums=(0, 1))(2.0, 3.0, 5.0)
    assert isinstance(g, tuple) and [float(v) for v in g] == [9.0, 12.0]
    g = ft.grad(f, argnums=(1,))(2.0, 3.0, 5.0)
    assert isinstance(g, tuple) and len(g) == 1


def test_grad_with_keyword_arguments_passes_them_through():
    f = lambda x, scale=1.0: x * x * scale
    assert float(ft.grad(f)(3.0, scale=2.0)) == 12.0


def test_grad_over_pytrees_returns_the_same_structure():
    def loss(p, x):
        return fnp.sum(fnp.tanh(x * p["w"][0]) + p["w"][1] * p["b"]) + p["s"].b

    p = {"w": [np.array([0.5, -1.0, 2.0]), 1.5], "b": np.array([1.0, 2.0, 3.0]),
         "s": Params(w=None, b=2.0)}
    g = ft.grad(loss)(p, X)
    assert ft.tree_util.tree_structure(g) == ft.tree_util.tree_structure(p)
    np.testing.assert_allclose(g["w"][0], X * (1 - np.tanh(X * p["w"][0]) ** 2), rtol=1e-14)
    np.testing.assert_allclose(g["w"][1], 6.0)
    np.testing.assert_allclose(g["b"], [1.5] * 3)
    assert g["s"].w is None and float(g["s"].b) == 1.0
    gp, gx = ft.grad(loss, argnums=(0, 1))(p, X)
    np.testing.assert_allclose(gx, p["w"][0] * (1 - np.tanh(X * p["w"][0]) ** 2), rtol=1e-14)


def test_value_and_grad():
    v, g = ft.value_and_grad(lambda x: fnp.sum(x * x))(X)
    np.testing.assert_allclose(v, np.sum(X * X))
    np.testing.assert_allclose(g, 2 * X)
    v, (gx, gy) = ft.value_and_grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
    assert (float(v), float(gx), float(gy)) == (10.0, 5.0, 2.0)


def test_has_aux_returns_aux_values_untouched_as_in_jax():
    def f(x):
        y = fnp.sum(x * x)
        return y, {"y": y, "x2": x * 2.0, "n": 3}

    g, aux = ft.grad(f, has_aux=True)(X)
    np.testing.assert_allclose(g, 2 * X)
    assert set(aux) == {"y", "x2", "n"} and aux["n"] == 3
    for leaf in (aux["y"], aux["x2"]):
        assert isinstance(leaf, np.ndarray | np.generic)  # values, not leaked tracers
    np.testing.assert_allclose(aux["x2"], 2 * X)
    (v, aux2), g2 = ft.value_and_grad(f, has_aux=True)(X)
    np.testing.assert_allclose(v, np.sum(X * X))
    np.testing.assert_allclose(aux2["y"], v)
    np.testing.assert_allclose(g2, g)
    y, f_vjp, aux3 = ft.vjp(lambda x: (fnp.sin(x), x + 1.0), X, has_aux=True)
    np.testing.assert_allclose(aux3, X + 1.0)
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], np.cos(X), rtol=1e-15)


def test_has_aux_under_nesting_stays_with_its_level():
    # the inner aux is an outer tracer while the outer grad runs; it must not leak
    def outer(x):
        g, aux = ft.grad(lambda y: (y * y * x, y * x), has_aux=True)(x)
        return g + aux

    # g = 2 y x = 2x^2 at y = x; aux = x^2; d/dx (3 x^2) = 6 x
    assert float(ft.grad(outer)(2.0)) == 12.0


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ft.grad(lambda x: x * x, has_aux=True)(1.0)


def test_has_aux_accepts_a_list_pair_like_jax():
    g, aux = ft.grad(lambda x: [x * x, x + 1.0], has_aux=True)(3.0)
    assert (float(g), float(aux)) == (6.0, 4.0)
    y, y_dot, aux = ft.jvp(lambda x: [x * x, x + 1.0], (3.0,), (1.0,), has_aux=True)
    assert (float(y), float(y_dot), float(aux)) == (9.0, 6.0, 4.0)
    # jvp's has_aux once failed with "too many values to unpack"
    with pytest.raises(TypeError, match=r"has_aux=True: f must return a pair"):
        ft.jvp(lambda x: (x, x, x), (3.0,), (1.0,), has_aux=True)
    with pytest.raises(TypeError, match=r"has_aux=True: f must return a pair"):
        ft.jvp(lambda x: x * np.ones(3), (3.0,), (1.0,), has_aux=True)


def test_vjp_of_pytrees_and_several_primals():
    def f(a, b):
        return {"p": a["u"] * b, "q": [fnp.sin(a["v"])]}

    a = {"u": X, "v": 0.5}
    y, f_vjp = ft.vjp(f, a, 2.0)
    np.testing.assert_allclose(y["p"], 2 * X)
    ga, gb = f_vjp({"p": np.ones(3), "q": [1.0]})
    np.testing.assert_allclose(ga["u"], [2.0] * 3)
    np.testing.assert_allclose(ga["v"], np.cos(0.5))
    np.testing.assert_allclose(gb, np.sum(X))
    with pytest.raises(TypeError, match="structure"):
        f_vjp({"p": np.ones(3)})
    with pytest.raises(ShapeError, match=r"shape \(2,\).*\(3,\)"):
        f_vjp({"p": np.ones(2), "q": [1.0]})


def test_vjp_fn_can_be_called_many_times_and_is_linear():
    _, f_vjp = ft.vjp(lambda x: fnp.sin(x) * x, X)
    a, = f_vjp(np.ones(3))
    b, = f_vjp(2 * np.ones(3))
    np.testing.assert_allclose(b, 2 * a)


def test_integer_and_bool_outputs_of_vjp_get_no_cotangent_path():
    y, f_vjp = ft.vjp(lambda x: (x * 2.0, x > 0), X)
    g, = f_vjp((np.ones(3), np.zeros(3, bool)))
    np.testing.assert_allclose(g, [2.0] * 3)


# --- errors ----------------------------------------------------------------------------------

def test_grad_of_a_non_scalar_names_the_shape_and_suggests_vjp_or_jacrev():
    with pytest.raises(TypeError) as info:
        ft.grad(lambda x: x * 2.0)(X)
    msg = str(info.value)
    assert "f64[3]" in msg and "vjp" in msg and "jacrev" in msg
    with pytest.raises(TypeError, match=r"\['f64\[\]', 'f64\[\]'\]"):
        ft.grad(lambda x: (x, x))(1.0)


@pytest.mark.parametrize("arg,dtype", [(3, "int64"), (np.arange(3), "int64"),
                                       (np.array([True]), "bool"),
                                       (np.int32(1), "int32")])
def test_grad_of_integer_inputs_names_the_argnum_and_dtype(arg, dtype):
    with pytest.raises(DTypeError) as info:
        ft.grad(lambda a, x: fnp.sum(x * 1.0) * a, argnums=1)(1.0, arg)
    msg = str(info.value)
    assert "argument 1" in msg and dtype in msg and "float" in msg
    assert isinstance(info.value, TypeError)


def test_integer_leaf_inside_a_pytree_argument_is_named_too():
    with pytest.raises(TypeError, match="argument 0 .*int64"):
        ft.grad(lambda p: p["a"] * 1.0)({"a": 2})


def test_argnums_out_of_range_is_named():
    with pytest.raises(ValueError, match=r"argnums=2 .* 2 positional"):
        ft.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(ValueError, match=r"argnums=\(0, 5\)"):
        ft.value_and_grad(lambda x, y: x * y, argnums=(0, 5))(1.0, 2.0)
    with pytest.raises(ValueError, match="argnums"):
        ft.jacrev(lambda x: x, argnums=1)(X)
    with pytest.raises(ValueError, match="argnums"):
        ft.jacfwd(lambda x: x, argnums=-2)(X)


def test_repeated_argnums_are_refused_not_answered_with_a_zero():
    # grad(f, argnums=(0, 0)) once gave (0, df/dx): the second slot overwrote the first
    for transform in (ft.grad, ft.value_and_grad, ft.jacfwd, ft.jacrev, ft.hessian):
        with pytest.raises(ValueError, match=r"argnums=\(0, 0\) names an argument more than "
                                             "once"):
            transform(lambda x, y: x * y, argnums=(0, 0))(2.0, 3.0)
    with pytest.raises(ValueError, match="more than once"):
        ft.grad(lambda x, y: x * y, argnums=(1, -1))(2.0, 3.0)


def test_argnums_of_the_wrong_type_name_the_fix():
    with pytest.raises(TypeError, match=r"argnums=1.0 must be an int or a tuple of ints"):
        ft.grad(lambda x, y: x * y, argnums=1.0)(2.0, 3.0)
    with pytest.raises(TypeError, match=r"entry '1' is a str"):
        ft.jacrev(lambda x, y: x * y, argnums=(0, "1"))(2.0, 3.0)


@pytest.mark.parametrize("transform", [ft.grad, ft.value_and_grad, ft.vmap, ft.jacfwd,
                                       ft.jacrev, ft.hessian])
def test_transforming_a_non_function_fails_at_once_naming_it(transform):
    with pytest.raises(TypeError, match="expected a function to transform, got float 3.0"):
        transform(3.0)
    with pytest.raises(TypeError, match="expected a function"):
        ft.jvp(3.0, (1.0,), (1.0,))
    with pytest.raises(TypeError, match="expected a function"):
        ft.vjp(3.0, 1.0)
    with pytest.raises(TypeError, match="expected a function"):
        ft.linearize(3.0, 1.0)
    with pytest.raises(TypeError, match="expected a function"):
        ft.checkpoint(3.0)


def test_grad_of_an_integer_or_complex_output_is_refused():
    with pytest.raises(TypeError, match="int64"):
        ft.grad(lambda x: fnp.sum(x > 0))(X)
    with pytest.raises(TypeError, match="real-valued outputs.*complex128.*holomorphic=True.*"
                                        "vjp"):
        ft.grad(lambda z: fnp.sum(z * z))(np.ones(2, complex))
