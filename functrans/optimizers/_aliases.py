"""The common optimisers, each built as optax builds it: a chain of gradient transformations
ending in the (negative) learning rate, which may be a number or a schedule."""

from __future__ import annotations

from functrans.errors import ArgumentError
from functrans.optimizers._base import GradientTransformationExtraArgs, Schedule, chain, identity
from functrans.optimizers._transforms import (add_decayed_weights, scale, scale_by_adam,
                                              scale_by_lbfgs, scale_by_learning_rate,
                                              scale_by_rms, scale_by_rss, scale_by_stddev,
                                              trace)


def sgd(learning_rate: float | Schedule, momentum: float | None = None, nesterov: bool = False,
        accumulator_dtype=None) -> GradientTransformationExtraArgs:
    """Stochastic gradient descent, with (Nesterov) momentum when `momentum` is given.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.sgd(0.1, momentum=0.9)
    >>> updates, state = opt.update(np.array([1.0]), opt.init(np.zeros(1)))
    >>> opt.update(np.array([1.0]), state)[0]
    array([-0.19])
    """
    momentum_tx = identity() if momentum is None else trace(momentum, nesterov,
                                                            accumulator_dtype)
    return chain(momentum_tx, scale_by_learning_rate(learning_rate))


def adam(learning_rate: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
         eps_root: float = 0.0, mu_dtype=None, *, nesterov: bool = False
         ) -> GradientTransformationExtraArgs:
    """Adam (Kingma and Ba), bias-corrected; NAdam with nesterov=True.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.adam(0.1)
    >>> params = {"w": np.array([1.0, -2.0])}
    >>> updates, state = opt.update({"w": np.array([0.5, -0.5])}, opt.init(params), params)
    >>> optim.apply_updates(params, updates)["w"].round(6).tolist()
    [0.9, -1.9]
    """
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def adamw(learning_rate: float | Schedule, b1: float = 0.9, b2: float = 0.999,
          eps: float = 1e-8, eps_root: float = 0.0, mu_dtype=None,
          weight_decay: float | Schedule = 1e-4, mask=None, *, nesterov: bool = False
          ) -> GradientTransformationExtraArgs:
    """Adam with decoupled weight decay: the step is lr * (adam direction + weight_decay *
    params); `mask` (a tree of booleans or a function of the parameters) picks the decayed
    leaves. update needs the parameters.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.adamw(0.1, weight_decay=0.5, eps=0.0)
    >>> p = np.array([2.0])
    >>> opt.update(np.array([3.0]), opt.init(p), p)[0].round(12)
    array([-0.2])
    """
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate: float | Schedule, decay: float = 0.9, eps: float = 1e-8,
            initial_scale: float = 0.0, eps_in_sqrt: bool = True, centered: bool = False,
            momentum: float | None = None, nesterov: bool = False,
            bias_correction: bool = False) -> GradientTransformationExtraArgs:
    """RMSProp: divides by the root of the moving average of squared gradients (of their
    variance, when centered), then optional momentum. eps sits inside the root by default, as
    in optax (PyTorch's RMSprop is eps_in_sqrt=False).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.rmsprop(0.1, decay=0.75, eps=0.0)
    >>> opt.update(np.array([2.0]), opt.init(np.zeros(1)))[0]
    array([-0.2])
    """
    scaling = (scale_by_stddev if centered else scale_by_rms)(
        decay, eps, initial_scale, eps_in_sqrt, bias_correction)
    return chain(scaling, scale_by_learning_rate(learning_rate),
                 identity() if momentum is None else trace(momentum, nesterov))


def adagrad(learning_rate: float | Schedule, initial_accumulator_value: float = 0.1,
            eps: float = 1e-7) -> GradientTransformationExtraArgs:
    """Adagrad: divides by the root of the sum of all squared gradients so far.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.adagrad(0.1, initial_accumulator_value=0.0, eps=0.0)
    >>> opt.update(np.array([-3.0]), opt.init(np.zeros(1)))[0]
    array([0.1])
    """
    return chain(scale_by_rss(initial_accumulator_value, eps),
                 scale_by_learning_rate(learning_rate))


_ZOOM = "zoom"  # optax's default line search, which functrans does not have yet


def lbfgs(learning_rate: float | Schedule | None = None, memory_size: int = 10,
          scale_init_precond: bool = True, linesearch=_ZOOM) -> GradientTransformationExtraArgs:
    """L-BFGS as optax.lbfgs builds it: scale_by_lbfgs, then the learning rate (or -1), then
    the line search. Only `linesearch=None` is available: optax's default zoom line search
    (which evaluates the loss inside `update`) is not here yet, so the default raises rather
    than running another algorithm; for L-BFGS with a line search use `minimize_lbfgs`.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> opt = optim.lbfgs(learning_rate=0.5, linesearch=None)
    >>> p = np.array([3.0, 4.0])
    >>> opt.update(p, opt.init(p), p)[0]
    array([-0.3, -0.4])
    """
    if linesearch is _ZOOM:
        raise ArgumentError(
            "lbfgs: optax's zoom line search (the default) is not available in functrans yet. "
            "Pass linesearch=None with a learning_rate for L-BFGS steps without a line search, "
            "or use functrans.optimizers.minimize_lbfgs (scipy's L-BFGS-B, with its line "
            "search).")
    base_scaling = scale(-1.0) if learning_rate is None else \
        scale_by_learning_rate(learning_rate)
    return chain(scale_by_lbfgs(memory_size, scale_init_precond), base_scaling,
                 identity() if linesearch is None else linesearch)
