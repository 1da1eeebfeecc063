"""PyTorch's shape ops over the shape primitives (indexing is in _indexing).

Views (view/reshape of contiguous data, t, transpose, permute, unsqueeze, squeeze, expand,
basic indexing, narrow, select, split, ...) share their base's storage, as numpy views do, and
its version counter. A view also remembers its base and how to take it again (`replay`): an
in-place operation on the view then rewrites the base's history (CopySlices, see _inplace), and
a view whose base's history was rewritten after it was taken gets its grad_fn regenerated from
the base, as in PyTorch.
"""

from __future__ import annotations

import re

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._grad_mode import MODE
from functrans.torch._ops import as_tensor
from functrans.torch._record import Op, composite, prim_op, run
from functrans.torch._tensor import Tensor, _dim, warn_once, wrap
from functrans.torch._views import as_view, multi_views, view_op


# --- reshape / view --------------------------------------------------------------------------

RESHAPE = prim_op(REGISTRY["reshape"], "ViewBackward0")
_UNSAFE_VIEW = prim_op(REGISTRY["reshape"], "UnsafeViewBackward0")


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], tuple | list):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer(shape, numel):
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def reshape(input, *shape):
    """A view where the strides allow one (ViewBackward0 for contiguous data,
    ReshapeAliasBackward0 otherwise), else a copy (CloneBackward0, then UnsafeViewBackward0)."""
    x = as_tensor(input)
    shape = _infer(_shape_arg(shape), x._value.size)
    v = x._value
    if v.flags.c_contiguous or v.size <= 1:
        if v.shape == shape:
            return _alias(x)
        return view_op(RESHAPE, x, {"new_sizes": shape})
    if _viewable(v, shape):
        return view_op(_RESHAPE_ALIAS, x, {"new_sizes": shape})
    from functrans.torch._ops import clone
    c = clone(x)
    return run(_UNSAFE_VIEW, (c,), (c._value,), {"new_sizes": shape})


_RESHAPE_ALIAS = prim_op(REGISTRY["reshape"], "ReshapeAliasBackward0")


def _viewable(v, shape) -> bool:
    try:
        v.view().shape = shape  # numpy raises when no view is possible
    except AttributeError:
        return False
    return True


def view(input, *shape):
    x = as_tensor(input)
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return wrap(x._value.view(shape[0].dtype))
    shape = _infer(_shape_arg(shape), x._value.size)
    v = x._value
    if not v.flags.c_contiguous and v.size > 1 and v.shape != shape and \
            not _viewable(v, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return view_op(RESHAPE, x, {"new_sizes": shape})


def _alias(x):
    """A new tensor object viewing all of x (what PyTorch returns for a no-op view)."""
    return view_op(RESHAPE, x, {"new_sizes": x._value.shape})


def view_as(input, other):
    return view(input, tuple(as_tensor(other)._value.shape))


def reshape_as(input, other):
    return reshape(input, tuple(as_tensor(other)._value.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """torch.flatten: the dimensions start_dim .. end_dim merged into one."""
    x = as_tensor(input)
    shp = x._value.shape
    if not shp:
        return reshape(x, (1,))
    s, e = _dim(start_dim, len(shp)), _dim(end_dim, len(shp))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    new = shp[:s] + (int(np.prod(shp[s:e + 1], dtype=np.int64)),) + shp[e + 1:]
    if new == shp:
        return x
    return reshape(x, new)


def unflatten(input, dim, sizes):
    """torch.unflatten: dimension dim split into the dimensions sizes."""
    x = as_tensor(input)
    shp = x._value.shape
    d = _dim(dim, len(shp))
    sizes = _infer(tuple(sizes), shp[d])
    return reshape(x, shp[:d] + sizes + shp[d + 1:])


def ravel(input):
    return flatten(input)


# --- axes ------------------------------------------------------------------------------------

SQUEEZE0 = prim_op(REGISTRY["squeeze"], "SqueezeBackward0")
SQUEEZE1 = prim_op(REGISTRY["squeeze"], "SqueezeBackward1")
SQUEEZE2 = prim_op(REGISTRY["squeeze"], "SqueezeBackward2")  # a tuple of dims
SQUEEZE4 = prim_op(REGISTRY["squeeze"], "SqueezeBackward4")  # in place, one dim
UNSQUEEZE = prim_op(REGISTRY["expand_dims"], "UnsqueezeBackward0")
PERMUTE = prim_op(REGISTRY["transpose"], "PermuteBackward0")
TRANSPOSE = prim_op(REGISTRY["transpose"], "TransposeBackward0")
T_OP = prim_op(REGISTRY["transpose"], "TBackward0")


def squeeze(input, dim=None):
    """torch.squeeze: a view without the dimensions of size one (or only dim)."""
    x = as_tensor(input)
    shp = x._value.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shp) if s == 1)
        op = SQUEEZE0
    else:
        ds = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(sorted({_dim(d, len(shp)) for d in ds if shp and shp[_dim(d, len(shp))]
                             == 1}))
        op = SQUEEZE1 if isinstance(dim, int) else SQUEEZE2
    return view_op(op, x, {"dimensions": dims})


def unsqueeze(input, dim):
    """torch.unsqueeze: a view with a new dimension of size one at dim."""
    x = as_tensor(input)
    d = _dim(dim, x._value.ndim + 1)
    return view_op(UNSQUEEZE, x, {"dimensions": (d,)})


def permute(input, *dims):
    """torch.permute: a view of input with its dimensions in the order dims."""
    x = as_tensor(input)
    dims = _shape_arg(dims)
    nd = x._value.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    perm = tuple(_dim(d, nd) for d in dims)
    return view_op(PERMUTE, x, {"permutation": perm})


def transpose(input, dim0, dim1):
    """torch.transpose (also swapaxes, swapdims): a view with dim0 and dim1 exchanged."""
    x = as_tensor(input)
    nd = x._value.ndim
    if nd == 0:
        return _alias(x)
    d0, d1 = _dim(dim0, nd), _dim(dim1, nd)
    perm = list(range(nd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    perm = tuple(perm)
    return view_op(TRANSPOSE, x, {"permutation": perm})


swapaxes = swapdims = transpose


def t(input):
    """torch.t: the transpose of a tensor of at most two dimensions."""
    x = as_tensor(input)
    nd = x._value.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    if nd < 2:
        return _alias(x)
    return view_op(T_OP, x, {"permutation": (1, 0)})


def numpy_T(input):
    x = as_tensor(input)
    nd = x._value.ndim
    perm = tuple(reversed(range(nd)))
    if nd == 0:
        warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                  "in these cases.", 2)
    elif nd != 2:
        warn_once("T", "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                  "shape is deprecated and it will throw an error in a future release. Consider "
                  "`x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - "
                  "1, -1, -1))` to reverse the dimensions of a tensor.", 2)
    return view_op(PERMUTE, x, {"permutation": perm})


def mT(input):
    x = as_tensor(input)
    return transpose(x, -2, -1)


def movedim(input, source, destination):
    """torch.movedim (also moveaxis): the dimensions source moved to destination."""
    x = as_tensor(input)
    nd = x._value.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_dim(s, nd) for s in src]
    dst = [_dim(d, nd) for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(x, tuple(order))


moveaxis = movedim


# --- broadcasting ----------------------------------------------------------------------------

EXPAND = prim_op(REGISTRY["broadcast_in_dim"], "ExpandBackward0")


def expand(input, *sizes):
    x = as_tensor(input)
    sizes = _shape_arg(sizes)
    shp = x._value.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, shp))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   "leading, non-existing dimension 0")
            out.append(s)
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        if cur != 1 and cur != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"[{', '.join(map(str, sizes))}].  Tensor sizes: "
                               f"[{', '.join(map(str, shp))}]")
        out.append(s)
    out = tuple(out)
    bdims = tuple(range(lead, len(out)))
    return view_op(EXPAND, x, {"shape": out, "broadcast_dimensions": bdims})


def expand_as(input, other):
    return expand(input, tuple(as_tensor(other)._value.shape))


def broadcast_to(input, size):
    """torch.broadcast_to: input broadcast to size."""
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: the tensors broadcast to their common shape."""
    ts = [as_tensor(t) for t in tensors]
    shape = np.broadcast_shapes(*(t._value.shape for t in ts))
    return tuple(t if t._value.shape == shape else expand(t, shape) for t in ts)


@composite("RepeatBackward0")
def _repeat(x, *, repeats):
    return fnp.tile(x, repeats)


def repeat(input, *sizes):
    """torch.repeat (Tensor.repeat): input tiled sizes times along each dimension."""
    x = as_tensor(input)
    sizes = _shape_arg(sizes)
    if len(sizes) < x._value.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return run(_repeat, (x,), (x._value,), {"repeats": sizes})


# --- joining and splitting -------------------------------------------------------------------

@composite("CatBackward0")
def _cat(*xs, dim, dt):
    return fnp.concatenate([S.convert_element_type(x, dt) for x in xs], axis=dim)


@composite("StackBackward0")
def _stack(*xs, dim, dt):
    return fnp.stack([S.convert_element_type(x, dt) for x in xs], axis=dim)


def cat(tensors, dim=0, *, out=None):
    """torch.cat (also concat, concatenate): the tensors joined along dim."""
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ts = [t for t in ts if not (t._value.ndim == 1 and t._value.size == 0)] or ts[:1]
    nd = ts[0]._value.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _dim(dim, nd)
    dt = _dtype.result_type(*[t._value for t in ts if t._value.ndim] or [ts[0]._value])
    return run(_cat, ts, [t._value for t in ts], {"dim": d, "dt": dt})


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """torch.stack: the tensors joined along a new dimension dim."""
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = ts[0]._value.shape
    for i, t in enumerate(ts):
        if t._value.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, shp))}] at entry 0 and "
                               f"[{', '.join(map(str, t._value.shape))}] at entry {i}")
    d = _dim(dim, len(shp) + 1)
    dt = _dtype.result_type(*[t._value for t in ts])
    return run(_stack, ts, [t._value for t in ts], {"dim": d, "dt": dt})


def hstack(tensors):
    """torch.hstack: the tensors joined along dim 1 (dim 0 for 1-d tensors)."""
    ts = [as_tensor(t) for t in tensors]
    return cat(ts, 0 if ts[0]._value.ndim == 1 else 1)


def vstack(tensors):
    """torch.vstack: the tensors, made at least 2-d, joined along dim 0."""
    ts = [as_tensor(t) for t in tensors]
    ts = [reshape(t, (1, -1)) if t._value.ndim < 2 else t for t in ts]
    return cat(ts, 0)


@composite("SplitBackward0", multiple=True)
def _split(x, *, dim, bounds):
    return [_narrow(x, dim, a, b - a) for a, b in bounds]


_SPLIT_WITH_SIZES = Op("SplitWithSizesBackward0", _split.impl, _split.traced, multiple=True)
_UNSAFE_OPS = {"SplitBackward0": Op("UnsafeSplitBackward0", _split.impl, _split.traced,
                                    multiple=True),
               "SplitWithSizesBackward0": Op("UnsafeSplitWithSizesBackward0", _split.impl,
                                             _split.traced, multiple=True)}


@composite("UnbindBackward0", multiple=True)
def _unbind(x, *, dim):
    return [S.squeeze(_narrow(x, dim, i, 1), (dim,)) for i in range(x.shape[dim])]


def _narrow(x, dim, start, length):
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[dim] = start
    limits[dim] = start + length
    return REGISTRY["slice"].bind(x, start_indices=tuple(starts), limit_indices=tuple(limits),
                                  strides=(1,) * x.ndim)


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: views of pieces of split_size_or_sections entries along dim."""
    return _split_views(tensor, split_size_or_sections, dim, unsafe=False)


def _split_views(tensor, split_size_or_sections, dim, unsafe):
    x = as_tensor(tensor)
    d = _dim(dim, x._value.ndim)
    n = x._value.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        bounds = tuple((a, min(a + step, n)) for a in range(0, n, step)) if n else ((0, 0),)
        op = _split
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
        bounds, a = [], 0
        for s in sizes:
            bounds.append((a, a + s))
            a += s
        bounds = tuple(bounds)
        op = _SPLIT_WITH_SIZES
    params = {"dim": d, "bounds": bounds}
    if unsafe:
        op = _UNSAFE_OPS[op.name]
    views = multi_views(x, run(op, (x,), (x._value,), params),
                   lambda t: run(op, (t,), (t._value,), params),
                   "Split" if op is _split else "SplitWithSizes")
    if unsafe:  # PyTorch does not track these pieces as views: no guard, own versions
        for v in views:
            v._vc = None
            if v._meta is not None:
                v._meta.multi_view = None
                v._meta.base, v._meta.replay, v._meta.no_grad_view = None, (), False
    return views


def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes: views of pieces of the given sizes along dim."""
    return split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """torch.unsafe_split: split whose pieces PyTorch does not guard against in-place changes
    (the same values and gradients; node UnsafeSplitBackward0)."""
    return _split_views(input, split_size, dim, unsafe=True)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """torch.unsafe_split_with_sizes: split_with_sizes without the multi-view guard."""
    return _split_views(input, list(split_sizes), dim, unsafe=True)


def unsafe_chunk(input, chunks, dim=0):
    """torch.unsafe_chunk: chunk whose pieces autograd does not track as views."""
    x = as_tensor(input)
    n = x._value.shape[_dim(dim, x._value.ndim)]
    step = -(-n // chunks) if chunks else n
    return unsafe_split(x, _pymax_int(step, 1), dim)


def chunk(input, chunks, dim=0):
    """torch.chunk: input cut into `chunks` pieces along dim (the last may be smaller)."""
    x = as_tensor(input)
    n = x._value.shape[_dim(dim, x._value.ndim)]
    step = -(-n // chunks) if chunks else n
    return split(x, _pymax_int(step, 1), dim)


def _pymax_int(a, b):
    return a if a > b else b


def unbind(input, dim=0):
    """torch.unbind: the slices of input along dim, as a tuple of views."""
    x = as_tensor(input)
    d = _dim(dim, x._value.ndim)
    return multi_views(x, run(_unbind, (x,), (x._value,), {"dim": d}),
                  lambda t: run(_unbind, (t,), (t._value,), {"dim": d}), "Unbind")


NARROW = prim_op(REGISTRY["slice"], "SliceBackward0")


def narrow(input, dim, start, length):
    """torch.narrow: a view of length entries of input from start along dim."""
    x = as_tensor(input)
    d = _dim(dim, x._value.ndim)
    n = x._value.shape[d]
    start = int(start) % n if start < 0 else int(start)
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    starts = [0] * x._value.ndim
    limits = list(x._value.shape)
    starts[d], limits[d] = start, start + length
    params = {"start_indices": tuple(starts), "limit_indices": tuple(limits),
              "strides": (1,) * x._value.ndim}
    return view_op(NARROW, x, params)


def select(input, dim, index):
    """torch.select: a view of input at index along dim, that dimension removed."""
    from functrans.torch._indexing import getitem
    x = as_tensor(input)
    idx = [slice(None)] * x._value.ndim
    idx[_dim(dim, x._value.ndim)] = index
    return getitem(x, tuple(idx))


FLIP = prim_op(REGISTRY["rev"], "FlipBackward0")


def flip(input, dims):
    """torch.flip: input with its order reversed along dims."""
    x = as_tensor(input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    ds = tuple(sorted({_dim(d, x._value.ndim) for d in dims}))
    out = run(FLIP, (x,), (x._value,), {"dimensions": ds})
    if np.may_share_memory(out._value, x._value):
        out._value = out._value.copy()  # PyTorch's flip copies
    return out


@composite("RollBackward0")
def _roll(x, *, shifts, dims):
    return fnp.roll(x, shifts, dims)


def roll(input, shifts, dims=None):
    """torch.roll: the elements shifted cyclically by shifts along dims (flattened if None)."""
    x = as_tensor(input)
    shifts = shifts if isinstance(shifts, int) else tuple(shifts)
    dims = dims if dims is None or isinstance(dims, int) else tuple(dims)
    return run(_roll, (x,), (x._value,), {"shifts": shifts, "dims": dims})


@composite("TrilBackward0")
def _tril(x, *, k):
    mask = np.tril(np.ones(x.shape[-2:], np.bool_), k)
    return E.select(mask, x, np.zeros((), x.dtype))


@composite("TriuBackward0")
def _triu(x, *, k):
    mask = np.triu(np.ones(x.shape[-2:], np.bool_), k)
    return E.select(mask, x, np.zeros((), x.dtype))


def tril(input, diagonal=0):
    """torch.tril: the lower triangle of the matrix (zeros above the diagonal-th diagonal)."""
    x = as_tensor(input)
    return run(_tril, (x,), (x._value,), {"k": int(diagonal)})


def triu(input, diagonal=0):
    """torch.triu: the upper triangle of the matrix (zeros below the diagonal-th diagonal)."""
    x = as_tensor(input)
    return run(_triu, (x,), (x._value,), {"k": int(diagonal)})


@composite("DiagonalBackward0")
def _diagonal(x, *, offset, dim1, dim2):
    return fnp.diagonal(x, offset, dim1, dim2)


def _diagonal_view(x, *, offset, dim1, dim2):
    out = np.diagonal(x, offset, dim1, dim2)
    if out.size and x.flags.writeable:  # numpy's view is read-only; PyTorch's is writable
        start = [slice(None)] * x.ndim
        if offset >= 0:
            start[dim2] = slice(offset, None)
        else:
            start[dim1] = slice(-offset, None)
        out = np.lib.stride_tricks.as_strided(x[tuple(start)], out.shape, out.strides)
    return out


_DIAGONAL = Op("DiagonalBackward0", _diagonal_view, _diagonal.traced)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """torch.diagonal: the offset diagonal over dim1 and dim2, as the last dimension."""
    x = as_tensor(input)
    nd = x._value.ndim
    params = {"offset": int(offset), "dim1": _dim(dim1, nd), "dim2": _dim(dim2, nd)}
    return view_op(_DIAGONAL, x, params)


@composite("TraceBackward0")
def _trace(x):
    return fnp.trace(x)


def trace(input):
    """torch.trace: the sum of the main diagonal of a matrix."""
    x = as_tensor(input)
    return run(_trace, (x,), (x._value,))


def contiguous(input, memory_format=None):
    """self when already contiguous, else a contiguous copy (CloneBackward0)."""
    from functrans.torch._ops import clone
    x = as_tensor(input)
    if x._value.flags.c_contiguous:
        return x
    out = clone(x)
    out._value = np.ascontiguousarray(out._value)
    return out



# --- repeat_interleave, tile, diag, meshgrid -------------------------------------------------

def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element repeated: an int count as PyTorch records it (unsqueeze, expand, a
    contiguous copy, a view), a tensor of counts as an index_select."""
    from functrans.torch._indexing import index_select
    if repeats is None:  # torch.repeat_interleave(counts): arange(n) repeated by counts
        counts = as_tensor(input)._value
        return wrap(np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1)))
    x = as_tensor(input)
    if dim is None:
        x = flatten(x)
        d = 0
    else:
        d = _dim(dim, max(x._value.ndim, 1))
    if isinstance(repeats, Tensor):
        counts = repeats._value.reshape(-1)
        if counts.size == 1:
            counts = np.broadcast_to(counts, (x._value.shape[d] if x._value.ndim else 1,))
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        n = x._value.shape[d] if x._value.ndim else 1
        if counts.size != n:
            raise RuntimeError("repeats must have the same size as input along dim")
        idx = np.repeat(np.arange(n, dtype=np.int64), counts)
        return index_select(x, d, wrap(idx))
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    if x._value.ndim == 0:
        x = reshape(x, (1,))
    shp = x._value.shape
    u = unsqueeze(x, d + 1)
    e = expand(u, shp[:d + 1] + (r,) + shp[d + 1:])
    return view(contiguous(e), shp[:d] + (shp[d] * r,) + shp[d + 1:])


def tile(input, dims):
    """torch.tile: input repeated dims times along each dimension."""
    x = as_tensor(input)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    nd = x._value.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(x, dims)


@composite("DiagEmbedBackward0")
def _diag_embed(x, pos, *, n):
    flat = REGISTRY["scatter_add"].bind(np.zeros(n * n, x.dtype), pos, x, axis=0)
    return S.reshape(flat, (n, n))


@composite("DiagonalBackward0_copy")
def _diag_copy(x, *, offset):
    return fnp.diagonal(x, offset, 0, 1)


def diag(input, diagonal=0):
    """A 1-D input on the k-th diagonal of a square matrix, or a 2-D input's k-th diagonal
    (a copy)."""
    x = as_tensor(input)
    v = x._value
    k = int(diagonal)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        rows = np.arange(v.shape[0], dtype=np.int64) + max(-k, 0)
        pos = rows * n + rows + k
        return run(_diag_embed, (x, None), (v, pos), {"n": n})
    if v.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{v.ndim}D")
    out = run(_diag_copy, (x,), (v,), {"offset": k})
    out._value = np.array(out._value)  # a copy, not numpy's read-only view
    return out


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: each input viewed along its own axis, then expanded (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    ts = [as_tensor(t) for t in tensors]
    if indexing is None:
        warn_once("meshgrid", "torch.meshgrid: in an upcoming release, it will be required to "
                  "pass the indexing argument.", 2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in ts:
        if t._value.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    swap = indexing == "xy" and len(ts) >= 2
    order = [1, 0] + list(range(2, len(ts))) if swap else list(range(len(ts)))
    shape = tuple(ts[i]._value.size for i in order)
    out = []
    for k, t in enumerate(ts):
        axis = order.index(k)
        view_shape = [1] * len(ts)
        view_shape[axis] = -1
        out.append(expand(view(t, tuple(view_shape)), shape))
    return tuple(out)
