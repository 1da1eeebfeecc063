"""jax.example_libraries.stax: neural-network layers as `(init_fun, apply_fun)` pairs.

`init_fun(rng, input_shape) -> (output_shape, params)` draws the parameters from a
functrans.random key exactly as JAX's stax draws them from a jax.random key (the same splits,
the same initialisers), so the same key gives JAX's weights; `apply_fun(params, inputs,
**kwargs)` runs the layer. Combinators (`serial`, `parallel`, `FanOut`, ...) build networks
from layers. Convolutions and pooling are functrans.lax's conv_general_dilated and
reduce_window (strided slices, pads and one dot_general; no convolution primitive), so their
values agree with JAX's to rounding, not bit for bit.

>>> import numpy as np
>>> import functrans as ft
>>> from functrans.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(1))
>>> out_shape, params = init_fun(ft.random.PRNGKey(0), (-1, 3))
>>> out_shape, apply_fun(params, np.ones((2, 3))).shape
((-1, 1), (2, 1))
"""

from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans import random
from functrans.convolution import (conv_general_dilated, conv_general_shape_tuple,
                                   reduce_window, reduce_window_shape_tuple)
from functrans.core.ownership import owned
from functrans.errors import ArgumentError
from functrans.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                          softplus, standardize)
from functrans.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp",
           "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu",
           "MaxPool", "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum",
           "FanInConcat", "Dropout", "serial", "parallel", "shape_dependent"]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b, W (in, out) from W_init, b (out,) from
    b_init, drawn from the two halves of one split of the key."""
    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.add(fnp.dot(inputs, W), b)

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution with the layouts `dimension_numbers` = (lhs_spec, rhs_spec, out_spec),
    e.g. ('NHWC', 'HWIO', 'NHWC'); padding 'VALID', 'SAME' or (low, high) pairs."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else
                        input_shape[lhs_spec.index("C")] if c == "I" else
                        next(filter_shape_iter) for c in rhs_spec]
        output_shape = conv_general_shape_tuple(input_shape, kernel_shape, strides, padding,
                                                dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.add(conv_general_dilated(inputs, W, strides, padding,
                                            dimension_numbers=dimension_numbers), b)

    return init_fun, apply_fun


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
         b_init=normal(1e-6)):
    """A 2-D convolution on NHWC inputs with HWIO filters: GeneralConv with
    ('NHWC', 'HWIO', 'NHWC')."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Standardises over `axis` (the batch statistics), then scales by gamma and shifts by
    beta."""
    _beta_init = lambda rng, shape: beta_init(rng, shape) if center else ()  # noqa: E731
    _gamma_init = lambda rng, shape: gamma_init(rng, shape) if scale else ()  # noqa: E731
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (_beta_init(k1, shape), _gamma_init(k2, shape))

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return fnp.add(fnp.multiply(gamma[ed], z), beta[ed])
        if center:
            return fnp.add(z, beta[ed])
        if scale:
            return fnp.multiply(gamma[ed], z)
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over window_shape (spatial dimensions; inputs NHWC unless spec)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial_axes = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            return reduce_window_shape_tuple(input_shape, window_shape, strides, padding), ()

        def apply_fun(params, inputs, **kwargs):
            out = reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        non_spatial_axes = (0, fnp.ndim(inputs) - 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(fnp.ndim(inputs))
                              if i not in non_spatial_axes)
        one = fnp.ones(spatial_shape, dtype=fnp.result_type(inputs))
        window_sizes = reduce_window(one, 0.0, fnp.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = fnp.expand_dims(window_sizes, i)
        return fnp.divide(outputs, window_sizes)
    return rescale


MaxPool = _pooling_layer(fnp.maximum, -math.inf)
SumPool = _pooling_layer(fnp.add, 0.0)
AvgPool = _pooling_layer(fnp.add, 0.0, _normalize_by_window_size)


def _flatten():
    """Flattens all but the leading (batch) dimension."""
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    """Hands its input on."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: owned(inputs, inputs))


Identity = _identity()


def FanOut(num):
    """Copies its input into a list of `num` (for parallel branches)."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [owned(inputs, inputs) for _ in range(num)])


def _fan_in_sum():
    """Sums a list of inputs."""
    return (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """Concatenates a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return fnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keeps each input with probability `rate` (scaled by 1/rate) in mode 'train', given a
    key as apply_fun(params, inputs, rng=key); the identity otherwise. (JAX's stax calls the
    keep probability `rate`.)"""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ArgumentError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng)` where `rng` is a PRNG key (e.g. from "
                "`functrans.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return fnp.where(keep, fnp.divide(inputs, rate), 0)
        return owned(inputs, inputs)

    return init_fun, apply_fun


def serial(*layers):
    """Layers one after another; each draws its parameters from its own split of the key."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side, the i-th applied to the i-th of a list of inputs (use with FanOut
    and FanInSum / FanInConcat)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by the input shape: make_layer(input_shape) -> (init_fun, apply_fun)."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
