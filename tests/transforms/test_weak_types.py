"""Python scalars are weakly typed (numpy's NEP 50, JAX's weak types): an argument of jit or
make_jaxpr, a loop carry or a cond operand that is a Python scalar takes the dtype of the
arrays it meets, so staged programs give eager mode's dtypes. Checked against eager
functrans.numpy and JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.avals import weak_scalar_type

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


ARRAYS = [np.array([1.5, -2.0], np.float32), np.array([3, -4], np.int32),
          np.array([0.25, 2.0], np.float64)]
SCALARS = [2, 1.5, True, 1 + 2j]
PAIRS = [(a, s) for a in ARRAYS for s in SCALARS]
IDS = [f"{a.dtype}-{type(s).__name__}" for a, s in PAIRS]


def _program(m):
    return lambda a, b: a * b + a


@pytest.mark.parametrize("a,s", PAIRS, ids=IDS)
def test_jit_keeps_eager_dtype_for_python_scalars(a, s):
    eager = _program(fnp)(a, s)
    out = ft.jit(_program(fnp))(a, s)
    ref = jax.jit(_program(jnp))(a, s)
    assert out.dtype == eager.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-6)


@pytest.mark.parametrize("a,s", PAIRS, ids=IDS)
def test_vmap_of_unmapped_python_scalar_keeps_eager_dtype(a, s):
    out = ft.vmap(_program(fnp), in_axes=(0, None))(a, s)
    ref = jax.vmap(_program(jnp), in_axes=(0, None))(a, s)
    assert out.dtype == _program(fnp)(a, s).dtype == ref.dtype


@pytest.mark.parametrize("a", [x for x in ARRAYS if x.dtype.kind == "f"], ids=str)
@pytest.mark.parametrize("s", [2, 1.5, True])
def test_grad_with_python_scalar_keeps_dtype(a, s):
    def loss(m):
        return lambda x, y: m.sum(x * y + x)
    g = ft.grad(loss(fnp))(a, s)
    assert g.dtype == a.dtype == jax.grad(loss(jnp))(a, s).dtype


@pytest.mark.parametrize("a", [x for x in ARRAYS if x.dtype.kind == "f"], ids=str)
@pytest.mark.parametrize("s", [2, 1.5, True])
def test_jit_of_grad_with_python_scalar_keeps_dtype(a, s):
    def loss(m):
        return lambda x, y: m.sum(x * y + x)
    g = ft.jit(ft.grad(loss(fnp)))(a, s)
    ref = jax.jit(jax.grad(loss(jnp)))(a, s)
    assert g.dtype == a.dtype == ref.dtype
    np.testing.assert_allclose(g, ref, rtol=1e-6)


def test_python_scalar_arguments_are_weak_in_the_program():
    closed = ft.make_jaxpr(lambda a, b: a)(np.ones(2, np.float32), 1.0)
    ref = jax.make_jaxpr(lambda a, b: a)(np.ones(2, np.float32), 1.0)
    assert [a.weak_type for a in closed.in_avals] == [a.weak_type for a in ref.in_avals] \
        == [False, True]
    # an operation on weak values alone stays weak, as in JAX
    closed = ft.make_jaxpr(lambda b: -b)(1.0)
    ref = jax.make_jaxpr(lambda b: -b)(1.0)
    assert closed.out_avals[0].weak_type and ref.out_avals[0].weak_type


def test_weak_scalar_type():
    assert weak_scalar_type(1.0) is float and weak_scalar_type(2) is int
    assert weak_scalar_type(True) is None  # bool is numpy's lowest dtype: nothing to weaken
    assert weak_scalar_type(np.float64(1.0)) is None
    assert weak_scalar_type(np.ones(())) is None


def test_jit_cache_tells_a_python_float_from_a_float64_array():
    f = ft.jit(lambda a, b: a + b)
    a = np.ones(2, np.float32)
    f(a, 1.0)
    f(a, np.float64(1.0))
    f(a, np.asarray(1.0))
    # np.float64 is an array scalar: a float64 array, not weak; one program for both
    assert f.cache_info().misses == 2
    assert f(a, np.asarray(1.0)).dtype == np.float64 == jax.jit(lambda a, b: a + b)(
        a, np.asarray(1.0)).dtype


# --- results computed from weak values only stay weak ---------------------------------------

WEAK_PROGRAMS = [lambda m: lambda a, b: a + 2 * b, lambda m: lambda a, b: a + b * 1.5,
                 lambda m: lambda a, b: a - (b + 1) / 2,
                 lambda m: lambda a, b: m.multiply(a, m.add(b, 2))]


@pytest.mark.parametrize("prog", WEAK_PROGRAMS, ids=range(len(WEAK_PROGRAMS)))
@pytest.mark.parametrize("a", [x for x in ARRAYS if x.dtype.kind == "f"], ids=str)
@pytest.mark.parametrize("s", [2, 1.5])
def test_python_scalars_with_weak_values_stay_weak(prog, a, s):
    f = prog(fnp)
    ref = a * (s + 2) if prog is WEAK_PROGRAMS[3] else f(a, s)  # eager, with operators
    out = ft.jit(f)(a, s)
    assert out.dtype == ref.dtype == jax.jit(prog(jnp))(a, s).dtype == a.dtype
    np.testing.assert_array_equal(out, ref)
    grad = ft.grad(lambda a, b: fnp.sum(f(a, b)))
    assert ft.jit(grad)(a, s).dtype == grad(a, s).dtype == a.dtype


def test_weak_intermediates_are_weak_in_the_program():
    closed = ft.make_jaxpr(lambda a, b: a + 2 * b)(np.ones(2, np.float32), 1.5)
    assert "f32[2] = add" in str(closed) and "f64[2]" not in str(closed)
    closed = ft.make_jaxpr(lambda b: 2 * b)(1.5)
    assert closed.out_avals[0].weak_type
    # an explicit conversion makes a weak value strong, as in JAX
    f = (lambda a, b: a + b.astype(np.float64))
    assert ft.jit(f)(np.ones(2, np.float32), 2).dtype == np.float64 == \
        jax.jit(f)(np.ones(2, np.float32), 2).dtype


def test_eager_python_scalar_arithmetic_is_unchanged():
    a = np.array([1.5, -2.0], np.float32)
    for f in [lambda a: fnp.add(a, 2), lambda a: fnp.multiply(2, a), lambda a: a * 1.5 + 1]:
        out = f(a)
        assert type(out) is np.ndarray and out.dtype == np.float32
    out = fnp.multiply(2, 1.5)  # numpy's float64, strong (NEP 50), as before
    assert type(out) is type(np.multiply(2, 1.5)) and out.dtype == np.float64


# --- loop carries that start as Python scalars ----------------------------------------------
# JAX promotes a weak carry to the dtype the body returns for it (numpy promotion of the
# scalar with that dtype), and keeps an array carry's dtype, refusing a body that changes it.


def _same(out, ref):
    assert np.asarray(out).dtype == np.asarray(ref).dtype
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-6)


def _eager_fori(lo, hi, body, c):
    for i in range(lo, hi):
        c = body(i, c)
    return c


CARRY_BODIES = [(lambda i, c: c + 0.5, 0), (lambda i, c: c + np.float32(0.5), 0.0),
                (lambda i, c: c + np.float32(0.5), 0), (lambda i, c: c * (1 + 1j), 1),
                (lambda i, c: c + 1, 0), (lambda i, c: (c[0] + 0.5, c[1] + 1), (0, 0))]


@pytest.mark.parametrize("body,init", CARRY_BODIES, ids=range(len(CARRY_BODIES)))
def test_fori_loop_weak_carry_takes_the_body_dtype(body, init):
    out = ft.lax.fori_loop(0, 3, body, init)
    ref = jax.lax.fori_loop(0, 3, body, init)
    eager = _eager_fori(0, 3, body, init)
    for o, r, e in zip(*(x if isinstance(x, tuple) else (x,) for x in (out, ref, eager))):
        _same(o, r)
        _same(o, np.asarray(e, np.asarray(o).dtype))  # eager: the same values
    out_jit = ft.jit(lambda: ft.lax.fori_loop(0, 3, body, init))()
    for o, r in zip(*(x if isinstance(x, tuple) else (x,) for x in (out_jit, ref))):
        _same(o, r)


def test_while_loop_weak_carry_takes_the_body_dtype():
    for body, init in [(lambda c: c + 0.5, 0), (lambda c: c + np.float32(0.5), 0.0)]:
        out = ft.lax.while_loop(lambda c: c < 3, body, init)
        _same(out, jax.lax.while_loop(lambda c: c < 3, body, init))
    # traced bounds run a while_loop with a weak carry too
    f = (lambda lax: lambda n: lax.fori_loop(0, n, lambda i, c: c + 0.5, 0))
    _same(ft.jit(f(ft.lax))(3), jax.jit(f(jax.lax))(3))


def test_scan_weak_carry_takes_the_body_dtype():
    for f, xs in [(lambda c, x: (c + 0.5, c), np.arange(3.0)),
                  (lambda c, x: (c + x, c), np.arange(3, dtype=np.float32))]:
        out, ref = ft.lax.scan(f, 0, xs), jax.lax.scan(f, 0, xs)
        _same(out[0], ref[0])
        _same(out[1], ref[1])


def test_weak_carry_under_jit_and_grad():
    def f(lax):
        return lambda x: lax.fori_loop(0, 3, lambda i, c: c + x * x, 0)
    for x in [1.5, np.float32(1.5)]:
        _same(ft.jit(f(ft.lax))(x), jax.jit(f(jax.lax))(x))
        _same(ft.grad(f(ft.lax))(x), jax.grad(f(jax.lax))(x))
        _same(ft.jit(ft.grad(f(ft.lax)))(x), jax.jit(jax.grad(f(jax.lax)))(x))
    # a traced Python scalar as the carry (jit's weak argument)
    g = (lambda lax: lambda k: lax.fori_loop(0, 3, lambda i, c: c + 0.5, k))
    _same(ft.jit(g(ft.lax))(2), jax.jit(g(jax.lax))(2))


def test_weak_carry_of_another_shape_is_refused():
    with pytest.raises(TypeError, match="fix init's shape"):
        ft.lax.scan(lambda c, x: (fnp.stack([c, c]), x), 0.0, np.arange(3.0))


def test_array_carry_keeps_its_dtype_and_is_refused():
    with pytest.raises(TypeError, match="fix init's dtype"):
        ft.lax.fori_loop(0, 3, lambda i, c: c + 0.5, np.int32(0))
    with pytest.raises(TypeError):
        jax.lax.fori_loop(0, 3, lambda i, c: c + 0.5, np.int32(0))
    with pytest.raises(TypeError, match=r"init_val.astype\(np.float64\)"):
        ft.lax.while_loop(lambda c: c < 3, lambda c: c + 0.5, np.int64(0))
    with pytest.raises(TypeError):
        jax.lax.while_loop(lambda c: c < 3, lambda c: c + 0.5, np.int64(0))
    with pytest.raises(TypeError, match=r"\.astype\(np.float32\)"):  # float32 array + 1.5j
        ft.lax.scan(lambda c, x: (c * 1.5j, x), np.float32(1), np.arange(3.0))


# --- fori_loop bounds -----------------------------------------------------------------------

def test_fori_loop_whole_float_bounds_count_in_ints():
    def body(i, c):
        return c + i
    _same(ft.lax.fori_loop(0.0, 3.0, body, 0.0), jax.lax.fori_loop(0.0, 3.0, body, 0.0))
    g = ft.grad(lambda x: ft.lax.fori_loop(0.0, 3.0, lambda i, c: c * x, 1.0))(2.0)
    assert g == 12.0  # d/dx x**3 at 2


def test_fori_loop_traced_float_bounds():
    def f(lax):
        return lambda hi: lax.fori_loop(0.0, hi, lambda i, c: c + i, 0.0)
    _same(ft.jit(f(ft.lax))(3.0), jax.jit(f(jax.lax))(3.0))


def test_fori_loop_mixed_int_and_float_bounds_are_refused():
    with pytest.raises(TypeError, match="mix a float and an int.*Pass ints"):
        ft.lax.fori_loop(0.0, 3, lambda i, c: c + i, 0.0)
    with pytest.raises(TypeError, match="equal types"):
        jax.lax.fori_loop(0.0, 3, lambda i, c: c + i, 0.0)


def test_fori_loop_fractional_bound_is_refused():
    # JAX truncates concrete float bounds (0.5 -> 0) silently; we name the fix instead
    with pytest.raises(TypeError, match="not a whole number.*int bounds"):
        ft.lax.fori_loop(0.5, 2.7, lambda i, c: c + i, 0.0)


# --- cond operands and checkpoint arguments --------------------------------------------------

def test_cond_python_scalar_operand_is_weak():
    def f(lax):
        return lambda a: lax.cond(True, lambda u, s: u * s, lambda u, s: u, a, 2.0)
    a = np.ones(3, np.float32)
    _same(ft.jit(f(ft.lax))(a), jax.jit(f(jax.lax))(a))
    _same(f(ft.lax)(a), f(jax.lax)(a))


def test_checkpoint_python_scalar_argument_is_weak():
    def f(T):
        return lambda a: T.checkpoint(lambda u, s: u * s)(a, 2.0)
    a = np.ones(3, np.float32)
    _same(ft.vmap(f(ft))(a), jax.vmap(f(jax))(a))
    _same(ft.jit(f(ft))(a), jax.jit(f(jax))(a))


def test_cond_of_python_scalars_alone():
    out = ft.lax.cond(True, lambda s: s * 2, lambda s: s, 2.0)
    _same(out, jax.lax.cond(True, lambda s: s * 2, lambda s: s, 2.0))
