"""Cases for the special-function primitives (functrans/primitives/special.py). An argument a
row has no derivative in (polygamma's n, betainc's a and b, igamma_grad_a's a: JAX defines
none either) is a constant of the case, so every case differentiates to order 2, except
the incomplete gamma functions in a (first order: JAX has no second derivative there)."""

import numpy as np

from functrans.primitives import special as S
from primitives.cases import Case, away_from_zero, positive, real


def _c(x, v):
    return np.asarray(v, x.dtype)


def probability(rng, shape):
    """Inside (0, 1), away from the ends, for the normal quantile."""
    return rng.uniform(0.05, 0.95, shape)


def above_half(rng, shape):
    """Arguments of gamma-like functions away from their poles and the digamma root."""
    return rng.uniform(0.5, 3.0, shape)


def above_two(rng, shape):
    """Exponents of the Hurwitz zeta function, clear of its pole at 1."""
    return rng.uniform(2.0, 4.0, shape)


def spence_domain(rng, shape):
    """Both sides of spence's reflection points (0.5, 1.5, 2), away from x = 1."""
    return rng.choice([0.3, 1.2, 1.7, 2.5], shape) + rng.uniform(-0.15, 0.15, shape)


CASES = [
    Case("lgamma", S.lgamma, [(6,)], domain=above_half),
    Case("gamma", S.gamma, [(6,)], domain=above_half),
    Case("digamma", S.digamma, [(6,)], domain=above_half),
    Case("polygamma", lambda x: S.polygamma(_c(x, 2.0), x), [(5,)], domain=above_half),
    Case("polygamma", lambda x: S.polygamma(_c(x, [0.0, 1.0, 3.0]), x), [(2, 3)],
         domain=above_half, name="polygamma-orders", fixed_shapes=True),
    Case("igamma", lambda x: S.igamma(_c(x, 1.7), x), [(5,)], domain=positive),
    Case("igamma", lambda a: S.igamma(a, _c(a, [0.3, 1.5, 4.0])), [(3,)], domain=positive,
         order=1, name="igamma-a", fixed_shapes=True),
    Case("igammac", lambda x: S.igammac(_c(x, 0.8), x), [(5,)], domain=positive),
    Case("igammac", lambda a: S.igammac(a, _c(a, [0.3, 1.5, 4.0])), [(3,)], domain=positive,
         order=1, name="igammac-a", fixed_shapes=True),
    Case("igamma_grad_a", lambda x: S.igamma_grad_a(_c(x, 2.5), x), [(5,)], domain=positive),
    Case("betainc", lambda x: S.betainc(_c(x, 1.5), _c(x, 2.5), x), [(5,)],
         domain=probability),
    Case("betainc", lambda x: S.betainc(_c(x, [[0.5], [3.0]]), _c(x, [0.7, 1.0, 2.0]), x),
         [(2, 3)], domain=probability, name="betainc-shapes", fixed_shapes=True),
    Case("zeta", lambda q: S.zeta(_c(q, 3.0), q), [(5,)], domain=positive),
    Case("zeta", S.zeta, [(5,), (5,)], domain=[above_two, positive], name="zeta-both"),
    Case("erfc", S.erfc, [(8,)], domain=lambda rng, s: rng.uniform(-4.0, 4.0, s)),
    Case("erfcx", S.erfcx, [(8,)], domain=lambda rng, s: rng.uniform(-3.0, 6.0, s)),
    Case("ndtri", S.ndtri, [(6,)], domain=probability),
    Case("log_ndtr", S.log_ndtr, [(8,)], domain=lambda rng, s: rng.uniform(-10.0, 5.0, s)),
    Case("i0e", S.i0e, [(6,)], domain=away_from_zero),
    Case("i1e", S.i1e, [(6,)], domain=real),
    Case("spence", S.spence, [(6,)], domain=spence_domain),
]
