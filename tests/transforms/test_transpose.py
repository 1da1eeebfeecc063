"""Transposition: the identity <v, J u> == <J^T v, u> on random composite programs (Hypothesis
builds them from a list of ops), jvp against central differences on the same programs, and
transpose_jaxpr / backward_pass on staged linear programs."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr
from functrans.transforms.toolkit import transpose_jaxpr

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

M33 = np.array([[0.6, -0.2, 0.3], [0.1, 0.9, -0.5], [-0.4, 0.2, 0.7]])

# each op: (name, arity, function on arrays/tracers); inputs are bounded, so are outputs
UNARY = [
    ("sin", fnp.sin), ("cos", fnp.cos), ("tanh", fnp.tanh), ("neg", lambda x: -x),
    ("exp", lambda x: fnp.exp(0.3 * fnp.tanh(x))), ("scale", lambda x: x * 1.7 - 0.2),
    ("sqrt", lambda x: fnp.sqrt(1.0 + x * x)), ("log", lambda x: fnp.log(1.5 + fnp.sin(x))),
    ("sum0", lambda x: fnp.sum(x, axis=0)), ("sum_keep", lambda x: fnp.sum(x, axis=-1,
                                                                           keepdims=True)),
    ("sum_all", lambda x: fnp.sum(x)), ("mean", lambda x: fnp.mean(x)),
    ("matmul", lambda x: x @ M33 if np.ndim(x) and x.shape[-1] == 3 else x * 0.5),
    ("reshape_T", lambda x: fnp.transpose(fnp.reshape(x, x.shape[::-1])) if np.ndim(x) == 2
     else x),
    ("square", lambda x: x * x),
]
BINARY = [
    ("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / (1.5 + fnp.sin(y))),
    ("where", lambda x, y: fnp.where(x > y, x, y * 0.5)),
]
SHAPES = [(2, 3), (3,), (1, 3), ()]


@st.composite
def programs(draw):
    """A list of steps (op, operand indices into the value pool) and the output indices."""
    n_in = draw(st.integers(1, 3))
    in_shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_in)]
    steps = []
    for i in range(draw(st.integers(1, 8))):
        pool = n_in + i
        if draw(st.booleans()):
            steps.append((draw(st.integers(0, len(UNARY) - 1)), (draw(st.integers(0, pool - 1)),)))
        else:
            steps.append((len(UNARY) + draw(st.integers(0, len(BINARY) - 1)),
                          (draw(st.integers(0, pool - 1)), draw(st.integers(0, pool - 1)))))
    n_vals = n_in + len(steps)
    outs = sorted(set(draw(st.lists(st.integers(n_in, n_vals - 1), min_size=1, max_size=2))))
    return in_shapes, steps, outs


def build(steps, outs):
    ops = [f for _, f in UNARY] + [f for _, f in BINARY]

    def f(*xs):
        vals = list(xs)
        for op, args in steps:
            vals.append(ops[op](*[vals[a] for a in args]))
        return tuple(vals[o] for o in outs)

    return f


def describe(steps):
    names = [n for n, _ in UNARY] + [n for n, _ in BINARY]
    return [(names[op], args) for op, args in steps]


def inner(a, b):
    return sum(float(np.vdot(np.asarray(x), np.asarray(y))) for x, y in zip(a, b))


@hypothesis.given(programs(), st.integers(0, 2 ** 32 - 1))
def test_transpose_identity_on_random_programs(program, seed):
    in_shapes, steps, outs = program
    f = build(steps, outs)
    rng = np.random.default_rng(seed)
    xs = tuple(rng.uniform(-1.5, 1.5, s) for s in in_shapes)
    us = tuple(rng.standard_normal(s) for s in in_shapes)
    ys, jus = ft.jvp(f, xs, us)
    vs = tuple(rng.standard_normal(np.shape(y)) for y in ys)
    _, f_vjp = ft.vjp(f, *xs)
    jtvs = f_vjp(vs)
    lhs, rhs = inner(vs, jus), inner(jtvs, us)
    assert np.isclose(lhs, rhs, rtol=1e-10, atol=1e-10), (describe(steps), lhs, rhs)
    # J itself is right: central differences along u
    eps = 1e-6
    plus = f(*[x + eps * u for x, u in zip(xs, us)])
    minus = f(*[x - eps * u for x, u in zip(xs, us)])
    for p, m, t in zip(plus, minus, jus):
        np.testing.assert_allclose(t, (np.asarray(p) - np.asarray(m)) / (2 * eps), rtol=1e-5,
                                   atol=1e-6, err_msg=str(describe(steps)))


@hypothesis.given(programs(), st.integers(0, 2 ** 32 - 1))
def test_transpose_jaxpr_of_staged_linear_programs(program, seed):
    """Stage t -> J t (primal work included, on constants) and transpose the program."""
    in_shapes, steps, outs = program
    f = build(steps, outs)
    rng = np.random.default_rng(seed)
    xs = tuple(rng.uniform(-1.5, 1.5, s) for s in in_shapes)
    us = tuple(rng.standard_normal(s) for s in in_shapes)
    linear = ft.make_jaxpr(lambda *ts: ft.jvp(f, xs, ts)[1])(*us)
    check_jaxpr(linear)
    ys = f(*xs)
    vs = tuple(rng.standard_normal(np.shape(y)) for y in ys)
    transposed = transpose_jaxpr(linear, [True] * len(us))
    check_jaxpr(transposed)
    jtvs = transposed(*vs)
    assert [np.shape(c) for c in jtvs] == [tuple(s) for s in in_shapes]
    lhs, rhs = inner(vs, linear(*us)), inner(jtvs, us)
    assert np.isclose(lhs, rhs, rtol=1e-10, atol=1e-10), (describe(steps), lhs, rhs)


def test_transpose_with_known_inputs_and_unused_linear_inputs():
    w = np.array([1.0, 2.0, 3.0])
    closed = ft.make_jaxpr(lambda k, t, unused: fnp.sum(t * k) * 2.0)(w, w, w)
    transposed = transpose_jaxpr(closed, [False, True, True])
    check_jaxpr(transposed)
    ct_t, ct_unused = transposed(w, 1.0)
    np.testing.assert_allclose(ct_t, 2.0 * w)
    np.testing.assert_array_equal(ct_unused, np.zeros(3))  # instantiated symbolic zero


def test_fan_out_cotangents_are_summed():
    _, f_vjp = ft.vjp(lambda x: x * 2.0 + x * 3.0 + fnp.sin(x), 0.5)
    np.testing.assert_allclose(f_vjp(1.0)[0], 5.0 + np.cos(0.5))


def test_nonlinear_use_of_a_linear_input_is_refused():
    closed = ft.make_jaxpr(lambda t: t * t)(1.0)
    with pytest.raises(TypeError, match="not linear"):
        transpose_jaxpr(closed, [True])
