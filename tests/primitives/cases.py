"""The table of primitive cases that drives every per-primitive check in test_rules.py.

Each family contributes rows in cases_<family>.py. A row names the primitive it covers, a
function of arrays that applies it (through functrans.numpy or the primitive wrappers), the
argument shapes, an input domain, and whether the case is differentiable. The property tests in
test_rule_properties.py redraw the shapes of elementwise rows (unless `fixed_shapes`) and sample
values from the row's domain, so the domain knowledge lives here only.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import Path
from typing import Callable

import numpy as np


def real(rng, shape):
    return rng.uniform(-2.0, 2.0, shape)


def positive(rng, shape):
    return rng.uniform(0.2, 2.0, shape)


def unit(rng, shape):
    """Inside (-1, 1), away from the ends, for arcsin/arctanh."""
    return rng.uniform(-0.8, 0.8, shape)


def above_one(rng, shape):
    return rng.uniform(1.2, 3.0, shape)


def away_from_zero(rng, shape):
    """Away from kinks at 0 (abs, max ties, ...)."""
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)


def ints(rng, shape):
    return rng.integers(-3, 4, shape)


@dataclasses.dataclass
class Case:
    prim: str                         # primitive name this case exercises
    fn: Callable                      # fn(*arrays) -> array(s)
    shapes: list                      # one shape per argument
    domain: Callable | list = real    # sampler (rng, shape) -> array, or one per argument
    differentiable: bool = True       # False: only eval/vmap/jaxpr checks
    order: int = 2                    # derivative order to check
    vmap: bool = True
    name: str = ""
    atol: float = 1e-6
    rtol: float = 1e-6
    # the argument shapes are part of the case (fn closes over an array that fixes them): the
    # property tests (test_rule_properties.py) must not redraw them
    fixed_shapes: bool = False

    def sample(self, rng, dtype=np.float64):
        doms = self.domain if isinstance(self.domain, list) else [self.domain] * len(
            self.shapes)
        out = []
        for d, s in zip(doms, self.shapes):
            x = d(rng, s)
            out.append(np.asarray(x, dtype) if np.issubdtype(np.asarray(x).dtype, np.floating)
                       else np.asarray(x))
        return out

    def __str__(self):
        return self.name or f"{self.prim}-{'x'.join(str(s) for s in self.shapes)}"


def all_cases() -> list:
    """Every row of the table: the CASES of each cases_<family>.py, in file-name order."""
    cases = []
    for m in sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])):
        if m.startswith("cases_"):
            cases += importlib.import_module(f"primitives.{m}").CASES
    return cases
