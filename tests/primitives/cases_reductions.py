"""Cases for the reduction primitives (functrans/primitives/reductions.py)."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import reductions as R
from primitives.cases import Case, positive, real


def with_zeros(rng, shape):
    """Reals with about a third of the entries exactly 0 (products must still differentiate)."""
    return rng.uniform(-2.0, 2.0, shape) * (rng.random(shape) > 0.35)


def with_ties(rng, shape):
    """Small integers as floats: many ties for max/min/argmax."""
    return rng.integers(-1, 2, shape).astype(np.float64)


def bools(rng, shape):
    return rng.random(shape) > 0.5


CASES = [
    Case("reduce_sum", lambda x: R.reduce_sum(x, (0, 2)), [(2, 3, 4)], name="reduce_sum-0,2"),
    Case("reduce_sum", lambda x: fnp.sum(x, axis=-1, keepdims=True), [(3, 4)],
         name="reduce_sum-keepdims"),
    Case("reduce_max", lambda x: R.reduce_max(x, (1,)), [(3, 4)]),
    Case("reduce_max", lambda x: R.reduce_max(x, (0, 2)), [(2, 3, 2)], name="reduce_max-0,2"),
    Case("reduce_max", lambda x: fnp.max(x), [(5,)], name="reduce_max-all"),
    Case("reduce_max", lambda x: fnp.max(x, axis=0, keepdims=True), [(3, 4)],
         name="reduce_max-keepdims"),
    Case("reduce_max", lambda x: R.reduce_max(x, (1,)), [(3, 4)], domain=with_ties,
         differentiable=False, name="reduce_max-ties"),
    Case("reduce_min", lambda x: R.reduce_min(x, (0,)), [(4, 3)]),
    Case("reduce_min", lambda x: fnp.min(x, axis=(1, 2)), [(2, 3, 2)], name="reduce_min-1,2"),
    Case("reduce_min", lambda x: R.reduce_min(x, (0,)), [(4, 3)], domain=with_ties,
         differentiable=False, name="reduce_min-ties"),
    Case("reduce_prod", lambda x: R.reduce_prod(x, (1,)), [(3, 5)]),
    Case("reduce_prod", lambda x: R.reduce_prod(x, (0, 1)), [(2, 3)], name="reduce_prod-all"),
    Case("reduce_prod", lambda x: R.reduce_prod(x, (1,)), [(4, 7)], domain=with_zeros,
         name="reduce_prod-zeros"),
    Case("reduce_prod", lambda x: fnp.prod(x, axis=(0, 2), keepdims=True), [(3, 2, 2)],
         domain=with_zeros, name="reduce_prod-zeros-keepdims"),
    Case("reduce_prod", lambda x: R.reduce_prod(x, (0,)), [(1, 3)], domain=positive,
         name="reduce_prod-size1"),
    Case("reduce_and", lambda x: R.reduce_and(x, (1,)), [(3, 4)], domain=bools,
         differentiable=False),
    Case("reduce_and", lambda x: fnp.all(x > 0, axis=0), [(3, 4)], differentiable=False,
         name="reduce_and-fnp.all"),
    Case("reduce_or", lambda x: R.reduce_or(x, (0, 1)), [(3, 4)], domain=bools,
         differentiable=False),
    Case("reduce_or", lambda x: fnp.any(x > 1, axis=1), [(3, 4)], differentiable=False,
         name="reduce_or-fnp.any"),
    Case("argmax", lambda x: R.argmax(x, 1), [(3, 4)], differentiable=False),
    Case("argmax", lambda x: R.argmax(x, 0), [(5, 2)], domain=with_ties,
         differentiable=False, name="argmax-ties"),
    Case("argmin", lambda x: R.argmin(x, 0), [(4, 3)], differentiable=False),
    Case("argmin", lambda x: fnp.argmin(x), [(3, 4)], domain=with_ties, differentiable=False,
         name="argmin-flat-ties"),
    Case("cumsum", lambda x: R.cumsum(x, 1), [(3, 4)]),
    Case("cumsum", lambda x: R.cumsum(x, 0, reverse=True), [(4, 2)], name="cumsum-reverse"),
    Case("cumsum", lambda x: fnp.cumsum(x), [(2, 3)], name="cumsum-flat"),
    Case("cumprod", lambda x: R.cumprod(x, 1), [(2, 5)], domain=with_zeros),
    Case("cumprod", lambda x: R.cumprod(x, 0, reverse=True), [(6, 2)], domain=with_zeros,
         name="cumprod-reverse"),
    Case("cumprod", lambda x: fnp.cumprod(x, axis=0), [(3,)], domain=real,
         name="cumprod-fnp"),
    Case("logsumexp", lambda x: R.logsumexp(x, (1,)), [(2, 3)]),
    Case("logsumexp", lambda x: R.logsumexp(x, (0, 1)), [(3, 2)], name="logsumexp-all"),
]
