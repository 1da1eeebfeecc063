"""partial_eval_jaxpr: known and unknown halves recombine to the original program."""

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr
from functrans.transforms.jvp import jvp_jaxpr
from functrans.transforms.partial_eval import partial_eval_jaxpr

X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.2, -0.9])


def split_and_run(closed, unknowns, args, instantiate=False):
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, unknowns, instantiate)
    check_jaxpr(known)
    check_jaxpr(unknown)
    k_out = known(*[a for a, u in zip(args, unknowns) if not u])
    n_known_out = len(k_out) - num_res
    res = k_out[n_known_out:]
    u_out = unknown(*res, *[a for a, u in zip(args, unknowns) if u])
    k_iter, u_iter = iter(k_out[:n_known_out]), iter(u_out)
    return [next(u_iter) if u else next(k_iter) for u in out_unknowns], known, unknown


def test_split_recombines_to_the_original():
    f = lambda x, y: (fnp.sin(x) * y + fnp.exp(x), fnp.tanh(x))
    closed = ft.make_jaxpr(f)(X, Y)
    want = f(X, Y)
    for unknowns in ([False, True], [True, False], [True, True], [False, False]):
        got, known, unknown = split_and_run(closed, unknowns, [X, Y])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-15)


def test_work_lands_on_the_right_side():
    closed = ft.make_jaxpr(lambda x, y: (fnp.sin(x) * y, fnp.exp(x)))(X, Y)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert [e.primitive.name for e in known.eqns] == ["sin", "exp"]
    assert [e.primitive.name for e in unknown.eqns] == ["mul"]
    assert out_unknowns == [True, False] and num_res == 1


def test_instantiate_forces_known_outputs_into_the_unknown_program():
    closed = ft.make_jaxpr(lambda x, y: (fnp.sin(x), y * 2.0))(X, Y)
    got, known, unknown = split_and_run(closed, [False, True], [X, Y], instantiate=True)
    np.testing.assert_allclose(got[0], np.sin(X))
    assert len(unknown.jaxpr.outvars) == 2


def test_jvp_program_splits_into_primal_and_linear_tangent_halves():
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * fnp.cos(x))(X)
    jclosed, _ = jvp_jaxpr(closed, [True])
    got, known, unknown = split_and_run(jclosed, [False, True], [X, Y])
    np.testing.assert_allclose(got[1], np.cos(2 * X) * Y, rtol=1e-14)
    # the tangent half is linear: only mul/add/neg on the tangent, no transcendental
    assert {e.primitive.name for e in unknown.eqns} <= {"mul", "add", "neg", "sub"}
