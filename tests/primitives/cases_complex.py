"""Cases for complex values: the complex-part rows (real, imag, conj, complex), |z| of a
complex z, and the elementwise rows on complex operands (holomorphic: their JVP is t f'(z);
reverse mode is its transpose under the pairing Re(c t), JAX's convention)."""

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from primitives.cases import Case, real


def plane(rng, shape):
    """Complex values in a box around 0, away from the axes' branch cuts of log and sqrt
    (real part positive)."""
    return rng.uniform(0.3, 2.0, shape) + 1j * rng.uniform(-1.5, 1.5, shape)


def disc(rng, shape):
    """Complex values inside the unit disc, away from +-1 and +-i (arcsin's and arctanh's
    branch points)."""
    r, phi = rng.uniform(0.1, 0.7, shape), rng.uniform(-np.pi, np.pi, shape)
    return r * np.exp(1j * phi)


def away_from_zero(rng, shape):
    """Complex values with |z| >= 0.5 (|z|, angle and sign have a kink at 0)."""
    r, phi = rng.uniform(0.5, 2.0, shape), rng.uniform(-np.pi, np.pi, shape)
    return r * np.exp(1j * phi)


CASES = [
    Case("real", E.real, [(3,)], domain=plane),
    Case("imag", E.imag, [(2, 3)], domain=plane),
    Case("conj", E.conj, [(3,)], domain=plane),
    Case("complex", E.complex, [(3,), (3,)], domain=[real, real]),
    Case("complex", E.complex, [(2, 3), (3,)], domain=[real, real], name="complex-bcast"),
    Case("complex", lambda x: E.complex(x, np.zeros((), x.dtype)), [(3,)],
         name="complex-constant-imag"),
    Case("abs", fnp.abs, [(4,)], domain=away_from_zero, name="abs-complex"),
    Case("atan2", fnp.angle, [(4,)], domain=away_from_zero, name="angle-complex"),
    Case("sign", fnp.sign, [(4,)], domain=away_from_zero, differentiable=False,
         name="sign-complex"),
    Case("neg", fnp.negative, [(3,)], domain=plane, name="neg-complex"),
    Case("sin", fnp.sin, [(3,)], domain=plane, name="sin-complex"),
    Case("cos", fnp.cos, [(3,)], domain=plane, name="cos-complex"),
    Case("tan", fnp.tan, [(3,)], domain=disc, name="tan-complex"),
    Case("asin", fnp.arcsin, [(3,)], domain=disc, name="asin-complex"),
    Case("acos", fnp.arccos, [(3,)], domain=disc, name="acos-complex"),
    Case("atan", fnp.arctan, [(3,)], domain=disc, name="atan-complex"),
    Case("sinh", fnp.sinh, [(3,)], domain=plane, name="sinh-complex"),
    Case("cosh", fnp.cosh, [(3,)], domain=plane, name="cosh-complex"),
    Case("tanh", fnp.tanh, [(3,)], domain=disc, name="tanh-complex"),
    Case("asinh", fnp.arcsinh, [(3,)], domain=disc, name="asinh-complex"),
    Case("acosh", fnp.arccosh, [(3,)], domain=plane, name="acosh-complex"),
    Case("atanh", fnp.arctanh, [(3,)], domain=disc, name="atanh-complex"),
    Case("exp", fnp.exp, [(3,)], domain=plane, name="exp-complex"),
    Case("exp2", fnp.exp2, [(3,)], domain=plane, name="exp2-complex"),
    Case("expm1", fnp.expm1, [(3,)], domain=plane, name="expm1-complex"),
    Case("log", fnp.log, [(3,)], domain=plane, name="log-complex"),
    Case("log2", fnp.log2, [(3,)], domain=plane, name="log2-complex"),
    Case("log10", fnp.log10, [(3,)], domain=plane, name="log10-complex"),
    Case("log1p", fnp.log1p, [(3,)], domain=plane, name="log1p-complex"),
    Case("sqrt", fnp.sqrt, [(3,)], domain=plane, name="sqrt-complex"),
    Case("rsqrt", E.rsqrt, [(3,)], domain=plane, name="rsqrt-complex"),
    Case("logistic", E.logistic, [(3,)], domain=disc, name="logistic-complex"),
    Case("integer_pow", lambda z: z ** 3, [(3,)], domain=plane, name="integer_pow-complex"),
    Case("add", fnp.add, [(2, 3), (3,)], domain=[plane, plane], name="add-complex"),
    Case("sub", fnp.subtract, [(3,), (3,)], domain=[plane, plane], name="sub-complex"),
    Case("mul", fnp.multiply, [(2, 3), (3,)], domain=[plane, plane], name="mul-complex"),
    Case("div", fnp.divide, [(3,), (2, 3)], domain=[plane, plane], name="div-complex"),
    Case("pow", fnp.power, [(3,), (3,)], domain=[plane, plane], name="pow-complex"),
    Case("select", lambda z, w: fnp.where(np.array([True, False, True]), z, w), [(3,), (3,)],
         domain=[plane, plane], fixed_shapes=True, name="select-complex"),
    # real inputs keep real outputs (the table's real-input checks, Laplacians included, take
    # real results): a complex intermediate, then a part of it
    Case("convert_element_type", lambda x: fnp.imag(fnp.exp(1j * x) * x), [(3,)],
         name="convert_element_type-to-complex"),
    Case("convert_element_type", lambda z: E.convert_element_type(z, np.float64), [(3,)],
         domain=plane, name="convert_element_type-complex-to-real"),
    Case("reduce_sum", lambda z: fnp.sum(z * z, axis=0), [(2, 3)], domain=plane,
         name="reduce_sum-complex"),
    Case("reduce_prod", lambda z: fnp.prod(z, axis=1), [(2, 3)], domain=plane,
         name="reduce_prod-complex"),
    Case("cumsum", lambda z: fnp.cumsum(z, axis=1), [(2, 3)], domain=plane,
         name="cumsum-complex"),
]
