"""jit's per-signature cache: one trace per (structure, shapes, dtypes, static values), a
retrace on any change, hashed static arguments, a bounded size, clear errors."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.transforms.jit import jit


class Counted:
    """f(x) = sum(sin(x) * scale), counting how often Python runs it (= traces)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, x, scale=1.0):
        self.calls += 1
        return fnp.sum(fnp.sin(x)) * scale


def test_same_signature_does_not_retrace():
    f = Counted()
    jf = jit(f)
    for _ in range(3):
        jf(np.ones(3))
        jf(np.zeros(3))          # other values, same signature
    assert f.calls == 1 and jf.trace_count == 1
    assert jf.cache_info().hits == 5 and jf.cache_info().misses == 1


def test_new_shape_or_dtype_retraces():
    f = Counted()
    jf = jit(f)
    jf(np.ones(3))
    jf(np.ones(4))
    jf(np.ones(3, np.float32))
    jf(np.ones((3, 1)))
    assert f.calls == 4
    jf(np.ones(4))
    jf(np.ones(3, np.float32))
    assert f.calls == 4


def test_python_scalars_key_apart_from_arrays_of_their_dtype():
    # a Python float is weakly typed (it takes the dtype of the arrays it meets), a float64
    # array is not: their programs can differ, as in JAX
    f = Counted()
    jf = jit(f)
    jf(1.5)
    jf(2.5)
    assert f.calls == 1
    jf(np.float64(2.5))
    jf(np.asarray(3.5))          # numpy scalars and 0-d arrays share a program
    assert f.calls == 2
    jf(2)                        # a Python int: a new dtype
    assert f.calls == 3


def test_pytree_structure_and_kwargs_are_part_of_the_signature():
    calls = []

    def f(tree, *, k):
        calls.append(1)
        return tree["a"] * k + tree["b"][0]

    jf = jit(f)
    jf({"a": np.ones(2), "b": (np.ones(2),)}, k=2.0)
    jf({"a": np.zeros(2), "b": (np.ones(2),)}, k=3.0)
    assert len(calls) == 1
    jf({"a": np.ones(2), "b": [np.ones(2)]}, k=2.0)          # list instead of tuple
    assert len(calls) == 2
    jf({"a": np.ones(2), "b": (np.ones(2), None)}, k=2.0)    # one more node
    assert len(calls) == 3


def test_nested_positional_arguments_key_by_structure_shapes_and_weak_floats():
    # lists, tuples and dicts of arrays and floats take jit's cheap key: it must tell apart
    # everything tree_flatten's structure does, order dict leaves as it does, and keep a
    # Python float weak
    calls = []

    def f(params, x):
        calls.append(1)
        (w, b), scale = params["layer"], params["scale"]
        return (x @ w + b) * scale

    jf = jit(f)
    w, b, x = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0]), np.ones((4, 3))
    expected = (x @ w + b) * 2.0
    np.testing.assert_array_equal(jf({"scale": 2.0, "layer": (w, b)}, x), expected)
    np.testing.assert_array_equal(jf({"layer": (w, b), "scale": 2.0}, x), expected)
    assert len(calls) == 1                      # key order of a dict is not its structure
    jf({"layer": [w, b], "scale": 2.0}, x)      # list instead of tuple
    jf({"layer": (w, b), "scale": np.float64(2.0)}, x)   # a strong scalar, not a weak one
    jf({"layer": (w, b[:1]), "scale": 2.0}, x)  # another shape deep inside
    jf({"layer": (w, b), "gain": 2.0, "scale": 2.0}, x)  # one more key
    assert len(calls) == 5
    with pytest.raises(KeyError):
        jf({"layer": (w, b), "gain": 2.0}, x)

    out = jit(lambda p: p[0] * p[1])([np.ones(2, np.float32), 3.0])
    assert out.dtype == np.float32              # the float inside the list stayed weak


def test_static_arguments_are_hashed_by_value():
    calls = []

    def f(x, shape):
        calls.append(shape)
        return fnp.reshape(x, shape)

    jf = jit(f, static_argnums=1)
    assert jf(np.arange(6.0), (2, 3)).shape == (2, 3)
    assert jf(np.arange(6.0), tuple([2, 3])).shape == (2, 3)    # equal value, other object
    assert len(calls) == 1
    assert jf(np.arange(6.0), (3, 2)).shape == (3, 2)
    assert len(calls) == 2
    assert jit(f, static_argnums=-1)(np.arange(6.0), (6,)).shape == (6,)


def test_static_values_of_different_types_do_not_collide():
    seen = []

    def f(x, n):
        seen.append(type(n))
        return x * n

    jf = jit(f, static_argnums=(1,))
    jf(np.ones(2), 1)
    jf(np.ones(2), 1.0)
    jf(np.ones(2), True)
    assert seen == [int, float, bool]


def test_unhashable_static_argument_names_the_argument_and_the_fix():
    jf = jit(lambda x, shape: fnp.reshape(x, shape), static_argnums=(1,))
    with pytest.raises(TypeError, match=r"static argument 1 .*unhashable type list.*tuple"):
        jf(np.arange(6.0), [2, 3])


def test_static_argnames_and_static_arguments_passed_by_name_like_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = np.arange(1.0, 4.0)

    def power(x, n=2, *, shift=0.0):
        return sum(x for _ in range(n)) ** n + shift  # range(n): n must be static

    expected = jax.jit(power, static_argnames="n")(x, n=3)
    np.testing.assert_allclose(jit(power, static_argnames="n")(x, n=3), expected)
    np.testing.assert_allclose(jit(power, static_argnames=("n",))(x, 3), expected)
    # static by position is static by name too (once an "argnums out of range" error)
    np.testing.assert_allclose(jit(power, static_argnums=1)(x, n=3), expected)
    np.testing.assert_allclose(jit(power, static_argnums=1)(x), jax.jit(power)(x))
    jp = jit(power, static_argnames="n")
    jp(x, n=3), jp(x, n=3), jp(x, n=2)
    assert jp.trace_count == 2  # one trace per static value
    with pytest.raises(TypeError, match=r"static argument 'n' has unhashable type list.*"
                                        "static_argnames"):
        jp(x, n=[3])
    with pytest.raises(ValueError, match=r"static_argnames contains 'm', which is not a "
                                         "parameter"):
        jit(power, static_argnames="m")
    with pytest.raises(ValueError, match=r"static_argnums=\(3,\), but power takes 2 "
                                         "positional"):
        jit(power, static_argnums=3)


def test_traced_static_argument_is_an_error():
    jf = jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(TypeError, match="static argument 1 is a traced value"):
        ft.grad(lambda n: jf(2.0, n))(3.0)


def test_cache_is_bounded_least_recently_used_first():
    f = Counted()
    jf = jit(f, cache_size=2)
    jf(np.ones(1))
    jf(np.ones(2))
    jf(np.ones(1))               # refresh size 1
    jf(np.ones(3))               # evicts size 2
    assert jf.cache_info().currsize == 2 and f.calls == 3
    jf(np.ones(1))
    assert f.calls == 3
    jf(np.ones(2))
    assert f.calls == 4
    jf.clear_cache()
    jf(np.ones(2))
    assert f.calls == 5
    with pytest.raises(ValueError, match="cache_size"):
        jit(f, cache_size=0)


def test_transforms_reuse_the_traced_program_and_its_derivatives():
    f = Counted()
    jf = jit(f)
    x = np.linspace(0, 1, 4)
    jf(x)
    for _ in range(3):
        ft.grad(jf)(x)
        ft.vmap(jf)(np.stack([x, x]))
    assert f.calls == 1
    program = jf.lower(x).jaxpr
    kinds = {k[0] for k in program.derived.keys() if isinstance(k, tuple)}
    assert {"jvp", "vmap", "compiled"} <= kinds


def test_jit_under_make_jaxpr_and_tracer_signatures_share_the_cache():
    f = Counted()
    jf = jit(f)
    jf(np.ones(3))
    ft.make_jaxpr(jf)(np.ones(3))
    ft.jvp(jf, (np.ones(3),), (np.ones(3),))
    assert f.calls == 1


def test_closures_over_outer_tracers_are_traced_per_call_and_never_cached():
    calls = []

    def g(y):
        def h(z):
            calls.append(1)
            return fnp.sum(z * y)
        jh = jit(h)
        return jh(np.ones(3)) + jh(np.ones(3))

    assert float(ft.grad(g)(2.0)) == 6.0
    assert float(ft.grad(g)(2.0)) == 6.0
    assert len(calls) == 4
