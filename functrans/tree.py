"""`functrans.tree`: the short pytree names of `jax.tree` (`tree.map`, `tree.leaves`, ...), the
same functions as functrans.tree_util's `tree_*`.

>>> from functrans import tree
>>> tree.map(lambda x: x * 2, {"w": 1.0, "b": (2.0, 3.0)})
{'b': (4.0, 6.0), 'w': 2.0}
"""

from functrans.tree_util import tree_all as all  # noqa: A004  (jax.tree.all)
from functrans.tree_util import tree_flatten as flatten
from functrans.tree_util import tree_flatten_with_path as flatten_with_path
from functrans.tree_util import tree_leaves as leaves
from functrans.tree_util import tree_map as map  # noqa: A004  (jax.tree.map)
from functrans.tree_util import tree_reduce as reduce
from functrans.tree_util import tree_structure as structure
from functrans.tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "map", "reduce", "structure",
           "unflatten"]
