"""Declaring primitives: one call per primitive puts every rule for it in one place."""

from __future__ import annotations

import sys
from typing import Callable

from functrans.core.primitive import Primitive

REGISTRY: dict[str, Primitive] = {}

RULE_KINDS = ("jvp", "transpose", "batch")


def define(name: str, *, impl: Callable, abstract: Callable, module: str,
           jvp: Callable | None = None, transpose: Callable | None = None,
           batch: Callable | None = None, multiple_results: bool = False,
           props: tuple[str, ...] = (), torch_name: str | None = None, **rules) -> Primitive:
    """Register primitive `name` with its numpy `impl`, its shape/dtype rule `abstract`, and its
    transformation rules. `props` are facts the jit passes read (elementwise, linear, ...)."""
    if name in REGISTRY:
        raise ValueError(f"primitive {name!r} is defined twice")
    # where the row lives, for error messages: the module that called define (or a family helper)
    caller = sys._getframe(1)
    while caller.f_globals.get("__name__") == __name__:
        caller = caller.f_back
    where = caller.f_globals.get("__name__") or f"functrans.primitives.{module}"
    prim = Primitive(name, multiple_results=multiple_results, module=where)
    prim.impl = impl
    prim.abstract_eval = abstract
    for kind, rule in (("jvp", jvp), ("transpose", transpose), ("batch", batch), *rules.items()):
        if rule is not None:
            prim.rules[kind] = rule
    prim.props = frozenset(props)
    prim.torch_name = torch_name
    REGISTRY[name] = prim
    return prim


def names() -> set[str]:
    return set(REGISTRY)


def get(name: str) -> Primitive:
    return REGISTRY[name]
