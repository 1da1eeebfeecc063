"""vmap: in_axes/out_axes forms, nesting, composition with differentiation, one equation per
primitive whatever the batch size, and errors naming the offending argument."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ArgumentError, ArgumentTypeError, ShapeError

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 3))
B = rng.standard_normal((4, 3))
W = rng.standard_normal((3, 3))


def loop(f, *args, in_axes=0):
    """The reference: f applied to each slice, results stacked on axis 0."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    n = next(np.shape(a)[d] for a, d in zip(args, axes) if d is not None)
    outs = [f(*[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, axes)])
            for i in range(n)]
    return np.stack([np.asarray(o) for o in outs])


def f_row(x, y):
    return fnp.sum(fnp.tanh(x) * y) + x * 2.0


def test_vmap_equals_a_loop_over_slices():
    np.testing.assert_allclose(ft.vmap(f_row)(A, B), loop(f_row, A, B), rtol=1e-14)


@pytest.mark.parametrize("in_axes", [(0, None), (1, 0), (None, 1), (-1, 0), [0, 0]])
def test_in_axes_int_none_negative_and_list(in_axes):
    x = A if in_axes[0] in (0, None) else A.T
    y = {0: B, 1: B.T, None: B[0]}[in_axes[1]]
    if in_axes[0] is None:
        x = A[0]
    got = ft.vmap(lambda u, v: fnp.sin(u) * v, in_axes=in_axes)(x, y)
    ref = loop(lambda u, v: np.sin(u) * v, x, y, in_axes=tuple(in_axes))
    np.testing.assert_allclose(got, ref, rtol=1e-14)


def test_in_axes_as_a_pytree_prefix():
    def f(p, x):
        return fnp.sum(p["w"] * x) + p["b"][0]

    p = {"w": A, "b": (np.arange(4.0),)}
    got = ft.vmap(f, in_axes=({"w": 0, "b": 0}, None))(p, B[0])
    np.testing.assert_allclose(got, np.sum(A * B[0], axis=1) + np.arange(4.0))
    got = ft.vmap(f, in_axes=({"w": None, "b": (0,)}, 0))({"w": A[0], "b": (np.ones(4),)}, B)
    np.testing.assert_allclose(got, np.sum(A[0] * B, axis=1) + 1.0)


def test_out_axes_int_none_and_pytree():
    out = ft.vmap(lambda x: fnp.sin(x) * W, out_axes=2)(A)  # (4,3) rows -> (3,3,4)
    assert out.shape == (3, 3, 4)
    np.testing.assert_allclose(out[..., 1], np.sin(A[1]) * W, rtol=1e-15)
    out = ft.vmap(lambda x, c: (x * 2.0, c * 3.0), in_axes=(0, None),
                  out_axes=(-1, None))(A, np.ones(2))
    np.testing.assert_allclose(out[0], (A * 2.0).T)
    np.testing.assert_allclose(out[1], np.ones(2) * 3.0)
    out = ft.vmap(lambda x: {"a": x, "b": fnp.sum(x)}, out_axes={"a": 1, "b": 0})(A)
    np.testing.assert_allclose(out["a"], A.T)
    np.testing.assert_allclose(out["b"], A.sum(1))


def test_unbatched_outputs_are_broadcast_and_axis_size_without_mapped_args():
    out = ft.vmap(lambda x: (x * 1.0, np.float64(7.0)))(A)
    np.testing.assert_allclose(out[1], [7.0] * 4)
    out = ft.vmap(lambda c: c * 2.0, in_axes=None, axis_size=3)(np.ones(2))
    np.testing.assert_allclose(out, np.full((3, 2), 2.0))


def test_nested_vmap_is_an_outer_product_of_loops():
    f = lambda a, b: fnp.sum(a * b)
    got = ft.vmap(ft.vmap(f, in_axes=(None, 0)), in_axes=(0, None))(A, B)
    np.testing.assert_allclose(got, A @ B.T, rtol=1e-14)
    got = ft.vmap(ft.vmap(lambda x: fnp.sin(x) * 2.0))(np.ones((2, 5, 3)))
    np.testing.assert_allclose(got, np.sin(np.ones((2, 5, 3))) * 2.0)


def scalar_loss(x):
    return fnp.sum(fnp.sin(x) * fnp.tanh(x @ W))


def test_vmap_of_grad_and_grad_of_vmap():
    g = ft.vmap(ft.grad(scalar_loss))(A)
    np.testing.assert_allclose(g, np.stack([ft.grad(scalar_loss)(a) for a in A]), rtol=1e-14)
    # grad of a sum of vmapped losses is the same per-row gradient
    gv = ft.grad(lambda xs: fnp.sum(ft.vmap(scalar_loss)(xs)))(A)
    np.testing.assert_allclose(gv, g, rtol=1e-14)
    # closed form for a simple case
    np.testing.assert_allclose(ft.vmap(ft.grad(lambda x: fnp.sum(fnp.sin(x))))(A), np.cos(A),
                               rtol=1e-15)


def test_vmap_of_jacobians_and_hessians():
    jac = ft.vmap(ft.jacrev(lambda x: fnp.sin(x) * 2.0))(A)
    ref = np.stack([np.diag(2 * np.cos(a)) for a in A])
    np.testing.assert_allclose(jac, ref, rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.jacfwd(lambda x: fnp.sin(x) * 2.0))(A), ref,
                               rtol=1e-15)
    hes = ft.vmap(ft.hessian(lambda x: fnp.sum(fnp.sin(x))))(A)
    np.testing.assert_allclose(hes, np.stack([np.diag(-np.sin(a)) for a in A]), rtol=1e-15,
                               atol=1e-300)
    hes = ft.vmap(ft.hessian(scalar_loss))(A)
    np.testing.assert_allclose(hes, np.stack([ft.hessian(scalar_loss)(a) for a in A]),
                               rtol=1e-13)


def test_jvp_of_vmap():
    f = ft.vmap(lambda x: fnp.sin(x) * x)
    y, t = ft.jvp(f, (A,), (B,))
    np.testing.assert_allclose(t, (np.cos(A) * A + np.sin(A)) * B, rtol=1e-14)


def test_equation_count_does_not_depend_on_the_batch_size():
    f = lambda x: fnp.sum(fnp.tanh(x @ W) * x)
    for g in (ft.vmap(f), ft.vmap(ft.grad(f)), ft.vmap(ft.hessian(f))):
        n10 = len(ft.make_jaxpr(g)(np.ones((10, 3))).eqns)
        n1000 = len(ft.make_jaxpr(g)(np.ones((1000, 3))).eqns)
        assert n10 == n1000
    assert len(ft.make_jaxpr(ft.vmap(f))(np.ones((10, 3))).eqns) == \
        len(ft.make_jaxpr(f)(np.ones(3)).eqns)


# --- errors ----------------------------------------------------------------------------------

def test_mismatched_sizes_name_each_argument_and_size():
    with pytest.raises(ShapeError) as info:
        ft.vmap(lambda x, p: x * p["w"])(np.ones(3), {"w": np.ones(4)})
    msg = str(info.value)
    assert "args[0] axis 0 has size 3" in msg and "args[1]['w'] axis 0 has size 4" in msg
    assert isinstance(info.value, ValueError)
    with pytest.raises(ShapeError, match="axis_size=5"):
        ft.vmap(lambda x: x, axis_size=5)(np.ones(3))


def test_in_axes_structure_mismatch():
    with pytest.raises(ValueError, match=r"in_axes=\(0, \{'a': 0\}\) is not a tree prefix"):
        ft.vmap(lambda x, y: x * y, in_axes=(0, {"a": 0}))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="in_axes has 3 entries .* 2 positional"):
        ft.vmap(lambda x, y: x * y, in_axes=(0, 0, 0))(np.ones(3), np.ones(3))


def test_out_of_range_axes():
    with pytest.raises(ValueError, match=r"in_axes entry 2 for args\[0\] \(shape \(3,\)\)"):
        ft.vmap(lambda x: x, in_axes=2)(np.ones(3))
    with pytest.raises(ValueError, match=r"in_axes entry 0 for args\[0\] \(shape \(\)\)"):
        ft.vmap(lambda x: x)(1.0)
    with pytest.raises(ValueError, match="out_axes entry 2 is out of range .* rank 2"):
        ft.vmap(lambda x: x * 2.0, out_axes=2)(np.ones((4, 3)))
    with pytest.raises(ValueError, match="out_axes entry -3"):
        ft.vmap(lambda x: 1.0, out_axes=-3)(np.ones(4))


def test_other_misuse():
    with pytest.raises(ValueError, match="all in_axes are None"):
        ft.vmap(lambda x: x, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="out_axes=None"):
        ft.vmap(lambda x: x, out_axes=None)(np.ones(3))
    with pytest.raises(TypeError, match="keyword"):
        ft.vmap(lambda x: x)(x=np.ones(3))


def test_a_non_array_output_is_refused_not_stacked():
    # once returned array(['hi', 'hi', 'hi', 'hi']); JAX raises TypeError
    with pytest.raises(TypeError, match=r"output\[1\] of the function has type str"):
        ft.vmap(lambda x: (x, "hi"))(A)


@pytest.mark.parametrize("in_axes", [0.5, "0", (0, 1.0), {"a": True}])
def test_in_axes_that_are_not_ints_or_none_are_refused_when_vmap_is_built(in_axes):
    # 0.5 once read "in_axes entry 0.5 ... is out of range", which hid the real problem
    with pytest.raises(ArgumentTypeError) as info:
        ft.vmap(lambda x, y=None: x, in_axes=in_axes)
    msg = str(info.value)
    assert f"in_axes={in_axes!r}" in msg and "must be an int" in msg
    assert "in_axes=(0, None)" in msg  # the fix, by example
    assert isinstance(info.value, TypeError)
    with pytest.raises(ArgumentTypeError, match="out_axes=0.5"):
        ft.vmap(lambda x: x, out_axes=0.5)


def test_in_axes_out_of_range_name_the_argument_its_shape_and_the_range():
    with pytest.raises(ArgumentError) as info:
        ft.vmap(lambda x: x, in_axes=-2)(np.ones(3))
    msg = str(info.value)
    assert "args[0] (shape (3,))" in msg and "[-1, 1)" in msg and "None" in msg
    assert isinstance(info.value, ValueError)
    with pytest.raises(ArgumentError, match=r"out_axes entry 2 .* rank 1 .* \[-1, 1\)"):
        ft.vmap(lambda x: x, out_axes=2)(np.ones(3))
    # numpy integers are accepted as axes
    np.testing.assert_allclose(ft.vmap(fnp.sin, in_axes=np.int64(1))(A.T), np.sin(A))


def test_unmapped_python_scalars_reach_f_unwrapped_like_jax():
    # an int with in_axes None stays an int, so it can be a static argument of a jit inside
    seen = []
    power = ft.jit(lambda x, n: x ** n, static_argnums=1)
    out = ft.vmap(lambda x, n: seen.append(type(n)) or power(x, n), in_axes=(0, None))(A, 3)
    np.testing.assert_allclose(out, A ** 3)
    assert seen == [int]
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    expected = jax.vmap(jax.jit(lambda x, n: x ** n, static_argnums=1), in_axes=(0, None))(A, 3)
    np.testing.assert_allclose(out, expected)
