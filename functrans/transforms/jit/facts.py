"""What the jit passes know about primitives, keyed by primitive name, read through `fact`.

These are data, not code paths: a pass asks `fact(eqn.primitive, "identity")` and never tests
which primitive it holds. They belong in the rows of functrans/primitives eventually (as props
or rule entries); until then this one table says, per primitive:

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
  fast_impl                 (in_avals, out_avals, params) -> (function, extra positional args,
                            keyword args) calling the backend directly, exactly as `impl` does;
                            None when this application needs the full impl

Every identity here is exact in IEEE arithmetic, except for the sign of a zero result:
x + 0 -> x keeps -0.0 where numpy gives +0.0 (the values compare equal).
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp


def _is_identity_perm(perm):
    return tuple(perm) == tuple(range(len(perm)))


def _compose_transpose(inner, outer):
    p, q = inner["permutation"], outer["permutation"]
    return {"permutation": tuple(p[i] for i in q)}


def _backend_call(name):
    def fast(in_avals, out_avals, params):
        return getattr(xp, name), (), {}
    return fast


def _fast_div(in_avals, out_avals, params):
    if np.issubdtype(out_avals[0].dtype, np.inexact):  # ints use the truncating impl
        return xp.divide, (), {}
    return None


def _fast_reduce_sum(in_avals, out_avals, params):
    return xp.sum, (), {"axis": params["axes"], "dtype": in_avals[0].dtype}


def _fast_reshape(in_avals, out_avals, params):
    return xp.reshape, (params["new_sizes"],), {}


def _fast_transpose(in_avals, out_avals, params):
    return xp.transpose, (params["permutation"],), {}


def _fast_matmul(in_avals, out_avals, params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = in_avals
    if not lb and lhs.ndim == 2 and rhs.ndim <= 2 and lc == (1,) and rc == (0,):
        return xp.matmul, (), {}
    return None


_UNARY = {"neg": "negative", "sin": "sin", "cos": "cos", "exp": "exp", "log": "log",
          "tanh": "tanh", "sqrt": "sqrt"}
_BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "lt": "less", "le": "less_equal",
           "gt": "greater", "ge": "greater_equal", "eq": "equal", "ne": "not_equal",
           "select": "where"}

FACTS: dict[str, dict] = {
    "add": dict(identity=0, identity_sides=(0, 1),
                neg_operand={1: ("sub", (0, 1)), 0: ("sub", (1, 0))}),
    "sub": dict(identity=0, identity_sides=(1,), neg_operand={1: ("add", (0, 1))}),
    "mul": dict(identity=1, identity_sides=(0, 1), absorbing=0, neg_cancels=True, neg_by=-1),
    "div": dict(identity=1, identity_sides=(1,), neg_cancels=True, fast_impl=_fast_div),
    "neg": dict(involution=True, negation=True),
    "transpose": dict(noop=lambda aval, p: _is_identity_perm(p["permutation"]),
                      compose=_compose_transpose, moves_elements=True,
                      fast_impl=_fast_transpose),
    "reshape": dict(noop=lambda aval, p: tuple(p["new_sizes"]) == aval.shape,
                    reshape_like=True, moves_elements=True, fast_impl=_fast_reshape),
    "squeeze": dict(noop=lambda aval, p: not p["dimensions"], reshape_like=True,
                    moves_elements=True),
    "expand_dims": dict(noop=lambda aval, p: not p["dimensions"], reshape_like=True,
                        moves_elements=True),
    "broadcast_in_dim": dict(
        noop=lambda aval, p: tuple(p["shape"]) == aval.shape
        and _is_identity_perm(p["broadcast_dimensions"]),
        moves_elements=True,
        broadcast=lambda p: (tuple(p["shape"]), tuple(p["broadcast_dimensions"]))),
    "slice": dict(noop=lambda aval, p: tuple(p["start_indices"]) == (0,) * aval.ndim
                  and tuple(p["limit_indices"]) == aval.shape
                  and tuple(p["strides"]) == (1,) * aval.ndim,
                  moves_elements=True),
    "reduce_sum": dict(noop=lambda aval, p: not p["axes"], sum_axes=lambda p: p["axes"],
                       fast_impl=_fast_reduce_sum),
    "convert_element_type": dict(noop=lambda aval, p: np.dtype(p["new_dtype"]) == aval.dtype,
                                 converts_dtype=True),
    "dot_general": dict(fast_impl=_fast_matmul),
    "jit": dict(call_param="jaxpr"),
}
for _name, _fn in {**_UNARY, **_BINARY}.items():
    FACTS.setdefault(_name, {}).setdefault("fast_impl", _backend_call(_fn))
for _name in ("add", "sub", "mul", "div", "lt", "le", "gt", "ge", "eq", "ne", "select"):
    FACTS[_name]["scalar_operands"] = True


def fact(prim, key: str, default=None):
    """The fact `key` about primitive `prim` (see the module docstring), or `default`."""
    entry = FACTS.get(prim.name)
    if entry is None:
        return default
    return entry.get(key, default)


# --- emitting the few primitives the rewrites produce (looked up by name, params by row) -----

def _prim(name):
    from functrans.primitives.registry import REGISTRY
    return REGISTRY[name]


def emit_reshape(builder, x, shape):
    """`x` reshaped to `shape` (x itself when the shape already matches)."""
    shape = tuple(shape)
    if x.aval.shape == shape:
        return x
    return builder.emit(_prim("reshape"), [x], {"new_sizes": shape})


def emit_broadcast(builder, x, shape, dims=None):
    """`x` broadcast to `shape`, numpy-style (right-aligned) unless `dims` are given."""
    shape = tuple(shape)
    if dims is None:
        dims = tuple(range(len(shape) - x.aval.ndim, len(shape)))
    dims = tuple(dims)
    if x.aval.shape == shape and dims == tuple(range(len(shape))):
        return x
    return builder.emit(_prim("broadcast_in_dim"), [x],
                        {"shape": shape, "broadcast_dimensions": dims})


def emit_binary(builder, name, x, y):
    return builder.emit(_prim(name), [x, y], {})


def emit_neg(builder, x):
    return builder.emit(_prim("neg"), [x], {})
