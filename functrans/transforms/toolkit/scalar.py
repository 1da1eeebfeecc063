"""Scalar programs compiled to one machine function through LLVM (jit's fast backend).

A nested derivative of a scalar function is hundreds of equations on 0-d values: run by numpy
each costs a microsecond of dispatch, and numba, which infers the types of every statement,
takes about a second to compile the 8th derivative of a small function. Here such a program
is written directly as LLVM IR (every value is a double or an i1, so there is nothing to
infer) and compiled with llvmlite, the LLVM binding numba itself is built on, which comes with
the extra "fast": tens of milliseconds to compile, about a microsecond to call.

Each equation is spelled from the numpy function its call target names (as `kernels` spells
its loops), never from which primitive it holds. Arithmetic is IEEE, as numpy's: division by
zero, log(0) and overflow give inf and nan. Elementary functions are the C library's, within
`kernels.TOLERANCE` of numpy's. Compiled functions are cached by their IR text; with
functrans.config's `jax_compilation_cache_dir` set, their object code is kept there too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import struct
import threading

import numpy as np

from functrans.core.cache import LRUCache
from functrans.core.ir import ClosedJaxpr, Literal

F, B = "double", "i1"

# numpy function -> (operand types, result type, instructions computing {out} from {0}, {1},
# {2}): one LLVM instruction, or a few whose temporaries extend the result's name
_ARITHMETIC = {np.add: "fadd", np.subtract: "fsub", np.multiply: "fmul", np.divide: "fdiv"}
_COMPARISONS = {np.less: "olt", np.less_equal: "ole", np.greater: "ogt",
                np.greater_equal: "oge", np.equal: "oeq", np.not_equal: "une"}
# llvm.* are intrinsics (LLVM may compute them inline); the rest are the C library's
_CALLS = {np.sin: "llvm.sin.f64", np.cos: "llvm.cos.f64", np.exp: "llvm.exp.f64",
          np.log: "llvm.log.f64", np.log2: "llvm.log2.f64", np.log10: "llvm.log10.f64",
          np.sqrt: "llvm.sqrt.f64", np.absolute: "llvm.fabs.f64", np.tan: "tan",
          np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan", np.sinh: "sinh",
          np.cosh: "cosh", np.tanh: "tanh", np.arcsinh: "asinh", np.arccosh: "acosh",
          np.arctanh: "atanh", np.expm1: "expm1", np.log1p: "log1p",
          np.power: "llvm.pow.f64", np.arctan2: "atan2", np.hypot: "hypot"}


def _extreme(cond):
    # numpy's maximum/minimum: the first operand when it wins the comparison or is nan
    return ((F, F), F, [f"{{out}}.w = fcmp {cond} double {{0}}, {{1}}",
                        "{out}.n = fcmp uno double {0}, {0}", "{out}.k = or i1 {out}.w, {out}.n",
                        "{out} = select i1 {out}.k, double {0}, double {1}"])


_ARITY = {name: 2 if name in ("llvm.pow.f64", "atan2", "hypot") else 1
          for name in _CALLS.values()}


def _call(name):
    args = ", ".join(f"double {{{k}}}" for k in range(_ARITY[name]))
    return (F,) * _ARITY[name], F, [f"{{out}} = call double @{name}({args})"]


SPELLINGS: dict = {
    **{fn: ((F, F), F, [f"{{out}} = {op} double {{0}}, {{1}}"]) for fn, op in _ARITHMETIC.items()},
    **{fn: ((F, F), B, [f"{{out}} = fcmp {c} double {{0}}, {{1}}"])
       for fn, c in _COMPARISONS.items()},
    **{fn: _call(name) for fn, name in _CALLS.items()},
    np.negative: ((F,), F, ["{out} = fneg double {0}"]),
    np.positive: ((F,), F, ["{out} = fadd double {0}, -0.0"]),
    np.square: ((F,), F, ["{out} = fmul double {0}, {0}"]),
    np.reciprocal: ((F,), F, ["{out} = fdiv double 1.0, {0}"]),
    np.maximum: _extreme("oge"), np.minimum: _extreme("ole"),
    np.logical_and: ((B, B), B, ["{out} = and i1 {0}, {1}"]),
    np.logical_or: ((B, B), B, ["{out} = or i1 {0}, {1}"]),
    np.logical_not: ((B,), B, ["{out} = xor i1 {0}, true"]),
}
_SELECT = "{out} = select i1 {0}, {t} {1}, {t} {2}"
_DECLARATIONS = "\n".join(f"declare double @{name}({', '.join(['double'] * n)})"
                          for name, n in _ARITY.items())
_KINDS = (np.dtype(np.float64), np.dtype(bool))


def _type(aval) -> str:
    return F if aval.dtype.kind == "f" else B


def _literal(a: Literal, want: str) -> str:
    """A 0-d literal as type `want` in LLVM's notation: a double by its bits (exact, inf and
    nan included), a bool as true or false."""
    value = np.asarray(a.val).item()
    if want == B:
        return "true" if value else "false"
    return "0x" + struct.pack(">d", float(value)).hex().upper()


def _scalar_atoms(jaxpr) -> bool:
    avals = [v.aval for v in (*jaxpr.invars, *jaxpr.constvars)]
    avals += [a.aval for e in jaxpr.eqns for a in (*e.invars, *e.outvars)]
    return all(a.shape == () and a.dtype in _KINDS for a in avals)


def _spelling(eqn, target):
    fn, extra, kwargs = target
    if extra or kwargs or eqn.primitive.multiple_results:
        return None
    if fn is np.where:
        t = _type(eqn.outvars[0].aval)
        return (B, t, t), t, [_SELECT.replace("{t}", t)]
    try:
        return SPELLINGS.get(fn)
    except TypeError:  # an unhashable callable
        return None


def kernel_ir(closed: ClosedJaxpr, targets) -> str | None:
    """The LLVM IR of `void kernel(double in.., double* out)` computing `closed` (bool inputs
    and outputs as 0.0 and 1.0), or None when it is not a scalar program of SPELLINGS."""
    jaxpr = closed.jaxpr
    if not jaxpr.eqns or not _scalar_atoms(jaxpr):
        return None
    spellings = [_spelling(e, t) for e, t in zip(jaxpr.eqns, targets)]
    if any(s is None for s in spellings):
        return None
    inputs = [*jaxpr.invars, *jaxpr.constvars]
    lines: list = []
    converted: dict = {}

    def convert(name: str, have: str, want: str) -> str:
        """`name` as type `want`, converted once (a double is true when nonzero, as numpy
        casts it)."""
        if have == want:
            return name
        if (name, want) not in converted:
            lines.append(f"{name}.{want} = " + (f"uitofp i1 {name} to double" if want == F
                                                 else f"fcmp une double {name}, 0.0"))
            converted[name, want] = f"{name}.{want}"
        return converted[name, want]

    names, types = {}, {}
    for i, v in enumerate(inputs):
        names[v], types[v] = convert(f"%a{i}", F, _type(v.aval)), _type(v.aval)

    def atom(a, want):
        if type(a) is Literal:
            return _literal(a, want)
        return convert(names[a], types[a], want)

    for i, (eqn, (operand_types, result, template)) in enumerate(zip(jaxpr.eqns, spellings)):
        ops = [atom(a, t) for a, t in zip(eqn.invars, operand_types)]
        out = eqn.outvars[0]
        lines += [line.format(*ops, out=f"%v{i}") for line in template]
        names[out], types[out] = f"%v{i}", result
    for k, a in enumerate(jaxpr.outvars):
        value = atom(a, F)
        lines += [f"%o{k} = getelementptr double, double* %out, i64 {k}",
                  f"store double {value}, double* %o{k}"]
    args = ", ".join([*(f"double %a{i}" for i in range(len(inputs))), "double* %out"])
    body = "\n".join(f"  {line}" for line in lines)
    return f"{_DECLARATIONS}\n\ndefine void @kernel({args}) {{\n{body}\n  ret void\n}}\n"


# compiled kernels by IR text: (execution engine, ctypes function); the engine owns the code
_KERNELS = LRUCache(256, name="LLVM scalar kernels")
_lock = threading.Lock()
_target: list = []
# how many kernels this process compiled, and how many it loaded from the cache directory
STATS = {"compiled": 0, "loaded": 0}


def _target_machine():
    """A new machine for the host (an execution engine owns and disposes of its machine)."""
    if not _target:
        import llvmlite
        import llvmlite.binding as llvm
        if tuple(int(p) for p in llvmlite.__version__.split(".")[:2]) < (0, 45):
            llvm.initialize()  # automatic from llvmlite 0.45 (LLVM 20) on, an error there
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.load_library_permanently(ctypes.util.find_library("m") or "libm.so.6")
        _target.append(llvm.Target.from_default_triple())
    return _target[0].create_target_machine(opt=2)


def _object_cache(ir: str):
    """(notify, getbuffer) keeping the kernel's object code in the cache directory."""
    from functrans.transforms.toolkit.kernels import cache_dir
    directory = cache_dir()
    if directory is None:
        return None
    path = os.path.join(directory, "functrans_llvm_" + hashlib.sha256(ir.encode()).hexdigest()[:32]
                        + ".o")

    def notify(module, buffer):
        os.makedirs(directory, exist_ok=True)
        scratch = f"{path}.{os.getpid()}.tmp"
        with open(scratch, "wb") as f:
            f.write(buffer)
        os.replace(scratch, path)  # atomic: another process never reads half a file

    def getbuffer(module):
        if not os.path.exists(path):
            return None
        STATS["loaded"] += 1
        with open(path, "rb") as f:
            return f.read()
    return notify, getbuffer


def compile_kernel(ir: str, n_in: int):
    """The machine function of `ir` (n_in double arguments, then the output pointer), compiled
    once per IR text."""
    kernel = _KERNELS.get(ir)
    if kernel is not None:
        return kernel
    import llvmlite.binding as llvm
    with _lock:
        machine = _target_machine()
        module = llvm.parse_assembly(ir)
        module.verify()
        engine = llvm.create_mcjit_compiler(module, machine)  # owns module and machine
        hooks = _object_cache(ir)
        if hooks is not None:
            engine.set_object_cache(*hooks)
        loaded = STATS["loaded"]
        engine.finalize_object()
        STATS["compiled"] += STATS["loaded"] == loaded
        signature = ctypes.CFUNCTYPE(None, *[ctypes.c_double] * n_in,
                                     ctypes.POINTER(ctypes.c_double))
        fn = signature(engine.get_function_address("kernel"))
    return _KERNELS.put(ir, (engine, fn))


def compile_scalar(closed: ClosedJaxpr, targets):
    """The CompiledProgram of `closed` as one machine function, or None when it is not a
    scalar program this module spells (`targets`: each equation's call target)."""
    from functrans.transforms.toolkit.codegen import CompiledProgram
    ir = kernel_ir(closed, targets)
    if ir is None:
        return None
    jaxpr = closed.jaxpr
    n_out = len(jaxpr.outvars)
    engine, kernel = compile_kernel(ir, len(jaxpr.invars) + len(jaxpr.constvars))
    consts = [float(np.asarray(c)) for c in closed.consts]
    boxes = [np.float64 if a.aval.dtype.kind == "f" else (lambda x: np.bool_(x != 0.0))
             for a in jaxpr.outvars]
    passed = [type(a) is not Literal and a in jaxpr.invars for a in jaxpr.outvars]
    # an input returned as it is: a fresh array, as the numpy program returns it
    boxes = [(lambda x, box=box: np.array(box(x))) if p else box for p, box in zip(passed, boxes)]
    buffer = ctypes.c_double * n_out

    def program(*args):
        out = buffer()
        kernel(*[float(a) for a in args], *consts, out)
        return [box(o) for box, o in zip(boxes, out)]

    program.engine = engine  # the machine code lives as long as the program
    return CompiledProgram(program, ir, len(jaxpr.invars))
