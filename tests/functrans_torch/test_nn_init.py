"""functrans.torch.nn.init: the distributions' bounds and moments against their closed forms, the
deterministic initialisers exactly, and the algorithms' invariants (orthogonal_'s sign rule).
PyTorch's exact values for a seed are checked in test_nn_parity.py (seeded programs), once the
CPU generator gives PyTorch's stream."""

import math
import warnings

import numpy as np
import pytest

import functrans.torch as torch

nn = torch.nn
init = nn.init
N = 200_000  # samples per moment check: 5 standard errors stay below 1.2% of a unit std


def _sample(fn, shape=(400, 500), dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    w = torch.empty(*shape, dtype=dtype)
    out = fn(w)
    assert out is w
    return w.numpy()


def _moments_close(values, mean, std):
    n = values.size
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(n)
    # the sample variance's standard error is about std^2 sqrt(2 / n) (or less, for bounded
    # distributions)
    assert abs(values.var() - std ** 2) < 5 * std ** 2 * math.sqrt(2 / n) + 1e-12


def test_uniform_bounds_and_moments():
    v = _sample(lambda w: init.uniform_(w, -0.5, 2.0))
    assert v.min() >= -0.5 and v.max() < 2.0
    _moments_close(v, 0.75, 2.5 / math.sqrt(12))


def test_normal_moments():
    v = _sample(lambda w: init.normal_(w, 1.0, 0.5))
    _moments_close(v, 1.0, 0.5)


@pytest.mark.parametrize("shape", [(400, 500), (100, 20, 10, 5)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier_uniform_bound(shape, gain):
    fan_in = shape[1] * math.prod(shape[2:])
    fan_out = shape[0] * math.prod(shape[2:])
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    v = _sample(lambda w: init.xavier_uniform_(w, gain=gain), shape)
    assert np.abs(v).max() <= bound
    assert np.abs(v).max() > 0.99 * bound
    _moments_close(v, 0.0, bound / math.sqrt(3))


def test_xavier_normal_std():
    v = _sample(lambda w: init.xavier_normal_(w, gain=3.0))
    _moments_close(v, 0.0, 3.0 * math.sqrt(2.0 / 900))


@pytest.mark.parametrize("a,mode,nonlinearity,fan", [
    (0, "fan_in", "leaky_relu", 500), (0.2, "fan_out", "leaky_relu", 400),
    (0, "fan_in", "relu", 500), (0, "FAN_OUT", "tanh", 400)])
def test_kaiming_bounds_and_std(a, mode, nonlinearity, fan):
    gain = init.calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    v = _sample(lambda w: init.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity))
    assert np.abs(v).max() <= math.sqrt(3) * std
    _moments_close(v, 0.0, std)
    v = _sample(lambda w: init.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nonlinearity))
    _moments_close(v, 0.0, std)


def _truncated_moments(mean, std, a, b):
    """Mean and std of N(mean, std^2) restricted to [a, b] (closed form)."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = mean + std * (pdf(alpha) - pdf(beta)) / z
    var = std ** 2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z
                      - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    return m, math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [
    (0.0, 1.0, -2.0, 2.0),      # most of the mass inside: redraw the normals outside
    (0.5, 2.0, -1.0, 3.0),
    (0.0, 1.0, -0.1, 0.2),      # a narrow window: uniform proposals, accepted by the density
    (0.0, 1.0, 1.0, 4.0)])      # a window in the tail
def test_trunc_normal_bounds_and_moments(mean, std, a, b):
    v = _sample(lambda w: init.trunc_normal_(w, mean, std, a, b))
    assert v.min() >= a and v.max() <= b
    m, s = _truncated_moments(mean, std, a, b)
    _moments_close(v, m, s)


def test_trunc_normal_warns_when_the_mean_is_far_outside():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(torch.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 5), (5, 5)])
@pytest.mark.parametrize("gain", [1.0, 1.5])
def test_orthogonal_is_orthogonal_with_positive_r_diagonal(shape, gain):
    rows, cols = shape[0], math.prod(shape[1:])
    torch.manual_seed(3)
    sample = torch.empty(rows, cols, dtype=torch.float64).normal_(0, 1).numpy()
    w = _sample(lambda w: init.orthogonal_(w, gain=gain), shape, seed=3).reshape(rows, cols)
    q = w / gain
    small = min(rows, cols)
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    # Q is the sample's QR factor with R's diagonal made positive: Q^T A is upper triangular
    # with a positive diagonal (of A^T for a wide matrix)
    a = sample if rows >= cols else sample.T
    r = (q if rows >= cols else q.T).T @ a
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=1e-12)
    assert (np.diag(r) > 0).all()


def test_linear_default_init_bounds():
    torch.manual_seed(0)
    lin = nn.Linear(300, 200)
    bound = 1 / math.sqrt(300)  # kaiming_uniform_(a=sqrt(5)) gives the bias's bound too
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound
    _moments_close(w.astype(np.float64), 0.0, bound / math.sqrt(3))
    assert lin.weight.is_leaf and lin.weight.requires_grad and lin.weight.grad_fn is None
    assert lin.weight.dtype == torch.float32


def test_seeded_construction_repeats():
    def weights(seed):
        torch.manual_seed(seed)
        return [p.detach().numpy().copy() for p in nn.Linear(4, 3).parameters()]
    for x, y in zip(weights(5), weights(5)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(weights(5)[0], weights(6)[0])


def test_generator_argument_is_used_and_leaves_the_global_stream_alone():
    torch.manual_seed(1)
    expected_next = torch.rand(3).numpy()
    torch.manual_seed(1)
    a = init.normal_(torch.empty(5), generator=torch.Generator().manual_seed(9)).numpy()
    np.testing.assert_array_equal(torch.rand(3).numpy(), expected_next)
    b = init.normal_(torch.empty(5), generator=torch.Generator().manual_seed(9)).numpy()
    np.testing.assert_array_equal(a, b)


def test_initialisers_record_nothing_on_parameters():
    p = nn.Parameter(torch.empty(3, 4))
    for fn in (init.xavier_uniform_, init.kaiming_normal_, init.trunc_normal_, init.orthogonal_,
               init.zeros_, init.eye_, lambda w: init.constant_(w, 2.0)):
        out = fn(p)
        assert out is p and p.is_leaf and p.requires_grad and p.grad_fn is None


def test_zero_element_tensors_warn_and_stay():
    w = torch.empty(0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_normal_(w) is w
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert init.orthogonal_(w) is w


def test_gain_closed_forms():
    assert init.calculate_gain("leaky_relu", 0.3) == math.sqrt(2 / 1.09)
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("conv_transpose3d") == 1
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_bilinear_default_init_bounds():
    torch.manual_seed(0)
    bil = nn.Bilinear(50, 7, 30)
    bound = 1 / math.sqrt(50)
    for p in bil.parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.9 * bound
