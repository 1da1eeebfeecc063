"""Programs over numpy names added for scientific code (index tricks, shape helpers, order
statistics, calculus, logaddexp2, einsum's interleaved form, scipy.signal/integrate), run
with jax.numpy (float64 enabled) and functrans.numpy, and the record of JAX's results in
names_jax_fixtures.json, which test_names.py compares functrans against (live JAX too, when
installed). Re-record with JAX installed: `python tests/functrans_numpy/names_programs.py`.

Each program maps one float64 array to an array. Recorded per program: the value, the
Jacobian (jacrev), the Hessian of the weighted sum s(x) = sum(w * f(x)), and vmap of grad s
over two inputs, each transform under jit.
"""

from __future__ import annotations

import json
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "names_jax_fixtures.json")

_rng = np.random.default_rng(17)
VEC = _rng.normal(size=6)  # distinct values: no ties in sorts
MAT = _rng.normal(size=(3, 4))
KNOTS = np.array([-1.0, -0.2, 0.4, 1.5, 2.0])
KNOT_VALUES = np.array([0.5, -1.0, 2.0, 0.0, 1.0])
KERNEL = np.array([0.5, -1.0, 2.0])
KERNEL2 = np.array([[1.0, -0.5], [0.25, 2.0]])

# name -> (program(np-like module, scipy-like signal module, x), input)
PROGRAMS = {
    "append": (lambda np_, sig, x: np_.append(x, x[:2] * 2.0), VEC),
    "append_axis": (lambda np_, sig, x: np_.append(x, x[:1] ** 2, axis=0), MAT),
    "rot90": (lambda np_, sig, x: np_.rot90(x, 1) * np_.arange(12.0).reshape(4, 3), MAT),
    "rot90_k3": (lambda np_, sig, x: np_.rot90(x, -1, axes=(1, 0)) ** 2, MAT),
    "rollaxis": (lambda np_, sig, x: np_.rollaxis(x.reshape(3, 2, 2), 2, 0) ** 2, MAT),
    "gradient": (lambda np_, sig, x: np_.gradient(x ** 3), VEC),
    "gradient_spacing": (lambda np_, sig, x: np_.gradient(np_.sin(x), 0.5, axis=1), MAT),
    "gradient_coords": (lambda np_, sig, x: np_.gradient(x ** 2, np_.array(
        [0.0, 0.5, 1.5, 1.75, 3.0, 4.0])), VEC),
    "median": (lambda np_, sig, x: np_.median(x ** 3), VEC),
    "median_axis": (lambda np_, sig, x: np_.median(x ** 3, axis=1), MAT),
    "nanmedian": (lambda np_, sig, x: np_.nanmedian(np_.where(x > 1.0, np_.nan, x) ** 3), VEC),
    "percentile": (lambda np_, sig, x: np_.percentile(x ** 3, np_.array([10.0, 50.0, 95.0])),
                   VEC),
    "quantile_axis": (lambda np_, sig, x: np_.quantile(x, 0.3, axis=0) * x[0], MAT),
    # the entries around kth come in an order numpy and JAX need not share: only kth and sums
    "partition": (lambda np_, sig, x: np_.stack([
        (p := np_.partition(x ** 3, 2))[2], np_.sum(p[:2] ** 2), np_.sum(p[3:] ** 2)]), VEC),
    "logaddexp2": (lambda np_, sig, x: np_.logaddexp2(x, x[::-1] * 2.0), VEC),
    "einsum_sublist": (lambda np_, sig, x: np_.einsum(x, [0, 1], x, [2, 1], [0, 2]), MAT),
    "trapezoid": (lambda np_, sig, x: np_.trapezoid(x ** 2, x=np_.cumsum(np_.exp(x))), VEC),
    "interp": (lambda np_, sig, x: np_.interp(x, np_.array(KNOTS), np_.array(KNOT_VALUES) * 2.0)
               * x, VEC),
    "interp_values": (lambda np_, sig, x: np_.interp(np_.array([-2.0, 0.1, 1.0, 3.0]),
                                                     np_.array(KNOTS), x[:5] ** 2), VEC),
    "polyval": (lambda np_, sig, x: np_.polyval(x[:3], x), VEC),
    "r_": (lambda np_, sig, x: np_.r_[x, 1.0, x[:2] ** 2] * 1.5, VEC),
    "c_": (lambda np_, sig, x: np_.c_[x, x ** 2], VEC),
    "convolve_full": (lambda np_, sig, x: sig.convolve(x, x[:3] ** 2), VEC),
    "convolve_same": (lambda np_, sig, x: sig.convolve(x ** 2, np_.array(KERNEL), mode="same"),
                      VEC),
    "correlate_valid": (lambda np_, sig, x: sig.correlate(x, x[1:4], mode="valid"), VEC),
    "convolve_2d": (lambda np_, sig, x: sig.convolve(x, np_.array(KERNEL2) * x[0, 0]), MAT),
    "correlate_2d_same": (lambda np_, sig, x: sig.correlate(x ** 2, np_.array(KERNEL2),
                                                            mode="same"), MAT),
}


def weights(out_shape):
    return np.cos(np.arange(int(np.prod(out_shape)), dtype=float)).reshape(out_shape) + 1.5


def observe(t, np_, sig, name):
    """The record of one program under a transform library `t` (jax or functrans)."""
    prog, x = PROGRAMS[name]
    f = lambda v: prog(np_, sig, v)
    x = np.asarray(x)
    value = f(x)
    w = weights(np.shape(value))
    s = lambda v: np_.sum(np_.asarray(w) * f(v))
    pair = np.stack([x, x * 0.9 + 0.05])
    # the transforms run under jit: one compiled program each (JAX's op-by-op dispatch of a
    # Hessian is slow), and functrans' jit is checked on the way
    return {"value": value, "jacobian": t.jit(t.jacrev(f))(x), "hessian": t.jit(t.hessian(s))(x),
            "vmap_grad": t.jit(t.vmap(t.grad(s)))(pair)}


def listed(x):
    x = np.asarray(x)
    return {"dtype": x.dtype.name, "shape": list(x.shape), "values": x.ravel().tolist()}


def record():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.signal as jsig

    out = {"jax_version": jax.__version__, "programs": {}}
    for name in PROGRAMS:
        out["programs"][name] = {k: listed(v) for k, v in observe(jax, jnp, jsig, name).items()}
    with open(FIXTURES, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {len(PROGRAMS)} program records to {FIXTURES}")


if __name__ == "__main__":
    record()
