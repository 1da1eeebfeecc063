"""The pass pipeline: inline calls, CSE, DCE, simplify, fold constants, to a fixed point.

CSE and DCE come before the rewrites: a nested derivative repeats most of its equations (the
8th derivative of a small function is 4,795 equations, 944 after CSE and DCE), and the
rewrites, the costlier passes, then look at a fifth of them."""

from __future__ import annotations

from typing import Callable, NamedTuple

from functrans.core.ir import ClosedJaxpr
from functrans.transforms.toolkit.cse import cse
from functrans.transforms.toolkit.dce import dce
from functrans.transforms.toolkit.fold import fold_constants
from functrans.transforms.toolkit.inline import inline_calls
from functrans.transforms.toolkit.rewrite import count_eqns
from functrans.transforms.toolkit.simplify import simplify

PASSES: tuple[tuple[str, Callable[[ClosedJaxpr], ClosedJaxpr]], ...] = (
    ("inline", inline_calls),
    ("cse", cse),
    ("dce", dce),
    ("simplify", simplify),
    ("fold", fold_constants),
)
MAX_ROUNDS = 16


class PassStats(NamedTuple):
    """Equation counts (sub-programs included) before and after the passes."""

    eqns_before: int
    eqns_after: int
    rounds: int
    per_pass: dict  # pass name -> equations removed in total (negative: added)

    def __str__(self):
        per = ", ".join(f"{k} {v:+d}" for k, v in self.per_pass.items() if v)
        return (f"{self.eqns_before} -> {self.eqns_after} equations in {self.rounds} "
                f"round(s) ({per or 'no change'})")


def optimize_with_stats(closed: ClosedJaxpr, passes=PASSES, check=None):
    """(optimized program, PassStats). `check`, if given, is called on the result of every
    pass (tests pass check_jaxpr)."""
    before = count_eqns(closed)
    per = {name: 0 for name, _ in passes}
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        changed = False
        for name, fn in passes:
            n = count_eqns(closed)
            out = fn(closed)
            if out is not closed:
                changed = True
                per[name] += n - count_eqns(out)
                closed = out
                if check is not None:
                    check(closed)
        if not changed:
            break
    return closed, PassStats(before, count_eqns(closed), rounds, per)


def optimize(closed: ClosedJaxpr, passes=PASSES) -> ClosedJaxpr:
    """Run the passes to a fixed point; the result computes what `closed` computes."""
    return optimize_with_stats(closed, passes)[0]
