"""functrans.scipy.stats against scipy.stats: every function's values (eagerly and traced),
with scipy's loc/scale and shape arguments, broadcasting, points outside the support and
dtypes; bad input raises clear errors. Derivatives are checked against JAX and finite
differences in test_special_programs.py."""

import numpy as np
import pytest

import functrans as ft
from functrans.errors import ShapeError
from functrans.scipy import stats as fst
from functrans.test_util import check_grads

ss = pytest.importorskip("scipy.stats")

X = np.array([-3.0, -0.7, 0.0, 0.4, 1.3, 2.5, 7.0, 40.0])
Q = np.array([0.0, 1e-10, 0.01, 0.3, 0.5, 0.9, 1.0])

CONTINUOUS = [  # distribution, its parameters after x (shape ones first, then loc and scale)
    ("norm", (0.3, 1.7)), ("norm", ()),
    ("t", (3.5, 0.3, 1.7)), ("t", (np.array([[1.0], [30.0]]),)),
    ("gamma", (2.5, -1.0, 1.5)), ("gamma", (np.array([0.5, 1.0, 4.0, 9.0, 0.3, 2.0, 5.0, 1.5]),)),
    ("beta", (2.5, 1.5, -1.0, 4.0)), ("beta", (0.5, 0.7, -3.0, 10.0)),
    ("chi2", (3.0, -1.0, 1.2)), ("chi2", (1.0,)),
    ("expon", (-1.0, 2.0)), ("uniform", (-1.0, 3.0)), ("laplace", (0.2, 1.4)),
    ("logistic", (0.2, 1.4)), ("cauchy", (0.2, 1.4)),
]
FUNCS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")


def traced(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    return ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)[0]


def _rtol(dist, fname):
    # the incomplete beta/gamma tails and the logs of probabilities near 1 round a few times
    return 1e-12 if dist in ("t", "beta", "gamma", "chi2") or fname.startswith("log") else 1e-14


@pytest.mark.parametrize("fname", FUNCS)
@pytest.mark.parametrize("dist,params", CONTINUOUS,
                         ids=[f"{d}{i}" for i, (d, _) in enumerate(CONTINUOUS)])
def test_continuous_distributions_match_scipy(dist, params, fname):
    ours = getattr(getattr(fst, dist), fname)
    with np.errstate(all="ignore"):
        ref = getattr(getattr(ss, dist), fname)(X, *params)
        out = ours(X, *params)
        assert np.asarray(out).shape == ref.shape and np.asarray(out).dtype == np.float64
        np.testing.assert_allclose(out, ref, rtol=_rtol(dist, fname), atol=1e-300)
        np.testing.assert_allclose(traced(lambda x: ours(x, *params), X), ref,
                                   rtol=_rtol(dist, fname), atol=1e-300)


@pytest.mark.parametrize("dist,params", [("norm", (0.3, 1.7)), ("expon", (-1.0, 2.0)),
                                         ("uniform", (-1.0, 3.0)), ("logistic", (0.2, 1.4)),
                                         ("cauchy", (0.2, 1.4))])
def test_quantile_functions_match_scipy(dist, params):
    for fname in ("ppf", "isf"):
        if not hasattr(getattr(fst, dist), fname):
            continue
        with np.errstate(all="ignore"):
            ref = getattr(getattr(ss, dist), fname)(Q, *params)
            out = getattr(getattr(fst, dist), fname)(Q, *params)
        if dist == "cauchy":
            # tan(pi (q - 1/2)) (scipy's and JAX's formula) loses digits next to 0 and 1
            out, ref = out[2:-1], ref[2:-1]
        np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-300)


def test_poisson_matches_scipy():
    k = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 10.0, 60.0])
    for fname in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
        for mu, loc in ((2.3, 0.0), (2.3, 0.5), (np.array([[0.5], [20.0]]), 1.0)):
            with np.errstate(all="ignore"):
                ref = getattr(ss.poisson, fname)(k, mu, loc)
                out = getattr(fst.poisson, fname)(k, mu, loc)
            np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-300, err_msg=fname)
    out = fst.poisson.pmf(np.array([0, 1, 2]), 2.0)   # integer counts
    np.testing.assert_allclose(out, ss.poisson.pmf([0, 1, 2], 2.0), rtol=1e-14)


def test_dirichlet_matches_scipy():
    alpha = np.array([1.5, 2.0, 3.5])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]).T     # scipy's layout: (K, points)
    np.testing.assert_allclose(fst.dirichlet.logpdf(x, alpha), ss.dirichlet.logpdf(x, alpha),
                               rtol=1e-14)
    np.testing.assert_allclose(fst.dirichlet.pdf(x[:, 0], alpha), ss.dirichlet.pdf(x[:, 0], alpha),
                               rtol=1e-14)
    np.testing.assert_allclose(fst.dirichlet.logpdf(x[:2], alpha),   # the last coordinate implied
                               ss.dirichlet.logpdf(x[:2], alpha), rtol=1e-14)
    # off the simplex: -inf (scipy raises), as in JAX
    assert fst.dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), alpha) == -np.inf
    with pytest.raises(ShapeError, match="K or K - 1"):
        fst.dirichlet.logpdf(np.ones(5) / 5, alpha)
    with pytest.raises(ShapeError, match="one-dimensional"):
        fst.dirichlet.logpdf(x, alpha[None])


def test_multivariate_normal_matches_scipy():
    rng = np.random.default_rng(0)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
    mean = np.array([0.1, -0.2, 0.3])
    pts = rng.normal(size=(4, 3))
    mvn, smvn = fst.multivariate_normal, ss.multivariate_normal
    np.testing.assert_allclose(mvn.logpdf(pts, mean, cov), smvn.logpdf(pts, mean, cov),
                               rtol=1e-13)
    np.testing.assert_allclose(mvn.pdf(pts[0], mean, cov), smvn.pdf(pts[0], mean, cov),
                               rtol=1e-13)
    np.testing.assert_allclose(mvn.logpdf(pts, mean, 1.3), smvn.logpdf(pts, mean, 1.3),
                               rtol=1e-13)
    np.testing.assert_allclose(mvn.logpdf(pts[:, 0], 0.2, 1.3),
                               ss.norm.logpdf(pts[:, 0], 0.2, np.sqrt(1.3)), rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(lambda p: mvn.logpdf(p, mean, cov))(pts),
                               smvn.logpdf(pts, mean, cov), rtol=1e-13)
    with pytest.raises(ShapeError, match=r"\(3, 3\) covariance"):
        mvn.logpdf(pts, mean, np.eye(2))
    np.testing.assert_allclose(mvn.logpdf(pts, mean, cov, allow_singular=False),
                               smvn.logpdf(pts, mean, cov), rtol=1e-13)
    np.testing.assert_allclose(mvn.pdf(pts, mean, cov, allow_singular=True),
                               smvn.pdf(pts, mean, cov, allow_singular=True), rtol=1e-13)
    np.testing.assert_allclose(mvn.entropy(mean, cov), smvn.entropy(mean, cov), rtol=1e-14)
    np.testing.assert_allclose(mvn.entropy(None, 1.7), smvn.entropy(None, 1.7), rtol=1e-14)
    # d entropy / d cov = inv(cov) / 2
    np.testing.assert_allclose(ft.grad(lambda c: mvn.entropy(mean, c))(cov),
                               np.linalg.inv(cov) / 2, rtol=1e-13)


def test_multivariate_normal_allow_singular_matches_scipy():
    # scipy's pseudo-inverse and pseudo-determinant over cov's range, -inf off it
    rng = np.random.default_rng(1)
    mvn, smvn = fst.multivariate_normal, ss.multivariate_normal
    b = rng.normal(size=(4, 2))
    cov = b @ b.T                                       # rank 2
    mean = rng.normal(size=4)
    inside = rng.normal(size=(5, 4)) @ cov + mean
    outside = inside + np.array([1.0, 0.0, 0.0, 0.0]) - b @ np.linalg.lstsq(b, [1.0, 0, 0, 0],
                                                                         rcond=None)[0]
    for pts in (inside, outside, inside[0]):
        np.testing.assert_allclose(mvn.logpdf(pts, mean, cov, allow_singular=True),
                                   smvn.logpdf(pts, mean, cov, allow_singular=True), rtol=1e-12)
        np.testing.assert_allclose(mvn.pdf(pts, mean, cov, allow_singular=True),
                                   smvn.pdf(pts, mean, cov, allow_singular=True), rtol=1e-12)
    diag = np.diag([1.0, 1.0, 0.0, 0.0])
    for c in (diag, 0.0, 1.5):
        np.testing.assert_allclose(mvn.logpdf(inside, mean, c, allow_singular=True),
                                   smvn.logpdf(inside, mean, c, allow_singular=True), rtol=1e-12)
    with pytest.raises(ValueError, match="positive semidefinite"):
        mvn.logpdf(inside, mean, -cov - np.eye(4), allow_singular=True)
    # derivatives in x and mean: -pinv(cov) (x - mean) and its negative, to second order
    x = inside[0]
    gx, gm = ft.grad(lambda x, m: mvn.logpdf(x, m, cov, allow_singular=True), (0, 1))(x, mean)
    want = -np.linalg.pinv(cov) @ (x - mean)
    np.testing.assert_allclose(gx, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gm, -want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ft.hessian(lambda x: mvn.logpdf(x, mean, cov,
                                                               allow_singular=True))(x),
                               -np.linalg.pinv(cov), rtol=1e-9, atol=1e-12)
    # full rank, distinct eigenvalues (eigh's derivative is undefined at repeated ones): the
    # derivative in cov too equals the Cholesky route's
    spd = cov + np.diag([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(
        ft.grad(lambda c: mvn.logpdf(x, mean, c, allow_singular=True))(spd),
        ft.grad(lambda c: mvn.logpdf(x, mean, c))(spd), rtol=1e-9, atol=1e-12)
    check_grads(lambda x, m, c: mvn.logpdf(x, m, (c + c.T) / 2, allow_singular=True),
                (x, mean, spd), order=2)


def test_float32_stays_float32():
    x = np.array([0.3, 1.2], np.float32)
    for out in (fst.norm.logpdf(x), fst.norm.cdf(x, 0, 2), fst.expon.logsf(x),
                fst.gamma.cdf(x, 2.0), fst.cauchy.pdf(x)):
        assert out.dtype == np.float32
    np.testing.assert_allclose(fst.norm.logpdf(x), ss.norm.logpdf(x.astype(float)), rtol=1e-6)


def test_gradients_of_log_likelihoods():
    # the maximum-likelihood score of a normal sample is zero at the sample mean and std
    data = np.array([0.3, -1.2, 2.2, 0.8, 1.1])
    mu, sigma = data.mean(), data.std()
    score = ft.grad(lambda m, s: fst.norm.logpdf(data, m, s).sum(), argnums=(0, 1))(mu, sigma)
    np.testing.assert_allclose(score, [0.0, 0.0], atol=1e-13)
