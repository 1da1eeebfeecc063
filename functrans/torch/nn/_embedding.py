"""torch.nn.functional.embedding: rows of a weight matrix picked by index (EmbeddingBackward0),
built from functrans.numpy calls, so its derivative comes from the primitive table."""

from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.primitives.ad_control import stop_gradient_p
from functrans.torch import _dtype
from functrans.torch import _inplace as I
from functrans.torch import _ops as O
from functrans.torch._grad_mode import no_grad
from functrans.torch._record import composite, run
from functrans.torch._tensor import Tensor

__all__ = ["embedding", "padding_index"]


@composite("EmbeddingBackward0")
def _embedding(weight, indices, *scale, scaled):
    rows = fnp.take(weight, indices, axis=0)
    if not scaled:
        return rows
    # the value is rows itself; the gradient reaching each row is scaled per position (0 at
    # padding_idx, 1 / count with scale_grad_by_freq), PyTorch's embedding_backward
    fixed = stop_gradient_p.bind(rows)
    return fnp.add(fixed, fnp.multiply(scale[0], fnp.subtract(rows, fixed)))


def _tensor_type(np_dtype) -> str:
    """The legacy type name PyTorch's argument checks print (`torch.FloatTensor`)."""
    k = _dtype.kind(np_dtype)
    return "CPUBoolType" if k == "Bool" else f"torch.{k}Tensor"


def padding_index(padding_idx, num_embeddings: int):
    """padding_idx as a row number (a negative one counts from the end), PyTorch's check."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _renorm(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: each row picked by idx whose norm exceeds max_norm scaled
    down to it (max_norm / (norm + 1e-7)), in place and off the graph."""
    w = weight._value
    rows = np.unique(idx)
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        new = w.copy()
        new[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(w.dtype)
        with no_grad():
            I.write(weight, new)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    """torch.nn.functional.embedding: weight[input], one row per index. The row padding_idx
    gets no gradient; with max_norm, the rows picked are first renormalised in place (under
    no_grad, as PyTorch does); scale_grad_by_freq divides each row's gradient by how often
    the batch picks it."""
    w = O.as_tensor(weight)
    idx = O.as_tensor(input)._value
    if w._value.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{_tensor_type(idx.dtype)} instead (while checking arguments "
                           "for embedding)")
    if sparse:
        raise NotImplementedError("embedding(sparse=True): functrans.torch has no sparse "
                                  "gradients; pass sparse=False for a dense weight gradient")
    num = w._value.shape[0]
    pad = padding_index(padding_idx, num)
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm(w, idx, float(max_norm), float(norm_type))
    scale = None
    if scale_grad_by_freq or (pad is not None and (idx == pad).any()):
        scale = np.ones(idx.shape, w._value.dtype)
        if scale_grad_by_freq:
            _, where, counts = np.unique(idx, return_inverse=True, return_counts=True)
            scale = (1.0 / counts[where.reshape(idx.shape)]).astype(w._value.dtype)
        if pad is not None:
            scale[idx == pad] = 0
        scale = scale[..., None]
    idx = idx.astype(np.int64)
    if scale is None:
        return run(_embedding, (w, None), (w._value, idx), {"scaled": False})
    return run(_embedding, (w, None, None), (w._value, idx, scale), {"scaled": True})
