"""JAX's example libraries, for the research code written against them: `optimizers` (the
`init_fun, update_fun, get_params` triples of jax.example_libraries.optimizers) and `stax`
(jax.example_libraries.stax's `(init_fun, apply_fun)` layers). Same names, same semantics and,
for the same key and inputs, the same values as JAX's.

>>> from functrans.example_libraries import optimizers, stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(3), stax.Tanh, stax.Dense(1))
>>> opt_init, opt_update, get_params = optimizers.adam(1e-3)
"""

__all__ = ["optimizers", "stax"]
