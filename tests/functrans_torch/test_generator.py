"""functrans.torch's CPU generator against PyTorch's: the same bits for the same seed.

Every case of generator_programs.py runs over 50 seeds and the sizes 1..40 in one stream (so
the 16-element blocks of normal_, their partial tail and the float64 normal cache are all
crossed), and for a few cases once more at 10**5 elements: against PyTorch's digests recorded
in generator_fixtures.json (always) and element for element against a live PyTorch run (when
torch is installed).
"""

import functools
import json
import platform

import numpy as np
import pytest
from generator_programs import (
    AVX2_CASES,
    CASES,
    FIXTURES,
    LARGE,
    LARGE_CASES,
    LARGE_SEEDS,
    PORTABLE_BERNOULLI_CASES,
    SEEDS,
    digest,
    run_case,
)

import functrans.torch as ft_torch
from functrans.torch import _random

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(CASES)


@functools.lru_cache(maxsize=None)
def _ours(name, seed, sizes=None):
    """functrans.torch's run of a case, computed once for the recorded and the live test."""
    return run_case(ft_torch, name, seed, *([list(sizes)] if sizes else []))


def _live_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "get_rng_state"):  # a stray directory named torch, not PyTorch
        pytest.skip("PyTorch is not installed")
    return torch


def _machine_skip(torch, name):
    """Skip the cases whose PyTorch kernel differs on this machine from the stream we follow."""
    if name in AVX2_CASES and torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        pytest.skip("PyTorch's float32 normal_ here is not its x86 AVX2 kernel")
    if name in PORTABLE_BERNOULLI_CASES and torch.backends.mkl.is_available():
        try:
            with open("/proc/cpuinfo") as f:
                intel = "GenuineIntel" in f.read()
        except OSError:
            intel = platform.system() == "Windows"
        if intel:
            pytest.skip("PyTorch's bernoulli_(float) draws from MKL's stream on Intel CPUs")


def test_every_case_is_recorded_for_every_seed():
    assert len(SEEDS) == 50 and len(CASES) >= 50
    assert set(_RECORDED["runs"]) == set(CASES), \
        "fixtures are stale: run `python tests/functrans_torch/generator_programs.py`"
    assert all(set(_RECORDED["runs"][n]) == {str(s) for s in SEEDS} for n in CASES)


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_pytorch(name):
    want = _RECORDED["runs"][name]
    bad = [s for s in SEEDS if digest(_ours(name, s)) != want[str(s)]]
    assert not bad, f"{name}: differs from PyTorch's recorded values for seeds {bad}"


@pytest.mark.parametrize("name", LARGE_CASES)
def test_large_matches_recorded_pytorch(name):
    want = _RECORDED["large"][name]
    bad = [s for s in LARGE_SEEDS
           if digest(_ours(name, s, (LARGE,))) != want[str(s)]]
    assert not bad, f"{name} at {LARGE} elements: differs for seeds {bad}"


@pytest.mark.parametrize("name", NAMES)
def test_matches_live_pytorch(name):
    torch = _live_torch()
    _machine_skip(torch, name)
    for s in SEEDS:
        got, want = _ours(name, s), run_case(torch, name, s)
        for i, (g, w) in enumerate(zip(got, want)):
            what = "the generator state" if i == len(got) - 1 else f"call {i + 1}"
            assert g.dtype == w.dtype and g.shape == w.shape, (name, s, what)
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, seed {s}, {what}")


@pytest.mark.parametrize("name", LARGE_CASES)
def test_large_matches_live_pytorch(name):
    torch = _live_torch()
    _machine_skip(torch, name)
    for s in LARGE_SEEDS:
        got, want = _ours(name, s, (LARGE,)), run_case(torch, name, s, [LARGE])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=f"{name}, seed {s}")


def test_fixtures_were_recorded_from_this_pytorch():
    torch = _live_torch()
    if torch.__version__.split("+")[0] != _RECORDED["torch_version"].split("+")[0]:
        pytest.skip(f"fixtures come from torch {_RECORDED['torch_version']}")
    for name in ("rand_float32", "randn_float64", "randperm"):
        _machine_skip(torch, name)
        assert digest(run_case(torch, name, 3)) == _RECORDED["runs"][name]["3"]


# --- values quoted from PyTorch's documentation and a CPU run ---------------------------------

def test_first_values_after_manual_seed_0():
    ft_torch.manual_seed(0)
    np.testing.assert_array_equal(ft_torch.rand(3).numpy(),
                                  np.array([0.4962566, 0.7682218, 0.08847743], np.float32))
    ft_torch.manual_seed(0)
    assert ft_torch.randperm(5).tolist() == [4, 0, 1, 3, 2]
    ft_torch.manual_seed(0)
    assert ft_torch.randint(0, 10, (4,)).tolist() == [4, 9, 3, 0]
    ft_torch.manual_seed(0)
    assert ft_torch.randn(4).tolist() == [1.5409960746765137, -0.293428897857666,
                                          -2.1787893772125244, 0.5684312582015991]
    ft_torch.manual_seed(0)
    assert ft_torch.randn(2, dtype=ft_torch.float64).tolist() == [1.5409961082440433,
                                                                   -0.2934289057609464]


def test_seeding_reads_seeds_as_pytorch_does():
    g = ft_torch.Generator()
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(-1) is g and g.initial_seed() == 2**64 - 1
    assert ft_torch.manual_seed(2**32 + 5).initial_seed() == 2**32 + 5
    a = ft_torch.rand(4)
    ft_torch.manual_seed(5)          # only the low 32 bits seed the twister
    assert ft_torch.equal(a, ft_torch.rand(4))
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2**64)


def test_state_is_pytorchs_5056_byte_layout_and_round_trips():
    g = ft_torch.Generator().manual_seed(3)
    s0 = g.get_state()
    assert s0.dtype == ft_torch.uint8 and tuple(s0.shape) == (5056,)
    v = s0.numpy()
    assert v[:8].view("<u8")[0] == 3 and v[8:12].view("<i4")[0] == 1      # seed, left
    assert v[24:32].view("<u8")[0] == 3                                    # state[0]
    ft_torch.randn(1, generator=g)             # one of a Box-Muller pair: the other is cached
    s1 = g.get_state()
    assert s1.numpy()[5040:5044].view("<i4")[0] == 1
    a = ft_torch.randn(5, generator=g, dtype=ft_torch.float64)
    g.set_state(s1)
    assert ft_torch.equal(a, ft_torch.randn(5, generator=g, dtype=ft_torch.float64))
    with pytest.raises(RuntimeError, match="size to be 10"):
        g.set_state(ft_torch.zeros(10, dtype=ft_torch.uint8))


def test_state_loads_into_live_pytorch_and_back():
    torch = _live_torch()
    ft_torch.manual_seed(11)
    ft_torch.randn(3)
    ft_torch.rand(700)
    torch.set_rng_state(torch.from_numpy(ft_torch.get_rng_state().numpy().copy()))
    np.testing.assert_array_equal(ft_torch.randn(9, dtype=ft_torch.float64).numpy(),
                                  torch.randn(9, dtype=torch.float64).numpy())
    torch.manual_seed(12)
    torch.rand(5)
    ft_torch.set_rng_state(ft_torch.tensor(torch.get_rng_state().numpy()))
    np.testing.assert_array_equal(ft_torch.rand(20).numpy(), torch.rand(20).numpy())


def test_fork_rng_restores_the_stream():
    ft_torch.manual_seed(0)
    with ft_torch.random.fork_rng():
        ft_torch.randn(100)
    assert ft_torch.equal(ft_torch.rand(1), ft_torch.tensor([0.4962566]))


def test_generator_argument_leaves_the_default_stream_alone():
    ft_torch.manual_seed(4)
    g = ft_torch.Generator().manual_seed(4)
    a = ft_torch.rand(3, generator=g)
    assert ft_torch.equal(a, ft_torch.rand(3))


def test_the_marker_other_modules_check():
    assert _random.PYTORCH_STREAM is True
    assert ft_torch.Generator is _random.Generator
    assert ft_torch.default_generator is _random.default_generator


@pytest.mark.parametrize("call, error, match", [
    (lambda T: T.empty(3).uniform_(1.0, 0.0), RuntimeError,
     r"uniform_ expects to return a \[from, to\) range, but found from=1 > to=0"),
    (lambda T: T.randint(5, 5, (2,)), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    (lambda T: T.empty(3, dtype=T.int64).uniform_(), RuntimeError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda T: T.empty(3, dtype=T.int64).normal_(), RuntimeError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda T: T.zeros(2, requires_grad=True).normal_(), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda T: T.randn(2, dtype=T.int32), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Int'"),
    (lambda T: T.bernoulli(T.ones(2, dtype=T.int64)), NotImplementedError,
     "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"),
    (lambda T: T.randperm(-1), RuntimeError,
     r"Trying to create tensor with negative dimension -1: \[-1\]"),
    (lambda T: T.arange(0, 1, -1), RuntimeError,
     "upper bound and lower bound inconsistent with step sign"),
    (lambda T: T.normal(T.zeros(2, dtype=T.int32), 1.0), NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Int'"),
    (lambda T: T.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
    (lambda T: T.ones(2.5), TypeError,
     r"ones\(\): argument 'size' \(position 1\) must be tuple of ints, not float"),
])
def test_errors_are_pytorchs(call, error, match):
    with pytest.raises(error, match=match):
        call(ft_torch)
    try:
        torch = _live_torch()
    except pytest.skip.Exception:
        return
    with pytest.raises(error, match=match):
        call(torch)


def test_a_refused_in_place_call_draws_nothing():
    ft_torch.manual_seed(1)
    with pytest.raises(RuntimeError):
        ft_torch.zeros(2, requires_grad=True).uniform_()
    fresh = ft_torch.rand(2, generator=ft_torch.Generator().manual_seed(1))
    assert ft_torch.equal(ft_torch.rand(2), fresh)


def test_normal_takes_an_integer_std_beside_a_float_mean():
    # PyTorch 2.13: the result has mean's dtype; only a non-float result is refused
    ft_torch.manual_seed(0)
    got = ft_torch.normal(ft_torch.zeros(2), ft_torch.tensor([2, 2]))
    ft_torch.manual_seed(0)
    assert ft_torch.equal(got, ft_torch.normal(ft_torch.zeros(2), ft_torch.tensor([2.0, 2.0])))
