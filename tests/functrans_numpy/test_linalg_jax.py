"""numpy.linalg and scipy.linalg programs (linalg_programs.py) against JAX: values, jacfwd,
jacrev, grad, hessian and vmap of grad equal JAX's recorded results (linalg_jax_fixtures.json,
always) and live JAX's (when installed); the same derivatives against float64 central
differences to second order; values against numpy and scipy."""

from __future__ import annotations

import json

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.test_util import check_grads
from linalg_programs import FIXTURES, GAUGE_DEPENDENT, PROGRAMS, results

RTOL = 1e-9

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)["programs"]


def _assert_close(got, want, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, JAX's {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * max(scale, 1e-12),
                               err_msg=what)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(PROGRAMS)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_equals_recorded_jax(name):
    got = results(ft, fnp, fsl, name)
    for kind, want in RECORDED[name].items():
        _assert_close(got[kind], want, f"{name} {kind}")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_equals_live_jax(name):
    pytest.importorskip("jax")
    from linalg_programs import jax_modules
    jax, jnp, jsl = jax_modules()
    want = results(jax, jnp, jsl, name)
    got = results(ft, fnp, fsl, name)
    for kind in want:
        _assert_close(got[kind], want[kind], f"{name} {kind} (live JAX)")


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - GAUGE_DEPENDENT))
def test_program_matches_central_differences(name):
    fn, x = PROGRAMS[name]
    check_grads(lambda x: fn(fnp, fsl, x), (x,), order=2, modes=("fwd", "rev"))


# values against numpy and scipy, beyond the programs' inputs

def _numpy_value(name):
    """The program run on numpy and scipy themselves, where their API is the same."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    fn, x = PROGRAMS[name]
    return fn(np, scipy_linalg, x)


# scipy's cho_factor leaves the input's entries in the unused triangle, functrans (as JAX)
# zeros: test_scipy_linalg.py compares the factor's triangle
SAME_AS_SCIPY = [n for n in sorted(PROGRAMS) if n != "cho_factor_upper"]


@pytest.mark.parametrize("name", SAME_AS_SCIPY)
def test_program_value_equals_numpy_and_scipy(name):
    fn, x = PROGRAMS[name]
    np.testing.assert_allclose(fn(fnp, fsl, x), _numpy_value(name), rtol=1e-12, atol=1e-13)
