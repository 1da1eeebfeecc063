"""Arrays a jitted function closes over are constants captured at trace time (JAX's rule),
whatever their values: changing the caller's array in place afterwards changes nothing until
the function is traced again. make_jaxpr keeps copies likewise; transforms that run the
function at each call (eager grad, vmap) read the array at that call."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

ONES = np.ones(3)


@ft.custom_jvp
def _scaled(x, b):
    return x * b


_scaled.defjvp(lambda primals, tangents: (_scaled(*primals), tangents[0] * primals[1]))

# programs closing over b, each with its value as a function of b (numpy, by hand)
PROGRAMS = {
    "jit": (lambda b: ft.jit(lambda x: x * 2.0 + b), lambda b: ONES * 2.0 + b),
    "jit(cond)": (lambda b: ft.jit(lambda x: lax.cond(True, lambda y: y + b,
                                                      lambda y: y - b, x)),
                  lambda b: ONES + b),
    "jit(scan)": (lambda b: ft.jit(lambda x: lax.scan(lambda c, _: (c + b, None), x, None,
                                                      length=2)[0]),
                  lambda b: ONES + 2 * b),
    "jit(vmap)": (lambda b: ft.jit(ft.vmap(lambda x: x * b[2] + b[1])),
                  lambda b: ONES * b[2] + b[1]),
    "jit(grad)": (lambda b: ft.jit(ft.grad(lambda x: fnp.sum(x * x * b))),
                  lambda b: 2 * ONES * b),
    "vmap(jit)": (lambda b: ft.vmap(ft.jit(lambda x: x + b[1])), lambda b: ONES + b[1]),
    "grad(jit)": (lambda b: ft.grad(ft.jit(lambda x: fnp.sum(x * x * b))),
                  lambda b: 2 * ONES * b),
    "jit(custom_jvp)": (lambda b: ft.jit(ft.grad(lambda x: fnp.sum(_scaled(x, b)))),
                        lambda b: b + 0 * ONES),
}


@pytest.mark.parametrize("start", [np.zeros(3), np.array([0.0, 1.0, 2.0])],
                         ids=["zeros", "arange"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jitted_program_keeps_the_array_it_was_traced_with(name, start):
    # zeros once folded away (x + 0 -> x) while other values were read live: the same rule
    # must hold for both
    make, value = PROGRAMS[name]
    b = start.copy()
    f = make(b)
    traced_with = b.copy()
    np.testing.assert_allclose(f(ONES), value(traced_with), rtol=1e-15)
    b += 10
    np.testing.assert_allclose(f(ONES), value(traced_with), rtol=1e-15)


@pytest.mark.parametrize("start", [np.zeros(3), np.array([0.0, 1.0, 2.0])],
                         ids=["zeros", "arange"])
def test_issue_reproducer_and_retrace_after_clear_cache(start):
    b = start.copy()
    f = ft.jit(lambda x: x * 2.0 + b)
    np.testing.assert_array_equal(f(ONES), 2.0 + start)
    b += 10
    np.testing.assert_array_equal(f(ONES), 2.0 + start)
    f.clear_cache()  # traced again: the new value
    np.testing.assert_array_equal(f(ONES), 12.0 + start)


def test_make_jaxpr_consts_are_copies_taken_at_trace_time():
    b = np.array([0.0, 1.0, 2.0])
    closed = ft.make_jaxpr(lambda x: x * 2.0 + b)(ONES)
    const, = closed.consts
    assert not np.shares_memory(const, b)
    b += 10
    np.testing.assert_array_equal(const, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("transform,value", [
    (lambda b: ft.vmap(lambda x: x + b[1]), lambda b: ONES + b[1]),
    (lambda b: ft.grad(lambda x: fnp.sum(x * x * b)), lambda b: 2 * ONES * b),
    (lambda b: (lambda x: ft.jvp(lambda y: y * b, (x,), (ONES,))[1]), lambda b: b + 0 * ONES),
], ids=["vmap", "grad", "jvp"])
def test_transforms_without_a_cache_read_the_closure_at_each_call(transform, value):
    b = np.array([0.0, 1.0, 2.0])
    f = transform(b)
    np.testing.assert_allclose(f(ONES), value(b), rtol=1e-15)
    b += 10
    np.testing.assert_allclose(f(ONES), value(b), rtol=1e-15)
