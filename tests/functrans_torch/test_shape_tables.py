"""The shape ops made from tables (functrans/torch/_shape.py `_VIEWS`, `_COPIES`): each takes
PyTorch's argument names as keywords, names its node as PyTorch does, says what it gives, and
views share storage where PyTorch's do. Expected values are numpy's (closed forms of these
rearrangements); node names are PyTorch 2.x's."""

from __future__ import annotations

import numpy as np
import pytest

import functrans.torch as torch
from functrans.torch import _shape

A = np.arange(24.0).reshape(2, 3, 4)

# (call with PyTorch's keyword names, the numpy result, the node PyTorch records, a view?)
CASES = {
    "squeeze": (lambda x: torch.squeeze(x[:, :1], dim=1), A[:, 0], "SqueezeBackward1", True),
    "transpose": (lambda x: torch.transpose(x, dim0=0, dim1=2), A.transpose(2, 1, 0),
                  "TransposeBackward0", True),
    "t": (lambda x: torch.t(x[0]), A[0].T, "TBackward0", True),
    "unsqueeze": (lambda x: torch.unsqueeze(x, dim=-1), A[..., None], "UnsqueezeBackward0", True),
    "permute": (lambda x: torch.permute(x, (2, 0, 1)), A.transpose(2, 0, 1), "PermuteBackward0",
                True),
    "movedim": (lambda x: torch.movedim(x, source=0, destination=-1), np.moveaxis(A, 0, -1),
                "PermuteBackward0", True),
    "expand": (lambda x: x[:, :1].expand(2, -1, 3, 4), np.broadcast_to(A[:, :1], (2, 2, 3, 4)),
               "ExpandBackward0", True),
    "expand_as": (lambda x: x[:1].expand_as(other=x), np.broadcast_to(A[:1], A.shape),
                  "ExpandBackward0", True),
    "broadcast_to": (lambda x: torch.broadcast_to(x[0, 0], size=(2, 4)),
                     np.broadcast_to(A[0, 0], (2, 4)), "ExpandBackward0", True),
    "narrow": (lambda x: torch.narrow(x, dim=2, start=-3, length=2), A[:, :, 1:3],
               "SliceBackward0", True),
    "diagonal": (lambda x: torch.diagonal(x, offset=1, dim1=1, dim2=2),
                 np.diagonal(A, 1, 1, 2), "DiagonalBackward0", True),
    "repeat": (lambda x: x[0].repeat(2, 1, 2), np.tile(A[0], (2, 1, 2)), "RepeatBackward0",
               False),
    "flip": (lambda x: torch.flip(x, dims=[0, 2]), A[::-1, :, ::-1], "FlipBackward0", False),
    "roll": (lambda x: torch.roll(x, shifts=(1, -1), dims=(0, 2)),
             np.roll(A, (1, -1), (0, 2)), "RollBackward0", False),
    "tril": (lambda x: torch.tril(x, diagonal=-1), np.tril(A, -1), "TrilBackward0", False),
    "triu": (lambda x: torch.triu(x, diagonal=1), np.triu(A, 1), "TriuBackward0", False),
    "trace": (lambda x: torch.trace(x[1]), np.trace(A[1]), "TraceBackward0", False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_table_op_takes_pytorch_keywords_and_names_its_node(name):
    call, expected, node, is_view = CASES[name]
    x = torch.tensor(A, dtype=torch.float64, requires_grad=True)
    y = call(x)
    np.testing.assert_array_equal(y.detach().numpy(), expected)
    assert y.grad_fn.name() == node
    base = x.detach()
    assert np.shares_memory(call(base).numpy(), base.numpy()) == is_view
    assert getattr(_shape, name).__doc__.startswith(f"torch.{name}: ")


def test_table_op_gradients_are_the_adjoint_rearrangement():
    # d/dx sum(w * flip(x)) = flip(w): the rearrangement applied backwards to the weights
    w = np.random.default_rng(0).standard_normal(A.shape)
    x = torch.tensor(A, dtype=torch.float64, requires_grad=True)
    (torch.flip(x, dims=[0, 2]) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w[::-1, :, ::-1])
    x.grad = None
    (torch.movedim(x, 0, -1) * torch.tensor(np.moveaxis(w, 0, -1))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w)


def test_table_op_messages_are_pytorchs():
    x = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        torch.t(torch.ones(1, 1, 1))
    with pytest.raises(RuntimeError, match="must match the existing size"):
        x.expand(4, 3, 2)
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds"):
        torch.narrow(x, 1, 2, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.transpose(x, 0, 2)


def test_hstack_and_vstack_make_their_inputs_at_least_1d_and_2d_first():
    # PyTorch 2.13: 0-d tensors hstack (each viewed as 1-d), a 1-d row vstacks unsqueezed
    a = torch.tensor(1.0, requires_grad=True)
    h = torch.hstack([a, torch.tensor(2.0)])
    assert h.tolist() == [1.0, 2.0]
    assert h.grad_fn.next_functions[0][0].name() == "ViewBackward0"
    v = torch.vstack([torch.ones(3, requires_grad=True), torch.ones(3)])
    assert v.shape == (2, 3)
    assert v.grad_fn.next_functions[0][0].name() == "UnsqueezeBackward0"


def test_unsafe_split_pieces_are_not_views_even_under_no_grad():
    # PyTorch 2.13: no requires_grad taken from the input, no base, their own version counter
    x = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        pieces = torch.unsafe_split(x, 2) + torch.unsafe_chunk(x, 2)
    assert [p.requires_grad for p in pieces] == [False] * 4
    assert all(p._base is None and p._version == 0 for p in pieces)
    with torch.inference_mode():
        y = torch.ones(4)
    assert all(p.is_inference() for p in torch.unsafe_split(y, 2))


def test_chunk_of_an_empty_dimension_and_a_nonpositive_count_are_pytorchs():
    # PyTorch 2.13: `chunks` empty pieces through split_with_sizes; chunks <= 0 is an error
    x = torch.zeros(0, 2, requires_grad=True)
    pieces = torch.chunk(x, 3)
    assert [tuple(p.shape) for p in pieces] == [(0, 2)] * 3
    assert {p.grad_fn.name() for p in pieces} == {"SplitWithSizesBackward0"}
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        torch.chunk(torch.zeros(4), 0)


def test_transposes_of_few_dimensions_name_their_nodes_as_pytorch():
    # PyTorch 2.13: t() below 2-D is TBackward0, transpose of a 0-d tensor TransposeBackward0
    a, v = torch.tensor(2.0, requires_grad=True), torch.ones(3, requires_grad=True)
    assert [y.grad_fn.name() for y in (a.t(), v.t(), a.transpose(0, -1))] == \
        ["TBackward0", "TBackward0", "TransposeBackward0"]


def test_unflatten_and_cat_refuse_with_pytorchs_errors():
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[3, 2\] don't multiply "
                       r"up to the size of dim 1 \(4\) in the input tensor"):
        torch.ones(2, 4).unflatten(-1, (3, 2))
    with pytest.raises(RuntimeError, match="unflatten: sizes must be non-empty"):
        torch.ones(4).unflatten(0, ())
    with pytest.raises(ValueError, match=r"torch.cat\(\): expected a non-empty list of Tensors"):
        torch.cat([])
