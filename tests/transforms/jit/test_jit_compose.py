"""jit composes with every transform: grad(jit), jit(grad), vmap(jit), jit(vmap), jit in jit,
linearize, jacobians, closures over traced values; make_jaxpr shows the call.

References are closed forms, finite differences (check_grads) and the eager transform of the
same function (the semantics jit preserves)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.test_util import check_grads
from functrans.transforms.jit import jit

rng = np.random.default_rng(0)
X = rng.uniform(-1.5, 1.5, 5)
M = rng.standard_normal((4, 5))


def f_scalar(x):
    return fnp.sum(fnp.sin(x) * fnp.exp(-x * x / 2))


def df_scalar(x):  # closed form of the gradient
    return np.exp(-x * x / 2) * (np.cos(x) - x * np.sin(x))


def close(a, b, tol=1e-12):
    la, lb = ft.tree_util.tree_leaves(a), ft.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def test_grad_of_jit_and_jit_of_grad_match_the_closed_form():
    close(ft.grad(jit(f_scalar))(X), df_scalar(X))
    close(jit(ft.grad(f_scalar))(X), df_scalar(X))
    close(jit(ft.grad(jit(f_scalar)))(X), df_scalar(X))


def test_jit_derivatives_match_finite_differences():
    check_grads(jit(f_scalar), (X,), order=2, modes=("fwd", "rev"))
    check_grads(jit(lambda a, x: fnp.tanh(a @ x)), (M, X), order=2, modes=("fwd", "rev"))


def test_higher_order_through_jit_matches_eager():
    g = ft.grad(ft.grad(jit(f_scalar)))
    s = lambda t: f_scalar(t * X)  # noqa: E731
    close(ft.grad(ft.grad(jit(s)))(0.7), ft.grad(ft.grad(s))(0.7))
    close(jit(ft.grad(jit(ft.grad(s))))(0.7), ft.grad(ft.grad(s))(0.7))
    close(ft.hessian(jit(f_scalar))(X), ft.hessian(f_scalar)(X))
    close(jit(ft.hessian(jit(f_scalar)))(X), ft.hessian(f_scalar)(X))
    close(ft.jacfwd(ft.jacrev(jit(f_scalar)))(X), ft.hessian(f_scalar)(X))
    assert g is not None


def test_hessian_of_tanh_layer_matches_closed_form():
    a = rng.standard_normal((6, 6)) / 3
    x = rng.standard_normal(6)
    h = jit(ft.hessian(lambda x: fnp.sum(fnp.tanh(a @ x))))(x)
    t = np.tanh(a @ x)
    close(h, (a.T * (-2 * t * (1 - t * t))) @ a)


def test_vmap_of_jit_and_jit_of_vmap_match_a_loop():
    xs = rng.standard_normal((3, 5))
    loop = np.stack([f_scalar(x) for x in xs])
    close(ft.vmap(jit(f_scalar))(xs), loop)
    close(jit(ft.vmap(f_scalar))(xs), loop)
    close(ft.vmap(jit(ft.grad(f_scalar)))(xs), np.stack([df_scalar(x) for x in xs]))
    # an unmapped argument, and a batch axis that is not first
    g = jit(lambda a, x: a @ x)
    z = rng.standard_normal((5, 3))
    close(ft.vmap(g, in_axes=(None, 1))(M, z), (M @ z).T)
    close(ft.vmap(g, in_axes=(0, None))(np.stack([M, 2 * M]), X), np.stack([M @ X,
                                                                            2 * M @ X]))


def test_jvp_and_linearize_of_jit():
    t = rng.standard_normal(5)
    y, y_dot = ft.jvp(jit(f_scalar), (X,), (t,))
    close(y, f_scalar(X))
    close(y_dot, df_scalar(X) @ t)
    y, f_jvp = ft.linearize(jit(f_scalar), X)
    close(f_jvp(t), df_scalar(X) @ t)


def test_linearized_program_holds_only_the_tangent_call():
    # the JVP of a call splits into a primal and a tangent call: only the second is linear
    y, f_jvp = ft.linearize(jit(lambda x: fnp.sin(fnp.sin(x))), X)
    lin = ft.make_jaxpr(f_jvp)(X)
    calls = [e for e in lin.eqns if e.primitive.name == "jit"]
    assert len(calls) == 1
    inner = [e.primitive.name for e in calls[0].params["jaxpr"].eqns]
    assert "sin" not in inner and "cos" not in inner, inner


def test_jit_inside_jit_and_make_jaxpr_shows_the_call():
    inner = jit(lambda x: fnp.sin(x) * 2.0)
    outer = jit(lambda x: inner(x) + inner(x * 3.0))
    close(outer(X), np.sin(X) * 2 + np.sin(3 * X) * 2)
    text = str(ft.make_jaxpr(inner)(np.ones(3)))
    assert text == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = jit[jaxpr={ lambda ; a:f64[3]. let\n"
        "        b:f64[3] = sin a\n"
        "        c:f64[3] = mul b 2.0\n"
        "      in (c,) } name='<lambda>'] a\n"
        "  in (b,) }")
    assert "jit" not in [e.primitive.name for e in outer.lower(X).jaxpr.eqns]


def test_closure_over_an_outer_traced_value():
    def g(y):
        return jit(lambda z: fnp.sum(fnp.sin(z * y)))(X)
    close(ft.grad(g)(0.5), np.sum(np.cos(0.5 * X) * X))
    close(ft.grad(ft.grad(g))(0.5), -np.sum(np.sin(0.5 * X) * X * X))
    close(ft.vmap(g)(np.array([0.5, 1.0])), np.array([np.sum(np.sin(0.5 * X)),
                                                      np.sum(np.sin(X))]))


def test_pytrees_kwargs_and_static_arguments_under_transforms():
    def loss(params, x, *, scale):
        w, b = params["w"], params["b"]
        return fnp.sum(fnp.tanh(w @ x + b)) * scale

    params = {"w": M, "b": rng.standard_normal(4)}
    g = ft.grad(jit(loss))(params, X, scale=2.0)
    ref = ft.grad(loss)(params, X, scale=2.0)
    close(g, ref)

    def power(x, n):
        out = x
        for _ in range(n - 1):
            out = out * x
        return fnp.sum(out)
    jp = jit(power, static_argnums=1)
    close(ft.grad(jp)(X, 3), 3 * X ** 2)
    close(jit(ft.grad(power, argnums=0), static_argnums=1)(X, 4), 4 * X ** 3)


def test_integer_inputs_and_outputs():
    f = jit(lambda x, i: (x * fnp.astype(i, np.float64), i * 2))
    y, j = f(X, np.arange(5))
    close(y, X * np.arange(5))
    assert j.dtype == np.int64 and list(j) == [0, 2, 4, 6, 8]
    y_dot = ft.jvp(lambda x: f(x, np.arange(5))[0], (X,), (np.ones(5),))[1]
    close(y_dot, np.arange(5.0))
    close(ft.grad(lambda x: fnp.sum(f(x, np.arange(5))[0]))(X), np.arange(5.0))


def test_outputs_that_do_not_depend_on_inputs_or_are_inputs():
    f = jit(lambda x: (x, fnp.ones(2), 3.0, None))
    x, ones, three, none = f(X)
    assert list(ones) == [1.0, 1.0] and float(three) == 3.0 and none is None
    # callers own their outputs: an input returned is a copy of it, a constant too
    assert np.array_equal(x, X) and not np.shares_memory(x, X)
    ones[0] = 9.0
    assert list(f(X)[1]) == [1.0, 1.0]
    close(ft.grad(lambda x: fnp.sum(jit(lambda x: (x, fnp.ones(2)))(x)[0]))(X), np.ones(5))


PROGRAMS = {
    "poly": lambda x: fnp.sum(x * x * x - 2.0 * x),
    "trig": lambda x: fnp.sum(fnp.sin(x) * fnp.cos(2.0 * x)),
    "matvec": lambda x: fnp.sum(fnp.tanh(M @ x) ** 2),
    "where": lambda x: fnp.sum(fnp.where(x > 0, fnp.exp(x), x * x)),
    "reshape": lambda x: fnp.sum(fnp.transpose(fnp.reshape(x, (1, 5))) * x),
}
TRANSFORMS = {
    "jit": lambda f: jit(f),
    "grad": lambda f: ft.grad(jit(f)),
    "jit(grad)": lambda f: jit(ft.grad(f)),
    "jvp": lambda f: lambda x: ft.jvp(jit(f), (x,), (np.ones_like(x),))[1],
    "vmap": lambda f: lambda x: ft.vmap(jit(f))(np.stack([x, -x])),
    "grad(grad)": lambda f: lambda x: ft.grad(ft.grad(lambda s: jit(f)(s * x)))(1.0),
    "jacfwd(jacrev)": lambda f: ft.jacfwd(ft.jacrev(jit(f))),
}
EAGER = {
    "jit": lambda f: f,
    "grad": ft.grad,
    "jit(grad)": ft.grad,
    "jvp": lambda f: lambda x: ft.jvp(f, (x,), (np.ones_like(x),))[1],
    "vmap": lambda f: lambda x: ft.vmap(f)(np.stack([x, -x])),
    "grad(grad)": lambda f: lambda x: ft.grad(ft.grad(lambda s: f(s * x)))(1.0),
    "jacfwd(jacrev)": lambda f: ft.jacfwd(ft.jacrev(f)),
}


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_composition_matrix(program, transform):
    f = PROGRAMS[program]
    close(TRANSFORMS[transform](f)(X), EAGER[transform](f)(X))


def _programs_in(closed, seen):
    """Every program reachable from `closed` through the jit rules' caches and call params."""
    from functrans.core.ir import ClosedJaxpr
    if id(closed) in seen:
        return
    seen[id(closed)] = closed
    for e in closed.eqns:
        for p in e.params.values():
            if isinstance(p, ClosedJaxpr):
                _programs_in(p, seen)
    for val in closed.derived.values():
        for attr in ("primal", "tangent", "program"):
            sub = getattr(val, attr, None)
            if isinstance(sub, ClosedJaxpr):
                _programs_in(sub, seen)
        if isinstance(val, ClosedJaxpr):
            _programs_in(val, seen)


def test_every_program_the_rules_derive_is_well_formed():
    jf = jit(f_scalar)
    ft.hessian(jf)(X)
    ft.vmap(ft.grad(jf))(np.stack([X, X]))
    ft.jacfwd(jf)(X)
    seen = {}
    _programs_in(jf.lower(X).jaxpr, seen)
    assert len(seen) >= 6
    for closed in seen.values():
        ft.check_jaxpr(closed)


def test_errors_inside_jit_name_the_fix():
    from functrans.errors import TracerBoolConversionError
    with pytest.raises(TracerBoolConversionError, match="static_argnums"):
        jit(lambda x: x if x > 0 else -x)(1.0)
    with pytest.raises(ValueError, match="argnums"):
        jit(lambda x: x, static_argnums=3)(1.0)
    with pytest.raises(TypeError, match="not an array"):
        jit(lambda x: x)("a string")
    with pytest.raises(TypeError, match="expected a function"):
        jit(3)


def test_no_arguments_and_methods():
    assert list(jit(lambda: fnp.ones(2) * 3.0)()) == [3.0, 3.0]

    class Model:
        def __init__(self, w):
            self.w = w

        def __hash__(self):
            return id(self)

        @jit
        def apply_dynamic(self, x):  # noqa: N805  (self is not an array: fails clearly)
            return x

        def apply(self, x):
            return jit(lambda w, x: fnp.sum(w * x))(self.w, x)

    m = Model(np.arange(3.0))
    assert float(m.apply(np.ones(3))) == 3.0
    static = jit(lambda self, x: fnp.sum(self.w * x), static_argnums=0)
    assert float(static(m, np.ones(3))) == 3.0
    with pytest.raises(TypeError, match="not an array"):
        m.apply_dynamic(np.ones(3))
