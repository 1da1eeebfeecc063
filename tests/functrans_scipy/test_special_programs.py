"""functrans.scipy.special and functrans.scipy.stats against JAX: each program of
special_programs.py (value, jacfwd, jacrev, hessian, vmap of grad) against JAX's recorded
results, and against live JAX when it is installed; every program's derivatives also against
float64 central differences to second order."""

import json

import numpy as np
import pytest

from functrans.errors import ArgumentError, FunctransError
from functrans.test_util import check_grads
from special_programs import (FIXTURES, KINDS, PROGRAMS, from_json, functrans_lib, jax_has,
                              jax_lib, observe)

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)["programs"]

FT = functrans_lib()


def _compare(name, ours, theirs, kinds=KINDS):
    prog = PROGRAMS[name]
    for kind in kinds:
        if prog.instead.get(kind, kind) is None:
            continue
        mine, ref = ours[kind], theirs[prog.instead.get(kind, kind)]
        if "error" in ref:
            # JAX refuses this derivative: functrans refuses it too, with its own error
            assert "error" in mine, f"{name} {kind}: JAX raises {ref}, functrans gave a value"
            continue
        assert "error" not in mine, f"{name} {kind}: {mine}"
        a, b = from_json(mine), from_json(ref)
        assert a.shape == b.shape, (name, kind, a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=prog.rtol, atol=prog.atol,
                                   err_msg=f"{name} {kind}")


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_recorded_jax(name):
    _compare(name, observe(FT, PROGRAMS[name]), RECORDED[name])


def test_every_program_jax_can_run_is_recorded():
    # programs JAX lacks a function for (t.cdf, logistic.logcdf, ...) are checked by finite
    # differences and scipy's values only
    lib = jax_lib()
    if lib is None:
        pytest.skip("JAX is not installed (the recorded fixtures are used)")
    assert {n for n in PROGRAMS if jax_has(lib, n)} == set(RECORDED)


# against live JAX: the value and the reverse-mode Jacobian (the recorded fixtures have every
# kind; compiling JAX's hessians of all programs would take minutes)
LIVE_KINDS = ("value", "jacrev")


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_live_jax(name):
    lib = jax_lib()
    if lib is None:
        pytest.skip("JAX is not installed (the recorded fixtures are used)")
    prog = PROGRAMS[name]
    theirs = tuple({*LIVE_KINDS, *(prog.instead.get(k) or k for k in LIVE_KINDS)})
    _compare(name, observe(FT, prog, LIVE_KINDS), observe(lib, prog, theirs), LIVE_KINDS)


@pytest.mark.parametrize("name", sorted(n for n, p in PROGRAMS.items() if p.fd))
def test_derivatives_match_finite_differences(name):
    prog = PROGRAMS[name]
    f = prog.build(FT)
    check_grads(f, (np.asarray(prog.x),), order=prog.fd_order, modes=("fwd", "rev"),
                eps=prog.fd_eps, atol=1e-5, rtol=1e-5)


def test_refused_derivatives_name_the_argument():
    # where JAX defines no derivative, functrans raises a FunctransError naming the argument
    for name, kinds in (("betainc_a", ("jacfwd", "jacrev")), ("gammainc_a", ("hessian",))):
        seen = observe(FT, PROGRAMS[name])
        for kind in kinds:
            assert "error" in seen[kind], (name, kind)
            assert seen[kind]["error"] == "ArgumentError", seen[kind]
            assert "`a`" in seen[kind]["message"], seen[kind]
    assert issubclass(ArgumentError, FunctransError) and issubclass(ArgumentError, ValueError)
