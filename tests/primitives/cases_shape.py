"""Cases for the shape primitives owned by shape_ops.py: slice, concatenate, iota, rev, pad."""

import numpy as np

from functrans.primitives import shape_ops as S
from primitives.cases import Case, real

CASES = [
    Case("slice", lambda x: S.slice_(x, (0, 1, 1), (3, 4, 5), (1, 2, 3)), [(3, 4, 5)],
         name="slice-strides"),
    Case("slice", lambda x: S.slice_(x, (2, 0), (2, 3)), [(4, 3)], name="slice-empty"),
    Case("concatenate", lambda a, b: S.concatenate([a, b], 0), [(2, 3), (4, 3)]),
    Case("concatenate", lambda a, b, c: S.concatenate([a, b, c], 1), [(2, 1), (2, 3), (2, 2)],
         name="concatenate-3-axis1"),
    Case("concatenate", lambda a, b: S.concatenate([a, b, a], 2), [(2, 3, 1), (2, 3, 0)],
         name="concatenate-repeated-and-empty"),
    # iota has no inputs: multiply it into an argument so the vmap check has something to map
    Case("iota", lambda x: x * S.iota(np.float64, (2, 3), 1), [(2, 3)]),
    Case("iota", lambda x: x + S.iota(np.int32, (4,), 0).astype(np.float64), [(4,)],
         name="iota-int32"),
    Case("rev", lambda x: S.rev(x, (0,)), [(3,)]),
    Case("rev", lambda x: S.rev(x, (0, 2)), [(2, 3, 4)], name="rev-two-axes"),
    Case("pad", lambda x, v: S.pad(x, v, ((1, -1, 2), (-2, 1, 0))), [(3, 4), ()],
         name="pad-traced-value"),
    Case("pad", lambda v: S.pad(np.ones((2, 3)), v, ((1, 1, 1), (0, -1, 0))), [()],
         name="pad-only-value-traced"),
    Case("pad", lambda x: S.pad(x, np.asarray(1.5), ((-1, -1, 1), (2, 0, 0))), [(4, 2)],
         name="pad-crop-interior"),
    Case("pad", lambda x, v: S.pad(x, v, ((0, 0, 3),)), [(0,), ()], domain=real,
         name="pad-empty"),
]
