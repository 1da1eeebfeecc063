"""functrans.cpu_device: the CPU device, device_put/device_get copies, block_until_ready."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ArgumentError


def test_one_cpu_device():
    (d,) = ft.devices()
    assert d.platform == "cpu" and d.id == 0
    assert ft.local_devices() == [d] and ft.devices("cpu") == [d]
    with pytest.raises(ArgumentError, match="CPU only"):
        ft.devices("gpu")


def test_device_put_returns_copies_of_a_pytree():
    a = np.arange(3.0)
    tree = {"w": a, "b": [np.ones(2), 2.0]}
    out = ft.device_put(tree, ft.devices()[0])
    a[0] = 100.0  # the caller's array changes after the call ...
    assert np.array_equal(out["w"], [0.0, 1.0, 2.0])  # ... the result does not
    assert not np.shares_memory(out["b"][0], tree["b"][0])
    assert out["b"][1].shape == () and float(out["b"][1]) == 2.0
    with pytest.raises(ArgumentError, match="one device"):
        ft.device_put(a, device="cuda:0")


def test_device_get_returns_copies():
    a = np.arange(3.0)
    out = ft.device_get((a,))
    assert isinstance(out, tuple) and np.array_equal(out[0], a)
    assert not np.shares_memory(out[0], a)


def test_device_put_under_jit_and_grad_is_the_identity():
    f = ft.jit(lambda x: fnp.sum(ft.device_put(x) ** 2))
    x = np.array([1.0, 2.0])
    assert float(f(x)) == 5.0
    assert np.array_equal(ft.grad(f)(x), [2.0, 4.0])


def test_block_until_ready_returns_its_argument():
    a = np.ones(2)
    tree = {"a": a}
    assert ft.block_until_ready(a) is a
    assert ft.block_until_ready(tree) is tree
    out = ft.jit(lambda x: x + 1.0)(a)
    assert ft.block_until_ready(out) is out
