"""functrans's concrete `Array` (functrans/core/array.py): what functrans.numpy and the
transforms return. It takes traced indices inside jit, vmap, grad and loop bodies, has
`.at[...]` eagerly, and otherwise behaves as the numpy array it is. Values are checked
against numpy (and JAX when installed), derivatives against closed forms."""

import pickle

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ArgumentError, TracerArrayConversionError
from functrans.test_util import check_owned

Array = fnp.ndarray

TABLE = np.arange(24.0).reshape(4, 6) ** 1.5 - 3.0


def table():
    return fnp.array(TABLE)


# --- which calls return an Array ---------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: fnp.array([1.0, 2.0]), lambda: fnp.asarray([[1, 2]]), lambda: fnp.asarray(TABLE),
    lambda: fnp.array(TABLE), lambda: fnp.zeros(3), lambda: fnp.ones((2, 2), np.float32),
    lambda: fnp.full(3, 2.0), lambda: fnp.arange(5), lambda: fnp.linspace(0.0, 1.0, 4),
    lambda: fnp.eye(3), lambda: fnp.identity(2), lambda: fnp.sin([1.0, 2.0]),
    lambda: fnp.zeros_like(table()), lambda: fnp.sin(table()), lambda: fnp.add(table(), 1.0),
    lambda: fnp.multiply(TABLE, table()), lambda: fnp.sum(table(), axis=0),
    lambda: fnp.mean(table(), 1), lambda: fnp.where(table() > 0, TABLE, 0.0),
    lambda: fnp.reshape(table(), (6, 4)), lambda: fnp.concatenate([TABLE, table()]),
    lambda: fnp.linalg.inv(fnp.eye(2) * 2.0), lambda: fnp.matmul(table(), TABLE.T),
    lambda: fnp.maximum(table(), 3), lambda: fnp.sort(table()), lambda: fnp.cumsum(table()),
    lambda: table() * 2.0, lambda: -table(), lambda: table()[1:], lambda: table().T,
    lambda: np.sin(table()),
], ids=lambda f: "")
def test_functrans_made_arrays_and_what_is_computed_from_them_are_arrays(make):
    out = make()
    assert type(out) is Array and isinstance(out, np.ndarray)


@pytest.mark.parametrize("make", [
    lambda: ft.jit(lambda x: x * 2.0)(TABLE), lambda: ft.grad(lambda x: fnp.sum(x ** 2))(TABLE),
    lambda: ft.vmap(fnp.sin)(TABLE), lambda: ft.jacfwd(fnp.sin)(np.ones(2)),
    lambda: ft.jvp(fnp.sin, (TABLE,), (TABLE,))[1], lambda: ft.vjp(fnp.sin, TABLE)[0],
    lambda: lax.scan(lambda c, x: (c + x, c * x), 0.0, TABLE[0])[1],
    lambda: lax.fori_loop(0, 3, lambda i, x: x * 2.0, TABLE),
    lambda: lax.cond(True, lambda x: x + 1.0, lambda x: x, TABLE),
], ids=lambda f: "")
def test_transforms_return_arrays_for_plain_inputs_too(make):
    assert type(make()) is Array


@pytest.mark.parametrize("make", [
    lambda: fnp.sin(TABLE), lambda: fnp.add(TABLE, 1.0), lambda: fnp.sum(TABLE, axis=0),
    lambda: fnp.where(TABLE > 0, TABLE, 0.0), lambda: fnp.reshape(TABLE, (6, 4)),
    lambda: fnp.concatenate([TABLE, TABLE]), lambda: fnp.zeros_like(TABLE),
    lambda: fnp.linalg.inv(np.eye(2)), lambda: fnp.exp(TABLE.astype(np.float32) / 200),
])
def test_eager_calls_on_plain_numpy_arrays_return_what_numpy_returns(make):
    # numpy's rule for subclasses: plain operands, a plain result (and no cost added)
    assert type(make()) is np.ndarray


def test_multiple_results_and_full_reductions():
    parts = fnp.split(table(), 2) + list(fnp.meshgrid(table()[0], TABLE[1]))
    assert all(type(p) is Array for p in parts)
    assert all(type(p) is np.ndarray for p in fnp.split(TABLE, 2))
    assert all(type(v) is Array for v in fnp.linalg.slogdet(fnp.eye(2) * 3.0))
    assert all(type(v) is Array for v in fnp.nonzero(table() > 3))
    assert type(fnp.sum(TABLE)) is np.float64  # as numpy: a scalar, not a 0-d array
    assert type(fnp.sum(table())) is np.float64 and type(fnp.mean(table())) is np.float64
    assert type(np.sum(table())) is np.float64 and type(table().max()) is np.float64


# --- traced indices into a concrete array ------------------------------------------------------

INDEX_CASES = [
    (lambda t, i: t[i], 2),
    (lambda t, i: t[i, 1:], 3),
    (lambda t, i: t[-i], 1),
    (lambda t, i: t[i, i], 1),
    (lambda t, i: t[:, i], 5),
    (lambda t, i: t[1:, i], 0),
    (lambda t, i: t[..., i], 4),
    (lambda t, i: t[None, i], 2),
    (lambda t, i: t[i][::-1], 3),
    (lambda t, i: t[i, [0, 2, 2]], 1),
    (lambda t, i: t[np.array([0, 3]), i], 2),
    (lambda t, i: t[i * 0 + np.array([[1], [2]]), np.array([0, 5])], 0),
]


@pytest.mark.parametrize("f, i", INDEX_CASES)
def test_traced_index_into_concrete_array_under_jit(f, i):
    t = table()
    want = f(TABLE, i)  # numpy's own indexing, with a concrete index
    got = ft.jit(lambda i: f(t, i))(i)
    assert type(got) is Array or np.ndim(want) == 0  # numpy gives a scalar for 0-d results
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("f, i", INDEX_CASES)
def test_traced_index_into_concrete_array_under_vmap(f, i):
    t = table()
    idx = np.array([i, 0, 3 - i % 4])
    got = ft.vmap(lambda i: f(t, i))(idx)
    np.testing.assert_array_equal(got, np.stack([f(TABLE, k) for k in idx]))


def test_index_array_that_is_traced():
    t = table()
    idx = np.array([3, 0, 0, -1])
    np.testing.assert_array_equal(ft.jit(lambda j: t[j])(idx), TABLE[idx])
    np.testing.assert_array_equal(ft.jit(lambda j: t[j, 2:4])(idx), TABLE[idx, 2:4])
    np.testing.assert_array_equal(ft.jit(lambda j, k: t[j, k])(idx, idx + 2),
                                  TABLE[idx, idx + 2])


def test_traced_index_under_grad_is_the_closed_form():
    t = table()
    # d/dx sum(t[i] * x) = t[i], and through a traced index d/dx t[i, 1] * x^2 = 2 x t[i, 1]
    np.testing.assert_allclose(ft.grad(lambda x, i: fnp.sum(t[i] * x))(np.ones(6), 2),
                               TABLE[2])
    np.testing.assert_allclose(ft.grad(lambda x, i: t[i, 1] * x ** 2)(1.5, 3),
                               2 * 1.5 * TABLE[3, 1])
    # an index computed from the differentiated value (argmax: piecewise constant in x)
    g = ft.grad(lambda x: fnp.sum(t[fnp.argmax(x), :4] * x))(np.array([0.0, 3.0, 1.0, 2.0]))
    np.testing.assert_allclose(g, TABLE[1, :4])


def test_traced_index_in_loop_bodies():
    t = table()
    total = lax.fori_loop(0, 4, lambda i, acc: acc + t[i, i + 1], 0.0)
    assert total == pytest.approx(sum(TABLE[i, i + 1] for i in range(4)))
    carry, rows = lax.scan(lambda c, i: (c * 0.5 + t[i, 0], t[i, 1:3] * c), 1.0,
                           np.array([3, 1, 2]))
    c, want = 1.0, []
    for i in (3, 1, 2):
        want.append(TABLE[i, 1:3] * c)
        c = c * 0.5 + TABLE[i, 0]
    assert carry == pytest.approx(c)
    np.testing.assert_allclose(rows, np.stack(want))
    out = lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, s[1] + t[s[0], -1]), (0, 0.0))
    assert out[1] == pytest.approx(TABLE[:, -1].sum())
    # grad through a loop that reads the table at traced positions: d/dx sum_i t[i,0] x = sum
    g = ft.grad(lambda x: lax.fori_loop(0, 4, lambda i, a: a + t[i, 0] * x, 0.0))(2.0)
    assert g == pytest.approx(TABLE[:, 0].sum())


def test_table_results_of_eager_calls_take_traced_indices():
    tab = fnp.sin(fnp.linspace(0.0, 3.0, 7)) * 2.0 + 1.0  # eager results, then indexed
    assert type(tab) is Array
    got = ft.jit(lambda i: tab[i] + tab[i + 1])(2)
    assert got == pytest.approx(tab[2] + tab[3])
    out = ft.jit(lambda x: x * 3.0)(TABLE)  # a jit output indexed under another transform
    np.testing.assert_array_equal(ft.vmap(lambda i: out[i, i])(np.arange(4)),
                                  np.diag(TABLE * 3.0))


def test_traced_index_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    t, tj = table(), jnp.asarray(TABLE)
    idx = np.array([0, 3, -2])
    for f in (lambda t, i: t[i], lambda t, i: t[i, 1:], lambda t, i: t[:, i] * 2.0,
              lambda t, i: t[i, i + 1]):
        want = jax.vmap(jax.jit(lambda i: f(tj, i)))(idx)
        np.testing.assert_allclose(ft.vmap(ft.jit(lambda i: f(t, i)))(idx), want, rtol=1e-6)


def test_plain_numpy_array_with_traced_index_names_the_fix():
    # as with JAX: numpy's own arrays cannot take a traced index; fnp.asarray gives one that can
    with pytest.raises(TracerArrayConversionError, match="functrans.numpy"):
        ft.jit(lambda i: TABLE[i])(1)
    np.testing.assert_array_equal(ft.jit(lambda i: fnp.asarray(TABLE)[i])(1), TABLE[1])


# --- a concrete array on the left of an operator with a tracer -----------------------------------

@pytest.mark.parametrize("op", [
    lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a / b,
    lambda a, b: abs(a) ** b, lambda a, b: a @ b, lambda a, b: a < b, lambda a, b: a == b,
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: np.maximum(a, b),
])
@pytest.mark.parametrize("left", [table, lambda: TABLE.copy()], ids=["Array", "ndarray"])
def test_concrete_left_operand_with_traced_right(op, left):
    t = left()
    x = np.linspace(0.5, 2.0, 6)
    got = ft.jit(lambda x: op(t, x))(x)
    want = op(TABLE, x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("left", [table, lambda: TABLE.copy()], ids=["Array", "ndarray"])
def test_divmod_of_a_concrete_array_by_a_traced_value(left):
    t, x = left(), np.linspace(0.5, 2.0, 6)
    for got, want in zip(ft.jit(lambda x: divmod(t, x))(x), np.divmod(TABLE, x)):
        np.testing.assert_array_equal(got, want)


def test_concrete_left_operand_derivatives_are_closed_forms():
    t = table()
    x = np.linspace(0.5, 2.0, 6)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(t * x))(x), TABLE.sum(0))
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(t @ x))(x), TABLE.sum(0))
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(t - x))(x), -4.0 * np.ones(6))
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(t[1] / x))(x), -TABLE[1] / x ** 2)


# --- .at[...] eagerly ------------------------------------------------------------------------

AT_INDICES = [1, (2, 3), (slice(None), 2), (np.array([0, 2, 0]),), (np.array([1, 1, 3]), 4),
              (-1, slice(1, None, 2))]


def numpy_at(op, idx, v):
    """What x.at[idx].op(v) gives, by numpy's unbuffered in-place ufuncs (every update of a
    repeated index applies), on a copy."""
    x = TABLE.copy()
    sel = np.broadcast_to(np.asarray(v, float), x[idx].shape)
    ufunc = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "min": np.minimum, "max": np.maximum}[op]
    ufunc.at(x, idx, sel)
    return x


@pytest.mark.parametrize("idx", AT_INDICES, ids=str)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "min", "max"])
def test_at_updates_match_numpy(op, idx):
    t = table()
    v = np.linspace(-2.0, 3.0, TABLE[idx].size).reshape(TABLE[idx].shape)
    got = getattr(t.at[idx], op)(v)
    assert type(got) is Array
    np.testing.assert_allclose(got, numpy_at(op, idx, v), rtol=1e-14)
    np.testing.assert_array_equal(t, TABLE)  # never modified
    check_owned(got, [t])


@pytest.mark.parametrize("idx", AT_INDICES, ids=str)
def test_at_set_get_divide_power_match_numpy(idx):
    t = table()
    x = TABLE.copy()
    x[idx] = 7.5  # numpy's assignment (every repeat writes the same value)
    np.testing.assert_array_equal(t.at[idx].set(7.5), x)
    np.testing.assert_array_equal(t.at[idx].get(), TABLE[idx])
    # JAX's divide and power: x / ones.at[idx].multiply(v), x ** ones.at[idx].multiply(v)
    ones = np.ones_like(TABLE)
    np.multiply.at(ones, idx, 2.0)
    np.testing.assert_allclose(t.at[idx].divide(2.0), TABLE / ones, rtol=1e-14)
    np.testing.assert_allclose(fnp.abs(t).at[idx].power(2.0), np.abs(TABLE) ** ones,
                               rtol=1e-14)
    np.testing.assert_array_equal(t, TABLE)


def test_at_set_repeated_concrete_index_last_wins_as_numpy():
    got = fnp.zeros(3).at[np.array([1, 1])].set(np.array([5.0, 6.0]))
    want = np.zeros(3)
    want[[1, 1]] = [5.0, 6.0]
    np.testing.assert_array_equal(got, want)


def test_at_keywords_and_modes():
    t = fnp.arange(5.0)
    kw = dict(indices_are_sorted=True, unique_indices=True)
    np.testing.assert_array_equal(t.at[1].set(9.0, **kw, mode="promise_in_bounds"),
                                  [0, 9, 2, 3, 4])
    np.testing.assert_array_equal(t.at[np.array([0, 7])].add(1.0, mode="drop"), [1, 1, 2, 3, 4])
    np.testing.assert_array_equal(t.at[np.array([0, 7])].set(-1.0, mode="fill"),
                                  [-1, 1, 2, 3, 4])
    np.testing.assert_array_equal(t.at[np.array([-9, 7])].add(1.0, mode="clip"),
                                  [1, 1, 2, 3, 5])
    np.testing.assert_array_equal(t.at[9].set(1.0, mode="drop"), np.arange(5.0))
    got = t.at[np.array([1, 6, -1, -6])].get(mode="fill")
    np.testing.assert_array_equal(got, [1.0, np.nan, 4.0, np.nan])
    np.testing.assert_array_equal(t.at[np.array([1, 6])].get(mode="fill", fill_value=-3.0),
                                  [1.0, -3.0])
    np.testing.assert_array_equal(fnp.arange(3).at[5].get(mode="fill"),
                                  np.iinfo(np.int64).min)
    np.testing.assert_array_equal(t.at[np.array([1, 6, -7])].get(mode="clip"), [1, 4, 0])
    np.testing.assert_array_equal(t.at[2].get(**kw), 2.0)
    with pytest.raises(ArgumentError, match="mode='wrap' is not one of JAX's modes"):
        t.at[1].set(0.0, mode="wrap")
    with pytest.raises(IndexError, match="out of bounds"):
        t.at[np.array([0, 7])].add(1.0)  # the default: a concrete index must be in bounds


def test_at_modes_with_traced_indices():
    t = fnp.arange(5.0)
    idx = np.array([0, 7, -1])
    np.testing.assert_array_equal(ft.jit(lambda i: t.at[i].add(1.0, mode="drop"))(idx),
                                  [1, 1, 2, 3, 5])
    got = ft.jit(lambda i: t.at[i].get(mode="fill", fill_value=-1.0))(idx)
    np.testing.assert_array_equal(got, [0.0, -1.0, 4.0])
    np.testing.assert_array_equal(ft.jit(lambda i: t.at[i].get(mode="clip"))(idx), [0, 4, 4])
    # derivative through a dropped update: zero for the dropped one, one for the others
    g = ft.grad(lambda v: fnp.sum(t.at[idx].multiply(v, mode="drop")))(np.full(3, 2.0))
    np.testing.assert_allclose(g, [0.0, 0.0, 4.0])  # t[0], dropped, t[-1]


def test_at_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    t, tj = table(), jnp.asarray(TABLE)
    idx = (np.array([1, 1, 3]), np.array([0, 0, 5]))
    v = np.array([1.5, -2.0, 4.0])
    for op in ("add", "multiply", "min", "max", "subtract"):
        np.testing.assert_allclose(getattr(t.at[idx], op)(v), getattr(tj.at[idx], op)(v),
                                   rtol=1e-6)
    for mode in ("drop", "clip", "fill"):
        k = np.array([0, 9, -2])
        np.testing.assert_allclose(t.at[k, 1].add(1.0, mode=mode),
                                   tj.at[k, 1].add(1.0, mode=mode), rtol=1e-6)
        np.testing.assert_allclose(t.at[k, 1].get(mode=mode, fill_value=-1.0),
                                   tj.at[k, 1].get(mode=mode, fill_value=-1.0), rtol=1e-6)


# --- numpy's behaviour kept ------------------------------------------------------------------

def test_arrays_behave_as_numpy_arrays():
    t = table()
    assert repr(t) == repr(TABLE) and str(t) == str(TABLE)
    assert repr(fnp.asarray(2.5)) == "array(2.5)"
    assert t.tolist() == TABLE.tolist()
    assert type(np.asarray(t)) is np.ndarray and np.shares_memory(np.asarray(t), t)
    back = pickle.loads(pickle.dumps(t))
    assert type(back) is Array and np.array_equal(back, TABLE)
    assert type(t + 1.0) is Array and type(np.sin(t)) is Array and type(t[1:]) is Array
    np.testing.assert_array_equal(np.linalg.inv(fnp.eye(2) * 2.0), np.eye(2) / 2)
    assert type(t[1, 2]) is np.float64 and float(t[1, 2]) == TABLE[1, 2]
    assert np.array_equal(np.concatenate([t, TABLE]), np.concatenate([TABLE, TABLE]))
    u = t.copy()
    u[0, 0] = 100.0  # numpy's own in-place assignment still works on a concrete array
    assert u[0, 0] == 100.0 and t[0, 0] == TABLE[0, 0]
    assert t.block_until_ready() is t and t.device == ft.devices()[0]


def test_plain_numpy_inputs_keep_working():
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(ft.jit(lambda x: fnp.sin(x) * x)(x), np.sin(x) * x)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.sin(x)))(x), np.cos(x))
    np.testing.assert_allclose(ft.vmap(lambda r: r[1:] - r[:-1])(TABLE), np.diff(TABLE))
    np.testing.assert_allclose(fnp.add(x, x), 2 * x)
    np.testing.assert_array_equal(x, np.linspace(0.0, 1.0, 5))  # the caller's array untouched


def test_results_never_alias_inputs():
    t, x = table(), TABLE.copy()
    for out, src in [(ft.jit(lambda a: a)(t), t), (ft.jit(lambda a: a[1:])(x), x),
                     (ft.grad(lambda a: fnp.sum(a))(t), t), (fnp.array(t), t),
                     (t.at[0].set(1.0), t), (ft.vmap(lambda a: a)(t), t),
                     (lax.fori_loop(0, 0, lambda i, a: a, t), t)]:
        assert type(out) is Array
        check_owned(out, [src])


def test_arrays_as_jit_inputs_reuse_the_compiled_program():
    f = ft.jit(lambda x: x * 2.0)
    f(TABLE)
    f(table())
    assert f.trace_count == 1  # a plain array and an Array of one shape share a signature
