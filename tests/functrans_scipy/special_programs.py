"""Programs over scipy.special and scipy.stats, written once for both libraries, and what each
does under JAX: its value, jacfwd, jacrev, hessian and vmap of grad, recorded to
special_fixtures.json so the comparison with JAX runs without JAX. Re-record with JAX
installed: `python tests/functrans_scipy/special_programs.py [program ...]`.

A program is `build(lib) -> f`, where lib has `.special`, `.stats` and `.numpy` (jax.scipy's and
jax.numpy, or functrans's), and f maps a float64 vector x (the program's point) to an array.
A derivative JAX refuses is recorded as that error (functrans must refuse it too).
"""

from __future__ import annotations

import json
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

FIXTURES = Path(__file__).resolve().parent / "special_fixtures.json"
KINDS = ("value", "jacfwd", "jacrev", "hessian", "vmap_grad")


@dataclass
class Program:
    build: Callable                 # build(lib) -> f(x)
    x: list                         # the point, a float64 vector
    fd: bool = True                 # check against central differences too
    fd_order: int = 2               # to this order (1 where JAX defines no second derivative)
    fd_eps: float = 1e-6
    rtol: float = 1e-9              # against JAX (its algorithms differ from scipy's)
    atol: float = 1e-12
    # kind -> the JAX kind it is compared with instead, or None for none, where JAX's own
    # answer is wrong (each such entry says why in `notes`; finite differences still check it)
    instead: dict = field(default_factory=dict)
    notes: str = ""


PROGRAMS: dict[str, Program] = {}


def program(name, x, **kw):
    def register(build):
        PROGRAMS[name] = Program(build, list(map(float, x)), **kw)
        return build
    return register


def elementwise(name, fname, x, *const, before=False, **kw):
    """A program applying special.<fname> to x, with constant arguments after x (or before
    it, with before=True)."""
    def build(lib):
        fn = getattr(lib.special, fname)
        consts = [np.asarray(c, np.float64) for c in const]
        return (lambda v: fn(*consts, v)) if before else (lambda v: fn(v, *consts))
    PROGRAMS[name] = Program(build, list(map(float, x)), **kw)


POS = [0.35, 1.3, 2.7, 4.6]
REAL = [-2.2, -0.6, 0.45, 1.8]
UNIT = [0.07, 0.3, 0.55, 0.91]

elementwise("gamma", "gamma", [0.35, 1.3, 2.7, -1.4])
elementwise("gammaln", "gammaln", [0.35, 1.3, 2.7, -1.4])
elementwise("loggamma", "loggamma", POS)
elementwise("rgamma", "rgamma", [0.35, 1.3, 2.7, -1.4])
elementwise("gammasgn", "gammasgn", [0.35, 1.3, -2.7, -1.4])
elementwise("erfcinv", "erfcinv", [0.1, 0.6, 1.3, 1.9])
elementwise("digamma", "digamma", [0.35, 1.3, 4.6, -1.4])
elementwise("multigammaln", "multigammaln", [1.6, 2.3, 3.1, 5.0], 3)
elementwise("gammainc_x", "gammainc", POS, [0.8, 1.5, 2.5, 4.0], before=True)
elementwise("gammainc_a", "gammainc", [0.8, 1.5, 2.5, 4.0], POS, fd_order=1)
elementwise("gammaincc_x", "gammaincc", POS, [0.8, 1.5, 2.5, 4.0], before=True)
elementwise("gammaincc_a", "gammaincc", [0.8, 1.5, 2.5, 4.0], POS, fd_order=1)
elementwise("beta_a", "beta", [0.6, 1.3, 2.5, 3.7], [1.2, 0.7, 2.0, 3.3])
elementwise("betaln_a", "betaln", [0.6, 1.3, 2.5, 3.7], [1.2, 0.7, 2.0, 3.3])
elementwise("betaln_b", "betaln", [0.6, 1.3, 2.5, 3.7], [1.2, 0.7, 2.0, 3.3], before=True)
elementwise("erf", "erf", REAL)
elementwise("erfc", "erfc", [-2.2, -0.6, 0.45, 3.5])
elementwise("erfinv", "erfinv", [-0.8, -0.3, 0.2, 0.7])
elementwise("erfcx", "erfcx", [-1.5, -0.2, 0.8, 6.0])
elementwise("ndtr", "ndtr", [-5.0, -0.6, 0.45, 3.0])
elementwise("ndtri", "ndtri", UNIT)
elementwise("log_ndtr", "log_ndtr", [-12.0, -3.0, -0.6, 2.5])
elementwise("i0", "i0", REAL)
elementwise("i0e", "i0e", REAL)
elementwise("i1", "i1", REAL)
elementwise("i1e", "i1e", REAL)
elementwise("expit", "expit", REAL)
elementwise("logit", "logit", UNIT)
elementwise("xlogy_x", "xlogy", REAL, POS)
elementwise("xlogy_y", "xlogy", POS, REAL, before=True)
elementwise("xlog1py_x", "xlog1py", REAL, [-0.5, 0.2, 1.5, 3.0])
elementwise("xlog1py_y", "xlog1py", [-0.5, 0.2, 1.5, 3.0], REAL, before=True)
elementwise("entr", "entr", POS)
elementwise("zeta_q", "zeta", POS, [2.5, 3.0, 4.5, 2.1], before=True)
elementwise("zeta_x", "zeta", [2.5, 3.0, 4.5, 2.1], POS)
elementwise("spence", "spence", [0.2, 0.7, 1.6, 2.8],
            instead={"jacrev": "jacfwd", "hessian": None, "vmap_grad": None},
            notes="JAX's jacrev, hessian and vmap of grad of spence have nan at 1.5 < x < 2 "
                  "(a cotangent through a branch of its piecewise definition not taken); "
                  "functrans's jacrev equals JAX's jacfwd, its hessian the closed form "
                  "(test_special.py)")


# at 0 numpy's sin(pi x) / (pi x) loses digits to cancellation within 1e-5: a wider step
@program("sinc", [0.0, -0.45, 0.8, 1.7], fd_eps=1e-3)
def _sinc(lib):
    return lib.numpy.sinc


@program("betainc_x", UNIT)
def _betainc_x(lib):
    return lambda x: lib.special.betainc(np.array([0.7, 1.5, 2.5, 4.0]),
                                         np.array([1.2, 0.8, 3.0, 2.2]), x)


@program("betainc_a", [0.7, 1.5, 2.5, 4.0], fd=False)
def _betainc_a(lib):
    return lambda a: lib.special.betainc(a, np.array([1.2, 0.8, 3.0, 2.2]), np.array(UNIT))


@program("polygamma_x", [0.35, 1.3, 2.7, 4.6])
def _polygamma_x(lib):
    # JAX takes the order as an integer array (it has no derivative in it)
    return lambda x: lib.special.polygamma(np.array([1, 2, 1, 3]), x)


# --- stats -----------------------------------------------------------------------------------

def stat(name, dist, fname, x, *args, at=0, **kw):
    """A program calling stats.<dist>.<fname> with the point as argument number `at` (0: x)
    and the other arguments fixed."""
    def build(lib):
        fn = getattr(getattr(lib.stats, dist), fname)

        def f(v):
            full = [np.asarray(a, np.float64) for a in args]
            full.insert(at, v)
            return fn(*full)
        return f
    PROGRAMS[name] = Program(build, list(map(float, x)), **kw)


for _f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    stat(f"norm.{_f}", "norm", _f, [-4.0, -0.6, 0.45, 2.5], 0.3, 1.7)
    stat(f"gamma.{_f}", "gamma", _f, [0.4, 1.3, 2.7, 6.0], [0.8, 1.5, 2.5, 4.0], -0.1, 1.3)
    stat(f"beta.{_f}", "beta", _f, [0.05, 0.3, 0.55, 0.91], [0.7, 1.5, 2.5, 4.0],
         [1.2, 0.8, 3.0, 2.2])
    stat(f"chi2.{_f}", "chi2", _f, [0.4, 1.3, 2.7, 6.0], [1.5, 3.0, 4.0, 7.0])
    stat(f"expon.{_f}", "expon", _f, [0.4, 1.3, 2.7, 6.0], 0.1, 1.6)
    stat(f"cauchy.{_f}", "cauchy", _f, REAL, 0.2, 1.4)
for _f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"):
    stat(f"logistic.{_f}", "logistic", _f, UNIT if _f in ("ppf", "isf") else REAL, 0.2, 1.4)
for _f in ("ppf", "isf"):
    stat(f"norm.{_f}", "norm", _f, UNIT, 0.3, 1.7)
    stat(f"cauchy.{_f}", "cauchy", _f, UNIT, 0.2, 1.4)
stat("expon.ppf", "expon", "ppf", UNIT, 0.1, 1.6)
for _f in ("logpdf", "pdf", "cdf", "ppf"):
    stat(f"uniform.{_f}", "uniform", _f, [-0.5, 0.3, 1.1, 1.9] if _f != "ppf" else UNIT,
         -1.0, 3.0)
for _f in ("logpdf", "pdf", "cdf"):
    stat(f"laplace.{_f}", "laplace", _f, REAL, 0.2, 1.4)
for _f in ("logpdf", "pdf"):
    stat(f"t.{_f}", "t", _f, REAL, [1.5, 3.0, 4.5, 8.0], 0.3, 1.2)
    stat(f"t.{_f}.df", "t", _f, [1.5, 3.0, 4.5, 8.0], REAL, 0.3, 1.2, at=1)
stat("norm.logpdf.scale", "norm", "logpdf", [0.5, 1.1, 2.0, 3.5], REAL, 0.3, at=2)
stat("norm.logcdf.loc", "norm", "logcdf", REAL, [-1.0, 0.5, 1.5, 2.0], 1.3, at=1)
stat("gamma.logpdf.a", "gamma", "logpdf", [0.8, 1.5, 2.5, 4.0], [0.4, 1.3, 2.7, 6.0], at=1)
stat("gamma.cdf.a", "gamma", "cdf", [0.8, 1.5, 2.5, 4.0], [0.4, 1.3, 2.7, 6.0], at=1,
     fd_order=1)
stat("gamma.logpdf.scale", "gamma", "logpdf", [0.5, 1.1, 2.0, 3.5], [0.4, 1.3, 2.7, 6.0],
     2.0, 0.0, at=3)
stat("beta.logpdf.a", "beta", "logpdf", [0.7, 1.5, 2.5, 4.0], UNIT, [1.2, 0.8, 3.0, 2.2], at=1)
stat("chi2.logpdf.df", "chi2", "logpdf", [1.5, 3.0, 4.0, 7.0], [0.4, 1.3, 2.7, 6.0], at=1)
stat("poisson.logpmf.mu", "poisson", "logpmf", [0.4, 1.3, 2.7, 6.0], [0.0, 1.0, 3.0, 5.0], at=1)
stat("poisson.pmf.mu", "poisson", "pmf", [0.4, 1.3, 2.7, 6.0], [0.0, 1.0, 3.0, 5.0], at=1)
stat("poisson.cdf.mu", "poisson", "cdf", [0.4, 1.3, 2.7, 6.0], [0.0, 1.0, 3.0, 5.0], at=1)
stat("expon.logpdf.scale", "expon", "logpdf", [0.5, 1.1, 2.0, 3.5], [0.4, 1.3, 2.7, 6.0], 0.1,
     at=2)
stat("laplace.logpdf.scale", "laplace", "logpdf", [0.5, 1.1, 2.0, 3.5], REAL, 0.2, at=2)
stat("cauchy.logpdf.loc", "cauchy", "logpdf", [-1.0, 0.5, 1.5, 2.0], REAL, 1.4, at=1)
stat("logistic.logpdf.loc", "logistic", "logpdf", [-1.0, 0.5, 1.5, 2.0], REAL, 1.4, at=1)
stat("uniform.logpdf.scale", "uniform", "logpdf", [2.0, 2.5, 3.0, 4.0], [-0.5, 0.3, 1.1, 0.9],
     -1.0, at=2)

_ALPHA = [1.5, 2.0, 3.5]


@program("dirichlet.logpdf.alpha", _ALPHA)
def _dirichlet_alpha(lib):
    return lambda a: lib.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a)


@program("dirichlet.logpdf.x", [0.2, 0.3, 0.5], fd=False)
def _dirichlet_x(lib):
    return lambda x: lib.stats.dirichlet.logpdf(x, np.array(_ALPHA))


@program("dirichlet.pdf.x", [0.2, 0.3], fd=False)
def _dirichlet_pdf_x(lib):
    return lambda x: lib.stats.dirichlet.pdf(x, np.array(_ALPHA))


_COV = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]]
_MEAN = [0.1, -0.2, 0.3]


@program("multivariate_normal.logpdf.x", [0.5, -1.0, 0.8])
def _mvn_x(lib):
    return lambda x: lib.stats.multivariate_normal.logpdf(x, np.array(_MEAN), np.array(_COV))


@program("multivariate_normal.pdf.mean", _MEAN)
def _mvn_mean(lib):
    return lambda m: lib.stats.multivariate_normal.pdf(np.array([[0.5, -1.0, 0.8],
                                                                 [0.0, 0.3, -0.4]]),
                                                       m, np.array(_COV))


# --- observing -------------------------------------------------------------------------------

def _jsonable(x):
    x = np.asarray(x, np.float64)
    return {"shape": list(x.shape), "data": [float(v) for v in x.ravel()]}


def from_json(rec):
    return np.asarray(rec["data"], np.float64).reshape(rec["shape"])


def observe(lib, prog: Program, kinds=KINDS) -> dict:
    """What `prog` gives under `lib`: each kind's array (as JSON), or the error it raised."""
    f = prog.build(lib)
    x = np.asarray(prog.x, np.float64)
    xs = np.stack([x, x[::-1]])

    def total(v):
        return lib.numpy.sum(f(v))
    runs = {"value": lambda: f(x), "jacfwd": lambda: lib.jacfwd(f)(x),
            "jacrev": lambda: lib.jacrev(f)(x), "hessian": lambda: lib.hessian(total)(x),
            "vmap_grad": lambda: lib.vmap(lib.grad(total))(xs)}
    out = {}
    for kind in kinds:
        try:
            out[kind] = _jsonable(runs[kind]())
        except Exception as e:   # a refused derivative is part of what the program does
            out[kind] = {"error": type(e).__name__, "message": str(e).splitlines()[0][:200]}
    return out


def jax_lib():
    """jax's scipy.special, scipy.stats and numpy (float64 enabled), or None without JAX."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    import jax.numpy
    import jax.scipy.special
    import jax.scipy.stats
    return types.SimpleNamespace(special=jax.scipy.special, stats=jax.scipy.stats,
                                 numpy=jax.numpy, jacfwd=jax.jacfwd, jacrev=jax.jacrev,
                                 hessian=jax.hessian, vmap=jax.vmap, grad=jax.grad,
                                 version=jax.__version__)


def functrans_lib():
    import functrans as ft
    import functrans.numpy as fnp
    import functrans.scipy.special
    import functrans.scipy.stats
    return types.SimpleNamespace(special=functrans.scipy.special, stats=functrans.scipy.stats,
                                 numpy=fnp, jacfwd=ft.jacfwd, jacrev=ft.jacrev,
                                 hessian=ft.hessian, vmap=ft.vmap, grad=ft.grad)


def jax_has(lib, name) -> bool:
    """Whether JAX defines the function a program calls (t.cdf, for one, it does not)."""
    prog = PROGRAMS[name]
    try:
        prog.build(lib)
    except AttributeError:
        return False
    return True


def record(names=(), path=FIXTURES) -> None:
    """Record every program JAX can run, or with `names` only those (keeping the others)."""
    lib = jax_lib()
    if lib is None:
        raise SystemExit("recording needs JAX installed")
    names = list(names) or [n for n in PROGRAMS if jax_has(lib, n)]
    unknown = sorted(set(names) - set(PROGRAMS))
    if unknown:
        raise SystemExit(f"no such programs: {unknown}")
    programs = {}
    if len(names) < len(PROGRAMS) and path.exists():
        with open(path) as f:
            old = json.load(f)
        if old["jax_version"] != lib.version:
            raise SystemExit(f"fixtures come from jax {old['jax_version']}, this is "
                             f"{lib.version}: re-record them all")
        programs = {n: r for n, r in old["programs"].items() if n in PROGRAMS}
    programs.update({name: observe(lib, PROGRAMS[name]) for name in names})
    with open(path, "w") as f:
        json.dump({"jax_version": lib.version, "programs": programs}, f, indent=0,
                  sort_keys=True, allow_nan=True)
        f.write("\n")
    print(f"wrote {len(names)} program records to {path}")



if __name__ == "__main__":
    import sys
    record(sys.argv[1:])
