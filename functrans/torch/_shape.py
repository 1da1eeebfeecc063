"""PyTorch's shape ops: argument names, checks and messages, then one shape primitive or one
functrans.numpy function recorded as one node named as PyTorch names it. The ops that are only
that come from tables (`_VIEWS`, `_COPIES`). Views share their base's storage and version
counter (see _views); indexing is in _indexing.
"""

from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.primitives import shape_ops as S
from functrans.torch import _dtype
from functrans.torch._ops import as_tensor, clone, named, unary
from functrans.torch._record import Op, composite, prim_op, run
from functrans.torch._tensor import Size, _dim, is_inference, mark_inference, warn_once, wrap
from functrans.torch._views import multi_views, view_op  # noqa: F401  (view_op: _linalg's)


def _ints(shape):
    """Sizes given as ints or as one sequence (`view(2, 3)`, `view((2, 3))`)."""
    if len(shape) == 1 and isinstance(shape[0], tuple | list):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def normalized_dims(dims, nd) -> tuple:
    """One dim or several, normalised, sorted and without repeats."""
    return tuple(sorted({_dim(d, nd) for d in ((dims,) if isinstance(dims, int) else dims)}))


def _shown(shape) -> str:
    return ", ".join(map(str, shape))


def _tuple(a):
    return a if a is None or isinstance(a, int) else tuple(a)


def _define(table, run_op) -> tuple:
    """The public functions of `table` (name: (op, params, what)), in its order: torch.NAME(
    input, *args) runs `op` on input with `params(input's array, *args)`, through `run_op`
    (`params` may return (op, params) instead, to choose the op)."""
    def public(name, op, params, what):
        def fn(input, *args, **kwargs):
            x = as_tensor(input)
            p = params(x._value, *args, **kwargs)
            chosen, p = p if type(p) is tuple else (op, p)
            return run_op(chosen, x, p)
        return named(fn, name, f"torch.{name}: {what}.")
    return tuple(public(name, *row) for name, row in table.items())


# --- reshape / view --------------------------------------------------------------------------

RESHAPE = prim_op(S.reshape_p, "ViewBackward0")
_RESHAPE_ALIAS = prim_op(S.reshape_p, "ReshapeAliasBackward0")
_UNSAFE_VIEW = prim_op(S.reshape_p, "UnsafeViewBackward0")


def _infer(shape, numel, invalid=None):
    """`shape` with its -1 inferred for `numel` elements (else RuntimeError `invalid`)."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if -1 in shape and known and not numel % known:
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if -1 in shape or int(np.prod(shape, dtype=np.int64)) != numel:
        raise RuntimeError(invalid or f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _viewable(v, shape) -> bool:
    if v.flags.c_contiguous or v.size <= 1 or v.shape == shape:
        return True
    try:
        v.view().shape = shape  # numpy raises when no view is possible
    except AttributeError:
        return False
    return True


def reshape(input, *shape):
    """A view where the strides allow one (ViewBackward0 for contiguous data,
    ReshapeAliasBackward0 otherwise), else a copy (CloneBackward0, then UnsafeViewBackward0)."""
    x = as_tensor(input)
    v = x._value
    shape = _infer(_ints(shape), v.size)
    if v.flags.c_contiguous or v.size <= 1:
        return view_op(RESHAPE, x, {"new_sizes": shape})
    if _viewable(v, shape):
        return view_op(_RESHAPE_ALIAS, x, {"new_sizes": shape})
    return unary(_UNSAFE_VIEW, clone(x), {"new_sizes": shape})


def view(input, *shape):
    x = as_tensor(input)
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return wrap(x._value.view(shape[0].dtype))
    shape = _infer(_ints(shape), x._value.size)
    if not _viewable(x._value, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return view_op(RESHAPE, x, {"new_sizes": shape})


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
    return x if new == shp else reshape(x, new)


def unflatten(input, dim, sizes):
    """torch.unflatten: dimension dim split into the dimensions sizes."""
    x = as_tensor(input)
    shp, sizes = x._value.shape, tuple(sizes)
    d = _dim(dim, len(shp))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    inner = _infer(sizes, shp[d], f"unflatten: Provided sizes {list(sizes)} don't multiply up to "
                   f"the size of dim {d} ({shp[d]}) in the input tensor")
    return reshape(x, shp[:d] + inner + shp[d + 1:])


# --- views of one primitive ------------------------------------------------------------------

SQUEEZE4 = prim_op(S.squeeze_p, "SqueezeBackward4")  # in place, one dim
_SQUEEZE = {k: prim_op(S.squeeze_p, f"SqueezeBackward{k}") for k in (0, 1, 2)}  # all/dim/dims
_PERMUTE = prim_op(S.transpose_p, "PermuteBackward0")
_TRANSPOSE = prim_op(S.transpose_p, "TransposeBackward0")


def squeeze_dims(shape, dim):
    """The dims squeeze(dim) removes: those of size one (among `dim` when given)."""
    if dim is None:
        return tuple(i for i, s in enumerate(shape) if s == 1)
    return tuple(d for d in normalized_dims(dim, len(shape)) if shape and shape[d] == 1)


def _permutation(v, *dims):
    dims, nd = _ints(dims), v.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
    return {"permutation": tuple(_dim(d, nd) for d in dims)}


def swapped(nd, dim0, dim1) -> tuple:
    """The permutation of nd dims that exchanges dim0 and dim1."""
    perm = list(range(nd))
    if nd:
        d0, d1 = _dim(dim0, nd), _dim(dim1, nd)
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return tuple(perm)


def _t(v):
    if v.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {v.ndim}D")
    return {"permutation": tuple(reversed(range(v.ndim)))}  # a no-op view below 2-D, as PyTorch's


def _reversed_dims(v):
    if v.ndim == 0:
        warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the identity "
                  "in these cases.", 3)
    elif v.ndim != 2:
        warn_once("T", "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                  "shape is deprecated and it will throw an error in a future release. Consider "
                  "`x.mT` to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - "
                  "1, -1, -1))` to reverse the dimensions of a tensor.", 3)
    return {"permutation": tuple(reversed(range(v.ndim)))}


def _moved(v, source, destination):
    src, dst = ([_dim(d, v.ndim) for d in ([a] if isinstance(a, int) else a)]
                for a in (source, destination))
    order = [i for i in range(v.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permutation(v, tuple(order))


def _expanded(v, *sizes):
    sizes, shp = _ints(sizes), v.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand(torch.{_dtype.kind(v.dtype)}Tensor{{[{_shown(shp)}]}}, "
                           f"size=[{_shown(sizes)}]): the number of sizes provided ({len(sizes)}) "
                           f"must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shp)})")
    lead = len(sizes) - len(shp)
    out = list(sizes)
    for i, s in enumerate(sizes):
        if i < lead and s < 0:
            raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                               "leading, non-existing dimension 0")
        cur = 1 if i < lead else shp[i - lead]
        out[i] = s = cur if s == -1 and i >= lead else s
        if cur != 1 and cur != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"[{_shown(sizes)}].  Tensor sizes: [{_shown(shp)}]")
    return {"shape": tuple(out), "broadcast_dimensions": tuple(range(lead, len(out)))}


def _slice_params(shape, dim, start, stop):
    """The params of the slice primitive taking entries start:stop along dim."""
    return {"start_indices": tuple(start if k == dim else 0 for k in range(len(shape))),
            "limit_indices": tuple(stop if k == dim else n for k, n in enumerate(shape)),
            "strides": (1,) * len(shape)}


def _narrowed(v, dim, start, length):
    d = _dim(dim, v.ndim)
    n = v.shape[d]
    start = int(start) % n if start < 0 else int(start)
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice_params(v.shape, d, start, start + length)


def _diagonal_view(x, *, offset, axis1, axis2):
    out = np.diagonal(x, offset, axis1, axis2)
    if out.size and x.flags.writeable:  # numpy's view is read-only; PyTorch's is writable
        start = [slice(None)] * x.ndim
        start[axis2 if offset >= 0 else axis1] = slice(abs(offset), None)
        out = np.lib.stride_tricks.as_strided(x[tuple(start)], out.shape, out.strides)
    return out


_EXPAND = prim_op(S.broadcast_in_dim_p, "ExpandBackward0")
_VIEWS = {  # torch name: (op, its params from input's array and the arguments, what it gives)
    "squeeze": (None, lambda v, dim=None: (
        _SQUEEZE[0 if dim is None else 1 if isinstance(dim, int) else 2],
        {"dimensions": squeeze_dims(v.shape, dim)}),
        "a view without the dimensions of size one (or only dim)"),
    "transpose": (_TRANSPOSE, lambda v, dim0, dim1: {"permutation": swapped(v.ndim, dim0, dim1)},
                  "a view with dim0 and dim1 exchanged (swapaxes, swapdims)"),
    "t": (prim_op(S.transpose_p, "TBackward0"), _t,
          "the transpose of a tensor of at most two dimensions"),
    "unsqueeze": (prim_op(S.expand_dims_p, "UnsqueezeBackward0"),
                  lambda v, dim: {"dimensions": (_dim(dim, v.ndim + 1),)},
                  "a view with a new dimension of size one at dim"),
    "permute": (_PERMUTE, _permutation, "a view of input with its dimensions in the order dims"),
    "movedim": (_PERMUTE, _moved, "the dimensions source moved to destination (also moveaxis)"),
    "numpy_T": (_PERMUTE, _reversed_dims, "Tensor.T, input with its dimensions reversed"),
    "expand": (_EXPAND, _expanded, "a view of input broadcast to sizes (-1: the size it has)"),
    "expand_as": (_EXPAND, lambda v, other: _expanded(v, tuple(as_tensor(other)._value.shape)),
                  "input expanded to the shape of other"),
    "broadcast_to": (_EXPAND, lambda v, size: _expanded(v, tuple(size)),
                     "input broadcast to size"),
    "narrow": (prim_op(S.slice_p, "SliceBackward0"), _narrowed,
               "a view of length entries of input from start along dim"),
    "diagonal": (Op("DiagonalBackward0", _diagonal_view, fnp.diagonal),
                 lambda v, offset=0, dim1=0, dim2=1: {"offset": int(offset),
                                                      "axis1": _dim(dim1, v.ndim),
                                                      "axis2": _dim(dim2, v.ndim)},
                 "the offset diagonal over dim1 and dim2, as the last dimension"),
}
(squeeze, transpose, t, unsqueeze, permute, movedim, numpy_T, expand, expand_as,
 broadcast_to, narrow, diagonal) = _define(_VIEWS, view_op)
moveaxis, swapaxes, swapdims = movedim, transpose, transpose


def matrix_transpose(input, name="Tensor.mT",
                     zero_d="This function is the identity in these cases.", stacklevel=2):
    """Tensor.mT: a view with the last two dimensions exchanged; a 0-d input itself, with
    PyTorch's deprecation warning (`name` and its `zero_d` hint: mH's, H's, adjoint()'s)."""
    x = as_tensor(input)
    nd = x._value.ndim
    if nd == 0:
        warn_once(name, f"{name} is deprecated on 0-D tensors. {zero_d}", stacklevel)
        return x
    if nd == 1:
        raise RuntimeError(f"tensor.{name.removeprefix('Tensor.')} is only supported on matrices "
                           "or batches of matrices. Got 1-D tensor.")
    return view_op(_TRANSPOSE, x, {"permutation": swapped(nd, -2, -1)})


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: the tensors broadcast to their common shape."""
    ts = [as_tensor(t) for t in tensors]
    shape = np.broadcast_shapes(*(t._value.shape for t in ts))
    return tuple(t if t._value.shape == shape else expand(t, shape) for t in ts)


# --- copies of one functrans.numpy call ------------------------------------------------------

def _repeats(v, *sizes):
    sizes = _ints(sizes)
    if len(sizes) < v.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return {"repeats": sizes}


def _triangle(name):
    def params(v, diagonal=0):
        if v.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return {"k": int(diagonal)}
    return params


def _tiled(v, dims):
    if not isinstance(dims, tuple | list):  # x.tile(2) takes ints, torch.tile(x, 2) does not
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{_dtype.type_name(dims)}")
    return _repeats(v, (1,) * (v.ndim - len(dims)) + tuple(dims))


_DIAG = {nd: Op(name, lambda x, *, k: np.array(np.diag(x, k)), lambda x, *, k: fnp.diag(x, k))
         for nd, name in ((1, "DiagEmbedBackward0"), (2, "DiagonalBackward0_copy"))}


def _diag_params(v, diagonal=0):
    if v.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {v.ndim}D")
    return _DIAG[v.ndim], {"k": int(diagonal)}


def _flip(x, *, dimensions):  # a copy, as PyTorch's (numpy's flip is a view)
    return np.array(S.rev_p.impl(x, dimensions=dimensions))


_REPEAT = composite("RepeatBackward0")(lambda x, *, repeats: fnp.tile(x, repeats))
_COPIES = {  # torch name: (op, its params from input's array and the arguments, what it gives)
    "repeat": (_REPEAT, _repeats, "input tiled sizes times along each dimension (Tensor.repeat)"),
    "tile": (_REPEAT, _tiled, "input repeated dims times along each dimension"),
    "flip": (Op("FlipBackward0", _flip, S.rev_p.bind),
             lambda v, dims: {"dimensions": normalized_dims(dims, v.ndim)},
             "input with its order reversed along dims (a copy, as PyTorch's)"),
    "roll": (composite("RollBackward0")(lambda x, *, shifts, dims: fnp.roll(x, shifts, dims)),
             lambda v, shifts, dims=None: {"shifts": _tuple(shifts), "dims": _tuple(dims)},
             "the elements shifted cyclically by shifts along dims (flattened if None)"),
    "tril": (composite("TrilBackward0")(lambda x, *, k: fnp.tril(x, k)), _triangle("tril"),
             "the lower triangle of the matrix (zeros above the diagonal-th diagonal)"),
    "triu": (composite("TriuBackward0")(lambda x, *, k: fnp.triu(x, k)), _triangle("triu"),
             "the upper triangle of the matrix (zeros below the diagonal-th diagonal)"),
    "trace": (composite("TraceBackward0")(fnp.trace), lambda v: None,
              "the sum of the main diagonal of a matrix"),
    "diag": (None, _diag_params, "a 1-D input on the diagonal-th diagonal of a square matrix, "
             "or a 2-D input's diagonal-th diagonal"),
}
repeat, tile, flip, roll, tril, triu, trace, diag = _define(_COPIES, unary)


def contiguous(input, memory_format=None):
    """self when already contiguous, else a contiguous copy (CloneBackward0)."""
    x = as_tensor(input)
    if x._value.flags.c_contiguous:
        return x
    out = clone(x)
    out._value = np.ascontiguousarray(out._value)
    return out


# --- joining and splitting -------------------------------------------------------------------

def _join(name, join):
    return composite(name)(lambda *xs, dim, dt: join([S.convert_element_type(x, dt)
                                                      for x in xs], axis=dim))


_CAT, _STACK = _join("CatBackward0", fnp.concatenate), _join("StackBackward0", fnp.stack)


def cat(tensors, dim=0, *, out=None):
    """torch.cat (also concat, concatenate): the tensors joined along dim."""
    ts = [as_tensor(t) for t in tensors]
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ts = [t for t in ts if not (t._value.ndim == 1 and t._value.size == 0)] or ts[:1]
    nd = ts[0]._value.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dt = _dtype.result_type(*[t._value for t in ts if t._value.ndim] or [ts[0]._value])
    return run(_CAT, ts, [t._value for t in ts], {"dim": _dim(dim, nd), "dt": dt})


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
                               f"[{_shown(shp)}] at entry 0 and [{_shown(t._value.shape)}] at "
                               f"entry {i}")
    dt = _dtype.result_type(*[t._value for t in ts])
    return run(_STACK, ts, [t._value for t in ts], {"dim": _dim(dim, len(shp) + 1), "dt": dt})


def _atleast(name, nd, up):
    def fn(*tensors):
        one = len(tensors) == 1 and not isinstance(tensors[0], list | tuple)
        ts = tensors[0] if len(tensors) == 1 and not one else tensors
        out = tuple(t if t._value.ndim >= nd else up(t) for t in map(as_tensor, ts))
        return out[0] if one else out
    return named(fn, name, f"torch.{name}: each tensor with at least {nd} dimensions (itself "
                 "when it has them); one tensor for one, a tuple for several or a sequence.")


atleast_1d = _atleast("atleast_1d", 1, lambda t: reshape(t, (1,)))
atleast_2d = _atleast("atleast_2d", 2, lambda t: reshape(t, (1, 1)) if t._value.ndim == 0
                      else unsqueeze(t, 0))
atleast_3d = _atleast("atleast_3d", 3, lambda t: reshape(t, (1, 1, 1)) if t._value.ndim == 0
                      else unsqueeze(unsqueeze(t, 0), -1) if t._value.ndim == 1
                      else unsqueeze(t, -1))


def hstack(tensors):
    """torch.hstack: the tensors, made at least 1-d, joined along dim 1 (dim 0 for 1-d ones)."""
    ts = atleast_1d(tuple(tensors))
    return cat(ts, 0 if ts[0]._value.ndim == 1 else 1)


def vstack(tensors):
    """torch.vstack: the tensors, made at least 2-d, joined along dim 0."""
    return cat(atleast_2d(tuple(tensors)), 0)


def dstack(tensors):
    """torch.dstack: the tensors, made at least 3-d, joined along dim 2."""
    return cat(atleast_3d(tuple(tensors)), 2)


def column_stack(tensors):
    """torch.column_stack: tensors of at most one dimension as columns, joined along dim 1."""
    return hstack([reshape(t, (-1, 1)) if as_tensor(t)._value.ndim <= 1 else t
                   for t in tensors])


def _narrow(x, dim, start, stop):
    return S.slice_p.bind(x, **_slice_params(x.shape, dim, start, stop))


def _split_fn(x, *, dim, bounds):
    return [_narrow(x, dim, a, b) for a, b in bounds]


_SPLIT_OPS = {name: Op(name, _split_fn, _split_fn, multiple=True) for name in
              ("SplitBackward0", "SplitWithSizesBackward0", "UnsafeSplitBackward0",
               "UnsafeSplitWithSizesBackward0")}
_UNBIND = composite("UnbindBackward0", multiple=True)(
    lambda x, *, dim: [S.squeeze(_narrow(x, dim, i, i + 1), (dim,)) for i in range(x.shape[dim])])


def _split_views(tensor, split_size_or_sections, dim, unsafe=False):
    x = as_tensor(tensor)
    d = _dim(dim, x._value.ndim)
    n = x._value.shape[d]
    if isinstance(split_size_or_sections, int):
        step, name = split_size_or_sections, "Split"
        if step <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        bounds = tuple((a, min(a + step, n)) for a in range(0, n, step)) if n else ((0, 0),)
    else:
        sizes, name = list(split_size_or_sections), "SplitWithSizes"
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
        ends = np.cumsum([0] + sizes).tolist()
        bounds = tuple(zip(ends[:-1], ends[1:]))
    op = _SPLIT_OPS[("Unsafe" if unsafe else "") + name + "Backward0"]
    params = {"dim": d, "bounds": bounds}
    pieces = unary(op, x, params)
    if not unsafe:
        return multi_views(x, pieces, lambda t: unary(op, t, params), name)
    # PyTorch does not track these pieces as views (no guard, own versions, no requires_grad
    # taken from the input under no_grad), but an inference tensor's pieces are inference ones
    if is_inference(x):
        for p in pieces:
            mark_inference(p)
    return tuple(pieces)


def split(tensor, split_size_or_sections, dim=0):
    """torch.split: views of pieces of split_size_or_sections entries along dim."""
    return _split_views(tensor, split_size_or_sections, dim)


def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes: views of pieces of the given sizes along dim."""
    return _split_views(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """torch.unsafe_split: split without PyTorch's guard against in-place changes."""
    return _split_views(input, split_size, dim, unsafe=True)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """torch.unsafe_split_with_sizes: split_with_sizes without the multi-view guard."""
    return _split_views(input, list(split_sizes), dim, unsafe=True)


def chunk(input, chunks, dim=0, *, unsafe=False):
    """torch.chunk: input cut into `chunks` pieces along dim (the last may be smaller)."""
    x = as_tensor(input)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x._value.shape[_dim(dim, x._value.ndim)]
    if not n:  # `chunks` empty pieces, as PyTorch's (split_with_sizes)
        return _split_views(x, [0] * chunks, dim, unsafe)
    return _split_views(x, -(-n // chunks), dim, unsafe)


def unsafe_chunk(input, chunks, dim=0):
    """torch.unsafe_chunk: chunk whose pieces autograd does not track as views."""
    return chunk(input, chunks, dim, unsafe=True)


def unbind(input, dim=0):
    """torch.unbind: the slices of input along dim, as a tuple of views."""
    x = as_tensor(input)
    params = {"dim": _dim(dim, x._value.ndim)}
    return multi_views(x, unary(_UNBIND, x, params), lambda t: unary(_UNBIND, t, params),
                       "Unbind")


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
    order = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        order[:2] = [1, 0]
    shape = tuple(ts[i]._value.size for i in order)
    return tuple(expand(view(t, tuple(-1 if a == order.index(k) else 1
                                      for a in range(len(ts)))), shape) for k, t in enumerate(ts))


# --- more of PyTorch's shape functions, built from the ones above ----------------------------

def _flip_min(name, dim, nd):
    def fn(input):
        x = as_tensor(input)
        if x._value.ndim < nd:
            raise RuntimeError(f"Input must be >= {nd}-d.")
        return flip(x, (dim,))
    return named(fn, name, f"torch.{name}: input flipped along dim {dim} (a copy).")


fliplr, flipud = _flip_min("fliplr", 1, 2), _flip_min("flipud", 0, 1)


_BLOCK_DIAG = composite("BlockDiagBackward0")(
    lambda *xs, dt: fsl.block_diag(*[S.convert_element_type(x, dt) for x in xs]))


def block_diag(*tensors):
    """torch.block_diag: the tensors (0-d as 1x1, 1-d as one row) down a block diagonal."""
    ts = [as_tensor(t) for t in tensors]
    for i, t in enumerate(ts):
        if t._value.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._value.ndim} dimensions")
    if not ts:
        return wrap(np.zeros((1, 0), _dtype.get_default_dtype().dtype))
    ts = [t if t._value.ndim == 2 else reshape(t, (1, -1)) for t in ts]
    return run(_BLOCK_DIAG, ts, [t._value for t in ts], {"dt": _dtype.result_type(*ts)})


def cartesian_prod(*tensors):
    """torch.cartesian_prod: every tuple of one element from each 1-d tensor, as rows."""
    ts = [as_tensor(t) for t in tensors]
    for t in ts:
        if t._value.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape [{_shown(t._value.shape)}]")
    if len(ts) == 1:
        return ts[0]
    if len({t._value.dtype for t in ts}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return stack([flatten(g) for g in meshgrid(*ts, indexing="ij")], 1)


@composite("DiagEmbedBackward0")
def _diag_embed(x, *, offset, dim1, dim2):
    n, k = x.shape[-1], abs(offset)
    out = fnp.multiply(fnp.expand_dims(x, -1), np.eye(n, dtype=x.dtype))
    lead = [(0, 0)] * (x.ndim - 1)
    out = fnp.pad(out, lead + ([(0, k), (k, 0)] if offset >= 0 else [(k, 0), (0, k)]))
    return fnp.moveaxis(out, (-2, -1), (dim1, dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: the last dimension of input on the offset diagonal of the (dim1, dim2)
    planes of a result with one dimension more."""
    x = as_tensor(input)
    nd = x._value.ndim + 1
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return unary(_diag_embed, x, {"offset": int(offset), "dim1": d1, "dim2": d2})


def diagflat(input, offset=0):
    """torch.diagflat: input flattened onto the offset diagonal of a square matrix."""
    return diag_embed(reshape(input, (-1,)), offset)


def broadcast_shapes(*shapes) -> Size:
    """torch.broadcast_shapes: the shape tensors of these shapes broadcast to (PyTorch's error
    where they do not)."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    n = max(map(len, shapes), default=0)
    out = [1] * n
    for k, s in enumerate(shapes):
        for i, d in enumerate(s, n - len(s)):
            if d != out[i] and d != 1 and out[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {d} at {i - n}! Mismatching "
                    f"argument at index {k} had {tuple(s)}; but expected shape should be "
                    f"broadcastable to {[*out]}")
            out[i] = d if out[i] == 1 else out[i]
    return Size(out)
