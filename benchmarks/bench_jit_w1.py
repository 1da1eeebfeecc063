"""W1: gradient of mean((MLP(x) - y)^2), MLP 2-64-64-64-1 with tanh, 1,024 points, float64.

Contenders: functrans jit(grad) and eager grad, a hand-written numpy backprop of the same
network, the numpy forward pass alone (the unit of the ratios in the issue), PyTorch eager,
JAX jit(grad) and HIPS autograd when installed. One thread everywhere.
Targets: jit(grad) <= 1.1x hand-written numpy; eager grad faster than HIPS autograd.

    python benchmarks/bench_jit_w1.py [--rounds 15]
"""

from __future__ import annotations

import argparse

import bench_jit_common as common  # noqa: I001  (sets thread variables before numpy loads)
import numpy as np

SIZES = (2, 64, 64, 64, 1)
N_POINTS = 1024


def make_problem(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n))
              for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = rng.uniform(-1.0, 1.0, (N_POINTS, SIZES[0]))
    y = np.sin(3.0 * x[:, :1]) * np.cos(2.0 * x[:, 1:])
    return params, x, y


# --- hand-written numpy -----------------------------------------------------------------------

def numpy_forward(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    d = h @ w + b - y
    return np.mean(d * d)


def numpy_backprop(params, x, y):
    """Forward keeping the activations, then the chain rule layer by layer."""
    hs = [x]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w + b))
    w, b = params[-1]
    d = hs[-1] @ w + b - y
    g = d * (2.0 / d.size)                      # d loss / d out
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        h = hs[i]
        grads.append((h.T @ g, g.sum(axis=0)))
        if i:
            g = (g @ w.T) * (1.0 - h * h)       # through tanh: 1 - tanh^2
    return grads[::-1]


# --- functrans --------------------------------------------------------------------------------

def functrans_loss():
    import functrans.numpy as fnp

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = fnp.tanh(h @ w + b)
        w, b = params[-1]
        d = h @ w + b - y
        return fnp.mean(d * d)

    return loss


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)

    import functrans as ft
    from functrans.transforms.jit import jit

    params, x, y = make_problem()
    reference = numpy_backprop(params, x, y)
    flat_ref = [a for pair in reference for a in pair]

    loss = functrans_loss()
    jit_grad = jit(ft.grad(loss))
    eager_grad = ft.grad(loss)
    grad_of_jit = ft.grad(jit(loss))
    common.assert_close("functrans jit(grad)",
                        [a for pair in jit_grad(params, x, y) for a in pair], flat_ref)
    common.assert_close("functrans grad",
                        [a for pair in eager_grad(params, x, y) for a in pair], flat_ref)
    low = jit_grad.lower(params, x, y)

    jit_grad_numpy = jit(ft.grad(loss), backend="numpy")
    contenders = {
        "numpy forward pass only": lambda: numpy_forward(params, x, y),
        "numpy hand-written backprop": lambda: numpy_backprop(params, x, y),
        "functrans jit(grad)": lambda: jit_grad(params, x, y),
        "functrans jit(grad), numpy backend": lambda: jit_grad_numpy(params, x, y),
        "functrans grad (eager)": lambda: eager_grad(params, x, y),
        "functrans grad(jit(f))": lambda: grad_of_jit(params, x, y),
    }
    notes = {}

    torch = common.optional_torch()
    if torch is not None:
        tparams = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True))
                   for w, b in params]
        tx, ty = torch.tensor(x), torch.tensor(y)
        flat_t = [t for pair in tparams for t in pair]

        def torch_grad():
            h = tx
            for w, b in tparams[:-1]:
                h = torch.tanh(h @ w + b)
            w, b = tparams[-1]
            d = h @ w + b - ty
            return torch.autograd.grad(torch.mean(d * d), flat_t)

        common.assert_close("torch", [g.numpy() for g in torch_grad()], flat_ref)
        contenders["PyTorch eager (autograd.grad)"] = torch_grad

    jax = common.optional_jax()
    if jax is not None:
        import jax.numpy as jnp

        def jloss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = jnp.tanh(h @ w + b)
            w, b = params[-1]
            d = h @ w + b - y
            return jnp.mean(d * d)

        jg = jax.jit(jax.grad(jloss))
        jparams = jax.tree_util.tree_map(jnp.asarray, params)
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        common.assert_close("jax", [np.asarray(a) for pair in jg(jparams, jx, jy)
                                    for a in pair], flat_ref)
        contenders["JAX jit(grad) (XLA)"] = \
            lambda: jax.block_until_ready(jg(jparams, jx, jy))

    autograd = common.optional_autograd()
    if autograd is not None:
        import autograd.numpy as anp

        def aloss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = anp.tanh(anp.dot(h, w) + b)
            w, b = params[-1]
            d = anp.dot(h, w) + b - y
            return anp.mean(d * d)

        ag = autograd.grad(aloss)
        common.assert_close("autograd", [a for pair in ag(params, x, y) for a in pair],
                            flat_ref)
        contenders["HIPS autograd grad"] = lambda: ag(params, x, y)
    else:
        notes["functrans grad (eager)"] = "(HIPS autograd not installed: pip install autograd)"

    medians = common.time_interleaved(contenders, rounds=args.rounds)
    common.print_table(f"W1: grad of MSE of an MLP {'-'.join(map(str, SIZES))} (tanh) on "
                       f"{N_POINTS} points, float64, 1 thread", medians,
                       "numpy forward pass only", notes)
    hand = medians["numpy hand-written backprop"]
    jit_ratio = medians["functrans jit(grad)"] / hand
    print(f"\njit(grad) / hand-written backprop = {jit_ratio:.2f}  (target <= 1.10)")
    if "HIPS autograd grad" in medians:
        r = medians["functrans grad (eager)"] / medians["HIPS autograd grad"]
        print(f"eager grad / HIPS autograd      = {r:.2f}  (target < 1.00)")
    print(f"jit passes: {low.stats}")
    return medians


if __name__ == "__main__":
    main()
