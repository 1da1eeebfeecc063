"""vmap on whole programs: every primitive case with its batch axes at random positions, composite
programs of several primitives (mixed batched and unbatched operands, in_axes/out_axes pytrees,
nested vmap over two axes, vmap of jit, jit of vmap), and vmap composed with differentiation on a
small tanh MLP u(x) (per-example gradients, grad of vmap, vmap(jacrev), the per-point Hessian,
jvp of vmap).

References: numpy loops over slices, closed forms written in numpy (per-example backprop, the
MLP's Jacobian and Hessian propagated layer by layer), and JAX when it is installed. Also: the
batched program has as many equations for a batch of 10 as of 1,000, and batching adds no
transposes to the programs of the MLP's derivatives.
"""

import itertools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from primitives.cases import all_cases
from functrans.primitives import shape_ops
from functrans.transforms.toolkit import batch_jaxpr
from functrans.tree_util import tree_flatten, tree_unflatten

CASES = [c for c in all_cases() if c.vmap]

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # JAX is a parity extra: those comparisons are skipped without it
    jax = jnp = None


def _hypothesis():
    return pytest.importorskip("hypothesis")


def _examples(scale):
    """This test's share of the profile's max_examples (so --hypothesis-profile scales it)."""
    hypothesis = _hypothesis()
    return max(3, hypothesis.settings.default.max_examples // scale)


def _close(got, expected, rtol=1e-12, atol=1e-13):
    got_leaves, got_tree = tree_flatten(got)
    exp_leaves, exp_tree = tree_flatten(expected)
    assert got_tree == exp_tree, (got_tree, exp_tree)
    for g, e in zip(got_leaves, exp_leaves):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def _loop(f, args, in_axes, out_axes, size):
    """The reference: f on each slice (flat in_axes per leaf), leaves stacked at out_axes."""
    leaves, tree = tree_flatten(args)
    outs = []
    for k in range(size):
        sl = [x if d is None else np.take(x, k, axis=d) for x, d in zip(leaves, in_axes)]
        outs.append(tree_flatten(f(*tree_unflatten(tree, sl)))[0])
    _, out_tree = tree_flatten(f(*tree_unflatten(tree, [
        x if d is None else np.take(x, 0, axis=d) for x, d in zip(leaves, in_axes)])))
    stacked = [np.stack([np.asarray(o[i]) for o in outs], axis=a)
               for i, a in enumerate(out_axes)]
    return tree_unflatten(out_tree, stacked)


def _draw_axis(draw, st, ndim, allow_none=True):
    """A batch position for a value of unbatched rank `ndim` (negative ones too), or None."""
    choices = st.integers(-(ndim + 1), ndim)
    return draw(st.one_of(st.none(), choices) if allow_none else choices)


def _batched(draw, st, samples, allow_none=True):
    """Stack per-example samples at drawn positions: (arguments, flat in_axes)."""
    n = len(samples[0])
    axes = [_draw_axis(draw, st, np.ndim(samples[0][i]), allow_none) for i in range(n)]
    if all(a is None for a in axes):
        axes[draw(st.integers(0, n - 1))] = 0
    args = [samples[0][i] if a is None else np.stack([s[i] for s in samples], axis=a)
            for i, a in enumerate(axes)]
    return args, axes


# --- every primitive case, batch axes anywhere -------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_case_with_batch_axes_at_random_positions(case):
    hypothesis = _hypothesis()
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=_examples(4), deadline=None)
    @hypothesis.given(st.data())
    def prop(data):
        draw = data.draw
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        size = draw(st.sampled_from([1, 2, 3]))
        samples = [case.sample(rng) for _ in range(size)]
        args, axes = _batched(draw, st, samples)
        out0 = tree_flatten(case.fn(*[a if d is None else np.take(a, 0, axis=d)
                                      for a, d in zip(args, axes)]))[0]
        out_axes_flat = [draw(st.integers(-(np.ndim(o) + 1), np.ndim(o))) for o in out0]
        out_tree = tree_flatten(case.fn(*samples[0]))[1]
        out_axes = tree_unflatten(out_tree, out_axes_flat)
        expected = _loop(case.fn, args, axes, out_axes_flat, size)
        got = ft.vmap(case.fn, in_axes=tuple(axes), out_axes=out_axes)(*args)
        _close(got, expected, rtol=1e-12, atol=1e-14)

    prop()


# --- composite programs, written once for functrans.numpy, numpy and jax.numpy -----------------

class _Ops:
    """A numpy-like namespace plus `pad_last` (zero padding of the last axis), for one backend."""

    def __init__(self, mod, pad_last):
        self.m = mod
        self.pad_last = pad_last


def _np_pad_last(mod):
    return lambda x, lo, hi: mod.pad(x, [(0, 0)] * (x.ndim - 1) + [(lo, hi)])


FT = _Ops(fnp, lambda x, lo, hi: shape_ops.pad(
    x, np.zeros((), x.dtype), [(0, 0, 0)] * (x.ndim - 1) + [(lo, hi, 0)]))
NP = _Ops(np, _np_pad_last(np))
JX = _Ops(jnp, _np_pad_last(jnp)) if jnp is not None else None

IDX = np.array([3, 0, 2, 2])


def p_dense(o, x, w, b):
    """dot with an unbatched or batched weight, broadcasting add, concatenate, cumsum, slice."""
    m = o.m
    h = m.tanh(x @ w + b)
    return (m.concatenate([h, m.cumsum(x, axis=0)])[1:] * 2.0,)


def p_select(o, x, y, z):
    """where/select and maximum with any mix of batched and unbatched operands."""
    m = o.m
    return (m.where(x > y, x * z, y - z), m.maximum(x, z) * m.sin(y))


def p_reduce(o, x):
    """sum/max/mean/prod over assorted axes, then a broadcast back against the input."""
    m = o.m
    s = m.sum(x, axis=1)                       # (2, 4)
    mx = m.max(x, axis=(0, 2))                 # (3,)
    pr = m.prod(m.tanh(x) + 1.5, axis=-1)      # (2, 3)
    return (s[:, None, :] * x + mx[:, None] - m.mean(pr, axis=0)[:, None], m.sum(s * s))


def p_index(o, x, y):
    """constant-index gather (take), flip, transpose, and a matmul of the gathered rows."""
    m = o.m
    g = m.take(x, IDX, axis=0)                 # (4, 3)
    return (m.flip(g, axis=1).T @ y, m.take(y, IDX[:2], axis=0) * 3.0)


def p_shape(o, x, v):
    """reshape, swapaxes, expand_dims/squeeze, pad and outer products."""
    m = o.m
    r = m.reshape(m.swapaxes(x, 0, 1), (6,))
    e = m.squeeze(m.expand_dims(r, 0), 0)
    p = o.pad_last(e, 2, 1)
    return (m.outer(p, v), m.einsum("i,j->j", e, v) + m.sum(m.tensordot(x, x, axes=2)))


def p_batched_matmul(o, a, b):
    """a matmul with batch dimensions of its own, then reductions over them."""
    m = o.m
    c = a @ b                                  # (2, 3, 5)
    return (m.sum(c, axis=0), m.max(c, axis=1))


PROGRAMS = [
    (p_dense, [(3,), (3, 4), (4,)]),
    (p_select, [(2, 3), (3,), (2, 3)]),
    (p_reduce, [(2, 3, 4)]),
    (p_index, [(5, 3), (4, 2)]),
    (p_shape, [(2, 3), (2,)]),
    (p_batched_matmul, [(2, 3, 4), (2, 4, 5)]),
]
WRAPPERS = ["vmap", "vmap(jit)", "jit(vmap)"]


def _wrap(kind, f, in_axes, out_axes):
    if kind == "vmap":
        return ft.vmap(f, in_axes=in_axes, out_axes=out_axes)
    if kind == "vmap(jit)":
        return ft.vmap(ft.jit(f), in_axes=in_axes, out_axes=out_axes)
    return ft.jit(ft.vmap(f, in_axes=in_axes, out_axes=out_axes))


@pytest.mark.parametrize("prog,shapes", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_composite_programs_match_numpy_loops(prog, shapes):
    hypothesis = _hypothesis()
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=_examples(1), deadline=None)
    @hypothesis.given(st.data())
    def prop(data):
        draw = data.draw
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        size = draw(st.sampled_from([1, 3, 4]))
        samples = [[rng.uniform(-1.5, 1.5, s) for s in shapes] for _ in range(size)]
        args, axes = _batched(draw, st, samples)
        outs = prog(NP, *samples[0])
        out_axes = tuple(draw(st.integers(-(np.ndim(y) + 1), np.ndim(y))) for y in outs)
        expected = _loop(lambda *a: prog(NP, *a), args, axes, out_axes, size)
        kind = draw(st.sampled_from(WRAPPERS))
        got = _wrap(kind, lambda *a: prog(FT, *a), tuple(axes), out_axes)(*args)
        _close(got, expected)

    prop()


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
@pytest.mark.parametrize("prog,shapes", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_composite_programs_match_jax(prog, shapes):
    """The same programs against jax.vmap, in two fixed layouts: every argument mapped at its
    last axis with results at axis 1 (0 for scalars), and the first argument unmapped with the
    others at 0."""
    rng = np.random.default_rng(7)
    size = 3
    for last in (True, False):
        axes = [-1 if last else 0 for _ in shapes]
        if not last:
            axes[0] = None
        args = [rng.uniform(-1.5, 1.5, s) if a is None else
                rng.uniform(-1.5, 1.5, (*s, size) if last else (size, *s))
                for s, a in zip(shapes, axes)]
        if all(a is None for a in axes):
            continue
        ranks = [np.ndim(y) for y in prog(NP, *[rng.uniform(-1, 1, s) for s in shapes])]
        out_axes = tuple(min(1, r) if last else 0 for r in ranks)
        got = ft.vmap(lambda *a: prog(FT, *a), in_axes=tuple(axes), out_axes=out_axes)(*args)
        ref = jax.jit(jax.vmap(lambda *a: prog(JX, *a), in_axes=tuple(axes),
                               out_axes=out_axes))(*args)
        _close(got, ref)


def test_pytree_in_axes_and_out_axes():
    hypothesis = _hypothesis()
    st = hypothesis.strategies

    def f(o, params, x):
        m = o.m
        h = m.tanh(x @ params["w"] + params["b"][0])
        return {"h": h, "stats": (m.sum(h), m.cumsum(h * params["b"][1], axis=0))}

    @hypothesis.settings(max_examples=_examples(1), deadline=None)
    @hypothesis.given(st.data())
    def prop(data):
        draw = data.draw
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        size = 3

        def sample():
            return ({"w": rng.standard_normal((3, 4)),
                     "b": [rng.standard_normal(4), rng.standard_normal(4)]},
                    rng.standard_normal(3))

        samples = [tree_flatten(sample())[0] for _ in range(size)]
        args_flat, axes_flat = _batched(draw, st, samples)
        tree = tree_flatten(sample())[1]
        args = tree_unflatten(tree, args_flat)
        in_axes = tree_unflatten(tree, axes_flat)
        # sometimes a prefix: one entry for the whole parameter dict when all agree
        if len({axes_flat[0], axes_flat[1], axes_flat[2]}) == 1 and draw(st.booleans()):
            in_axes = (axes_flat[0], axes_flat[3])
        out_axes = {"h": draw(st.sampled_from([0, 1, -1])),
                    "stats": (0, draw(st.sampled_from([0, 1, -2])))}
        out_flat = [out_axes["h"], *out_axes["stats"]]
        expected = _loop(lambda p, x: f(NP, p, x), args, axes_flat,
                         [out_flat[0], out_flat[1], out_flat[2]], size)
        got = ft.vmap(lambda p, x: f(FT, p, x), in_axes=in_axes, out_axes=out_axes)(*args)
        _close(got, expected)

    prop()


def test_nested_vmap_over_two_axes():
    hypothesis = _hypothesis()
    st = hypothesis.strategies
    w = np.random.default_rng(5).standard_normal((3, 2))

    def f(o, x, y):
        m = o.m
        return m.tanh(x @ w) * m.sum(y) + m.cumsum(o.pad_last(x, 1, 0), axis=0)[1:3]

    @hypothesis.settings(max_examples=_examples(1), deadline=None)
    @hypothesis.given(st.integers(0, 3), st.integers(0, 2), st.booleans(),
                      st.integers(0, 2**32 - 1))
    def prop(outer_pos, inner_pos, y_mapped_outside, seed):
        rng = np.random.default_rng(seed)
        n1, n2 = 4, 5
        # x: (3,) per example; the outer axis at outer_pos of a (3, n2) slab with its inner
        # axis at inner_pos
        inner_pos = min(inner_pos, 1)
        slab = [3]
        slab.insert(inner_pos, n2)
        full = list(slab)
        full.insert(min(outer_pos, 2), n1)
        outer_pos = min(outer_pos, 2)
        x = rng.standard_normal(full)
        y = rng.standard_normal((n1, 2)) if y_mapped_outside else rng.standard_normal(2)
        y_axis = 0 if y_mapped_outside else None
        got = ft.vmap(ft.vmap(lambda a, b: f(FT, a, b), in_axes=(inner_pos, None)),
                      in_axes=(outer_pos, y_axis), out_axes=1)(x, y)
        expected = np.empty((n2, n1, 2))
        for i in range(n1):
            xi = np.take(x, i, axis=outer_pos)
            yi = y[i] if y_mapped_outside else y
            for j in range(n2):
                expected[j, i] = f(NP, np.take(xi, j, axis=inner_pos), yi)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)

    prop()


def test_per_example_gather_and_scatter_add():
    """Batched operand and batched indices: a per-example take and its transpose, the
    per-example scatter-add of the gradient (numpy's add.at as the reference)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6))
    idx = rng.integers(0, 6, (4, 5))
    got = ft.vmap(lambda a, i: fnp.take(a, i) * 2.0)(x, idx)
    np.testing.assert_allclose(got, np.take_along_axis(x, idx, axis=1) * 2.0, rtol=1e-15)
    got = ft.vmap(ft.grad(lambda a, i: fnp.sum(fnp.take(a, i) ** 2)), in_axes=(1, 0))(x.T, idx)
    expected = np.zeros_like(x)
    for k in range(4):
        np.add.at(expected[k], idx[k], 2.0 * x[k, idx[k]])
    np.testing.assert_allclose(got, expected, rtol=1e-14)


# --- differentiation of a small MLP u(x), batched over points --------------------------------

SIZES = (2, 8, 8, 1)
_rng = np.random.default_rng(11)
PARAMS = [(_rng.standard_normal((m, n)) / np.sqrt(m), 0.3 * _rng.standard_normal(n))
          for m, n in itertools.pairwise(SIZES)]
X = _rng.uniform(-1.0, 1.0, (6, 2))
Y = _rng.standard_normal(6)


def mlp(m, params, x):
    h = x
    for w, b in params[:-1]:
        h = m.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[0]


def u(x):
    return mlp(fnp, PARAMS, x)


def loss(params, x, y):
    r = mlp(fnp, params, x) - y
    return r * r


def np_per_example_grads(params, x, y):
    """Closed form: backprop per example, vectorised over the batch."""
    hs = [x]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w + b))
    w, b = params[-1]
    g = 2.0 * (hs[-1] @ w + b - y[:, None])
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        grads.append((np.einsum("bi,bj->bij", hs[i], g), g))
        if i:
            g = (g @ w.T) * (1.0 - hs[i] ** 2)
    return grads[::-1]


def np_grad_and_hessian(params, x):
    """Closed form, per point: the gradient block G (d, n) and Hessian block H (d, d, n) of each
    layer, pushed through z = h W + b (linear) and tanh (t' = 1 - t^2, t'' = -2 t t')."""
    n_pts, d = x.shape
    h = x
    G = np.broadcast_to(np.eye(d), (n_pts, d, d))
    H = np.zeros((n_pts, d, d, d))
    for w, b in params[:-1]:
        z = h @ w + b
        gz, hz = G @ w, H @ w
        t = np.tanh(z)
        t1 = 1.0 - t * t
        t2 = -2.0 * t * t1
        G = gz * t1[:, None, :]
        H = hz * t1[:, None, None, :] + t2[:, None, None, :] * gz[:, :, None, :] * \
            gz[:, None, :, :]
        h = t
    w, _ = params[-1]
    return (G @ w)[..., 0], (H @ w)[..., 0]


def np_features_jacobian(w1, b1, w2, x):
    """Closed form Jacobian of f(x) = tanh(x W1 + b1) W2 at every point: (n, out, in)."""
    t1 = 1.0 - np.tanh(x @ w1 + b1) ** 2
    return np.einsum("ko,nk,ik->noi", w2, t1, w1)


def _flat(grads):
    return [np.asarray(a) for pair in grads for a in pair]


def test_vmap_of_grad_is_per_example_backprop():
    expected = np_per_example_grads(PARAMS, X, Y)
    for f in (ft.vmap(ft.grad(loss), in_axes=(None, 0, 0)),
              ft.jit(ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))),
              ft.vmap(ft.jit(ft.grad(loss)), in_axes=(None, 0, 0))):
        _close(_flat(f(PARAMS, X, Y)), _flat(expected), rtol=1e-12, atol=1e-14)
    # the batch axis of x elsewhere, the gradients' batch axis last
    got = ft.vmap(ft.grad(loss), in_axes=(None, 1, 0), out_axes=-1)(PARAMS, X.T, Y)
    _close(_flat(got), [np.moveaxis(a, 0, -1) for a in _flat(expected)], rtol=1e-12,
           atol=1e-14)


def test_grad_of_vmap_sums_the_per_example_gradients():
    def total(params):
        return fnp.sum(ft.vmap(loss, in_axes=(None, 0, 0))(params, X, Y))

    expected = [a.sum(axis=0) for a in _flat(np_per_example_grads(PARAMS, X, Y))]
    _close(_flat(ft.grad(total)(PARAMS)), expected, rtol=1e-12, atol=1e-14)
    _close(_flat(ft.jit(ft.grad(total))(PARAMS)), expected, rtol=1e-12, atol=1e-14)


def test_vmap_of_jacrev_and_jacfwd_of_a_vector_function():
    (w1, b1), (w2, _), _ = PARAMS

    def features(x):
        return fnp.tanh(x @ w1 + b1) @ w2

    expected = np_features_jacobian(w1, b1, w2, X)
    _close(ft.vmap(ft.jacrev(features))(X), expected)
    _close(ft.vmap(ft.jacfwd(features), in_axes=1, out_axes=2)(X.T),
           np.moveaxis(expected, 0, 2))


def test_vmap_of_hessian_is_the_per_point_hessian():
    hypothesis = _hypothesis()
    st = hypothesis.strategies
    _, hess = np_grad_and_hessian(PARAMS, X)

    @hypothesis.settings(max_examples=_examples(2), deadline=None)
    @hypothesis.given(st.sampled_from([0, 1, -1]), st.sampled_from([0, 1, 2, -1]),
                      st.sampled_from(WRAPPERS))
    def prop(in_axis, out_axis, kind):
        x = X if in_axis == 0 else X.T
        got = _wrap(kind, ft.hessian(u), in_axis, out_axis)(x)
        _close(got, np.moveaxis(hess, 0, out_axis), rtol=1e-11, atol=1e-13)

    prop()
    laplacian = ft.vmap(lambda x: fnp.trace(ft.hessian(u)(x)))(X)
    _close(laplacian, np.trace(hess, axis1=1, axis2=2), rtol=1e-11, atol=1e-13)


def test_jvp_of_vmap_is_the_directional_derivative_at_every_point():
    grad_u, _ = np_grad_and_hessian(PARAMS, X)
    v = np.random.default_rng(4).standard_normal(X.shape)
    out, tangent = ft.jvp(ft.vmap(u), (X,), (v,))
    _close(out, np.array([mlp(np, PARAMS, x) for x in X]))
    _close(tangent, np.sum(grad_u * v, axis=1))
    # and jvp inside vmap, the tangent unbatched
    e0 = np.array([1.0, 0.0])
    _close(ft.vmap(lambda x: ft.jvp(u, (x,), (e0,))[1])(X), grad_u[:, 0])


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_mlp_derivatives_match_jax():
    def jmlp(params, x):
        return mlp(jnp, params, x)

    def jloss(params, x, y):
        return (jmlp(params, x) - y) ** 2

    jp = jax.tree_util.tree_map(jnp.asarray, PARAMS)
    _close(_flat(ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(PARAMS, X, Y)),
           _flat(jax.jit(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0)))(jp, X, Y)))
    _close(ft.vmap(ft.hessian(u), in_axes=1, out_axes=1)(X.T),
           jax.jit(jax.vmap(jax.hessian(lambda x: jmlp(jp, x)), in_axes=1, out_axes=1))(X.T),
           rtol=1e-11)
    _close(ft.grad(lambda p: fnp.sum(ft.vmap(loss, in_axes=(None, 0, 0))(p, X, Y)))(PARAMS),
           jax.jit(jax.grad(lambda p: jnp.sum(jax.vmap(jloss, in_axes=(None, 0, 0))(p, X, Y))))(
               jp))


# --- the shape of the batched programs -------------------------------------------------------

def _program(f, *args):
    return ft.make_jaxpr(f)(*args).jaxpr


def _count(jaxpr, name):
    return sum(e.primitive.name == name for e in jaxpr.eqns)


@pytest.mark.parametrize("which", ["vmap(grad)", "vmap(hessian)"])
def test_equation_count_is_the_same_for_a_batch_of_10_and_of_1000(which):
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-1, 1, (1000, 2)), rng.standard_normal(1000)
    if which == "vmap(grad)":
        f = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))
        small, big = (PARAMS, xs[:10], ys[:10]), (PARAMS, xs, ys)
    else:
        f = ft.vmap(ft.hessian(u))
        small, big = (xs[:10],), (xs,)
    n10, n1000 = len(_program(f, *small).eqns), len(_program(f, *big).eqns)
    assert n10 == n1000, (n10, n1000)
    assert ft.jit(f).lower(*small).eqns_after == ft.jit(f).lower(*big).eqns_after


@pytest.mark.parametrize("in_axis", [0, 1])
def test_batching_adds_no_transposes_and_keeps_matmuls_unbatched(in_axis):
    """The MLP's derivative programs, batched, hold exactly the transposes of the unbatched
    ones, and a weight against batched activations stays one matmul (no batch dimensions)."""
    x = X if in_axis == 0 else X.T
    for f in (ft.grad(u), ft.hessian(u), ft.jacrev(ft.grad(u))):
        one, batched = _program(f, X[0]), _program(ft.vmap(f, in_axes=in_axis), x)
        assert _count(batched, "transpose") == _count(one, "transpose"), str(batched)
    forward = _program(ft.vmap(u, in_axes=in_axis), x)
    dots = [e for e in forward.eqns if e.primitive.name == "dot_general"]
    assert dots and all(e.params["dimension_numbers"][1] == ((), ()) for e in dots)


def test_batch_axis_stays_put_through_shape_ops_and_reductions():
    """With the batch axis last, reductions, broadcasts, slices, pads, concatenation, flips,
    expand_dims/squeeze, reshapes and scans step around it: the batched program holds only
    the unbatched program's own transposes."""
    def f(o, x, y):
        m = o.m
        s = m.sum(x, axis=0) + m.max(x, axis=1)[:3] * y
        c = m.concatenate([m.flip(s, axis=0), o.pad_last(s[1:].T, 1, 2).T])
        e = m.squeeze(m.expand_dims(c, 0), 0)
        return m.cumsum(m.reshape(e, (2, 4, 5)), axis=1) * m.broadcast_to(y[0], (2, 4, 5))

    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((4, 3, 5, 6)), rng.standard_normal((3, 5, 6))
    g = ft.vmap(lambda a, b: f(FT, a, b), in_axes=(-1, -1), out_axes=-1)
    prog = _program(g, x, y)
    one = _program(lambda a, b: f(FT, a, b), x[..., 0], y[..., 0])
    assert _count(prog, "transpose") == _count(one, "transpose") == 2, str(prog)  # the .T's
    expected = np.stack([f(NP, x[..., k], y[..., k]) for k in range(6)], axis=-1)
    np.testing.assert_allclose(g(x, y), expected, rtol=1e-13)


def test_out_axes_that_do_not_fit_the_output_structure_name_it():
    with pytest.raises(ValueError, match=r"out_axes=\{'a': 0\} is not a tree prefix of the "
                                         r"function's output"):
        ft.vmap(lambda x: (x, x * 2.0), out_axes={"a": 0})(np.ones((3, 2)))


@pytest.mark.parametrize("in_dims,out_dims", [((0, None), 0), ((1, 0), 1), ((None, 1), -1)])
def test_batch_jaxpr_maps_a_program_to_its_batched_program(in_dims, out_dims):
    """The IR-to-IR form: batch a traced program, check it, run it, compare with numpy."""
    rng = np.random.default_rng(9)
    size, ones = 4, np.ones((2, 4))

    def prog(o, x, w):
        return p_dense(o, x, w @ ones, ones[0])[0]

    samples = [[rng.standard_normal(3), rng.standard_normal((3, 2))] for _ in range(size)]
    xs = [samples[0][i] if d is None else np.stack([s[i] for s in samples], axis=d)
          for i, d in enumerate(in_dims)]
    closed = ft.make_jaxpr(lambda x, w: prog(FT, x, w))(*samples[0])
    batched = batch_jaxpr(closed, list(in_dims), size, out_axis=out_dims, hoisted=False)[0]
    ft.check_jaxpr(batched)
    got = ft.eval_jaxpr(batched.jaxpr, batched.consts, *xs)[0]
    expected = _loop(lambda x, w: prog(NP, x, w), xs, list(in_dims), [out_dims], size)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert len(batched.jaxpr.eqns) == len(batch_jaxpr(closed, list(in_dims), 100,
                                                      out_axis=out_dims)[0].jaxpr.eqns)
