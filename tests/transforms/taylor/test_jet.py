"""ft.jet against nested jvp (to float64 rounding) on every row of the primitive case table up to
order 4, on control flow and custom rules, against jax.experimental.jet (recorded in
jax_jet_fixtures.json, live when JAX is installed), under jit, vmap and grad; and its errors."""

import json

import numpy as np
import pytest
from jet_programs import FIXTURES, ORDER, PROGRAMS, inputs, jax_module

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ShapeError
from functrans.primitives import elementwise as E
from functrans.primitives.registry import REGISTRY
from functrans.transforms.taylor import jet
from functrans.transforms.taylor.rules import has_taylor_rule
from functrans.tree_util import tree_flatten, tree_leaves

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)


def _cases():
    try:
        from primitives.cases import all_cases
    except ImportError:
        return []
    return all_cases()


CASES = _cases()


def nested_jvp_terms(f, primals, series):
    """The derivatives at t = 0 of t -> f(x(t)), x(t) = x_0 + sum_k x_k t^k / k!, by K nested
    jvps in the scalar t: the reference jet is checked against."""
    order = max(len(s) for s in series)

    def curve(t):
        xs = []
        for x, terms in zip(primals, series):
            if not terms or not np.issubdtype(fnp.asarray(x).dtype, np.inexact):
                xs.append(x)
                continue
            acc, fact = x, 1.0
            for k, term in enumerate(terms, 1):
                fact *= k
                acc = acc + term * (t ** k / fact)
            xs.append(acc)
        return f(*xs)

    out, h = [], curve
    for _ in range(order):
        h = (lambda g: lambda t: ft.jvp(g, (t,), (1.0,))[1])(h)
        out.append(h(0.0))
    return out


def _random_term(rng, a, scale):
    t = scale * rng.standard_normal(np.shape(a))
    if np.issubdtype(np.asarray(a).dtype, np.complexfloating):
        t = t + 1j * scale * rng.standard_normal(np.shape(a))
    return t.astype(np.asarray(a).dtype)


def _random_series(rng, args, order=ORDER, scale=0.3):
    return tuple([_random_term(rng, a, scale) for _ in range(order)]
                 if np.issubdtype(np.asarray(a).dtype, np.inexact) else [] for a in args)


def _assert_terms(got_terms, want_terms, rtol=1e-9, atol=1e-10, what=""):
    for k, (g, w) in enumerate(zip(got_terms, want_terms), 1):
        for a, b in zip(tree_leaves(g), tree_leaves(w)):
            b = np.asarray(b)
            if not np.issubdtype(b.dtype, np.inexact):    # float0: no derivative, zero terms
                assert not np.any(np.asarray(a)), f"{what} term {k}"
                continue
            scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
            np.testing.assert_allclose(np.asarray(a), b, rtol=rtol, atol=atol * scale,
                                       err_msg=f"{what} term {k}")


def _is_terms(t):
    return isinstance(t, list) and len(t) == ORDER and not any(
        isinstance(e, list | tuple | dict) for e in t)


def _jet_any(f, args, series):
    """jet over the float arguments (the others closed over), each output's terms."""
    fl = [i for i, s in enumerate(series) if s]
    if not fl:
        pytest.skip("no float argument")

    def g(*xs):
        full = list(args)
        for i, x in zip(fl, xs):
            full[i] = x
        return f(*full)

    return jet(g, tuple(args[i] for i in fl), tuple(series[i] for i in fl))


# --- every row of the primitive case table, order 4 ------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=str)
def test_jet_matches_nested_jvp_on_every_case(case):
    rng = np.random.default_rng(11)
    args = case.sample(rng)
    series = _random_series(rng, args)
    try:
        want = nested_jvp_terms(case.fn, args, series)
    except Exception as e:       # no derivative (svd's full U): jet says so the same way
        with pytest.raises(type(e)):
            _jet_any(case.fn, args, series)
        return
    y, terms = _jet_any(case.fn, args, series)
    assert len(want) == ORDER
    for a, b in zip(tree_leaves(y), tree_leaves(case.fn(*args))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)
    # terms per output leaf -> per order
    leaves, _ = tree_flatten(terms, is_leaf=_is_terms)
    per_order = [[leaf[k] for leaf in leaves] for k in range(ORDER)]
    _assert_terms(per_order, want, what=str(case))


def test_every_primitive_has_a_taylor_rule():
    missing = [n for n, p in REGISTRY.items() if not has_taylor_rule(p)]
    assert not missing, (f"primitives without a Taylor rule (no taylor= and no jvp= on the "
                         f"row): {missing}")


def test_program_rows_jet_their_program_once():
    # the rows holding programs state their own rule (the generic one would nest JVPs of the
    # program once per order); custom_jvp_call goes through the user's JVP (generic rule) and
    # custom_lin has no forward derivative at all
    rows = {n for n, p in REGISTRY.items() if "higher_order" in p.props}
    explicit = {n for n in rows if "taylor" in REGISTRY[n].rules}
    assert rows - explicit == {"custom_jvp_call", "custom_lin"}


# --- control flow and custom rules -----------------------------------------------------------

X = np.array([0.3, -0.7, 1.1])


@ft.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _softplus(x), x_dot / (1.0 + fnp.exp(-x))


@ft.custom_vjp
def _cube(x):
    return x * x * x


_cube.defvjp(lambda x: (_cube(x), x), lambda r, g: (3.0 * r * r * g,))

PROGRAMS_CF = {
    "cond": lambda x: lax.cond(x[0] > 0, lambda y: fnp.sin(y) * y, lambda y: fnp.cos(y), x),
    "cond_false": lambda x: lax.cond(x[0] < 0, lambda y: fnp.sin(y) * y, lambda y: fnp.cos(y),
                                     x),
    "switch": lambda x: lax.switch(1, [fnp.sin, fnp.exp, fnp.tanh], x),
    "scan": lambda x: lax.scan(lambda c, a: (fnp.tanh(c * a + 1.0), c * c), x,
                               fnp.stack([x, 2.0 * x]))[0],
    "scan_ys": lambda x: lax.scan(lambda c, a: (fnp.tanh(c * a + 1.0), fnp.exp(c)), x,
                                  fnp.stack([x, 2.0 * x]), reverse=True)[1],
    "scan_int_carry": lambda x: lax.scan(lambda c, a: ((c[0] + 1, fnp.sin(c[1]) * a), None),
                                         (0, x), fnp.stack([x, x]))[0][1],
    "while": lambda x: lax.while_loop(lambda c: c[0] < 3,
                                      lambda c: (c[0] + 1, fnp.sin(c[1]) * c[1] + x), (0, x))[1],
    "fori_static": lambda x: lax.fori_loop(0, 3, lambda i, c: fnp.sin(c) * c + i, x),
    "jit": ft.jit(lambda x: fnp.exp(fnp.sin(x)) * x),
    "checkpoint": ft.checkpoint(lambda x: fnp.exp(fnp.sin(x)) * x),
    "custom_jvp": lambda x: _softplus(x) * x,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS_CF))
def test_control_flow_and_custom_rules_match_nested_jvp(name):
    f = PROGRAMS_CF[name]
    rng = np.random.default_rng(2)
    series = ([rng.standard_normal(3) for _ in range(ORDER)],)
    y, terms = jet(f, (X,), series)
    np.testing.assert_allclose(y, f(X), rtol=1e-13)
    _assert_terms(terms, nested_jvp_terms(f, (X,), series), what=name)


def test_fori_loop_with_traced_bounds_is_a_while_loop():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: fnp.sin(c) * c, x)
    series = ([np.ones(3), np.zeros(3), np.zeros(3)],)
    y, terms = ft.jit(lambda x, n: jet(lambda z: f(z, n), (x,), series))(X, 3)
    want = nested_jvp_terms(lambda z: f(z, 3), (X,), series)
    _assert_terms(terms, want, what="fori_loop(0, n)")


def test_custom_vjp_goes_through_the_function_as_in_jax():
    # fwd/bwd state a reverse-mode rule only; the series see x * x * x
    rng = np.random.default_rng(4)
    series = ([rng.standard_normal(3) for _ in range(ORDER)],)
    _, terms = jet(lambda x: fnp.sin(_cube(x)), (X,), series)
    _assert_terms(terms, nested_jvp_terms(lambda x: fnp.sin(x * x * x), (X,), series))


def test_custom_jvp_goes_through_its_rule():
    # a rule that is not the derivative of the function: its series are what jet returns
    @ft.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 2.0 * fnp.cos(p[0]) * t[0]))
    _, (t1, t2) = jet(f, (X,), ([np.ones(3), np.zeros(3)],))
    np.testing.assert_allclose(t1, 2.0 * np.cos(X), rtol=1e-14)
    np.testing.assert_allclose(t2, -2.0 * np.sin(X), rtol=1e-14)   # d/dt 2 cos(x(t)) x'


# --- closed forms ----------------------------------------------------------------------------

def test_closed_forms():
    y, terms = jet(fnp.exp, (0.5,), ([1.0, 0.0, 0.0, 0.0],))
    np.testing.assert_allclose([y, *terms], [np.exp(0.5)] * 5, rtol=1e-15)
    y, terms = jet(fnp.sin, (0.5,), ([1.0, 0.0, 0.0],))
    np.testing.assert_allclose(terms, [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)], rtol=1e-15)
    # x(t) = t^2 / 2 (series [0, 1]): y = x^2 = t^4 / 4 has 4th derivative 6
    _, terms = jet(lambda x: x * x, (0.0,), ([0.0, 1.0, 0.0, 0.0],))
    np.testing.assert_allclose(terms, [0.0, 0.0, 0.0, 6.0], atol=1e-15)


# --- jax.experimental.jet: recorded and live -------------------------------------------------

class _FT:
    def __getattr__(self, name):
        if name == "erf":
            return lambda x: E.erf_p.bind(x)
        return getattr(fnp, name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jet_equals_recorded_jax(name):
    primals, series = inputs(name)
    y, terms = jet(PROGRAMS[name][0](_FT()), primals, series)
    rec = RECORDED[name]
    np.testing.assert_allclose(y, rec["primal"], rtol=1e-12, atol=1e-13)
    _assert_terms(terms, [np.asarray(t) for t in rec["terms"]], rtol=1e-10, atol=1e-11, what=name)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jet_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    from jax.experimental import jet as jax_jet
    jax.config.update("jax_enable_x64", True)
    primals, series = inputs(name)
    want_y, want = jax_jet.jet(PROGRAMS[name][0](jax_module()), primals, series)
    y, terms = jet(PROGRAMS[name][0](_FT()), primals, series)
    np.testing.assert_allclose(y, np.asarray(want_y), rtol=1e-12, atol=1e-13)
    _assert_terms(terms, [np.asarray(t) for t in want], rtol=1e-10, atol=1e-11, what=name)


# --- composition -----------------------------------------------------------------------------

def _f(x):
    return fnp.sum(fnp.tanh(x) * fnp.sin(x))


def test_jet_under_jit_vmap_and_grad():
    series = ([np.ones(3), np.zeros(3), np.zeros(3)],)
    _, want = jet(_f, (X,), series)
    _, got = ft.jit(lambda x: jet(_f, (x,), series))(X)
    _assert_terms(got, want, rtol=1e-13, atol=1e-14)
    xs = np.stack([X, 2.0 * X])
    batched = ft.vmap(lambda x: jet(_f, (x,), series)[1][2])(xs)
    np.testing.assert_allclose(batched[1], jet(_f, (2.0 * X,), series)[1][2], rtol=1e-13)
    # grad of the third directional derivative = that of nested jvp's
    g = ft.grad(lambda x: jet(_f, (x,), series)[1][2])(X)
    g_ref = ft.grad(lambda x: nested_jvp_terms(_f, (x,), series)[2])(X)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10)


def test_outputs_follow_the_output_tree_and_own_their_memory():
    x = np.array([1.0, 2.0])
    t = np.array([1.0, 0.0])
    y, terms = jet(lambda z: {"a": z, "b": (z * 2.0, 3.0)}, (x,), ([t, t],))
    assert set(y) == {"a", "b"} and len(terms["b"][0]) == 2
    np.testing.assert_array_equal(terms["b"][1], [0.0, 0.0])
    assert not np.shares_memory(y["a"], x) and not np.shares_memory(terms["a"][0], t)


def test_errors_name_the_fix():
    with pytest.raises(ShapeError, match="must match its primal's shape"):
        jet(fnp.sin, (np.ones(3),), ([np.ones(2)],))
    with pytest.raises(ValueError, match="same number of terms"):
        jet(lambda x, y: x * y, (1.0, 2.0), ([1.0], [1.0, 0.0]))
    with pytest.raises(TypeError, match="not an array"):
        jet(lambda d: d["a"], ({"a": 1.0},), ([{"a": 1.0}],))
    with pytest.raises(TypeError, match="tuples"):
        jet(fnp.sin, 1.0, [1.0])
    with pytest.raises(TypeError, match="has no derivatives|float"):
        jet(lambda n: n * 2, (np.array(3),), ([np.array(1)],))
