"""The primitive case table run on another array library (dask.array, CuPy): each check feeds
the case's arguments as that library's arrays and compares with the same check on numpy
arrays. The numpy results are themselves checked against finite differences and loops over
slices (test_rules.py), so agreement here means the library computes the same derivatives.

A library is described by `Library`: how to make its arrays from numpy ones, how to bring a
result back to numpy (failing when the result is not the library's array: nothing may be
silently converted), and the chunking it wants.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
import pytest

import functrans as ft
from functrans.tree_util import tree_flatten, tree_map


@dataclasses.dataclass
class Library:
    name: str
    make: Callable        # numpy array -> the library's array
    back: Callable        # the library's array -> numpy array (raises on anything else)
    is_array: Callable    # whether a value is the library's array
    refuses_numpy_operands: bool = False  # its operators raise on numpy arrays (CuPy)


def _floats(args):
    return [i for i, a in enumerate(args) if np.issubdtype(np.asarray(a).dtype, np.inexact)]


def _direction(rng, args, which):
    return [rng.standard_normal(np.shape(args[i])).astype(np.asarray(args[i]).dtype)
            for i in which]


def _partial(fn, args, which):
    """fn as a function of the arguments at positions `which` (the rest fixed)."""
    def g(*xs):
        full = list(args)
        for i, x in zip(which, xs):
            full[i] = x
        return fn(*full)
    return g


def _compare(lib, got, expected, what, rtol=1e-10, atol=1e-12):
    got_leaves, expected_leaves = tree_flatten(got)[0], tree_flatten(expected)[0]
    assert len(got_leaves) == len(expected_leaves), what
    for g, e in zip(got_leaves, expected_leaves):
        e = np.asarray(e)
        if lib.is_array(g):
            g = lib.back(g)
        elif isinstance(g, (int, float, bool, np.generic)) and np.ndim(e) == 0:
            g = np.asarray(g)  # a result that does not depend on the library's arrays
        else:
            # a known-zero derivative the transforms made into zeros is numpy's, for now
            assert isinstance(g, np.ndarray) and not g.any(), \
                f"{what}: a {type(g).__name__} came back, not a {lib.name} array"
        assert g.shape == e.shape and g.dtype == e.dtype, (what, g.shape, e.shape, g.dtype,
                                                           e.dtype)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=what)
        else:
            np.testing.assert_array_equal(g, e, err_msg=what)


def check_values(lib, case):
    args = case.sample(np.random.default_rng(0))
    on_lib = [lib.make(a) for a in args]
    expected = case.fn(*args)
    closed = ft.make_jaxpr(case.fn)(*on_lib)
    assert case.prim in {e.primitive.name for e in closed.eqns}, str(closed)
    _compare(lib, ft.eval_jaxpr(closed.jaxpr, closed.consts, *on_lib),
             tree_flatten(expected)[0], "eval_jaxpr")
    _compare(lib, ft.jit(case.fn)(*on_lib), expected, "jit")
    try:
        eager = case.fn(*on_lib)
    except TypeError as e:
        # the case's own code applies the library's operator to a numpy array functrans made
        # without seeing an input (`x * iota(...)`): CuPy refuses such operands itself
        if lib.refuses_numpy_operands and "numpy.ndarray" in str(e):
            pytest.skip(f"eager: {lib.name}'s operator refused a numpy operand ({e}); "
                        "traced and jitted checks passed")
        raise
    _compare(lib, eager, expected, "eager")


def check_jvp_vjp(lib, case):
    args = case.sample(np.random.default_rng(1))
    which = _floats(args)
    if not which:
        return
    rng = np.random.default_rng(2)
    tangents = _direction(rng, args, which)
    on_lib = [lib.make(a) for a in args]
    f, f_lib = _partial(case.fn, args, which), _partial(case.fn, on_lib, which)
    primals = [args[i] for i in which]
    primals_lib = [on_lib[i] for i in which]
    out, t_out = ft.jvp(f, tuple(primals), tuple(tangents))
    out_lib, t_lib = ft.jvp(f_lib, tuple(primals_lib), tuple(lib.make(t) for t in tangents))
    _compare(lib, out_lib, out, "jvp primal")
    _compare(lib, t_lib, t_out, "jvp tangent", atol=1e-10)
    out, pullback = ft.vjp(f, *primals)
    cts = tree_map(lambda o: rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype)
                   if np.issubdtype(np.asarray(o).dtype, np.inexact) else None, out)
    expected = pullback(cts)
    _, pullback_lib = ft.vjp(f_lib, *primals_lib)
    cts_lib = tree_map(lambda c: lib.make(c), cts)
    _compare(lib, pullback_lib(cts_lib), expected, "vjp", atol=1e-10)


def check_vmap(lib, case):
    rng = np.random.default_rng(3)
    samples = [case.sample(rng) for _ in range(3)]
    args = [np.stack([s[i] for s in samples]) for i in range(len(case.shapes))]
    expected = ft.vmap(case.fn)(*args)
    _compare(lib, ft.vmap(case.fn)(*[lib.make(a) for a in args]), expected, "vmap")
