"""Reductions: sum, mean, prod, max/min (with dim: values and indices), amax, var, std, norm,
logsumexp, cumsum, all/any."""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._elementwise import maximum, minimum
from functrans.torch._ops import _float_value, _prim, as_tensor, clone, named
from functrans.torch._record import Op, composite, run
from functrans.torch._tensor import Tensor, _dim, wrap

def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims and ndim:
        return tuple(range(ndim))
    dims = tuple(sorted({_dim(d, ndim) for d in dims}))
    return dims if ndim else ()  # a 0-d tensor takes dim 0 or -1: there is no axis to reduce


def _keep(out, in_shape, dims, keepdim):
    if not keepdim:
        return out
    return S.reshape(out, tuple(1 if i in dims else s for i, s in enumerate(in_shape)))


def _reduce_sum(x, dims):
    """reduce_sum as PyTorch's sum computes it: a sum over no axes (of a 0-d tensor) still
    starts from +0.0, so -0.0 sums to 0.0."""
    s = R.reduce_sum(x, dims)
    if not dims and np.dtype(x.dtype).kind in "fc":
        s = E.add(s, np.zeros((), x.dtype))
    return s


def _reduction(all_name, dims_name, body):
    """(op over every element, op over `dims` with keepdim) of `body(x, dims)`, recorded under
    PyTorch's node names for the two overloads."""
    return (composite(all_name)(lambda x: body(x, tuple(range(x.ndim)))),
            composite(dims_name)(lambda x, *, dims, keepdim:
                                 _keep(body(x, dims), x.shape, dims, keepdim)))


def _reduce(ops, x, v, dim, keepdim):
    if dim is None:
        return run(ops[0], (x,), (v,))
    return run(ops[1], (x,), (v,), {"dims": _dims(dim, v.ndim), "keepdim": bool(keepdim)})


def _mean_of(x, dims):
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    return E.div(_reduce_sum(x, dims), np.asarray(n, x.dtype))


_SUM = _reduction("SumBackward0", "SumBackward1", _reduce_sum)
_MEAN = _reduction("MeanBackward0", "MeanBackward1", _mean_of)


def _sum_dtype(v, dtype):
    if dtype is not None:
        return _dtype.to_numpy(dtype)
    return np.dtype(np.int64) if v.dtype.kind in "biu" else v.dtype


def _accumulated(input, dtype):
    """(tensor, array in the dtype PyTorch accumulates in: int64 for integers and bools)."""
    x = as_tensor(input)
    dt = _sum_dtype(x._value, dtype)
    return x, x._value if x._value.dtype == dt else x._value.astype(dt)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sum: the sum of the elements (over dim); integers accumulate in int64."""
    return _reduce(_SUM, *_accumulated(input, dtype), dim, keepdim)


# PyTorch's ScalarType names, as its messages print them
_SCALAR_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}


def _mean_check(v, dtype, name):
    if dtype is not None:
        return v.astype(_dtype.to_numpy(dtype))
    if v.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_SCALAR_TYPE.get(v.dtype.name, v.dtype.name)}")
    return v


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.mean: the mean (over dim); integer tensors are refused, as in PyTorch."""
    x = as_tensor(input)
    return _reduce(_MEAN, x, _mean_check(x._value, dtype, "mean"), dim, keepdim)


@composite("ProdBackward0")
def _prod_all(x):
    return R.reduce_prod(x, tuple(range(x.ndim)))


@composite("ProdBackward1")
def _prod_dims(x, *, dims, keepdim):
    if len(dims) == len(x.shape):
        # prod over every dim of x, named by dim: a trailing axis of 1 keeps one axis out of the
        # reduction, so the row's rule takes ProdBackward1's derivative, not ProdBackward0's
        # (which, with grad mode off, gives zeros for an operand with two or more zeros)
        out = S.reshape(R.reduce_prod(S.reshape(x, (*x.shape, 1)), dims), ())
        return _keep(out, x.shape, dims, keepdim)
    return _keep(R.reduce_prod(x, dims), x.shape, dims, keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """torch.prod: the product of the elements (over dim)."""
    return _reduce((_prod_all, _prod_dims), *_accumulated(input, dtype), dim, keepdim)


@composite("MaxBackward1")
def _max_all(x):
    return R.reduce_max(x, tuple(range(x.ndim)))


@composite("MinBackward1")
def _min_all(x):
    return R.reduce_min(x, tuple(range(x.ndim)))


_AMAX = _reduction("AmaxBackward0", "AmaxBackward0", R.reduce_max)[1]
_AMIN = _reduction("AminBackward0", "AminBackward0", R.reduce_min)[1]


class _ValuesIndices(tuple):
    """A (values, indices) pair, as PyTorch's torch.return_types (see `return_type`)."""

    __slots__ = ()

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


def return_type(name: str) -> type:
    """The pair type PyTorch names `name` (type(torch.max(x, 0)).__name__ == "max")."""
    return type(name, (_ValuesIndices,), {"__slots__": (), "__module__": "torch.return_types"})


@composite("MaxBackward0")
def _select_along(x, idx, *, dim, keepdim):
    # the entries of x at integer positions `idx` along `dim` (idx comes from argmax/argmin,
    # computed eagerly): one gather, so the gradient goes to that one position, as in PyTorch
    moved = S.moveaxis(x, dim, x.ndim - 1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    m = int(np.prod(lead, dtype=np.int64))
    flat = S.reshape(moved, (m * n,))
    pos = E.add(np.arange(m, dtype=np.int64) * n, S.reshape(idx, (m,)))
    out = S.reshape(REGISTRY["gather"].bind(flat, pos, axis=0), lead)
    return S.expand_dims(out, (dim,)) if keepdim else out


_SELECT_MIN = Op("MinBackward0", _select_along.impl, _select_along.traced)


_MaxResult, _MinResult = return_type("max"), return_type("min")


def _max_min(input, dim, keepdim, other, is_max):
    x = as_tensor(input)
    if other is not None:
        return maximum(x, other) if is_max else minimum(x, other)
    if dim is None:
        if x._value.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim "
                               "with the 'dim' argument.")
        return run(_max_all if is_max else _min_all, (x,), (x._value,))
    result = _MaxResult if is_max else _MinResult
    v = x._value
    d = _dim(dim, v.ndim)
    if v.ndim == 0:
        return result((clone(x), wrap(np.zeros((), np.int64))))
    idx = (np.argmax if is_max else np.argmin)(v, axis=d).astype(np.int64)
    values = run(_select_along if is_max else _SELECT_MIN, (x, None), (v, idx),
                 {"dim": d, "keepdim": bool(keepdim)})
    if keepdim:
        idx = np.expand_dims(idx, d)
    return result((values, wrap(idx)))


def max(input, dim=None, keepdim=False, *, other=None):
    """torch.max: the largest element; with dim, a (values, indices) pair; with other, maximum."""
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _max_min(input, dim, keepdim, other, True)


def min(input, dim=None, keepdim=False, *, other=None):
    """torch.min: the smallest element; with dim, a (values, indices) pair; with other, minimum."""
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _max_min(input, dim, keepdim, other, False)


def amax(input, dim=(), keepdim=False):
    """torch.amax: the maximum over dim."""
    x = as_tensor(input)
    return _reduce((None, _AMAX), x, x._value, () if dim is None else dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """torch.amin: the minimum over dim."""
    x = as_tensor(input)
    return _reduce((None, _AMIN), x, x._value, () if dim is None else dim, keepdim)


def _arg_reduction(name, np_fn, what):
    def fn(input, dim=None, keepdim=False):
        v = as_tensor(input)._value
        if dim is None:
            return wrap(np.asarray(np_fn(v), np.int64))
        return wrap(np.asarray(np_fn(v, axis=_dim(dim, v.ndim), keepdims=keepdim), np.int64))
    return named(fn, name, f"torch.{name}: the index of the {what} element (of the flattened "
                 "input if dim is None).")


argmax = _arg_reduction("argmax", np.argmax, "largest")
argmin = _arg_reduction("argmin", np.argmin, "smallest")


@composite("VarBackward0")
def _var(x, *, dims, correction, keepdim):
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    mu = E.div(R.reduce_sum(x, dims), np.asarray(n, x.dtype))
    c = E.sub(x, S.broadcast_in_dim(mu, x.shape, tuple(i for i in range(x.ndim)
                                                        if i not in dims)))
    ss = R.reduce_sum(E.mul(c, c), dims)
    return _keep(E.div(ss, np.asarray(builtins.max(n - correction, 0), x.dtype)), x.shape, dims,
                 keepdim)


@composite("StdBackward0")
def _std(x, *, dims, correction, keepdim):
    return _sqrt_zero_grad_at_zero(_var.traced(x, dims=dims, correction=correction,
                                               keepdim=keepdim))


def _sqrt_zero_grad_at_zero(s):
    """sqrt(s), with PyTorch's zero gradient where s == 0 (std and norm of constant or zero
    data) instead of inf * 0 = nan: the zero comes from a constant branch of a select."""
    nz = E.ne(s, np.zeros((), s.dtype))
    return E.select(nz, E.sqrt(E.select(nz, s, np.ones((), s.dtype))), np.zeros((), s.dtype))


def _var_args(input, dim, unbiased, keepdim, correction):
    x = as_tensor(input)
    if isinstance(dim, bool):  # var(x, unbiased) legacy positional form
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _dims(dim, x._value.ndim)
    v = _mean_check(x._value, None, "var")
    params = {"dims": dims, "correction": int(correction), "keepdim": bool(keepdim)}
    return x, v, params


def _warn_dof(name, v, params):
    n = int(np.prod([v.shape[d] for d in params["dims"]], dtype=np.int64))
    if n - params["correction"] <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)


@composite("VarMeanBackward0", multiple=True)
def _var_mean(x, *, dims, correction, keepdim):
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    mu = E.div(R.reduce_sum(x, dims), np.asarray(n, x.dtype))
    return [_var.traced(x, dims=dims, correction=correction, keepdim=keepdim),
            _keep(mu, x.shape, dims, keepdim)]


@composite("StdMeanBackward0", multiple=True)
def _std_mean(x, *, dims, correction, keepdim):
    v, mu = _var_mean.traced(x, dims=dims, correction=correction, keepdim=keepdim)
    return [_sqrt_zero_grad_at_zero(v), mu]


def _moments(name, op, what):
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        x, v, params = _var_args(input, dim, unbiased, keepdim, correction)
        _warn_dof(name, v, params)
        out = run(op, (x,), (v,), params)
        return tuple(out) if op.multiple else out
    return named(fn, name, f"torch.{name}: {what} over dim, with Bessel's correction by default "
                 "(one node).")


var = _moments("var", _var, "the variance")
std = _moments("std", _std, "the standard deviation")
var_mean = _moments("var_mean", _var_mean, "(var, mean)")
std_mean = _moments("std_mean", _std_mean, "(std, mean)")


@composite("LinalgVectorNormBackward0")
def _norm(x, *, ord, dims, keepdim):
    # PyTorch's subgradients: zero where the norm is zero, and zero for zero entries
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    if ord == 2:
        out = _sqrt_zero_grad_at_zero(R.reduce_sum(E.mul(x, x), dims))
    elif ord == 1:
        out = R.reduce_sum(E.abs(x), dims)
    elif ord == math.inf:
        out = R.reduce_max(E.abs(x), dims)
    else:
        p = np.asarray(ord, x.dtype)
        nz = E.ne(x, zero)
        a = E.select(nz, E.abs(x), one)
        s = R.reduce_sum(E.select(nz, E.pow(a, p), zero), dims)
        snz = E.ne(s, zero)
        out = E.select(snz, E.pow(E.select(snz, s, one), E.div(one, p)), zero)
    return _keep(out, x.shape, dims, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: the p-norm (Frobenius by default) over dim, zero gradient at a zero input."""
    x = as_tensor(input, dtype)
    ord = 2 if p in ("fro", None) else float(p)
    dims = _dims(dim, x._value.ndim)
    return run(_norm, (x,), (_float_value(x),), {"ord": ord, "dims": dims,
                                                  "keepdim": bool(keepdim)})


@composite("LogsumexpBackward0")
def _logsumexp(x, *, dims, keepdim):
    m = R.reduce_max(x, dims)
    kept = tuple(i for i in range(x.ndim) if i not in dims)
    finite = E.select(E.is_finite(m), m, np.zeros((), x.dtype))
    z = E.sub(x, S.broadcast_in_dim(finite, x.shape, kept))
    out = E.add(E.log(R.reduce_sum(E.exp(z), dims)), finite)
    return _keep(out, x.shape, dims, keepdim)


def logsumexp(input, dim, keepdim=False):
    """torch.logsumexp: log(sum(exp(input))) over dim, computed stably."""
    x = as_tensor(input)
    return _reduce((None, _logsumexp), x, _float_value(x), () if dim is None else dim, keepdim)


def _scan(name, prim, what):
    op = _prim(prim, f"{name.title()}Backward0")

    def fn(input, dim, *, dtype=None):
        x, v = _accumulated(input, dtype)
        return run(op, (x,), (v,), {"axis": _dim(dim, v.ndim), "reverse": False})
    return named(fn, name, f"torch.{name}: the cumulative {what} along dim.")


cumsum, cumprod = _scan("cumsum", "cumsum", "sum"), _scan("cumprod", "cumprod", "product")


def _bool_reduction(name, np_fn, what):
    def fn(input, dim=None, keepdim=False):
        v = as_tensor(input)._value
        axis = None if dim is None else _dim(dim, v.ndim)
        return wrap(np.asarray(np_fn(v, axis=axis, keepdims=keepdim)))
    return named(fn, name, f"torch.{name}: whether {what} element (along dim) is nonzero, as a "
                 "bool tensor.")


all, any = _bool_reduction("all", np.all, "every"), _bool_reduction("any", np.any, "any")


def count_nonzero(input, dim=None):
    """torch.count_nonzero: the number of nonzero elements (along dim)."""
    v = as_tensor(input)._value
    return wrap(np.asarray(np.count_nonzero(v, axis=dim), np.int64))
