"""Cases for the indexing primitives: gather, scatter_add.

Integer index arrays are arguments (so vmap batches them too), cast with `.astype(np.intp)`
inside fn: check_grads perturbs every argument by `x + eps * 0`, which turns an integer array
into floats, and the cast turns it back. They are also closed over in one case each.
"""

import numpy as np

from functrans.primitives import indexing as I
from primitives.cases import Case, real


def indices(lo, hi):
    """Sampler of integer indices in [lo, hi)."""
    return lambda rng, shape: rng.integers(lo, hi, shape)


def _i(i):
    return i.astype(np.intp)


IDX = np.array([[2, 0, 2], [1, 3, 0]])

CASES = [
    Case("gather", lambda x, i: I.gather(x, _i(i), axis=0), [(4, 3), (5,)],
         domain=[real, indices(0, 4)]),
    Case("gather", lambda x, i: I.gather(x, _i(i), axis=1), [(3, 4), (2, 3)],
         domain=[real, indices(0, 4)], name="gather-2d-axis1"),
    Case("gather", lambda x, i: I.gather(x, _i(i), axis=0), [(4, 3), ()],
         domain=[real, indices(0, 4)], name="gather-scalar-index"),
    Case("gather", lambda i, x: I.gather(x, _i(i), axis=1), [(2, 2), (2, 3, 2)],
         domain=[indices(0, 3), real], name="gather-operand-second"),
    Case("gather", lambda x, i: I.gather(x, _i(i), axis=1), [(2, 3), (4,)],
         domain=[real, indices(-3, 6)], name="gather-clamped"),
    Case("gather", lambda x: I.gather(x, IDX, axis=0), [(4, 2)], name="gather-closed-over"),
    Case("scatter_add", lambda x, i, u: I.scatter_add(x, _i(i), u, axis=0),
         [(4, 3), (5,), (5, 3)], domain=[real, indices(0, 4), real]),
    Case("scatter_add", lambda x, u, i: I.scatter_add(x, _i(i), u, axis=1),
         [(3, 4), (3, 2, 2), (2, 2)], domain=[real, real, indices(0, 4)],
         name="scatter_add-2d-axis1"),
    Case("scatter_add", lambda u, x, i: I.scatter_add(x, _i(i), u, axis=0),
         [(3, 2), (4, 2), (3,)], domain=[real, real, indices(-2, 6)],
         name="scatter_add-clamped"),
    Case("scatter_add", lambda x, u: I.scatter_add(x, IDX, u, axis=1), [(2, 4), (2, 2, 3)],
         name="scatter_add-closed-over"),
]
