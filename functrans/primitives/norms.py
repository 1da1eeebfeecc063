"""The row of the p-norm over axes, (sum |x|^p)^(1/p), for a finite p other than 0
(functrans.torch takes it for p other than 1 and 2, which are sums of |x| and of squares under
norm_sqrt, and for cdist's p = 1, whose PyTorch derivative, sign(x) with NaN at NaN, is this
row's). Its derivative is sign(x) |x|^(p-1) y^(1-p): at a zero entry (p < 1) and at a zero
norm (p > 1) JAX's rule meets 0 * inf and gives NaN (jnp.linalg.norm's derivative); PyTorch's
norm_backward masks both to 0."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ndim_of
from functrans.primitives.elementwise import abs, eq, ge, mul, pow, select, sign
from functrans.primitives.layout import normalize_axes, reduce_batch, reduce_sum, reduced_aval
from functrans.primitives.registry import define


def _c(x, v):
    return np.asarray(v, x.dtype)


def _p_norm_impl(x, *, p, axes):
    return xp.sum(xp.abs(x) ** _c(x, p), axis=axes) ** _c(x, 1 / p)


def _p_norm_abstract(x, *, p, axes):
    return reduced_aval(x, axes=axes)


def _where_nonzero(x, fn):
    """fn(x) where x != 0, else 0: fn never sees a zero (no inf, nor 0 * inf after it)."""
    zero = eq(x, _c(x, 0))
    return select(zero, _c(x, 0), fn(select(zero, _c(x, 1), x)))


def _p_norm_jvp(torch):
    def jvp(primals, tangents, *, p, axes):
        x, = primals
        t, = tangents
        y = p_norm_p.bind(x, p=p, axes=axes)
        if torch:
            slope = _where_nonzero(x, lambda v: mul(sign(v), pow(abs(v), _c(v, p - 1))))
            scale = _where_nonzero(y, lambda v: pow(v, _c(v, 1 - p)))
        else:
            # abs's JAX derivative: +1 at 0
            slope = mul(select(ge(x, _c(x, 0)), _c(x, 1), _c(x, -1)), pow(abs(x), _c(x, p - 1)))
            scale = pow(y, _c(y, 1 - p))
        return y, mul(reduce_sum(mul(slope, t), axes), scale)
    return jvp


p_norm_p = define("p_norm", impl=_p_norm_impl, abstract=_p_norm_abstract, jvp=_p_norm_jvp(False),
                  torch_jvp=_p_norm_jvp(True), torch_name="LinalgVectorNormBackward0")
p_norm_p.rules["batch"] = reduce_batch(p_norm_p)


def p_norm(x, p, axes):
    """(sum over `axes` of |x|^p)^(1/p), for a finite p other than 0."""
    return p_norm_p.bind(x, p=float(p), axes=normalize_axes(axes, ndim_of(x)))
