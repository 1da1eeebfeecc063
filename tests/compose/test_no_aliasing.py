"""No array a transform returns shares memory with an argument, a tangent or cotangent, a
captured constant or another returned array, and each can be written into: numpy arrays are
mutable, so `g = jit(grad(f))(w, x); g *= -0.1` must not change `x` (issue 14).

Identity-like programs (simplified by jit to an input, a constant or one value returned twice;
views of an input) and ordinary ones run through every transform, eagerly and jitted;
`check_owned` asserts `not np.shares_memory` between every result and every source and every
other result, and that writing into the results leaves the sources unchanged.
"""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.flatten_util import ravel_pytree
from functrans.test_util import check_owned

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((2, 3))
C = RNG.standard_normal((2, 3))   # captured by closure: a constant of every traced program

# f(x, w) -> a pytree of arrays shaped like x (each is differentiable in both arguments)
PROGRAMS = {
    "identity": lambda x, w: x,
    "add_zero": lambda x, w: x + 0.0,
    "zero_add": lambda x, w: 0.0 + w,
    "mul_one": lambda x, w: x * 1.0,
    "neg_neg": lambda x, w: -(-x),
    "astype_same": lambda x, w: x.astype(x.dtype),
    "div_one": lambda x, w: x / 1.0,
    "reshape_view": lambda x, w: fnp.reshape(fnp.reshape(x, (-1,)), x.shape),
    "transpose_twice": lambda x, w: fnp.transpose(fnp.transpose(x)),
    "view_pair": lambda x, w: (x, fnp.reshape(x, (-1,))),
    "returned_twice": lambda x, w: (x, x),
    "cse_pair": lambda x, w: (x * w, x * w),
    "fresh_and_view": lambda x, w: (x * w, fnp.transpose(x * w)),
    "constant": lambda x, w: (x * w, C),
    "constant_plus_zero": lambda x, w: C + 0.0 * x,
    "slice": lambda x, w: (x[0], w[1:]),
    "ordinary": lambda x, w: fnp.sin(x) * w + C,
    "dict": lambda x, w: {"a": x, "b": fnp.tanh(w), "c": [x, w]},
}

# scalar-valued g(x, w): for grad, value_and_grad, hessian
SCALARS = {
    "sum_wx": lambda x, w: fnp.sum(w * x),          # d/dw is x itself
    "sum_x": lambda x, w: fnp.sum(x),               # d/dx is ones, d/dw zeros
    "half_square": lambda x, w: 0.5 * fnp.sum(x * x),
    "sum_c": lambda x, w: fnp.sum(C * x),           # d/dx is the constant
    "ordinary": lambda x, w: fnp.sum(fnp.sin(x * w)),
}


def owned(results, *sources):
    check_owned(results, [X, W, C, *sources])


def fresh_inputs():
    return X.copy(), W.copy()


def test_the_reproducer():
    w, x = fresh_inputs()
    x0 = x.copy()
    g = ft.jit(ft.grad(lambda w, x: fnp.sum(w * x)))(w, x)
    g *= -0.1
    np.testing.assert_array_equal(x, x0)
    for f in [lambda x: x + 0.0, lambda x: x * 1.0, lambda x: -(-x),
              lambda x: x.astype(x.dtype)]:
        y = ft.jit(f)(x)
        y *= 3.0
        np.testing.assert_array_equal(x, x0)
    value, g = ft.value_and_grad(lambda w, x: fnp.sum(w * x), argnums=1)(w, x)
    check_owned((value, g), [w, x])
    value, g = ft.jit(ft.value_and_grad(lambda w, x: fnp.sum(w * x)))(w, x)
    check_owned((value, g), [w, x])


# --- programs returning arrays ------------------------------------------------------------

def _sources_of(x, w):
    return [x, w]


TRANSFORMS = {
    "jit": lambda f: ft.jit(f),
    "jit_twice": lambda f: ft.jit(ft.jit(f)),
    "make_jaxpr_call": lambda f: lambda x, w: ft.make_jaxpr(f)(x, w)(x, w),
    "vmap": lambda f: lambda x, w: ft.vmap(f)(x, w),
    "vmap_unmapped": lambda f: lambda x, w: ft.vmap(f, in_axes=(0, None))(x, w),
    "jit_vmap": lambda f: ft.jit(ft.vmap(f)),
    "checkpoint": lambda f: ft.checkpoint(f),
    "jit_checkpoint": lambda f: ft.jit(ft.checkpoint(f)),
    "cond": lambda f: lambda x, w: lax.cond(True, f, f, x, w),
    "jit_cond": lambda f: ft.jit(lambda x, w: lax.cond(x[0, 0] > 100.0, f, f, x, w)),
    "switch": lambda f: lambda x, w: lax.switch(1, [f, f], x, w),
    "scan_carry": lambda f: lambda x, w: lax.scan(lambda c, _: (c, f(*c)), (x, w), None,
                                                  length=2),
    "scan_empty": lambda f: lambda x, w: lax.scan(lambda c, _: (c, f(*c)), (x, w), None,
                                                  length=0),
    "jit_scan": lambda f: ft.jit(lambda x, w: lax.scan(lambda c, _: (c, f(*c)), (x, w),
                                                       None, length=2)),
    "scan_xs": lambda f: lambda x, w: lax.scan(lambda c, xs: (c, f(*xs)), 0.0,
                                               (x[None], w[None])),
    "lax_map": lambda f: lambda x, w: lax.map(lambda xw: f(*xw), (x[None], w[None])),
    "while_passthrough": lambda f: lambda x, w: lax.while_loop(
        lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1], f(c[1], w)), (0, x, f(x, w))),
    "while_zero_trips": lambda f: lambda x, w: lax.while_loop(lambda c: False, lambda c: c,
                                                              (x, w, f(x, w))),
    "fori": lambda f: lambda x, w: lax.fori_loop(0, 2, lambda i, c: c, (x, w, f(x, w))),
    "jit_fori": lambda f: ft.jit(lambda x, w: lax.fori_loop(0, 3, lambda i, c: c,
                                                            (x, w, f(x, w)))),
}


# With no transform active, checkpoint(f) and custom_jvp/custom_vjp functions run f as it is
# written (nothing is traced): their results are unaliased from the arguments, and a constant
# f returns is f's own result, as in a plain call of f.
PLAIN_CALLS = {"checkpoint"}


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("program", PROGRAMS)
def test_results_are_owned(program, transform):
    x, w = fresh_inputs()
    out = TRANSFORMS[transform](PROGRAMS[program])(x, w)
    if transform in PLAIN_CALLS:
        check_owned(out, [x, w])
    else:
        owned(out, x, w)


@pytest.mark.parametrize("program", PROGRAMS)
def test_jvp_and_linearize(program):
    f = PROGRAMS[program]
    x, w = fresh_inputs()
    tx, tw = np.ones_like(x), np.full_like(w, 2.0)
    owned(ft.jvp(f, (x, w), (tx, tw)), x, w, tx, tw)
    owned(ft.jit(lambda *a: ft.jvp(f, a[:2], a[2:]))(x, w, tx, tw), x, w, tx, tw)
    out, f_jvp = ft.linearize(f, x, w)
    owned(out, x, w)
    owned((out, f_jvp(tx, tw)), x, w, tx, tw)
    owned(f_jvp(tx, tw), x, w, tx, tw, out)  # a second call: fresh again


@pytest.mark.parametrize("program", PROGRAMS)
def test_vjp(program):
    f = PROGRAMS[program]
    x, w = fresh_inputs()
    out, f_vjp = ft.vjp(f, x, w)
    owned(out, x, w)
    ct = ft.tree_util.tree_map(lambda o: np.full(np.shape(o), 0.5), out)
    owned(f_vjp(ct), x, w, out, ct)
    owned(f_vjp(ct), x, w, out, ct)
    jitted = ft.jit(lambda x, w, ct: ft.vjp(f, x, w)[1](ct))
    owned(jitted(x, w, ct), x, w, ct)


@pytest.mark.parametrize("program", PROGRAMS)
def test_jacobians(program):
    f = PROGRAMS[program]
    x, w = fresh_inputs()
    owned(ft.jacfwd(f, argnums=(0, 1))(x, w), x, w)
    owned(ft.jacrev(f, argnums=(0, 1))(x, w), x, w)
    owned(ft.jit(ft.jacrev(f))(x, w), x, w)


@pytest.mark.parametrize("program", PROGRAMS)
def test_custom_rules(program):
    f = PROGRAMS[program]
    x, w = fresh_inputs()

    cj = ft.custom_jvp(f)
    cj.defjvp(lambda primals, tangents: (f(*primals), ft.jvp(f, primals, tangents)[1]))
    cv = ft.custom_vjp(f)
    cv.defvjp(lambda x, w: (f(x, w), (x, w)), lambda res, g: ft.vjp(f, *res)[1](g))
    for fn in (cj, cv):
        check_owned(fn(x, w), [x, w])  # a plain call (see PLAIN_CALLS)
        owned(ft.jit(fn)(x, w), x, w)
        out, f_vjp = ft.vjp(fn, x, w)
        ct = ft.tree_util.tree_map(lambda o: np.full(np.shape(o), 0.5), out)
        owned(out, x, w)
        owned(f_vjp(ct), x, w, ct)
    tx, tw = np.ones_like(x), np.ones_like(w)
    owned(ft.jvp(cj, (x, w), (tx, tw)), x, w, tx, tw)


# --- scalar functions: gradients and second derivatives -----------------------------------

GRADS = {
    "grad": lambda g: ft.grad(g, argnums=(0, 1)),
    "jit_grad": lambda g: ft.jit(ft.grad(g, argnums=(0, 1))),
    "grad_jit": lambda g: ft.grad(ft.jit(g), argnums=(0, 1)),
    "value_and_grad": lambda g: ft.value_and_grad(g, argnums=(0, 1)),
    "jit_value_and_grad": lambda g: ft.jit(ft.value_and_grad(g, argnums=(0, 1))),
    "grad_has_aux": lambda g: ft.grad(lambda x, w: (g(x, w), (x, w, C)), argnums=(0, 1),
                                      has_aux=True),
    "jit_grad_has_aux": lambda g: ft.jit(ft.grad(lambda x, w: (g(x, w), (x, w)),
                                                 argnums=(0, 1), has_aux=True)),
    "vmap_grad": lambda g: ft.vmap(ft.grad(g, argnums=(0, 1))),
    "grad_checkpoint": lambda g: ft.grad(ft.checkpoint(g), argnums=(0, 1)),
    "grad_cond": lambda g: ft.grad(lambda x, w: lax.cond(True, g, g, x, w), argnums=(0, 1)),
    "hessian": lambda g: ft.hessian(g, argnums=(0, 1)),
    "jit_hessian": lambda g: ft.jit(ft.hessian(g)),
    "hessian_diag": lambda g: ft.hessian_diag(g),
    "laplacian": lambda g: ft.laplacian(g),
    "value_grad_and_laplacian": lambda g: ft.value_grad_and_laplacian(g, argnums=(0, 1)),
    "value_grad_and_hessian_diag": lambda g: ft.value_grad_and_hessian_diag(g),
    "jit_value_grad_and_laplacian": lambda g: ft.jit(ft.value_grad_and_laplacian(g)),
}


@pytest.mark.parametrize("transform", GRADS)
@pytest.mark.parametrize("scalar", SCALARS)
def test_gradients_are_owned(scalar, transform):
    x, w = fresh_inputs()
    owned(GRADS[transform](SCALARS[scalar])(x, w), x, w)


def test_divergence_and_zero_gradients_are_writable():
    x, w = fresh_inputs()
    owned(ft.divergence(lambda x: 0.0 * x)(x), x)
    g = ft.grad(lambda x, w: fnp.sum(w), argnums=(0, 1))(x, w)  # zeros for x, ones for w
    owned(g, x, w)
    gx, gw = g
    gx[...] = 1.0
    gw *= 2.0
    owned(ft.jvp(lambda x: x.astype(np.int64), (x,), (x,)), x)  # an integer output's tangent


# --- captured constants -------------------------------------------------------------------

def test_make_jaxpr_consts_are_copies():
    x, w = fresh_inputs()
    closed = ft.make_jaxpr(lambda x: x * C + C[0])(x)
    assert closed.consts
    check_owned(closed.consts, [C, x])
    closed.consts[0][...] = 0.0
    np.testing.assert_array_equal(C, X * 0 + C)  # C unchanged


def test_jit_constant_output_is_copied_each_call():
    f = ft.jit(lambda x: (C, fnp.reshape(C, (3, 2)), C[0]))
    first = f(X)
    owned(first)
    first[0][...] = 0.0
    second = f(X)
    np.testing.assert_array_equal(second[0], C)
    owned(second, *first)


# --- loops: a carry passed through is the caller's own at the end, not copied per trip -----

def test_loop_body_passes_carries_through_without_copies():
    from functrans.transforms.toolkit.codegen import generate_source
    body = ft.make_jaxpr(lambda i, c: (c[0], c[1] * 2.0))(0, (X, W))
    loop_src, _, _ = generate_source(body, may_return_inputs=True)
    call_src, _, _ = generate_source(body)
    assert "return [a1," in loop_src.replace("\n", " ")   # the carry as it is, in the loop
    assert "return [a1," not in call_src.replace("\n", " ")
    x, w = fresh_inputs()
    owned(lax.fori_loop(0, 5, lambda i, c: (c[0], c[1] * 2.0), (x, w)), x, w)


def test_fresh_outputs_are_returned_untouched():
    # no copy and no run-time test for outputs that are new arrays
    src = ft.jit(lambda x, w: (fnp.sin(x) * w, fnp.sum(x))).lower(X, W).source
    assert "return [v" in src and "(v" not in src.split("return")[1]


# --- eager functrans.numpy: computed results are new arrays, as numpy's -------------------

A = np.arange(6.0).reshape(2, 3)
I = np.arange(6).reshape(2, 3)
B = np.array([True, False, True])

EAGER = {  # numpy returns a new array for each of these
    "positive": lambda m: m.positive(A),
    "abs_bool": lambda m: m.abs(B),
    "floor_int": lambda m: m.floor(I),
    "ceil_int": lambda m: m.ceil(I),
    "trunc_int": lambda m: m.trunc(I),
    "round_int": lambda m: m.round(I),
    "clip_unbounded": lambda m: m.clip(A, None, None),
    "nan_to_num_int": lambda m: m.nan_to_num(I),
    "sum_no_axes": lambda m: m.sum(A, axis=()),
    "prod_no_axes": lambda m: m.prod(A, axis=()),
    "max_no_axes": lambda m: m.max(A, axis=()),
    "min_no_axes": lambda m: m.amin(A, axis=()),
    "all_no_axes": lambda m: m.all(B, axis=()),
    "any_no_axes": lambda m: m.any(B, axis=()),
    "cumsum_0d": lambda m: m.cumsum(A[0, 0], axis=0) if m is fnp else np.cumsum(A[0, :1]),
    "concatenate_one": lambda m: m.concatenate([A]),
    "stack_one": lambda m: m.stack([A]),
    "hstack_one": lambda m: m.hstack([A]),
    "vstack_one": lambda m: m.vstack([A[0]]),
    "tile_one": lambda m: m.tile(A, 1),
    "tile": lambda m: m.tile(A, (2, 1)),
    "repeat_one": lambda m: m.repeat(A, 1, axis=0),
    "repeat": lambda m: m.repeat(A, 2, axis=0),
    "roll_zero": lambda m: m.roll(A, 0),
    "pad_zero": lambda m: m.pad(A, 0),
    "meshgrid": lambda m: m.meshgrid(A[0], A[1]),
    "meshgrid_one": lambda m: m.meshgrid(A[0]),
    "astype_same": lambda m: A.astype(A.dtype) if m is np else fnp.astype(A, A.dtype),
    "add_zero": lambda m: m.add(A, 0.0),
    "multiply_one": lambda m: m.multiply(A, 1.0),
    "array": lambda m: m.array(A),
}


@pytest.mark.parametrize("case", EAGER)
def test_eager_numpy_results_are_new_arrays(case):
    expected = EAGER[case](np)
    assert not any(np.shares_memory(e, s) for e in ft.tree_util.tree_leaves(expected)
                   for s in (A, I, B))  # numpy's own results are new here
    got = EAGER[case](fnp)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    check_owned(got, [A, I, B])


def test_eager_numpy_views_stay_views_as_numpy_does():
    # numpy's view-returning functions may return views; functrans.numpy follows numpy
    for name in ("reshape", "transpose", "ravel", "squeeze", "expand_dims", "asarray"):
        args = {"reshape": (A, (3, 2)), "expand_dims": (A, 0)}.get(name, (A,))
        assert np.shares_memory(getattr(np, name)(*args), A)
        assert np.shares_memory(getattr(fnp, name)(*args), A)


# --- flatten_util and optimizers ----------------------------------------------------------

def test_unravel_returns_copies():
    tree = {"w": X.copy(), "b": W[0].copy()}
    flat, unravel = ravel_pytree(tree)
    check_owned(flat, [tree["w"], tree["b"]])
    rebuilt = unravel(flat)
    check_owned(rebuilt, [flat, tree["w"], tree["b"]])


def test_optimizer_updates_and_states_are_owned():
    params = {"w": X.copy(), "b": W[0].copy()}
    grads = {"w": W.copy(), "b": X[0].copy()}
    for opt in (ft.optimizers.sgd(0.1), ft.optimizers.sgd(0.1, momentum=0.9),
                ft.optimizers.sgd(0.1, momentum=0.9, nesterov=True), ft.optimizers.adam(0.1)):
        state = opt.init(params)
        check_owned(state, [params, grads])
        updates, new_state = opt.update(grads, state, params)
        check_owned((updates, new_state), [params, grads, state])
        check_owned(ft.optimizers.apply_updates(params, updates), [params, updates])
