"""W6: full Hessian of sum(tanh(A @ x)), A 100x100, float64: jit(hessian) beside the closed
form H = A^T diag(-2 t (1 - t^2)) A, t = tanh(A x).

Contenders: the closed form in numpy, functrans jit(hessian) and eager hessian, JAX
jit(hessian), PyTorch (torch.func.hessian) and HIPS autograd when installed. One thread.

    python benchmarks/bench_jit_w6.py [--rounds 11] [--n 100]
"""

from __future__ import annotations

import argparse

import bench_jit_common as common  # noqa: I001  (sets thread variables before numpy loads)
import numpy as np


def closed_form(a, x):
    t = np.tanh(a @ x)
    return (a.T * (-2.0 * t * (1.0 - t * t))) @ a


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--n", type=int, default=100)
    args = p.parse_args(argv)

    import functrans as ft
    import functrans.numpy as fnp
    from functrans.transforms.jit import jit

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.n, args.n)) / np.sqrt(args.n)
    x = rng.standard_normal(args.n)
    ref = closed_form(a, x)

    def f(x):
        return fnp.sum(fnp.tanh(a @ x))

    jit_hess = jit(ft.hessian(f))
    eager_hess = ft.hessian(f)
    common.assert_close("functrans jit(hessian)", [jit_hess(x)], [ref])
    common.assert_close("functrans hessian", [eager_hess(x)], [ref])
    low = jit_hess.lower(x)
    jit_hess_numpy = jit(ft.hessian(f), backend="numpy")
    contenders = {
        "numpy closed form": lambda: closed_form(a, x),
        "functrans jit(hessian)": lambda: jit_hess(x),
        "functrans jit(hessian), numpy backend": lambda: jit_hess_numpy(x),
        "functrans hessian (eager)": lambda: eager_hess(x),
    }
    jax = common.optional_jax()
    if jax is not None:
        import jax.numpy as jnp
        ja = jnp.asarray(a)
        jh = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(ja @ x))))
        jx = jnp.asarray(x)
        common.assert_close("jax", [np.asarray(jh(jx))], [ref])
        contenders["JAX jit(hessian) (XLA)"] = lambda: jax.block_until_ready(jh(jx))
    torch = common.optional_torch()
    if torch is not None:
        ta, tx = torch.tensor(a), torch.tensor(x)
        th = torch.func.hessian(lambda x: torch.tanh(ta @ x).sum())
        common.assert_close("torch", [th(tx).numpy()], [ref])
        contenders["PyTorch torch.func.hessian"] = lambda: th(tx)
    autograd = common.optional_autograd()
    if autograd is not None:
        import autograd.numpy as anp
        ah = autograd.hessian(lambda x: anp.sum(anp.tanh(anp.dot(a, x))))
        common.assert_close("autograd", [ah(x)], [ref])
        contenders["HIPS autograd hessian"] = lambda: ah(x)

    medians = common.time_interleaved(contenders, rounds=args.rounds)
    common.print_table(f"W6: Hessian of sum(tanh(A @ x)), A {args.n}x{args.n}, float64, "
                       "1 thread", medians, "numpy closed form")
    print(f"jit passes: {low.stats}")
    return medians


if __name__ == "__main__":
    main()
