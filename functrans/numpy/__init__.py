"""numpy's API over functrans primitives: works on arrays eagerly and on tracers alike.

Each module installs the tracer operators and methods for its own functions.

>>> import functrans.numpy as fnp
>>> float(fnp.sum(fnp.sin(fnp.zeros(3))))
0.0
"""

from numpy import e, inf, nan, pi  # noqa: F401

from functrans.core.array import Array as ndarray  # noqa: F401  (jax.numpy.ndarray is jax.Array)

from functrans.numpy._creation import *  # noqa: F401,F403
from functrans.numpy._dtypes import *  # noqa: F401,F403
from functrans.numpy._elementwise import *  # noqa: F401,F403
from functrans.numpy._indexing import *  # noqa: F401,F403
from functrans.numpy._linalg import *  # noqa: F401,F403
from functrans.numpy._padding import *  # noqa: F401,F403
from functrans.numpy._reductions import *  # noqa: F401,F403
from functrans.numpy._shape import *  # noqa: F401,F403
from functrans.numpy._sorting import *  # noqa: F401,F403
from functrans.numpy._index_tricks import *  # noqa: F401,F403
from functrans.numpy._statistics import *  # noqa: F401,F403
from functrans.numpy._calculus import *  # noqa: F401,F403
from functrans.numpy._math_compositions import *  # noqa: F401,F403

from functrans.numpy import (_creation, _dtypes, _elementwise, _indexing, _linalg,  # noqa: E402
                             _padding, _reductions, _shape, _sorting, linalg)
from functrans.numpy import (_calculus, _index_tricks, _math_compositions,  # noqa: E402
                             _statistics)
from functrans.core.trace import set_numpy_dispatch as _set_numpy_dispatch  # noqa: E402
from functrans.numpy import _dispatch, _results  # noqa: E402
from functrans.numpy import fft  # noqa: E402

# what `from functrans.numpy import *` and the API reference take: numpy's constants, the
# linalg submodule and each private module's own list
__all__ = ["e", "inf", "nan", "pi", "linalg", "fft", "ndarray", *sorted(
    {n for m in (_creation, _dtypes, _elementwise, _indexing, _linalg, _padding, _reductions,
                 _shape, _sorting, _index_tricks, _statistics, _calculus, _math_compositions)
       for n in m.__all__})]

_module = __import__(__name__, fromlist=["*"])
_results.return_arrays(_module, [n for n in __all__ if n not in ("linalg", "fft", "ndarray")])
_results.return_arrays(linalg, [n for n in dir(linalg) if not n.startswith("_")])
_results.return_arrays(fft, fft.__all__)
_stand_ins = _dispatch.stand_ins(_module)
_set_numpy_dispatch(_stand_ins, _dispatch.explainer(_module, _stand_ins))
del _module, _stand_ins
