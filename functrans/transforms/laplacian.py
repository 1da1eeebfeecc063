"""Forward Laplacian: one forward pass carrying (value, gradient block, second-order part).

Collapsed second-order Taylor mode. For inputs x of total size n, every value v of the program
is carried as its primal, its gradient block `G` = dv/dx (shape (n, *v.shape)) and either its
Laplacian `L` = sum_k d2v/dx_k^2 (shape v.shape) or, for `hessian_diag`, the per-direction
block `D` (shape (n, *v.shape)). A primitive y = p(x_1, ..., x_m) maps them by

    G_y[k] = J_p G[k]                      (the JVP rule, vmapped over the n directions)
    L_y    = J_p L + sum_k D2p[G[k], G[k]]  (D2p: the second directional derivative)

so the whole rule comes from the primitive's JVP rule, with no new derivative formula. The
families read from the table make it cheap: linear primitives (second term zero), elementwise
ones in a single varying operand (L_y = f' L + f'' sum_k G_k^2, f' and f'' from nested JVPs with
unit tangents), bilinear ones (second term 2 sum_k p(G_a[k], G_b[k])). Anything else takes the
generic rule (jvp of jvp, vmapped over the directions), which is exact but does n times the
work. Values that do not depend on x (constants, network parameters) carry nothing, so
`grad` of a residual loss with respect to parameters differentiates a short program.

A gradient block that does not depend on x (that of an affine function of x: a network's first
pre-activation) is kept apart from the factor an elementwise map scales it by (`_Scaled`), so
the next product with an x-independent weight folds the factor in last: (s * B) W = s (B * W),
one product over the points in place of a broadcast multiply of the block and a product.

>>> import functrans as ft, functrans.numpy as fnp
>>> from functrans.transforms.laplacian import laplacian
>>> float(laplacian(lambda x: fnp.sum(x * x * x))(fnp.ones(3)))
18.0
"""

from __future__ import annotations

import functools

import numpy as np

from functrans.core.avals import get_aval, is_float, ndim_of, shape_of
from functrans.core.ownership import unaliased, unaliased_tree
from functrans.core.pytree_fun import as_value, normalize_argnums
from functrans.core.symbolic import Zero
from functrans.core.trace import Trace, Tracer, new_main
from functrans.errors import ShapeError
from functrans.primitives.elementwise import add, mul
from functrans.primitives.indexing import slice_
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.shape_ops import broadcast_to, concatenate, moveaxis, reshape
from functrans.transforms.jvp import jvp_flat
from functrans.transforms.vjp import check_differentiable
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["laplacian", "hessian_diag", "divergence", "value_grad_and_laplacian",
           "value_grad_and_hessian_diag"]

_SUM, _DIAG, _FIRST = "sum", "diag", "first"       # what the second-order slot holds


# --- the tracer and its trace ----------------------------------------------------------------

class LaplacianTracer(Tracer):
    """primal, grad (n, *shape) and second (shape, or (n, *shape) in diag mode); None = zero."""

    __slots__ = ("primal", "grad", "second", "_aval")

    def __init__(self, trace, primal, grad, second):
        self._trace = trace
        self.primal = primal
        self.grad = grad
        self.second = second
        self._aval = None

    @property
    def aval(self):
        if self._aval is None:
            self._aval = get_aval(self.primal)
        return self._aval

    def concrete_value(self):
        p = self.primal
        return p.concrete_value() if isinstance(p, Tracer) else p


class _Config:
    """n gradient directions; second-order part along the directions in `sel` (all if None),
    m of them, summed (mode "sum"), kept per direction ("diag"), or not carried ("first")."""

    __slots__ = ("n", "mode", "sel", "m")

    def __init__(self, n: int, mode: str, sel=None):
        self.n = n
        self.mode = mode
        self.sel = sel
        self.m = n if sel is None else len(sel)


class LaplacianTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return LaplacianTracer(self, val, None, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        xs = [t.primal for t in tracers]
        gs = [t.grad for t in tracers]
        ss = [t.second for t in tracers]
        if all(g is None for g in gs) and all(s is None for s in ss):
            out = prim.bind(*xs, **params)
            if prim.multiple_results:
                return [LaplacianTracer(self, o, None, None) for o in out]
            return LaplacianTracer(self, out, None, None)
        out_avals = prim.abstract_eval(*[get_aval(x) for x in xs], **params)
        out_avals = out_avals if prim.multiple_results else [out_avals]
        if not any(is_float(a.dtype) for a in out_avals):  # comparisons, integer ops
            out = prim.bind(*xs, **params)
            if prim.multiple_results:
                return [LaplacianTracer(self, o, None, None) for o in out]
            return LaplacianTracer(self, out, None, None)
        cfg = self.main.global_data
        carrying = [i for i, g in enumerate(gs) if g is not None]
        rule = _rule_for(prim, carrying)
        if rule is _linear_rule and all(_fixed(gs[i]) for i in carrying):
            outs = rule(prim, params, xs, [None if g is None else g.base for g in gs], ss, cfg)
            outs = [(y, None if g is None else _Scaled(None, g), s)      # still fixed
                    for y, g, s in outs]
        elif rule is _elementwise_rule or (rule is _linear_rule and _keeps_scale(prim, gs)):
            outs = _elementwise_rule(prim, params, xs, gs, ss, cfg)
        elif rule is _linear_rule and _folds_scale(prim, params, xs, gs):
            outs = [_fold_scale(prim, params, xs, gs, ss, cfg)]
        else:
            outs = rule(prim, params, xs, [_dense(g) for g in gs], ss, cfg)
        tracers_out = [LaplacianTracer(self, y, g, s) for y, g, s in outs]
        return tracers_out if prim.multiple_results else tracers_out[0]


class _Scaled:
    """A gradient block scale * base (broadcast to (n, *shape)): `base` does not depend on x,
    `scale` (None: 1) is the product of the derivatives of the elementwise maps applied since
    x entered linearly. Rules see `.dense()` unless they use the factored form."""

    __slots__ = ("scale", "base", "shape")

    def __init__(self, scale, base, shape=None):
        self.scale = scale
        self.base = base
        self.shape = shape

    def dense(self):
        if self.scale is None:
            return self.base
        g = mul(self.scale, self.base)
        return broadcast_to(g, (shape_of(self.base)[0], *self.shape))


def _dense(g):
    return g.dense() if type(g) is _Scaled else g


def _fixed(g) -> bool:
    """Whether the block `g` does not depend on x."""
    return type(g) is _Scaled and g.scale is None


def _keeps_scale(prim, gs) -> bool:
    """A linear elementwise map (x * c, -x) of one scaled block: it scales the scale."""
    carrying = [g for g in gs if g is not None]
    return "elementwise" in prim.props and not prim.multiple_results and len(carrying) == 1 \
        and type(carrying[0]) is _Scaled and carrying[0].scale is not None


def _folds_scale(prim, params, xs, gs) -> bool:
    """A contraction (the row's `contraction` fact) of a 1-d value whose block is scale * base
    with a 2-d operand that does not depend on x, over the value's one axis (an MLP layer)."""
    contraction = prim.facts.get("contraction")
    if contraction is None or len(xs) != 2:
        return False
    i = 0 if gs[0] is not None else 1
    g, w = gs[i], xs[1 - i]
    if gs[1 - i] is not None or type(g) is not _Scaled or g.scale is None:
        return False
    (lc, rc), (lb, rb) = contraction(params)
    v = shape_of(xs[i])
    return not lb and len(v) == 1 and ndim_of(w) == 2 and ndim_of(g.scale) == 1 \
        and shape_of(g.base)[1:] == v


def _fold_scale(prim, params, xs, gs, ss, cfg):
    """(s * B) W = s (B * W): M[j, (k, l)] = B[k, j] W[j, l] does not depend on x (nor, under
    vmap, on the point), so the block of the output is one product of s with M."""
    i = 0 if gs[0] is not None else 1
    g, w = gs[i], xs[1 - i]
    (lc, rc), _ = prim.facts["contraction"](params)
    c = (rc if i == 0 else lc)[0]                     # the weight's contracted axis
    w = w if c == 0 else moveaxis(w, 1, 0)           # (j, l)
    n, (j, l) = shape_of(g.base)[0], shape_of(w)
    m = mul(reshape(moveaxis(g.base, 1, 0), (j, n, 1)), reshape(w, (j, 1, l)))   # (j, n, l)
    scale = broadcast_to(g.scale, (j,))
    g_out = dot_general(scale, m, (((0,), (0,)), ((), ())))                     # (n, l)
    y = prim.bind(*xs, **params)
    s_out = None
    if ss[i] is not None:
        _, (s_out,) = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    return y, g_out, s_out


# --- choosing a rule from the table's facts --------------------------------------------------

def _is_bilinear(prim) -> bool:
    return "bilinear" in prim.props


def _second_order_vanishes(prim, carrying) -> bool:
    """Whether p is linear in the operands that vary (those in `carrying`) jointly: the
    row's props and its `linear_operands` fact say (functrans/primitives/registry.py)."""
    if not carrying:
        return True
    if "linear" not in prim.props:
        return False
    only = prim.facts.get("linear_operands")
    if only is not None:
        return set(carrying) <= set(only)
    if _is_bilinear(prim):
        return len(carrying) == 1
    return True


def _rule_for(prim, carrying):
    if _second_order_vanishes(prim, carrying):
        return _linear_rule
    if "elementwise" in prim.props and not prim.multiple_results and len(carrying) == 1:
        return _elementwise_rule
    if _is_bilinear(prim) and len(carrying) == 2 and not prim.multiple_results:
        return _bilinear_rule
    return _generic_rule


# --- helpers ---------------------------------------------------------------------------------

def _bind_list(prim, args, params):
    out = prim.bind(*args, **params)
    return list(out) if prim.multiple_results else [out]


def _materialize(t, aval):
    if type(t) is Zero:
        return broadcast_to(np.zeros((), aval.dtype), aval.shape)
    return t


def _push(prim, params, xs, ts, n=None):
    """(primal outputs, J_p t per output or None): t stacked along a leading axis of size n
    (vmapped over it) when n is given, else one tangent per operand; None means zero."""
    idx = [i for i, t in enumerate(ts) if t is not None]
    zero_avals = [Zero(get_aval(x)) for x in xs]
    n_primals = []
    out_nonzero = []

    def fun(*t_nz):
        tangents = list(zero_avals)
        for i, t in zip(idx, t_nz):
            tangents[i] = t
        p_out, t_out = jvp_flat(lambda *ys: _bind_list(prim, ys, params), xs, tangents,
                                name="laplacian (first order)")
        n_primals[:] = [len(p_out)]
        out_nonzero[:] = [type(t) is not Zero and is_float(get_aval(p).dtype)
                          for p, t in zip(p_out, t_out)]
        return [*p_out, *[t for t, nz in zip(t_out, out_nonzero) if nz]]

    t_in = [ts[i] for i in idx]
    if n is None:
        res = fun(*t_in)
    else:
        res = batch_flat(fun, t_in, [0] * len(idx),
                         lambda: [None] * n_primals[0] + [0] * sum(out_nonzero), n)
    primals, rest = res[:n_primals[0]], iter(res[n_primals[0]:])
    return primals, [next(rest) if nz else None for nz in out_nonzero]


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return add(a, b)


def _lead_align(g, out_ndim):
    """(n, *s) -> (n, 1, ..., 1, *s) so numpy broadcasting lines s up with an output of rank
    out_ndim from the right, as the elementwise primitive did."""
    extra = out_ndim - (g.ndim - 1)
    if extra <= 0:
        return g
    return reshape(g, (g.shape[0], *(1,) * extra, *g.shape[1:]))


def _sum_sq(g):
    """sum_k G[k]**2 as one contraction over the directions (no (n, *shape) temporary)."""
    rest = tuple(range(1, ndim_of(g)))
    return dot_general(g, g, (((0,), (0,)), (rest, rest)))


def _rows(g, cfg):
    """The gradient rows of the directions the second-order part follows."""
    if cfg.sel is None:
        return g
    tail = shape_of(g)[1:]
    pieces, start = [], None
    for k, j in enumerate(cfg.sel):          # contiguous runs become one slice each
        if start is None:
            start = prev = j
        elif j == prev + 1:
            prev = j
        else:
            pieces.append((start, prev + 1))
            start = prev = j
        if k == len(cfg.sel) - 1:
            pieces.append((start, prev + 1))
    parts = [slice_(g, (a,) + (0,) * len(tail), (b, *tail)) for a, b in pieces]
    return parts[0] if len(parts) == 1 else concatenate(parts, 0)


# --- the rules: each returns [(primal, grad, second)] per output ------------------------------

def _linear_rule(prim, params, xs, gs, ss, cfg):
    """The second directional derivative vanishes: push G (and L or D) through J_p."""
    primals, g_out = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST or all(s is None for s in ss):
        s_out = [None] * len(primals)
    else:
        _, s_out = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    return list(zip(primals, g_out, s_out))


def _elementwise_rule(prim, params, xs, gs, ss, cfg):
    """y = f(x_i) pointwise (other operands fixed): G_y = f' G, L_y = f' L + f'' sum_k G_k^2."""
    i = next(j for j, g in enumerate(gs) if g is not None)
    x = xs[i]
    aval = get_aval(x)
    ones = broadcast_to(np.ones((), aval.dtype), aval.shape)

    def f(z):
        args = list(xs)
        args[i] = z
        return prim.bind(*args, **params)

    def f_and_df(z):
        (y,), (dy,) = jvp_flat(lambda w: [f(w)], [z], [ones], name="laplacian (f')")
        return [y, _materialize(dy, get_aval(y))]

    if cfg.mode == _FIRST:
        y, d1 = f_and_df(x)
        d2 = Zero(None)
    else:
        (y, d1), (_, d2) = jvp_flat(f_and_df, [x], [ones], name="laplacian (f'')")
    if not is_float(get_aval(y).dtype):
        return [(y, None, None)]
    out_ndim, out_shape = get_aval(y).ndim, get_aval(y).shape
    g = gs[i]
    if type(g) is _Scaled:              # scale * base: the scale takes the factor d1
        scale = d1 if g.scale is None else mul(d1, g.scale)
        g_out = _Scaled(scale, _lead_align(g.base, out_ndim), out_shape)
    else:
        g_out = broadcast_to(mul(d1, _lead_align(g, out_ndim)), (cfg.n, *out_shape))
    s = ss[i]
    s_out = None
    if s is not None:
        s_out = mul(d1, _lead_align(s, out_ndim) if cfg.mode == _DIAG else s)
    if cfg.mode != _FIRST and type(d2) is not Zero:
        if cfg.mode == _DIAG:
            g_sel = _lead_align(_rows(_dense(g), cfg), out_ndim)
            curv = mul(g_sel, g_sel)
        elif type(g) is _Scaled:    # sum_k (s B_k)^2 = s^2 sum_k B_k^2, summed on the base
            curv = _sum_sq(_rows(g.base, cfg))
            if g.scale is not None:
                curv = mul(mul(g.scale, g.scale), curv)
        else:
            curv = _sum_sq(_rows(g, cfg))
        s_out = _add(s_out, mul(d2, curv))
    if s_out is not None and cfg.mode == _DIAG:
        s_out = broadcast_to(s_out, (cfg.m, *get_aval(y).shape))
    elif s_out is not None:
        s_out = broadcast_to(s_out, get_aval(y).shape)
    return [(y, g_out, s_out)]


def _bilinear_rule(prim, params, xs, gs, ss, cfg):
    """y = B(a, b): L_y = B(L_a, b) + B(a, L_b) + 2 sum_k B(G_a[k], G_b[k])."""
    (y,), (g_out,) = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST:
        return [(y, g_out, None)]
    s_out = None
    if any(s is not None for s in ss):
        _, (s_out,) = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    cross = batch_flat(lambda a, b: [prim.bind(a, b, **params)],
                       [_rows(g, cfg) for g in gs], [0, 0], [0], cfg.m)[0]
    if cfg.mode == _SUM:
        cross = reduce_sum(cross, (0,))
    cross = add(cross, cross)
    return [(y, g_out, _add(s_out, cross))]


def _generic_rule(prim, params, xs, gs, ss, cfg):
    """Any primitive with a JVP rule: the second term is sum_k jvp(jvp(p, G_k), G_k)."""
    primals, g_out = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST:
        return [(y, g, None) for y, g in zip(primals, g_out)]
    s_out = [None] * len(primals)
    if any(s is not None for s in ss):
        _, s_out = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    idx = [i for i, g in enumerate(gs) if g is not None]
    float_out = [j for j, y in enumerate(primals) if is_float(get_aval(y).dtype)]
    out_avals = [get_aval(y) for y in primals]

    def second_directional(*g_nz):
        vs = [Zero(get_aval(x)) for x in xs]
        for i, g in zip(idx, g_nz):
            vs[i] = g

        def first_order(*ys):
            _, t = jvp_flat(lambda *zs: _bind_list(prim, zs, params), ys, vs,
                            name="laplacian (generic, inner)")
            return [_materialize(t[j], out_avals[j]) for j in float_out]

        _, t2 = jvp_flat(first_order, xs, vs, name="laplacian (generic, outer)")
        return [_materialize(t, out_avals[j]) for t, j in zip(t2, float_out)]

    curv = batch_flat(second_directional, [_rows(gs[i], cfg) for i in idx], [0] * len(idx),
                      [0] * len(float_out), cfg.m)
    s_out = list(s_out)
    for j, c in zip(float_out, curv):
        s_out[j] = _add(s_out[j], reduce_sum(c, (0,)) if cfg.mode == _SUM else c)
    return [(y, g if j in float_out else None, s if j in float_out else None)
            for j, (y, g, s) in enumerate(zip(primals, g_out, s_out))]


# --- running a function under the trace ------------------------------------------------------

def _basis(leaves):
    """Gradient blocks of the inputs: identity rows over their concatenated entries."""
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    n = sum(sizes)
    eye = np.eye(n, dtype=np.result_type(*[a.dtype for a in avals]))
    out, start = [], 0
    for a, s in zip(avals, sizes):
        out.append(np.ascontiguousarray(eye[:, start:start + s]).reshape((n, *a.shape))
                   .astype(a.dtype))
        start += s
    return out, n


def _selection(indices, n, fname):
    if indices is None:
        return None
    sel = tuple(int(i) for i in np.ravel(indices))
    if not sel or len(set(sel)) != len(sel) or any(not 0 <= i < n for i in sel):
        raise ValueError(f"{fname}: indices={indices!r} must be distinct flat indices in "
                         f"[0, {n}) of the differentiated inputs (all of argnums' entries, "
                         "concatenated in order).")
    return None if sel == tuple(range(n)) else sel


def _forward(f, args, argnums, mode, fname, indices=None):
    """Run f under the trace; returns (results, out_tree, in_leaves, in_tree, n, sel)."""
    nums = normalize_argnums(argnums, len(args), fname)
    dyn = [args[i] for i in nums]
    check_differentiable(dyn, nums, fname)
    in_leaves, in_tree = tree_flatten(tuple(dyn))
    in_leaves = [as_value(x, fname) for x in in_leaves]
    basis, n = _basis(in_leaves)
    if n == 0:
        raise ShapeError(f"{fname}: the arguments at argnums={argnums!r} have no entries (size "
                         "0); there is nothing to differentiate with respect to.")
    sel = _selection(indices, n, fname)
    with new_main(LaplacianTrace, _Config(n, mode, sel), name=fname) as main:
        trace = main.trace
        ins = [LaplacianTracer(trace, x, _Scaled(None, g), None)
               for x, g in zip(in_leaves, basis)]
        full = list(args)
        for i, a in zip(nums, tree_unflatten(in_tree, ins)):
            full[i] = a
        out = f(*full)
        out_leaves, out_tree = tree_flatten(out)
        outs = [trace.full_raise(as_value(o, fname)) for o in out_leaves]
        res = [(o.primal, _dense(o.grad), o.second) for o in outs]
    return res, out_tree, in_leaves, in_tree, n, sel


def _zeros(shape, dtype):
    return broadcast_to(np.zeros((), dtype), tuple(shape))


def _per_input(block, out_shape, dtype, in_leaves, in_tree, argnums):
    """Split an (n, *out_shape) block into out_shape + in_shape pieces, one per input leaf,
    packed like a Jacobian (a single array when argnums is an int)."""
    n = sum(get_aval(x).size for x in in_leaves)
    if block is None:
        block = _zeros((n, *out_shape), dtype)
    block = moveaxis(block, 0, len(out_shape))           # (*out_shape, n)
    pieces, start = [], 0
    for x in in_leaves:
        a = get_aval(x)
        piece = block if a.size == n else slice_(
            block, (0,) * len(out_shape) + (start,), (*out_shape, start + a.size))
        pieces.append(reshape(piece, (*out_shape, *a.shape)))
        start += a.size
    tree = tree_unflatten(in_tree, pieces)
    return tree[0] if isinstance(argnums, int) else tree


def value_grad_and_laplacian(f, argnums=0, *, indices=None):
    """(f(x), gradient of f, Laplacian of f) from one forward pass.

    The gradient is laid out like a Jacobian (output shape + input shape); the Laplacian has
    the output's shape (each output entry's Laplacian). With several arguments in argnums or a
    pytree argument, the Laplacian sums over all their entries; `indices` (flat positions in
    those entries, concatenated in argnums order) restricts it to some of them, e.g. the
    spatial Laplacian of u(t, x) beside the full gradient (u_t included).

    >>> import functrans.numpy as fnp
    >>> u, du, lap = value_grad_and_laplacian(lambda x: fnp.sum(x * x))(fnp.ones(2))
    >>> float(u), du.tolist(), float(lap)
    (2.0, [2.0, 2.0], 4.0)
    """
    @functools.wraps(f)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, _, _ = _forward(
            f, args, argnums, _SUM, "value_grad_and_laplacian", indices)
        vals, grads, laps = [], [], []
        for y, g, s in res:
            a = get_aval(y)
            vals.append(y)
            grads.append(_per_input(g, a.shape, a.dtype, in_leaves, in_tree, argnums))
            laps.append(_zeros(a.shape, a.dtype) if s is None else s)
        return unaliased_tree((tree_unflatten(out_tree, vals), tree_unflatten(out_tree, grads),
                               tree_unflatten(out_tree, laps)), args)

    return wrapped


def laplacian(f, argnums=0, *, indices=None):
    """The Laplacian of f (sum of unmixed second derivatives) by one forward pass; `indices`
    restricts the sum to some input entries (see value_grad_and_laplacian).

    Composes with vmap (over collocation points), grad (with respect to parameters) and jit.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> lap = laplacian(lambda x: fnp.sin(x[0]) * fnp.exp(x[1]))
    >>> round(float(lap(fnp.array([0.5, 0.0]))), 12)  # -sin(x)e^y + sin(x)e^y
    0.0
    """
    vgl = value_grad_and_laplacian(f, argnums, indices=indices)

    @functools.wraps(f)
    def wrapped(*args):
        return vgl(*args)[2]

    return wrapped


def value_grad_and_hessian_diag(f, argnums=0, *, indices=None):
    """(f(x), gradient, Hessian diagonal) from one forward pass; the diagonal is laid out like
    the gradient (output shape + input shape): d2f/dx_i^2 at each position i. With `indices`
    (flat positions in the differentiated entries) only those diagonal entries are carried
    and returned, as output shape + (len(indices),), in the order given; the gradient stays
    complete. Burgers' u_t, u_x, u_xx:

    >>> import functrans.numpy as fnp
    >>> u = lambda z: fnp.sin(z[0]) * z[1] * z[1] * z[1]          # z = (t, x)
    >>> _, du, d2u = value_grad_and_hessian_diag(u, indices=[1])(fnp.array([0.0, 2.0]))
    >>> du.tolist(), d2u.tolist()
    ([8.0, 0.0], [0.0])
    """
    @functools.wraps(f)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, _, sel = _forward(
            f, args, argnums, _DIAG, "value_grad_and_hessian_diag", indices)
        vals, grads, diags = [], [], []
        for y, g, s in res:
            a = get_aval(y)
            vals.append(y)
            grads.append(_per_input(g, a.shape, a.dtype, in_leaves, in_tree, argnums))
            if sel is None:
                diags.append(_per_input(s, a.shape, a.dtype, in_leaves, in_tree, argnums))
            else:
                diags.append(_zeros((*a.shape, len(sel)), a.dtype) if s is None
                             else moveaxis(s, 0, a.ndim))
        return unaliased_tree((tree_unflatten(out_tree, vals), tree_unflatten(out_tree, grads),
                               tree_unflatten(out_tree, diags)), args)

    return wrapped


def hessian_diag(f, argnums=0, *, indices=None):
    """The diagonal of the Hessian of f (e.g. u_xx and u_tt separately), by one forward pass.

    >>> import functrans.numpy as fnp
    >>> hessian_diag(lambda x: x[0] * x[0] * x[0] * x[1])(fnp.array([1.0, 2.0])).tolist()
    [12.0, 0.0]
    """
    vgd = value_grad_and_hessian_diag(f, argnums, indices=indices)

    @functools.wraps(f)
    def wrapped(*args):
        return vgd(*args)[2]

    return wrapped


def divergence(F, argnums=0):
    """The divergence of a vector field F: R^n -> R^n (trace of its Jacobian), by one forward
    pass of (value, gradient block).

    >>> import functrans.numpy as fnp
    >>> float(divergence(lambda x: x * x)(fnp.array([1.0, 2.0, 3.0])))
    12.0
    """
    @functools.wraps(F)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, n, _ = _forward(F, args, argnums, _FIRST,
                                                           "divergence")
        sizes = [get_aval(y).size for y, _, _ in res]
        if sum(sizes) != n:
            shapes = [get_aval(y).shape for y, _, _ in res]
            raise ShapeError(
                f"divergence: the field has {sum(sizes)} entries (output shapes {shapes}) but "
                f"its argument has {n}; a divergence needs F: R^n -> R^n. Return one entry per "
                "input entry (same shape as the input).")
        dtype = np.result_type(*[get_aval(y).dtype for y, _, _ in res])
        total, start = None, 0
        for (y, g, _), size in zip(res, sizes):
            if g is not None:
                block = reshape(g, (n, size))
                eye = np.eye(n, dtype=dtype)[:, start:start + size]
                total = _add(total, reduce_sum(mul(block, eye), (0, 1)))
            start += size
        return unaliased([_zeros((), dtype) if total is None else total], in_leaves)[0]

    return wrapped
