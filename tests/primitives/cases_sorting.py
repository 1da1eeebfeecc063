"""Cases for sort and argsort (functrans/primitives/sorting.py). Random reals have no ties, so
finite differences see a smooth function; ties are checked against JAX in tests/functrans_numpy."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import sorting as P
from primitives.cases import Case, ints


CASES = [
    Case("sort", lambda x: P.sort(x, 0), [(5,)]),
    Case("sort", lambda x: P.sort(x, 1), [(3, 4)], name="sort-axis1"),
    Case("sort", lambda x: P.sort(x, 0), [(3, 2, 2)], name="sort-axis0-3d"),
    Case("sort", lambda x: fnp.sort(x, axis=None, descending=True), [(2, 3)],
         name="sort-flat-descending"),
    Case("sort", lambda x: P.sort(x, 0), [(0, 2)], name="sort-empty"),
    Case("argsort", lambda x: P.argsort(x, 1), [(3, 4)], differentiable=False),
    Case("argsort", lambda x: P.argsort(x, 0), [(6,)], domain=ints, differentiable=False,
         name="argsort-ties"),
    Case("argsort", lambda x: P.argsort(x, 0, np.int32), [(2, 3)], differentiable=False,
         name="argsort-int32"),
]
