"""functrans.debug.print: prints the runtime values, eagerly and under jit, grad and vmap."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ArgumentTypeError


def f(x):
    y = fnp.sin(x)
    ft.debug.print("x={} y={y}", x, y=y)
    return fnp.sum(y * 2.0)


X = np.array([0.0, 1.0])
LINE = f"x={X} y={np.sin(X)}\n"


def test_eager_prints_at_once(capsys):
    f(X)
    assert capsys.readouterr().out == LINE


def test_jit_prints_the_runtime_values_on_every_call(capsys):
    g = ft.jit(f)
    g(X)
    g(X + 1.0)
    g(X)
    assert capsys.readouterr().out == LINE + f"x={X + 1} y={np.sin(X + 1)}\n" + LINE
    assert g.trace_count == 1  # the second and third lines came from the compiled program


def test_jit_keeps_prints_of_constants_and_repeated_prints(capsys):
    def h(x):
        ft.debug.print("c={}", fnp.ones(2))  # constant inputs: not folded at compile time
        ft.debug.print("x={}", x)
        ft.debug.print("x={}", x)  # the same print twice: not merged by CSE
        return x

    ft.jit(h)(np.array(3.0))
    assert capsys.readouterr().out == "c=[1. 1.]\nx=3.0\nx=3.0\n"
    low = ft.jit(h).lower(np.array(3.0))
    assert sum(e.primitive.name == "debug_print" for e in low.jaxpr.jaxpr.eqns) == 3


@pytest.mark.parametrize("transform", [ft.grad, lambda h: ft.grad(ft.jit(h)),
                                       lambda h: ft.jit(ft.grad(h))],
                         ids=["grad", "grad(jit)", "jit(grad)"])
def test_grad_prints_the_primal_values_once(capsys, transform):
    g = transform(f)(X)
    assert np.allclose(g, 2.0 * np.cos(X))
    assert capsys.readouterr().out == LINE


@pytest.mark.parametrize("transform", [ft.vmap, lambda h: ft.jit(ft.vmap(h))],
                         ids=["vmap", "jit(vmap)"])
def test_vmap_prints_each_batch_element(capsys, transform):
    transform(f)(X)
    assert capsys.readouterr().out == "".join(
        f"x={x} y={np.sin(x)}\n" for x in X)


def test_format_must_be_a_string():
    with pytest.raises(ArgumentTypeError, match="format must be a string"):
        ft.debug.print(1.0)
