"""functrans.config (JAX's flags) and functrans.disable_jit."""

import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ArgumentError, ArgumentTypeError, ConcretizationTypeError


@pytest.fixture
def debug_nans():
    ft.config.update("jax_debug_nans", True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's own invalid-value note
            yield
    finally:
        ft.config.update("jax_debug_nans", False)


def test_enable_x64_true_is_accepted_and_read_back():
    ft.config.update("jax_enable_x64", True)
    assert ft.config.jax_enable_x64 is True
    assert ft.config.read("jax_enable_x64") is True
    assert fnp.ones(2).dtype == np.float64


def test_enable_x64_false_warns_and_keeps_dtypes():
    with pytest.warns(UserWarning, match="no-op"):
        ft.config.update("jax_enable_x64", False)
    try:
        assert fnp.ones(2).dtype == np.float64
    finally:
        ft.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("name,value", [("jax_platform_name", "cpu"), ("jax_platforms", "cpu"),
                                        ("jax_platforms", "cuda,cpu"), ("jax_platform_name", "CPU")])
def test_cpu_platform_is_accepted(name, value):
    ft.config.update(name, value)
    assert getattr(ft.config, name) == value
    ft.config.update(name, "cpu")


@pytest.mark.parametrize("name,value", [("jax_platform_name", "gpu"), ("jax_platforms", "tpu")])
def test_other_platforms_raise(name, value):
    with pytest.raises(ArgumentError, match="CPU only"):
        ft.config.update(name, value)


def test_unknown_flag_names_the_accepted_ones():
    with pytest.raises(ArgumentError, match="jax_debug_nans") as e:
        ft.config.update("jax_enable_checks", True)
    assert "jax_enable_checks" in str(e.value) and "jax_disable_jit" in str(e.value)
    with pytest.raises(AttributeError, match="jax_enable_x64"):
        ft.config.jax_no_such_flag  # noqa: B018
    with pytest.raises(AttributeError, match="config.update"):
        ft.config.jax_debug_nans = True


def test_bool_flags_reject_non_bools():
    with pytest.raises(ArgumentTypeError, match="True or False"):
        ft.config.update("jax_debug_nans", "yes")


# ---- jax_debug_nans --------------------------------------------------------------------------

def test_debug_nans_eager_names_the_primitive(debug_nans):
    with pytest.raises(FloatingPointError, match="in log"):
        fnp.log(np.array(-1.0))
    with pytest.raises(FloatingPointError, match="in sqrt"):
        fnp.sqrt(np.array([4.0, -1.0]))  # the eager fast path of functrans.numpy
    with pytest.raises(FloatingPointError, match="in sub"):
        fnp.subtract(np.inf, np.inf)  # Python floats: through bind


def test_debug_nans_under_jit_names_the_primitive(debug_nans):
    f = ft.jit(lambda x: fnp.sum(fnp.log(x) * 2.0))
    assert float(f(np.array([1.0, np.e]))) == pytest.approx(2.0)
    with pytest.raises(FloatingPointError, match="in log"):
        f(np.array([1.0, -1.0]))


def test_debug_nans_under_grad_of_jit(debug_nans):
    f = ft.jit(lambda x: fnp.sum(fnp.sqrt(x)))
    assert np.allclose(ft.grad(f)(np.array([4.0, 1.0])), [0.25, 0.5])
    with pytest.raises(FloatingPointError, match="in sqrt"):
        ft.grad(f)(np.array([4.0, -1.0]))


def test_debug_nans_ignores_nans_already_in_the_inputs(debug_nans):
    out = fnp.log(np.array([np.nan, 1.0]))
    assert np.isnan(out[0]) and out[1] == 0.0
    out = ft.jit(lambda x: x * 2.0)(np.array([np.nan]))
    assert np.isnan(out[0])


def test_debug_nans_off_returns_nan_again():
    ft.config.update("jax_debug_nans", True)
    ft.config.update("jax_debug_nans", False)
    f = ft.jit(lambda x: fnp.log(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(fnp.log(np.array(-1.0)))
        assert np.isnan(f(np.array(-1.0)))


# ---- jax_disable_jit -------------------------------------------------------------------------

def test_disable_jit_flag_calls_the_function_each_time():
    calls = []

    def f(x):
        calls.append(type(x))
        return x * 2.0

    g = ft.jit(f)
    g(np.ones(2))
    g(np.ones(2))
    assert len(calls) == 1  # traced once, then cached
    ft.config.update("jax_disable_jit", True)
    try:
        assert np.array_equal(g(np.ones(2)), [2.0, 2.0])
        g(np.ones(2))
    finally:
        ft.config.update("jax_disable_jit", False)
    assert calls[1:] == [np.ndarray, np.ndarray]  # concrete values: f ran op by op
    g(np.ones(2))
    assert len(calls) == 3


def test_disable_jit_context_manager_restores_the_flag():
    seen = []
    g = ft.jit(lambda x: seen.append(float(x)) or x + 1.0)  # float() needs a concrete x
    with ft.disable_jit():
        assert ft.config.jax_disable_jit
        assert g(1.0) == 2.0
    assert not ft.config.jax_disable_jit
    assert seen == [1.0]
    with pytest.raises(ConcretizationTypeError):
        g(1.0)  # traced again: float() of a tracer
