"""Cases for the primitives written with the core (to be extended by each family's file)."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import indexing as I
from functrans.primitives import linalg as L
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from primitives.cases import Case, positive, real

CASES = [
    Case("neg", fnp.negative, [(3,)]),
    Case("add", fnp.add, [(2, 3), (3,)]),
    Case("add", fnp.add, [(), (2, 1)], name="add-scalar-bcast"),
    Case("sub", fnp.subtract, [(2, 3), (2, 1)]),
    Case("mul", fnp.multiply, [(4,), (4,)]),
    Case("mul", fnp.multiply, [(1, 3), (2, 1)], name="mul-bcast"),
    Case("div", fnp.divide, [(3,), (3,)], domain=[real, positive]),
    Case("sin", fnp.sin, [(3,)]),
    Case("cos", fnp.cos, [(2, 2)]),
    Case("exp", fnp.exp, [(3,)]),
    Case("log", fnp.log, [(3,)], domain=positive),
    Case("tanh", fnp.tanh, [(3,)]),
    Case("sqrt", fnp.sqrt, [(3,)], domain=positive),
    Case("select", lambda x, y: fnp.where(x > 0, x, y), [(3,), (3,)]),
    Case("lt", lambda x, y: x < y, [(3,), (3,)], differentiable=False),
    Case("convert_element_type", lambda x: S.convert_element_type(x, np.float32),
         [(3,)], differentiable=False),
    Case("broadcast_in_dim", lambda x: S.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [(3, 1)]),
    Case("reshape", lambda x: S.reshape(x, (3, 2)), [(2, 3)]),
    Case("transpose", lambda x: S.transpose(x, (1, 0, 2)), [(2, 3, 4)]),
    Case("squeeze", lambda x: S.squeeze(x, (1,)), [(2, 1, 3)]),
    Case("expand_dims", lambda x: S.expand_dims(x, (0, 2)), [(2, 3)]),
    Case("reduce_sum", lambda x: R.reduce_sum(x, (1,)), [(2, 3, 4)]),
    Case("reduce_sum", lambda x: R.reduce_sum(x, (0, 1)), [(2, 3)], name="reduce_sum-all"),
    Case("slice", lambda x: S.slice_(x, (1, 0), (4, 3), (2, 2)), [(5, 3)]),
    Case("pad", lambda x: S.pad(x, np.zeros(()), ((1, 2, 1), (0, -1, 0))), [(3, 3)]),
    Case("dot_general", lambda a, b: L.dot_general(a, b, (((1,), (0,)), ((), ()))),
         [(2, 3), (3, 4)]),
    Case("dot_general", lambda a, b: L.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
         [(2, 3, 4), (2, 4, 5)], name="dot_general-batched"),
    Case("dot_general", lambda a, b: L.dot_general(a, b, (((0,), (1,)), ((), ()))),
         [(3, 2), (4, 3)], name="dot_general-tn"),
]
