"""torch.utils.checkpoint: trade compute for memory by recomputing a function in backward.

`checkpoint(fn, *args, use_reentrant=True)` is PyTorch's reentrant algorithm: the forward runs
under `no_grad` (no activations kept), and the backward recomputes `fn` with grad enabled from
the saved inputs, with the random generator restored to its forward state, then backpropagates
through the recomputation. As in PyTorch, gradients reach the inputs and the leaves `fn` closes
over (a model's parameters), but only through `backward()`, not `autograd.grad`.

`use_reentrant=False` keeps `fn`'s graph as an ordinary call would (the same values and
gradients, `autograd.grad` and keyword arguments supported); functrans does not recompute it,
so it saves no memory. For the same reason `early_stop=` and `set_checkpoint_early_stop`,
which in PyTorch decide whether that recomputation stops once the saved tensors are rebuilt,
are accepted and change nothing: there is no recomputation to stop (`fn` runs once, in forward).
"""

from __future__ import annotations

import contextlib
import warnings

from functrans.torch._creation import default_generator
from functrans.torch._grad_mode import enable_grad, no_grad
from functrans.torch._tensor import Tensor
from functrans.torch.autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential", "set_checkpoint_early_stop"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward by recomputation."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = default_generator.get_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from functrans.torch.autograd import backward as run_backward
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        state = default_generator.get_state() if ctx.preserve_rng_state else None
        try:
            if state is not None:
                default_generator.set_state(ctx.fwd_rng_state)
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if state is not None:
                default_generator.set_state(state)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        run_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in inputs)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs):
    """Run `function(*args)` without keeping its activations; recompute them in backward.

    >>> import functrans.torch as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = torch.utils.checkpoint.checkpoint(torch.sin, x, use_reentrant=True)
    >>> y.sum().backward()
    >>> x.grad
    tensor([ 0.5403, -0.4161])
    """
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    if context_fn is not None:
        with_contexts = context_fn()
        with with_contexts[0]:
            return function(*args, **kwargs)
    return function(*args, **kwargs)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """PyTorch's switch for stopping a non-reentrant checkpoint's recomputation early.

    Accepted for code that sets it; functrans keeps a non-reentrant checkpoint's graph and
    never recomputes it, so there is nothing for the switch to stop (see the module notes).
    """
    yield


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules/functions in `segments` checkpointed chunks (the last chunk
    runs normally, as in PyTorch)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and not isinstance(functions, list | tuple):
        functions = list(functions.children())
    functions = list(functions)

    def run_segment(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_segment(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_segment(end + 1, len(functions) - 1)(input)
