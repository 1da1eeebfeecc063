"""jit: stage a function, optimise its program and compile it (both with the program toolkit,
`functrans.transforms.toolkit`), cache the result per input signature, and the call primitive
that makes jit compose with the other transforms."""

from functrans.transforms.jit.api import Jitted, Lowered, jit  # noqa: F401
from functrans.transforms.jit.call import jit_p  # noqa: F401
from functrans.transforms.toolkit.codegen import (  # noqa: F401
    compile_program, set_workspace_limit, workspace_bytes)
from functrans.transforms.toolkit.cse import cse  # noqa: F401
from functrans.transforms.toolkit.dce import dce  # noqa: F401
from functrans.transforms.toolkit.fold import fold_constants  # noqa: F401
from functrans.transforms.toolkit.inline import inline_calls  # noqa: F401
from functrans.transforms.toolkit.optimize import optimize, optimize_with_stats  # noqa: F401
from functrans.transforms.toolkit.rewrite import count_eqns  # noqa: F401
from functrans.transforms.toolkit.simplify import forward_trivial, simplify  # noqa: F401

__all__ = ["jit", "Jitted", "Lowered", "jit_p", "compile_program", "optimize",
           "optimize_with_stats", "simplify", "forward_trivial", "fold_constants", "cse", "dce",
           "inline_calls", "count_eqns", "set_workspace_limit", "workspace_bytes",
           # the submodules not named above, so that the API reference documents them
           "api", "call"]
