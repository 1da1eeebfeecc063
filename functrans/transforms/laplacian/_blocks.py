"""The carried gradient blocks: what the second-order slot holds, the directions carried, a
block kept factored as scale * base (`_Scaled`) and the block arithmetic the rules share.
"""

from __future__ import annotations


import numpy as np

from functrans.core.avals import get_aval, is_float, ndim_of, shape_of
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import add, mul
from functrans.primitives.shape_ops import slice_
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape_ops import concatenate
from functrans.primitives.layout import broadcast_to, moveaxis, reshape
from functrans.transforms.jvp import jvp_flat
from functrans.transforms.vmap import batch_flat


_SUM, _DIAG, _FIRST = "sum", "diag", "first"       # what the second-order slot holds


class _Config:
    """n gradient directions; second-order part along the directions in `sel` (all if None),
    m of them, summed (mode "sum"), kept per direction ("diag"), or not carried ("first")."""

    __slots__ = ("n", "mode", "sel", "m")

    def __init__(self, n: int, mode: str, sel=None):
        self.n = n
        self.mode = mode
        self.sel = sel
        self.m = n if sel is None else len(sel)


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
