"""Programs over numpy.linalg and scipy.linalg, run with JAX (float64 enabled) and with
functrans, and the record of JAX's results in linalg_jax_fixtures.json, which
test_linalg_jax.py compares functrans against (and live JAX too, when installed). Re-record with
JAX installed: `python tests/functrans_numpy/linalg_programs.py`.

Each program is f(m, sl, x): `m` is functrans.numpy or jax.numpy, `sl` functrans.scipy.linalg
or jax.scipy.linalg, `x` one float64 array; it returns an array. Recorded for each: the value,
jacfwd and jacrev of f, and grad, hessian and vmap-of-grad of the scalar sum(f(x) * W) for a
fixed W. Where a decomposition's factors are unique only up to signs, the program returns what
the signs cancel in. Inputs keep every derivative well defined: separated eigenvalues and
singular values, no pivot ties, invertible matrices.
"""

from __future__ import annotations

import json
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg_jax_fixtures.json")


def _rng(seed):
    return np.random.default_rng(seed)


def general(shape, seed=0):
    return _rng(seed).normal(size=shape)


def invertible(n, seed=0):
    return _rng(seed).uniform(-1.0, 1.0, (n, n)) + 3.0 * np.eye(n)


def symmetric(n, seed=0):
    """Q diag(w) Q^T with eigenvalues -1.3, 0.4, 1.7, 3.1, ... (well separated)."""
    q = np.linalg.qr(_rng(seed).normal(size=(n, n)))[0]
    w = np.array([-1.3, 0.4, 1.7, 3.1, 4.6])[:n]
    return (q * w) @ q.T


def spd(n, seed=0):
    b = _rng(seed).normal(size=(n, n))
    return b @ b.T / n + np.eye(n)


def spread(m, n, seed=0):
    """Q1 diag(s) Q2^T with singular values 1.1, 2.3, 3.6, 4.2 (well separated)."""
    r = _rng(seed)
    k = min(m, n)
    q1 = np.linalg.qr(r.normal(size=(m, m)))[0][:, :k]
    q2 = np.linalg.qr(r.normal(size=(n, n)))[0][:, :k]
    return (q1 * np.array([4.2, 3.6, 2.3, 1.1])[:k]) @ q2.T


B3 = general((3, 2), 7)
V3 = general((3,), 8)
C4 = general((4, 3), 9)


def _sym(m, a):
    return (a + a.T) / 2


def _cat(m, *xs):
    return m.concatenate([m.ravel(x) for x in xs])


# name -> (program, argument)
PROGRAMS = {
    # numpy.linalg
    "svd_values": (lambda m, sl, a: m.linalg.svd(a, compute_uv=False), spread(4, 3)),
    "svd_thin": (lambda m, sl, a: (lambda u, s, vt: _cat(m, s, u * u, vt * vt, u @ vt))(
        *m.linalg.svd(a, full_matrices=False)), spread(3, 4, 1)),
    "svdvals_stack": (lambda m, sl, a: m.linalg.svd(m.stack([a, 2 * a + 1]), compute_uv=False),
                      spread(3, 2, 2)),
    "qr_reduced": (lambda m, sl, a: (lambda q, r: _cat(m, q * q, r * r, q @ r))(
        *m.linalg.qr(a)), spread(4, 3, 3)),
    "eigh_lower": (lambda m, sl, a: (lambda w, v: _cat(m, w, v * v))(
        *m.linalg.eigh(_sym(m, a))), symmetric(4)),
    "eigh_upper": (lambda m, sl, a: (lambda w, v: _cat(m, w, v * v))(
        *m.linalg.eigh(_sym(m, a), UPLO="U")), symmetric(3, 1)),
    "eigvalsh": (lambda m, sl, a: m.linalg.eigvalsh(_sym(m, a)), symmetric(4, 2)),
    "pinv_tall": (lambda m, sl, a: m.linalg.pinv(a), spread(4, 3, 4)),
    "pinv_wide": (lambda m, sl, a: m.linalg.pinv(a), spread(2, 3, 5)),
    "matrix_power_3": (lambda m, sl, a: m.linalg.matrix_power(a, 3), general((3, 3), 6)),
    "matrix_power_neg2": (lambda m, sl, a: m.linalg.matrix_power(a, -2), invertible(3, 7)),
    "matrix_power_5": (lambda m, sl, a: m.linalg.matrix_power(a, 5) / 50.0, invertible(2, 8)),
    "norm_nuc": (lambda m, sl, a: m.linalg.norm(a, "nuc"), spread(4, 3, 9)),
    "norm_2": (lambda m, sl, a: m.linalg.norm(a, 2), spread(3, 4, 10)),
    "norm_neg2": (lambda m, sl, a: m.linalg.norm(a, -2), spread(3, 3, 11)),
    "norm_nuc_axes": (lambda m, sl, a: m.linalg.norm(m.reshape(a, (2, 3, 2)), "nuc",
                                                      axis=(2, 0)), general((12,), 12)),
    "norm_2_axes_keepdims": (lambda m, sl, a: m.linalg.norm(m.reshape(a, (2, 3, 2)), 2,
                                                             axis=(0, 1), keepdims=True),
                             general((12,), 13)),
    "cond_2": (lambda m, sl, a: m.linalg.cond(a), invertible(3, 14)),
    "cond_neg2": (lambda m, sl, a: m.linalg.cond(a, -2), invertible(3, 15)),
    "cond_fro": (lambda m, sl, a: m.linalg.cond(a, "fro"), invertible(3, 16)),
    "cond_1": (lambda m, sl, a: m.linalg.cond(a, 1), invertible(3, 17)),
    "multi_dot": (lambda m, sl, a: m.linalg.multi_dot([V3, a, C4.T, C4 * a[0, 0]]),
                  general((3, 3), 18)),
    "tensorsolve": (lambda m, sl, a: m.linalg.tensorsolve(m.reshape(a, (4, 2, 2)), V3[:1] *
                                                          np.arange(1.0, 5.0)),
                    invertible(4, 19).ravel()),
    "tensorinv": (lambda m, sl, a: m.linalg.tensorinv(m.reshape(a, (2, 2, 4)), ind=2),
                  invertible(4, 20).ravel()),
    "lstsq": (lambda m, sl, a: m.linalg.lstsq(a, C4[:, 0])[0], spread(4, 2, 21)),
    # scipy.linalg
    "solve_triangular_lower": (lambda m, sl, a: sl.solve_triangular(a, B3, lower=True),
                               invertible(3, 22)),
    "solve_triangular_upper_T": (lambda m, sl, a: sl.solve_triangular(a, V3, trans=1),
                                 invertible(3, 23)),
    "solve_triangular_unit": (lambda m, sl, a: sl.solve_triangular(a, B3, trans="T", lower=True,
                                                                   unit_diagonal=True),
                              invertible(3, 24)),
    "solve_triangular_rhs": (lambda m, sl, b: sl.solve_triangular(invertible(3, 25), b),
                             B3),
    "cho_solve_lower": (lambda m, sl, a: sl.cho_solve(sl.cho_factor(_sym(m, a), lower=True), B3),
                        spd(3, 26)),
    "cho_solve_upper": (lambda m, sl, a: sl.cho_solve(sl.cho_factor(_sym(m, a)), V3),
                        spd(3, 27)),
    "cho_factor_upper": (lambda m, sl, a: sl.cho_factor(_sym(m, a))[0], spd(3, 28)),
    "lu_square": (lambda m, sl, a: _cat(m, *sl.lu(a)), invertible(4, 29)),
    "lu_tall": (lambda m, sl, a: _cat(m, *sl.lu(a)), general((5, 3), 30)),
    "lu_wide_permute_l": (lambda m, sl, a: _cat(m, *sl.lu(a, permute_l=True)),
                          general((3, 4), 31)),
    "lu_factor": (lambda m, sl, a: sl.lu_factor(a)[0], general((4, 4), 32)),
    "lu_solve": (lambda m, sl, a: sl.lu_solve(sl.lu_factor(a), B3), general((3, 3), 33)),
    "lu_solve_T": (lambda m, sl, a: sl.lu_solve(sl.lu_factor(a), V3, trans=1),
                   general((3, 3), 34)),
    "expm": (lambda m, sl, a: sl.expm(a), general((3, 3), 35)),
    "expm_large_norm": (lambda m, sl, a: sl.expm(a) / 1e3, 3.0 * general((3, 3), 36)),
    "expm_at_zero": (lambda m, sl, a: sl.expm(a), np.zeros((3, 3))),
    "expm_repeated_eigenvalue": (lambda m, sl, a: sl.expm(a),
                                 np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]])),
    "block_diag": (lambda m, sl, a: sl.block_diag(a, a[:1, :2].T, 2.0 * a[2]),
                   general((3, 3), 37)),
}


# --- complex matrices: the input x is (2, ...) real, z = x[0] + i x[1]; the result is the
# real parts then the imaginary parts, so every recorded derivative is of a real function

def cgeneral(shape, seed=0):
    return _rng(seed).normal(size=(2, *shape))


def cinvertible(n, seed=0):
    return np.stack([invertible(n, seed), general((n, n), seed + 100)])


def chermitian(n, seed=0):
    """U diag(w) U^H with well separated eigenvalues, U unitary (as x[0] + i x[1])."""
    r = _rng(seed)
    u = np.linalg.qr(r.normal(size=(n, n)) + 1j * r.normal(size=(n, n)))[0]
    h = (u * np.array([-1.3, 0.4, 1.7, 3.1, 4.6])[:n]) @ u.conj().T
    return np.stack([h.real, h.imag])


def cspread(m, n, seed=0):
    """U diag(s) V^H with singular values 4.2, 3.6, 2.3, 1.1, U and V with unitary columns."""
    r = _rng(seed)
    k = min(m, n)
    q1 = np.linalg.qr(r.normal(size=(m, m)) + 1j * r.normal(size=(m, m)))[0][:, :k]
    q2 = np.linalg.qr(r.normal(size=(n, n)) + 1j * r.normal(size=(n, n)))[0][:, :k]
    z = (q1 * np.array([4.2, 3.6, 2.3, 1.1])[:k]) @ q2.conj().T
    return np.stack([z.real, z.imag])


ZB3 = general((3, 2), 40) + 1j * general((3, 2), 41)
ZV3 = general((3,), 42) + 1j * general((3,), 43)


def _z(m, x):
    return x[0] + 1j * x[1]


def _ri(m, *ys):
    return _cat(m, *[m.real(y) for y in ys], *[m.imag(y) for y in ys])


def _herm(m, z):
    return (z + m.conj(z).T) / 2


def _eig(m, a, vectors=True):
    """eig as jax.lax.linalg.eig with enable_eigvec_derivs=True under JAX (jax.numpy's eig has
    no eigenvector derivative); numpy.linalg.eig's results otherwise."""
    if m.__name__.startswith("jax"):
        import jax
        out = jax.lax.linalg.eig(a, compute_left_eigenvectors=False,
                                 compute_right_eigenvectors=vectors, enable_eigvec_derivs=True)
        return tuple(out) if vectors else out[0]
    return tuple(m.linalg.eig(a)) if vectors else m.linalg.eigvals(a)


COMPLEX_PROGRAMS = {
    "c_matmul_einsum": (lambda m, sl, x: _ri(m, _z(m, x) @ ZB3, m.einsum("ij,jk->ik", _z(m, x),
                                                                         _z(m, x)),
                                             m.dot(ZV3, _z(m, x)), m.vdot(_z(m, x)[0], ZV3),
                                             m.tensordot(_z(m, x), ZB3, 1)),
                        cgeneral((3, 3), 44)),
    "c_var_std": (lambda m, sl, x: m.concatenate([m.var(_z(m, x), axis=0),
                                                  m.std(_z(m, x), axis=1, ddof=1)]),
                  cgeneral((3, 4), 45)),
    "c_norms": (lambda m, sl, x: m.stack([m.linalg.norm(_z(m, x)), m.linalg.norm(_z(m, x), 1),
                                          m.linalg.norm(_z(m, x), np.inf),
                                          m.linalg.norm(_z(m, x)[0], 3)]),
                cgeneral((3, 3), 46)),
    "c_norm_nuc_2": (lambda m, sl, x: m.stack([m.linalg.norm(_z(m, x), "nuc"),
                                               m.linalg.norm(_z(m, x), 2)]), cspread(4, 3, 47)),
    "c_solve": (lambda m, sl, x: _ri(m, m.linalg.solve(_z(m, x), ZB3)), cinvertible(3, 48)),
    "c_inv": (lambda m, sl, x: _ri(m, m.linalg.inv(_z(m, x))), cinvertible(3, 49)),
    "c_det": (lambda m, sl, x: _ri(m, m.linalg.det(_z(m, x))), cgeneral((3, 3), 50)),
    "c_slogdet": (lambda m, sl, x: (lambda s, l: _ri(m, s, l + 0j))(
        *m.linalg.slogdet(_z(m, x))), cgeneral((3, 3), 51)),
    "c_cholesky": (lambda m, sl, x: _ri(m, m.linalg.cholesky(
        _herm(m, _z(m, x)) + 4.0 * np.eye(3))), chermitian(3, 52)),
    "c_qr": (lambda m, sl, x: _ri(m, *m.linalg.qr(_z(m, x))), cgeneral((4, 3), 53)),
    "c_svd_invariants": (lambda m, sl, x: (lambda u, s, vh: _ri(m, s + 0j, u @ vh,
                                                                  m.abs(u) ** 2 + 0j))(
        *m.linalg.svd(_z(m, x), full_matrices=False)), cspread(4, 3, 54)),
    "c_svd_wide_invariants": (lambda m, sl, x: (lambda u, s, vh: _ri(m, s + 0j, u @ vh))(
        *m.linalg.svd(_z(m, x), full_matrices=False)), cspread(2, 3, 55)),
    "c_svd_factors": (lambda m, sl, x: _ri(m, *m.linalg.svd(_z(m, x), full_matrices=False)),
                      cspread(3, 3, 56)),
    "c_eigh_invariants": (lambda m, sl, x: (lambda w, v: _ri(m, w + 0j, m.abs(v) ** 2 + 0j))(
        *m.linalg.eigh(_herm(m, _z(m, x)))), chermitian(3, 57)),
    "c_eigh_factors": (lambda m, sl, x: _ri(m, *m.linalg.eigh(_herm(m, _z(m, x)))),
                       chermitian(3, 58)),
    "c_pinv": (lambda m, sl, x: _ri(m, m.linalg.pinv(_z(m, x))), cspread(4, 3, 59)),
    "c_lstsq": (lambda m, sl, x: _ri(m, m.linalg.lstsq(_z(m, x), ZB3[:, 0].repeat(2)[:4])[0]),
                cspread(4, 2, 60)),
    "c_expm": (lambda m, sl, x: _ri(m, sl.expm(_z(m, x))), cgeneral((3, 3), 61)),
    "c_eigvals": (lambda m, sl, x: _ri(m, _eig(m, _z(m, x), vectors=False)),
                  cgeneral((3, 3), 62)),
    "c_eig": (lambda m, sl, x: _ri(m, *_eig(m, _z(m, x))), cgeneral((3, 3), 63)),
    "eig_real": (lambda m, sl, a: _ri(m, *_eig(m, a)), general((3, 3), 64)),
    "eigvals_real": (lambda m, sl, a: _ri(m, _eig(m, a, vectors=False)), general((4, 4), 65)),
}
PROGRAMS.update(COMPLEX_PROGRAMS)

# factors whose phases JAX's derivative fixes by a convention (the gauge) that LAPACK's
# values do not follow from point to point: recorded against JAX, not finite differences
GAUGE_DEPENDENT = {"c_svd_factors", "c_eigh_factors"}


def weights(name, out_shape):
    """The fixed W of sum(f(x) * W): drawn from the program's name."""
    seed = sum(map(ord, name))
    return np.random.default_rng(seed).normal(size=out_shape)


def batch_of(x):
    """Two inputs for vmap of grad: x and x moved a little along a fixed direction."""
    return np.stack([x, x + 1e-2 * np.random.default_rng(99).normal(size=np.shape(x))])


def results(ft, m, sl, name):
    """Every recorded result of program `name` under library `ft` (functrans or jax)."""
    fn, x = PROGRAMS[name]
    f = lambda x: fn(m, sl, x)   # noqa: E731
    out_shape = np.shape(f(x))
    w = weights(name, out_shape)
    scalar = lambda x: m.sum(f(x) * w)   # noqa: E731
    grad = ft.grad(scalar)
    return {"value": f(x), "jacfwd": ft.jacfwd(f)(x), "jacrev": ft.jacrev(f)(x),
            "grad": grad(x), "hessian": ft.hessian(scalar)(x),
            "vmap_grad": ft.vmap(grad)(batch_of(x))}


def jax_modules():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    return jax, jnp, jsl


def record() -> None:
    jax, jnp, jsl = jax_modules()
    fixtures = {"jax_version": jax.__version__, "programs": {}}
    for name in PROGRAMS:
        res = results(jax, jnp, jsl, name)
        fixtures["programs"][name] = {k: np.asarray(v, np.float64).tolist()
                                      for k, v in res.items()}
    with open(FIXTURES, "w") as f:
        json.dump(fixtures, f, indent=None, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(PROGRAMS)} program records to {FIXTURES}")


if __name__ == "__main__":
    record()
