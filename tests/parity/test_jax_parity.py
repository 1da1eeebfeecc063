"""Parity with JAX: values of grad, jvp, vjp, jacfwd, jacrev and hessian of the same programs
agree with JAX's to 1e-10 relative in float64. Skipped when jax is not installed.

Each program is written once against a numpy-like namespace `m` (functrans.numpy or
jax.numpy) and a scipy.special-like namespace `sp`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jsp = pytest.importorskip("jax.scipy.special")

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
import functrans.scipy.special as fsp  # noqa: E402

RTOL = 1e-10
rng = np.random.default_rng(2024)
A23 = rng.standard_normal((2, 3))
A33 = rng.standard_normal((3, 3)) / 2
B3 = rng.standard_normal(3) / 2
X3 = np.array([0.31, 1.17, 0.74])           # distinct, positive: max/sort/abs are smooth
Y3 = np.array([0.52, -0.43, 1.36])
M23 = np.array([[0.45, -0.8, 1.1], [0.25, 0.9, -0.35]])


@dataclasses.dataclass
class Prog:
    name: str
    fn: Callable          # fn(m, sp, *args) -> array
    args: tuple

    def bind(self, m, sp):
        return lambda *a: self.fn(m, sp, *a)


PROGRAMS = [
    Prog("gauss_sin", lambda m, sp, x: m.sin(x) * m.exp(-x * x / 2), (X3,)),
    Prog("mlp", lambda m, sp, x: m.tanh(A33 @ x + B3) * x, (X3,)),
    Prog("softplus", lambda m, sp, x: m.log1p(m.exp(x - 0.5)), (X3,)),
    Prog("rational", lambda m, sp, x, y: x / (1.0 + y * y), (X3, Y3)),
    Prog("where", lambda m, sp, x: m.where(x > 0.5, x * x, m.sin(x)), (X3,)),
    Prog("power", lambda m, sp, x: m.power(x + 1.0, 2.5) - m.sqrt(x), (X3,)),
    Prog("abs_square", lambda m, sp, x: m.abs(x - 0.6) * m.square(x), (X3,)),
    Prog("arctan2_hypot", lambda m, sp, x, y: m.arctan2(x, y) + m.hypot(x, y), (X3, Y3)),
    Prog("max_min", lambda m, sp, x, y: m.maximum(x, y) * m.minimum(x, 0.8), (X3, Y3)),
    Prog("cumsum", lambda m, sp, x: m.cumsum(x * x) * x, (X3,)),
    Prog("cumprod", lambda m, sp, x: m.cumprod(x + 0.5), (X3,)),
    Prog("prod_max", lambda m, sp, x: m.prod(x) * x + m.max(x), (X3,)),
    Prog("std_var", lambda m, sp, x: m.std(x) * x + m.var(x * x), (X3,)),
    Prog("mean_axis", lambda m, sp, a: m.mean(m.sin(a), axis=0) * m.sum(a, axis=1)[0],
         (M23,)),
    Prog("einsum", lambda m, sp, a, x: m.tanh(m.einsum("ij,j->i", a, x)), (M23, X3)),
    Prog("outer_trace", lambda m, sp, x: m.outer(x, m.sin(x)).sum(axis=0) + m.trace(
        m.outer(x, x)), (X3,)),
    Prog("dot_vdot", lambda m, sp, x, y: m.dot(x, y) * x + m.vdot(x, x), (X3, Y3)),
    Prog("matmul_mat", lambda m, sp, a: (a @ A33 @ a.T).reshape(-1), (M23,)),
    Prog("reshape_transpose", lambda m, sp, a: m.transpose(m.reshape(a * a, (3, 2))) @ X3,
         (M23,)),
    Prog("concat_stack", lambda m, sp, x: m.concatenate([x, m.sin(x)]) * m.stack(
        [x, x * x]).reshape(-1), (X3,)),
    Prog("swapaxes", lambda m, sp, a: m.swapaxes(m.exp(a), 0, 1).reshape(-1) * 2.0, (M23,)),
    Prog("fancy_index", lambda m, sp, x: x[np.array([0, 2, 2, 1])] * x[1], (X3,)),
    Prog("slices", lambda m, sp, x: x[1:] * x[:-1] + x[::-1][:2], (X3,)),
    Prog("roll_flip", lambda m, sp, x: m.roll(x, 1) * m.flip(x) * x, (X3,)),
    Prog("tile_repeat", lambda m, sp, x: m.tile(x, 2) * m.repeat(x, 2), (X3,)),
    Prog("norm", lambda m, sp, x: m.linalg.norm(x) * x + m.linalg.norm(A33 * x), (X3,)),
    Prog("logsumexp", lambda m, sp, a: sp.logsumexp(a, axis=1) * 2.0, (M23,)),
    Prog("softmax", lambda m, sp, x: sp.softmax(x * 3.0) * x, (X3,)),
    Prog("expit_logit", lambda m, sp, x: sp.expit(x - 0.7) + sp.logit(x / 2.0), (X3,)),
    Prog("clip", lambda m, sp, x: m.clip(x, 0.5, 1.0) * x, (X3,)),
    Prog("hyperbolic", lambda m, sp, x: m.sinh(x) * m.cosh(x / 2) + m.arcsinh(x), (X3,)),
    Prog("logs", lambda m, sp, x: m.log10(x) + m.log2(x + 1) * m.exp2(x) + m.expm1(x), (X3,)),
    Prog("broadcast_div", lambda m, sp, a, x: (a / (1.0 + x * x)).reshape(-1), (M23, X3)),
    Prog("keepdims", lambda m, sp, a: (a - m.mean(a, axis=1, keepdims=True)).reshape(-1) *
         m.sum(a * a, keepdims=True).reshape(-1), (M23,)),
    Prog("reciprocal_tan", lambda m, sp, x: m.reciprocal(x + 1.0) + m.tan(x / 2), (X3,)),
    Prog("tensordot", lambda m, sp, a, x: m.tensordot(a, m.outer(x, x), axes=1).reshape(-1),
         (M23, X3)),
    Prog("arcs", lambda m, sp, x: m.arcsin(x / 2) * m.arccos(x / 3) + m.arctan(x), (X3,)),
    Prog("poly_ops", lambda m, sp, x: x ** 3 - 2.0 * x ** 2 + 1.0 / x, (X3,)),
]

NAMES = [p.name for p in PROGRAMS]


def both(prog):
    """The program as functrans and as JAX functions, or a skip if functrans lacks an op."""
    f_ft, f_jax = prog.bind(fnp, fsp), prog.bind(jnp, jsp)
    try:
        f_ft(*prog.args)
    except (AttributeError, NotImplementedError, TypeError) as e:
        pytest.skip(f"functrans lacks an operation of {prog.name}: {e}")
    return f_ft, f_jax


def scalar(f, m):
    """A scalar of f's output with curvature of its own, for grad and hessian."""
    return lambda *a: m.sum(m.sin(f(*a)) * (1.0 + m.arange(np.size(f(*a))).reshape(
        np.shape(f(*a))) / 10.0))


def assert_tree_close(ours, theirs, what):
    ours_l, ours_t = ft.tree_util.tree_flatten(ours)
    theirs_l = jax.tree_util.tree_leaves(theirs)
    assert len(ours_l) == len(theirs_l), what
    for a, b in zip(ours_l, theirs_l):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, (what, a.shape, b.shape)
        scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale * 1e-2, err_msg=what)


def tangents_like(args, seed):
    r = np.random.default_rng(seed)
    return tuple(r.standard_normal(np.shape(a)) for a in args)


@functools.lru_cache(maxsize=None)
def jax_reference(name):
    """Every quantity JAX computes for one program, in one jitted call (JAX's op-by-op
    dispatch of a Hessian takes seconds; one compile per program is far cheaper)."""
    prog = next(p for p in PROGRAMS if p.name == name)
    f = prog.bind(jnp, jsp)
    argnums = tuple(range(len(prog.args)))
    ts = tangents_like(prog.args, 1)
    ct = np.random.default_rng(2).standard_normal(np.shape(f(*prog.args)))

    @jax.jit
    def refs(*args):
        _, f_vjp = jax.vjp(f, *args)
        return {"value": f(*args),
                "grad": jax.grad(scalar(f, jnp), argnums=argnums)(*args),
                "jvp": jax.jvp(f, args, ts),
                "vjp": f_vjp(ct),
                "jacfwd": jax.jacfwd(f, argnums=argnums)(*args),
                "jacrev": jax.jacrev(f, argnums=argnums)(*args),
                "hessian": jax.hessian(scalar(f, jnp))(*args)}

    return refs(*prog.args), ts, ct


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_values(prog):
    f_ft, _ = both(prog)
    assert_tree_close(f_ft(*prog.args), jax_reference(prog.name)[0]["value"], "value")


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_grad(prog):
    f_ft, _ = both(prog)
    argnums = tuple(range(len(prog.args)))
    ours = ft.grad(scalar(f_ft, fnp), argnums=argnums)(*prog.args)
    assert_tree_close(ours, jax_reference(prog.name)[0]["grad"], "grad")


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_jvp(prog):
    f_ft, _ = both(prog)
    refs, ts, _ = jax_reference(prog.name)
    assert_tree_close(ft.jvp(f_ft, prog.args, ts), refs["jvp"], "jvp")


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_vjp(prog):
    f_ft, _ = both(prog)
    refs, _, ct = jax_reference(prog.name)
    _, f_vjp = ft.vjp(f_ft, *prog.args)
    assert_tree_close(f_vjp(ct), refs["vjp"], "vjp")


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_jacfwd_and_jacrev(prog):
    f_ft, _ = both(prog)
    refs = jax_reference(prog.name)[0]
    argnums = tuple(range(len(prog.args)))
    assert_tree_close(ft.jacfwd(f_ft, argnums=argnums)(*prog.args), refs["jacfwd"], "jacfwd")
    assert_tree_close(ft.jacrev(f_ft, argnums=argnums)(*prog.args), refs["jacrev"], "jacrev")


@pytest.mark.parametrize("prog", PROGRAMS, ids=NAMES)
def test_hessian(prog):
    f_ft, _ = both(prog)
    ours = ft.hessian(scalar(f_ft, fnp))(*prog.args)
    assert_tree_close(ours, jax_reference(prog.name)[0]["hessian"], "hessian")


def test_there_are_at_least_30_programs_and_few_are_skipped():
    runnable = 0
    for prog in PROGRAMS:
        try:
            prog.bind(fnp, fsp)(*prog.args)
            runnable += 1
        except (AttributeError, NotImplementedError, TypeError):
            pass
    assert runnable >= 30, runnable


def test_nested_grad_equation_counts_do_not_exceed_jax():
    f_ft = lambda x: fnp.sin(x) * fnp.exp(-x * x / 2)
    f_jax = lambda x: jnp.sin(x) * jnp.exp(-x * x / 2)
    for n in range(1, 5):
        f_ft, f_jax = ft.grad(f_ft), jax.grad(f_jax)
        assert len(ft.make_jaxpr(f_ft)(1.0).eqns) <= len(jax.make_jaxpr(f_jax)(1.0).eqns)
        np.testing.assert_allclose(f_ft(0.7), f_jax(0.7), rtol=RTOL)


def test_grad_programs_have_jaxs_equations():
    """make_jaxpr(grad(f)) has JAX's equations, one for one (add_any is our add)."""
    f_ft = ft.grad(lambda x: fnp.sin(x) * fnp.exp(x) * x)
    f_jax = jax.grad(lambda x: jnp.sin(x) * jnp.exp(x) * x)
    ours = [e.primitive.name for e in ft.make_jaxpr(f_ft)(1.0).eqns]
    theirs = [e.primitive.name.replace("add_any", "add") for e in
              jax.make_jaxpr(f_jax)(1.0).eqns]
    assert ours == theirs


def _pytree_fn(m):
    def f(p, x):
        y = m.tanh(p["w"] @ x + p["b"][0]) * p["b"][1]
        return m.sum(y * y), {"y": y, "n": 2}
    return f


def y_and_loss(f, p, x):
    """(vector output, scalar aux) from f's (loss, {"y": ...}) pair."""
    loss, aux = f(p, x)
    return aux["y"], loss


P = {"w": A23, "b": (np.array([0.1, -0.2]), 1.3)}


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_pytree_arguments_argnums_and_has_aux_like_jax(argnums):
    f_ft, f_jax = _pytree_fn(fnp), _pytree_fn(jnp)
    loss_jax = lambda p, x: f_jax(p, x)[0]
    vec_jax = lambda p, x: y_and_loss(f_jax, p, x)

    @jax.jit  # one compile instead of seconds of op-by-op dispatch
    def theirs(p, x):
        return {"grad": jax.grad(f_jax, argnums=argnums, has_aux=True)(p, x),
                "vg": jax.value_and_grad(f_jax, argnums=argnums, has_aux=True)(p, x),
                "jacfwd": jax.jacfwd(vec_jax, argnums=argnums, has_aux=True)(p, x),
                "jacrev": jax.jacrev(vec_jax, argnums=argnums, has_aux=True)(p, x),
                "hessian": jax.hessian(loss_jax, argnums=argnums)(p, x)}

    ref = theirs(P, X3)
    g, aux = ft.grad(f_ft, argnums=argnums, has_aux=True)(P, X3)
    assert_tree_close((g, aux), ref["grad"], "grad")
    assert ft.tree_util.tree_structure(g) == ft.tree_util.tree_structure(
        jax.tree_util.tree_map(np.asarray, ref["grad"][0]))
    assert aux["n"] == 2
    assert_tree_close(ft.value_and_grad(f_ft, argnums=argnums, has_aux=True)(P, X3),
                      ref["vg"], "value_and_grad")
    for jac in (ft.jacfwd, ft.jacrev):
        ours = jac(lambda p, x: y_and_loss(f_ft, p, x), argnums=argnums, has_aux=True)(P, X3)
        assert_tree_close(ours, ref[jac.__name__], jac.__name__)
    h = ft.hessian(lambda p, x: f_ft(p, x)[0], argnums=argnums)(P, X3)
    assert_tree_close(h, ref["hessian"], "hessian")


def test_vjp_of_pytrees_with_aux_like_jax():
    f_ft, f_jax = _pytree_fn(fnp), _pytree_fn(jnp)
    y, f_vjp, aux = ft.vjp(lambda p: y_and_loss(f_ft, p, X3), P, has_aux=True)
    yj, j_vjp, auxj = jax.vjp(lambda p: y_and_loss(f_jax, p, X3), P, has_aux=True)
    ct = np.array([0.7, -1.1])
    assert_tree_close((y, aux, f_vjp(ct)), (yj, auxj, j_vjp(ct)), "vjp")
