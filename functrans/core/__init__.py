"""The IR and the tracing machinery; knows no particular primitive or transform."""

from functrans.core.avals import ShapedArray, get_aval  # noqa: F401
from functrans.core.check import check_jaxpr  # noqa: F401
from functrans.core.eval import eval_jaxpr  # noqa: F401
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var  # noqa: F401
from functrans.core.primitive import Primitive  # noqa: F401
from functrans.core.staging import make_jaxpr  # noqa: F401
