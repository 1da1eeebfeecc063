"""Forward mode and linearize: values against closed forms and central differences, pytrees,
symbolic zero tangents, and the IR-to-IR jvp_jaxpr."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr
from functrans.errors import ShapeError
from functrans.transforms.jvp import jvp_jaxpr

X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, 0.5, -2.0])


def fd(f, x, v, eps=1e-6):
    return (f(x + eps * v) - f(x - eps * v)) / (2 * eps)


def test_jvp_closed_forms_and_central_differences():
    y, t = ft.jvp(fnp.sin, (X,), (V,))
    np.testing.assert_allclose(y, np.sin(X))
    np.testing.assert_allclose(t, np.cos(X) * V, rtol=1e-15)
    f = lambda x: fnp.exp(fnp.tanh(x) * x) / (1.0 + x * x)
    fn = lambda x: np.exp(np.tanh(x) * x) / (1.0 + x * x)
    np.testing.assert_allclose(ft.jvp(f, (X,), (V,))[1], fd(fn, X, V), rtol=1e-8)


def test_jvp_of_pytrees_and_several_arguments():
    def f(p, s):
        return {"a": p[0] * s, "b": (fnp.sin(p[1]), None)}

    y, t = ft.jvp(f, ((X, 0.5), 2.0), ((V, 1.0), 3.0))
    np.testing.assert_allclose(t["a"], V * 2.0 + X * 3.0)
    np.testing.assert_allclose(t["b"][0], np.cos(0.5))
    assert t["b"][1] is None


def test_jvp_has_aux():
    y, t, aux = ft.jvp(lambda x: (x * x, {"x": x}), (3.0,), (1.0,), has_aux=True)
    assert (float(y), float(t), float(aux["x"])) == (9.0, 6.0, 3.0)


def test_jvp_outputs_without_dependence_get_materialised_zeros():
    y, t = ft.jvp(lambda x, c: (x * 2.0, c * 1.0, np.ones(2)), (1.0, 4.0), (1.0, 0.0))
    assert float(t[0]) == 2.0 and float(t[1]) == 0.0
    np.testing.assert_array_equal(t[2], np.zeros(2))


def test_jvp_integer_primals_take_float0_tangents():
    y, t = ft.jvp(lambda x, n: x * n, (2.0, np.int64(3)),
                  (1.0, np.zeros((), ft.dtypes.float0)))
    assert float(t) == 3.0


INT_PRIMAL_CASES = [
    ("python int", lambda x: x * 2, (3,), (1.0,)),
    ("int array", lambda x: x * 2, (np.arange(3),), (np.ones(3),)),
    ("int array, int tangent", lambda x: x * 2, (np.arange(3),), (np.zeros(3, np.int64),)),
    ("bool", lambda x: x * 2, (True,), (1.0,)),
    ("int among floats", lambda x, n: x * n, (2.0, 3), (1.0, 1.0)),
]


@pytest.mark.parametrize("f,primals,tangents", [c[1:] for c in INT_PRIMAL_CASES],
                         ids=[c[0] for c in INT_PRIMAL_CASES])
def test_a_float_tangent_for_an_integer_primal_is_refused_as_jax_does(f, primals, tangents):
    # a zero tangent would be returned silently otherwise (the tangent was dropped)
    for transform in (lambda: ft.jvp(f, primals, tangents),
                      lambda: ft.linearize(f, *primals)[1](*tangents)):
        with pytest.raises(TypeError) as info:
            transform()
        msg = str(info.value)
        assert "tangent dtype must be float0" in msg and "expected tangent dtype float0" in msg
        assert "functrans.dtypes.float0" in msg and "3.0 instead of 3" in msg


@pytest.mark.parametrize("f,primals,tangents", [c[1:] for c in INT_PRIMAL_CASES],
                         ids=[c[0] for c in INT_PRIMAL_CASES])
def test_refusals_match_jax(f, primals, tangents):
    jax = pytest.importorskip("jax")
    with pytest.raises(TypeError, match="tangent dtype must be float0"):
        jax.jvp(f, primals, tangents)


def test_float0_tangents_of_integer_primals_and_outputs_as_in_jax():
    f0 = ft.dtypes.float0
    assert f0 == np.dtype([("float0", np.void, 0)])
    # integer output: a float0 tangent of its shape
    y, t = ft.jvp(lambda n: n * 2, (np.arange(3),), (np.zeros(3, f0),))
    np.testing.assert_array_equal(y, [0, 2, 4])
    assert t.dtype == f0 and t.shape == (3,)
    # float output of an integer input: a zero tangent
    y, t = ft.jvp(lambda n: (n * 2).astype(float), (np.arange(3),), (np.zeros(3, f0),))
    np.testing.assert_array_equal(t, np.zeros(3))
    # mixed: the float argument's tangent goes through, closed form d/dx (x * n) = n
    y, t = ft.jvp(lambda x, n: x * n, (2.0, 3), (1.0, np.zeros((), f0)))
    assert (float(y), float(t)) == (6.0, 3.0)
    y, f_jvp = ft.linearize(lambda x, n: x * n, 2.0, 3)
    assert float(f_jvp(1.0, np.zeros((), f0))) == 3.0
    # a comparison output (bool): float0
    assert ft.jvp(lambda x: x > 1.0, (3.0,), (1.0,))[1].dtype == f0


def test_float0_matches_jax():
    jax = pytest.importorskip("jax")
    assert ft.dtypes.float0 == jax.dtypes.float0
    f0 = ft.dtypes.float0
    want = jax.jvp(lambda n: n * 2, (np.arange(3),), (np.zeros(3, f0),))[1]
    got = ft.jvp(lambda n: n * 2, (np.arange(3),), (np.zeros(3, f0),))[1]
    assert got.dtype == np.asarray(want).dtype and got.shape == want.shape


def test_a_float0_tangent_for_a_float_primal_is_refused():
    with pytest.raises(TypeError, match="expected tangent dtype float64, but got tangent "
                                        "dtype float0"):
        ft.jvp(lambda x: x * 2, (3.0,), (np.zeros((), ft.dtypes.float0),))


def test_grad_with_respect_to_an_integer_argument_is_refused():
    for transform in (ft.grad, ft.jacfwd, ft.jacrev, ft.hessian):
        with pytest.raises(TypeError, match=r"3\.0 instead of 3"):
            transform(lambda x: x * 2.0)(3)


def test_jvp_argument_errors():
    with pytest.raises(TypeError, match="tuples"):
        ft.jvp(fnp.sin, X, V)
    with pytest.raises(TypeError, match="same structure"):
        ft.jvp(lambda a, b: a * b, (1.0, 2.0), (1.0,))
    with pytest.raises(ShapeError, match=r"primal 0 has shape \(3,\) but its tangent has shape "
                                         r"\(2,\)"):
        ft.jvp(fnp.sin, (X,), (np.ones(2),))


def test_linearize_matches_jvp_and_evaluates_at_many_tangents():
    f = lambda x: fnp.sin(x) * fnp.exp(x)
    y, f_jvp = ft.linearize(f, X)
    np.testing.assert_allclose(y, np.sin(X) * np.exp(X))
    for v in (V, 2 * V, np.ones(3)):
        np.testing.assert_allclose(f_jvp(v), ft.jvp(f, (X,), (v,))[1], rtol=1e-15)
    with pytest.raises(TypeError, match="structure"):
        f_jvp(V, V)


def test_linearize_records_only_tangent_work():
    # the linear program's equations touch tangents only; primal work ran eagerly
    from functrans.transforms.linearize import linearize_flat
    _, lin = linearize_flat(lambda x: [fnp.sin(fnp.cos(x)) * 3.0], [X])
    names = [e.primitive.name for e in lin.jaxpr.eqns]
    assert names == ["mul", "mul", "mul"]  # t * -sin(x), * cos(cos(x)), * 3.0
    assert len(lin.jaxpr.consts) == 2  # the residuals: -sin(x) and cos(cos(x))
    check_jaxpr(lin.jaxpr)


def test_jvp_jaxpr_is_the_jvp_program_of_a_program():
    closed = ft.make_jaxpr(lambda x, y: fnp.sin(x) * y)(1.0, 2.0)
    jclosed, out_nz = jvp_jaxpr(closed, [True, False])
    check_jaxpr(jclosed)
    assert out_nz == [True] and len(jclosed.in_avals) == 3
    y, t = jclosed(0.7, 2.0, 1.5)
    np.testing.assert_allclose([y, t], [np.sin(0.7) * 2.0, np.cos(0.7) * 1.5 * 2.0])
    # no tangent in: no tangent work, the out tangent stays symbolic unless instantiated
    jclosed, out_nz = jvp_jaxpr(closed, [False, False])
    assert out_nz == [False] and [e.primitive.name for e in jclosed.eqns] == ["sin", "mul"]
    jclosed, out_nz = jvp_jaxpr(closed, [False, False], instantiate=True)
    assert out_nz == [True] and float(jclosed(0.7, 2.0)[1]) == 0.0


def test_linearize_refuses_tangents_that_would_broadcast():
    # a (1,) or scalar tangent for a (3,) primal was broadcast into a wrong answer
    _, f_jvp = ft.linearize(fnp.sin, X)
    for bad in (np.ones(1), 1.0, np.ones((2, 3))):
        with pytest.raises(ShapeError, match=r"primal 0 has shape \(3,\) but its tangent has "
                                             r"shape"):
            f_jvp(bad)
    _, f_jvp = ft.linearize(lambda x, s: x * s, X, 2.0)
    with pytest.raises(ShapeError, match=r"primal 1 has shape \(\) but its tangent has "
                                         r"shape \(3,\)"):
        f_jvp(V, V)
    np.testing.assert_allclose(f_jvp(V, 1.0), 2.0 * V + X)


def test_linearize_has_aux_like_jax():
    def f(x):
        return fnp.sin(x) * x, {"total": fnp.sum(x), "count": 3}

    y, f_jvp, aux = ft.linearize(f, X, has_aux=True)
    np.testing.assert_allclose(y, np.sin(X) * X)
    np.testing.assert_allclose(f_jvp(V), (np.cos(X) * X + np.sin(X)) * V)
    assert float(aux["total"]) == X.sum() and aux["count"] == 3
    with pytest.raises(TypeError, match="has_aux=True: f must return a pair"):
        ft.linearize(fnp.sin, X, has_aux=True)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    _, jf_jvp, jaux = jax.linearize(lambda x: (jax.numpy.sin(x) * x, jax.numpy.sum(x)), X,
                                    has_aux=True)
    np.testing.assert_allclose(f_jvp(V), jf_jvp(V))
    np.testing.assert_allclose(aux["total"], jaux)
