"""Tracers: numpy-style operators and methods, errors that teach (concretization, leaks,
unsupported arguments), and trace stacks private to each thread."""

import math
import operator
import threading

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.trace import Tracer
from functrans import lax
from functrans.errors import ConcretizationTypeError, TracerBoolConversionError, \
    TracerIntegerConversionError, TracerItemAssignmentError, UnexpectedTracerError, \
    UnsizedTracerError

X = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]])
Y = np.array([[1.5, 0.2, -0.9], [2.2, -0.6, 0.8]])
M = np.array([[0.5, -1.0], [1.5, 2.0], [0.1, 0.4]])

# (name of the Tracer attribute it needs, function usable on ndarrays and tracers alike, args)
OPS = [
    ("__add__", lambda a, b: a + b, (X, Y)), ("__radd__", lambda a: 2.0 + a, (X,)),
    ("__sub__", lambda a, b: a - b, (X, Y)), ("__rsub__", lambda a: 2.0 - a, (X,)),
    ("__mul__", lambda a, b: a * b, (X, Y)), ("__rmul__", lambda a: 3 * a, (X,)),
    ("__truediv__", lambda a, b: a / b, (X, Y)), ("__rtruediv__", lambda a: 1.0 / a, (X,)),
    ("__neg__", lambda a: -a, (X,)), ("__pos__", lambda a: +a, (X,)),
    ("__pow__", lambda a: a ** 2, (X,)), ("__rpow__", lambda a: 2.0 ** a, (X,)),
    ("__abs__", lambda a: abs(a), (X,)),
    ("__floordiv__", lambda a, b: a // b, (X, Y)), ("__mod__", lambda a, b: a % b, (X, Y)),
    ("__matmul__", lambda a, m: a @ m, (X, M)), ("__rmatmul__", lambda m: X @ m, (M,)),
    ("__lt__", lambda a, b: a < b, (X, Y)), ("__le__", lambda a, b: a <= b, (X, Y)),
    ("__gt__", lambda a, b: a > b, (X, Y)), ("__ge__", lambda a, b: a >= b, (X, Y)),
    ("__eq__", lambda a, b: a == b, (X, X)), ("__ne__", lambda a, b: a != b, (X, Y)),
    ("__getitem__", lambda a: a[1], (X,)), ("__getitem__", lambda a: a[:, 1:], (X,)),
    ("__getitem__", lambda a: a[-1, ::2], (X,)), ("__getitem__", lambda a: a[None, 0], (X,)),
    ("T", lambda a: a.T, (X,)),
    ("reshape", lambda a: a.reshape(3, 2), (X,)), ("reshape", lambda a: a.reshape((-1,)), (X,)),
    ("sum", lambda a: a.sum(), (X,)), ("sum", lambda a: a.sum(axis=0), (X,)),
    ("sum", lambda a: a.sum(1, keepdims=True), (X,)),
    ("mean", lambda a: a.mean(axis=1), (X,)), ("max", lambda a: a.max(axis=0), (X,)),
    ("min", lambda a: a.min(), (X,)), ("prod", lambda a: a.prod(axis=1), (X,)),
    ("std", lambda a: a.std(), (X,)), ("var", lambda a: a.var(axis=0), (X,)),
    ("cumsum", lambda a: a.cumsum(axis=1), (X,)), ("dot", lambda a, m: a.dot(m), (X, M)),
    ("transpose", lambda a: a.transpose(), (X,)), ("flatten", lambda a: a.flatten(), (X,)),
    ("ravel", lambda a: a.ravel(), (X,)), ("swapaxes", lambda a: a.swapaxes(0, 1), (X,)),
    ("squeeze", lambda a: a[None].squeeze(0), (X,)),
    ("astype", lambda a: a.astype(np.float32), (X,)),
]


@pytest.mark.parametrize("attr,f,args", OPS, ids=[f"{o[0]}-{i}" for i, o in enumerate(OPS)])
def test_tracer_operators_and_methods_match_numpy(attr, f, args):
    if not hasattr(Tracer, attr):
        pytest.skip(f"Tracer.{attr} is not installed by functrans.numpy yet")
    expected = f(*args)
    closed = ft.make_jaxpr(f)(*args)
    got, = closed(*args)
    assert np.asarray(got).dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    # under a non-staging transform too (eager jvp): the primal output equals numpy's
    if expected.dtype.kind == "f":
        out, _ = ft.jvp(f, args, tuple(np.ones_like(a) for a in args))
        np.testing.assert_allclose(out, expected, rtol=1e-14)


def test_tracer_array_attributes_len_and_iteration():
    def f(x):
        assert (x.shape, x.ndim, x.size, x.dtype, len(x)) == ((2, 3), 2, 6, np.float64, 2)
        rows = list(x)
        assert len(rows) == 2 and rows[0].shape == (3,)
        return rows[0] + rows[1]

    np.testing.assert_allclose(ft.make_jaxpr(f)(X)(X)[0], X[0] + X[1])
    with pytest.raises(TypeError, match="0-d"):
        ft.make_jaxpr(lambda s: len(s))(1.0)


# --- control flow on traced values -----------------------------------------------------------

def relu_if(x):
    if x > 0:
        return x * x
    return -x


@pytest.mark.parametrize("convert, value, aval, error, fixes", [
    (bool, lambda x: x > 0, "bool[]", TracerBoolConversionError,
     ["static_argnums", "functrans.numpy.where", "lax.cond", "lax.while_loop"]),
    (int, fnp.sin, "f64[]", TracerIntegerConversionError, ["static_argnums", "lax.fori_loop"]),
    (operator.index, lambda x: fnp.floor(x).astype(int), "i64[]", TracerIntegerConversionError,
     ["static_argnums", "index the array itself"]),
    (float, fnp.sin, "f64[]", ConcretizationTypeError,
     ["static_argnums", "fnp.sin for math.sin"]),
    (math.sin, fnp.sin, "f64[]", ConcretizationTypeError,
     ["math.sin", "fnp.sin for math.sin"]),
], ids=["bool", "int", "index", "float", "math.sin"])
def test_python_conversions_of_a_staged_value_teach_the_fix(convert, value, aval, error, fixes):
    with pytest.raises(error) as info:
        ft.make_jaxpr(lambda x: convert(value(x)))(0.5)
    msg = str(info.value)
    assert aval in msg and "make_jaxpr" in msg  # the abstract value, and where it is traced
    for fix in fixes:
        assert fix in msg
    assert issubclass(error, ConcretizationTypeError) and issubclass(error, TypeError)


def test_if_on_a_staged_value_names_it_and_suggests_static_argnums_or_where():
    with pytest.raises(TracerBoolConversionError) as info:
        ft.make_jaxpr(relu_if)(np.float64(2.0))
    msg = str(info.value)
    assert "bool[]" in msg and "make_jaxpr" in msg
    assert "static_argnums" in msg and "numpy.where" in msg
    with pytest.raises(TracerBoolConversionError):
        ft.vmap(relu_if)(np.ones(3))  # batched values have no single truth value either
    # the suggested fixes work
    closed = ft.make_jaxpr(lambda x: fnp.where(x > 0, x * x, -x))(2.0)
    assert float(closed(-3.0)[0]) == 3.0
    static = ft.make_jaxpr(lambda x, c: x * x if c > 0 else -x, static_argnums=1)
    assert [e.primitive.name for e in static(2.0, 1).eqns] == ["mul"]


def test_control_flow_on_values_works_inside_eager_grad_as_in_jax():
    assert float(ft.grad(relu_if)(3.0)) == 6.0
    assert float(ft.grad(relu_if)(-3.0)) == -1.0
    assert float(ft.grad(ft.grad(relu_if))(3.0)) == 2.0
    assert float(ft.grad(lambda x: x * int(x))(2.5)) == 2.0  # piecewise constant, as in JAX
    y, t = ft.jvp(relu_if, (-2.0,), (1.0,))
    assert (float(y), float(t)) == (2.0, -1.0)
    # but not once grad itself is being staged: the primal is unknown there
    with pytest.raises(TracerBoolConversionError):
        ft.make_jaxpr(ft.grad(relu_if))(3.0)


@pytest.mark.parametrize("convert", [float, complex], ids=["float", "complex"])
def test_python_float_of_a_differentiated_value_refuses_to_drop_its_derivative(convert):
    # as in JAX: x * float(x) would otherwise have derivative x, not 2x, silently
    for transform in (lambda f: ft.grad(f)(2.5), lambda f: ft.jvp(f, (2.5,), (1.0,)),
                      lambda f: ft.jacfwd(ft.grad(f))(2.5)):
        with pytest.raises(ConcretizationTypeError) as info:
            transform(lambda x: x * convert(x))
        assert "drop its derivative" in str(info.value) and "astype" in str(info.value)


@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist_of_a_traced_value_say_it_is_traced_and_name_the_fix(method):
    # once: AttributeError: 'JaxprTracer' object has no attribute 'item'
    call = lambda x: getattr(x, method)()  # noqa: E731
    for run, where in ((lambda f: ft.jit(f)(np.ones(3)), "jit("),
                       (lambda f: ft.make_jaxpr(f)(np.ones(3)), "make_jaxpr"),
                       (lambda f: ft.vmap(f)(np.ones((2, 3))), "vmap")):
        with pytest.raises(ConcretizationTypeError) as info:
            run(lambda x: fnp.sum(x) * call(x[0]))
        msg = str(info.value)
        assert f"`.{method}()` was called on a traced value f64[]" in msg and where in msg
        assert "static_argnums" in msg and "functrans.numpy" in msg
        assert f"call .{method}() on the result" in msg
    # eager grad knows the value, but a Python number would drop the derivative
    with pytest.raises(ConcretizationTypeError, match="drop its derivative") as info:
        ft.grad(lambda x: x * call(x))(2.0)
    assert "functrans.numpy" in str(info.value)
    # an integer value has no derivative to drop: usable as in eager code
    pick = lambda x: x[fnp.argmax(x).item()] * 2.0  # noqa: E731
    np.testing.assert_array_equal(ft.grad(pick)(np.array([1.0, 3.0, 2.0])), [0.0, 2.0, 0.0])


@pytest.mark.parametrize("assign, at", [
    (lambda x: x.__setitem__(0, 1.0), "0"),
    (lambda x: x.__setitem__(slice(1, 3), 1.0), "1:3"),
    (lambda x: x.__setitem__((Ellipsis, 0), 1.0), "..., 0"),
    (lambda x: x.__setitem__(slice(None, None, 2), 1.0), "::2"),
])
def test_item_assignment_on_a_traced_array_points_to_at_set(assign, at):
    # once: TypeError: 'JaxprTracer' object does not support item assignment
    def f(x):
        assign(x)
        return x

    for run in (lambda g: ft.jit(g)(np.ones(4)), lambda g: ft.grad(lambda x: fnp.sum(g(x)))(
            np.ones(4)), lambda g: ft.vmap(g)(np.ones((2, 4)))):
        with pytest.raises(TracerItemAssignmentError) as info:
            run(f)
        msg = str(info.value)
        assert f"x = x.at[{at}].set(value)" in msg and "immutable" in msg and "f64[" in msg
        assert isinstance(info.value, TypeError)
    # the fix
    np.testing.assert_array_equal(ft.jit(lambda x: x.at[0].set(5.0))(np.ones(3)), [5.0, 1, 1])


def test_a_python_while_on_a_traced_value_points_to_while_loop():
    def doubling(x):
        while x < 10.0:
            x = x * 2.0
        return x

    with pytest.raises(TracerBoolConversionError) as info:
        ft.jit(doubling)(1.0)
    msg = str(info.value)
    assert "`while`" in msg and "lax.while_loop(cond_fun, body_fun, init_val)" in msg
    assert "jit(doubling)" in msg
    # the fix
    loop = ft.jit(lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x))
    assert float(loop(1.0)) == 16.0


def test_formatting_a_traced_value_with_a_spec_names_the_fix():
    # once: TypeError: unsupported format string passed to JaxprTracer.__format__
    with pytest.raises(ConcretizationTypeError) as info:
        ft.jit(lambda x: f"{x:.3f}" and x)(1.5)
    msg = str(info.value)
    assert "'.3f'" in msg and "f64[]" in msg and "without a spec" in msg
    assert ft.jit(lambda x: f"{x}" and x)(1.5) == 1.5  # no spec: the tracer's text
    printed = []
    ft.grad(lambda x: printed.append(f"{x:.2f}") or x * x)(1.5)  # eager grad knows the value
    assert printed == ["1.50"]


def test_vmap_says_a_batched_value_is_many_values():
    with pytest.raises(TracerBoolConversionError, match="one value per element of the mapped"):
        ft.vmap(relu_if)(np.ones(3))


def test_len_and_iteration_of_a_0d_traced_value_name_the_fix():
    for f, what in ((lambda x: len(x), "len()"), (lambda x: [v for v in x], "iteration")):
        with pytest.raises(UnsizedTracerError) as info:
            ft.jit(f)(1.0)
        msg = str(info.value)
        assert msg.startswith(what) and "f64[]" in msg and "x.ndim" in msg
        assert "fnp.atleast_1d(x)" in msg and isinstance(info.value, TypeError)


def test_numpy_functions_on_traced_values_run_their_functrans_numpy_twin():
    closed = ft.make_jaxpr(lambda x: np.sum(np.sin(x) + np.ones(2)))(np.ones(2))
    assert [e.primitive.name for e in closed.eqns] == ["sin", "add", "reduce_sum"]
    # eager grad must not see the concrete primal through numpy: d/dx sin(x) = cos(x)
    assert ft.grad(lambda x: np.sin(x))(1.0) == pytest.approx(np.cos(1.0), rel=1e-15)


def test_numpy_conversion_of_traced_values_raises_instead_of_dropping_them():
    for f in (lambda x: np.asarray(x).sum(), lambda x: np.frexp(x)[0]):
        with pytest.raises(ConcretizationTypeError, match="functrans.numpy"):
            ft.grad(f)(1.0)
        with pytest.raises(ConcretizationTypeError, match="functrans.numpy"):
            ft.make_jaxpr(f)(1.0)
    with pytest.raises(ConcretizationTypeError, match=r"fnp.asarray\(x\) keeps it traced"):
        ft.jit(lambda x: np.asarray(x) + 1.0)(1.0)


# --- leaked tracers --------------------------------------------------------------------------

@pytest.mark.parametrize("transform", [
    lambda f: ft.make_jaxpr(f)(1.0),
    lambda f: ft.grad(f)(1.0),
    lambda f: ft.jvp(f, (1.0,), (1.0,)),
    lambda f: ft.vmap(f)(np.ones(2)),
], ids=["make_jaxpr", "grad", "jvp", "vmap"])
def test_a_leaked_tracer_used_later_says_it_leaked(transform):
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    transform(f)
    tracer, = leaked
    for use in (lambda: tracer + 1.0, lambda: fnp.sin(tracer),
                lambda: ft.make_jaxpr(lambda y: y * tracer)(1.0)):
        with pytest.raises(UnexpectedTracerError, match="leaked") as info:
            use()
        assert "Return every value" in str(info.value)


# --- unsupported arguments -------------------------------------------------------------------

@pytest.mark.parametrize("transform", [
    lambda f, x: ft.make_jaxpr(f)(x),
    lambda f, x: ft.grad(f)(x),
    lambda f, x: ft.jvp(f, (x,), (x,)),
    lambda f, x: ft.vjp(f, x),
    lambda f, x: ft.vmap(f)(x),
    lambda f, x: ft.jacfwd(f)(x),
    lambda f, x: ft.jacrev(f)(x),
], ids=["make_jaxpr", "grad", "jvp", "vjp", "vmap", "jacfwd", "jacrev"])
@pytest.mark.parametrize("value", ["text", object(), {1, 2}], ids=["str", "object", "set"])
def test_unsupported_argument_types_are_named(transform, value):
    with pytest.raises(TypeError) as info:
        transform(lambda x: x, value)
    msg = str(info.value)
    assert type(value).__name__ in msg and ("array" in msg or "pytree" in msg)


# --- threads ---------------------------------------------------------------------------------

def test_traces_in_two_threads_do_not_see_each_other():
    barrier = threading.Barrier(2, timeout=20)
    out, errors = {}, []

    def worker(name, op, n_ops):
        def f(x):
            y = x
            for _ in range(n_ops):
                y = op(y)
                barrier.wait()  # both threads are mid-trace here, interleaving their ops
            return y
        try:
            out[name] = ft.make_jaxpr(f)(np.ones(3))
            barrier.wait()
            out[name + " eager"] = fnp.sin(np.zeros(2))  # eager again: nothing is staged
            barrier.wait()
            out[name + " grad"] = ft.grad(lambda s: fnp.sum(op(s * np.ones(2))))(0.5)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=("sin", fnp.sin, 4)),
               threading.Thread(target=worker, args=("exp", fnp.exp, 4))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert [e.primitive.name for e in out["sin"].eqns] == ["sin"] * 4
    assert [e.primitive.name for e in out["exp"].eqns] == ["exp"] * 4
    assert isinstance(out["sin eager"], np.ndarray) and isinstance(out["exp eager"], np.ndarray)
    np.testing.assert_allclose(out["sin grad"], 2 * np.cos(0.5))
    np.testing.assert_allclose(out["exp grad"], 2 * np.exp(0.5))


def test_eager_calls_in_one_thread_are_not_staged_by_another_threads_trace():
    inside, done = threading.Event(), threading.Event()
    results = {}

    def tracer_thread():
        def f(x):
            inside.set()
            assert done.wait(20)
            return fnp.cos(x)
        results["jaxpr"] = ft.make_jaxpr(f)(1.0)

    t = threading.Thread(target=tracer_thread)
    t.start()
    assert inside.wait(20)
    results["eager"] = fnp.sin(np.float64(0.25)) + 1.0  # this thread has no active trace
    done.set()
    t.join(20)
    assert not isinstance(results["eager"], Tracer)
    np.testing.assert_allclose(results["eager"], np.sin(0.25) + 1.0)
    assert [e.primitive.name for e in results["jaxpr"].eqns] == ["cos"]


def test_python_scalar_reaches_rules_with_a_dtype():
    """A Python scalar entering a trace (bind, full_raise) reaches the rules as a value with
    .dtype and .shape: under staging the program's weakly typed literal, eagerly a 0-d array."""
    from functrans.core.avals import weak_scalar_type
    from functrans.core.trace import scalar_operand
    from functrans.primitives import elementwise as E

    seen = []

    def f(x):
        seen.append(scalar_operand(2.0))
        return E.mul(x, 2.0)

    np.testing.assert_array_equal(ft.jvp(f, (np.ones(2),), (np.ones(2),))[1], [2.0, 2.0])
    assert isinstance(seen[-1], np.ndarray) and seen[-1].dtype == np.float64

    ft.make_jaxpr(lambda x: ft.jvp(f, (x,), (x,)))(np.ones(2))
    assert isinstance(seen[-1], Tracer) and seen[-1].shape == ()
    assert weak_scalar_type(seen[-1]) is float  # still promotes like the Python float
