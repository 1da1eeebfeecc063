"""The program toolkit: every edit of a program (a ClosedJaxpr) that more than one transform
needs, written once. jit, control flow, custom rules, checkpoint, the Laplacian and the torch
shim's backward programs all build on it.

    stage       stage / stage_tree / hoist: a function to a (const-free) program; run
    edit        keep_outputs, permute, with_extra_inputs, used/restrict/specialize_inputs
    dce, cse    dead-code and common-subexpression elimination
    jvp_split   the JVP of a program split into a primal and a linear tangent program
    transpose   the transposed program of a linear program
    batch       the batched program (vmap, IR to IR)
    optimize    the pass pipeline (inline, simplify, fold, CSE, DCE) to a fixed point
    codegen     compilation to one Python function of straight-line backend calls
    heap        glibc's malloc told to keep freed memory for a program's next call
    kernels     numba loop kernels for elementwise clusters (jit's fast backend)
    scalar      scalar programs as one LLVM function (jit's fast backend)
"""

from functrans.transforms.toolkit.batch import batch_jaxpr, batch_size  # noqa: F401
from functrans.transforms.toolkit.codegen import compile_program  # noqa: F401
from functrans.transforms.toolkit.cse import cse  # noqa: F401
from functrans.transforms.toolkit.dce import dce, dce_jaxpr  # noqa: F401
from functrans.transforms.toolkit.edit import (  # noqa: F401
    keep_outputs, permute, restrict_inputs, specialize_inputs, split_list, used_inputs,
    with_extra_inputs)
from functrans.transforms.toolkit.jvp_split import JVPSplit, jvp_split  # noqa: F401
from functrans.transforms.toolkit.optimize import optimize, optimize_with_stats  # noqa: F401
from functrans.transforms.toolkit.stage import (  # noqa: F401
    hoist, run, stage, stage_tree, weak_avals)
from functrans.transforms.toolkit.transpose import (  # noqa: F401
    Transposed, transpose_jaxpr, transpose_program)

__all__ = ["batch_jaxpr", "batch_size", "compile_program", "cse", "dce", "dce_jaxpr",
           "keep_outputs", "permute", "restrict_inputs", "specialize_inputs", "split_list",
           "used_inputs", "with_extra_inputs", "JVPSplit", "jvp_split", "optimize",
           "optimize_with_stats", "hoist", "run", "stage", "stage_tree", "weak_avals",
           "Transposed", "transpose_jaxpr", "transpose_program",
           # the submodules, so that the API reference documents them
           "batch", "codegen", "cse", "dce", "edit", "facts", "fold", "heap", "inline",
           "jvp_split", "kernels", "optimize", "rewrite", "scalar", "simplify", "stage",
           "transpose"]
