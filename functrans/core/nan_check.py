"""`jax_debug_nans`: find the primitive that first produced a NaN.

Turning the flag on wraps the `impl` of every primitive in the table with a check of its
outputs (turning it off puts the plain impls back), so eager evaluation, by `bind` or by the
eager fast paths of functrans.numpy, costs nothing extra while the flag is off. A jitted call
checks its outputs (transforms/jit/api.py, one module-level bool check) and re-runs the function
op by op, unjitted, to name the primitive.
"""

from __future__ import annotations

import numpy as np

_ENABLED = False
_PLAIN_IMPLS: dict = {}  # primitive -> its impl before the flag wrapped it


def has_nan(x) -> bool:
    """Whether the array (or number) `x` holds a NaN; False for integer and boolean values."""
    a = np.asarray(x)
    return a.dtype.kind in "fc" and bool(np.isnan(a).any())


def any_nan(values) -> bool:
    """Whether any of `values` holds a NaN (see `has_nan`)."""
    return any(has_nan(v) for v in values)


def check_primitive(prim, args, params, out) -> None:
    """Raise FloatingPointError if `prim`, run eagerly on `args`, produced a NaN from inputs
    that held none. A call primitive (jit's) is re-run equation by equation first, so the
    error names the primitive inside it that made the NaN."""
    outs = out if prim.multiple_results else (out,)
    if not any_nan(outs) or any_nan(args):
        return
    call_param = prim.facts.get("call_param")
    if call_param is not None:
        from functrans.core.eval import eval_jaxpr
        closed = params[call_param]
        eval_jaxpr(closed.jaxpr, closed.consts, *args)  # raises naming the inner primitive
    raise nan_error(prim.name)


def nan_error(name: str) -> FloatingPointError:
    """The error jax_debug_nans raises for a NaN made by the operation `name`."""
    return FloatingPointError(
        f"invalid value (NaN) encountered in {name} (jax_debug_nans is on: the primitive "
        f"produced a NaN from inputs without one). Turn the check off with "
        f"functrans.config.update('jax_debug_nans', False).")


def set_enabled(on: bool) -> None:
    """Wrap (on) or unwrap (off) the impl of every registered primitive."""
    global _ENABLED
    from functrans.primitives.registry import REGISTRY
    _ENABLED = on
    if on:
        for prim in REGISTRY.values():
            if prim.impl is not None and prim not in _PLAIN_IMPLS:
                _PLAIN_IMPLS[prim] = prim.impl
                prim.impl = _checked(prim, prim.impl)
    else:
        for prim, impl in _PLAIN_IMPLS.items():
            prim.impl = impl
        _PLAIN_IMPLS.clear()


def _checked(prim, impl):
    def run(*args, **params):
        out = impl(*args, **params)
        if _ENABLED:  # a program compiled while the flag was on keeps this wrapper
            check_primitive(prim, args, params, out)
        return out
    run.__name__ = getattr(impl, "__name__", prim.name)
    return run
