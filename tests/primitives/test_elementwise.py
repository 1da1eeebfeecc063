"""Elementwise rows (functrans/primitives/elementwise.py) beyond the case table: what a rule
refuses."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError


@pytest.mark.parametrize("program", [lambda z: fnp.abs(z), lambda z: fnp.abs(z) ** 2,
                                     lambda z: fnp.abs(fnp.maximum(z, 0j))],
                         ids=["abs", "abs-squared", "abs-of-max"])
def test_abs_of_a_complex_value_refuses_to_differentiate(program):
    # no conj/real primitives: JAX's complex convention (grad(|z|**2)(1+2j) == 2-4j) is not
    # available, and the real rule gave wrong numbers (1.0 for grad(abs)) or a dtype clash
    with pytest.raises(DTypeError, match="abs: cannot differentiate.*complex128.*real "
                                         "floating-point values only.*float64.*real and "
                                         "imaginary parts"):
        ft.grad(program)(1 + 2j)
    with pytest.raises(DTypeError, match="abs: cannot differentiate"):
        ft.jvp(program, (np.array(1 + 2j),), (np.array(1 + 0j),))
    assert fnp.abs(1 + 2j) == np.abs(1 + 2j)   # values without derivatives still work
