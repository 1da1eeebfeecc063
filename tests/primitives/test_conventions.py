"""Every derivative convention the table states: for each row with a PyTorch rule beside its
JAX one (`torch_jvp`, or a branch of PyTorch's formula such as `torch_nan_jvp`;
functrans/primitives/registry.py CONVENTION_RULE_KINDS), both
derivatives at the point where they differ, against closed forms (the values below, each
derived in its comment and recorded from jax 0.10 and torch 2.13), and against live JAX and
PyTorch where they are installed. docs/conventions.md lists the same table.

A few rows' PyTorch rules give the same values everywhere and differ in what they read (the
operands or the result), which decides where a second derivative flows under create_graph;
those are listed apart, each with the primitive its PyTorch rule reads that JAX's does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import functrans as ft
from functrans.core.primitive import derivative_convention
from functrans.primitives import activations as A
from functrans.primitives import binary_math as B
from functrans.primitives import elementwise as E
from functrans.primitives import norms as N
from functrans.primitives import reductions as R
from functrans.primitives.registry import CONVENTION_RULE_KINDS, REGISTRY

nan, inf = math.nan, math.inf
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@dataclass
class Convention:
    row: str                   # the primitive whose row states both rules
    point: str                 # where they differ
    fn: Callable               # fn(*arrays) with the primitive in it
    args: tuple
    jax: tuple                 # d sum(fn) / d args under JAX's rule (the row's jvp)
    torch: tuple               # ... under PyTorch's (the row's torch_jvp)
    jax_ref: Callable | None   # (jax, jnp) -> the same function in JAX
    torch_ref: Callable | None  # torch -> the same function in PyTorch
    convention: str = "torch"  # the rule kind (less _jvp) PyTorch's derivative is the row's
    live_jax: tuple | None = None  # JAX's own, where the row's jvp departs from it (see below)

    def __str__(self):
        return f"{self.row}@{self.point}"


def _sum_of_squares_root(x):
    return E.norm_sqrt(R.reduce_sum(E.mul(x, x), (0,)))


CONVENTIONS = [
    # |x|: JAX takes +1 at 0 (select(x >= 0, t, -t)), PyTorch sgn(x) = 0
    Convention("abs", "x=0", E.abs, (0.0,), (1.0,), (0.0,),
               lambda jax, jnp: jnp.abs, lambda torch: torch.abs),
    # relu: JAX passes t where x > 0 (0 at NaN); PyTorch's threshold_backward zeroes where the
    # result is <= 0, and NaN <= 0 is false, so t passes
    Convention("relu", "x=nan", E.relu, (nan,), (0.0,), (1.0,),
               lambda jax, jnp: jax.nn.relu, lambda torch: torch.relu),
    # leaky_relu at 0: jax.nn.leaky_relu takes the x branch (x >= 0), PyTorch the slope's
    Convention("leaky_relu", "x=0", lambda x: E.leaky_relu_p.bind(x, slope=0.1), (0.0,),
               (1.0,), (0.1,), lambda jax, jnp: lambda x: jax.nn.leaky_relu(x, 0.1),
               lambda torch: lambda x: torch.nn.functional.leaky_relu(x, 0.1)),
    # hard_tanh at a bound: jax.nn.hard_tanh passes t on [-1, 1], PyTorch on (-1, 1)
    Convention("hard_tanh", "x=1", lambda x: E.hard_tanh_p.bind(x, lo=-1.0, hi=1.0), (1.0,),
               (1.0,), (0.0,), lambda jax, jnp: jax.nn.hard_tanh,
               lambda torch: torch.nn.functional.hardtanh),
    Convention("hard_tanh", "x=-1", lambda x: E.hard_tanh_p.bind(x, lo=-1.0, hi=1.0), (-1.0,),
               (1.0,), (0.0,), lambda jax, jnp: jax.nn.hard_tanh,
               lambda torch: torch.nn.functional.hardtanh),
    # rsqrt: JAX -0.5 y / x = -0.5 (-inf) / (-0.0) = -inf; PyTorch -0.5 y^3 = +inf
    Convention("rsqrt", "x=-0.0", E.rsqrt, (-0.0,), (-inf,), (inf,),
               lambda jax, jnp: jax.lax.rsqrt, lambda torch: torch.rsqrt),
    # |x|_2 = sqrt(sum x^2) at x = 0: JAX 0.5/0 * 2x = inf * 0 = nan; PyTorch's norm_backward 0
    Convention("norm_sqrt", "norm=0", _sum_of_squares_root, ([0.0, 0.0],), ([nan, nan],),
               ([0.0, 0.0],), lambda jax, jnp: jnp.linalg.norm,
               lambda torch: torch.linalg.vector_norm),
    # (at 0^0 both rules give 0, 0: functrans departs from JAX's d/dx = 0 * 0^-1 = nan, see
    # tests/primitives/test_elementwise.py)
    # 0^-1: d/dy = log(1) * inf = nan in JAX; PyTorch inf * log(0) = -inf
    Convention("pow", "x=0,y=-1", E.pow, (0.0, -1.0), (-inf, nan), (-inf, -inf),
               lambda jax, jnp: lambda x, y: x ** y, lambda torch: lambda x, y: x ** y),
    # maximum at a NaN operand: JAX gives t where an operand equals the (NaN) result, so 0 to
    # both; PyTorch 0 only to the operand that loses, and at NaN neither does
    Convention("max", "x=nan", E.max, (nan, 1.0), (0.0, 0.0), (1.0, 1.0),
               lambda jax, jnp: jnp.maximum, lambda torch: torch.maximum),
    Convention("min", "x=nan", E.min, (nan, 1.0), (0.0, 0.0), (1.0, 1.0),
               lambda jax, jnp: jnp.minimum, lambda torch: torch.minimum),
    # atan2(x, y) at the origin: y/(x^2 + y^2) = 0/0 in JAX; PyTorch takes 1/(x^2 + y^2) as 0
    Convention("atan2", "x=0,y=0", E.atan2, (0.0, 0.0), (nan, nan), (0.0, -0.0),
               lambda jax, jnp: jnp.arctan2, lambda torch: torch.atan2),
    # prod with a NaN and no zero: JAX's product rule d/dx0 = x1 x2 = 6; PyTorch prod / x,
    # NaN for every entry
    Convention("reduce_prod", "x=[nan,2,3]", lambda x: R.reduce_prod(x, (0,)),
               ([nan, 2.0, 3.0],), ([6.0, nan, nan],), ([nan, nan, nan],),
               lambda jax, jnp: jnp.prod, lambda torch: torch.prod),
    # cumprod with an infinite entry and no zero: JAX's product rule d/dx1 = x0 = 2; PyTorch's
    # cumprod_backward reversed_cumsum(y * t) / x, inf / inf = NaN
    Convention("cumprod", "x=[2,inf]", lambda x: R.cumprod(x, 0), ([2.0, inf],), ([inf, 2.0],),
               ([inf, nan],), lambda jax, jnp: jnp.cumprod,
               lambda torch: lambda x: torch.cumprod(x, 0)),
    # clamp at x == lo: JAX's lax.clamp passes t to x on lo < x < hi only; PyTorch on
    # lo <= x <= hi
    Convention("clamp", "x=lo", E.clamp, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0),
               lambda jax, jnp: lambda x, lo, hi: jax.lax.clamp(lo, x, hi),
               lambda torch: torch.clamp),
    Convention("clamp", "x=hi", E.clamp, (1.0, 0.0, 1.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0),
               lambda jax, jnp: lambda x, lo, hi: jax.lax.clamp(lo, x, hi),
               lambda torch: torch.clamp),
    # lo > hi: the value is hi; JAX passes t to hi only where hi < x, PyTorch also where hi < lo
    Convention("clamp", "x<hi<lo", E.clamp, (-2.0, 1.0, -1.0), (0.0, 0.0, 0.0),
               (0.0, 0.0, 1.0), lambda jax, jnp: lambda x, lo, hi: jax.lax.clamp(lo, x, hi),
               lambda torch: torch.clamp),
    Convention("clamp_min", "x=lo", E.clamp_min, (0.5, 0.5), (0.0, 0.0), (1.0, 0.0),
               lambda jax, jnp: lambda x, lo: jax.lax.clamp(lo, x, jnp.inf),
               lambda torch: lambda x, lo: torch.clamp(x, min=lo)),
    Convention("clamp_max", "x=hi", E.clamp_max, (0.5, 0.5), (0.0, 0.0), (1.0, 0.0),
               lambda jax, jnp: lambda x, hi: jax.lax.clamp(-jnp.inf, x, hi),
               lambda torch: lambda x, hi: torch.clamp(x, max=hi)),
    # the 3-norm of zeros: JAX's |x|^2 sign(x) y^-2 = 0 * inf = nan; PyTorch's norm_backward
    # masks a zero norm to 0
    Convention("p_norm", "p=3,x=0", lambda x: N.p_norm(x, 3.0, (0,)), ([0.0, 0.0],),
               ([nan, nan],), ([0.0, 0.0],),
               lambda jax, jnp: lambda x: jnp.linalg.norm(x, ord=3),
               lambda torch: lambda x: torch.linalg.vector_norm(x, 3)),
    # p < 1 at a zero entry: JAX's |x|^(p-1) = inf (abs's derivative +1 at 0); PyTorch 0
    Convention("p_norm", "p=0.5,x0=0", lambda x: N.p_norm(x, 0.5, (0,)), ([0.0, 1.0],),
               ([inf, 1.0],), ([0.0, 1.0],),
               lambda jax, jnp: lambda x: jnp.linalg.norm(x, ord=0.5),
               lambda torch: lambda x: torch.linalg.vector_norm(x, 0.5)),
    # p = 1 (torch.cdist's): JAX's abs derivative select(x >= 0, t, -t), -1 at NaN; PyTorch's
    # cdist_backward sign(x), NaN at NaN and 0 at 0
    Convention("p_norm", "p=1,x=[nan,0]", lambda x: N.p_norm(x, 1.0, (0,)), ([nan, 0.0],),
               ([-1.0, 1.0],), ([nan, 0.0],),
               lambda jax, jnp: lambda x: jnp.linalg.norm(x, ord=1),
               lambda torch: lambda x: torch.cdist(x.reshape(1, 2), torch.zeros_like(x)[None], 1)),
    # logsumexp where the sum rounds away: y = log(2 e^a) rounds to a at a = 1e17. JAX's
    # softmax gives 1/2 each; PyTorch's exp(x - y) 1 each
    Convention("logsumexp", "x=[1e17,1e17]", lambda x: R.logsumexp(x, (0,)), ([1e17, 1e17],),
               ([0.5, 0.5],), ([1.0, 1.0],), lambda jax, jnp: jax.nn.logsumexp,
               lambda torch: lambda x: torch.logsumexp(x, 0)),
    # elu at NaN: JAX's where(x > 0, ...) takes the lower branch, alpha exp(NaN); PyTorch's
    # elu_backward tests x <= 0, false at NaN, and passes scale * t
    Convention("elu", "x=nan", A.elu, (nan,), (nan,), (1.0,), lambda jax, jnp: jax.nn.elu,
               lambda torch: torch.nn.functional.elu),
    Convention("elu", "selu,x=nan", lambda x: A.elu(x, SELU_ALPHA, SELU_SCALE), (nan,), (nan,),
               (SELU_SCALE,), lambda jax, jnp: jax.nn.selu, lambda torch: torch.selu),
    # max() and min() over every element with NaN entries: JAX's mask x == ans is all false,
    # sum(t L) / sum(L) = 0 / 0; PyTorch's evenly_distribute_backward shares t among the NaN
    # entries (its amax and amin give NaN, as JAX does: the shim takes this rule for max()
    # and min() of an operand with a NaN only)
    Convention("reduce_max", "all,x=[nan,1,nan]", lambda x: R.reduce_max(x, (0,)),
               ([nan, 1.0, nan],), ([nan, nan, nan],), ([0.5, 0.0, 0.5],),
               lambda jax, jnp: jnp.max, lambda torch: torch.max, "torch_nan"),
    Convention("reduce_min", "all,x=[nan,1,nan]", lambda x: R.reduce_min(x, (0,)),
               ([nan, 1.0, nan],), ([nan, nan, nan],), ([0.5, 0.0, 0.5],),
               lambda jax, jnp: jnp.min, lambda torch: torch.min, "torch_nan"),
    # hard_swish at NaN: JAX's x relu6(x + 3) / 6 gives NaN; PyTorch's hardswish_backward
    # passes t (NaN fails both of its tests, x <= -3 and x < 3)
    Convention("hard_swish", "x=nan", A.hard_swish, (nan,), (nan,), (1.0,),
               lambda jax, jnp: jax.nn.hard_swish, lambda torch: torch.nn.functional.hardswish),
    # xlogy at x = 0: the row's rule takes y as 1 where y is not positive and finite (0 and 0;
    # JAX's log(y) and x / y give -inf or inf, and nan). PyTorch's xlogy_backward: log(y) in x,
    # masked to 0 where x == 0 and y <= 0 only, and x / y in y (at x = 0, y < 0 the first
    # derivatives agree, the second do not: SECOND_BINARY)
    Convention("xlogy", "x=0,y=0", B.xlogy, (0.0, 0.0), (0.0, 0.0), (0.0, nan),
               lambda jax, jnp: jax.scipy.special.xlogy, lambda torch: torch.xlogy,
               live_jax=(-inf, nan)),
    Convention("xlogy", "x=0,y=inf", B.xlogy, (0.0, inf), (0.0, 0.0), (inf, 0.0),
               lambda jax, jnp: jax.scipy.special.xlogy, lambda torch: torch.xlogy,
               live_jax=(inf, 0.0)),
    # logaddexp where the max is infinite: the row's rule is max's (1/2 each at a tie; JAX 0.10
    # gives 1 and 1 at +inf, nan at -inf); PyTorch's 1 / (1 + exp(y - x)) meets inf - inf
    Convention("logaddexp", "x=y=inf", B.logaddexp, (inf, inf), (0.5, 0.5), (nan, nan),
               lambda jax, jnp: jnp.logaddexp, lambda torch: torch.logaddexp,
               live_jax=(1.0, 1.0)),
    Convention("logaddexp", "x=y=-inf", B.logaddexp, (-inf, -inf), (0.5, 0.5), (nan, nan),
               lambda jax, jnp: jnp.logaddexp, lambda torch: torch.logaddexp,
               live_jax=(nan, nan)),
    # hypot at the origin: the row gives abs's derivative to the operand picked as the larger
    # (x at a tie; JAX's max and min split it, 1/2 each); PyTorch's x / hypot is 0 / 0
    Convention("hypot", "x=y=0", B.hypot, (0.0, 0.0), (1.0, 0.0), (nan, nan),
               lambda jax, jnp: jnp.hypot, lambda torch: torch.hypot, live_jax=(0.5, 0.5)),
    # beside an infinite operand: nan to both under the row's rule (as JAX); PyTorch's
    # y / hypot = 1 / inf = 0
    Convention("hypot", "x=inf,y=1", B.hypot, (inf, 1.0), (nan, nan), (nan, 0.0),
               lambda jax, jnp: jnp.hypot, lambda torch: torch.hypot),
    # fmax and fmin on a tie: JAX's x > y (x < y) gives it wholly to y, PyTorch's x >= y to x
    Convention("fmax", "x=y", B.fmax, (1.0, 1.0), (0.0, 1.0), (1.0, 0.0),
               lambda jax, jnp: jnp.fmax, lambda torch: torch.fmax),
    Convention("fmin", "x=y", B.fmin, (1.0, 1.0), (0.0, 1.0), (1.0, 0.0),
               lambda jax, jnp: jnp.fmin, lambda torch: torch.fmin),
    # copysign in x: JAX's abs derivative (+1 at 0, -1 at NaN) times the sign taken; PyTorch's
    # result / x, masked to 0 at x = 0 (NaN at NaN). Zero in y under both
    Convention("copysign", "x=0", B.copysign, (0.0, 1.0), (1.0, 0.0), (0.0, 0.0),
               lambda jax, jnp: jnp.copysign, lambda torch: torch.copysign),
    Convention("copysign", "x=nan", B.copysign, (nan, 1.0), (-1.0, 0.0), (nan, 0.0),
               lambda jax, jnp: jnp.copysign, lambda torch: torch.copysign),
]

# rows whose PyTorch rule gives JAX's values and reads what PyTorch's formula reads: the
# primitive that appears in the PyTorch rule's derivative program only, and a point
READS = [
    # div: d(x/y)/dy = -x/y^2 from the operands (x/y computed again), not -out/y
    ("div", E.div, (3.0, 2.0), "div"),
    # integer_pow x^1: PyTorch's n x^(n-1) even for n == 1, so x^0 keeps x in the derivative
    ("integer_pow", lambda x: E.integer_pow(x, 1), (2.0,), "integer_pow"),
    # logistic: PyTorch's derivative is its own op, sigmoid_backward(t, y)
    ("logistic", E.logistic, (0.3,), "logistic_backward"),
    # softplus: PyTorch's softplus_backward computes z / (z + 1), z = exp(beta x), where JAX's
    # rule takes sigmoid(beta x)
    ("softplus", lambda x: A.softplus(x, 2.0, 20.0), (0.3,), "div"),
]


# PyTorch's elu_double_backward tests x < 0, so at 0 its second derivative is 0; JAX's
# (jax.nn.elu and selu) is the lower branch's, alpha scale exp(0)
SECOND = [
    ("elu", A.elu, 0.0, 1.0, 0.0, lambda jax: jax.nn.elu, lambda torch: torch.nn.functional.elu),
    ("elu", lambda x: A.elu(x, SELU_ALPHA, SELU_SCALE), 0.0, SELU_ALPHA * SELU_SCALE, 0.0,
     lambda jax: jax.nn.selu, lambda torch: torch.selu),
]


def _dtype(a):
    return np.complex128 if isinstance(a, complex) else np.float64


def _grads(fn, args, convention):
    args = [np.asarray(a, _dtype(a)) for a in args]

    def total(*xs):
        out = fn(*xs)
        return R.reduce_sum(out, tuple(range(np.ndim(out))))

    grad = ft.grad(total, argnums=tuple(range(len(args))))
    with np.errstate(all="ignore"):  # the points are where derivatives meet 0/0 and 1/0
        if convention is None:
            return grad(*args)
        with derivative_convention(convention):
            return grad(*args)


def _same(got, want):
    """Equal values, NaN equal to NaN, and the same sign of zero."""
    for g, w in zip(got, want):
        if isinstance(w, complex):  # computed by different complex arithmetic: to rounding
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-14)
            continue
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        np.testing.assert_array_equal(g, w)
        zeros = w == 0
        assert np.array_equal(np.signbit(g[zeros]), np.signbit(w[zeros])), (g, w)


def test_every_convention_is_listed():
    stated = {n for n, p in REGISTRY.items() if any(k in p.rules for k in CONVENTION_RULE_KINDS)}
    listed = {c.row for c in CONVENTIONS} | {r[0] for r in READS}
    assert stated == listed, (f"rows with a PyTorch rule but no entry here: {stated - listed}; "
                              f"entries without a rule: {listed - stated}")


@pytest.mark.parametrize("c", CONVENTIONS, ids=str)
def test_both_derivatives_at_the_convention_point(c):
    jax_rule, torch_rule = _grads(c.fn, c.args, None), _grads(c.fn, c.args, c.convention)
    _same(jax_rule, c.jax)
    _same(torch_rule, c.torch)
    assert not all(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
                   for a, b in zip(c.jax, c.torch)), "the point must be one where they differ"


@pytest.mark.parametrize("c", CONVENTIONS, ids=str)
def test_jax_gives_the_recorded_derivative(c):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        f = c.jax_ref(jax, jnp)
        args = [jnp.asarray(a, _dtype(a)) for a in c.args]
        grads = jax.grad(lambda *xs: jnp.sum(f(*xs)), argnums=tuple(range(len(args))))(*args)
        _same([np.asarray(g) for g in grads], c.jax if c.live_jax is None else c.live_jax)


@pytest.mark.parametrize("c", CONVENTIONS, ids=str)
def test_torch_gives_the_recorded_derivative(c):
    torch = pytest.importorskip("torch")
    args = [torch.tensor(a, dtype=torch.complex128 if isinstance(a, complex) else torch.float64,
                         requires_grad=True) for a in c.args]
    grads = torch.autograd.grad(c.torch_ref(torch)(*args).sum(), args)
    # a complex leaf's .grad is the conjugate of the derivative recorded (PyTorch's convention)
    _same([np.conj(g.detach().numpy()) if g.is_complex() else g.detach().numpy()
           for g in grads], c.torch)


@pytest.mark.parametrize("row,fn,args,reads", READS, ids=[r[0] for r in READS])
def test_rules_that_differ_in_what_they_read(row, fn, args, reads):
    args = tuple(np.asarray(a, np.float64) for a in args)
    assert _grads(fn, args, None) == pytest.approx(_grads(fn, args, "torch"), rel=1e-15)

    def derivative_program(convention):
        def jvp(*xs):
            return ft.jvp(fn, xs, tuple(np.ones_like(x) for x in xs))[1]
        if convention is None:
            return ft.make_jaxpr(jvp)(*args)
        with derivative_convention(convention):
            return ft.make_jaxpr(jvp)(*args)

    def count(closed):
        return sum(e.primitive.name == reads for e in closed.jaxpr.eqns)

    assert count(derivative_program("torch")) > count(derivative_program(None)), \
        f"{row}: PyTorch's rule should read {reads} where JAX's does not"


def _second(fn, x, convention):
    with np.errstate(all="ignore"):
        if convention is None:
            return ft.grad(ft.grad(fn))(np.float64(x))
        with derivative_convention(convention):
            return ft.grad(ft.grad(fn))(np.float64(x))


@pytest.mark.parametrize("row,fn,x,jax_d2,torch_d2,jax_ref,torch_ref", SECOND,
                         ids=[f"{s[0]}-{k}" for k, s in enumerate(SECOND)])
def test_second_derivatives_that_differ(row, fn, x, jax_d2, torch_d2, jax_ref, torch_ref):
    assert _second(fn, x, None) == pytest.approx(jax_d2, rel=1e-15)
    assert _second(fn, x, "torch") == torch_d2
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        assert float(jax.grad(jax.grad(jax_ref(jax)))(x)) == pytest.approx(jax_d2, rel=1e-15)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(torch_ref(torch)(t), t, create_graph=True)
    assert torch.autograd.grad(g, t)[0].item() == torch_d2


# second derivatives of the binary rows, d/d(x, y) of each first derivative: (row, fn, args,
# under the row's jvp (JAX's at these points), under PyTorch's rule), and the functions in JAX
# and PyTorch. PyTorch's are what its double backward gives, recorded from torch 2.13 (None:
# the first derivative does not depend on that operand, as xlogy's log(y) on x; a row of None:
# the first derivative is a constant)
SECOND_BINARY = [
    ("xlogy", B.xlogy, (1.0, 2.0), [[0.0, 0.5], [0.5, -0.25]], [[None, 0.5], [0.5, -0.25]],
     lambda jax: jax.scipy.special.xlogy, lambda torch: torch.xlogy),
    ("xlogy", B.xlogy, (0.0, -1.0), None, [[None, -0.0], [-1.0, -0.0]], None,
     lambda torch: torch.xlogy),
    ("logaddexp", B.logaddexp, (1.0, 2.0),
     [[0.19661193324148185, -0.19661193324148185], [-0.19661193324148188, 0.19661193324148185]],
     [[0.19661193324148185, -0.19661193324148185], [-0.19661193324148188, 0.19661193324148188]],
     lambda jax: jax.numpy.logaddexp, lambda torch: torch.logaddexp),
    ("logaddexp", B.logaddexp, (inf, 1.0), None, [[0.0, -0.0], [nan, nan]], None,
     lambda torch: torch.logaddexp),
    ("hypot", B.hypot, (3.0, 4.0), [[0.128, -0.096], [-0.096, 0.07200000000000001]],
     [[0.128, -0.096], [-0.096, 0.07200000000000001]], lambda jax: jax.numpy.hypot,
     lambda torch: torch.hypot),
    # at x = y the row's second derivatives are exact (JAX's: 0, from max's and min's split)
    ("hypot", B.hypot, (1.0, 1.0),
     [[0.3535533905932738, -0.3535533905932737], [-0.3535533905932737, 0.3535533905932738]],
     [[0.3535533905932738, -0.3535533905932737], [-0.3535533905932737, 0.3535533905932738]],
     None, lambda torch: torch.hypot),
    ("hypot", B.hypot, (0.0, 0.0), [[0.0, 0.0], [0.0, 0.0]], [[nan, nan], [nan, nan]], None,
     lambda torch: torch.hypot),
    # copysign: PyTorch's derivative in y is a constant zero tensor (no second derivative, the
    # row None); its derivative in x reads the result, so depends on y (a zero second
    # derivative, where the row's jvp has none to give), and meets 0 / 0 at x = 0
    ("copysign", B.copysign, (2.0, -1.0), [[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], None],
     lambda jax: jax.numpy.copysign, lambda torch: torch.copysign),
    ("copysign", B.copysign, (0.0, 1.0), [[0.0, 0.0], [0.0, 0.0]], [[nan, 0.0], None],
     lambda jax: jax.numpy.copysign, lambda torch: torch.copysign),
]


def _hessian(fn, args):
    with np.errstate(all="ignore"):
        rows = ft.jacfwd(ft.grad(fn, argnums=(0, 1)), argnums=(0, 1))(*map(np.float64, args))
    return [[float(v) for v in row] for row in rows]


def _double_backward(lib, fn, args):
    """Each first derivative (a graph built with create_graph) differentiated again."""
    xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in args]
    with np.errstate(all="ignore"):
        firsts = lib.autograd.grad(fn(*xs), xs, create_graph=True)
        return [[None if v is None else float(v)
                 for v in lib.autograd.grad(g, xs, retain_graph=True, allow_unused=True)]
                if g.requires_grad else None for g in firsts]


def _same_rows(got, want):
    for g, w in zip(got, want):
        if w is None or g is None:
            assert g is w, (got, want)
            continue
        assert [v is None for v in g] == [v is None for v in w], (got, want)
        _same([v for v in g if v is not None], [v for v in w if v is not None])


@pytest.mark.parametrize("row,fn,args,jax_d2,torch_d2,jax_ref,torch_ref", SECOND_BINARY,
                         ids=[f"{s[0]}-{s[2]}" for s in SECOND_BINARY])
def test_second_derivatives_of_binary_rows(row, fn, args, jax_d2, torch_d2, jax_ref, torch_ref):
    import functrans.torch as fttorch
    if jax_d2 is not None:
        _same_rows(_hessian(fn, args), jax_d2)
    # PyTorch's rule as the shim applies it: its node's double backward
    _same_rows(_double_backward(fttorch, torch_ref(fttorch), args), torch_d2)
    jax = pytest.importorskip("jax")
    if jax_ref is not None:
        with jax.enable_x64(True):
            rows = jax.hessian(jax_ref(jax), argnums=(0, 1))(*map(np.float64, args))
            np.testing.assert_allclose(np.asarray(rows, np.float64), np.asarray(jax_d2),
                                       rtol=1e-14)
    torch = pytest.importorskip("torch")
    _same_rows(_double_backward(torch, torch_ref(torch), args), torch_d2)
