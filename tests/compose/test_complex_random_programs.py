"""Property-based suite for complex differentiation: random programs of complex arrays.

Hypothesis builds small expression trees over complex128 arrays of broadcasting shapes (and
complex, float and real-array operands mixed in): holomorphic operations (arithmetic, powers,
exp, log, sqrt, trigonometric and hyperbolic functions), the non-holomorphic parts (conj, real,
imag, abs, angle, promoted back to complex), reductions and FFTs. Each program is a function of
a namespace `m`, so the same tree runs on numpy (the reference), functrans.numpy and jax.numpy.

Checked for every program, with z = x + iy its complex argument:
- values: eager == jit == numpy;
- grad of the real loss L = sum(Re(w f) + |f|^2 / 4) (w fixed complex weights) against central
  differences in x and in y: grad L == dL/dx - i dL/dy (JAX's convention), also under jit and
  vmap(grad) against a loop;
- jvp of f along a complex direction against the directional difference, and vjp by
  Re<c, J v> == Re<J^T c, v>;
- for holomorphic programs: grad(sum f, holomorphic=True) == f'(z), the difference quotient
  taken along the real and along the imaginary axis (which agree: Cauchy-Riemann);
- everything against JAX when installed.
Domains are kept where the operations are smooth (log and sqrt away from the negative real axis,
division and abs away from 0), as in test_random_programs.py.
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

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None

SHAPES = [(), (3,), (2, 3), (1, 3)]
EPS = 1e-6
PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])


def _away_from_cut(z) -> bool:
    # log, sqrt, arctanh...: away from the branch cut on the negative real axis and from 0
    z = np.asarray(z)
    return bool(np.all((np.real(z) > 0.2) | (np.abs(np.imag(z)) > 0.2))
                and np.all(np.abs(z) > 0.2))


def _away_from_zero(z) -> bool:
    return bool(np.all(np.abs(np.asarray(z)) > 0.3))


def _not_large(z) -> bool:
    return bool(np.all(np.abs(np.asarray(z)) < 3.0))


def _inside_disc(z) -> bool:
    return bool(np.all(np.abs(np.asarray(z)) < 0.8))


def _everywhere(*z) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class Op:
    text: str
    fn: Callable[..., Any]
    ok: Callable[..., bool] = _everywhere
    holomorphic: bool = True


UNARY = [
    Op("sin({0})", lambda m, z: m.sin(z), _not_large),
    Op("cos({0})", lambda m, z: m.cos(z), _not_large),
    Op("tanh({0})", lambda m, z: m.tanh(z), _inside_disc),
    Op("exp({0})", lambda m, z: m.exp(z), _not_large),
    Op("log({0})", lambda m, z: m.log(z), _away_from_cut),
    Op("sqrt({0})", lambda m, z: m.sqrt(z), _away_from_cut),
    Op("arctan({0})", lambda m, z: m.arctan(z), _inside_disc),
    Op("sinh({0})", lambda m, z: m.sinh(z), _not_large),
    Op("({0} ** 2)", lambda m, z: z ** 2, _not_large),
    Op("({0} ** 3)", lambda m, z: z ** 3, _not_large),
    Op("(-{0})", lambda m, z: -z),
    Op("(1 / {0})", lambda m, z: 1 / z, _away_from_zero),
    Op("conj({0})", lambda m, z: m.conj(z), holomorphic=False),
    Op("real({0})", lambda m, z: m.real(z) + 0j, holomorphic=False),
    Op("imag({0})", lambda m, z: m.imag(z) * 1j, holomorphic=False),
    Op("abs({0})", lambda m, z: m.abs(z) + 0j, _away_from_zero, holomorphic=False),
    Op("angle({0})", lambda m, z: m.angle(z) + 0j, _away_from_cut, holomorphic=False),
    Op("fft({0})", lambda m, z: m.fft.fft(z), lambda z: np.ndim(z) > 0),
    Op("ifft({0}, norm='ortho')", lambda m, z: m.fft.ifft(z, norm="ortho"),
       lambda z: np.ndim(z) > 0),
]

BINARY = [
    Op("({0} + {1})", lambda m, a, b: a + b),
    Op("({0} - {1})", lambda m, a, b: a - b),
    Op("({0} * {1})", lambda m, a, b: a * b, lambda a, b: _not_large(a * b)),
    Op("({0} / {1})", lambda m, a, b: a / b, lambda a, b: _away_from_zero(b)),
]

REDUCTIONS = ["sum", "mean", "prod"]


@dataclasses.dataclass(frozen=True)
class Node:
    fn: Callable[[Any, tuple], Any]
    value: Any
    text: str
    holomorphic: bool = True


def _leaf(i, value):
    return Node(lambda m, args: args[i], value, f"z{i}")


@st.composite
def trees(draw, leaves, depth):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(leaves))
    kind = draw(st.sampled_from(["unary", "binary", "reduce", "constant"]))
    a = draw(trees(leaves, depth - 1))
    if kind == "unary":
        op = draw(st.sampled_from(UNARY))
        if not op.ok(a.value):
            return a
        value = op.fn(np, a.value)
        return Node(lambda m, args, a=a, op=op: op.fn(m, a.fn(m, args)), value,
                    op.text.format(a.text), a.holomorphic and op.holomorphic)
    if kind == "binary":
        op = draw(st.sampled_from(BINARY))
        b = draw(trees(leaves, depth - 1))
        try:
            np.broadcast_shapes(np.shape(a.value), np.shape(b.value))
        except ValueError:
            return a
        if not op.ok(a.value, b.value):
            return a
        value = op.fn(np, a.value, b.value)
        return Node(lambda m, args, a=a, b=b, op=op: op.fn(m, a.fn(m, args), b.fn(m, args)),
                    value, op.text.format(a.text, b.text), a.holomorphic and b.holomorphic)
    if kind == "reduce":
        name = draw(st.sampled_from(REDUCTIONS))
        if np.ndim(a.value) == 0 or (name == "prod" and not _not_large(np.prod(a.value))):
            return a
        value = getattr(np, name)(a.value, axis=-1)
        return Node(lambda m, args, a=a, n=name: getattr(m, n)(a.fn(m, args), axis=-1), value,
                    f"{name}({a.text}, axis=-1)", a.holomorphic)
    # a captured complex constant or a Python complex scalar on either side
    c = complex(draw(st.sampled_from([0.5 - 1j, 2j, -1.5 + 0.25j])))
    value = a.value * c
    return Node(lambda m, args, a=a, c=c: a.fn(m, args) * c, value, f"({a.text} * {c})",
                a.holomorphic)


@dataclasses.dataclass(frozen=True)
class Program:
    args: tuple
    out: Node

    def run(self, m, *args):
        return self.out.fn(m, args)

    def __repr__(self):
        return f"Program({self.out.text}; args {self.args})"


@st.composite
def programs(draw):
    n = draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = tuple(rng.uniform(-1.5, 1.5, s) + 1j * rng.uniform(-1.5, 1.5, s)
                 for s in (draw(st.sampled_from(SHAPES)) for _ in range(n)))
    leaves = [_leaf(i, a) for i, a in enumerate(args)]
    out = draw(trees(leaves, 3))
    hypothesis.assume(np.all(np.isfinite(out.value)) and _not_large(out.value / 10))
    return Program(args, out)


def _loss(m, prog, weights):
    def loss(*args):
        f = prog.run(m, *args)
        return m.sum(m.real(weights * f) + m.abs(f) ** 2 / 4)
    return loss


def _weights(prog):
    shape = np.shape(prog.out.value)
    rng = np.random.default_rng(7)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _central_grad(f, args, i):
    """dL/dx - i dL/dy of a real function L at args[i], by central differences."""
    z = np.array(args[i], dtype=complex)
    g = np.zeros(z.shape, complex)
    for idx in np.ndindex(z.shape):
        for step, unit in ((EPS, 1.0), (EPS * 1j, -1j)):
            zp, zm = z.copy(), z.copy()
            zp[idx] += step
            zm[idx] -= step
            lp = f(*args[:i], zp, *args[i + 1:])
            lm = f(*args[:i], zm, *args[i + 1:])
            g[idx] += unit * (lp - lm) / (2 * EPS)
    return g


def _close(a, b, tol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b)))
                                                               if b.size else 1.0))


@settings(**PROPERTY)
@given(programs())
def test_values_match_numpy_eager_and_jit(prog):
    want = prog.run(np, *prog.args)
    _close(prog.run(fnp, *prog.args), want, 1e-12)
    _close(ft.jit(lambda *a: prog.run(fnp, *a))(*prog.args), want, 1e-12)


@settings(**PROPERTY)
@given(programs())
def test_grad_of_real_loss_is_df_dx_minus_i_df_dy(prog):
    w = _weights(prog)
    loss_np, loss_ft = _loss(np, prog, w), _loss(fnp, prog, w)
    argnums = tuple(range(len(prog.args)))
    grads = ft.grad(loss_ft, argnums=argnums)(*prog.args)
    for i, g in enumerate(grads):
        _close(g, _central_grad(loss_np, prog.args, i), 1e-5)
    for g, h in zip(ft.jit(ft.grad(loss_ft, argnums=argnums))(*prog.args), grads):
        _close(g, h, 1e-12)
    # vmap of grad over a stack of first arguments equals the loop
    stack = np.stack([prog.args[0], 2 * prog.args[0]])
    rest = prog.args[1:]
    per = ft.vmap(ft.grad(lambda z, *r: loss_ft(z, *r)), in_axes=(0,) + (None,) * len(rest))
    try:
        want = [ft.grad(loss_ft)(s, *rest) for s in stack]
    except (FloatingPointError, ValueError):
        return
    _close(per(stack, *rest), np.stack(want), 1e-12)
    if jax is not None:
        got_jax = jax.grad(_loss(jnp, prog, w), argnums=argnums)(*prog.args)
        for g, h in zip(grads, got_jax):
            _close(g, h, 1e-10)


@settings(**PROPERTY)
@given(programs())
def test_jvp_and_vjp_with_complex_directions(prog):
    rng = np.random.default_rng(1)
    v = tuple(rng.standard_normal(np.shape(a)) + 1j * rng.standard_normal(np.shape(a))
              for a in prog.args)
    f_ft = lambda *a: prog.run(fnp, *a)
    out, t_out = ft.jvp(f_ft, prog.args, v)
    shifted = [prog.run(np, *(a + s * EPS * d for a, d in zip(prog.args, v))) for s in (1, -1)]
    _close(t_out, (shifted[0] - shifted[1]) / (2 * EPS), 1e-5)
    c = rng.standard_normal(np.shape(out)) + 1j * rng.standard_normal(np.shape(out))
    _, f_vjp = ft.vjp(f_ft, *prog.args)
    cts = f_vjp(c)
    lhs = np.real(np.sum(c * t_out))
    rhs = sum(np.real(np.sum(ct * d)) for ct, d in zip(cts, v))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), (lhs, rhs)
    if jax is not None:
        _, t_jax = jax.jvp(lambda *a: prog.run(jnp, *a), prog.args, v)
        _close(t_out, t_jax, 1e-10)
        for ct, ct_jax in zip(cts, jax.vjp(lambda *a: prog.run(jnp, *a), *prog.args)[1](c)):
            _close(ct, ct_jax, 1e-10)


@settings(**PROPERTY)
@given(programs())
def test_holomorphic_grad_is_the_complex_derivative(prog):
    hypothesis.assume(prog.out.holomorphic)
    f_np = lambda *a: np.sum(prog.run(np, *a))
    g = ft.grad(lambda *a: fnp.sum(prog.run(fnp, *a)), holomorphic=True)(*prog.args)
    z = np.array(prog.args[0], complex)
    rest = prog.args[1:]
    for idx in np.ndindex(z.shape):
        for step in (EPS, EPS * 1j):   # Cauchy-Riemann: the same quotient along both axes
            zp, zm = z.copy(), z.copy()
            zp[idx] += step
            zm[idx] -= step
            quotient = (f_np(zp, *rest) - f_np(zm, *rest)) / (2 * step)
            _close(np.asarray(g)[idx], quotient, 1e-5)
    if jax is not None:
        _close(g, jax.grad(lambda *a: jnp.sum(prog.run(jnp, *a)), holomorphic=True)(*prog.args),
               1e-10)
