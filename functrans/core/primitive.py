"""`Primitive`: a named operation whose rules (impl, abstract eval, jvp, transpose, batch, ...)
are filled in by one row of the table in `functrans/primitives`."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable

from functrans.core.trace import bind as _bind
from functrans.errors import MissingRuleError


class Primitive:
    """One operation of the IR. `rules` maps a rule kind ("jvp", "transpose", "batch", ...) to
    its function; `props` holds properties the transforms read ("elementwise", "linear", ...),
    `facts` what the jit passes know (functrans/primitives/registry.py lists them)."""

    __slots__ = ("name", "multiple_results", "impl", "abstract_eval", "rules", "props",
                 "facts", "torch_name", "module", "__weakref__")

    def __init__(self, name: str, *, multiple_results: bool = False, module: str = "?"):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None
        self.rules: dict[str, Callable[..., Any]] = {}
        self.props: frozenset[str] = frozenset()
        self.facts: dict[str, Any] = {}
        self.torch_name: str | None = None
        self.module = module

    # `prim.bind(*args, **params)` is `trace.bind(prim, ...)` itself: one call on the eager path
    bind = _bind

    def __repr__(self):
        return self.name

    __str__ = __repr__


def lookup(prim: Primitive, kind: str) -> Callable[..., Any]:
    """The `kind` rule of `prim`, or an error that says where to add it."""
    rule = prim.rules.get(kind)
    if rule is None:
        raise MissingRuleError(
            f"primitive '{prim.name}' has no {kind} rule, so the transform that needs it cannot "
            f"run. Add `{kind}=...` to its row (the define(\"{prim.name}\", ...) call) in "
            f"{prim.module.replace('.', '/')}.py.")
    return rule


# The derivative convention JVPs follow: None for each row's `jvp` rule (JAX's), or the rule kind
# of another convention a row may state beside it (`torch_jvp`: PyTorch's derivative where it
# differs from JAX's, as at pow(0, y) or atan2(0, 0)); functrans.torch differentiates under "torch".
_CONVENTION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "functrans_derivative_convention", default=None)


@contextlib.contextmanager
def derivative_convention(name: str):
    """Within the block, a JVP applies each primitive's `<name>_jvp` rule where its row states
    one, and its `jvp` rule elsewhere."""
    token = _CONVENTION.set(f"{name}_jvp")
    try:
        yield
    finally:
        _CONVENTION.reset(token)


def jvp_rule(prim: Primitive) -> Callable[..., Any]:
    """The JVP rule of `prim` under the current derivative convention."""
    kind = _CONVENTION.get()
    if kind is not None:
        rule = prim.rules.get(kind)
        if rule is not None:
            return rule
    return prim.rules.get("jvp") or lookup(prim, "jvp")


# Whether the derivative being built will itself be differentiated: PyTorch's backward formulas
# read GradMode (on under create_graph=True, off in a plain backward), and a few take a cheaper
# branch when it is off (prod over all entries: zeros for an operand with two or more zeros).
# A rule asks `derivative_grad_mode()`; the cell records that it asked, so a caller that builds
# the plain derivative knows whether the differentiable one must be built separately.
_GRAD_MODE: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "functrans_derivative_grad_mode", default=None)


@contextlib.contextmanager
def derivative_grad_mode(enabled: bool):
    """Within the block, rules that read `derivative_grad_mode()` see `enabled`. Yields a list
    that is non-empty once a rule has read the mode (its derivative depends on it)."""
    cell = [bool(enabled)]
    token = _GRAD_MODE.set(cell)
    read: list = []
    cell.append(read)
    try:
        yield read
    finally:
        _GRAD_MODE.reset(token)


def grad_mode_enabled() -> bool:
    """Whether the derivative a rule builds will be differentiated again (True outside any
    `derivative_grad_mode` block: the functional API always is able to differentiate again)."""
    cell = _GRAD_MODE.get()
    if cell is None:
        return True
    cell[1].append(True)
    return cell[0]
