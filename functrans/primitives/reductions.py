"""Reductions over axes: the order statistics (reduce_max/min, argmax/min), reduce_prod, the
boolean reductions behind all/any, and the scans cumsum and cumprod. reduce_sum, the transpose
of broadcasting, is a row of functrans/primitives/layout.py (re-exported here)."""

from __future__ import annotations

import math

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.primitive import grad_mode_enabled
from functrans.core.symbolic import Zero
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.ad_control import stop_gradient
from functrans.primitives.elementwise import (add, and_, convert_element_type, div, eq, eq_p,
                                             exp, gt, is_finite, mul, ne, or_, select, sub)
from functrans.primitives.layout import (  # noqa: F401  (reduce_sum, reduce_sum_p re-exported)
    broadcast_in_dim, expand_reduced, linear_jvp, moveaxis, normalize_axes, reduce_batch,
    reduce_sum, reduce_sum_p, reduced_aval, reshape, transpose, zero_jvp)
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import pad, rev, slice_


def _nonempty_reduced_aval(name, what):
    """Shape rule of a reduction with no identity: reducing a size-0 axis is an error."""
    def abstract(x, *, axes):
        out = reduced_aval(x, axes=axes)
        if any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name}: cannot take the {what} over axes {axes} of shape "
                             f"{x.shape}, which include a size-0 axis (no identity). Reduce a "
                             "non-empty axis, or give an initial value (fnp.max(x, initial=v)).")
        return out
    return abstract


# --- reduce_max / reduce_min -----------------------------------------------------------------

def reduce_max(x, axes):
    """The maximum of `x` over `axes`."""
    return reduce_max_p.bind(x, axes=normalize_axes(axes, ndim_of(x)))


def reduce_min(x, axes):
    """The minimum of `x` over `axes`."""
    return reduce_min_p.bind(x, axes=normalize_axes(axes, ndim_of(x)))


def _chooser_jvp(prim, nan_ties=False):
    """The tangent at the chosen entries, averaged over ties (as JAX does): with the location
    mask L = (x == ans), t_out = sum(t * L) / sum(L). `nan_ties`: a NaN answer ties with every
    NaN entry (PyTorch's max() and min() over every element, evenly_distribute_backward),
    where L is all false and t_out NaN in JAX's rule."""
    def jvp(primals, tangents, *, axes):
        x, = primals
        t, = tangents
        ans = prim.bind(x, axes=axes)
        full = expand_reduced(ans, shape_of(x), axes)
        where = eq_p.bind(x, full)
        if nan_ties:
            where = or_(where, and_(ne(x, x), ne(full, full)))
        mask = convert_element_type(where, t.dtype)
        counts = reduce_sum(mask, axes)
        return ans, div(reduce_sum(mul(t, mask), axes), counts)
    return jvp


reduce_max_p = define(
    "reduce_max", impl=lambda x, *, axes: xp.max(x, axis=axes),
    abstract=_nonempty_reduced_aval("reduce_max", "maximum"), torch_name="AmaxBackward0",
    facts=dict(fresh_result=True))
reduce_max_p.rules["jvp"] = _chooser_jvp(reduce_max_p)
reduce_max_p.rules["torch_nan_jvp"] = _chooser_jvp(reduce_max_p, nan_ties=True)
reduce_max_p.rules["batch"] = reduce_batch(reduce_max_p)

reduce_min_p = define(
    "reduce_min", impl=lambda x, *, axes: xp.min(x, axis=axes),
    abstract=_nonempty_reduced_aval("reduce_min", "minimum"), torch_name="AminBackward0",
    facts=dict(fresh_result=True))
reduce_min_p.rules["jvp"] = _chooser_jvp(reduce_min_p)
reduce_min_p.rules["torch_nan_jvp"] = _chooser_jvp(reduce_min_p, nan_ties=True)
reduce_min_p.rules["batch"] = reduce_batch(reduce_min_p)


# --- reduce_prod -----------------------------------------------------------------------------

def reduce_prod(x, axes):
    """The product of `x` over `axes` (x itself when there are none)."""
    axes = normalize_axes(axes, ndim_of(x))
    if not axes:
        return x
    return reduce_prod_p.bind(x, axes=axes)


def _rows_layout(shape, axes):
    """How an operand of `shape` becomes an (n, m) matrix whose rows run along `axes`: the
    transpose `perm` that puts `axes` first, the reduced shape, n and m."""
    kept = [i for i in range(len(shape)) if i not in axes]
    out_shape = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    return (*axes, *kept), out_shape, n, int(np.prod(out_shape, dtype=np.int64))


def _reduce_prod_jvp(primals, tangents, *, axes):
    """Product rule along a pairwise tree of multiplications: exact when entries are zero
    (no division by x), and built from mul/add/slice/pad so it differentiates again."""
    x, = primals
    t, = tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    perm, out_shape, n, m = _rows_layout(shape_of(x), axes)
    if n == 0:  # the empty product is the constant 1
        return ans, Zero(ShapedArray(out_shape, t.dtype))
    one, zero = np.ones((), t.dtype), np.zeros((), t.dtype)
    xs = reshape(transpose(x, perm), (n, m))
    ts = reshape(transpose(t, perm), (n, m))
    while n > 1:
        if n % 2:  # pad the odd row out with the identity (tangent 0)
            xs = pad(xs, one, ((0, 1, 0), (0, 0, 0)))
            ts = pad(ts, zero, ((0, 1, 0), (0, 0, 0)))
            n += 1
        h = n // 2
        x1, x2 = slice_(xs, (0, 0), (h, m)), slice_(xs, (h, 0), (n, m))
        t1, t2 = slice_(ts, (0, 0), (h, m)), slice_(ts, (h, 0), (n, m))
        ts = add(mul(t1, x2), mul(x1, t2))  # d(x1 x2) = dx1 x2 + x1 dx2
        xs = mul(x1, x2) if h > 1 else xs
        n = h
    return ans, reshape(ts, out_shape)


def _prod_exclusive(x, axes):
    """The product of the other entries of each entry's row along `axes`, as PyTorch's
    prod_safe_zeros_backward takes it: L * R, L the running product of the entries before it
    (the row shifted by one, from the start) and R of those after it (from the end). No
    division, so it holds where entries are 0; and -inf * 0 in L stays out of the entry whose R
    is inf (its derivative is inf where the pairwise tree's is nan). Rows of one entry take
    the constant 1, as PyTorch's returns the gradient itself there (no function of x)."""
    shape = shape_of(x)
    perm, _, n, m = _rows_layout(shape, axes)
    if n == 1:
        return np.ones(shape, x.dtype)
    one = np.ones((), x.dtype)
    xs = reshape(transpose(x, perm), (n, m))
    before = cumprod(_shift(xs, one, 0, 1, False), 0)
    after = cumprod(_shift(xs, one, 0, 1, True), 0, reverse=True)
    exclusive = reshape(mul(before, after), tuple(shape[i] for i in perm))
    return transpose(exclusive, tuple(int(i) for i in np.argsort(perm)))


def _prod_torch_rule(factor):
    """A PyTorch rule of reduce_prod: t_out = sum(t * factor(x, ans, axes)) over `axes`. Over all
    entries (ProdBackward0) with grad mode off, as in a plain backward, an operand with two or
    more zeros takes zeros_like(x) whatever the gradient (an inf or nan one included): the
    tangent is selected before it meets the factor, so its transpose selects last."""
    def jvp(primals, tangents, *, axes):
        x, = primals
        t, = tangents
        ans = reduce_prod_p.bind(x, axes=axes)
        shape = shape_of(x)
        _, out_shape, n, _ = _rows_layout(shape, axes)
        if n == 0:  # the empty product is the constant 1
            return ans, Zero(ShapedArray(out_shape, t.dtype))
        f = factor(x, ans, axes)
        if len(axes) == len(shape) and not grad_mode_enabled():
            zeros = reduce_sum(convert_element_type(eq(x, np.zeros((), x.dtype)), np.int64),
                               axes)
            t = select(gt(zeros, np.ones((), np.int64)), np.zeros((), t.dtype), t)
        return ans, reduce_sum(mul(t, f), axes)
    return jvp


def _prod_quotient_or_exclusive(x, ans, axes):
    """prod_backward's factor: prod / x (`result / input`) when no entry of the whole operand
    is 0, so a nan entry makes every derivative nan; else the exclusive products. One factor
    per entry, so the branch not taken never meets t (no 0 * inf)."""
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    is_zero = eq(x, zero)
    quotient = div(expand_reduced(ans, shape_of(x), axes), select(is_zero, one, x))
    any_zero = reduce_or(is_zero, tuple(range(ndim_of(x))))
    return select(any_zero, _prod_exclusive(x, axes), quotient)


reduce_prod_p = define(
    "reduce_prod", impl=lambda x, *, axes: xp.prod(x, axis=axes, dtype=x.dtype),
    abstract=reduced_aval, jvp=_reduce_prod_jvp,
    # PyTorch's prod_backward, for an operand with or without zeros
    torch_jvp=_prod_torch_rule(_prod_quotient_or_exclusive),
    # its branch for an operand with a zero on its own: it never reads the result, so a second
    # derivative reaches the result only where PyTorch's does (the shim, which sees the operand
    # when it records, selects it by name)
    torch_zeros_jvp=_prod_torch_rule(lambda x, ans, axes: _prod_exclusive(x, axes)),
    torch_name="ProdBackward1")
reduce_prod_p.rules["batch"] = reduce_batch(reduce_prod_p)


# --- reduce_and / reduce_or (all / any) ------------------------------------------------------

def _bool_reduced_aval(name):
    def abstract(x, *, axes):
        if x.dtype != np.bool_:
            raise DTypeError(f"{name}: needs a bool operand, got {x.dtype.name}. Compare first "
                             "(x != 0), as functrans.numpy.all/any do.")
        return reduced_aval(x, axes=axes)
    return abstract


def reduce_and(x, axes):
    """Whether every element of bool `x` over `axes` is True."""
    return reduce_and_p.bind(x, axes=normalize_axes(axes, ndim_of(x)))


def reduce_or(x, axes):
    """Whether any element of bool `x` over `axes` is True."""
    return reduce_or_p.bind(x, axes=normalize_axes(axes, ndim_of(x)))


reduce_and_p = define("reduce_and", impl=lambda x, *, axes: xp.all(x, axis=axes),
                      abstract=_bool_reduced_aval("reduce_and"))
reduce_and_p.rules.update(jvp=zero_jvp(reduce_and_p), batch=reduce_batch(reduce_and_p))
reduce_or_p = define("reduce_or", impl=lambda x, *, axes: xp.any(x, axis=axes),
                     abstract=_bool_reduced_aval("reduce_or"))
reduce_or_p.rules.update(jvp=zero_jvp(reduce_or_p), batch=reduce_batch(reduce_or_p))


# --- argmax / argmin -------------------------------------------------------------------------

def argmax(x, axis, index_dtype=np.int64):
    """The index of the largest element along `axis`, as `index_dtype`."""
    return argmax_p.bind(x, axes=(int(axis) % max(ndim_of(x), 1),),
                         index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype=np.int64):
    """The index of the smallest element along `axis`, as `index_dtype`."""
    return argmin_p.bind(x, axes=(int(axis) % max(ndim_of(x), 1),),
                         index_dtype=np.dtype(index_dtype))


def _arg_abstract(name):
    def abstract(x, *, axes, index_dtype):
        if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
            raise ShapeError(f"{name}: needs exactly one axis in range for an operand of shape "
                             f"{x.shape}, got axes={axes}. Flatten first to search all axes.")
        if x.shape[axes[0]] == 0:
            raise ShapeError(f"{name}: axis {axes[0]} of shape {x.shape} is empty, so there is "
                             "no index to return. Search a non-empty axis.")
        if not np.issubdtype(index_dtype, np.integer):
            raise DTypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype}.")
        return reduced_aval(x, axes=axes, dtype=index_dtype)
    return abstract


def _arg_impl(fn):
    # numpy picks the first occurrence of ties (and of NaN), which is the rule we keep
    return lambda x, *, axes, index_dtype: xp.asarray(fn(x, axis=axes[0])).astype(index_dtype)


argmax_p = define("argmax", impl=_arg_impl(xp.argmax),
                  abstract=_arg_abstract("argmax"))
argmax_p.rules.update(jvp=zero_jvp(argmax_p), batch=reduce_batch(argmax_p))
argmin_p = define("argmin", impl=_arg_impl(xp.argmin),
                  abstract=_arg_abstract("argmin"))
argmin_p.rules.update(jvp=zero_jvp(argmin_p), batch=reduce_batch(argmin_p))


# --- cumsum / cumprod: inclusive scans along one axis, optionally from the end ---------------

def cumsum(x, axis, reverse=False):
    """The cumulative sum along `axis` (from the end if `reverse`)."""
    return cumsum_p.bind(x, axis=int(axis) % max(ndim_of(x), 1), reverse=bool(reverse))


def cumprod(x, axis, reverse=False):
    """The cumulative product along `axis` (from the end if `reverse`)."""
    return cumprod_p.bind(x, axis=int(axis) % max(ndim_of(x), 1), reverse=bool(reverse))


def _scan_abstract(name):
    def abstract(x, *, axis, reverse):
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for an operand of shape "
                             f"{x.shape}; scans need an operand of rank >= 1 (reshape 0-d "
                             "values to (1,)).")
        return x
    return abstract


def _scan_impl(fn):
    def impl(x, *, axis, reverse):
        if reverse:
            return xp.flip(fn(xp.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return fn(x, axis=axis, dtype=x.dtype)
    return impl


def _scan_batch(prim):
    def rule(vals, dims, *, axis, reverse):
        x, = vals
        d, = dims
        return prim.bind(x, axis=axis + (d <= axis), reverse=reverse), d
    return rule


def _shift(x, fill, axis, d, reverse):
    """x moved d places along `axis` (towards the end, or the start if reverse), `fill`ed in."""
    config = [(0, 0, 0)] * ndim_of(x)
    config[axis] = (-d, d, 0) if reverse else (d, -d, 0)
    return pad(x, fill, tuple(config))


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    """Product rule along a Hillis-Steele scan (log2(n) doubling steps): window products
    y_i <- y_i * y_{i-d}, tangents t_i <- t_i * y_{i-d} + y_i * t_{i-d}. No division by x."""
    x, = primals
    t, = tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    one, zero = np.ones((), t.dtype), np.zeros((), t.dtype)
    n = shape_of(x)[axis]
    ys, ts, d = x, t, 1
    while d < n:
        y_prev = _shift(ys, one, axis, d, reverse)
        t_prev = _shift(ts, zero, axis, d, reverse)
        ts = add(mul(ts, y_prev), mul(ys, t_prev))
        ys = mul(ys, y_prev) if 2 * d < n else ys
        d *= 2
    return ans, ts


cumsum_p = define(
    "cumsum", impl=_scan_impl(xp.cumsum), abstract=_scan_abstract("cumsum"),
    # the adjoint of a running sum from the start is a running sum from the end
    transpose=lambda ct, x, *, axis, reverse: [cumsum_p.bind(ct, axis=axis,
                                                             reverse=not reverse)],
    props=("linear",), torch_name="CumsumBackward0")
cumsum_p.rules.update(jvp=linear_jvp(cumsum_p), batch=_scan_batch(cumsum_p))

OMITTED_MAX = 1 << 24   # entries of _cumprod_omitted's n x n blocks (128 MiB in float64)


def _cumprod_omitted(x, t, axis):
    """cumprod_backward's loop for an operand with a zero under grad mode, as a JVP: t_out_j is
    the sum over k <= j of t_k prod(x[:k]) prod(x[k+1:j+1]), for every k at once (n x n
    entries: row k is x with its entries from k on, or up to k, replaced by 1). A second
    derivative goes through products that leave x_k out, as PyTorch's does: no inf * 0 from
    the factor a term omits."""
    last = ndim_of(x) - 1
    x, t = moveaxis(x, axis, last), moveaxis(t, axis, last)
    *lead, n = shape_of(x)
    b = len(lead)  # the row axis k, then the entry axis
    square = (*lead, n, n)
    one, zero = np.ones((), x.dtype), np.zeros((), t.dtype)
    k = np.arange(n)
    rows = broadcast_in_dim(x, square, (*range(b), b + 1))
    before = reduce_prod(select(np.broadcast_to(k < k[:, None], square), rows, one), (b + 1,))
    after = cumprod(select(np.broadcast_to(k > k[:, None], square), rows, one), b + 1)
    omitted = mul(broadcast_in_dim(before, square, tuple(range(b + 1))), after)
    omitted = select(np.broadcast_to(k >= k[:, None], square), omitted, zero)
    out = reduce_sum(mul(broadcast_in_dim(t, square, tuple(range(b + 1))), omitted), (b,))
    return moveaxis(out, last, axis)


def _cumprod_torch_rule(zeros_only):
    """PyTorch's cumprod_backward: reversed_cumsum(result * grad) / input (as a JVP, y *
    cumsum(t / x)) when no entry of the operand is 0. For an operand with a zero, the row's own
    rule, and the branch the shim selects by name (`zeros_only`): under grad mode, PyTorch's
    loop over omitted products; without, its other path, whose values are the row's own."""
    def jvp(primals, tangents, *, axis, reverse):
        x, = primals
        t, = tangents
        ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
        if shape_of(x)[axis] <= 1:  # PyTorch passes the gradient through as it is
            return ans, t
        if reverse:  # the scan from the end is the scan of the reversed operand
            flipped = jvp([rev(x, (axis,))], [rev(t, (axis,))], axis=axis, reverse=False)[1]
            return ans, rev(flipped, (axis,))
        if zeros_only:
            # the omitted products take n x n entries per row: past OMITTED_MAX entries in all,
            # the row's own rule (PyTorch's loop needs O(n) memory, but O(n^2) steps)
            if grad_mode_enabled() and \
                    math.prod(shape_of(x)) * shape_of(x)[axis] <= OMITTED_MAX:
                return ans, _cumprod_omitted(x, t, axis)
            return _cumprod_jvp(primals, tangents, axis=axis, reverse=False)
        t_zero, zero = np.zeros((), t.dtype), np.zeros((), x.dtype)
        is_zero = eq(x, zero)
        any_zero = reduce_or(is_zero, tuple(range(ndim_of(x))))
        # the tangent is selected before it meets either branch, so the transpose selects last
        t_quotient = select(any_zero, t_zero, t)
        t_product = select(any_zero, t, t_zero)
        quotient = mul(ans, cumsum(div(t_quotient, select(is_zero, np.ones((), x.dtype), x)),
                                   axis))
        return ans, add(quotient, _cumprod_jvp([x], [t_product], axis=axis, reverse=False)[1])
    return jvp


cumprod_p = define(
    "cumprod", impl=_scan_impl(xp.cumprod), abstract=_scan_abstract("cumprod"),
    jvp=_cumprod_jvp, torch_jvp=_cumprod_torch_rule(False),
    torch_zeros_jvp=_cumprod_torch_rule(True), torch_name="CumprodBackward0")
cumprod_p.rules["batch"] = _scan_batch(cumprod_p)


# --- logsumexp -------------------------------------------------------------------------------
# log(sum(exp(x))) over axes, computed shifted by the maximum (where it is finite). JAX's
# derivative is softmax(x) with the shift held constant (jax.nn.logsumexp's stop_gradient): 0
# where every entry is -inf and beside a NaN. PyTorch's logsumexp_backward is exp(x - y), which
# is NaN there (-inf - -inf, x - NaN).
def logsumexp(x, axes):
    """log(sum(exp(x))) over `axes`, computed stably."""
    return logsumexp_p.bind(x, axes=normalize_axes(axes, ndim_of(x)))


def _finite_max(x, axes):
    m = xp.max(x, axis=axes, keepdims=True)
    return xp.where(xp.isfinite(m), m, xp.zeros((), x.dtype))


def _logsumexp_impl(x, *, axes):
    m = _finite_max(x, axes)
    return xp.log(xp.sum(xp.exp(x - m), axis=axes)) + xp.squeeze(m, axis=axes)


def _logsumexp_jvp(torch):
    def jvp(primals, tangents, *, axes):
        x, = primals
        t, = tangents
        y = logsumexp_p.bind(x, axes=axes)
        shape = shape_of(x)
        if torch:
            return y, reduce_sum(mul(t, exp(sub(x, expand_reduced(y, shape, axes)))), axes)
        m = stop_gradient(reduce_max(x, axes))
        m = select(is_finite(m), m, np.zeros((), m.dtype))
        e = exp(sub(x, expand_reduced(m, shape, axes)))
        return y, div(reduce_sum(mul(t, e), axes), reduce_sum(e, axes))
    return jvp


logsumexp_p = define("logsumexp", impl=_logsumexp_impl,
                     abstract=_nonempty_reduced_aval("logsumexp", "maximum"),
                     jvp=_logsumexp_jvp(False), torch_jvp=_logsumexp_jvp(True),
                     torch_name="LogsumexpBackward0")
logsumexp_p.rules["batch"] = reduce_batch(logsumexp_p)
