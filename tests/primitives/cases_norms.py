"""Cases for the p-norm row (functrans/primitives/norms.py), away from zero entries."""

from functrans.primitives import norms as N
from primitives.cases import Case, away_from_zero

CASES = [
    Case("p_norm", lambda x: N.p_norm(x, 3.0, (0,)), [(4,)], domain=away_from_zero),
    Case("p_norm", lambda x: N.p_norm(x, 0.5, (1,)), [(2, 3)], domain=away_from_zero,
         name="p_norm-half"),
    Case("p_norm", lambda x: N.p_norm(x, 1.5, (0, 1)), [(2, 3)], domain=away_from_zero,
         name="p_norm-all"),
]
