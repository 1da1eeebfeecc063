"""Reductions: sum, mean, prod, max/min (with dim: values and indices), amax, var, std, norm,
logsumexp, cumsum, all/any."""

from __future__ import annotations

import math
import warnings

import numpy as np

import functrans.numpy as fnp
from functrans.core.primitive import derivative_convention
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.norms import p_norm
from functrans.torch import _dtype
from functrans.torch._elementwise import maximum, minimum
from functrans.torch._ops import _float_value, _prim, as_tensor, clone, named, unary
from functrans.torch._record import Op, check_at_backward, composite, run
from functrans.torch._shape import normalized_dims
from functrans.torch._tensor import Tensor, _dim, wrap


def _reduced(dim, ndim):
    """The dims a reduction over `dim` covers: every dim for None or (); none of a 0-d tensor,
    which takes dim 0 or -1."""
    if dim is None or (not isinstance(dim, int) and not tuple(dim)):
        dim = range(ndim)
    dims = normalized_dims(dim, ndim)
    return dims if ndim else ()


def _keep(out, in_shape, dims, keepdim):
    return S.reshape(out, tuple(1 if i in dims else s for i, s in enumerate(in_shape))) \
        if keepdim else out


def _reduce_sum(x, dims):
    # PyTorch's sum over no axes (of a 0-d tensor) still starts from +0.0: -0.0 sums to 0.0
    s = R.reduce_sum(x, dims)
    return E.add(s, np.zeros((), x.dtype)) if not dims and np.dtype(x.dtype).kind in "fc" else s


def _reduction(all_name, dims_name, body):
    """(op over every element, op over `dims` with keepdim) of `body(x, dims)`, recorded under
    PyTorch's node names for the two overloads."""
    return (composite(all_name)(lambda x: body(x, tuple(range(x.ndim)))) if all_name else None,
            composite(dims_name)(lambda x, *, dims, keepdim:
                                 _keep(body(x, dims), x.shape, dims, keepdim)))


def _reduce(ops, x, v, dim, keepdim):
    if dim is None:
        return run(ops[0], (x,), (v,))
    return run(ops[1], (x,), (v,), {"dims": _reduced(dim, v.ndim), "keepdim": bool(keepdim)})


def _count(shape, dims):
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))


def _prod_dims(x, *, dims, keepdim):
    if len(dims) < len(x.shape):
        return _keep(R.reduce_prod(x, dims), x.shape, dims, keepdim)
    # prod over every dim of x, named by dim: a trailing axis of 1 keeps one axis out of the
    # reduction, so the row's rule takes ProdBackward1's derivative, not ProdBackward0's
    # (which, with grad mode off, gives zeros for an operand with two or more zeros); one
    # reshape to the result, so the rule's product is the saved result
    out = R.reduce_prod(S.reshape(x, (*x.shape, 1)), dims)
    return S.reshape(out, (1,) * len(dims) if keepdim else ())


def under_convention(convention, op):
    """`op` differentiated under its row's `convention`_jvp, a branch of PyTorch's formula
    that depends on the operand's values, recorded when the operand takes it (its values
    cannot change before backward without a version error): torch_zeros for an operand with a
    zero (prod's and cumprod's backward take another formula without), torch_nan for max()
    and min() of an operand with a NaN."""
    def traced(*args, **params):
        with derivative_convention(convention):
            return op.traced(*args, **params)
    return Op(op.name, op.impl, traced, op.multiple, op.forward_params)


def _for_operand(ops, with_zero, x, v):
    return with_zero if x._requires_grad and (v == 0).any() else ops


_PROD = (composite("ProdBackward0")(lambda x: R.reduce_prod(x, tuple(range(x.ndim)))),
         composite("ProdBackward1")(_prod_dims))
_PROD_WITH_ZERO = tuple(under_convention("torch_zeros", op) for op in _PROD)
_SUM = _reduction("SumBackward0", "SumBackward1", _reduce_sum)
_MEAN = _reduction("MeanBackward0", "MeanBackward1", lambda x, dims: E.div(
    _reduce_sum(x, dims), np.asarray(_count(x.shape, dims), x.dtype)))
# amax and amin over dims; max(x) and min(x) over every element
_AMAX = _reduction("MaxBackward1", "AmaxBackward0", R.reduce_max)
_AMIN = _reduction("MinBackward1", "AminBackward0", R.reduce_min)
_ALL_WITH_NAN = {op: under_convention("torch_nan", op) for op in (_AMAX[0], _AMIN[0])}


def _accumulated(input, dtype):
    """(tensor, array in the dtype PyTorch accumulates in: int64 for integers and bools)."""
    x = as_tensor(input)
    v = x._value
    dt = _dtype.to_numpy(dtype) if dtype is not None else \
        np.dtype(np.int64) if v.dtype.kind in "biu" else v.dtype
    return x, v if v.dtype == dt else v.astype(dt)


def _floats_for(name, input, dtype=None):
    """(tensor, array in `dtype`), or refused as PyTorch refuses integer input to mean, var and
    std."""
    x = as_tensor(input)
    v = x._value
    if dtype is not None:
        return x, v.astype(_dtype.to_numpy(dtype))
    if v.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_dtype.kind(v.dtype)}")
    return x, v


def _summing(name, ops, prepare, what):
    def fn(input, dim=None, keepdim=False, *, dtype=None):
        return _reduce(ops, *prepare(input, dtype), dim, keepdim)
    return named(fn, name, f"torch.{name}: {what}.")


sum = _summing("sum", _SUM, _accumulated, "the sum of the elements (over dim); integers "
               "accumulate in int64")
mean = _summing("mean", _MEAN, lambda input, dtype: _floats_for("mean", input, dtype),
                "the mean (over dim); integer tensors are refused, as in PyTorch")


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """torch.prod: the product of the elements (over dim)."""
    x, v = _accumulated(input, dtype)
    return _reduce(_for_operand(_PROD, _PROD_WITH_ZERO, x, v), x, v, dim, keepdim)


def _over_dims(ops, input, dim, keepdim, floats=False):
    x = as_tensor(input)
    v = _float_value(x) if floats else x._value
    return _reduce(ops, x, v, () if dim is None else dim, keepdim)


amax = named(lambda input, dim=(), keepdim=False: _over_dims(_AMAX, input, dim, keepdim), "amax",
             "torch.amax: the maximum over dim.")
amin = named(lambda input, dim=(), keepdim=False: _over_dims(_AMIN, input, dim, keepdim), "amin",
             "torch.amin: the minimum over dim.")


class _ValuesIndices(tuple):
    """A (values, indices) pair, as PyTorch's torch.return_types (see `return_type`)."""

    __slots__ = ()
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


def return_type(name: str) -> type:
    """The pair type PyTorch names `name` (type(torch.max(x, 0)).__name__ == "max")."""
    return type(name, (_ValuesIndices,), {"__slots__": (), "__module__": "torch.return_types"})


def values_at(x, index, *, dim, keepdim=True):
    """x's entries at `index` (shaped as the result) along dim, one gather."""
    if not x.shape:  # a 0-d tensor is its own maximum, sort and median
        return S.reshape(x, ())
    if not keepdim:
        index = fnp.expand_dims(index, dim)
    out = fnp.take_along_axis(x, index, axis=dim)
    return out if keepdim else S.squeeze(out, (dim,))


def at_indices(name):
    """The Op of `values_at` named `name`: values at indices decided eagerly (argmax, a sort
    order, a median), so the gradient goes to those positions, as in PyTorch."""
    return Op(name, values_at, values_at)


def with_indices(result, op, x, idx, dim, keepdim=True):
    """`result`((x's values at idx along dim, idx)): max, min, median, sort, topk, cummax; idx
    is found with keepdims=True. The node keeps the indices it returns, and its backward
    raises PyTorch's error if they were changed in place since."""
    indices = wrap((idx if keepdim else np.squeeze(idx, dim)).copy())
    values = run(op, (x, None), (x._value, indices._value),
                 {"dim": dim, "keepdim": bool(keepdim)})
    if values._grad_fn is not None:
        check_at_backward(values._grad_fn, 1, indices)
    return result((values, indices))


_MAX_DIM, _MIN_DIM = at_indices("MaxBackward0"), at_indices("MinBackward0")
_MaxResult, _MinResult = return_type("max"), return_type("min")


def _max_min(input, dim, keepdim, other, is_max):
    x = as_tensor(input)
    if isinstance(dim, Tensor) or other is not None:
        return (maximum if is_max else minimum)(x, dim if other is None else other)
    v = x._value
    if dim is None:
        if v.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        op = (_AMAX if is_max else _AMIN)[0]
        return unary(_ALL_WITH_NAN[op] if x._requires_grad and np.isnan(v).any() else op, x)
    result = _MaxResult if is_max else _MinResult
    d = _dim(dim, v.ndim)
    if v.ndim == 0:
        return result((clone(x), wrap(np.zeros((), np.int64))))
    idx = (np.argmax if is_max else np.argmin)(v, axis=d, keepdims=True).astype(np.int64)
    return with_indices(result, _MAX_DIM if is_max else _MIN_DIM, x, idx, d, keepdim)


max = named(lambda input, dim=None, keepdim=False, *, other=None: _max_min(
    input, dim, keepdim, other, True), "max", "torch.max: the largest element; with dim, a "
    "(values, indices) pair; with other, maximum.")
min = named(lambda input, dim=None, keepdim=False, *, other=None: _max_min(
    input, dim, keepdim, other, False), "min", "torch.min: the smallest element; with dim, a "
    "(values, indices) pair; with other, minimum.")


def _index_reduction(name, np_fn, doc, dtype=None):
    def fn(input, dim=None, keepdim=False):
        v = as_tensor(input)._value
        axis = None if dim is None else _dim(dim, v.ndim)
        keep = keepdim and (dim is not None or dtype is None)  # argmax ignores it without dim
        return wrap(np.asarray(np_fn(v, axis=axis, keepdims=keep), dtype))
    return named(fn, name, f"torch.{name}: {doc}.")


argmax = _index_reduction("argmax", np.argmax, "the index of the largest element (of the "
                          "flattened input if dim is None)", np.int64)
argmin = _index_reduction("argmin", np.argmin, "the index of the smallest element (of the "
                          "flattened input if dim is None)", np.int64)
all = _index_reduction("all", np.all, "whether every element (along dim) is nonzero, as a "
                       "bool tensor")
any = _index_reduction("any", np.any, "whether any element (along dim) is nonzero, as a bool "
                       "tensor")


def _moment(x, *, dims, correction, keepdim, root, with_mean):
    out = fnp.var(x, dims, ddof=correction, keepdims=keepdim)
    if root:  # the norm_sqrt row: PyTorch's derivative is 0 at zero variance, not inf * 0
        out = E.norm_sqrt(out)
    return [out, fnp.mean(x, dims, keepdims=keepdim)] if with_mean else out


def _moments(name, node, what, root, with_mean):
    op = Op(node, _moment, _moment, with_mean)

    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # var(x, unbiased) legacy positional form
            unbiased, dim = dim, None
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        x, v = _floats_for("var", input)
        dims = _reduced(dim, v.ndim)
        if _count(v.shape, dims) - correction <= 0:
            warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                          "less than the reduction factor (input numel divided by output "
                          "numel).", UserWarning, stacklevel=2)
        out = run(op, (x,), (v,), {"dims": dims, "correction": int(correction),
                                   "keepdim": bool(keepdim), "root": root,
                                   "with_mean": with_mean})
        return tuple(out) if with_mean else out
    return named(fn, name, f"torch.{name}: {what} over dim, with Bessel's correction by default "
                 "(one node).")


var = _moments("var", "VarBackward0", "the variance", False, False)
std = _moments("std", "StdBackward0", "the standard deviation", True, False)
var_mean = _moments("var_mean", "VarMeanBackward0", "(var, mean)", False, True)
std_mean = _moments("std_mean", "StdMeanBackward0", "(std, mean)", True, True)


def vector_norm(x, ord, dims):
    """The ord-norm of x over dims, with PyTorch's derivative at zero (0, from the rows); a
    complex vector's norm is that of its moduli."""
    if np.dtype(x.dtype).kind == "c":
        x = E.abs(x)
    if ord == 2:  # the norm_sqrt row
        return E.norm_sqrt(R.reduce_sum(E.mul(x, x), dims))
    if ord == 1:
        return R.reduce_sum(E.abs(x), dims)
    if ord == math.inf:
        return R.reduce_max(E.abs(x), dims)
    if ord == 0:  # the number of nonzero entries: a zero gradient
        return R.reduce_sum(S.convert_element_type(E.ne(x, np.zeros((), x.dtype)), x.dtype), dims)
    return p_norm(x, ord, dims)


_NORM = composite("LinalgVectorNormBackward0")(
    lambda x, *, ord, dims, keepdim: _keep(vector_norm(x, ord, dims), x.shape, dims, keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: the p-norm (Frobenius by default) over dim, zero gradient at a zero input."""
    x = as_tensor(input, dtype)
    return run(_NORM, (x,), (_float_value(x),), {"ord": 2 if p in ("fro", None) else float(p),
                                                  "dims": _reduced(dim, x._value.ndim),
                                                  "keepdim": bool(keepdim)})


def _logsumexp(x, dims):
    """The logsumexp row (its PyTorch rule: exp(x - y)); a complex x shifted by the largest
    real part, as PyTorch's."""
    if np.dtype(x.dtype).kind != "c":
        return R.logsumexp(x, dims)
    m = R.reduce_max(E.real(x), dims)
    finite = E.complex(E.select(E.is_finite(m), m, np.zeros((), m.dtype)), np.zeros((), m.dtype))
    z = E.sub(x, S.broadcast_in_dim(finite, x.shape, tuple(i for i in range(x.ndim)
                                                           if i not in dims)))
    return E.add(E.log(R.reduce_sum(E.exp(z), dims)), finite)


_LOGSUMEXP = _reduction(None, "LogsumexpBackward0", _logsumexp)
logsumexp = named(lambda input, dim, keepdim=False: _over_dims(_LOGSUMEXP, input, dim, keepdim,
                                                               floats=True),
                  "logsumexp", "torch.logsumexp: log(sum(exp(input))) over dim, computed stably.")


def _scan(name, what):
    op = _prim(name)
    with_zero = under_convention("torch_zeros", op) if name == "cumprod" else op

    def fn(input, dim, *, dtype=None):
        x, v = _accumulated(input, dtype)
        return run(_for_operand(op, with_zero, x, v), (x,), (v,),
                   {"axis": _dim(dim, v.ndim), "reverse": False})
    return named(fn, name, f"torch.{name}: the cumulative {what} along dim.")


cumsum, cumprod = _scan("cumsum", "sum"), _scan("cumprod", "product")


def count_nonzero(input, dim=None):
    """torch.count_nonzero: the number of nonzero elements (along dim)."""
    return wrap(np.asarray(np.count_nonzero(as_tensor(input)._value, axis=dim), np.int64))


# nansum: NaNs count as zero (so does their gradient); nanmean: nansum / the count of the rest
_NANSUM = _reduction("NansumBackward0", "NansumBackward0", lambda x, dims: _reduce_sum(
    E.select(E.ne(x, x), np.zeros((), x.dtype), x), dims))
nansum = _summing("nansum", _NANSUM, _accumulated, "the sum of the elements that are not NaN "
                  "(over dim); integers accumulate in int64")


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean: the mean of the elements that are not NaN (over dim), as PyTorch computes
    it: nansum divided by their count (DivBackward0)."""
    x = as_tensor(input)
    if x._value.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype.kind(x._value.dtype)}")
    count = sum(wrap(~np.isnan(x._value)), dim, keepdim)
    return nansum(x, dim, keepdim, dtype=dtype) / count


def _running(v, d, best, better):
    """The index PyTorch's cummax/cummin give along axis d: the last of the best so far, or of
    the last NaN once one is seen (`best`.accumulate propagates NaN)."""
    take = better(v, np.roll(best.accumulate(v, axis=d), 1, axis=d)) | (v != v)
    np.moveaxis(take, d, 0)[0] = True
    steps = np.arange(v.shape[d]).reshape((-1,) + (1,) * (v.ndim - 1 - d))
    return np.maximum.accumulate(np.where(take, steps, 0), axis=d).astype(np.int64)


def _cumulative(name, best, better, what):
    op, result = at_indices(f"{name.title()}Backward0"), return_type(name)

    def fn(input, dim):
        x = as_tensor(input)
        v = x._value
        d = _dim(dim, v.ndim)
        idx = _running(v, d, best, better) if v.ndim and v.size else np.zeros(v.shape, np.int64)
        return with_indices(result, op, x, idx, d)
    return named(fn, name, f"torch.{name}: (values, indices) of the running {what} along dim; "
                 "the gradient goes to the entries the indices name.")


cummax = _cumulative("cummax", np.maximum, np.greater_equal, "maximum")
cummin = _cumulative("cummin", np.minimum, np.less_equal, "minimum")
