"""Cases for dot_general (functrans/primitives/linalg.py), directly and through the
functrans.numpy products that lower to it."""

import functrans.numpy as fnp
from functrans.primitives import linalg as L
from primitives.cases import Case


def dg(lc, rc, lb=(), rb=()):
    return lambda a, b: L.dot_general(a, b, ((lc, rc), (lb, rb)))


CASES = [
    Case("dot_general", dg((0,), (0,)), [(3,), (3,)], name="dot_general-vv"),
    Case("dot_general", dg((1,), (0,)), [(2, 3), (3,)], name="dot_general-mv"),
    Case("dot_general", dg((1,), (0,)), [(2, 3), (3, 4)], name="dot_general-mm"),
    Case("dot_general", dg((2,), (1,), (0,), (0,)), [(2, 3, 4), (2, 4, 5)],
         name="dot_general-bmm"),
    Case("dot_general", dg((0,), (0,)), [(3, 2), (3, 4)], name="dot_general-TN-fast"),
    Case("dot_general", dg((1,), (1,)), [(2, 3), (4, 3)], name="dot_general-NT-fast"),
    # tall enough for jit's fast backend to run it in blocks of rows (the fused_impl)
    Case("dot_general", dg((1,), (1,)), [(256, 16), (16, 16)], name="dot_general-NT-tall"),
    Case("dot_general", dg((0,), (0,)), [(256, 16), (256, 16)], name="dot_general-TN-long"),
    Case("dot_general", dg((), ()), [(2,), (3, 2)], name="dot_general-outer"),
    Case("dot_general", dg((2, 0), (0, 1)), [(3, 2, 4), (4, 3, 2)],
         name="dot_general-two-contracting"),
    Case("dot_general", dg((1,), (2,), (0,), (1,)), [(2, 3, 4), (5, 2, 3)],
         name="dot_general-batch-not-leading"),
    Case("dot_general", dg((3,), (1,), (0, 2), (0, 3)), [(2, 3, 2, 4), (2, 4, 3, 2)],
         name="dot_general-two-batch"),
    Case("dot_general", dg((), (), (0,), (0,)), [(3, 2), (3, 4)],
         name="dot_general-batch-only"),
    Case("dot_general", fnp.matmul, [(2, 1, 3, 4), (5, 4, 2)], name="dot_general-matmul-bcast"),
    Case("dot_general", fnp.matmul, [(3,), (2, 3, 4)], name="dot_general-matmul-vec"),
    Case("dot_general", lambda a, b: fnp.tensordot(a, b, ((0, 2), (2, 0))),
         [(2, 3, 4), (4, 5, 2)], name="dot_general-tensordot"),
    Case("dot_general", lambda a, b: fnp.einsum("ij,jk->ki", a, b), [(2, 3), (3, 4)],
         name="dot_general-einsum"),
]
