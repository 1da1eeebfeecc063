"""What the jit passes know about primitives, read through `fact(prim, key)`.

The knowledge itself is data in each primitive's row (`define(..., facts=dict(...))` in
functrans/primitives); the module docstring of functrans/primitives/registry.py says what each
fact means. A pass asks `fact(eqn.primitive, "identity")` and never tests which primitive it
holds.
"""

from __future__ import annotations

from functrans.primitives.registry import FACT_KEYS, REGISTRY


def fact(prim, key: str, default=None):
    """The fact `key` about primitive `prim` (see functrans/primitives/registry.py), or
    `default`."""
    assert key in FACT_KEYS, f"unknown jit fact {key!r}"
    value = prim.facts.get(key)
    return default if value is None else value


# --- emitting the few primitives the rewrites produce (looked up by name, params by row) -----

def _prim(name):
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
    """Append the binary primitive `name` on x and y to `builder`; returns its output."""
    return builder.emit(_prim(name), [x, y], {})


def emit_neg(builder, x):
    """Append -x to `builder`; returns its output."""
    return builder.emit(_prim("neg"), [x], {})
