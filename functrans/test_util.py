"""Checking derivatives numerically: the tools functrans' own tests use, public for yours.

`check_grads` compares forward mode with central finite differences along a random direction,
checks reverse mode against forward mode through the identity <w, J v> == <J^T w, v>, and for
order > 1 applies the same checks to the derivative functions themselves.
"""

from __future__ import annotations

import numpy as np

from functrans.dtypes import float0
from functrans.transforms.jvp import jvp
from functrans.transforms.vjp import vjp
from functrans.tree_util import tree_flatten, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]


def _rand_like(rng, x, int_dtype=None):
    """A random direction for `x` (complex for a complex x); zeros for integer leaves, of
    `int_dtype` (float0 for the tangent of an integer primal, as jvp wants) or of x's own
    dtype."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype) if np.issubdtype(
        x.dtype, np.inexact) else np.zeros(x.shape, int_dtype or x.dtype)


def _wide(x):
    """x in float64, or complex128 when complex."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _inner(a, b) -> float:
    # Re(sum(a * b)), without conjugation: the pairing under which reverse mode transposes
    # (JAX's convention for complex values); for real values the dot product
    la, lb = tree_flatten(a)[0], tree_flatten(b)[0]
    return float(sum(np.real(np.sum(_wide(x) * _wide(y)))
                     for x, y in zip(la, lb)
                     if float0 not in (np.asarray(x).dtype, np.asarray(y).dtype)))


def _assert_close(actual, expected, atol, rtol, what):
    la, lb = tree_flatten(actual)[0], tree_flatten(expected)[0]
    for x, y in zip(la, lb):
        if float0 in (np.asarray(x).dtype, np.asarray(y).dtype):
            continue
        x, y = _wide(x), _wide(y)
        if not np.allclose(x, y, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(x - y)) if x.size else 0.0
            raise AssertionError(f"{what}: max abs error {err:.3e} (atol {atol}, rtol {rtol})"
                                 f"\nactual:   {x}\nexpected: {y}")


def _shift(s):
    """x + s*d for float leaves; integer leaves (indices) stay as they are."""
    def shift(x, d):
        x = np.asarray(x)
        return x + s * d if np.issubdtype(x.dtype, np.inexact) else x
    return shift


def check_jvp(f, args, *, eps=1e-6, atol=1e-5, rtol=1e-5, seed=0):
    """jvp(f) along a random direction matches a central difference of f."""
    rng = np.random.default_rng(seed)
    v = tuple(tree_map(lambda x: _rand_like(rng, x, float0), a) for a in args)
    _, t_out = jvp(f, tuple(args), v)

    def shifted(s):
        return f(*[tree_map(_shift(s), a, va)
                   for a, va in zip(args, v)])

    fd = tree_map(lambda p, m: p if np.asarray(p).dtype == float0 else  # no values
                  (_wide(p) - _wide(m)) / (2 * eps),
                  shifted(eps), shifted(-eps))
    _assert_close(t_out, fd, atol, rtol, "jvp vs central difference")


def check_vjp(f, args, *, atol=1e-5, rtol=1e-5, seed=0):
    """<w, J v> (forward mode) equals <J^T w, v> (reverse mode) for random v, w."""
    rng = np.random.default_rng(seed + 1)
    v = tuple(tree_map(lambda x: _rand_like(rng, x, float0), a) for a in args)
    out, t_out = jvp(f, tuple(args), v)
    w = tree_map(lambda x: _rand_like(rng, x), out)
    _, f_vjp = vjp(f, *args)
    ct = f_vjp(w)
    lhs, rhs = _inner(w, t_out), _inner(ct, v)
    if not np.isclose(lhs, rhs, atol=atol, rtol=rtol):
        raise AssertionError(f"vjp identity: <w, J v> = {lhs!r} but <J^T w, v> = {rhs!r}")


def check_grads(f, args, order: int = 1, modes=("fwd", "rev"), *, eps=1e-6, atol=1e-5,
                rtol=1e-5, seed=0):
    """Check derivatives of `f` at `args` up to `order` in the given modes (float64 advised).

    >>> import functrans.numpy as fnp
    >>> check_grads(fnp.sin, (0.3,), order=2)
    """
    args = tuple(args)
    kw = dict(eps=eps, atol=atol, rtol=rtol, seed=seed)
    if "fwd" in modes:
        check_jvp(f, args, **kw)
    if "rev" in modes:
        check_vjp(f, args, atol=atol, rtol=rtol, seed=seed)
    if order > 1:
        rng = np.random.default_rng(seed + 2)
        v = tuple(tree_map(lambda x: _rand_like(rng, x, float0), a) for a in args)
        if "fwd" in modes:
            check_grads(lambda *xs: jvp(f, xs, v)[1], args, order - 1, modes, **kw)
        if "rev" in modes:
            out = f(*args)
            w = tree_map(lambda x: _rand_like(rng, x), out)
            check_grads(lambda *xs: vjp(f, *xs)[1](w), args, order - 1, modes, **kw)




def check_owned(results, sources=()) -> None:
    """Check that the caller owns every numpy array in the pytree `results`: none shares
    memory with an array in the pytree `sources` (arguments, tangents, captured constants) or
    with another result, each can be written into, and writing into each leaves `sources`
    unchanged. Raises AssertionError naming the offending leaves.

    >>> import numpy as np, functrans as ft
    >>> x = np.ones(3)
    >>> check_owned(ft.jit(lambda x: x + 0.0)(x), [x])
    >>> check_owned(x[1:], [x])
    Traceback (most recent call last):
    AssertionError: result leaf 0 shares memory with source leaf 0
    """
    outs = [o for o in tree_flatten(results)[0] if isinstance(o, np.ndarray)]
    srcs = [s for s in tree_flatten(sources)[0] if isinstance(s, np.ndarray)]
    for i, o in enumerate(outs):
        for j, s in enumerate(srcs):
            if np.shares_memory(o, s):
                raise AssertionError(f"result leaf {i} shares memory with source leaf {j}")
        for j in range(i):
            if np.shares_memory(o, outs[j]):
                raise AssertionError(f"result leaf {i} shares memory with result leaf {j}")
        if not o.flags.writeable:
            raise AssertionError(f"result leaf {i} (shape {o.shape}) is read-only")
    before = [s.copy() for s in srcs]
    for o in outs:
        if o.dtype == float0:  # the tangent of an integer: no values to write
            continue
        o[...] = 7 if o.dtype != np.bool_ else ~o
    for j, (s, b) in enumerate(zip(srcs, before)):
        if not np.array_equal(s, b, equal_nan=True):
            raise AssertionError(f"writing into the results changed source leaf {j}")
