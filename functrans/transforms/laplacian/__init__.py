"""Forward Laplacian: one forward pass carrying (value, gradient block, second-order part).

Collapsed second-order Taylor mode. For inputs x of total size n, every value v of the program
is carried as its primal, its gradient block `G` = dv/dx (shape (n, *v.shape)) and either its
Laplacian `L` = sum_k d2v/dx_k^2 (shape v.shape) or, for `hessian_diag`, the per-direction
block `D` (shape (n, *v.shape)). A primitive y = p(x_1, ..., x_m) maps them by

    G_y[k] = J_p G[k]                      (the JVP rule, vmapped over the n directions)
    L_y    = J_p L + sum_k D2p[G[k], G[k]]  (D2p: the second directional derivative)

so the whole rule comes from the primitive's JVP rule, with no new derivative formula. The
families read from the table make it cheap: linear primitives (second term zero), elementwise
ones in a single varying operand (L_y = f' L + f'' sum_k G_k^2, f' and f'' from nested JVPs with
unit tangents), bilinear ones (second term 2 sum_k p(G_a[k], G_b[k])). Anything else takes the
generic rule (jvp of jvp, vmapped over the directions), which is exact but does n times the
work. Values that do not depend on x (constants, network parameters) carry nothing, so
`grad` of a residual loss with respect to parameters differentiates a short program.

A gradient block that does not depend on x (that of an affine function of x: a network's first
pre-activation) is kept apart from the factor an elementwise map scales it by (`_Scaled`), so
the next product with an x-independent weight folds the factor in last: (s * B) W = s (B * W),
one product over the points in place of a broadcast multiply of the block and a product.

>>> import functrans as ft, functrans.numpy as fnp
>>> from functrans.transforms.laplacian import laplacian
>>> float(laplacian(lambda x: fnp.sum(x * x * x))(fnp.ones(3)))
18.0
"""

from functrans.transforms.laplacian.api import (  # noqa: F401
    divergence, hessian_diag, laplacian, value_grad_and_hessian_diag, value_grad_and_laplacian)
from functrans.transforms.laplacian.trace import LaplacianTrace, LaplacianTracer  # noqa: F401

__all__ = ["laplacian", "hessian_diag", "divergence", "value_grad_and_laplacian",
           "value_grad_and_hessian_diag", "api", "trace"]
