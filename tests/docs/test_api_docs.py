"""The API reference: pdoc renders every public module from its docstrings (every module whose
name has no leading underscore), every public function and class there has a docstring, and the
main public functions carry a runnable example (run by --doctest-modules over functrans/)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import warnings

import pytest

# the modules whose pages make up the reference (python -m pdoc functrans -o docs/api renders
# these and every other submodule)
PUBLIC_MODULES = {
    "functrans": ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
                  "hessian", "vmap", "make_jaxpr"],
    "functrans.numpy": ["sin", "reshape", "zeros"],
    "functrans.numpy.linalg": ["norm", "solve", "eigh", "pinv"],
    "functrans.numpy.fft": ["fft", "rfft", "irfftn", "fftshift", "fftfreq"],
    "functrans.scipy.linalg": ["solve_triangular", "lu_factor", "expm", "block_diag"],
    "functrans.scipy.special": ["logsumexp", "xlogy"],
    "functrans.lax": ["cond", "switch", "while_loop", "fori_loop", "scan", "stop_gradient"],
    "functrans.tree_util": ["tree_flatten", "tree_unflatten", "tree_map"],
    "functrans.random": ["PRNGKey", "key", "split", "fold_in", "uniform", "normal"],
    "functrans.nn": ["relu", "gelu", "softmax", "one_hot", "standardize"],
    "functrans.nn.initializers": ["glorot_uniform", "variance_scaling", "orthogonal", "zeros"],
    "functrans.optimizers": ["adam", "sgd", "minimize_lbfgs", "chain", "adamw",
                             "warmup_cosine_decay_schedule", "GradientTransformation"],
    "functrans.example_libraries.optimizers": ["adam", "sgd", "OptimizerState", "clip_grads"],
    "functrans.example_libraries.stax": ["Dense", "serial", "Conv"],
    "functrans.test_util": ["check_grads"],
    "functrans.errors": ["ShapeError", "DTypeError", "ConcretizationTypeError"],
    "functrans.transforms.jit": ["jit"],
    "functrans.transforms.custom": ["custom_jvp", "custom_vjp"],
    "functrans.transforms.checkpoint": ["checkpoint"],
    "functrans.transforms.laplacian": ["laplacian", "hessian_diag", "divergence"],
    "functrans.torch": ["tensor", "Tensor", "add", "ge", "zeros", "no_grad"],
    "functrans.torch.nn": ["Module", "Linear", "Sequential", "Parameter"],
    "functrans.torch.nn.functional": ["mse_loss", "softplus"],
    "functrans.torch.nn.init": ["calculate_gain", "kaiming_uniform_"],
    "functrans.torch.autograd": ["grad", "backward", "Function", "gradcheck"],
}

# public callables whose docstrings have no `>>>` example yet (each should get one; new public
# names must have one from the start)
KNOWN_WITHOUT_EXAMPLE = {
    "functrans.ClosedJaxpr", "functrans.Jaxpr", "functrans.ShapedArray",
    "functrans.check_jaxpr", "functrans.eval_jaxpr", "functrans.jacfwd", "functrans.jacrev",
    "functrans.hessian",
    "functrans.tree_util.PyTreeDef", "functrans.tree_util.register_pytree_node",
    "functrans.tree_util.tree_flatten", "functrans.tree_util.tree_unflatten",
    "functrans.tree_util.tree_map", "functrans.tree_util.tree_leaves",
    "functrans.tree_util.tree_structure", "functrans.tree_util.treedef_is_leaf",
    "functrans.tree_util.tree_flatten_with_path", "functrans.tree_util.keystr",
    "functrans.optimizers.Optimizer", "functrans.optimizers.sgd", "functrans.optimizers.adam",
    "functrans.optimizers.apply_updates", "functrans.optimizers.constant_schedule",
    "functrans.optimizers.minimize_lbfgs", "functrans.optimizers.LBFGSResult",
    "functrans.transforms.laplacian.value_grad_and_hessian_diag",
    "functrans.test_util.check_jvp", "functrans.test_util.check_vjp",
}


def _public_callables(modname):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    for name in names:
        obj = getattr(mod, name, None)
        if obj is None or inspect.ismodule(obj) or not callable(obj):
            continue
        defined_in = getattr(obj, "__module__", "") or ""
        if not defined_in.startswith("functrans"):
            continue  # re-exported from numpy, typing, ...
        if getattr(mod, "__all__", None) is None and defined_in != modname and \
                modname != "functrans":
            continue  # an import used by the module, not part of its surface
        yield f"{modname}.{name}", obj


@functools.lru_cache(maxsize=None)
def _render(modname):
    pdoc = pytest.importorskip("pdoc")
    import pdoc.render

    pdoc.render.configure(docformat="markdown")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pdoc's notes about unresolvable annotations
        return pdoc.pdoc(modname)


@pytest.mark.parametrize("modname", sorted(PUBLIC_MODULES))
def test_reference_documents_public_names(modname):
    """Each public name is documented on the page of the module that defines it."""
    mod = importlib.import_module(modname)
    _render(modname)
    for name in PUBLIC_MODULES[modname]:
        obj = getattr(mod, name)
        home = getattr(obj, "__module__", modname)
        html = _render(home)
        assert f'id="{name}"' in html, f"{modname}.{name} missing from the page of {home}"
        assert (inspect.getdoc(obj) or "").split("\n")[0], f"{modname}.{name}: no docstring"


@pytest.mark.parametrize("modname", sorted(PUBLIC_MODULES))
def test_reference_page_lists_public_names(modname):
    """pdoc lists a re-exported name on a package's page only when the package's __all__ names
    it (functrans.numpy's and functrans.torch's names all come from private modules)."""
    html = _render(modname)
    for name in PUBLIC_MODULES[modname]:
        assert f'id="{name}"' in html, f"{modname}.{name} missing from its reference page"


DOCUMENTED = [(q, obj) for m in ["functrans", "functrans.lax", "functrans.tree_util",
                                 "functrans.optimizers", "functrans.test_util",
                                 "functrans.transforms.laplacian"]
              for q, obj in _public_callables(m)] + [
    (f"functrans.transforms.{m}.{n}", getattr(importlib.import_module(
        f"functrans.transforms.{m}"), n))
    for m, n in [("jit", "jit"), ("custom", "custom_jvp"), ("custom", "custom_vjp"),
                 ("checkpoint", "checkpoint")]]


@pytest.mark.parametrize("qualname,obj", DOCUMENTED, ids=[q for q, _ in DOCUMENTED])
def test_public_callable_has_docstring_example(qualname, obj):
    if qualname in KNOWN_WITHOUT_EXAMPLE:
        pytest.skip("no example yet (listed in KNOWN_WITHOUT_EXAMPLE)")
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{qualname} has no docstring"
    assert ">>>" in doc, (f"{qualname}'s docstring has no runnable example; add one (it runs "
                          "under pytest --doctest-modules)")


def _public_module_names(package="functrans"):
    """Every module of the package whose dotted name has no part starting with an underscore."""
    names = [package]
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
        if not info.name.rsplit(".", 1)[1].startswith("_"):
            names += _public_module_names(info.name) if info.ispkg else [info.name]
    return names


@functools.lru_cache(maxsize=None)
def _reference_tree():
    """The modules `python -m pdoc functrans` renders, by name: pdoc's own walk from the root
    (a package's submodules, only those its __all__ names when it has one)."""
    pytest.importorskip("pdoc")
    import pdoc.doc

    found = {}

    def walk(module):
        found[module.fullname] = module
        for sub in module.submodules:
            walk(sub)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        walk(pdoc.doc.Module.from_name("functrans"))
    return found


def test_reference_renders_every_public_module():
    """A public module missing from the reference is one whose parent package's __all__ does
    not name it (add it there), or that fails to import."""
    missing = sorted(set(_public_module_names()) - set(_reference_tree()))
    assert not missing, f"public modules the API reference does not render: {missing}"


@pytest.mark.parametrize("modname", _public_module_names())
def test_public_names_have_docstrings(modname):
    """Each function and class on a module's reference page says what it is: one line at least
    (what it computes, and for functrans.numpy / functrans.torch, which numpy or PyTorch function
    it mirrors). Names that pdoc would show undocumented fail here."""
    module = _reference_tree().get(modname)
    import pdoc.doc

    if module is None:
        pytest.fail(f"{modname} is not rendered (see test_reference_renders_every_public_module)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        undocumented = sorted(
            name for name, member in module.members.items()
            if not name.startswith("_") and isinstance(member, (pdoc.doc.Function, pdoc.doc.Class))
            and not member.docstring.strip())
    assert not undocumented, f"{modname}: public names without a docstring: {undocumented}"
