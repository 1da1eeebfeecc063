"""The run-time reference solutions of the Schrodinger and Allen-Cahn examples
(examples/pde_reference.py, split-step Fourier): checked against a solve on a twice finer
grid with twice the time steps, against invariants of the equations, and against closed
forms of their split parts."""

import importlib.util
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location(
    "pde_reference_example", os.path.join(ROOT, "examples", "pde_reference.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_schrodinger_agrees_with_a_finer_solve():
    # coarse grid: only the first 41 of Raissi's 201 times, to keep the test short
    t, x, h = ref.schrodinger(n_t=41, t_end=np.pi / 2 * 40 / 200)
    t2, x2, h2 = ref.schrodinger(n_t=41, t_end=np.pi / 2 * 40 / 200, refine=4,
                                 steps_per_out=400)
    assert np.array_equal(x, x2) and x.shape == (256,) and x[0] == -5.0
    assert _rel(np.abs(h), np.abs(h2)) < 1e-5          # far below the 1.97e-3 target
    assert np.allclose(np.abs(h[0]), 2 / np.cosh(x))


def test_schrodinger_conserves_mass_and_keeps_the_one_soliton_shape():
    t, x, h = ref.schrodinger(n_t=21, t_end=0.3, refine=1)     # every grid point kept
    mass = np.sum(np.abs(h) ** 2, axis=1) * (x[1] - x[0])
    assert np.allclose(mass, mass[0], rtol=1e-10)       # both split flows are unitary
    # h(0, x) = sech(x) alone is the standing soliton sech(x) exp(i t / 2)
    t, x, h = ref.schrodinger(n_t=11, t_end=1.0)
    one = ref._strang((1 / np.cosh(np.linspace(-15, 15, 513)[:-1])).astype(complex), 30.0,
                      t, 200, lambda k, dt: np.exp(-0.5j * k * k * dt),
                      lambda h, tau: h * np.exp(1j * np.abs(h) ** 2 * tau))
    xs = np.linspace(-15, 15, 513)[:-1]
    exact = np.exp(0.5j * t[:, None]) / np.cosh(xs)
    assert np.max(np.abs(one - exact)) < 1e-6


def test_allen_cahn_agrees_with_a_finer_solve():
    t, x, u = ref.allen_cahn(n_t=21, t_end=1.0, steps_per_out=500)
    t2, x2, u2 = ref.allen_cahn(n_t=21, t_end=1.0, refine=8, steps_per_out=1000)
    assert np.array_equal(x, x2) and x.shape == (512,) and x[0] == -1.0
    assert _rel(u, u2) < 1e-5                           # far below the 1e-3 target
    assert np.allclose(u[0], x * x * np.cos(np.pi * x))
    assert np.all(np.abs(u) <= 1.0 + 1e-9)             # the maximum principle


def test_allen_cahn_without_diffusion_is_the_logistic_flow():
    # eps = 0: each point follows u' = 5 (u - u^3) exactly; closed form u^2 logistic
    t, x, u = ref.allen_cahn(n_x=8, n_t=6, refine=1, steps_per_out=7, eps=0.0)
    t = t[:, None]
    x0 = x * x * np.cos(np.pi * x)
    exact = x0 / np.sqrt(x0 ** 2 + (1 - x0 ** 2) * np.exp(-10 * t))
    assert np.allclose(u, exact, rtol=1e-12, atol=1e-12)   # FFT rounding at the zeros
