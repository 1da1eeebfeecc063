"""Algebraic simplification and forwarding of trivial equations, driven by the facts in the
primitive rows (read through `fact`).

Each rule looks at one equation (inputs already renamed) and either returns atoms standing for
its outputs, emitting replacement equations as needed, or None to leave it alone. Rules never
grow the program: a replacement is at most as many equations as it removes once the dead
producers are gone (DCE runs after). Nothing here changes an IEEE result except the sign of a
zero (x + 0 -> x) and the one reassociating rule, sum of a broadcast -> n * x, which agrees to
rounding.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import adapter_of
from functrans.core.ir import ClosedJaxpr, Literal
from functrans.transforms.toolkit.facts import (emit_binary, emit_broadcast, emit_neg, emit_reshape,
                                            fact)
from functrans.transforms.toolkit.rewrite import ProgramBuilder, params_key

_UNIFORM_MAX_SIZE = 1 << 16


class ValueFacts:
    """What is known about the values of atoms: uniform (one repeated scalar) or finite."""

    def __init__(self, builder: ProgramBuilder):
        self.b = builder
        self._uniform: dict = {}
        self._finite: dict = {}

    def uniform(self, atom):
        """The scalar every element of `atom` equals, when known at compile time; else None."""
        if type(atom) is Literal:
            return atom.val
        if atom in self._uniform:
            return self._uniform[atom]
        self._uniform[atom] = u = self._compute_uniform(atom)
        return u

    def _compute_uniform(self, atom):
        val = self.b.concrete(atom)
        if val is not None and adapter_of(val) is not None:
            return None  # a dask or CuPy constant: known only by computing or copying it
        if val is not None:
            arr = np.asarray(val)
            if arr.size == 0 or arr.size > _UNIFORM_MAX_SIZE:
                return None
            first = arr.flat[0]
            return first if arr.size == 1 or bool(np.all(arr == first)) else None
        eqn = self.b.producer.get(atom)
        if eqn is None or not eqn.invars:
            return None
        if fact(eqn.primitive, "moves_elements"):
            return self.uniform(eqn.invars[0])
        if fact(eqn.primitive, "converts_dtype"):
            u = self.uniform(eqn.invars[0])
            if u is None:
                return None
            with np.errstate(all="ignore"):
                return np.asarray(u).astype(atom.aval.dtype)[()]
        return None

    def finite(self, atom) -> bool:
        """True when every element of `atom` is provably finite (never inf or nan)."""
        if not np.issubdtype(atom.aval.dtype, np.inexact):
            return True
        if type(atom) is Literal:
            return bool(np.isfinite(atom.val))
        if atom in self._finite:
            return self._finite[atom]
        self._finite[atom] = False  # cycles cannot happen in SSA, but be safe
        self._finite[atom] = f = self._compute_finite(atom)
        return f

    def _compute_finite(self, atom) -> bool:
        val = self.b.concrete(atom)
        if val is not None:
            return bool(np.all(np.isfinite(val)))
        eqn = self.b.producer.get(atom)
        if eqn is None or not eqn.invars:
            return False
        src = eqn.invars[0]
        if fact(eqn.primitive, "moves_elements"):
            return self.finite(src)
        if fact(eqn.primitive, "converts_dtype"):
            out = atom.aval.dtype
            if src.aval.dtype == np.bool_:
                return True
            if np.issubdtype(src.aval.dtype, np.integer):
                return np.finfo(out).max >= np.iinfo(src.aval.dtype).max
            return self.finite(src) and np.finfo(out).max >= np.finfo(src.aval.dtype).max
        return False


def _equals(u, e) -> bool:
    try:
        return bool(np.asarray(u) == e)
    except (TypeError, ValueError):
        return False


def _single_out(eqn):
    return None if eqn.primitive.multiple_results else eqn.outvars[0]


# --- rules -----------------------------------------------------------------------------------

def rule_noop(b, vf, eqn, ins):
    """op(x) with parameters that make it the identity map (reshape to the same shape, ...)."""
    out = _single_out(eqn)
    if out is None or len(ins) != 1 or ins[0].aval != out.aval:
        return None
    noop = fact(eqn.primitive, "noop")
    if (noop is not None and noop(ins[0].aval, eqn.params)) or fact(eqn.primitive,
                                                                     "reshape_like"):
        return [ins[0]]
    return None


def rule_identity(b, vf, eqn, ins):
    """x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1  ->  x (broadcast to the output shape)."""
    e = fact(eqn.primitive, "identity")
    out = _single_out(eqn)
    if e is None or out is None or len(ins) != 2:
        return None
    for side in fact(eqn.primitive, "identity_sides", ()):
        other = ins[1 - side]
        if other.aval.dtype != out.aval.dtype:
            continue
        u = vf.uniform(ins[side])
        if u is not None and _equals(u, e):
            return [emit_broadcast(b, other, out.aval.shape)]
    return None


def rule_absorbing(b, vf, eqn, ins):
    """x * 0 -> 0, only when x is provably finite (0 * inf and 0 * nan are nan)."""
    a = fact(eqn.primitive, "absorbing")
    out = _single_out(eqn)
    if a is None or out is None or len(ins) != 2:
        return None
    for side in (0, 1):
        u = vf.uniform(ins[side])
        if u is not None and _equals(u, a) and vf.finite(ins[1 - side]):
            zero = Literal(np.zeros((), out.aval.dtype)[()], out.aval.update(shape=()))
            return [emit_broadcast(b, zero, out.aval.shape)]
    return None


def rule_involution(b, vf, eqn, ins):
    """f(f(x)) -> x for involutions (neg)."""
    out = _single_out(eqn)
    if out is None or len(ins) != 1 or not fact(eqn.primitive, "involution"):
        return None
    p = b.producer.get(ins[0])
    if p is not None and p.primitive is eqn.primitive \
            and params_key(p.params) == params_key(eqn.params) \
            and p.invars[0].aval == out.aval:
        return [p.invars[0]]
    return None


def rule_compose(b, vf, eqn, ins):
    """transpose(transpose(x, p), q) -> transpose(x, p o q), or x when that is the identity."""
    compose = fact(eqn.primitive, "compose")
    out = _single_out(eqn)
    if compose is None or out is None or len(ins) != 1:
        return None
    p = b.producer.get(ins[0])
    if p is None or p.primitive is not eqn.primitive:
        return None
    src = p.invars[0]
    params = compose(p.params, eqn.params)
    noop = fact(eqn.primitive, "noop")
    if noop is not None and noop(src.aval, params) and src.aval == out.aval:
        return [src]
    return [b.emit(eqn.primitive, [src], params)]


def rule_reshape_chain(b, vf, eqn, ins):
    """reshape(reshape(x)) (also squeeze / expand_dims) -> one reshape of x, or x."""
    out = _single_out(eqn)
    if out is None or len(ins) != 1 or not fact(eqn.primitive, "reshape_like"):
        return None
    p = b.producer.get(ins[0])
    if p is None or not fact(p.primitive, "reshape_like"):
        return None
    return [emit_reshape(b, p.invars[0], out.aval.shape)]


def rule_sum_of_broadcast(b, vf, eqn, ins):
    """Summing only axes a broadcast created: sum(broadcast(x)) -> n * broadcast'(x); a sum
    over size-1 axes -> a reshape.

    Exact when n == 1; otherwise n * x replaces a sum of n copies of x (agrees to rounding)."""
    sum_axes = fact(eqn.primitive, "sum_axes")
    out = _single_out(eqn)
    if sum_axes is None or out is None or len(ins) != 1:
        return None
    axes = tuple(sum_axes(eqn.params))
    if all(ins[0].aval.shape[a] == 1 for a in axes):  # a sum of one element per output
        return [emit_reshape(b, ins[0], out.aval.shape)]
    dtype = out.aval.dtype
    if dtype == np.bool_ or not np.issubdtype(dtype, np.number):
        return None
    p = b.producer.get(ins[0])
    broadcast = None if p is None else fact(p.primitive, "broadcast")
    if broadcast is None:
        return None
    shape, bdims = broadcast(p.params)
    src = p.invars[0]
    src_of = {d: i for i, d in enumerate(bdims)}
    if any(a in src_of and src.aval.shape[src_of[a]] != 1 for a in axes):
        return None  # a real axis of x is summed: no cancellation
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return None
    summed_src = {src_of[a] for a in axes if a in src_of}
    kept_src = [i for i in range(src.aval.ndim) if i not in summed_src]
    y = emit_reshape(b, src, [src.aval.shape[i] for i in kept_src])
    kept_out = [d for d in range(len(shape)) if d not in axes]
    y = emit_broadcast(b, y, out.aval.shape, [kept_out.index(bdims[i]) for i in kept_src])
    if n != 1:
        y = emit_binary(b, "mul", y, Literal(np.asarray(n, dtype)[()],
                                             out.aval.update(shape=())))
    return [y]


def _negated(b, atom):
    p = b.producer.get(atom)
    if p is not None and fact(p.primitive, "negation"):
        return p.invars[0]
    return None


def rule_negation(b, vf, eqn, ins):
    """x + (-y) -> x - y, (-x) + y -> y - x, x - (-y) -> x + y, (-x) * (-y) -> x * y,
    x * -1 -> -x: all exact."""
    out = _single_out(eqn)
    if out is None or len(ins) != 2:
        return None
    for pos, (name, order) in fact(eqn.primitive, "neg_operand", {}).items():
        x = _negated(b, ins[pos])
        if x is not None:
            ops = list(ins)
            ops[pos] = x
            return [emit_binary(b, name, ops[order[0]], ops[order[1]])]
    if fact(eqn.primitive, "neg_cancels"):
        x, y = _negated(b, ins[0]), _negated(b, ins[1])
        if x is not None and y is not None:
            return [b.emit(eqn.primitive, [x, y], eqn.params)]
    c = fact(eqn.primitive, "neg_by")
    if c is not None:
        for side in (0, 1):
            other = ins[1 - side]
            u = vf.uniform(ins[side])
            if u is not None and _equals(u, c) and other.aval == out.aval:
                return [emit_neg(b, other)]
    return None


def rule_scalar_operand(b, vf, eqn, ins):
    """x * c where the array c holds one repeated value -> x * scalar (a literal): the same
    result bits, without reading (or keeping alive) the array."""
    out = _single_out(eqn)
    if out is None or len(ins) < 2 or not fact(eqn.primitive, "scalar_operands"):
        return None
    for i, a in enumerate(ins):
        u = None if type(a) is Literal else vf.uniform(a)
        if u is None:
            continue
        rest = [x.aval.shape for j, x in enumerate(ins) if j != i]
        if np.broadcast_shapes(*rest) != out.aval.shape:
            continue
        ops = list(ins)
        ops[i] = Literal(np.asarray(u, a.aval.dtype)[()], a.aval.update(shape=()))
        return [b.emit(eqn.primitive, ops, eqn.params)]
    return None


def rule_implicit_broadcast(b, vf, eqn, ins):
    """x * broadcast(y) -> x * y when numpy's own broadcasting of y gives the same shape: no
    broadcast materialised or read (exactly rounded ops only, so the bits are the same)."""
    out = _single_out(eqn)
    if out is None or len(ins) < 2 or not fact(eqn.primitive, "scalar_operands"):
        return None
    for i, a in enumerate(ins):
        p = b.producer.get(a) if type(a) is not Literal else None
        broadcast = None if p is None else fact(p.primitive, "broadcast")
        if broadcast is None:
            continue
        src = p.invars[0]
        shape, dims = broadcast(p.params)
        n = len(shape)
        if dims != tuple(range(n - src.aval.ndim, n)):
            continue  # not numpy's right-aligned broadcasting
        rest = [x.aval.shape for j, x in enumerate(ins) if j != i]
        if np.broadcast_shapes(src.aval.shape, *rest) != out.aval.shape:
            continue
        ops = list(ins)
        ops[i] = src
        return [b.emit(eqn.primitive, ops, eqn.params)]
    return None


FORWARDING_RULES = (rule_noop,)
ALGEBRAIC_RULES = (rule_noop, rule_identity, rule_absorbing, rule_involution, rule_compose,
                   rule_reshape_chain, rule_sum_of_broadcast, rule_negation,
                   rule_scalar_operand, rule_implicit_broadcast)


def _rewrite(closed: ClosedJaxpr, rules) -> ClosedJaxpr:
    b = ProgramBuilder(closed)
    vf = ValueFacts(b)
    for eqn in closed.jaxpr.eqns:
        ins = [b.read(a) for a in eqn.invars]
        for rule in rules:
            res = rule(b, vf, eqn, ins)
            if res is not None:
                assert [a.aval for a in res] == [v.aval for v in eqn.outvars], \
                    f"{rule.__name__} changed the type of {eqn.primitive.name}"
                b.bind_outputs(eqn, res)
                break
        else:
            b.keep(eqn, ins)
    return b.finish(closed.jaxpr.outvars) if b.changed else closed


def forward_trivial(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations that are the identity map (reshape to the same shape, transpose by the
    identity, convert to the same dtype, ...), forwarding their input."""
    return _rewrite(closed, FORWARDING_RULES)


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Algebraic simplification (identity elements, absorbing zero for finite operands,
    involutions, composed transposes and reshapes, sums of broadcasts, negations) plus
    forwarding of trivial equations."""
    return _rewrite(closed, ALGEBRAIC_RULES)
