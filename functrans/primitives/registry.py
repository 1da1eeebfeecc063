"""Declaring primitives: one call per primitive puts every rule for it in one place.

Besides its rules, a row says what the jit passes know about the primitive, in `facts` (the
passes read them through `functrans.transforms.toolkit.facts.fact(prim, key)` and never test which
primitive they hold). The keys, in FACT_KEYS:

  identity, identity_sides  op(x, e) == x for the scalar e in any listed operand position
  absorbing                 op(x, a) == a, but only when x is finite (0 * inf is nan)
  involution                op(op(x)) == x
  negation                  op(x) == -x
  noop                      (in_aval, params) -> True when this application is the identity map
  compose                   (inner_params, outer_params) -> params of the single equivalent op
  reshape_like              only changes the shape; element order (row-major) is kept
  moves_elements            each output element is a copy of some input element
  broadcast                 (params) -> (shape, broadcast_dimensions): the output is the input
                            repeated along new or size-1 axes
  sum_axes                  (params) -> the axes this op sums over
  converts_dtype            output = input converted to the output dtype, elementwise
  neg_operand               {position: (name, order)}: op with a negated operand at position ==
                            primitive `name` applied to the un-negated operands taken in `order`
  neg_cancels               op(-x, -y) == op(x, y)
  neg_by                    op(x, c) == -x when operand c is this scalar
  scalar_operands           an operand holding one repeated value may be replaced by that
                            scalar (same result bits: the op is exactly rounded per element)
  call_param                the param holding the program of a call primitive (to inline)
  fresh_result              the impl always returns new arrays sharing no memory with its
                            operands (never a view), so an operand may live in a buffer the
                            compiled program reuses
  fast_impl                 (in_avals, out_avals, params) -> (function, extra positional args,
                            keyword args) calling the backend directly, with the same result
                            bits as `impl`; None when this application needs the full impl
  fused_impl                like fast_impl, for jit's fast backend: a call whose result may
                            differ from `impl`'s in the last bits (a product in blocks that
                            round differently), within kernels.TOLERANCE
  linear_operands           for an op in props "linear": the operand positions it is linear in
                            (jointly); without it, all of them (div: the numerator only)
  contraction               (params) -> ((lhs contracting, rhs contracting), (lhs batch, rhs
                            batch)): the op is the tensor contraction dot_general computes
                            with these dimension numbers
  effectful                 the op has an effect beyond its outputs (it prints): no pass may
                            drop it, merge it with another or run it at compile time

Every identity is exact in IEEE arithmetic, except for the sign of a zero result: x + 0 -> x
keeps -0.0 where numpy gives +0.0 (the values compare equal). `props` hold the properties
several transforms read: elementwise, commutative, higher_order, linear (the transpose rule
applies: linear in the operands linear_operands names), bilinear (linear in each operand
separately, not jointly: a product, a contraction).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from functrans.core.primitive import Primitive

REGISTRY: dict[str, Primitive] = {}

# A row may state PyTorch's derivative beside JAX's where the two differ, as rule `torch_jvp`:
# in value (pow at 0, atan2 at the origin, maximum at NaN) or in what it reads (div reads its
# operands, rsqrt and relu their result: that decides where a second-order gradient with
# respect to a non-leaf tensor flows). functrans.torch differentiates with it (see
# functrans.core.primitive.derivative_convention), the functional API with `jvp`;
# docs/conventions.md lists every row that states one, with the point where the two differ.
# Where PyTorch's formula itself branches on the operand's values, a row may also state one
# branch on its own for the shim, which sees the operand when it records: `torch_zeros_jvp`
# (reduce_prod: prod_backward for an operand with a zero, which never reads the result) and
# `torch_nan_jvp` (reduce_max/min over every element of an operand with a NaN: max() and min()
# share the answer among the NaN entries, where amax and JAX give NaN).
CONVENTION_RULE_KINDS = ("torch_jvp", "torch_zeros_jvp", "torch_nan_jvp")

# A row may state how truncated Taylor series pass through it, as rule `taylor`:
# taylor(primals, series, **params) -> (primals_out, series_out), series in JAX's jet convention
# (each term a derivative coefficient). Rows without one take the generic rule that
# functrans.transforms.taylor derives from their JVP rule; a row states one where it pays (a
# program-holding row jets its program once instead of nesting JVPs of it).
TAYLOR_RULE_KINDS = ("taylor",)

FACT_KEYS = frozenset({
    "identity", "identity_sides", "absorbing", "involution", "negation", "noop", "compose",
    "reshape_like", "moves_elements", "broadcast", "sum_axes", "converts_dtype", "neg_operand",
    "neg_cancels", "neg_by", "scalar_operands", "call_param", "fast_impl", "fused_impl",
    "fresh_result", "linear_operands", "contraction", "effectful"})


def define(name: str, *, impl: Callable, abstract: Callable, jvp: Callable | None = None,
           transpose: Callable | None = None, batch: Callable | None = None,
           multiple_results: bool = False,
           props: tuple[str, ...] = (), facts: dict[str, Any] | None = None,
           torch_name: str | None = None, **rules) -> Primitive:
    """Register primitive `name` with its numpy `impl`, its shape/dtype rule `abstract`, and its
    transformation rules. `props` are properties transforms read (elementwise, linear, ...);
    `facts` what the jit passes know (the module docstring lists them); `rules` the row's
    other derivative conventions (CONVENTION_RULE_KINDS) and its Taylor rule
    (TAYLOR_RULE_KINDS)."""
    if name in REGISTRY:
        raise ValueError(f"primitive {name!r} is defined twice")
    unknown = set(facts or ()) - FACT_KEYS
    if unknown:
        raise ValueError(f"primitive {name!r}: unknown facts {sorted(unknown)}; the jit passes "
                         f"read {sorted(FACT_KEYS)} (functrans/primitives/registry.py).")
    unknown = set(rules) - set(CONVENTION_RULE_KINDS) - set(TAYLOR_RULE_KINDS)
    if unknown:
        raise ValueError(f"primitive {name!r}: unknown rule kinds {sorted(unknown)}; a row takes "
                         "jvp, transpose, batch, the derivative conventions "
                         f"{list(CONVENTION_RULE_KINDS)} and {list(TAYLOR_RULE_KINDS)} "
                         "(functrans/primitives/registry.py).")
    # where the row lives, for error messages: the module that called define (or a family helper)
    caller = sys._getframe(1)
    while caller.f_globals.get("__name__") == __name__:
        caller = caller.f_back
    where = caller.f_globals.get("__name__", "functrans.primitives")
    prim = Primitive(name, multiple_results=multiple_results, module=where)
    prim.impl = impl
    prim.abstract_eval = abstract
    for kind, rule in (("jvp", jvp), ("transpose", transpose), ("batch", batch), *rules.items()):
        if rule is not None:
            prim.rules[kind] = rule
    prim.props = frozenset(props)
    prim.facts = dict(facts or {})
    prim.torch_name = torch_name
    REGISTRY[name] = prim
    return prim

