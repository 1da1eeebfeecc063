"""Reference solutions of periodic 1-d evolution equations, computed at run time by the
split-step Fourier method (numpy FFT only): the nonlinear Schrodinger equation and the
Allen-Cahn equation of the PINN examples. No data is downloaded.

Each equation is split into a linear part, solved exactly in Fourier space, and a pointwise
nonlinear part, solved exactly in closed form; Strang splitting (half nonlinear step, full
linear step, half nonlinear step) is second order in the time step, and the Fourier
discretisation is spectrally accurate in x for smooth periodic solutions.
"""

from __future__ import annotations

import numpy as np


def _strang(h0, length, t_out, steps_per_out, linear_factor, nonlinear):
    """Strang splitting from h0 (on a periodic grid of the given length) to the times t_out
    (t_out[0] = 0, evenly spaced); returns the solution at each, stacked (len(t_out), n)."""
    n = h0.size
    dt = (t_out[1] - t_out[0]) / steps_per_out
    k = 2 * np.pi * np.fft.fftfreq(n, d=length / n)
    lin = linear_factor(k, dt)
    h = h0.copy()
    out = [h.copy()]
    for _ in range(len(t_out) - 1):
        h = nonlinear(h, dt / 2)
        for s in range(steps_per_out):
            h = np.fft.ifft(lin * np.fft.fft(h))
            h = nonlinear(h, dt if s < steps_per_out - 1 else dt / 2)
        out.append(h.copy())
    return np.stack(out)


def schrodinger(n_x=256, n_t=201, *, refine=2, steps_per_out=200, t_end=np.pi / 2):
    """i h_t + 0.5 h_xx + |h|^2 h = 0 on x in [-5, 5) periodic, h(0, x) = 2 sech(x), at n_t
    times in [0, t_end]: returns (t, x, h) with h complex of shape (n_t, n_x), solved on a
    grid `refine` times finer than the n_x points returned.

    Linear part: h^(k) times exp(-i k^2 dt / 2); nonlinear part: |h| is constant along
    h_t = i |h|^2 h, so h times exp(i |h|^2 dt)."""
    x = np.linspace(-5.0, 5.0, n_x * refine + 1)[:-1]
    t = np.linspace(0.0, t_end, n_t)
    h0 = (2.0 / np.cosh(x)).astype(np.complex128)
    h = _strang(h0, 10.0, t, steps_per_out,
                lambda k, dt: np.exp(-0.5j * k * k * dt),
                lambda h, tau: h * np.exp(1j * np.abs(h) ** 2 * tau))
    return t, x[::refine], h[:, ::refine]


def allen_cahn(n_x=512, n_t=201, *, refine=4, steps_per_out=50, t_end=1.0, eps=1e-4,
               gamma=5.0):
    """u_t - eps u_xx + gamma (u^3 - u) = 0 on x in [-1, 1) periodic, u(0, x) = x^2 cos(pi x),
    at n_t times in [0, t_end]: returns (t, x, u), u of shape (n_t, n_x), solved on a grid
    `refine` times finer than the n_x points returned (u_x jumps at x = +-1 at t = 0, and the
    interfaces are about sqrt(eps / gamma) wide).

    Linear part: u^(k) times exp(-eps k^2 dt); nonlinear part: w = u^2 solves the logistic
    equation w' = 2 gamma w (1 - w), so u(tau) = u / sqrt(u^2 + (1 - u^2) exp(-2 gamma tau))."""
    x = np.linspace(-1.0, 1.0, n_x * refine + 1)[:-1]
    t = np.linspace(0.0, t_end, n_t)
    u0 = x * x * np.cos(np.pi * x)
    u = _strang(u0.astype(np.complex128), 2.0, t, steps_per_out,
                lambda k, dt: np.exp(-eps * k * k * dt),
                lambda u, tau: u / np.sqrt(u * u + (1 - u * u) * np.exp(-2 * gamma * tau)))
    return t, x[::refine], u.real[:, ::refine]
