"""Transforms: interpreters over the IR (jvp, linearize, vjp/grad, vmap, jacobians, jit)."""
