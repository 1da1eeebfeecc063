"""The IR: variables, literals, equations, jaxprs. Plain data, no behaviour beyond printing."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.cache import LRUCache

_counter = itertools.count()
DERIVED_CACHE_SIZE = 32  # per program: batch sizes under vmap, nonzero patterns under jvp...


class Var:
    """A variable of the IR, typed by an abstract value. Identity is the object itself."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(_counter)

    def __repr__(self):
        return f"Var({self.count}:{self.aval})"


class Literal:
    """A scalar constant written into an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r})"


Atom = Var | Literal


class Eqn(NamedTuple):
    """`outvars = primitive[params] invars`."""

    primitive: Any
    invars: list
    outvars: list
    params: dict

    def __repr__(self):
        from functrans.core.pretty import pp_eqn
        return pp_eqn(self)


class Jaxpr:
    """A closed-over-nothing program: constvars and invars in, outvars out, eqns in order."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __str__(self):
        from functrans.core.pretty import pp_jaxpr
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A `Jaxpr` together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "out_tree", "derived", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        assert len(jaxpr.constvars) == len(consts)
        self.jaxpr = jaxpr
        self.consts = list(consts)
        # programs derived from this one (by jvp, transpose, vmap per batch size, the code
        # generator), built once each and kept while this program lives, up to a bound
        self.derived = LRUCache(DERIVED_CACHE_SIZE, name="derived programs", register=False)
        self.out_tree = None

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        from functrans.core.pretty import pp_jaxpr
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def __call__(self, *args):
        from functrans.core.eval import eval_jaxpr
        from functrans.core.ownership import unaliased
        return unaliased(eval_jaxpr(self.jaxpr, self.consts, *args), [*args, *self.consts])


def literal(val) -> Literal:
    arr = np.asarray(val)
    return Literal(arr[()], ShapedArray((), arr.dtype))
