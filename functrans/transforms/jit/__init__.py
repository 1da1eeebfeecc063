"""jit: IR passes (inline, simplify, constant folding, CSE, DCE), compilation of the optimised
program to straight-line backend code, and the call primitive that makes jit compose with the
other transforms."""

from functrans.transforms.jit.api import Jitted, Lowered, jit  # noqa: F401
from functrans.transforms.jit.call import jit_p  # noqa: F401
from functrans.transforms.jit.codegen import (  # noqa: F401
    compile_program, set_workspace_limit, workspace_bytes)
from functrans.transforms.jit.cse import cse  # noqa: F401
from functrans.transforms.jit.dce import dce  # noqa: F401
from functrans.transforms.jit.fold import fold_constants  # noqa: F401
from functrans.transforms.jit.inline import inline_calls  # noqa: F401
from functrans.transforms.jit.optimize import optimize, optimize_with_stats  # noqa: F401
from functrans.transforms.jit.rewrite import count_eqns  # noqa: F401
from functrans.transforms.jit.simplify import forward_trivial, simplify  # noqa: F401

__all__ = ["jit", "Jitted", "Lowered", "jit_p", "compile_program", "optimize",
           "optimize_with_stats", "simplify", "forward_trivial", "fold_constants", "cse", "dce",
           "inline_calls", "count_eqns", "set_workspace_limit", "workspace_bytes"]
