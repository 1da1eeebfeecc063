"""Property tests: every differentiable primitive's first and second derivatives, forward and
reverse, match central finite differences in float64 over drawn shapes, params and values.

test_rules.py checks the fixed rows of the case table (cases_*.py); here hypothesis redraws them.
Elementwise primitives draw one of their differentiable rows, broadcast-compatible shapes for its
arguments (0-d and size-1 axes included) and values from the row's own domain sampler, so the
domain knowledge stays in the case table. The other families (reductions, shape ops, indexing,
linalg) each have a strategy that draws shapes and params (axes, permutations, paddings, slice
bounds, indices, contraction dims) and builds an `Example`: a function of arrays that binds the
primitive, and its arguments. Values come from the domains of the primitive's rows where those
matter (reduce_prod, cumprod, ...); the linear families take `real`. Each example checks that the
traced program really binds the primitive, then runs `check_grads` at order 2 in both modes.

A primitive counts as differentiable unless it has cases and none of them is differentiable;
test_every_differentiable_primitive_has_a_property fails naming any primitive with no property.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import functrans as ft
from primitives.cases import all_cases
from functrans.primitives import indexing as I
from functrans.primitives import linalg as L
from functrans.primitives import norms as N
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.test_util import check_grads
from primitives.cases import real

hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")
hnp = pytest.importorskip("hypothesis.extra.numpy")
assume, given, settings = hypothesis.assume, hypothesis.given, hypothesis.settings

CASES = all_cases()

MAX_SIZE = 24  # elements per operand and per result: keeps each example a few milliseconds

_HIGHER_ORDER = {n for n, p in REGISTRY.items() if "higher_order" in p.props}
_WITH_CASES = {c.prim for c in CASES}
_DIFFERENTIABLE_CASES = {c.prim for c in CASES if c.differentiable}
# primitives with sub-programs have dedicated tests; those whose every case is declared
# non-differentiable (comparisons, rounding, argmax, stop_gradient, ...) have no derivative to
# compare; effectful ones (debug_print) have no outputs to differentiate (tests/test_debug.py
# checks their jvp and batching); any other primitive, with or without a case, needs a property
_EFFECTFUL = {n for n, p in REGISTRY.items() if "effectful" in p.facts}
DIFFERENTIABLE = sorted(set(REGISTRY) - _HIGHER_ORDER - _EFFECTFUL
                        - (_WITH_CASES - _DIFFERENTIABLE_CASES))


@dataclasses.dataclass
class Example:
    fn: object
    args: list
    desc: str               # what was drawn, for hypothesis' report of a falsifying example
    atol: float = 1e-6
    rtol: float = 1e-6

    def __repr__(self):
        vals = ", ".join(np.array2string(np.asarray(a), precision=17, separator=", ")
                         for a in self.args)
        return f"Example({self.desc}; args: {vals})"


def _size(shape):
    return math.prod(shape)


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side).filter(lambda s: _size(s) <= MAX_SIZE)


def _sample(draw, domains, arg_shapes):
    """Arguments of the given shapes from the domain samplers, seeded by a drawn seed."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    out = []
    for d, s in zip(domains, arg_shapes):
        x = np.asarray(d(rng, s))
        out.append(x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x)
    return out


def _rows(prim):
    return [c for c in CASES if c.prim == prim and c.differentiable]


def _domain_of_first_arg(prim):
    """The samplers a primitive's differentiable rows use for their first argument (the
    operand, for the one-operand families), e.g. reduce_prod's `with_zeros`; `real` if none."""
    doms = []
    for c in _rows(prim):
        d = c.domain[0] if isinstance(c.domain, list) else c.domain
        if d not in doms:
            doms.append(d)
    return st.sampled_from(doms or [real])


# --- elementwise: a row of the case table with redrawn broadcast-compatible shapes ------------

@st.composite
def elementwise(draw, prim):
    rows = [c for c in _rows(prim) if not c.fixed_shapes]
    case = draw(st.sampled_from(rows), label="row")
    bs = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=len(case.shapes), min_dims=0, max_dims=3, min_side=1, max_side=4).filter(
            lambda b: _size(b.result_shape) <= MAX_SIZE), label="shapes")
    args = dataclasses.replace(case, shapes=list(bs.input_shapes)).sample(
        np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed")))
    return Example(case.fn, args, f"row {case}, shapes {bs.input_shapes}", case.atol, case.rtol)


# --- reductions ------------------------------------------------------------------------------

_REDUCE = {"reduce_sum": R.reduce_sum, "reduce_max": R.reduce_max, "reduce_min": R.reduce_min,
           "reduce_prod": R.reduce_prod, "p_norm": lambda x, axes: N.p_norm(x, 3.0, axes),
           "logsumexp": R.logsumexp}
_SCAN = {"cumsum": R.cumsum, "cumprod": R.cumprod}


@st.composite
def reduction(draw, prim):
    op = _REDUCE[prim]
    shape = draw(shapes(min_dims=1), label="shape")
    nd = len(shape)
    axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, unique=True), label="axes")
    axes = tuple(a - nd if draw(st.booleans(), label="negative") else a for a in axes)
    [x] = _sample(draw, [draw(_domain_of_first_arg(prim), label="domain")], [shape])
    return Example(lambda x: op(x, axes), [x], f"{prim}(x: {shape}, axes={axes})")


@st.composite
def scan(draw, prim):
    op = _SCAN[prim]
    shape = draw(shapes(min_dims=1), label="shape")
    axis = draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    reverse = draw(st.booleans(), label="reverse")
    [x] = _sample(draw, [draw(_domain_of_first_arg(prim), label="domain")], [shape])
    return Example(lambda x: op(x, axis, reverse), [x],
                   f"{prim}(x: {shape}, axis={axis}, reverse={reverse})")


# --- shape ops -------------------------------------------------------------------------------

@st.composite
def broadcast_in_dim(draw, prim):
    shape = draw(shapes(max_dims=2, max_side=3), label="operand shape")
    out_nd = len(shape) + draw(st.integers(0 if shape else 1, 2), label="new axes")
    dims = tuple(sorted(draw(st.permutations(range(out_nd)), label="dims")[:len(shape)]))
    out = [draw(st.integers(1, 3)) for _ in range(out_nd)]
    for i, d in enumerate(dims):
        if shape[i] != 1 or draw(st.booleans(), label="keep size 1"):
            out[d] = shape[i]
    out = tuple(out)
    assume(_size(out) <= MAX_SIZE and (out != shape or dims != tuple(range(len(shape)))))
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.broadcast_in_dim(x, out, dims), [x],
                   f"broadcast_in_dim(x: {shape}, shape={out}, broadcast_dimensions={dims})")


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def reshape(draw, prim):
    shape = draw(shapes(), label="shape")
    rest, new = _size(shape), []
    for _ in range(draw(st.integers(0, 3), label="new rank - 1")):
        d = draw(st.sampled_from(_divisors(rest)))
        new.append(d)
        rest //= d
    if rest != 1 or draw(st.booleans(), label="keep trailing 1"):
        new.append(rest)
    new = tuple(draw(st.permutations(new), label="new shape"))
    assume(new != shape)
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.reshape(x, new), [x], f"reshape(x: {shape}, new_sizes={new})")


@st.composite
def transpose(draw, prim):
    shape = draw(shapes(min_dims=2, max_dims=4, max_side=3), label="shape")
    perm = tuple(draw(st.permutations(range(len(shape))), label="permutation"))
    assume(perm != tuple(range(len(shape))))
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.transpose(x, perm), [x],
                   f"transpose(x: {shape}, permutation={perm})")


@st.composite
def squeeze(draw, prim):
    base = draw(shapes(max_dims=2), label="squeezed shape")
    k = draw(st.integers(1, 2), label="size-1 axes")
    where = sorted(draw(st.permutations(range(len(base) + k)), label="positions")[:k])
    shape = list(base)
    for w in where:
        shape.insert(w, 1)
    shape = tuple(shape)
    dims = tuple(w - len(shape) if draw(st.booleans(), label="negative") else w for w in where)
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.squeeze(x, dims), [x], f"squeeze(x: {shape}, dimensions={dims})")


@st.composite
def expand_dims(draw, prim):
    shape = draw(shapes(), label="shape")
    k = draw(st.integers(1, 2), label="new axes")
    out_nd = len(shape) + k
    dims = draw(st.permutations(range(out_nd)), label="dims")[:k]
    dims = tuple(d - out_nd if draw(st.booleans(), label="negative") else d for d in dims)
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.expand_dims(x, dims), [x],
                   f"expand_dims(x: {shape}, dimensions={dims})")


@st.composite
def concatenate(draw, prim):
    base = list(draw(shapes(min_dims=1, max_side=3), label="shape"))
    axis = draw(st.integers(0, len(base) - 1), label="axis")
    n = draw(st.integers(1, 3), label="arguments")
    arg_shapes = []
    for _ in range(n):
        base[axis] = draw(st.integers(0, 3), label="size along axis")
        arg_shapes.append(tuple(base))
    # operands are the arguments in a drawn order, some repeated (at least two operands)
    order = draw(st.permutations(range(n))) + draw(
        st.lists(st.integers(0, n - 1), min_size=max(0, 2 - n), max_size=2), label="repeats")
    order = tuple(draw(st.permutations(order), label="order"))
    assume(sum(arg_shapes[i][axis] for i in order) * _size(base) // max(base[axis], 1)
           <= MAX_SIZE)
    args = _sample(draw, [real] * n, arg_shapes)
    return Example(lambda *xs: S.concatenate([xs[i] for i in order], axis), args,
                   f"concatenate(shapes {arg_shapes}, operands {order}, dimension={axis})")


@st.composite
def rev(draw, prim):
    shape = draw(shapes(min_dims=1), label="shape")
    dims = tuple(draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True),
                      label="dims"))
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.rev(x, dims), [x], f"rev(x: {shape}, dimensions={dims})")


@st.composite
def pad(draw, prim):
    shape = draw(shapes(min_dims=1, max_dims=2, min_side=0, max_side=3), label="shape")
    config = []
    for d in shape:
        it = draw(st.integers(0, 2), label="interior")
        full = d + max(d - 1, 0) * it
        lo = draw(st.integers(-min(full, 2), 2), label="lo")
        hi = draw(st.integers(-min(full + lo, 2) if full + lo > 0 else 0, 2), label="hi")
        config.append((lo, hi, it))
    config = tuple(config)
    out = tuple(lo + hi + d + max(d - 1, 0) * it for d, (lo, hi, it) in zip(shape, config))
    assume(_size(out) <= MAX_SIZE and any(c != (0, 0, 0) for c in config))
    traced = draw(st.sampled_from(["operand and value", "operand", "value"]), label="traced")
    x, v = _sample(draw, [real, real], [shape, ()])
    desc = f"pad(x: {shape}, padding_config={config}; traced: {traced})"
    if traced == "operand":
        v = np.asarray(v)
        return Example(lambda x: S.pad(x, v, config), [x], desc)
    if traced == "value":
        return Example(lambda v: S.pad(x, v, config), [v], desc)
    return Example(lambda x, v: S.pad(x, v, config), [x, v], desc)


@st.composite
def iota(draw, prim):
    # iota has no inputs: multiply it into an argument (its derivative is the iota itself)
    shape = draw(shapes(min_dims=1), label="shape")
    dim = draw(st.integers(0, len(shape) - 1), label="dimension")
    dtype = draw(st.sampled_from([np.float64, np.int32]), label="dtype")
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: x * S.iota(dtype, shape, dim).astype(np.float64), [x],
                   f"x * iota({np.dtype(dtype).name}, {shape}, dimension={dim})")


# --- indexing --------------------------------------------------------------------------------

@st.composite
def slice_(draw, prim):
    shape = draw(shapes(min_dims=1, min_side=0, max_side=5), label="shape")
    start, limit, strides = [], [], []
    for d in shape:
        lo = draw(st.integers(0, d), label="start")
        start.append(lo)
        limit.append(draw(st.integers(lo, d), label="limit"))
        strides.append(draw(st.integers(1, 3), label="stride"))
    start, limit, strides = tuple(start), tuple(limit), tuple(strides)
    assume(start != (0,) * len(shape) or limit != shape or strides != (1,) * len(shape))
    [x] = _sample(draw, [real], [shape])
    return Example(lambda x: S.slice_(x, start, limit, strides), [x],
                   f"slice(x: {shape}, start={start}, limit={limit}, strides={strides})")


def _indices(lo, hi):
    return lambda rng, shape: rng.integers(lo, hi, shape)


@st.composite
def _take_along(draw):
    """An operand shape, an axis, an index shape and an index sampler (sometimes with indices
    out of range, which both primitives clamp)."""
    shape = draw(shapes(min_dims=1, max_dims=3, max_side=4), label="operand shape")
    axis = draw(st.integers(0, len(shape) - 1), label="axis")
    idx_shape = draw(shapes(min_dims=0, max_dims=2, max_side=3), label="index shape")
    n = shape[axis]
    clamped = draw(st.booleans(), label="out-of-range indices")
    sampler = _indices(-2, n + 2) if clamped else _indices(0, n)
    return shape, axis, idx_shape, sampler


def _arranged(draw, fn_of_named, named):
    """(fn, args) taking the named arguments in a drawn order; integer index arrays are either
    arguments (traced: cast back with astype inside, as the case rows do) or closed over."""
    names = list(named)
    order = draw(st.permutations(names), label="argument order")
    closed = "i" in named and draw(st.booleans(), label="indices closed over")
    if closed:
        order = [k for k in order if k != "i"]

    def fn(*xs):
        vals = dict(zip(order, xs))
        if closed:
            vals["i"] = named["i"]
        else:
            vals["i"] = vals["i"].astype(np.intp)
        return fn_of_named(**vals)

    return fn, [named[k] for k in order], f"arguments {order}" + (
        ", indices closed over" if closed else "")


@st.composite
def gather(draw, prim):
    shape, axis, idx_shape, sampler = draw(_take_along())
    out = shape[:axis] + idx_shape + shape[axis + 1:]
    assume(_size(out) <= MAX_SIZE)
    x, i = _sample(draw, [real, sampler], [shape, idx_shape])
    fn, args, how = _arranged(draw, lambda x, i: I.gather(x, i, axis=axis), {"x": x, "i": i})
    return Example(fn, args, f"gather(x: {shape}, indices {i.tolist()}, axis={axis}; {how})")


@st.composite
def scatter_add(draw, prim):
    shape, axis, idx_shape, sampler = draw(_take_along())
    upd = shape[:axis] + idx_shape + shape[axis + 1:]
    assume(_size(upd) <= MAX_SIZE)
    x, i, u = _sample(draw, [real, sampler, real], [shape, idx_shape, upd])
    fn, args, how = _arranged(draw, lambda x, i, u: I.scatter_add(x, i, u, axis=axis),
                              {"x": x, "i": i, "u": u})
    return Example(fn, args,
                   f"scatter_add(x: {shape}, indices {i.tolist()}, updates: {upd}, axis={axis}; "
                   f"{how})")


# --- linalg ----------------------------------------------------------------------------------

@st.composite
def dot_general(draw, prim):
    side = st.integers(1, 3)
    batch = draw(st.lists(side, max_size=2), label="batch sizes")
    contract = draw(st.lists(side, max_size=2), label="contracting sizes")
    lfree = draw(st.lists(side, max_size=2), label="lhs free sizes")
    rfree = draw(st.lists(side, max_size=2), label="rhs free sizes")
    nb, nc = len(batch), len(contract)
    # logical axes (batch..., contracting..., free...) placed by a drawn permutation per operand
    lperm = draw(st.permutations(range(nb + nc + len(lfree))), label="lhs layout")
    rperm = draw(st.permutations(range(nb + nc + len(rfree))), label="rhs layout")
    lsizes, rsizes = batch + contract + lfree, batch + contract + rfree
    lshape = tuple(lsizes[p] for p in lperm)
    rshape = tuple(rsizes[p] for p in rperm)
    out = batch + lfree + rfree
    assume(max(_size(lshape), _size(rshape), _size(out)) <= MAX_SIZE)
    lpos, rpos = {p: i for i, p in enumerate(lperm)}, {p: i for i, p in enumerate(rperm)}
    lb, rb = tuple(lpos[k] for k in range(nb)), tuple(rpos[k] for k in range(nb))
    lc = tuple(lpos[k] for k in range(nb, nb + nc))
    rc = tuple(rpos[k] for k in range(nb, nb + nc))
    dn = ((lc, rc), (lb, rb))
    a, b = _sample(draw, [real, real], [lshape, rshape])
    return Example(lambda a, b: L.dot_general(a, b, dn), [a, b],
                   f"dot_general(lhs: {lshape}, rhs: {rshape}, dimension_numbers={dn})")


# --- sorting ---------------------------------------------------------------------------------

@st.composite
def sort(draw, prim):
    from functrans.primitives import sorting as P
    shape = draw(shapes(min_dims=1), label="shape")
    axis = draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    [x] = _sample(draw, [real], [shape])
    assume(len(np.unique(x)) == x.size)   # distinct values: sort is smooth there
    return Example(lambda x: P.sort(x, axis), [x], f"sort(x: {shape}, axis={axis})")


# --- square matrices -------------------------------------------------------------------------

def _square_operand(prim):
    """The sampler of the first operand of `prim`'s rows (well-conditioned matrices)."""
    return next(c.domain[0] if isinstance(c.domain, list) else c.domain for c in _rows(prim))


@st.composite
def square_matrices(draw, prim):
    from functrans.primitives import square_matrices as P
    batch = draw(shapes(min_dims=0, max_dims=2, max_side=3), label="stack shape")
    n = draw(st.integers(1, 3), label="n")
    shape = (*batch, n, n)
    assume(_size(shape) <= MAX_SIZE)
    if prim == "solve":
        k = draw(st.integers(1, 3), label="k")
        a, b = _sample(draw, [_square_operand(prim), real], [shape, (*batch, n, k)])
        return Example(P.solve, [a, b], f"solve(a: {shape}, b: {b.shape})")
    [a] = _sample(draw, [_square_operand(prim)], [shape])
    if prim == "cholesky":
        # the rule symmetrises the tangent (as JAX) while the impl reads the lower triangle:
        # differentiate through the symmetric part, which both see alike
        return Example(lambda a: P.cholesky((a + np.swapaxes(a, -1, -2)) * 0.5), [a],
                       f"cholesky(sym(a): {shape})")
    return Example(getattr(P, prim), [a], f"{prim}(a: {shape})")


@st.composite
def qr_matrices(draw, prim):
    from functrans.primitives.decompositions import qr
    batch = draw(shapes(min_dims=0, max_dims=1, max_side=2), label="stack shape")
    n = draw(st.integers(1, 3), label="n")
    m = draw(st.integers(n, 4), label="m")   # the rule needs rows >= columns
    shape = (*batch, m, n)
    [a] = _sample(draw, [_square_operand(prim)], [shape])
    return Example(qr, [a], f"qr(a: {shape})")


@st.composite
def svd_matrices(draw, prim):
    from functrans.primitives.decompositions import svd
    batch = draw(shapes(min_dims=0, max_dims=1, max_side=2), label="stack shape")
    m, n = draw(st.integers(1, 4), label="m"), draw(st.integers(1, 4), label="n")
    shape = (*batch, m, n)
    [a] = _sample(draw, [_square_operand(prim)], [shape])

    def sign_free(a):   # U and V^T are unique up to a sign per singular pair
        s, u, vt = svd(a)
        return s, u @ vt, u * u, vt * vt
    return Example(sign_free, [a], f"svd(a: {shape})")


def _eigenvalue_parts(a):
    """eig's eigenvalues as real and imaginary parts (smooth where they are simple; the
    eigenvectors' derivative is checked on the case table's separated spectra)."""
    from functrans.primitives import decompositions as D
    from functrans.primitives import elementwise as E
    w, = D.eig(a, compute_v=False)
    return E.real(w), E.imag(w)


@st.composite
def decomposition_matrices(draw, prim):
    """eigh, pinv, lu, triangular_solve, expm, sqrtm and matrix_function_frechet on stacks
    drawn from their rows' domains (cases_decompositions.py), through what each determines."""
    from functrans.primitives import decompositions as D
    from functrans.primitives import matrix_functions as MF
    from functrans.primitives import square_matrices as P
    from primitives.cases_decompositions import sign_free_eigh
    batch = draw(shapes(min_dims=0, max_dims=1, max_side=2), label="stack shape")
    n = draw(st.integers(1, 3), label="n")
    m = draw(st.integers(1, 4), label="m") if prim == "pinv" else n
    shape = (*batch, m, n)
    [a] = _sample(draw, [_square_operand(prim)], [shape])
    if prim == "triangular_solve":
        k = draw(st.integers(1, 2), label="k")
        [b] = _sample(draw, [real], [(*batch, n, k)])
        flags = {f: draw(st.booleans(), label=f)
                 for f in ("lower", "transpose_a", "unit_diagonal")}
        return Example(lambda a, b: P.triangular_solve(a, b, **flags), [a, b],
                       f"triangular_solve(a: {shape}, b: {b.shape}, {flags})")
    if prim == "matrix_function_frechet":
        [e] = _sample(draw, [real], [shape])
        return Example(lambda a, e: MF.frechet(a, e, fn="expm"), [a, e],
                       f"frechet(expm, a: {shape})")
    fns = {"eigh": sign_free_eigh, "pinv": lambda a: D.pinv(a, rcond=1e-15),
           "eig": _eigenvalue_parts,
           "lu": lambda a: D.lu(a)[0], "expm": MF.expm,
           "sqrtm": lambda a: MF.sqrtm((a + np.swapaxes(a, -1, -2)) * 0.5)}
    return Example(fns[prim], [a], f"{prim}(a: {shape})")


# --- fft: each transform type over drawn trailing axes and lengths -----------------------------

def _complex_plane(rng, shape):
    return rng.uniform(-2.0, 2.0, shape) + 1j * rng.uniform(-2.0, 2.0, shape)


@st.composite
def fft_transforms(draw, prim):
    from functrans.primitives.fft import fft
    fft_type = draw(st.sampled_from(["fft", "ifft", "rfft", "irfft"]), label="fft_type")
    lengths = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=2), label="lengths"))
    lead = draw(shapes(min_dims=0, max_dims=1, max_side=2), label="leading axes")
    minor = (*lengths[:-1], lengths[-1] // 2 + 1) if fft_type == "irfft" else lengths
    shape = (*lead, *minor)
    assume(_size((*lead, *lengths)) <= MAX_SIZE)
    [x] = _sample(draw, [real if fft_type == "rfft" else _complex_plane], [shape])
    return Example(lambda x: fft(x, fft_type, lengths), [x],
                   f"fft(x: {shape}, fft_type={fft_type!r}, fft_lengths={lengths})")


# --- the table of properties, and the tests --------------------------------------------------

PROPERTIES = {
    **{p: elementwise for p in DIFFERENTIABLE if "elementwise" in REGISTRY[p].props
       and any(not c.fixed_shapes for c in _rows(p))},
    **{p: reduction for p in _REDUCE}, **{p: scan for p in _SCAN},
    "broadcast_in_dim": broadcast_in_dim, "reshape": reshape, "transpose": transpose,
    "squeeze": squeeze, "expand_dims": expand_dims, "concatenate": concatenate, "rev": rev,
    "pad": pad, "iota": iota,
    "slice": slice_, "gather": gather, "scatter_add": scatter_add,
    "dot_general": dot_general, "sort": sort,
    **{p: square_matrices for p in ("solve", "inv", "det", "slogdet", "cofactor",
                                              "cholesky")},
    "svd": svd_matrices, "qr": qr_matrices, "fft": fft_transforms,
    **{p: decomposition_matrices for p in ("eigh", "eig", "pinv", "lu", "triangular_solve",
                                           "expm", "sqrtm", "matrix_function_frechet")},
}

# examples per primitive where the profile's count would be slow (None: the profile's)
MAX_EXAMPLES: dict[str, int] = {}


def _binds(fn, args, prim):
    closed = ft.make_jaxpr(fn)(*args)
    return prim in {e.primitive.name for e in closed.jaxpr.eqns}


@pytest.mark.parametrize("prim", sorted(set(PROPERTIES) & set(DIFFERENTIABLE)))
def test_derivatives_match_finite_differences(prim):
    limit = MAX_EXAMPLES.get(prim)
    conf = settings(max_examples=min(limit, settings().max_examples)) if limit else settings()

    @conf
    @given(PROPERTIES[prim](prim), st.integers(0, 2**16 - 1))
    def check(ex, seed):
        assume(_binds(ex.fn, ex.args, prim))  # wrappers skip no-op applications
        check_grads(ex.fn, ex.args, order=2, modes=("fwd", "rev"), atol=ex.atol,
                    rtol=ex.rtol, seed=seed)

    check()


def test_every_differentiable_primitive_has_a_property():
    missing = set(DIFFERENTIABLE) - set(PROPERTIES)
    assert not missing, (
        f"differentiable primitives without a property in test_rule_properties.py: "
        f"{sorted(missing)} (elementwise ones need a differentiable row in cases_*.py whose "
        "shapes are not fixed; the others a strategy in PROPERTIES)")
