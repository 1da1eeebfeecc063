"""numpy functions met on traced values run their functrans.numpy counterpart, found by the
function object itself (never by its bare name), and anything else raises
TracerArrayConversionError naming what to call. Values against numpy."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.trace import numpy_stand_in
from functrans.errors import TracerArrayConversionError
from functrans.numpy._dispatch import is_numpy_function

X3 = np.arange(24.0).reshape(2, 3, 4)
SQUARES = np.arange(18.0).reshape(2, 3, 3) / 7
rng = np.random.default_rng(3)
A, B = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
V, W = rng.standard_normal(3), rng.standard_normal(3)


def transformed(f):
    """f eager on tracers: under jit, make_jaxpr-staged and eager vmap of a stack of two."""
    return [ft.jit(f), lambda *a: ft.vmap(f)(*[np.stack([x, x]) for x in a])[0]]


@pytest.mark.parametrize("f,args", [
    (np.linalg.trace, (X3,)),
    (lambda x: np.linalg.trace(x, offset=1), (X3,)),
    (np.linalg.diagonal, (X3,)),
    (lambda x: np.linalg.diagonal(x, offset=-1), (X3,)),
    (np.trace, (X3,)),
    (np.diagonal, (X3,)),
    (np.linalg.matmul, (SQUARES, A)),
    (np.linalg.outer, (V, W)),
    (lambda a, b: np.linalg.tensordot(a, b, axes=1), (A, B)),
    (np.linalg.cross, (A, B)),
    (np.linalg.norm, (SQUARES,)),
    (lambda x: np.linalg.vector_norm(x, axis=-1), (SQUARES,)),
], ids=["linalg.trace", "linalg.trace-offset", "linalg.diagonal", "linalg.diagonal-offset",
        "trace", "diagonal", "linalg.matmul", "linalg.outer", "linalg.tensordot",
        "linalg.cross", "linalg.norm", "linalg.vector_norm"])
def test_namesakes_in_numpy_linalg_run_their_own_counterpart(f, args):
    want = f(*args)
    for g in transformed(f):
        got = g(*args)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_issue_reproducers():
    np.testing.assert_array_equal(ft.jit(np.linalg.trace)(X3), [15.0, 51.0])
    np.testing.assert_array_equal(ft.jit(np.linalg.diagonal)(X3), np.linalg.diagonal(X3))
    with pytest.raises(TracerArrayConversionError) as info:
        ft.jit(np.emath.sqrt)(np.array([-1.0, 4.0]))
    msg = str(info.value)
    assert "numpy.emath.sqrt" in msg and "no counterpart" in msg and "functrans.numpy" in msg


def test_grad_through_numpy_linalg_trace_is_the_identity_pattern():
    # d/dx sum(trace over the last two axes) = the identity in every 3x3 block
    g = ft.grad(lambda x: np.sum(np.linalg.trace(x)))(SQUARES)
    np.testing.assert_array_equal(g, np.broadcast_to(np.eye(3), SQUARES.shape))


@pytest.mark.parametrize("f", [np.emath.sqrt, np.emath.log, np.emath.arcsin, np.emath.power,
                               np.linalg.matrix_transpose, np.fft.fft, np.frexp],
                         ids=lambda f: f.__name__)
def test_numpy_functions_without_counterpart_are_refused_by_name(f):
    arg = np.array([[0.5, 2.0], [1.0, 3.0]])
    call = (lambda x: f(x, x)) if f is np.emath.power else f
    with pytest.raises(TracerArrayConversionError) as info:
        ft.jit(call)(arg)
    assert f.__name__ in str(info.value) and "functrans.numpy" in str(info.value)


def test_ufunc_methods_and_numpy_only_keywords_name_the_function_to_call():
    with pytest.raises(TracerArrayConversionError, match=r"numpy\.add\.reduce.*"
                       r"functrans\.numpy\.add"):
        ft.jit(np.add.reduce)(X3)
    with pytest.raises(TracerArrayConversionError, match=r"numpy\.sin with keyword arguments "
                       r"\['out'\].*functrans\.numpy\.sin"):
        ft.jit(lambda x: np.sin(x, out=x))(X3)


def test_every_numpy_function_with_a_functrans_namesake_has_its_stand_in():
    """What the old match by bare __name__ ran correctly still runs: every public numpy
    function or ufunc whose name functrans.numpy implements (numpy.abs, an alias of absolute,
    included) is in the table, mapped to that namesake."""
    for name in dir(np):
        obj = getattr(np, name)
        if name.startswith("_") or not is_numpy_function(obj):
            continue
        if callable(getattr(fnp, obj.__name__, None)) or callable(getattr(fnp, name, None)):
            assert numpy_stand_in(obj) is not None, name
            assert numpy_stand_in(obj) in (getattr(fnp, name, None),
                                           getattr(fnp, obj.__name__, None))
    for name in fnp.linalg.__all__:
        if name.endswith("Result"):  # the named result tuples (SVDResult, ...): not functions
            continue
        assert numpy_stand_in(getattr(np.linalg, name)) is getattr(fnp.linalg, name)


def test_namesakes_in_other_numpy_namespaces_are_not_stand_ins():
    assert numpy_stand_in(np.linalg.trace) is fnp.linalg.trace
    assert numpy_stand_in(np.trace) is fnp.trace
    for space in (np.emath, np.char, np.strings, np.fft):
        for name in dir(space):
            obj = getattr(space, name)
            if is_numpy_function(obj) and getattr(np, name, None) is not obj:
                assert numpy_stand_in(obj) is None, f"{space.__name__}.{name}"


@pytest.mark.parametrize("f,args", [
    (lambda x: np.sum(np.sin(x) * np.exp(-x), axis=0), (X3,)),
    (lambda x: np.dot(x[0], x[1].T), (X3,)),
    (lambda x: np.abs(np.concatenate([x, -x])), (X3,)),
    (lambda x: np.maximum(x, 3.0) + np.ones(4) * x, (X3,)),
    (lambda x: np.mean(np.transpose(x), axis=(0, 2)), (X3,)),
    (lambda x: np.where(x > 5, np.sqrt(x), x ** 2), (X3,)),
    (lambda x: np.ones((4, 2)) @ x[0].T[:2], (X3,)),
    (lambda x: np.add(x, 1.5) - np.multiply(2, x), (X3,)),
], ids=["sum-sin-exp", "dot", "abs-concatenate", "maximum-ndarray-op", "mean-transpose",
        "where-sqrt", "ndarray-matmul", "add-multiply"])
def test_everyday_numpy_calls_on_tracers_still_run(f, args):
    want = f(*args)
    for g in transformed(f):
        np.testing.assert_allclose(g(*args), want, rtol=1e-13)


def test_linalg_outer_and_cross_refuse_what_numpy_linalg_refuses():
    with pytest.raises(ValueError):
        np.linalg.outer(A, B)
    with pytest.raises(ValueError, match="functrans.numpy.outer"):
        ft.jit(np.linalg.outer)(A, B)
    with pytest.raises(ValueError):
        np.linalg.cross(A[:, :2], B[:, :2])
    with pytest.raises(ValueError, match="functrans.numpy.cross"):
        ft.jit(np.linalg.cross)(A[:, :2], B[:, :2])
