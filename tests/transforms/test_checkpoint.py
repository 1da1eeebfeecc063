"""checkpoint (remat): same values and derivatives as without it, under every transform; the
linear program keeps only the inputs; and the peak memory of a deep MLP's gradient drops."""

import tracemalloc

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core.check import check_jaxpr
from functrans.scipy.special import expit
from functrans.test_util import check_grads
from functrans.transforms.checkpoint import checkpoint, remat
from functrans.transforms.jit.api import jit
from functrans.transforms.linearize import linearize_flat

X = np.array([0.3, -1.2, 2.0])


def sinsin(x):
    return fnp.sin(fnp.sin(x))


def sinsin_grad(x):
    return np.cos(np.sin(x)) * np.cos(x)


def test_checkpoint_keeps_values_and_derivatives():
    f = checkpoint(sinsin)
    np.testing.assert_allclose(f(X), np.sin(np.sin(X)), rtol=1e-15)
    g = ft.grad(lambda x: fnp.sum(f(x)))
    np.testing.assert_allclose(g(X), sinsin_grad(X), rtol=1e-15)
    np.testing.assert_allclose(ft.jvp(f, (X,), (np.ones(3),))[1], sinsin_grad(X), rtol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(X), sinsin_grad(X), rtol=1e-15)
    np.testing.assert_allclose(jit(g)(X), sinsin_grad(X), rtol=1e-15)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(jit(f)(x)))(X), sinsin_grad(X),
                               rtol=1e-15)
    second = -np.sin(np.sin(X)) * np.cos(X) ** 2 - np.cos(np.sin(X)) * np.sin(X)
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(f)))(X), second, rtol=1e-14)
    np.testing.assert_allclose(ft.vmap(ft.jacfwd(ft.grad(f)))(X), second, rtol=1e-14)
    check_grads(f, (X,), order=2)
    for prog in (ft.make_jaxpr(f)(X), ft.make_jaxpr(g)(X), ft.make_jaxpr(ft.vmap(g))(X[None])):
        check_jaxpr(prog)
    assert remat is checkpoint


def test_linear_program_saves_only_the_inputs():
    def residuals(fun):
        _, lin = linearize_flat(lambda x: [fun(x)], [X])
        return lin.jaxpr.consts

    plain = residuals(lambda x: fnp.sin(fnp.sin(fnp.sin(x))))
    assert len(plain) >= 3  # cos of each intermediate, at least
    saved = residuals(checkpoint(lambda x: fnp.sin(fnp.sin(fnp.sin(x)))))
    assert len(saved) == 1 and saved[0] is X


def test_checkpoint_with_pytrees_closures_kwargs_and_static_args():
    w = np.array([[0.5, -1.0], [2.0, 0.1]])

    def layer(p, h, *, scale):
        return fnp.tanh(h @ p["w"] + p["b"]) * scale

    def loss(p, h):
        f = checkpoint(layer)
        return fnp.sum(f(p, f(p, h, scale=1.5), scale=0.5) ** 2)

    def ref(p, h):
        return fnp.sum(layer(p, layer(p, h, scale=1.5), scale=0.5) ** 2)

    p, h = {"w": w, "b": np.array([0.1, -0.2])}, np.array([[1.0, 2.0], [-0.5, 0.3]])
    g, g_ref = ft.grad(loss)(p, h), ft.grad(ref)(p, h)
    np.testing.assert_allclose(g["w"], g_ref["w"], rtol=1e-14)
    np.testing.assert_allclose(g["b"], g_ref["b"], rtol=1e-14)

    # closed-over parameters are differentiated through the checkpoint too
    def closure_loss(w):
        return fnp.sum(checkpoint(lambda h: fnp.tanh(h @ w))(h))

    np.testing.assert_allclose(ft.grad(closure_loss)(w),
                               ft.grad(lambda w: fnp.sum(fnp.tanh(h @ w)))(w), rtol=1e-14)

    scaled = checkpoint(lambda k, x: fnp.sin(x) * k, static_argnums=(0,))
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(scaled(3, x)))(X), 3 * np.cos(X),
                               rtol=1e-15)
    with pytest.raises(NotImplementedError, match="policies"):
        checkpoint(sinsin, policy=lambda *a: True)


# --- memory: a 20-layer MLP ------------------------------------------------------------------

LAYERS, BATCH, WIDTH = 20, 1024, 32


def _mlp_setup():
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH), np.zeros(WIDTH))
              for _ in range(LAYERS)]
    return params, rng.standard_normal((BATCH, WIDTH))


def _mlp_loss(x, activation, segment):
    """Loss of the MLP; `segment` layers per checkpoint (0: no checkpoint)."""
    def layers(params, h):
        for w, b in params:
            h = activation(h @ w + b)
        return h

    def loss(params):
        h = x
        if not segment:
            h = layers(params, h)
        else:
            block = checkpoint(layers)
            for i in range(0, LAYERS, segment):
                h = block(params[i:i + segment], h)
        return fnp.sum(h * h)

    return loss


def _peak_of_gradient(loss, params):
    g = ft.grad(loss)
    g(params)  # warm up (import-time allocations, caches)
    tracemalloc.start()
    try:
        grads = g(params)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, grads


def silu(z):
    return z * expit(z)


@pytest.mark.parametrize("activation, segment", [(silu, 1), (fnp.tanh, 2)],
                         ids=["silu-every-layer", "tanh-every-2-layers"])
def test_checkpointing_an_mlp_cuts_peak_gradient_memory_at_least_in_half(activation, segment):
    params, x = _mlp_setup()
    peak_plain, g_plain = _peak_of_gradient(_mlp_loss(x, activation, 0), params)
    peak_ckpt, g_ckpt = _peak_of_gradient(_mlp_loss(x, activation, segment), params)
    for (gw, gb), (rw, rb) in zip(g_ckpt, g_plain):
        np.testing.assert_allclose(gw, rw, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gb, rb, rtol=1e-12, atol=1e-15)
    assert peak_plain >= 2 * peak_ckpt, (peak_plain, peak_ckpt)
