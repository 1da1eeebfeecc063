"""Run HIPS autograd's own tests against functrans and count what passes, file by file.

    python scripts/run_autograd_tests.py AUTOGRAD_TEST_DIR [FILE ...] [--json OUT] [-k EXPR]
                                         [--timeout SECONDS] [--show N]

AUTOGRAD_TEST_DIR is the `tests/` folder of an autograd checkout. FILE names test files in it
(`test_numpy.py` or `test_numpy`); without any, every `test_*.py` there runs. The tests run
under pytest, in this process, with `autograd` read as functrans' API: an import hook in this
script (never in the test suite) answers `import autograd...` with modules built here, so no
autograd installation is needed or used:

- `autograd`: grad, value_and_grad, jacobian, hessian, elementwise_grad, deriv,
  holomorphic_grad, make_vjp, make_jvp, make_hvp, vector/tensor-Jacobian and
  Hessian-vector products, grad_and_aux, grad_named, multigrad_dict, checkpoint, and the
  container helpers (list, tuple, dict, isinstance, type) -- each written in terms of
  functrans' grad/vjp/jvp/jacrev/hessian, with autograd's `argnum` spelling.
- `autograd.numpy` -> functrans.numpy (`autograd.numpy.linalg`/`fft` -> functrans.numpy's);
  `autograd.numpy.random` -> numpy.random (the tests only draw data from it).
- `autograd.scipy.X` -> functrans.scipy.X (and `autograd.scipy.stats.norm` etc. ->
  the attribute of functrans.scipy.stats; a distribution's `rvs`, which the tests use only to
  draw data, comes from scipy.stats when scipy is installed).
- `autograd.test_util`: check_grads, combo_check, check_equivalent, scalar_close -- autograd's
  own checks (numerical JVP by central differences, VJP by `<v, J^T w> == <J v, w>`,
  recursing for higher orders) over functrans' jvp/vjp.
- `autograd.extend`/`core`/`tracer`: `primitive` + `defvjp`/`defjvp` become a
  functrans.custom_vjp/custom_jvp; `vspace` is the one used by the checks above.

A name functrans lacks becomes a placeholder that fails only the tests which use it, with
"missing in functrans: NAME", so one absent name costs those tests, not the whole file.

Per file the script prints passed / failed (an assertion: a wrong value) / error (any other
exception: a missing name, a refused input) / skipped, then the most common failure lines.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import functools
import importlib
import importlib.abc
import importlib.machinery
import itertools
import json
import signal
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as onp

# ----------------------------------------------------------------------------------------------
# Placeholders for names functrans does not have


class MissingName(Exception):
    """A name the autograd tests use that functrans does not provide."""


class _Absent:
    """Stands for a missing name: calling or using it raises MissingName."""

    def __init__(self, name: str):
        self._name = name

    def _fail(self, *args, **kwargs):
        raise MissingName(f"missing in functrans: {self._name}")

    __call__ = __enter__ = __iter__ = __len__ = __add__ = __radd__ = __mul__ = __rmul__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self._name}.{attr}")

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<missing {self._name}>"


class _ForwardingModule(types.ModuleType):
    """A module whose unknown attributes come from `targets` (in order), else placeholders."""

    def __init__(self, name: str, targets, label: str, extra: dict | None = None):
        super().__init__(name)
        self._targets = [t for t in targets if t is not None]
        self._label = label
        self.__dict__.update(extra or {})

    def __getattr__(self, attr):
        if attr.startswith("__") or attr in ("_targets", "_label"):
            raise AttributeError(attr)
        if self._label == "scipy.stats":
            return _distribution(self.__name__ + "." + attr, self._targets, attr)
        for target in self._targets:
            if hasattr(target, attr):
                return getattr(target, attr)
        return _Absent(f"{self._label}.{attr}")


def _distribution(name, targets, attr):
    """autograd.scipy.stats.<attr>: functrans' distribution, with the random draws (`rvs`,
    test data only, like numpy.random) taken from scipy when it is installed."""
    ours = [getattr(t, attr) for t in targets if hasattr(t, attr)]
    extra = {}
    scipy_stats = _optional_import("scipy.stats")
    if scipy_stats is not None and hasattr(scipy_stats, attr) and not any(
            hasattr(o, "rvs") for o in ours):
        extra["rvs"] = getattr(scipy_stats, attr).rvs
    return _ForwardingModule(name, ours, f"scipy.stats.{attr}", extra)


def _optional_import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# ----------------------------------------------------------------------------------------------
# autograd's differential operators over functrans


def _build_autograd_api(ft, fnp):
    from functrans.core.trace import Tracer
    from functrans.tree_util import tree_flatten, tree_map

    def unary_to_nary(unary_operator):
        """autograd's wrapper: operate on argument `argnum` (an int or a tuple of ints)."""

        @functools.wraps(unary_operator)
        def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
            @functools.wraps(fun)
            def nary_f(*args, **kwargs):
                def unary_f(x):
                    if isinstance(argnum, int):
                        subargs = args[:argnum] + (x,) + args[argnum + 1:]
                    else:
                        subargs = list(args)
                        for i, xi in zip(argnum, x):
                            subargs[i] = xi
                    return fun(*subargs, **kwargs)

                x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
                return unary_operator(unary_f, x, *nary_op_args, **nary_op_kwargs)

            return nary_f

        return nary_operator

    def _make_vjp(fun, x):
        ans, vjp_fn = ft.vjp(fun, x)
        return (lambda g: vjp_fn(g)[0]), ans

    def _make_jvp(fun, x):
        def jvp(v):
            return ft.jvp(fun, (x,), (_like(v, x),))

        return jvp

    def _like(v, x):
        # a tangent has the primal's dtype (autograd's vspaces are loose about float vs complex)
        def cast(vi, xi):
            xa = onp.asarray(xi) if not isinstance(xi, Tracer) else None
            if xa is not None and not isinstance(vi, Tracer):
                return onp.asarray(vi, dtype=onp.result_type(xa.dtype, onp.float64)
                                   if not onp.iscomplexobj(xa) else xa.dtype)
            return vi

        return tree_map(cast, v, x)

    make_vjp = unary_to_nary(_make_vjp)
    make_jvp = unary_to_nary(_make_jvp)

    def _ones_like(ans):
        return tree_map(lambda a: fnp.ones_like(a), ans)

    @unary_to_nary
    def grad(fun, x):
        vjp, ans = _make_vjp(fun, x)
        value = _value(ans)
        if onp.size(ans) != 1 or onp.iscomplexobj(value) or not onp.issubdtype(
                onp.asarray(value).dtype, onp.floating):  # autograd has no vspace for bool/int
            raise TypeError("Grad only applies to real scalar-output functions. "
                            "Try jacobian, elementwise_grad or holomorphic_grad.")
        return vjp(fnp.ones_like(ans))

    @unary_to_nary
    def elementwise_grad(fun, x):
        vjp, ans = _make_vjp(fun, x)
        return vjp(_ones_like(ans))

    @unary_to_nary
    def deriv(fun, x):
        return _make_jvp(fun, x)(_ones_like(x))[1]

    @unary_to_nary
    def jacobian(fun, x):
        return ft.jacrev(fun)(x)

    @unary_to_nary
    def holomorphic_grad(fun, x):
        if not onp.iscomplexobj(_value(x)):
            warnings.warn("Input to holomorphic_grad is not complex")
        return grad(lambda x: fnp.real(fun(x)))(x)

    @unary_to_nary
    def hessian(fun, x):
        return ft.hessian(fun)(x)

    @unary_to_nary
    def value_and_grad(fun, x):
        vjp, ans = _make_vjp(fun, x)
        return ans, vjp(fnp.ones_like(ans))

    @unary_to_nary
    def grad_and_aux(fun, x):
        g, aux = ft.grad(fun, has_aux=True)(x)
        return g, aux

    @unary_to_nary
    def make_hvp(fun, x):
        return _make_vjp(grad(fun), x)

    def hessian_tensor_product(fun, argnum=0):
        fun_grad = grad(fun, argnum)

        def vector_dot_grad(*args, **kwargs):
            args, vector = args[:-1], args[-1]
            return fnp.tensordot(fun_grad(*args, **kwargs), vector, onp.ndim(vector))

        return grad(vector_dot_grad, argnum)

    def tensor_jacobian_product(fun, argnum=0):
        def vector_dot_fun(*args, **kwargs):
            args, vector = args[:-1], args[-1]
            return fnp.tensordot(vector, fun(*args, **kwargs), axes=onp.ndim(vector))

        return jacobian(vector_dot_fun, argnum)

    def make_ggnvp(f, g=lambda x: 1.0 / 2 * fnp.sum(x**2, axis=-1), f_argnum=0):
        @unary_to_nary
        def _make_ggnvp(f, x):
            f_vjp, f_x = _make_vjp(f, x)
            g_hvp, grad_g_x = _make_vjp(grad(g), f_x)
            f_jvp, _ = _make_vjp(f_vjp, tree_map(fnp.zeros_like, grad_g_x))

            def ggnvp(v):
                return f_vjp(g_hvp(f_jvp(v)))

            return ggnvp

        return _make_ggnvp(f, f_argnum)

    def multigrad_dict(fun):
        import inspect

        sig = inspect.signature(fun)

        def gradfun(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            names = list(bound.arguments)
            vals = [bound.arguments[n] for n in names]

            def f(*xs):
                return fun(**dict(zip(names, xs)))

            grads = ft.grad(f, argnums=tuple(range(len(vals))))(*vals)
            return collections.OrderedDict(zip(names, grads))

        return gradfun

    def grad_named(fun, argname):
        import inspect

        argnum = list(inspect.signature(fun).parameters).index(argname)
        return grad(fun, argnum)

    def checkpoint(fun):
        return ft.checkpoint(fun)

    def _value(x):
        leaves, _ = tree_flatten(x)
        if len(leaves) == 1 and isinstance(leaves[0], Tracer):
            return onp.zeros((), leaves[0].aval.dtype)
        return x

    def ag_isinstance(x, types_):
        # a traced array is an instance of the array types (numpy's and functrans' Array)
        if isinstance(x, Tracer):
            types_ = types_ if isinstance(types_, builtins.tuple) else (types_,)
            return any(issubclass(t, onp.ndarray) or issubclass(onp.ndarray, t) for t in types_)
        return builtins.isinstance(x, types_)

    def ag_type(x):
        if isinstance(x, Tracer):
            return onp.ndarray
        return builtins.type(x)

    api = dict(
        unary_to_nary=unary_to_nary, make_vjp=make_vjp, make_jvp=make_jvp, grad=grad,
        elementwise_grad=elementwise_grad, deriv=deriv, jacobian=jacobian,
        holomorphic_grad=holomorphic_grad, hessian=hessian, value_and_grad=value_and_grad,
        grad_and_aux=grad_and_aux, make_hvp=make_hvp,
        hessian_tensor_product=hessian_tensor_product,
        hessian_vector_product=hessian_tensor_product,
        vector_jacobian_product=tensor_jacobian_product,
        tensor_jacobian_product=tensor_jacobian_product, make_ggnvp=make_ggnvp,
        multigrad_dict=multigrad_dict, grad_named=grad_named, checkpoint=checkpoint,
        list=builtins.list, tuple=builtins.tuple, dict=builtins.dict, isinstance=ag_isinstance,
        type=ag_type, _make_vjp=_make_vjp, _make_jvp=_make_jvp, isbox=lambda x:
        isinstance(x, Tracer),
    )
    return api


# ----------------------------------------------------------------------------------------------
# Vector spaces and autograd's gradient checks (test_util), over pytrees of arrays


class _VSpace:
    """The shape of a pytree of arrays: autograd's vspace, enough for its checks."""

    def __init__(self, value):
        from functrans.core.trace import Tracer
        from functrans.tree_util import tree_flatten

        leaves, self.treedef = tree_flatten(value)
        self.specs = []
        for leaf in leaves:
            if isinstance(leaf, Tracer):
                shape, dtype = tuple(leaf.aval.shape), onp.dtype(leaf.aval.dtype)
            else:
                a = onp.asarray(leaf)
                shape, dtype = a.shape, a.dtype
            self.specs.append((shape, onp.issubdtype(dtype, onp.complexfloating)))
        self.shape = self.specs[0][0] if len(self.specs) == 1 else None
        self.size = sum(int(onp.prod(s)) for s, _ in self.specs)
        self.iscomplex = any(c for _, c in self.specs)

    def __eq__(self, other):
        return str(self.treedef) == str(other.treedef) and self.specs == other.specs

    def __repr__(self):
        return f"VSpace({self.treedef}, {self.specs})"

    def _build(self, leaves):
        from functrans.tree_util import tree_unflatten

        return tree_unflatten(self.treedef, leaves)

    def randn(self):
        leaves = []
        for shape, is_complex in self.specs:
            r = onp.random.randn(*shape)
            if is_complex:
                r = r + 1j * onp.random.randn(*shape)
            leaves.append(onp.asarray(r))
        return self._build(leaves)

    def ones(self):
        return self._build([onp.ones(s, complex if c else float) for s, c in self.specs])

    def _leaves(self, x):
        from functrans.tree_util import tree_flatten

        return tree_flatten(x)[0]

    def add(self, x, y):
        return self._build([a + b for a, b in zip(self._leaves(x), self._leaves(y))])

    def scalar_mul(self, x, c):
        return self._build([a * c for a in self._leaves(x)])

    def inner_prod(self, x, y):
        import functrans.numpy as fnp

        total = 0.0
        for a, b in zip(self._leaves(x), self._leaves(y)):
            total = total + fnp.real(fnp.sum(fnp.conj(a) * b))
        return total

    def covector(self, x):
        import functrans.numpy as fnp

        return self._build([fnp.conj(a) if c else a
                            for a, (_, c) in zip(self._leaves(x), self.specs)])


def _build_test_util(api):
    make_vjp, make_jvp, unary_to_nary = api["_make_vjp"], api["_make_jvp"], api["unary_to_nary"]
    vspace = _VSpace
    tol = rtol = 1e-6
    eps = 1e-6

    def get_name(f):
        return getattr(f, "__name__", "[unknown name]")

    def scalar_close(a, b):
        return abs(a - b) < tol or abs(a - b) / abs(a + b) < rtol

    def make_numerical_jvp(f, x):
        y = f(x)
        x_vs, y_vs = vspace(x), vspace(y)

        def jvp(v):
            f_x_plus = f(x_vs.add(x, x_vs.scalar_mul(v, eps / 2)))
            f_x_minus = f(x_vs.add(x, x_vs.scalar_mul(v, -eps / 2)))
            neg_f_x_minus = y_vs.scalar_mul(f_x_minus, -1.0)
            return y_vs.scalar_mul(y_vs.add(f_x_plus, neg_f_x_minus), 1.0 / eps)

        return jvp

    def check_vjp(f, x):
        vjp, y = make_vjp(f, x)
        jvp = make_numerical_jvp(f, x)
        x_vs, y_vs = vspace(x), vspace(y)
        x_v, y_v = x_vs.randn(), y_vs.randn()
        vjp_y = x_vs.covector(vjp(y_vs.covector(y_v)))
        assert vspace(vjp_y) == x_vs, f"VSpace mismatch:\nx: {x_vs}\nvjp: {vspace(vjp_y)}"
        vjv_exact = x_vs.inner_prod(x_v, vjp_y)
        vjv_numeric = y_vs.inner_prod(y_v, jvp(x_v))
        assert scalar_close(vjv_numeric, vjv_exact), (
            f"Derivative (VJP) check of {get_name(f)} failed with arg {x}:\n"
            f"analytic: {vjv_exact}\nnumeric:  {vjv_numeric}")

    def check_jvp(f, x):
        jvp = make_jvp(f, x)
        jvp_numeric = make_numerical_jvp(f, x)
        x_v = vspace(x).randn()
        check_equivalent(jvp(x_v)[1], jvp_numeric(x_v))

    def check_equivalent(x, y):
        x_vs, y_vs = vspace(x), vspace(y)
        assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
        v = x_vs.randn()
        assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), (
            f"Value mismatch:\nx: {x}\ny: {y}")

    @unary_to_nary
    def check_grads(f, x, modes=None, order=2):
        if modes is None:
            modes = ["fwd", "rev"]
        assert all(m in ["fwd", "rev"] for m in modes)
        if "fwd" in modes:
            check_jvp(f, x)
            if order > 1:
                grad_f = lambda x, v: make_jvp(f, x)(v)[1]
                grad_f.__name__ = f"jvp_{get_name(f)}"
                v = vspace(x).randn()
                check_grads(grad_f, (0, 1), modes, order=order - 1)(x, v)
        if "rev" in modes:
            check_vjp(f, x)
            if order > 1:
                grad_f = lambda x, v: make_vjp(f, x)[0](v)
                grad_f.__name__ = f"vjp_{get_name(f)}"
                v = vspace(f(x)).randn()
                check_grads(grad_f, (0, 1), modes, order=order - 1)(x, v)

    def combo_check(fun, *args, **kwargs):
        _check_grads = lambda f: check_grads(f, *args, **kwargs)

        def _combo_check(*args, **kwargs):
            kwarg_key_vals = [[(k, x) for x in xs] for k, xs in kwargs.items()]
            for _args in itertools.product(*args):
                for _kwargs in itertools.product(*kwarg_key_vals):
                    _check_grads(fun)(*_args, **dict(_kwargs))

        return _combo_check

    return dict(scalar_close=scalar_close, make_numerical_jvp=make_numerical_jvp,
                check_vjp=check_vjp, check_jvp=check_jvp, check_equivalent=check_equivalent,
                check_grads=check_grads, combo_check=combo_check, vspace=vspace,
                get_name=get_name, TOL=tol, RTOL=rtol, EPS=eps)


def _build_extend(ft, fnp):
    """autograd's `primitive` + `defvjp`/`defjvp`, as functrans custom rules."""

    class Primitive:
        def __init__(self, fun):
            self.fun = fun
            self.vjps: dict[int, object] = {}
            self.jvps: dict[int, object] = {}
            functools.update_wrapper(self, fun)

        def defvjp(self, vjpmaker, argnum=0):
            self.vjps[argnum] = vjpmaker

        def defjvp(self, jvpfun, argnum=0):
            self.jvps[argnum] = jvpfun

        def __call__(self, *args, **kwargs):
            from functrans.core.trace import Tracer
            from functrans.tree_util import tree_leaves

            traced = [i for i, a in enumerate(args)
                      if any(isinstance(leaf, Tracer) for leaf in tree_leaves(a))]
            if not traced:
                return self.fun(*args, **kwargs)
            fun, vjps, jvps = self.fun, self.vjps, self.jvps

            def call(*xs):
                full = list(args)
                for i, x in zip(traced, xs):
                    full[i] = x
                return full

            if vjps:
                @ft.custom_vjp
                def f(*xs):
                    return fun(*call(*xs), **kwargs)

                def fwd(*xs):
                    ans = fun(*call(*xs), **kwargs)
                    return ans, (ans, xs)

                def bwd(res, g):
                    ans, xs = res
                    full = call(*xs)
                    out = []
                    for i, x in zip(traced, xs):
                        if i not in vjps:
                            # autograd's own error for a primitive without this rule
                            raise NotImplementedError(f"VJP of {fun.__name__} wrt argnum {i} "
                                                      "not defined")
                        out.append(vjps[i](ans, *full, **kwargs)(g))
                    return tuple(out)

                f.defvjp(fwd, bwd)
                return f(*[args[i] for i in traced])
            if jvps:
                @ft.custom_jvp
                def f(*xs):
                    return fun(*call(*xs), **kwargs)

                def jvp_rule(primals, tangents):
                    ans = fun(*call(*primals), **kwargs)
                    full = call(*primals)
                    out = 0
                    for i, t in zip(traced, tangents):
                        out = out + jvps[i](t, ans, *full, **kwargs)
                    return ans, out

                f.defjvp(jvp_rule)
                return f(*[args[i] for i in traced])
            # autograd raises this when a primitive without rules meets a traced argument
            raise NotImplementedError(f"VJP of {fun.__name__} wrt argnum {traced[0]} not "
                                      "defined")

    def primitive(fun):
        return Primitive(fun)

    def defvjp(prim, *vjpmakers, argnums=None):
        argnums = argnums if argnums is not None else range(len(vjpmakers))
        for i, maker in zip(argnums, vjpmakers):
            if maker is not None:
                prim.vjps[i] = maker

    def defjvp(prim, *jvpfuns, argnums=None):
        argnums = argnums if argnums is not None else range(len(jvpfuns))
        for i, fn in zip(argnums, jvpfuns):
            if fn is not None:
                prim.jvps[i] = fn

    def defvjp_argnum(prim, vjpmaker):
        raise MissingName("missing in functrans: autograd.extend.defvjp_argnum")

    return dict(primitive=primitive, defvjp=defvjp, defjvp=defjvp, defvjp_argnum=defvjp_argnum,
                primitive_with_deprecation_warnings=primitive)


# ----------------------------------------------------------------------------------------------
# The import hook: `autograd...` read as functrans


class _AutogradFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers `import autograd...` with modules built over functrans (this script only)."""

    def __init__(self):
        import functrans as ft
        import functrans.numpy as fnp

        self.ft, self.fnp = ft, fnp
        self.api = _build_autograd_api(ft, fnp)
        self.test_util = _build_test_util(self.api)
        self.extend = _build_extend(ft, fnp)

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "autograd" or fullname.startswith("autograd."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return self._module(spec.name)

    def exec_module(self, module):
        pass

    def _module(self, name: str) -> types.ModuleType:
        fnp, api = self.fnp, self.api
        public_api = {k: v for k, v in api.items() if not k.startswith("_")}
        vspace = self.test_util["vspace"]
        if name == "autograd":
            extra = dict(public_api, primitive=self.extend["primitive"])
            return _ForwardingModule(name, [], "autograd", extra)
        if name == "autograd.numpy":
            extra = {"random": onp.random, "__version__": onp.__version__,
                     "linalg": _optional_import("functrans.numpy.linalg"),
                     "fft": _optional_import("functrans.numpy.fft")}
            extra = {k: v for k, v in extra.items() if v is not None}
            return _ForwardingModule(name, [fnp], "numpy", extra)
        if name == "autograd.numpy.random":
            return _ForwardingModule(name, [onp.random], "numpy.random")
        if name.startswith("autograd.numpy."):
            sub = name.split(".", 2)[2]
            return _ForwardingModule(name, [_optional_import(f"functrans.numpy.{sub}")],
                                     f"numpy.{sub}")
        if name == "autograd.scipy":
            return _ForwardingModule(name, [_optional_import("functrans.scipy")], "scipy")
        if name.startswith("autograd.scipy."):
            parts = name.split(".")[2:]
            target = _optional_import("functrans.scipy." + parts[0])
            if parts[0] == "stats" and len(parts) == 2:
                return _distribution(name, [target], parts[1])
            for p in parts[1:]:
                target = getattr(target, p, None) if target is not None else None
            return _ForwardingModule(name, [target], "scipy." + ".".join(parts))
        if name == "autograd.test_util":
            return _ForwardingModule(name, [], "autograd.test_util", self.test_util)
        if name in ("autograd.extend", "autograd.core", "autograd.tracer"):
            extra = dict(self.extend, vspace=vspace, make_vjp=api["_make_vjp"],
                         make_jvp=api["_make_jvp"], isbox=api["isbox"])
            return _ForwardingModule(name, [], name, extra)
        if name in ("autograd.builtins", "autograd.differential_operators"):
            return _ForwardingModule(name, [], name, public_api)
        if name == "autograd.wrap_util":
            return _ForwardingModule(name, [], name, {"unary_to_nary": api["unary_to_nary"]})
        if name == "autograd.misc":
            from functrans.flatten_util import ravel_pytree

            return _ForwardingModule(name, [], name, {"flatten": ravel_pytree})
        return _ForwardingModule(name, [], name)


# ----------------------------------------------------------------------------------------------
# Running the files under pytest and counting


class _Counter:
    """A pytest plugin: per-file outcomes, with a time limit per test."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.reasons: dict[str, collections.Counter] = collections.defaultdict(
            collections.Counter)
        self.results: list[dict] = []

    def _record(self, fname, test, outcome, reason=""):
        self.files[fname][outcome] += 1
        if reason:
            self.reasons[fname][reason] += 1
        self.results.append({"file": fname, "test": test, "outcome": outcome, "reason": reason})

    def pytest_collectreport(self, report):
        if report.failed:
            fname = Path(str(report.fspath)).name
            reason = _first_line(str(report.longrepr).strip().splitlines()[-1:] or [""])
            self._record(fname, "<collection>", "error", "collection: " + reason)

    def pytest_runtest_protocol(self, item, nextitem):
        return None

    def pytest_runtest_call(self, item):
        if self.timeout and hasattr(signal, "SIGALRM"):
            def on_alarm(signum, frame):
                raise TimeoutError(f"test ran past {self.timeout:g} s")

            signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.timeout)

    def pytest_runtest_teardown(self, item):
        if hasattr(signal, "SIGALRM"):
            signal.setitimer(signal.ITIMER_REAL, 0)

    def pytest_runtest_logreport(self, report):
        fname = Path(report.location[0]).name
        test = report.nodeid.split("::", 1)[-1]
        if report.when == "call":
            if report.passed:
                self._record(fname, test, "passed")
            elif report.skipped:
                self._record(fname, test, "skipped", _skip_reason(report))
            else:
                kind, reason = _failure(report)
                self._record(fname, test, kind, reason)
        elif report.failed:
            kind, reason = _failure(report)
            self._record(fname, test, "error", f"{report.when}: {reason}")
        elif report.skipped and report.when == "setup":
            self._record(fname, test, "skipped", _skip_reason(report))


def _first_line(lines) -> str:
    text = lines[0] if lines else ""
    return text.strip()[:160]


def _skip_reason(report) -> str:
    lr = report.longrepr
    return str(lr[2] if isinstance(lr, tuple) else lr)[:160]


def _failure(report) -> tuple[str, str]:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else str(report.longrepr)
    first = _first_line(message.strip().splitlines() or [""])
    kind = "failed" if first.startswith(("AssertionError", "assert ", "Failed")) else \
        "error"
    return kind, first


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("test_dir", type=Path, help="the tests/ folder of an autograd checkout")
    parser.add_argument("files", nargs="*", help="test files to run (default: all test_*.py)")
    parser.add_argument("--json", type=Path, help="write every test's outcome here")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per test")
    parser.add_argument("--show", type=int, default=5, help="failure lines shown per file")
    args = parser.parse_args(argv)

    import pytest

    test_dir = args.test_dir.resolve()
    if not test_dir.is_dir():
        parser.error(f"{test_dir} is not a folder: pass the tests/ folder of autograd")
    names = [f if f.endswith(".py") else f + ".py" for f in args.files] or sorted(
        p.name for p in test_dir.glob("test_*.py"))
    missing = [n for n in names if not (test_dir / n).is_file()]
    for n in missing:
        print(f"{n}: not found in {test_dir}, skipped")
    names = [n for n in names if n not in missing]

    finder = _AutogradFinder()
    sys.meta_path.insert(0, finder)
    counter = _Counter(args.timeout)
    pytest_args = [str(test_dir / n) for n in names] + [
        "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:cov", "-c", "/dev/null",
        "--rootdir", str(test_dir), "-o", "addopts=", "-W", "ignore", "-p", "no:terminal"]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    start = time.perf_counter()
    try:
        code = pytest.main(pytest_args, plugins=[counter])
    finally:
        sys.meta_path.remove(finder)
    elapsed = time.perf_counter() - start
    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR):
        print(f"pytest stopped: {code!r}")
        return 2

    totals = collections.Counter()
    print(f"{'file':28s} {'passed':>7s} {'failed':>7s} {'error':>7s} {'skipped':>8s}")
    for n in names:
        c = counter.files.get(n, collections.Counter())
        totals.update(c)
        print(f"{n:28s} {c['passed']:7d} {c['failed']:7d} {c['error']:7d} {c['skipped']:8d}")
    print(f"{'total':28s} {totals['passed']:7d} {totals['failed']:7d} {totals['error']:7d} "
          f"{totals['skipped']:8d}   ({elapsed:.0f} s)")
    if args.show:
        for n in names:
            reasons = counter.reasons.get(n)
            if not reasons:
                continue
            print(f"\n{n}:")
            for reason, count in reasons.most_common(args.show):
                print(f"  {count:4d}  {reason}")
    if args.json:
        args.json.write_text(json.dumps({"files": {n: dict(counter.files.get(n, {}))
                                                   for n in names},
                                         "results": counter.results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
