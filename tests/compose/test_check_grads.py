"""functrans.test_util.check_grads: passes on correct rules, and fails on a wrong JVP, a wrong
transpose and a wrong second derivative (so the rule checks built on it can fail)."""

import numpy as np
import pytest

import functrans.numpy as fnp
from functrans.core.primitive import Primitive
from functrans.primitives.elementwise import cos, mul, sin
from functrans.test_util import check_grads


def make_prim(name, impl, jvp=None, transpose=None):
    """A primitive outside the registry (the rule table's completeness test never sees it)."""
    p = Primitive(name, module="tests")
    p.impl = impl
    p.abstract_eval = lambda x: x
    if jvp:
        p.rules["jvp"] = jvp
    if transpose:
        p.rules["transpose"] = transpose
    return p


X = np.array([0.3, -1.1, 0.8])


def test_passes_on_correct_rules_up_to_third_order():
    check_grads(lambda x: fnp.sum(fnp.sin(x) * fnp.exp(x)), (X,), order=3)
    check_grads(lambda x, y: (x * y, fnp.tanh(x) / (1.0 + y * y)), (X, X[::-1]), order=2)


def test_fails_on_a_wrong_jvp():
    bad = make_prim("bad_sin", np.sin, jvp=lambda p, t: (sin(p[0]), mul(t[0], sin(p[0]))))
    with pytest.raises(AssertionError, match="central difference"):
        check_grads(bad.bind, (X,), order=1, modes=("fwd",))


def test_fails_on_a_wrong_transpose():
    def scale_jvp(p, t):
        return scale.bind(p[0]), scale.bind(t[0])
    scale = make_prim("bad_scale", lambda x: 2.0 * x, jvp=scale_jvp,
                      transpose=lambda ct, x: [mul(ct, np.float64(3.0))])  # should be 2 ct
    check_grads(scale.bind, (X,), order=1, modes=("fwd",))  # forward mode is right
    with pytest.raises(AssertionError, match="vjp identity"):
        check_grads(scale.bind, (X,), order=1, modes=("rev",))


def test_fails_on_a_wrong_second_derivative():
    # first derivative right (cos x), but its own derivative claims +sin x, not -sin x
    wrong_cos = make_prim("wrong_cos", np.cos,
                          jvp=lambda p, t: (cos(p[0]), mul(t[0], sin(p[0]))))
    good_sin = make_prim("sin_with_bad_cos", np.sin,
                         jvp=lambda p, t: (sin(p[0]), mul(t[0], wrong_cos.bind(p[0]))))
    check_grads(good_sin.bind, (X,), order=1)
    with pytest.raises(AssertionError):
        check_grads(good_sin.bind, (X,), order=2, modes=("fwd",))
