"""functrans.random keys: the threefry2x32 hash, seeding, split, fold_in and raw bits equal to
JAX's (recorded in jax_fixtures.json, and live when JAX is installed); typed keys; keys through
jit, vmap, scan and pytrees; errors."""

import json

import numpy as np
import pytest
from jax_programs import FIXTURES, SEEDS, bits_cases

import functrans as ft
import functrans.numpy as fnp
import functrans.random as fr
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.bits import threefry2x32

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)


def _array(rec):
    return np.array(rec["values"], rec["dtype"]).reshape(rec["shape"])


def _same(got, rec):
    got = np.asarray(got)
    want = _array(rec)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, rec)
    np.testing.assert_array_equal(got, want)


# --- the hash --------------------------------------------------------------------------------

# Known-answer vectors of Threefry-2x32 (20 rounds) from the Random123 distribution
# (Salmon et al. 2011): (key, counter, expected output)
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
       ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("key, count, expected", KAT)
def test_threefry2x32_known_answers(key, count, expected):
    k1, k2, x1, x2 = (np.uint32(v) for v in (*key, *count))
    out = threefry2x32(k1, k2, np.array([x1]), np.array([x2]))
    assert [int(o[0]) for o in out] == list(expected)


# --- equality with JAX -----------------------------------------------------------------------

def test_bits_equal_jax_for_a_thousand_keys_and_shapes():
    cases = bits_cases()
    assert len(cases) == len(RECORDED["bits"]) == 1000
    for (key, shape, width), rec in zip(cases, RECORDED["bits"]):
        _same(fr.bits(np.asarray(key, np.uint32), shape, f"uint{width}"), rec)


def test_split_and_fold_in_equal_jax():
    for (key, _, _), split_rec, (data, fold_rec) in zip(
            bits_cases(), RECORDED["split"], RECORDED["fold_in"]):
        k = np.asarray(key, np.uint32)
        _same(fr.split(k, 3), split_rec)
        _same(fr.fold_in(k, data), fold_rec)
        _same(fr.fold_in(k, np.uint32(data)), fold_rec)


@pytest.mark.parametrize("seed", SEEDS)
def test_prngkey_equals_jax(seed):
    rec = RECORDED["seeds"][str(seed)]
    _same(fr.PRNGKey(seed), rec)
    _same(fr.key_data(fr.key(seed)), rec)
    _same(fr.PRNGKey(np.int64(seed)), rec)
    _same(ft.jit(fr.PRNGKey)(np.int64(seed)), rec)


def test_bits_equal_live_jax_for_a_thousand_keys_and_shapes():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr
    groups = {}
    for key, shape, width in bits_cases():   # one compiled JAX program per shape and width
        groups.setdefault((shape, width), []).append(key)
    assert sum(len(keys) for keys in groups.values()) == 1000
    for (shape, width), keys in groups.items():
        keys = np.asarray(keys, np.uint32)
        want = np.asarray(jax.jit(jax.vmap(lambda k: jr.bits(k, shape, f"uint{width}")))(keys))
        got = np.stack([fr.bits(k, shape, f"uint{width}") for k in keys])
        np.testing.assert_array_equal(got, want, err_msg=f"shape={shape} width={width}")


def test_live_bits_split_fold_in_equal_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jr
    rng = np.random.default_rng(11)
    for _ in range(6):   # each new shape compiles in JAX: a few, beside the recorded 1000
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        shape = tuple(int(d) for d in rng.integers(1, 30, rng.integers(0, 3)))
        for width in (8, 16, 32, 64):
            np.testing.assert_array_equal(fr.bits(key, shape, f"uint{width}"),
                                          np.asarray(jr.bits(key, shape, f"uint{width}")))
        np.testing.assert_array_equal(fr.split(key, shape), np.asarray(jr.split(key, shape)))
        data = int(rng.integers(0, 2**32))
        np.testing.assert_array_equal(fr.fold_in(key, data), np.asarray(jr.fold_in(key, data)))
    for seed in (3, -3, 2**33 + 1):
        np.testing.assert_array_equal(fr.PRNGKey(seed), np.asarray(jr.PRNGKey(seed)))
        np.testing.assert_array_equal(fr.key_data(fr.key(seed)),
                                      np.asarray(jr.key_data(jr.key(seed))))


# --- typed keys ------------------------------------------------------------------------------

def test_typed_keys_have_key_shapes_and_round_trip():
    k = fr.key(42)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    np.testing.assert_array_equal(fr.key_data(k), fr.PRNGKey(42))
    keys = fr.split(k, (2, 3))
    assert isinstance(keys, fr.KeyArray) and keys.shape == (2, 3)
    assert fr.key_data(keys).shape == (2, 3, 2)
    assert keys[1, 2].shape == () and len(keys) == 2 and [x.shape for x in keys] == [(3,)] * 2
    again = fr.wrap_key_data(fr.key_data(keys))
    assert bool(fnp.all(again == keys)) and not bool(fnp.any(again != keys))
    # a typed key gives the draws of its raw data
    np.testing.assert_array_equal(fr.normal(keys[0, 1], (3,)),
                                  fr.normal(fr.key_data(keys)[0, 1], (3,)))
    assert fr.key_impl(k) == "threefry2x32"
    # key data is a copy both ways: changing the caller's array leaves the key alone
    raw = np.array([1, 2], np.uint32)
    wrapped = fr.wrap_key_data(raw)
    raw[0] = 9
    out = fr.key_data(wrapped)
    assert out.tolist() == [1, 2] and not np.shares_memory(out, fr.key_data(wrapped))


def test_keys_pass_through_jit_vmap_scan_and_pytrees():
    for k in (fr.PRNGKey(5), fr.key(5)):
        def draw(k):
            return fr.uniform(k, (3,))

        np.testing.assert_array_equal(ft.jit(draw)(k), draw(k))
        ks = fr.split(k, 4)
        np.testing.assert_array_equal(ft.vmap(draw)(ks), np.stack([draw(x) for x in ks]))
        # splitting inside jit returns keys of the same kind
        k1, k2 = ft.jit(fr.split)(k)
        assert type(k1) is type(k)

        def step(carry, _):
            carry, sub = fr.split(carry)
            return carry, fr.normal(sub)

        last, draws = ft.lax.scan(step, k, None, length=4)
        carry, expected = k, []
        for _ in range(4):
            carry, sub = fr.split(carry)
            expected.append(fr.normal(sub))
        np.testing.assert_array_equal(draws, np.array(expected))
        np.testing.assert_array_equal(fr.key_data(last), fr.key_data(carry))
        leaves, tree = ft.tree_util.tree_flatten({"k": k, "w": 1.0})
        assert len(leaves) == 2
        back = ft.tree_util.tree_unflatten(tree, leaves)["k"]
        np.testing.assert_array_equal(fr.key_data(back), fr.key_data(k))
        # fold_in under vmap over the data
        np.testing.assert_array_equal(
            fr.key_data(ft.vmap(lambda i: fr.fold_in(k, i))(np.arange(3))),
            np.stack([fr.key_data(fr.fold_in(k, i)) for i in range(3)]))


def _key_program(jax, random, jnp):
    """Keys through scan (split per step), vmap over a pytree holding a batch of keys, and grad
    of a loss that takes a key beside its parameters; the same on either library."""
    def step(carry, _):
        carry, sub = random.split(carry)
        return carry, random.normal(sub, (2,))

    def loss(w, key):
        return jnp.sum(w * random.normal(key, (3,)) ** 2)

    def run(seed):
        key = random.PRNGKey(seed)
        last, draws = jax.lax.scan(step, key, None, length=5)
        batch = {"k": random.split(last, 3), "x": jnp.arange(3.0)}
        per = jax.vmap(lambda t: t["x"] * random.uniform(t["k"]))(batch)
        g = jax.jit(jax.grad(loss))(jnp.ones(3), last)
        return draws, per, g
    return run


def test_keys_through_scan_vmap_pytrees_and_grad_equal_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import functrans.numpy as fnp
    for seed in (0, 7, 2**31 + 3):
        ours = _key_program(ft, fr, fnp)(seed)
        theirs = _key_program(jax, jax.random, jnp)(seed)
        for got, want in zip(ours, theirs):
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-15, atol=0)  # normal: 2 ulp


# --- errors ----------------------------------------------------------------------------------

def test_batched_key_to_a_sampler_names_vmap():
    with pytest.raises(ShapeError, match="functrans.vmap"):
        fr.normal(fr.split(fr.PRNGKey(0), 3))
    with pytest.raises(ShapeError, match="single key"):
        fr.split(fr.split(fr.key(0)))


def test_non_keys_and_bad_seeds_are_refused():
    with pytest.raises(DTypeError, match="PRNGKey"):
        fr.uniform(np.array([0, 1]))
    with pytest.raises(TypeError, match="integer"):
        fr.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        fr.PRNGKey(np.array([1, 2]))
    with pytest.raises(DTypeError, match="unsigned"):
        fr.bits(fr.PRNGKey(0), (2,), np.int32)
    with pytest.raises(ValueError, match="threefry2x32"):
        fr.key(0, impl="rbg")
