"""The table of primitives: importing this package registers every row."""

from functrans.primitives import (ad_control, bits, elementwise, indexing, linalg,  # noqa: F401
                                  reductions, shape_ops, sorting, square_matrices, decompositions,
                                  fft, matrix_functions, special, bessel)
from functrans.primitives import activations, binary_math, norms  # noqa: F401
from functrans.primitives.registry import REGISTRY  # noqa: F401
