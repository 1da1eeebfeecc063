"""Finite differences and the trapezoid rule, composed of tensor ops as PyTorch's (same nodes)."""

from __future__ import annotations

import numpy as np

from functrans.torch._ops import _prim, as_tensor, named
from functrans.torch._record import run
from functrans.torch._tensor import Tensor, _dim, wrap


def _scalar_op(name, x, c):
    """at::mul / at::div by a Scalar, as PyTorch's C++ calls them: one tensor input."""
    return run(_prim(name, f"{name.title()}Backward1"), (x, None),
               (x._value, np.asarray(c, x._value.dtype)))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """input[..., 1:] - input[..., :-1] along `dim`, `n` times."""
    from functrans.torch._shape import cat
    x = as_tensor(input)
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _dim(dim, x.ndim)
    if prepend is not None or append is not None:
        x = cat([as_tensor(p) for p in (prepend, x, append) if p is not None], d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        x = x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1)
    return x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along `dim`, with sample points `x` or spacing `dx` (default 1)."""
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        got = "Tensor, Tensor, dx=float" if isinstance(x, Tensor) else \
            f"Tensor, {type(x).__name__}"
        raise TypeError(f"trapezoid() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n"
                        " * (Tensor y, Tensor x, *, int dim = -1)\n"
                        " * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    y = as_tensor(y)
    d = _dim(dim, y.ndim)
    if y.shape[d] == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != d)
        return wrap(np.zeros(shape, y._value.dtype if y._value.dtype.kind in "fc"
                             else np.float32))
    if x is None:
        ends = y.select(d, 0) + y.select(d, -1)
        return _scalar_op("mul", y.sum(d) - _scalar_op("mul", ends, 0.5), 1 if dx is None else dx)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = x.view(sizes)
    spacing = x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)
    pairs = y.narrow(d, 1, y.shape[d] - 1) + y.narrow(d, 0, y.shape[d] - 1)
    return _scalar_op("div", (spacing * pairs).sum(d), 2.0)


trapz = named(lambda y, x=None, *, dx=None, dim=-1: trapezoid(y, x, dx=dx, dim=dim), "trapz",
              "torch.trapz: PyTorch's older name of trapezoid (the trapezoidal rule along dim).")
