"""functrans.torch.nn's batch_norm, group_norm, instance_norm, rms_norm, embedding and prelu
(and their modules) against PyTorch 2.x on the programs of nn_norm_programs.py, through the
records in nn_norm_fixtures.json (always) and a live PyTorch (when installed); their gradients
against float64 central differences (autograd.gradcheck and gradgradcheck)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from nn_norm_programs import FIXTURES, PROGRAMS, SEEDED, TOLERANCES
from parity_programs import differences, observe

import functrans.torch as torch
from functrans.torch.autograd import gradcheck, gradgradcheck

F = torch.nn.functional

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)


def _live_torch():
    live = pytest.importorskip("torch")
    if not hasattr(live, "autograd"):
        pytest.skip("PyTorch is not installed")
    return live


def test_fixtures_cover_every_program():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        "fixtures are stale: run `python tests/functrans_torch/nn_norm_programs.py` with torch"
    assert set(_RECORDED["seeded"]) == set(SEEDED)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_recorded_pytorch(name):
    problems = differences(observe(torch, PROGRAMS[name]), _RECORDED["programs"][name],
                           rtol=TOLERANCES.get(name, 2e-6))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_live_pytorch(name):
    live = _live_torch()
    problems = differences(observe(torch, PROGRAMS[name]), observe(live, PROGRAMS[name]),
                           rtol=TOLERANCES.get(name, 2e-6), once_warnings=False)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_weights_match_recorded_pytorch(name):
    problems = differences(observe(torch, SEEDED[name]), _RECORDED["seeded"][name])
    assert not problems, "\n".join(problems[:20])


# --- gradients against float64 central differences ---------------------------------------

def _leaf(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.normal(size=shape), dtype=torch.float64, requires_grad=True)


_RM = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64)
_RV = torch.tensor([1.2, 0.6, 2.0], dtype=torch.float64)
CASES = [
    ("batch_norm training", lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
     [(4, 3, 2), (3,), (3,)]),
    ("batch_norm training 2D", lambda x: F.batch_norm(x, None, None, training=True),
     [(5, 3)]),
    ("batch_norm eval", lambda x, w, b: F.batch_norm(x, _RM, _RV, w, b), [(4, 3, 2), (3,), (3,)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 3, w, b), [(2, 6, 2), (6,), (6,)]),
    ("group_norm one group", lambda x: F.group_norm(x, 1), [(2, 3, 2, 2)]),
    ("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
     [(2, 3, 4), (3,), (3,)]),
    ("embedding", lambda w: F.embedding(torch.tensor([[0, 3], [3, 1]]), w), [(4, 3)]),
    ("embedding padding unpicked",
     lambda w: F.embedding(torch.tensor([0, 3, 3]), w, padding_idx=1), [(4, 3)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, [2, 3], w, 1e-3), [(2, 2, 3), (2, 3)]),
    ("prelu per channel", lambda x, w: F.prelu(x, w), [(2, 3, 2), (3,)]),
]


@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(name, fn, shapes):
    args = [_leaf(*s, seed=i) for i, s in enumerate(shapes)]
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_padding_row_gets_no_gradient():
    """Closed form: d sum(embedding(idx, w)) / dw[r] = the number of times r is picked, 0 for
    the padding row however often it is picked."""
    w = _leaf(4, 2)
    F.embedding(torch.tensor([1, 1, 3, 0, 1]), w, padding_idx=1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [0, 0], [1, 1]])


def test_running_statistics_closed_form_and_no_alias():
    """The running statistics move by momentum toward the batch mean and the UNBIASED variance
    (numpy's var(ddof=1)), while the output uses the biased one; they are written off the graph
    into the buffers, sharing no memory with the input."""
    rng = np.random.default_rng(1)
    data = rng.normal(size=(6, 2, 3))
    x = torch.tensor(data, requires_grad=True)
    rm, rv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    y = F.batch_norm(x, rm, rv, training=True, momentum=0.25, eps=0.0 + 1e-5)
    mean = data.mean(axis=(0, 2))
    np.testing.assert_allclose(rm.numpy(), 0.25 * mean, rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * data.var(axis=(0, 2), ddof=1),
                               rtol=1e-12)
    biased = data.var(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(y.detach().numpy(),
                               (data - mean[None, :, None]) / np.sqrt(biased + 1e-5),
                               rtol=1e-10)
    assert not rm.requires_grad and rm.grad_fn is None and rm._version == 0
    assert not np.shares_memory(rm.numpy(), data)
    assert not np.shares_memory(y.detach().numpy(), data)


def test_cumulative_average_with_momentum_none():
    """momentum=None: after k batches the running mean is the plain average of their means."""
    m = torch.nn.BatchNorm1d(2, momentum=None, dtype=torch.float64)
    batches = [np.random.default_rng(k).normal(size=(4, 2)) for k in range(3)]
    for b in batches:
        m(torch.tensor(b))
    np.testing.assert_allclose(m.running_mean.numpy(),
                               np.mean([b.mean(axis=0) for b in batches], axis=0), rtol=1e-12)
    assert int(m.num_batches_tracked) == 3


def test_sparse_embedding_is_refused_with_the_fix():
    e = torch.nn.Embedding(3, 2, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse=False"):
        e(torch.tensor([0]))


def test_scale_grad_by_freq_divides_by_the_count():
    """Closed form: with scale_grad_by_freq, row r's gradient is the sum of its positions'
    output gradients divided by how often r is picked."""
    w = _leaf(3, 2)
    g = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    y = F.embedding(torch.tensor([2, 0, 2, 2]), w, scale_grad_by_freq=True)
    np.testing.assert_array_equal(y.detach().numpy(), w.detach().numpy()[[2, 0, 2, 2]])
    y.backward(torch.tensor(g))
    np.testing.assert_allclose(w.grad.numpy(), [[3, 4], [0, 0], [(1 + 5 + 7) / 3, (2 + 6 + 8) / 3]],
                               rtol=1e-15)
