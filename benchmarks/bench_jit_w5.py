"""W5: gradient of sum(chain(x)), a chain of 200 elementwise ops (sin, multiply by 1.0001,
add 0.1, repeated in that order) on a length-16 float64 vector: per-op overhead.

Contenders: functrans jit(grad) and eager grad, a hand-written numpy forward + backward of the
same chain, PyTorch eager, JAX jit(grad) and HIPS autograd when installed. One thread.
Targets: jit(grad) within 1.3x of hand-written numpy, faster than PyTorch eager and autograd.

    python benchmarks/bench_jit_w5.py [--rounds 15] [--ops 200]
"""

from __future__ import annotations

import argparse

import bench_jit_common as common  # noqa: I001  (sets thread variables before numpy loads)
import numpy as np

SIZE = 16


def chain_with(sin, n_ops):
    def chain(x):
        for i in range(n_ops):
            k = i % 3
            if k == 0:
                x = sin(x)
            elif k == 1:
                x = x * 1.0001
            else:
                x = x + 0.1
        return x
    return chain


def numpy_forward_backward(x, n_ops):
    """The chain forward, keeping the inputs of sin, then its derivative backwards."""
    sin_inputs = []
    h = x
    for i in range(n_ops):
        k = i % 3
        if k == 0:
            sin_inputs.append(h)
            h = np.sin(h)
        elif k == 1:
            h = h * 1.0001
        else:
            h = h + 0.1
    value = h.sum()
    g = np.ones_like(h)
    for i in range(n_ops - 1, -1, -1):
        k = i % 3
        if k == 0:
            g = g * np.cos(sin_inputs.pop())
        elif k == 1:
            g = g * 1.0001
    return value, g


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--ops", type=int, default=200)
    args = p.parse_args(argv)
    n_ops = args.ops

    import functrans as ft
    import functrans.numpy as fnp
    from functrans.transforms.jit import jit

    x = np.linspace(0.0, 1.0, SIZE)
    _, ref = numpy_forward_backward(x, n_ops)
    chain = chain_with(fnp.sin, n_ops)

    def loss(x):
        return fnp.sum(chain(x))

    jit_grad = jit(ft.grad(loss))
    eager_grad = ft.grad(loss)
    grad_of_jit = ft.grad(jit(loss))
    common.assert_close("functrans jit(grad)", [jit_grad(x)], [ref])
    common.assert_close("functrans grad", [eager_grad(x)], [ref])
    low = jit_grad.lower(x)

    jit_grad_numpy = jit(ft.grad(loss), backend="numpy")
    contenders = {
        "numpy hand-written forward+backward": lambda: numpy_forward_backward(x, n_ops),
        "functrans jit(grad)": lambda: jit_grad(x),
        "functrans jit(grad), numpy backend": lambda: jit_grad_numpy(x),
        "functrans grad (eager)": lambda: eager_grad(x),
        "functrans grad(jit(f))": lambda: grad_of_jit(x),
    }
    torch = common.optional_torch()
    if torch is not None:
        tchain = chain_with(torch.sin, n_ops)
        tx = torch.tensor(x, requires_grad=True)

        def torch_grad():
            return torch.autograd.grad(tchain(tx).sum(), tx)[0]

        common.assert_close("torch", [torch_grad().numpy()], [ref])
        contenders["PyTorch eager (autograd.grad)"] = torch_grad
    jax = common.optional_jax()
    if jax is not None:
        import jax.numpy as jnp
        jchain = chain_with(jnp.sin, n_ops)
        jg = jax.jit(jax.grad(lambda x: jnp.sum(jchain(x))))
        jx = jnp.asarray(x)
        common.assert_close("jax", [np.asarray(jg(jx))], [ref])
        contenders["JAX jit(grad) (XLA)"] = lambda: jax.block_until_ready(jg(jx))
    autograd = common.optional_autograd()
    if autograd is not None:
        import autograd.numpy as anp
        achain = chain_with(anp.sin, n_ops)
        ag = autograd.grad(lambda x: anp.sum(achain(x)))
        common.assert_close("autograd", [ag(x)], [ref])
        contenders["HIPS autograd grad"] = lambda: ag(x)

    medians = common.time_interleaved(contenders, rounds=args.rounds)
    common.print_table(f"W5: grad of sum of a chain of {n_ops} elementwise ops on float64[{SIZE}],"
                       " 1 thread", medians, "numpy hand-written forward+backward")
    hand = medians["numpy hand-written forward+backward"]
    print("\nper chain op: " + ", ".join(f"{k} {t / n_ops * 1e6:.2f} us"
                                         for k, t in medians.items()))
    print(f"jit(grad) / hand-written = {medians['functrans jit(grad)'] / hand:.2f}  "
          "(target <= 1.30)")
    for other in ("PyTorch eager (autograd.grad)", "HIPS autograd grad"):
        if other in medians:
            print(f"jit(grad) / {other} = "
                  f"{medians['functrans jit(grad)'] / medians[other]:.2f}  (target < 1.00)")
    print(f"jit passes: {low.stats}")
    return medians


if __name__ == "__main__":
    main()
