"""Cases for the activation rows (functrans/primitives/activations.py), away from their kinks
(0 for elu, the threshold for softplus, -3 and 3 for hard_swish)."""

from functrans.primitives import activations as A
from primitives.cases import Case, away_from_zero

def around_threes(rng, shape):
    """Below -3, between -3 and 3 and above 3, away from both kinks."""
    return rng.choice([-4.0, -1.0, 1.0, 4.0], shape) + rng.uniform(-0.5, 0.5, shape)

def across_threshold(rng, shape):
    """On both sides of softplus's threshold (2 at beta = 1.5: x = 4/3), away from it."""
    return rng.choice([-1.0, 0.5, 2.5], shape) + rng.uniform(-0.3, 0.3, shape)

SELU = dict(alpha=1.6732632423543772, scale=1.0507009873554805)

CASES = [
    Case("elu", lambda x: A.elu(x, 1.5), [(6,)], domain=away_from_zero),
    Case("elu", lambda x: A.elu(x, **SELU), [(2, 3)], domain=away_from_zero, name="elu-selu"),
    Case("elu", lambda x: A.elu(x, 2.0, input_scale=0.5), [(6,)], domain=away_from_zero,
         name="elu-celu"),
    Case("softplus", A.softplus, [(6,)]),
    Case("softplus", lambda x: A.softplus(x, 1.5, 2.0), [(6,)], domain=across_threshold,
         name="softplus-threshold"),
    Case("hard_swish", A.hard_swish, [(8,)], domain=around_threes),
]
