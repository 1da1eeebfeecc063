"""functrans: composable function transformations (jvp, vjp/grad, vmap, jit) on numpy.

>>> import functrans as ft
>>> float(ft.grad(ft.grad(lambda a: a * a * a))(3.0))
18.0
"""

from functrans import numpy as _fnp  # noqa: F401  (installs tracer operators)
from functrans import primitives as _primitives  # noqa: F401  (registers the table)
from functrans import debug, dtypes, flatten_util, lax, nn, optimizers, random, tree_util  # noqa: F401,E501
from functrans import tree  # noqa: F401
from functrans.core import (ClosedJaxpr, Jaxpr, ShapedArray, check_jaxpr,  # noqa: F401
                            eval_jaxpr, make_jaxpr)
from functrans.core.array import Array  # noqa: F401
from functrans.core.cache import clear_caches  # noqa: F401
from functrans.cpu_device import (block_until_ready, device_get, device_put, devices,  # noqa: F401
                               local_devices)
from functrans.flags import config, disable_jit  # noqa: F401
from functrans.primitives.ad_control import stop_gradient  # noqa: F401
from functrans.transforms.checkpoint import checkpoint, remat  # noqa: F401
from functrans.transforms.custom import custom_jvp, custom_vjp  # noqa: F401
from functrans.transforms.jacobians import hessian, jacfwd, jacrev  # noqa: F401
from functrans.transforms.jit.api import jit  # noqa: F401
from functrans.transforms.jvp import jvp  # noqa: F401
from functrans.transforms.laplacian import (  # noqa: F401
    divergence, hessian_diag, laplacian, value_grad_and_hessian_diag, value_grad_and_laplacian)
from functrans.transforms.linearize import linearize  # noqa: F401
from functrans.transforms.taylor import (  # noqa: F401
    biharmonic, biharmonic_estimate, collapsed_taylor, differential_operator, jet,
    laplacian_estimate, weighted_laplacian)
from functrans.transforms.vjp import grad, value_and_grad, vjp  # noqa: F401
from functrans.transforms.vmap import vmap  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "make_jaxpr", "eval_jaxpr", "check_jaxpr", "ClosedJaxpr", "Jaxpr", "ShapedArray",
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian",
    "vmap", "jit", "custom_jvp", "custom_vjp", "stop_gradient", "checkpoint", "remat",
    "laplacian", "hessian_diag", "divergence", "value_grad_and_laplacian",
    "value_grad_and_hessian_diag",
    "jet", "collapsed_taylor", "weighted_laplacian", "biharmonic", "differential_operator",
    "laplacian_estimate", "biharmonic_estimate",
    "clear_caches", "dtypes", "config", "disable_jit", "Array",
    "block_until_ready", "device_get", "device_put", "devices", "local_devices",
    # submodules: the API reference (pdoc follows __all__) documents each of them
    "tree_util", "tree", "flatten_util", "debug", "lax", "nn", "optimizers", "random", "numpy", "scipy",
    "torch", "errors", "test_util", "backend", "backends", "core", "primitives", "transforms",
    "flags",
    "cpu_device", "example_libraries", "experimental", "convolution",
]
