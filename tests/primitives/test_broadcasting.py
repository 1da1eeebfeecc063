"""Batching of the broadcasting elementwise primitives (functrans/primitives/broadcasting.py):
numpy aligns axes from the right, so operands whose batch axes agree counted from the right
broadcast without moving; the result is right for every layout of batch axes and ranks."""

import itertools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def _transposes(f, *args, **vmap_kw):
    closed = ft.make_jaxpr(ft.vmap(f, **vmap_kw))(*args)
    return sum(e.primitive.name == "transpose" for e in closed.jaxpr.eqns)


PROGRAMS = {
    "x * mean(x)": lambda x: x * fnp.mean(x),
    "softmax": lambda x: fnp.exp(x - fnp.max(x)) / fnp.sum(fnp.exp(x - fnp.max(x))),
    "standardise rows": lambda x: (x - fnp.mean(x, axis=-1, keepdims=True))
    / fnp.std(x, axis=-1, keepdims=True),
    "scale columns": lambda x: x * fnp.sum(x, axis=0),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_batch_axis_last_needs_no_transpose(name):
    f = PROGRAMS[name]
    x = np.random.default_rng(0).uniform(0.5, 1.5, (4, 3, 6))
    # batch axis last in and out: nothing moves (this cost a transpose in and one out)
    assert _transposes(f, x, in_axes=-1, out_axes=-1) == 0
    # out_axes=0 moves the result's batch axis once, at the end
    assert _transposes(f, x, in_axes=-1) == 1
    expected = np.stack([f(x[..., k]) for k in range(x.shape[-1])])
    np.testing.assert_allclose(ft.vmap(f, in_axes=-1)(x), expected, rtol=1e-13)


def test_an_unbatched_operand_of_higher_rank_gets_a_size_1_axis():
    w, x = np.arange(6.0).reshape(2, 3), np.arange(15.0).reshape(3, 5)
    f = ft.vmap(lambda w, x: w * x, in_axes=(None, -1), out_axes=-1)
    closed = ft.make_jaxpr(f)(w, x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["expand_dims", "mul"], str(closed)
    np.testing.assert_array_equal(f(w, x), w[:, :, None] * x[None])


def test_moving_the_batch_axis_across_size_1_axes_is_a_reshape():
    x, y = np.ones((1, 5, 3)), np.ones((5, 4, 3))   # batch axis 1 in both, ranks 2 and 2
    f = ft.vmap(lambda x, y: x + y, in_axes=(1, 0))
    assert _transposes(lambda x, y: x + y, x, y, in_axes=(1, 0)) == 0
    np.testing.assert_array_equal(f(x, y), np.moveaxis(x, 1, 0) + y)


# every layout: operand ranks 0-2 (some axes of size 1), batch axis anywhere or absent
_SHAPES = [(), (3,), (1,), (4, 3), (4, 1), (1, 3)]
_LAYOUTS = [(s, d) for s in _SHAPES for d in [None, *range(len(s) + 1)]]


@pytest.mark.parametrize("prim", ["add", "select"])
def test_every_layout_matches_a_loop(prim):
    rng = np.random.default_rng(1)
    size = 2
    n_ops = 2 if prim == "add" else 3
    f = (lambda x, y: x + y) if prim == "add" else \
        (lambda x, y, z: fnp.where(x > 0, y, z))
    for layout in itertools.product(_LAYOUTS, repeat=n_ops):
        if all(d is None for _, d in layout):
            continue
        args = [rng.standard_normal(s if d is None else (*s[:d], size, *s[d:]))
                for s, d in layout]
        in_axes = tuple(d for _, d in layout)
        expected = np.stack([f(*(a if d is None else np.take(a, k, axis=d)
                                 for a, d in zip(args, in_axes))) for k in range(size)])
        got = ft.vmap(f, in_axes=in_axes)(*args)
        np.testing.assert_array_equal(got, expected, err_msg=str(layout))
