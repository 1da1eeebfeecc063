"""Every primitive, every rule: driven by the case table (cases_*.py).

For each case: eval_jaxpr of its traced program equals the eager result and passes the IR
checker; jvp matches central differences in float64; vjp satisfies <w, J v> == <J^T w, v>;
derivatives of the derivatives do too (order 2); vmap equals a loop over slices, with the
batch axis first and last and with unmapped arguments.
"""


import numpy as np
import pytest

import functrans as ft
from primitives.cases import all_cases
from functrans.core.ir import Literal
from functrans.core.primitive import derivative_convention
from functrans.primitives.registry import CONVENTION_RULE_KINDS, REGISTRY
from functrans.test_util import check_grads
from functrans.tree_util import tree_flatten, tree_map

CASES = all_cases()


def _close(a, b, **kw):
    for x, y in zip(tree_flatten(a)[0], tree_flatten(b)[0]):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), **kw)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_traced_program_matches_eager(case):
    args = case.sample(np.random.default_rng(0))
    closed = ft.make_jaxpr(case.fn)(*args)
    ft.check_jaxpr(closed)
    assert case.prim in {e.primitive.name for e in closed.eqns}, str(closed)
    out = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    _close(out, tree_flatten(case.fn(*args))[0], rtol=1e-12, atol=0)


@pytest.mark.parametrize("case", [c for c in CASES if c.differentiable], ids=str)
def test_derivatives_match_finite_differences(case):
    args = case.sample(np.random.default_rng(1))
    check_grads(case.fn, args, order=case.order, modes=("fwd", "rev"), atol=case.atol,
                rtol=case.rtol)


_CONVENTION_CASES = [(c, kind) for c in CASES if c.differentiable
                     for kind in CONVENTION_RULE_KINDS if kind in REGISTRY[c.prim].rules]


def test_convention_rules_have_cases():
    stated = {(n, k) for n, p in REGISTRY.items() for k in CONVENTION_RULE_KINDS if k in p.rules}
    assert stated and stated <= {(c.prim, k) for c, k in _CONVENTION_CASES}


@pytest.mark.parametrize("case,kind", _CONVENTION_CASES, ids=str)
def test_convention_rules_match_finite_differences(case, kind):
    # a row's PyTorch rule differs from its JAX rule only at points where the derivative is
    # a convention (pow at 0, atan2 at the origin): elsewhere both are the derivative
    args = case.sample(np.random.default_rng(1))
    with derivative_convention(kind.removesuffix("_jvp")):
        check_grads(case.fn, args, order=case.order, modes=("fwd", "rev"), atol=case.atol,
                    rtol=case.rtol)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap], ids=str)
@pytest.mark.parametrize("where", ["first", "last", "partly-unmapped"])
def test_vmap_matches_loop(case, where):
    rng = np.random.default_rng(2)
    size = 3
    samples = [case.sample(rng) for _ in range(size)]
    args = [np.stack([s[i] for s in samples]) for i in range(len(case.shapes))]
    in_axes = [0] * len(args)
    if where == "last":
        args = [np.moveaxis(a, 0, -1) for a in args]
        in_axes = [-1] * len(args)
    if where == "partly-unmapped" and len(args) > 1:
        args[1] = samples[0][1]
        in_axes[1] = None
    expected = []
    for k in range(size):
        ak = [a if d is None else np.take(a, k, axis=d) for a, d in zip(args, in_axes)]
        expected.append(case.fn(*ak))
    expected = tree_map(lambda *xs: np.stack(xs), *expected)
    out = ft.vmap(case.fn, in_axes=tuple(in_axes))(*args)
    _close(out, expected, rtol=1e-12, atol=1e-14)


def test_every_primitive_has_a_case():
    # primitives holding sub-programs (jit, control flow, custom rules) and effectful ones
    # (debug_print: no outputs, tests/test_debug.py) have dedicated tests
    exempt = {n for n, p in REGISTRY.items()
              if "higher_order" in p.props or "effectful" in p.facts}
    missing = set(REGISTRY) - {c.prim for c in CASES} - exempt
    assert not missing, f"primitives without a case in tests/primitives/cases_*.py: {missing}"


def test_every_primitive_row_is_complete():
    incomplete = []
    for name, prim in REGISTRY.items():
        for kind in ("jvp", "batch"):
            if kind not in prim.rules:
                incomplete.append(f"{name}: {kind}")
        if "linear" in prim.props and "transpose" not in prim.rules:
            incomplete.append(f"{name}: transpose")
        if prim.impl is None or prim.abstract_eval is None:
            incomplete.append(f"{name}: impl/abstract")
    assert not incomplete, incomplete



# --- fast_impl: the direct backend call jit emits must give the impl's bits ------------------

_FAST = {n for n, p in REGISTRY.items() if "fast_impl" in p.facts}


def _programs(case):
    """The case's traced program, unbatched and under vmap (batch axis last), with its
    arguments."""
    rng = np.random.default_rng(3)
    args = case.sample(rng)
    yield ft.make_jaxpr(case.fn)(*args), args
    if case.vmap:
        samples = [case.sample(rng) for _ in range(3)]
        batch = [np.stack([s[i] for s in samples], axis=-1) for i in range(len(args))]
        in_axes = tuple([-1] * len(batch))
        yield ft.make_jaxpr(ft.vmap(case.fn, in_axes=in_axes))(*batch), batch


def _fast_and_impl_results(closed, args, key="fast_impl"):
    """Run `closed` with the impls; for each equation whose fast_impl (or the fact `key`)
    applies, yield (primitive, impl result, its result) on the same operands."""
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))
    for eqn in closed.jaxpr.eqns:
        ins = [a.val if type(a) is Literal else env[a] for a in eqn.invars]
        out = eqn.primitive.impl(*ins, **eqn.params)
        fast = eqn.primitive.facts.get(key)
        target = fast and fast([a.aval for a in eqn.invars], [v.aval for v in eqn.outvars],
                               eqn.params)
        if target is not None:
            fn, extra, kwargs = target
            yield eqn.primitive, out, fn(*ins, *extra, **kwargs)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_fast_impls_give_the_impl_bits(case):
    for closed, args in _programs(case):
        for prim, expected, got in _fast_and_impl_results(closed, args):
            expected, got = np.asarray(expected), np.asarray(got)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), prim
            assert np.array_equal(got, expected, equal_nan=True), prim


def test_every_fast_impl_is_exercised_by_a_case():
    seen = {p.name for c in CASES for closed, args in _programs(c)
            for p, _, _ in _fast_and_impl_results(closed, args)}
    assert _FAST <= seen, f"fast_impls that no case exercises: {sorted(_FAST - seen)}"


# --- fused_impl: jit's fast backend may round differently, within the documented tolerance ---

_FUSED = {n for n, p in REGISTRY.items() if "fused_impl" in p.facts}


@pytest.mark.parametrize("case", [c for c in CASES if c.prim in _FUSED], ids=str)
def test_fused_impls_are_within_the_fast_backends_tolerance(case):
    from functrans.transforms.toolkit.kernels import TOLERANCE
    for closed, args in _programs(case):
        for prim, expected, got in _fast_and_impl_results(closed, args, "fused_impl"):
            expected, got = np.asarray(expected), np.asarray(got)
            assert (got.dtype, got.shape) == (expected.dtype, expected.shape), prim
            scale = np.abs(expected).max(initial=0.0)
            np.testing.assert_allclose(got, expected, rtol=TOLERANCE, atol=TOLERANCE * scale)


def test_every_fused_impl_is_exercised_by_a_case():
    seen = {p.name for c in CASES if c.prim in _FUSED for closed, args in _programs(c)
            for p, _, _ in _fast_and_impl_results(closed, args, "fused_impl")}
    assert _FUSED <= seen, f"fused_impls that no case exercises: {sorted(_FUSED - seen)}"
