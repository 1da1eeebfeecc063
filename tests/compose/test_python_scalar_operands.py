"""A Python scalar as an operand of every binary elementwise primitive and every two-operand
functrans.numpy function, in both positions, through jit, grad, jit(grad), jvp, jit(jvp),
vmap(jit(grad)), hessian and jit(hessian).

Under staging a Python scalar stays weakly typed; it must still reach every rule as a value
with `.dtype` and `.shape` (`jit(grad(lambda x: x ** 2.0))` once died in pow's rule on a bare
Python float). Values are checked against numpy, derivatives against float64 central
differences of the numpy reference, and against JAX when it is installed.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives import elementwise as E
from functrans.primitives.registry import REGISTRY

S = 1.25  # the Python scalar: no ties with XS, and no x/S or S/x on an integer (rem, floor)
XS = np.array([0.7, 1.9, 2.6])
INT_S = 6
INT_XS = np.array([3, 5, 12])

# two-operand functrans.numpy functions: (numpy reference, differentiable at XS against S)
NUMPY_FUNCTIONS = {
    "add": True, "subtract": True, "multiply": True, "divide": True, "true_divide": True,
    "power": True, "pow": True, "float_power": True, "arctan2": True, "atan2": True,
    "maximum": True, "minimum": True, "fmax": True, "fmin": True, "remainder": True,
    "mod": True, "fmod": True, "floor_divide": True, "hypot": True, "logaddexp": True,
    "copysign": True, "heaviside": True,
    "less": False, "less_equal": False, "greater": False, "greater_equal": False,
    "equal": False, "not_equal": False, "logical_and": False, "logical_or": False,
    "logical_xor": False,
}
INTEGER_FUNCTIONS = ("bitwise_and", "bitwise_or", "bitwise_xor")

# every binary elementwise primitive: its numpy reference, and whether it takes floats
PRIMITIVES = {
    "add": (np.add, True), "sub": (np.subtract, True), "mul": (np.multiply, True),
    "div": (np.divide, True), "pow": (np.power, True), "max": (np.maximum, True),
    "min": (np.minimum, True), "atan2": (np.arctan2, True), "rem": (np.remainder, True),
    "fmod": (np.fmod, True), "floor_divide": (np.floor_divide, True),
    "lt": (np.less, True), "le": (np.less_equal, True), "gt": (np.greater, True),
    "ge": (np.greater_equal, True), "eq": (np.equal, True), "ne": (np.not_equal, True),
    "and": (np.bitwise_and, False), "or": (np.bitwise_or, False),
    "xor": (np.bitwise_xor, False),
    # t (1 - y) y: sigmoid's derivative as PyTorch states it (the torch shim's sigmoid)
    "logistic_backward": (lambda t, y: t * (1 - y) * y, True),
    # x ** y with XLA's values (the C library's pow; functrans.random)
    "xla_pow": (np.power, True),
    # one-bound clamps (the torch shim's clamp_min, clamp_max): max and min away from ties
    "clamp_min": (np.maximum, True), "clamp_max": (np.minimum, True),
    # x + iy from two reals (a complex result: values only here; tests/primitives has its
    # derivatives)
    "complex": (lambda x, y: x + 1j * y, True),
}


def _binary_elementwise_primitives():
    return {name for name, prim in REGISTRY.items()
            if "elementwise" in prim.props and prim.module == E.__name__
            and _positional_arity(prim.impl) == 2}


def _positional_arity(fn):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in kinds for p in inspect.signature(fn).parameters.values())


def test_every_binary_elementwise_primitive_has_a_case():
    assert _binary_elementwise_primitives() == set(PRIMITIVES)


def _operand_order(fn, side):
    return (lambda x: fn(S, x)) if side == "left" else (lambda x: fn(x, S))


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _fd2(f, x, h=1e-4):
    return (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def check_values(f, f_np, xs):
    """f eager, under jit and under vmap(jit(f)) gives numpy's values (to a few ulps: hypot
    is computed as JAX does) and dtype."""
    want = f_np(xs)
    rtol = 4 * np.finfo(want.dtype).eps if want.dtype.kind == "f" else 0
    for g in (f, ft.jit(f), ft.vmap(ft.jit(f))):
        got = g(xs)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def check_derivatives(f, f_np, xs):
    """First and second derivatives through every transform, against central differences of
    the numpy reference in float64."""
    d1 = _fd(f_np, xs)
    d2 = _fd2(f_np, xs)
    loss = lambda x: fnp.sum(f(x))  # noqa: E731
    close(ft.grad(loss)(xs), d1)
    close(ft.jit(ft.grad(loss))(xs), d1)
    close(ft.jvp(f, (xs,), (np.ones_like(xs),))[1], d1)
    close(ft.jit(lambda x: ft.jvp(f, (x,), (np.ones_like(x),))[1])(xs), d1)
    close(ft.vmap(ft.jit(ft.grad(f)))(xs), d1)
    close(ft.jit(ft.grad(f))(float(xs[0])), d1[0])  # a weakly typed Python float argument
    for x, want in zip(xs, d2):
        close(ft.hessian(f)(x), want, rtol=1e-5, atol=1e-6)
        close(ft.jit(ft.hessian(f))(x), want, rtol=1e-5, atol=1e-6)


def check_like_jax(name, side, xs):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jfn = getattr(jax.numpy, name, None)
    if jfn is None:
        pytest.skip(f"jax.numpy has no {name}")
    f = _operand_order(getattr(fnp, name), side)
    f_jax = _operand_order(jfn, side)
    close(ft.vmap(ft.jit(ft.grad(f)))(xs), jax.vmap(jax.grad(f_jax))(xs), rtol=1e-12)
    x = xs[0]
    close(ft.jit(ft.hessian(f))(x), jax.hessian(f_jax)(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("name", sorted(NUMPY_FUNCTIONS))
def test_numpy_function_with_python_scalar(name, side):
    f = _operand_order(getattr(fnp, name), side)
    f_np = _operand_order(getattr(np, name), side)
    check_values(f, f_np, XS)
    check_values(f, f_np, XS.astype(np.float32))  # the scalar is weak: float32 stays float32
    if NUMPY_FUNCTIONS[name]:
        check_derivatives(f, f_np, XS)
        check_like_jax(name, side, XS)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("name", INTEGER_FUNCTIONS)
def test_integer_numpy_function_with_python_int(name, side):
    fn, ref = getattr(fnp, name), getattr(np, name)
    f = (lambda x: fn(INT_S, x)) if side == "left" else (lambda x: fn(x, INT_S))
    f_np = (lambda x: ref(INT_S, x)) if side == "left" else (lambda x: ref(x, INT_S))
    check_values(f, f_np, INT_XS)
    check_values(f, f_np, INT_XS.astype(np.int16))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_primitive_bound_with_python_scalar(name, side):
    """The primitive itself, bound with a Python scalar operand (as rules and functrans.lax
    do): the scalar enters every trace as a value of the array's dtype."""
    ref, takes_floats = PRIMITIVES[name]
    prim = REGISTRY[name]
    s, xs = (S, XS) if takes_floats else (INT_S, INT_XS)
    f = (lambda x: prim.bind(s, x)) if side == "left" else (lambda x: prim.bind(x, s))
    f_np = (lambda x: ref(s, x)) if side == "left" else (lambda x: ref(x, s))
    check_values(f, f_np, xs)
    if takes_floats and f_np(xs).dtype.kind == "f":
        check_derivatives(f, f_np, xs)


@pytest.mark.parametrize("side", ["left", "right"])
def test_select_with_python_scalar_branch(side):
    """select (fnp.where) with a Python scalar as either branch, through every transform."""
    def f(x):
        branches = (S, x * x) if side == "left" else (x * x, S)
        return fnp.where(x > 1.5, *branches)

    def f_np(x):
        branches = (S, x * x) if side == "left" else (x * x, S)
        return np.where(x > 1.5, *branches)

    check_values(f, f_np, XS)
    check_derivatives(f, f_np, XS)


def test_issue_reproducers():
    """The programs of the report, each with its closed-form derivative."""
    x = 3.0
    close(ft.jit(ft.grad(lambda x: x ** 2.0))(x), 2 * x, rtol=1e-15)
    close(ft.jit(ft.grad(lambda x: x ** 0.5))(x), 0.5 / np.sqrt(x), rtol=1e-15)
    close(ft.jit(ft.grad(lambda x: 2.0 ** x))(x), np.log(2.0) * 2.0 ** x, rtol=1e-15)
    close(ft.jit(ft.hessian(lambda x: fnp.float_power(x, 3.0)))(x), 6 * x, rtol=1e-15)
    close(ft.jit(lambda x: ft.jvp(lambda x: fnp.power(x, 2.0), (x,), (1.0,))[1])(x), 2 * x)
    close(ft.vmap(ft.jit(ft.grad(lambda x: x ** 2.0)))(XS), 2 * XS, rtol=1e-15)
    ones = np.ones(3)
    np.testing.assert_array_equal(ft.jit(lambda x: fnp.fmax(0.0, x))(ones), ones)
    np.testing.assert_array_equal(ft.jit(lambda x: fnp.fmin(0.0, x))(ones), 0 * ones)
    np.testing.assert_array_equal(ft.jit(lambda x: fnp.heaviside(0.5, x))(ones), ones)
    u, y = np.array([1.0, 2.0, 4.0]), np.array([0.5, 2.5, 3.0])

    def mse(u):
        return fnp.mean((u - y) ** 2.0)

    close(ft.jit(ft.grad(mse))(u), 2 * (u - y) / 3, rtol=1e-15)


@ft.custom_jvp
def _power(x, p):
    return x ** p


_power.defjvp(lambda primals, tangents: (_power(*primals),
                                         primals[1] * primals[0] ** (primals[1] - 1.0)
                                         * tangents[0]))


@pytest.mark.parametrize("name,f,want", [
    # each with its closed-form derivative at x = 3
    ("cond", lambda x: lax.cond(x > 0, lambda a, b: a ** b, lambda a, b: a * b, x, 2.0), 6.0),
    ("scan", lambda x: lax.scan(lambda c, _: (c * x ** 2.0, None), 1.0, None, length=3)[0],
     6 * 3.0 ** 5),
    ("fori_loop", lambda x: lax.fori_loop(0, 3, lambda i, c: c * x ** 2.0 + 1.0, 0.0),
     4 * 3.0 ** 3 + 2 * 3.0),
    ("checkpoint", ft.checkpoint(lambda x: x ** 2.0 * fnp.fmax(x, 0.0)), 27.0),
    ("custom_jvp", lambda x: _power(x, 3.0), 27.0),
    ("stop_gradient", lambda x: ft.stop_gradient(x ** 2.0) * x ** 2.0, 54.0),
], ids=lambda v: v if isinstance(v, str) else "")
def test_rows_beside_transforms_with_python_scalar_operands(name, f, want):
    for g in (ft.grad(f), ft.jit(ft.grad(f)), ft.grad(ft.jit(f))):
        close(g(3.0), want, rtol=1e-13)
    close(ft.vmap(ft.jit(ft.grad(f)))(np.array([3.0, 3.0])), [want, want], rtol=1e-13)
