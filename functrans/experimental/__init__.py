"""Experimental APIs, as jax.experimental: `ode.odeint`."""

from functrans.experimental import ode  # noqa: F401

__all__ = ["ode"]
