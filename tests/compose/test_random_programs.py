"""Property-based differential suite: random programs through every transform.

Hypothesis builds small random expression trees over float64 arrays of broadcasting shapes,
Python float and int arguments, Python scalar literals on either side of an operator, captured
constant arrays, float and integer exponents (`x ** 2.0`, `x ** 2`, `2.0 ** x`, `fnp.power`,
`fnp.float_power`), reductions over axes, basic and integer-array indexing and elementwise
functions. Each program is one Python function of a namespace `m`, so the very same tree runs on
numpy (the independent reference), on functrans.numpy, and on jax.numpy when JAX is installed.

Checked for every program: eager == `jit` == numpy (values, shapes, dtypes); `grad`,
`jit(grad)`, `grad(jit)`, `vmap(grad)`, `vmap(jit(grad))` against float64 central differences of
the numpy program and each other; `jvp` and `jit(jvp)` against directional differences; `vjp` and
`jit(vjp)` through <w, J v> == <J^T w, v>; `hessian` and `jit(hessian)` against second
differences; everything against JAX when installed. No array a transform returns may share
memory with an argument, a captured constant or another returned array.

Domains are chosen while the tree is drawn: each node carries its numpy value at the drawn inputs,
and an operation is applied only where it is smooth there (log and sqrt on values above 0.2, abs
away from 0, fmax/maximum/where away from ties, max reductions with a clear winner, no overflow),
so finite differences are valid; otherwise the operand is passed through unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans.tree_util import tree_leaves, tree_map  # noqa: E402

# Each property compares values with a reference (numpy, central differences, JAX), NaN with
# NaN. A floating-point warning on the way is no failure of its own: the second jit call runs on
# other arguments, which may leave a function's domain, and a derivative that is NaN in JAX too
# (d/dx x ** 0.0 at x = 0) warns while computing it.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # JAX is a parity extra: the JAX comparison is skipped without it
    jax = jnp = None

# Python floats and ints are arguments too (weak-typed under jit); arrays broadcast together.
ARRAY_SHAPES = [(), (3,), (2, 3), (2, 1), (1, 3)]
FLOAT_LITERALS = [0.0, 1.0, 2.0, 0.5, -1.5, 2.5]
INT_LITERALS = [0, 1, 2, 3, -1]
SMALL = 0.1          # distance kept from kinks (ties, abs at 0) and branch cuts
POSITIVE = 0.2       # lower bound for log, sqrt and fractional powers
BOUND = 1e3          # values larger than this are not produced (no overflow, FD stays accurate)

# The same settings for every property: examples are drawn from the profile's seed (the CI
# profile derandomizes); no deadline, since the first call of each transform traces and compiles.
PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])


# --- the operation table --------------------------------------------------------------------
# Each row: source template (for the printed program), the function of a namespace `m`
# (numpy, functrans.numpy or jax.numpy) and a domain guard on the numpy values of the operands,
# true where the operation is smooth and finite differences are valid.

def _everywhere(*vals) -> bool:
    return True


def _positive(x) -> bool:
    return bool(np.all(np.asarray(x) > POSITIVE))


def _away_from_zero(x) -> bool:
    return bool(np.all(np.abs(np.asarray(x)) > SMALL))


def _not_large(x) -> bool:
    return bool(np.all(np.asarray(x) < 4.0))


def _no_tie(a, b) -> bool:
    return bool(np.all(np.abs(np.asarray(a) - np.asarray(b)) > SMALL))


@dataclasses.dataclass(frozen=True)
class Op:
    text: str                      # e.g. "fnp.sin({0})"
    fn: Callable[..., Any]         # fn(m, *operands)
    ok: Callable[..., bool] = _everywhere


UNARY = [
    Op("fnp.sin({0})", lambda m, x: m.sin(x)),
    Op("fnp.cos({0})", lambda m, x: m.cos(x)),
    Op("fnp.tanh({0})", lambda m, x: m.tanh(x)),
    Op("fnp.exp({0})", lambda m, x: m.exp(x), _not_large),
    Op("fnp.log({0})", lambda m, x: m.log(x), _positive),
    Op("fnp.sqrt({0})", lambda m, x: m.sqrt(x), _positive),
    Op("fnp.abs({0})", lambda m, x: m.abs(x), _away_from_zero),
    Op("fnp.square({0})", lambda m, x: m.square(x)),
    Op("(-{0})", lambda m, x: -x),
    Op("(-(-{0}))", lambda m, x: -(-x)),
    Op("fnp.astype({0}, fnp.float64)", lambda m, x: m.astype(x, np.float64),
       lambda x: hasattr(x, "astype")),  # an array, not a Python float (as numpy's astype)
    Op("({0} ** 2.0)", lambda m, x: x ** 2.0),
    Op("({0} ** 2)", lambda m, x: x ** 2),
    Op("({0} ** 3)", lambda m, x: x ** 3),
    Op("({0} ** 0.5)", lambda m, x: x ** 0.5, _positive),
    Op("({0} ** -1.0)", lambda m, x: x ** -1.0, lambda x: np.all(np.abs(x) > 0.3)),
    Op("(2.0 ** {0})", lambda m, x: 2.0 ** x, _not_large),
    Op("fnp.power({0}, 2.0)", lambda m, x: m.power(x, 2.0)),
    Op("fnp.power({0}, 3)", lambda m, x: m.power(x, 3)),
    Op("fnp.float_power({0}, 2.0)", lambda m, x: m.float_power(x, 2.0)),
    Op("fnp.float_power({0}, 1.5)", lambda m, x: m.float_power(x, 1.5), _positive),
]

# Binary rows take arrays or Python scalars on either side (the scalar side is drawn separately).
BINARY = [
    Op("({0} + {1})", lambda m, a, b: a + b),
    Op("({0} - {1})", lambda m, a, b: a - b),
    Op("({0} * {1})", lambda m, a, b: a * b),
    Op("({0} / {1})", lambda m, a, b: a / b, lambda a, b: np.all(np.abs(b) > 0.3)),
    Op("({0} ** {1})", lambda m, a, b: a ** b, lambda a, b: _pow_ok(a, b)),
    Op("fnp.power({0}, {1})", lambda m, a, b: m.power(a, b), lambda a, b: _pow_ok(a, b)),
    Op("fnp.float_power({0}, {1})", lambda m, a, b: m.float_power(a, b),
       lambda a, b: _pow_ok(a, b)),
    Op("fnp.fmax({0}, {1})", lambda m, a, b: m.fmax(a, b), _no_tie),
    Op("fnp.fmin({0}, {1})", lambda m, a, b: m.fmin(a, b), _no_tie),
    Op("fnp.maximum({0}, {1})", lambda m, a, b: m.maximum(a, b), _no_tie),
    Op("fnp.minimum({0}, {1})", lambda m, a, b: m.minimum(a, b), _no_tie),
    Op("fnp.where({0} > {1}, {0}, {1})", lambda m, a, b: m.where(a > b, a, b), _no_tie),
    Op("fnp.heaviside({0}, {1})", lambda m, a, b: m.heaviside(a, b),
       lambda a, b: _away_from_zero(a)),
    Op("fnp.arctan2({0}, {1})", lambda m, a, b: m.arctan2(a, b), lambda a, b: _atan2_ok(a, b)),
    # hypot's JAX formula, max * sqrt(1 + (min/max)**2), has a kink in the second derivative
    # where |a| == |b| (JAX's hessian there is 0): kept away from it as from a tie
    Op("fnp.hypot({0}, {1})", lambda m, a, b: m.hypot(a, b),
       lambda a, b: np.all(np.hypot(a, b) > 0.3) and _no_tie(np.abs(a), np.abs(b))),
]


def _pow_ok(a, b) -> bool:
    """a ** b is smooth in both operands where a > 0; an integral Python exponent allows any
    base (a negative one keeps away from 0), and a Python base must be positive."""
    # type(), not isinstance: a numpy float64 (a 0-d result, such as sin(x - x) = 0.0) is a
    # float too, but it is a computed value, not a Python exponent that stays fixed
    if type(b) in (int, float) and float(b).is_integer():
        # x ** 0.0 is pow, whose derivative 0.0 * x ** -1.0 is NaN at x = 0 (in JAX too);
        # x ** 0 is integer_pow, whose derivative is 0
        return b >= 1 or (b == 0 and type(b) is int) or _away_from_zero(a)
    if type(a) in (int, float):
        return a > 0 and bool(np.all(np.asarray(b) * np.log(a) < 6))
    return _positive(a) and bool(np.all(np.abs(np.asarray(b)) < 3))


def _atan2_ok(a, b) -> bool:
    """Away from the origin and from the branch cut (a == 0, b < 0)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.hypot(a, b) > 0.3) and np.all((b > 0) | (np.abs(a) > POSITIVE)))


def _clear_winner(x, axis) -> bool:
    """max/min along `axis` is attained once, by a margin (so its derivative is defined)."""
    x = np.asarray(x)
    s = np.sort(x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1), axis=-1)
    return s.shape[-1] < 2 or bool(np.all(s[..., -1] - s[..., -2] > SMALL)
                                   and np.all(s[..., 1] - s[..., 0] > SMALL))


REDUCTIONS = {"sum": None, "mean": None, "prod": None, "max": _clear_winner,
              "min": _clear_winner}


# --- programs ---------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Node:
    """An expression: `fn(m, args)` evaluates it, `value` is its numpy value at the drawn
    arguments (what the domain guards read) and `text` its source."""
    fn: Callable[[Any, tuple], Any]
    value: Any
    text: str
    is_leaf: bool = False


@dataclasses.dataclass(frozen=True)
class Program:
    """A random program: `f(*args)` returns one or more expressions of its arguments."""
    args: tuple                   # the drawn arguments: float64 arrays, Python floats and ints
    outputs: tuple                # Nodes
    consts: tuple                 # captured arrays (c0, c1, ...)

    def run(self, m, args):
        outs = tuple(o.fn(m, args) for o in self.outputs)
        return outs[0] if len(outs) == 1 else outs

    def __call__(self, *args):
        return self.run(fnp, args)

    @property
    def float_argnums(self) -> tuple:
        return tuple(i for i, a in enumerate(self.args) if not isinstance(a, int))

    def __repr__(self):
        names = ", ".join(f"x{i}" for i in range(len(self.args)))
        body = ", ".join(o.text for o in self.outputs)
        body = body if len(self.outputs) == 1 else f"({body})"
        consts = "".join(f"\n    c{i} = np.array({c.tolist()})" for i, c in enumerate(self.consts))
        args = ", ".join(f"np.array({a.tolist()})" if isinstance(a, np.ndarray) else repr(a)
                         for a in self.args)
        return f"\n    f = lambda {names}: {body}{consts}\n    args = ({args},)\n"

    def _repr_pretty_(self, printer, cycle):  # how hypothesis prints a falsifying example
        printer.text(repr(self))


def _values(draw, shape, low=-2.0, high=2.0):
    """Values rounded to two decimals, so a failing example prints as it is."""
    seed = draw(st.integers(0, 2**32 - 1))
    return np.asarray(np.round(np.random.default_rng(seed).uniform(low, high, shape), 2))


def _arg(draw, i):
    kinds = ["array"] * 3 + ["float"] + (["int"] if i > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "float":
        return float(_values(draw, ()))
    if kind == "int":
        return draw(st.sampled_from([2, 3, -1]))
    return _values(draw, draw(st.sampled_from(ARRAY_SHAPES)))


def _leaf(draw, args, consts):
    """A float argument or, now and then, a captured constant array."""
    floats = [i for i, a in enumerate(args) if not isinstance(a, int)]
    choice = draw(st.sampled_from(floats + ["const"]))
    if choice == "const":
        k = len(consts)
        consts.append(_values(draw, draw(st.sampled_from([(3,), (2, 3)]))))
        c = consts[k]
        return Node(lambda m, xs: c, c, f"c{k}", is_leaf=True)
    i = choice
    return Node(lambda m, xs: xs[i], args[i], f"x{i}", is_leaf=True)


def _scalar(draw, args):
    """A Python scalar operand: an int or float literal, or a Python int/float argument."""
    py_args = [i for i, a in enumerate(args) if isinstance(a, (int, float))]
    kind = draw(st.sampled_from(["float", "int"] + (["arg"] if py_args else [])))
    if kind == "arg":
        i = draw(st.sampled_from(py_args))
        return Node(lambda m, xs: xs[i], args[i], f"x{i}", is_leaf=True)
    v = draw(st.sampled_from(FLOAT_LITERALS if kind == "float" else INT_LITERALS))
    return Node(lambda m, xs: v, v, repr(v) if v >= 0 else f"({v!r})", is_leaf=True)


def _apply(op_fn, text, children, guard):
    """The node `op(children)`, or None where the guard fails or the value leaves the bounds."""
    vals = [c.value for c in children]
    if not guard(*vals):
        return None
    with np.errstate(all="ignore"):
        value = op_fn(np, *vals)
    if not np.all(np.isfinite(value)) or np.any(np.abs(value) > BOUND):
        return None
    fns = [c.fn for c in children]
    return Node(lambda m, xs: op_fn(m, *[f(m, xs) for f in fns]), value,
                text.format(*[c.text for c in children]))


def _expr(draw, args, consts, depth, leaf_ok=True):
    """A random expression tree of at most `depth` levels over `args`."""
    if depth == 0 or (leaf_ok and draw(st.integers(0, 4)) == 0):
        return _leaf(draw, args, consts)
    x = _expr(draw, args, consts, depth - 1)
    kind = draw(st.sampled_from(["unary", "unary", "binary", "scalar", "scalar", "reduce",
                                 "index"]))
    node = None
    if kind == "unary":
        op = draw(st.sampled_from(UNARY))
        node = _apply(op.fn, op.text, [x], op.ok)
    elif kind in ("binary", "scalar"):
        op = draw(st.sampled_from(BINARY))
        y = (_scalar(draw, args) if kind == "scalar" else _expr(draw, args, consts, depth - 1))
        if not _broadcast(x.value, y.value):
            y = _apply(lambda m, v: m.sum(v), "fnp.sum({0})", [y], _everywhere)
        if y is not None:
            pair = [y, x] if draw(st.booleans()) else [x, y]   # both operand orders
            node = _apply(op.fn, op.text, pair, op.ok)
    elif kind == "reduce":
        node = _reduction(draw, x)
    elif np.ndim(x.value) > 0:
        node = _index(draw, x)
    return x if node is None else node


def _reduction(draw, x):
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    ndim = np.ndim(x.value)
    axis = draw(st.sampled_from([None] + list(range(-ndim, ndim))))
    keepdims = draw(st.booleans())
    guard = REDUCTIONS[name]
    return _apply(lambda m, v: getattr(m, name)(v, axis=axis, keepdims=keepdims),
                  f"fnp.{name}({{0}}, axis={axis}, keepdims={keepdims})", [x],
                  (lambda v: guard(v, axis)) if guard else _everywhere)


def _index(draw, x):
    """Basic indexing (ints, slices, ellipsis, None) or an integer index array with repeats."""
    n = np.shape(x.value)[0]
    kind = draw(st.sampled_from(["int", "slice", "reverse", "ellipsis", "newaxis", "array"]))
    if kind == "array":
        idx = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
        return _apply(lambda m, v: v[idx], f"{{0}}[np.array({idx.tolist()})]", [x],
                      _everywhere)
    key, text = {"int": (-1, "[-1]"), "slice": (slice(1, None), "[1:]"),
                 "reverse": (slice(None, None, -1), "[::-1]"),
                 "ellipsis": ((Ellipsis, 0), "[..., 0]"),
                 "newaxis": ((None, 0), "[None, 0]")}[kind]
    if kind == "slice" and n < 2:
        return None
    return _apply(lambda m, v: v[key], "{0}" + text, [x], _everywhere)


def _broadcast(a, b) -> bool:
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
        return True
    except ValueError:
        return False


@st.composite
def programs(draw, max_depth: int = 4) -> Program:
    """A random program of 1-3 arguments (the first a float) returning 1 or 2 expressions; the
    second output is sometimes an argument itself (a transform must not return it aliased)."""
    args = tuple(_arg(draw, i) for i in range(draw(st.integers(1, 3))))
    consts: list = []
    outputs = [_expr(draw, args, consts, max_depth, leaf_ok=False)]
    if draw(st.integers(0, 3)) == 0:
        outputs.append(_leaf(draw, args, consts) if draw(st.booleans())
                       else _expr(draw, args, consts, 2))
    return Program(args, tuple(outputs), tuple(consts))


# --- references and checks ----------------------------------------------------------------------

def _loss(m, prog):
    """The scalar a gradient is taken of: the sum of every output's entries."""
    def loss(*xs):
        out = prog.run(m, xs)
        outs = out if isinstance(out, tuple) else (out,)
        total = m.sum(outs[0])
        for o in outs[1:]:
            total = total + m.sum(o)
        return total
    return loss


def _shifted(args, i, delta):
    """args with args[i] + delta (a Python float stays a Python float)."""
    a = args[i]
    new = float(a + delta) if isinstance(a, float) else a + delta
    return args[:i] + (new,) + args[i + 1:]


def _fd_grad(f, args, i, eps=1e-6):
    """Central differences of the float64 numpy function f with respect to argument i."""
    x = np.asarray(args[i], np.float64)
    g = np.zeros(x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = eps
        d = e if x.ndim else float(eps)
        g[k] = (f(*_shifted(args, i, d)) - f(*_shifted(args, i, -d))) / (2 * eps)
    return g


def _fd_hessian(f, args, eps=1e-4):
    """Second differences of f with respect to argument 0, shape x0.shape * 2."""
    x = np.asarray(args[0], np.float64)
    n = x.size
    h = np.zeros((n, n))
    basis = [np.eye(n)[k].reshape(x.shape) * eps for k in range(n)]
    for j in range(n):
        for k in range(n):
            def at(sj, sk):
                d = sj * basis[j] + sk * basis[k]
                return f(*_shifted(args, 0, d if x.ndim else float(d)))
            h[j, k] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * eps * eps)
    return h.reshape(x.shape + x.shape)


def _close(got, want, what, rtol=1e-5, atol=1e-6):
    got_leaves, want_leaves = tree_leaves(got), tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), f"{what}: {len(got_leaves)} leaves, expected " \
                                                f"{len(want_leaves)}"
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w, np.float64)
        assert g.shape == w.shape, f"{what}: shape {g.shape}, expected {w.shape}"
        scale = 1.0 + float(np.max(np.abs(w), initial=0.0))
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=rtol, atol=atol * scale,
                                   err_msg=what)


def _assert_no_aliasing(outputs, inputs, what):
    """No returned array shares memory with an input (argument or captured constant) or with
    another returned array."""
    outs = [o for o in tree_leaves(outputs) if isinstance(o, np.ndarray)]
    ins = [a for a in tree_leaves(inputs) if isinstance(a, np.ndarray)]
    for j, o in enumerate(outs):
        for a in ins:
            assert not np.shares_memory(o, a), f"{what}: output {j} shares memory with an input"
        for k, o2 in enumerate(outs[j + 1:], j + 1):
            assert not np.shares_memory(o, o2), f"{what}: outputs {j} and {k} share memory"


def _with_floats(prog, floats):
    """prog's arguments with the float ones replaced by `floats` (Python ints stay)."""
    full = list(prog.args)
    for i, v in zip(prog.float_argnums, floats):
        full[i] = v
    return tuple(full)


def _float_part(prog):
    """prog as a function of its float arguments only (Python ints stay fixed), and those."""
    return (lambda *floats: prog(*_with_floats(prog, floats)),
            tuple(prog.args[i] for i in prog.float_argnums))


def _direction(prog, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(float(rng.standard_normal()) if isinstance(a, float)
                 else rng.standard_normal(np.shape(a)) for a in _float_part(prog)[1])


def _fd_directional(prog, tangents, eps=1e-6):
    """(f(x + eps t) - f(x - eps t)) / 2 eps on the numpy program, per output."""
    nums = prog.float_argnums

    def at(s):
        full = list(prog.args)
        for i, t in zip(nums, tangents):
            full[i] = float(full[i] + s * t) if isinstance(full[i], float) else full[i] + s * t
        return prog.run(np, tuple(full))
    return tree_map(lambda p, q: (np.asarray(p) - np.asarray(q)) / (2 * eps), at(eps), at(-eps))


def _inputs(prog):
    return (prog.args, prog.consts)


# --- properties ---------------------------------------------------------------------------------

@settings(max_examples=100, **PROPERTY)
@given(programs())
def test_jit_equals_eager_and_numpy(prog):
    """Values, shapes and dtypes agree between numpy, eager functrans and jit (twice: the second
    call does not overwrite the first call's results); jit's outputs alias nothing."""
    want = prog.run(np, prog.args)
    eager = prog(*prog.args)
    _close(eager, want, "eager vs numpy", rtol=1e-12, atol=1e-12)
    jitted = ft.jit(prog)
    got = jitted(*prog.args)
    _close(got, want, "jit vs numpy", rtol=1e-12, atol=1e-12)
    for g, e in zip(tree_leaves(got), tree_leaves(eager)):
        assert np.result_type(g) == np.result_type(e), f"jit dtype {np.result_type(g)}, " \
                                                       f"eager {np.result_type(e)}"
    _assert_no_aliasing(got, _inputs(prog), "jit")
    kept = tree_map(np.copy, got)
    again = jitted(*[a if isinstance(a, int) else a * 0.5 for a in prog.args])
    _close(got, kept, "first jit results after a second call", rtol=0, atol=0)
    _assert_no_aliasing((got, again), _inputs(prog), "two jit calls")
    # captured arrays are constants captured at trace time (JAX's rule): changing one in place
    # afterwards changes nothing in the traced program
    for c in prog.consts:
        c += 10.0
    try:
        _close(jitted(*prog.args), kept, "jit after captured arrays changed", rtol=0, atol=0)
    finally:
        for c in prog.consts:
            c -= 10.0


@settings(max_examples=100, **PROPERTY)
@given(programs())
def test_reverse_mode_matches_finite_differences(prog):
    """grad, jit(grad), grad(jit), vmap(grad) and vmap(jit(grad)) of the summed outputs agree
    with central differences of the numpy program and with each other; no aliasing."""
    nums = prog.float_argnums
    np_loss = _loss(np, prog)
    want = tuple(_fd_grad(np_loss, prog.args, i) for i in nums)
    loss = _loss(fnp, prog)
    g = ft.grad(loss, argnums=nums)
    for name, fn in [("grad", g), ("jit(grad)", ft.jit(g)),
                     ("grad(jit)", ft.grad(ft.jit(loss), argnums=nums))]:
        got = fn(*prog.args)
        _close(got, want, f"{name} vs central differences")
        _assert_no_aliasing(got, _inputs(prog), name)
    # vmap over the first argument, three points around the drawn one; the rest unbatched
    x0 = np.asarray(prog.args[0], np.float64)
    batch = np.stack([x0, x0 + 0.01, x0 - 0.02])
    rest = prog.args[1:]
    in_axes = (0,) + (None,) * len(rest)
    want_b = [g(b if x0.ndim or not isinstance(prog.args[0], float) else float(b), *rest)
              for b in batch]
    want_b = tuple(np.stack([w[k] for w in want_b]) for k in range(len(nums)))
    for name, fn in [("vmap(grad)", ft.vmap(g, in_axes=in_axes)),
                     ("vmap(jit(grad))", ft.vmap(ft.jit(g), in_axes=in_axes))]:
        got = fn(batch, *rest)
        _close(got, want_b, f"{name} vs grad per point", rtol=1e-10, atol=1e-12)
        _assert_no_aliasing(got, (batch, rest, prog.consts), name)


@settings(max_examples=100, **PROPERTY)
@given(programs())
def test_forward_mode_and_vjp_match_finite_differences(prog):
    """jvp and jit(jvp) against a directional difference; vjp and jit(vjp) through
    <w, J t> == <J^T w, t>; no aliasing among outputs, primals and tangents."""
    f, primals = _float_part(prog)
    tangents = _direction(prog)
    want = _fd_directional(prog, tangents)
    jvp = lambda *p: ft.jvp(f, p, tangents)  # noqa: E731
    for name, fn in [("jvp", jvp), ("jit(jvp)", ft.jit(jvp))]:
        out, t_out = fn(*primals)
        _close(out, prog.run(np, prog.args), f"{name} primal output", rtol=1e-12, atol=1e-12)
        _close(t_out, want, f"{name} vs central differences")
        _assert_no_aliasing((out, t_out), (primals, tangents, prog.consts), name)
    rng = np.random.default_rng(1)
    w = tree_map(lambda o: rng.standard_normal(np.shape(o)), want)
    lhs = sum(float(np.vdot(a, b)) for a, b in zip(tree_leaves(w), tree_leaves(want)))
    pull = lambda *p: ft.vjp(f, *p)[1](w)  # noqa: E731
    for name, fn in [("vjp", pull), ("jit(vjp)", ft.jit(pull))]:
        cts = fn(*primals)
        rhs = sum(float(np.vdot(np.asarray(c), np.asarray(t)))
                  for c, t in zip(tree_leaves(cts), tree_leaves(tangents)))
        scale = 1.0 + sum(float(np.sum(np.abs(np.asarray(c)))) for c in tree_leaves(cts))
        assert abs(lhs - rhs) <= 1e-5 * scale, f"{name}: <w, J t> = {lhs}, <J^T w, t> = {rhs}"
        _assert_no_aliasing(cts, (primals, tangents, w, prog.consts), name)
    out, pullback = ft.vjp(f, *primals)
    _assert_no_aliasing((out, pullback(w)), (primals, w, prog.consts), "vjp with its output")


@settings(max_examples=60, **PROPERTY)
@given(programs(max_depth=3))
def test_hessian_matches_second_differences(prog):
    """hessian and jit(hessian) of the summed outputs with respect to the first argument."""
    np_loss = _loss(np, prog)
    want = _fd_hessian(np_loss, prog.args)
    h = ft.hessian(_loss(fnp, prog))
    for name, fn in [("hessian", h), ("jit(hessian)", ft.jit(h))]:
        got = fn(*prog.args)
        _close(got, want, f"{name} vs second differences", rtol=1e-4, atol=1e-4)
        _assert_no_aliasing(got, _inputs(prog), name)


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
@settings(max_examples=30, **PROPERTY)  # JAX compiles each program: ~0.5 s an example
@given(programs())
def test_matches_jax(prog):
    """Values, grad, jvp and hessian equal JAX's on the same program (float64). JAX computes
    them in one jitted function: op by op, its first calls compile each operation (seconds)."""
    nums = prog.float_argnums
    f, primals = _float_part(prog)
    tangents = _direction(prog)

    def jax_reference(*floats):
        run = lambda *fl: prog.run(jnp, _with_floats(prog, fl))  # noqa: E731
        loss = lambda *fl: _loss(jnp, prog)(*_with_floats(prog, fl))  # noqa: E731
        return (run(*floats), jax.grad(loss, argnums=tuple(range(len(floats))))(*floats),
                jax.jvp(run, floats, tangents)[1], jax.hessian(loss)(*floats))

    value, grad, tangent, hess = jax.jit(jax_reference)(*primals)
    _close(prog(*prog.args), value, "value vs JAX", rtol=1e-12, atol=1e-12)
    _close(ft.grad(_loss(fnp, prog), argnums=nums)(*prog.args), grad, "grad vs JAX",
           rtol=1e-10, atol=1e-12)
    _close(ft.jvp(f, primals, tangents)[1], tangent, "jvp vs JAX", rtol=1e-10, atol=1e-12)
    _close(ft.hessian(_loss(fnp, prog))(*prog.args), hess, "hessian vs JAX", rtol=1e-9,
           atol=1e-11)
