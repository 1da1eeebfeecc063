"""dask.array as an array library for functrans programs (imported on first sight of a dask
array; see functrans/backends/__init__.py for what an adapter gives).

How a primitive runs on dask arrays, so results stay lazy dask arrays:
- elementwise primitives: numpy's impl mapped over the blocks (`dask.array.map_blocks` after
  broadcasting the operands), one task per chunk with numpy's exact bits;
- the rest: the primitive's impl with `xp` routed to dask.array's functions (reductions are
  dask's tree reductions, contractions its blocked ones);
- primitives dask has no blocked algorithm for (sorting, scatter-add's in-place writes,
  decompositions and solves of stacked matrices, ...), or whose impl fails on dask arrays: numpy's
  impl on the whole operands, as one lazy task (`dask.delayed`): still lazy, not chunked.
"""

from __future__ import annotations

import functools
import sys
import types

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError:  # only the doctest collector imports this module without dask
    dask = da = None

from functrans.backend import routed, using
from functrans.backends import result_avals
from functrans.primitives.registry import REGISTRY

NAME = "dask"

# primitives run as one whole-array task: dask has no blocked algorithm for them
WHOLE_ARRAY = frozenset({
    "sort", "argsort", "scatter_add", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
    "solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "eigh", "eig", "lu",
    "triangular_solve", "expm", "random_bits", "threefry2x32"})

# primitives whose impl failed (or computed) on dask arrays and ran as one whole-array task
# instead: tests read it, so a regression to the slow path is visible
FELL_BACK: set[str] = set()


def is_array_type(t: type) -> bool:
    """Whether `t` is dask.array's array type."""
    return issubclass(t, da.Array)


def from_numpy(a):
    """numpy constants mix with dask arrays as they are (dask broadcasts them in)."""
    return a


def unaliased(outs, sources) -> list:
    """dask arrays are immutable: a result may share its graph with the inputs."""
    return list(outs)


def _asarray(a, dtype=None, copy=None, **kwargs):
    # numpy's asarray would compute a dask array: keep it lazy (dask arrays are immutable, so
    # a "copy" is the array itself)
    if isinstance(a, da.Array):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return np.asarray(a, dtype=dtype, **kwargs) if copy is None else \
        np.array(a, dtype=dtype, copy=copy)


def _array(a, dtype=None, copy=True, **kwargs):
    if isinstance(a, da.Array):
        return _asarray(a, dtype)
    return np.array(a, dtype=dtype, copy=copy, **kwargs)


def _full(shape, fill_value, dtype=None, **kwargs):
    # dask.array.full computes a dask fill value inside each chunk's task; broadcasting it
    # keeps the graph plain
    if isinstance(fill_value, da.Array):
        return da.broadcast_to(fill_value.astype(dtype or fill_value.dtype), shape)
    return da.full(shape, fill_value, dtype=dtype, **kwargs)


def _ascontiguousarray(a, dtype=None):
    return _asarray(a, dtype)


class NotBlocked(TypeError):
    """An impl called a numpy function dask.array does not implement, on a dask array (numpy
    would compute it): the primitive runs as one whole-array task instead."""


def _refusing(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        if _has_dask(args) or _has_dask(kwargs.values()):
            raise NotBlocked(f"numpy.{getattr(fn, '__name__', fn)} on a dask array")
        return fn(*args, **kwargs)
    return call


# numpy names that are types, dtype helpers or context managers: numpy's own, never refused
_NUMPY_KEPT = frozenset({"dtype", "finfo", "iinfo", "result_type", "errstate", "issubdtype",
                         "ndim", "shape", "promote_types", "can_cast", "broadcast_shapes",
                         "isscalar", "iterable"})


def _library_fn(name, numpy_fn):
    """What `xp.<name>` is while computing on dask: dask.array's function, or numpy's
    refusing dask arrays where dask has none."""
    mine = getattr(da, name, None) if not name.startswith("_") else None
    if mine is not None and callable(mine) and not isinstance(mine, type):
        return mine
    return _refusing(numpy_fn)


def _submodule(module) -> types.SimpleNamespace:
    this = sys.modules[__name__]
    return types.SimpleNamespace(**{k: routed(this, _refusing(v), v) if callable(v) else v
                                    for k, v in vars(module).items() if not k.startswith("_")})


@functools.lru_cache(maxsize=1)  # built once
def namespace() -> dict:
    """numpy's names, each function routed (functrans.backend.routed): in the thread computing
    on dask, dask.array's function, or numpy's refusing dask arrays (NotBlocked) where dask
    has none, with conversions kept lazy; in any other thread numpy's own."""
    this = sys.modules[__name__]
    overrides = dict(asarray=_asarray, array=_array, ascontiguousarray=_ascontiguousarray,
                     full=_full)
    names = {}
    for k in dir(np):
        if k.startswith("__"):
            continue
        v = getattr(np, k)
        if k in _NUMPY_KEPT or isinstance(v, type) or not callable(v):
            names[k] = v
        else:
            names[k] = routed(this, overrides.get(k) or _library_fn(k, v), v)
    names.update(linalg=_submodule(np.linalg), fft=_submodule(np.fft))
    return names


_IMPLS: dict = {}


def impl_for(prim):
    """How `prim` runs on dask arrays (see the module docstring)."""
    fn = _IMPLS.get(prim)
    if fn is None:
        if "elementwise" in prim.props and not prim.multiple_results:
            fn = functools.partial(_blockwise, prim)
        else:
            fn = functools.partial(_on_namespace, prim)
        _IMPLS[prim] = fn
    return fn


def _has_dask(args) -> bool:
    return any(isinstance(a, da.Array) for a in args)


def _numpy_impl(prim, params):
    """`prim`'s impl on numpy blocks, wherever dask runs it (a worker thread, or a process of
    a dask.distributed cluster: a registered primitive travels by name)."""
    if REGISTRY.get(prim.name) is prim:
        return functools.partial(_run_registered, prim.name, params)
    return functools.partial(_run, prim, params)


def _run_registered(name, params, *blocks):
    return _run(REGISTRY[name], params, *blocks)


def _run(prim, params, *blocks):
    with using(np):
        return prim.impl(*blocks, **params)


def _blockwise(prim, *args, **params):
    if not _has_dask(args):
        return prim.impl(*args, **params)
    (aval,) = result_avals(prim, args, params)
    arrays = [i for i, a in enumerate(args) if np.ndim(a) > 0 or isinstance(a, da.Array)]
    ops = list(args)
    for i, b in zip(arrays, da.broadcast_arrays(*[da.asarray(args[i]) for i in arrays])):
        ops[i] = b
    if not arrays or tuple(ops[arrays[0]].shape) != tuple(aval.shape):
        return _whole(prim, args, params)
    meta = np.empty((0,) * len(aval.shape), aval.dtype)
    return da.map_blocks(_numpy_impl(prim, params), *ops, dtype=aval.dtype, meta=meta)


def _on_namespace(prim, *args, **params):
    if not _has_dask(args):
        return prim.impl(*args, **params)
    if prim.name in WHOLE_ARRAY:
        return _whole(prim, args, params)
    try:
        with using(sys.modules[__name__]):
            out = prim.impl(*args, **params)
    except Exception:
        out = None
    outs = out if prim.multiple_results else [out]
    if out is None or not all(isinstance(o, da.Array) for o in outs):
        FELL_BACK.add(prim.name)
        return _whole(prim, args, params)
    return out


def _whole(prim, args, params):
    """numpy's impl on the whole operands, as one lazy task per result."""
    avals = result_avals(prim, args, params)
    task = dask.delayed(_numpy_impl(prim, params), pure=True)(*args)
    outs = [task] if not prim.multiple_results else [task[i] for i in range(len(avals))]
    results = [da.from_delayed(o, a.shape, dtype=a.dtype, meta=np.empty((0,) * a.ndim, a.dtype))
               for o, a in zip(outs, avals)]
    return results if prim.multiple_results else results[0]
