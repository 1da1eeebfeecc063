"""User-supplied derivative rules: `custom_jvp` and `custom_vjp`, as in JAX.

A decorated function applied to traced values is staged into a program and bound as a call
primitive that also holds the user's rule:

  custom_jvp_call  its JVP rule calls the user's rule on the primals and (materialised)
                   tangents. Under linearize the rule's primal work lands on the trace below and
                   its tangent work is staged; when the rule itself is differentiated (a higher
                   derivative), its own derivative comes from the primitives it uses.
  custom_vjp_call  its JVP rule runs the user's `fwd` on the primals and returns, as tangent,
                   `custom_lin` applied to (residuals..., tangents...): a linear primitive whose
                   transpose calls the user's `bwd`. Under reverse mode the `custom_lin` equation
                   is staged into the linear program; pure forward mode reaches its impl, which
                   raises (as JAX does).

Values the function closes over become operands of the call (programs in params are
const-free). When those include tracers of enclosing transforms, the rules are staged too, at
call time, and their closed-over values become operands as well, so no rule ever holds a
tracer in a Python closure. For custom_jvp the derivatives of closed-over values flow through
the function's own program; for custom_vjp a differentiated closed-over value is an error,
since `bwd` cannot return its cotangent.
"""


from functrans.transforms.custom._common import (  # noqa: F401
    CustomRuleClosureError, CustomVJPClosureError, CustomVJPForwardModeError, SymbolicZero)
from functrans.transforms.custom.user_jvp import custom_jvp  # noqa: F401
from functrans.transforms.custom.user_vjp import CustomVJPPrimal, custom_vjp  # noqa: F401

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "CustomVJPPrimal",
           "CustomVJPForwardModeError", "CustomVJPClosureError", "CustomRuleClosureError",
           "user_jvp", "user_vjp"]
