"""functrans.torch: PyTorch's autograd semantics for tensor-style code, on functrans' primitives.

`import functrans.torch as torch` runs the autograd parts of ordinary PyTorch code: tensors
record onto a graph whose nodes are functrans primitives (or one node per composite op, named
as PyTorch names it), and `backward()` runs the library's own VJP over that graph.

>>> import functrans.torch as torch
>>> a = torch.tensor(2.0, requires_grad=True)
>>> b = a.exp()
>>> b
tensor(7.3891, grad_fn=<ExpBackward0>)
>>> b.backward()
>>> a.grad
tensor(7.3891)

Where it differs from PyTorch: CPU only (devices report as a CPU-only PyTorch build does); random
numbers are PyTorch's CPU generator's, bit for bit for the same seed; float32 results can differ
in the last bit where numpy and PyTorch's vectorized kernels round differently (sin, pow, long
sums); `torch.nn` has Module, the containers, linear, convolution, pooling, normalisation,
dropout and embedding layers, activations, losses, `nn.init` and `nn.utils` clipping, but no
recurrent layers; forward-mode AD (`torch.func`, `autograd.forward_ad`) is not provided.
"""

from __future__ import annotations

import math

from functrans import numpy as _fnp  # noqa: F401  (installs tracer operators first)
# _tensor_methods installs Tensor's methods
from functrans.torch import _dtype, _tensor_methods, autograd, nn, optim, utils  # noqa: F401
from functrans.torch._activations import celu, log_softmax, selu, softmax  # noqa: F401
from functrans.torch._complex import (  # noqa: F401
    adjoint, angle, complex, conj, conj_physical, imag, is_conj, is_neg, isreal, polar, real, resolve_conj,
    resolve_neg, sgn, vdot, view_as_complex, view_as_real)
from functrans.torch._creation import (  # noqa: F401
    arange, as_tensor, bernoulli, default_generator, empty, empty_like, eye, from_numpy, full,
    full_like, Generator, get_rng_state, initial_seed, linspace, logspace, manual_seed, normal,
    ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm, seed,
    set_rng_state, tensor, zeros, zeros_like)
from functrans.torch._differences import diff, trapezoid, trapz  # noqa: F401
from functrans.torch._dtype import (  # noqa: F401
    bool_ as bool, complex128, complex64, dtype, finfo, float16, float32, float64,
    get_default_dtype, iinfo, int16, int32, int64, int8, set_default_dtype, uint8)
from functrans.torch._elementwise import (  # noqa: F401
    abs, absolute, acos, acosh, add, addcdiv, addcmul, allclose, arccos, arccosh, arcsin, arcsinh,
    arctan, arctan2, arctanh, asin, asinh, atan, atan2, atanh, ceil, clamp, clamp_max, clamp_min,
    clip, copysign, cos, cosh, deg2rad, div, divide, eq, equal, erf, erfc, exp, exp2, expm1, fix,
    floor, floor_divide, fmax, fmin, fmod, frac, ge, greater, greater_equal, gt, heaviside, hypot,
    is_nonzero, is_same_size, is_signed, isclose, isfinite, isinf, isnan, le, lerp, less,
    less_equal, log, log10, log1p, log2, logaddexp, logaddexp2, logical_and, logical_not,
    logical_or, logical_xor, logit, lt, maximum, minimum, mul, multiply, nan_to_num, ne, neg,
    negative, not_equal, positive, pow, rad2deg, reciprocal, relu, remainder, round, rsqrt, rsub,
    sigmoid, sign, signbit, sin, sinc, sinh, sqrt, square, sub, subtract, tan, tanh, true_divide,
    trunc, where, xlogy)
from functrans.torch._grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled)
from functrans.torch._indexing import (  # noqa: F401
    argsort, as_strided, gather, index_select, isin, masked_fill, masked_select, median, nanmedian,
    nonzero, repeat_interleave, select, sort, take, take_along_dim, topk)
from functrans.torch._linalg import (  # noqa: F401
    addmm, bmm, cdist, cosine_similarity, cross, dist, dot, einsum, ger, inner, kron, matmul, mm,
    mv, outer, pairwise_distance)
from functrans.torch._ops import clone  # noqa: F401
from functrans.torch._printing import get_printoptions, set_printoptions  # noqa: F401
from functrans.torch._reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, count_nonzero, cummax, cummin, cumprod, cumsum,
    logsumexp, max, mean, min, nanmean, nansum, norm, prod, std, std_mean, sum, var, var_mean)
from functrans.torch._scatter import (  # noqa: F401
    index_add, index_fill, index_put, scatter, scatter_add, scatter_reduce)
from functrans.torch._shape import (  # noqa: F401
    atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors,
    broadcast_to, cartesian_prod, cat, chunk, column_stack, concat, concatenate, diag, diag_embed,
    diagflat, diagonal, dstack, flatten, flip, fliplr, flipud, hstack, meshgrid, moveaxis, movedim,
    narrow, permute, repeat, reshape, roll, split, split_with_sizes, squeeze, stack, swapaxes,
    swapdims, t, tile, trace, transpose, tril, triu, unbind, unflatten, unsafe_chunk, unsafe_split,
    unsafe_split_with_sizes, unsqueeze, vstack)
from functrans.torch._complex import complex_overrides as _complex_overrides
from functrans.torch._ops import named as _named
from functrans.torch import _elementwise as _ew
from functrans.torch._out import supports_out as _supports_out
from functrans.torch._legacy import LEGACY_TYPES as _LEGACY_TYPES
from functrans.torch._tensor import Size, Tensor, device  # noqa: F401

globals().update(_LEGACY_TYPES)  # FloatTensor, DoubleTensor, LongTensor, BoolTensor, ...

# the elementwise functions take out=, as PyTorch's do (their Tensor methods do not)
for _n in [_k for _k, _v in list(globals().items())
           if callable(_v) and not isinstance(_v, type) and getattr(_ew, _k, None) is _v
           and _k not in ("allclose", "equal", "is_nonzero", "is_same_size", "is_signed")]:
    globals()[_n] = _supports_out(globals()[_n], _n)

# torch.max, torch.clamp, ... and their Tensor methods refuse complex input, as PyTorch's do
globals().update(_complex_overrides(globals()))
for _n, _f in _complex_overrides(vars(Tensor)).items():
    setattr(Tensor, _n, _f)

float, double, half, long, int, short = float32, float64, float16, int64, int32, int16
cfloat, cdouble = complex64, complex128
strided = "torch.strided"
contiguous_format = preserve_format = "torch.contiguous_format"

__version__ = "2.13.0+functrans"

pi, e, inf, nan, newaxis = math.pi, math.e, math.inf, math.nan, None


def is_tensor(obj) -> bool:
    """torch.is_tensor: whether obj is a Tensor."""
    return isinstance(obj, Tensor)


def _method_function(name):
    """torch.NAME(input, ...), which is input.NAME(...), as in PyTorch."""
    return _named(lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs), name,
                  f"torch.{name}(input, ...): input.{name}(...)"
                  + (", in place." if name.endswith("_") else "."))


# PyTorch's functions that are their Tensor method (the NAME_ ones: its in-place functions)
for _n in ("is_inference is_floating_point is_complex numel detach abs_ acos_ acosh_ arccos_ "
           "arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ "
           "clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ "
           "fill_ fix_ floor_ frac_ index_put_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ "
           "negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
           "square_ tan_ tanh_ trunc_ xlogy_ zero_").split():
    globals()[_n] = _method_function(_n)


def result_type(tensor1, tensor2):
    """torch.result_type: the dtype PyTorch's promotion gives tensor1 op tensor2."""
    return _dtype.from_numpy(_dtype.result_type(tensor1, tensor2))


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both type1 and type2 convert to."""
    return _dtype.from_numpy(_dtype.promote_types(type1.dtype, type2.dtype))


def can_cast(from_, to) -> bool:
    """torch.can_cast: whether PyTorch's casting rules allow from_ to become to."""
    return _dtype._category(from_.dtype) <= _dtype._category(to.dtype)


from functrans.torch import linalg, random  # noqa: E402,F401
from functrans.torch._devices import (  # noqa: E402,F401
    accelerator, backends, cuda, get_default_device, set_default_device)


# every public name above, the subpackages autograd and nn included: what
# `from functrans.torch import *` and the API reference take (less the dtype aliases bool, float
# and int, which a star import would let shadow Python's types)
__all__ = sorted(_n for _n in globals() if not _n.startswith("_")
                 and _n not in ("annotations", "math", "bool", "float", "int"))
