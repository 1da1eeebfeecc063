"""torch.nn.utils: gradient clipping and parameter/vector conversion."""

from functrans.torch.nn.utils.clip_grad import (  # noqa: F401
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from functrans.torch.nn.utils.convert_parameters import (  # noqa: F401
    parameters_to_vector,
    vector_to_parameters,
)

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters", "clip_grad", "convert_parameters"]
