"""Differential operators on collapsed Taylor mode: a weighted sum of K-th directional
derivatives (collapsed_taylor), the weighted Laplacian, the biharmonic, any linear combination
of partial derivatives given by multi-indices, and their stochastic estimators.

Inputs are addressed as in ft.laplacian: the entries of the arguments at `argnums`, flattened
and concatenated in order (n of them); a direction is a vector of n entries, a multi-index a
tuple of n orders.
"""

from __future__ import annotations

import functools
import itertools
from math import factorial

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.ownership import unaliased_tree
from functrans.core.pytree_fun import as_value, normalize_argnums
from functrans.core.symbolic import Zero
from functrans.errors import ShapeError
from functrans.primitives.elementwise import add, mul
from functrans.primitives.layout import broadcast_to, reshape
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape_ops import slice_
from functrans.transforms.taylor.collapsed import collapsed_flat
from functrans.transforms.vjp import check_differentiable
from functrans.tree_util import tree_flatten, tree_unflatten


# --- running f on the flattened inputs ------------------------------------------------------

def _run(f, args, argnums, directions, order, weights, fname):
    """f under the collapsed trace with directions (R, n) over the flat differentiated
    entries. Returns ([(primal, lower, top)] per output leaf, output tree)."""
    nums = normalize_argnums(argnums, len(args), fname)
    dyn = [args[i] for i in nums]
    check_differentiable(dyn, nums, fname)
    leaves, in_tree = tree_flatten(tuple(dyn))
    leaves = [as_value(x, fname) for x in leaves]
    avals = [get_aval(x) for x in leaves]
    n = sum(a.size for a in avals)
    if isinstance(directions, list | tuple | np.ndarray):
        directions = np.asarray(directions, np.result_type(*[a.dtype for a in avals]))
    directions = as_value(directions, fname)
    d_aval = get_aval(directions)
    if len(d_aval.shape) != 2 or d_aval.shape[1] != n or d_aval.shape[0] == 0:
        raise ShapeError(f"{fname}: directions of shape {d_aval.shape}, but the arguments at "
                         f"argnums={argnums!r} have {n} entries; pass an (R, {n}) array, one "
                         "row per direction (R >= 1), over their flattened entries.")
    dirs, start = [], 0
    for a in avals:
        piece = directions if a.size == n else slice_(directions, (0, start),
                                                      (d_aval.shape[0], start + a.size))
        dirs.append(reshape(piece, (d_aval.shape[0], *a.shape)))
        start += a.size
    out_store = []

    def fun_flat(*xs):
        full = list(args)
        for i, a in zip(nums, tree_unflatten(in_tree, list(xs))):
            full[i] = a
        out_leaves, out_tree = tree_flatten(f(*full))
        out_store.append(out_tree)
        return [as_value(o, fname) for o in out_leaves]

    res = collapsed_flat(fun_flat, leaves, dirs, order, weights)
    return res, out_store[0], n


def _dense(t, aval):
    if type(t) is Zero:
        return broadcast_to(np.zeros((), aval.dtype), aval.shape)
    return t


def _input_size(args, argnums, fname):
    nums = normalize_argnums(argnums, len(args), fname)
    leaves, _ = tree_flatten(tuple(args[i] for i in nums))
    return sum(get_aval(as_value(x, fname)).size for x in leaves)


def _combined(res, order, weights_by_order, c0):
    """Per output: c0 f + sum_k sum_r w_(k,r) y_(k,r), the top (order K) already summed."""
    out = []
    for y, lower, top in res:
        aval = get_aval(y)
        acc = None if c0 == 0 else mul(y, np.array(c0, aval.dtype))
        for k, w in weights_by_order.items():
            if k == order:
                term = top if type(top) is not Zero else None
            else:
                t = lower[k - 1]
                term = None if type(t) is Zero else dot_general(
                    np.asarray(w, aval.dtype), t, (((0,), (0,)), ((), ())))
            if term is not None:
                acc = term if acc is None else add(acc, term)
        out.append(_dense(Zero(aval), aval) if acc is None else acc)
    return out


# --- the collapsed sum -----------------------------------------------------------------------

def _absorbed(directions, weights_by_order, order):
    """Directions scaled by c_r = |w_r|^(1/K) (the signed root for odd K): D^K f[c v] =
    c^K D^K f[v], so where the top weights are all positive (or K is odd) the collapsed sum
    is a plain sum, with no product by the weights over the (points, directions, ...)
    blocks. Lower orders' weights become w_(k,r) / c_r^k. Returns (directions, weights by
    order, the top weights left: None when all are one)."""
    w = np.asarray(weights_by_order[order], np.float64)
    c = np.where(w != 0, np.abs(w) ** (1.0 / order), 1.0)
    if order % 2:
        c = np.where(w < 0, -c, c)
    residual = np.where(w == 0, 0.0, np.sign(w) if order % 2 == 0 else 1.0)
    scale = c[:, None]
    if isinstance(directions, np.ndarray):
        scaled = directions * scale.astype(directions.dtype)
    else:
        scaled = mul(directions, scale.astype(get_aval(directions).dtype))
    out = {k: residual if k == order else np.asarray(wk, np.float64) / c ** k
           for k, wk in weights_by_order.items()}
    return scaled, out, None if np.all(residual == 1.0) else residual


def collapsed_taylor(f, directions, order: int, *, weights=None, argnums=0):
    """sum_r w_r d^K f(x)[v_r, .., v_r] for the rows v_r of `directions` (R, n) by one forward
    pass of collapsed Taylor mode (weights default to ones). Composes with vmap, jit, grad.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> lap = ft.collapsed_taylor(lambda x: fnp.sum(x ** 4), np.eye(2), 2)
    >>> float(lap(np.array([1.0, 2.0])))     # 12 (1 + 4)
    60.0
    """
    if not isinstance(order, int | np.integer) or order < 1:
        raise ValueError(f"collapsed_taylor: order={order!r}; pass a positive int (2 for a "
                         "Laplacian, 4 for a biharmonic).")

    @functools.wraps(f)
    def wrapped(*args):
        w = None if weights is None else np.asarray(weights, np.float64)
        if w is not None and w.shape != (get_aval(directions).shape[0],):
            raise ShapeError(f"collapsed_taylor: weights of shape {w.shape} for "
                             f"{get_aval(directions).shape[0]} directions; pass one weight "
                             "per row of directions.")
        d = directions
        if isinstance(d, list | tuple):
            d = np.asarray(d, np.float64)
        if len(get_aval(d).shape) != 2:
            n = _input_size(args, argnums, "collapsed_taylor")
            raise ShapeError(f"collapsed_taylor: directions of shape {get_aval(d).shape}; pass "
                             f"an (R, {n}) array, one row per direction, over the flattened "
                             "entries of the arguments at argnums.")
        r = get_aval(d).shape[0]
        d, _, top = _absorbed(d, {order: np.ones(r) if w is None else w}, order)
        res, out_tree, _ = _run(f, args, argnums, d, order, top, "collapsed_taylor")
        tops = [_dense(top, get_aval(y)) for y, _, top in res]
        return unaliased_tree(tree_unflatten(out_tree, tops), args)

    return wrapped


# --- named operators -------------------------------------------------------------------------

def weighted_laplacian(f, diffusion, argnums=0):
    """sum_ij D_ij d2f/dx_i dx_j = tr(D H) for a symmetric diffusion matrix D (n, n), by
    collapsed Taylor mode along D's eigenvectors weighted by its eigenvalues.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> D = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> round(float(ft.weighted_laplacian(lambda x: x[0] * x[1], D)(np.ones(2))), 12)  # 2 D_01
    2.0
    """
    d = np.asarray(diffusion, np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or not np.allclose(d, d.T, rtol=1e-12,
                                                                  atol=1e-14):
        raise ShapeError(f"weighted_laplacian: the diffusion matrix must be square and "
                         f"symmetric, got shape {d.shape}; pass (D + D.T) / 2 (only the "
                         "symmetric part enters tr(D H)).")
    lam, q = np.linalg.eigh(d)
    keep = np.abs(lam) > 1e-14 * max(1.0, float(np.max(np.abs(lam))))
    dirs, w = q[:, keep].T, lam[keep]

    @functools.wraps(f)
    def wrapped(*args):
        n = _input_size(args, argnums, "weighted_laplacian")
        if n != d.shape[0]:
            raise ShapeError(f"weighted_laplacian: a {d.shape} diffusion matrix for "
                             f"{n} input entries; pass an ({n}, {n}) matrix.")
        if not keep.any():
            return collapsed_taylor(f, np.eye(n)[:1], 2, weights=[0.0], argnums=argnums)(*args)
        return collapsed_taylor(f, dirs, 2, weights=w, argnums=argnums)(*args)

    return wrapped


def biharmonic_directions(n):
    """Directions v_r and weights w_r with sum_r w_r D4f[v_r] = sum_ij d4f/dx_i^2 dx_j^2, the
    fewest of three exact rules:
      n = 2       three lines 60 degrees apart: sum_k (u_k . x)^4 = 9/8 |x|^4
      signs       the 2^(n-1) vectors of +-1 (up to sign) average to f_iiii + 6 f_iijj, plus
                  the n axes: 1/3 of that + 2/3 sum_i f_iiii
      pairs       D4f[e_i + e_j] + D4f[e_i - e_j] = 2 f_iiii + 12 f_iijj + 2 f_jjjj (i < j),
                  plus the n axes (none for n = 4)."""
    eye = np.eye(n)
    if n == 2:
        th = np.array([0.0, np.pi / 3, 2 * np.pi / 3])
        return np.stack([np.cos(th), np.sin(th)], 1), np.full(3, 8.0 / 9.0)
    dirs, w = [], []
    c_axis = 1.0 - (n - 1) / 3.0
    if abs(c_axis) > 1e-15:
        dirs += list(eye)
        w += [c_axis] * n
    for i, j in itertools.combinations(range(n), 2):
        dirs += [eye[i] + eye[j], eye[i] - eye[j]]
        w += [1.0 / 6.0, 1.0 / 6.0]
    if n >= 3 and 2 ** (n - 1) + n < len(dirs):
        signs = np.array([(1.0, *s) for s in itertools.product((1.0, -1.0), repeat=n - 1)])
        dirs = [*signs, *eye]
        w = [1.0 / (3.0 * len(signs))] * len(signs) + [2.0 / 3.0] * n
    return np.array(dirs), np.array(w)


def biharmonic(f, argnums=0):
    """The biharmonic sum_ij d4f/dx_i^2 dx_j^2 (the Laplacian of the Laplacian) by one pass
    of collapsed fourth-order Taylor mode along n^2 directions (n(n-1) for n = 4).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> round(float(ft.biharmonic(lambda x: x[0] ** 2 * x[1] ** 2)(np.ones(2))), 12)  # 2 f_xxyy
    8.0
    """
    @functools.wraps(f)
    def wrapped(*args):
        n = _input_size(args, argnums, "biharmonic")
        dirs, w = biharmonic_directions(n)
        return collapsed_taylor(f, dirs, 4, weights=w, argnums=argnums)(*args)

    return wrapped


def _compositions(k, m):
    """All tuples of m non-negative ints summing to k."""
    if m == 1:
        return [(k,)]
    return [(i, *rest) for i in range(k, -1, -1) for rest in _compositions(k - i, m - 1)]


def _order_directions(k, alphas, n):
    """Directions (integer vectors) and weights with sum_r w_r D^k f[v_r] = sum_a c_a d^a f,
    for the multi-indices a of order k: the directions are all beta with |beta| = k over the
    variables the a's involve, for which D^k f[beta] = sum_g k!/g! beta^g d^g f is solvable."""
    support = sorted({i for a in alphas for i, e in enumerate(a) if e})
    comps = _compositions(k, len(support))
    m = np.array([[factorial(k) / np.prod([factorial(e) for e in g])
                   * np.prod([float(b) ** e for b, e in zip(beta, g)])
                   for g in comps] for beta in comps])
    c = np.zeros(len(comps))
    for a, coeff in alphas.items():
        c[comps.index(tuple(a[i] for i in support))] += coeff
    w = np.linalg.solve(m.T, c)
    dirs = []
    for beta in comps:
        v = np.zeros(n)
        v[support] = beta
        dirs.append(v)
    keep = np.abs(w) > 1e-13 * max(1.0, float(np.max(np.abs(w))))
    return [d for d, kp in zip(dirs, keep) if kp], list(w[keep])


def _weights_over(dirs, k, alphas):
    """Weights w over `dirs` with sum_r w_r D^k f[v_r] = sum_a c_a d^a f exactly (least
    squares, accepted at rounding level), or None when the directions do not span it."""
    support = sorted({i for a in alphas for i, e in enumerate(a) if e}
                     | {i for d in dirs for i, e in enumerate(d) if e})
    comps = _compositions(k, len(support))
    m = np.array([[factorial(k) / np.prod([factorial(e) for e in g])
                   * np.prod([float(d[i]) ** e for i, e in zip(support, g)])
                   for g in comps] for d in dirs])
    c = np.zeros(len(comps))
    for a, coeff in alphas.items():
        c[comps.index(tuple(a[i] for i in support))] += coeff
    w = np.linalg.lstsq(m.T, c, rcond=None)[0]
    if np.max(np.abs(m.T @ w - c)) > 1e-10 * max(1.0, float(np.max(np.abs(c)))):
        return None
    w[np.abs(w) < 1e-13 * max(1.0, float(np.max(np.abs(w))))] = 0.0
    return w


def operator_plan(terms, n, fname):
    """(directions (R, n), max order K, {k: weights over the R directions}, c0)."""
    items = list(terms.items()) if isinstance(terms, dict) else list(terms)
    by_order, c0 = {}, 0.0
    for alpha, coeff in items:
        alpha = tuple(int(e) for e in alpha)
        if len(alpha) != n or any(e < 0 for e in alpha):
            raise ShapeError(f"{fname}: multi-index {alpha} for {n} input entries; each needs "
                             f"{n} non-negative orders, one per flattened input entry (u_xt "
                             "of u(t, x) is (1, 1), u_xx is (0, 2)).")
        k = sum(alpha)
        if k == 0:
            c0 += float(coeff)
            continue
        by_order.setdefault(k, {})
        by_order[k][alpha] = by_order[k].get(alpha, 0.0) + float(coeff)
    if not by_order:
        raise ValueError(f"{fname}: no derivative among the terms {terms!r}; give at least "
                         "one multi-index of positive order.")
    # highest order first; a lower order reuses the directions already chosen when their
    # k-th derivatives span its terms (u_t from the directions of u_xxx and u_xxt), and adds
    # its own only when they do not
    dirs, weights = [], {}
    for k, alphas in sorted(by_order.items(), reverse=True):
        w = _weights_over(dirs, k, alphas) if dirs else None
        if w is None:
            for d in _order_directions(k, alphas, n)[0]:
                if not any(np.array_equal(d, e) for e in dirs):
                    dirs.append(d)
            w = _weights_over(dirs, k, alphas)
        weights[k] = w
    for k in weights:                               # directions added after an order's solve
        weights[k] = np.concatenate([weights[k], np.zeros(len(dirs) - len(weights[k]))])
    return np.array(dirs), max(by_order), weights, c0


def differential_operator(f, terms, argnums=0):
    """sum_a c_a d^a f for multi-indices a (one order per flattened input entry) by one
    forward pass of collapsed Taylor mode at the highest order: `terms` maps each multi-index
    to its coefficient (a dict, or (multi-index, coefficient) pairs). Lower orders come from
    the lower terms of the same pass.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> u = lambda z: fnp.sin(z[1]) * z[0] ** 2              # z = (t, x)
    >>> L = ft.differential_operator(u, {(1, 0): 1.0, (0, 2): -0.4, (1, 1): 2.0})
    >>> z = np.array([1.0, 0.5])
    >>> bool(np.isclose(L(z), 2 * np.sin(0.5) + 0.4 * np.sin(0.5) + 4 * np.cos(0.5)))
    True
    """
    @functools.wraps(f)
    def wrapped(*args):
        n = _input_size(args, argnums, "differential_operator")
        dirs, order, weights, c0 = operator_plan(terms, n, "differential_operator")
        dirs, weights, top = _absorbed(dirs, weights, order)
        res, out_tree, _ = _run(f, args, argnums, dirs, order, top, "differential_operator")
        return unaliased_tree(tree_unflatten(out_tree, _combined(res, order, weights, c0)),
                              args)

    return wrapped


# --- stochastic estimators -------------------------------------------------------------------

def _random_directions(key, num_samples, n, distribution, fname):
    from functrans import random
    if distribution == "rademacher":
        bits = random.bernoulli(key, 0.5, (num_samples, n))
        return 2.0 * bits.astype(np.float64) - 1.0
    if distribution == "gaussian":
        return random.normal(key, (num_samples, n), np.float64)
    raise ValueError(f"{fname}: distribution={distribution!r}; use 'rademacher' or "
                     "'gaussian'.")


def laplacian_estimate(f, key, num_samples: int, *, diffusion=None,
                       distribution: str = "rademacher", argnums=0):
    """Unbiased estimate of the Laplacian (or of tr(D H) for a positive semi-definite
    diffusion D) from `num_samples` random directions v with E[v v^T] = I (Hutchinson; with D,
    v = D^(1/2) z), by one collapsed second-order pass (STDE-style).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> est = ft.laplacian_estimate(lambda x: fnp.sum(x * x), ft.random.key(0), 4)
    >>> float(est(np.ones(3)))       # exact for a quadratic with Rademacher directions
    6.0
    """
    root = None
    if diffusion is not None:
        d = np.asarray(diffusion, np.float64)
        lam, q = np.linalg.eigh((d + d.T) / 2)
        if lam.min() < -1e-12 * max(1.0, abs(lam).max()):
            raise ValueError("laplacian_estimate: the diffusion matrix has a negative "
                             f"eigenvalue ({lam.min():.3g}); a random-direction estimate "
                             "needs D positive semi-definite. Use weighted_laplacian (exact) "
                             "instead.")
        root = q * np.sqrt(np.clip(lam, 0.0, None))

    @functools.wraps(f)
    def wrapped(*args):
        n = _input_size(args, argnums, "laplacian_estimate")
        z = _random_directions(key, num_samples, n, distribution, "laplacian_estimate")
        v = z if root is None else dot_general(z, root, (((1,), (1,)), ((), ())))
        w = np.full(num_samples, 1.0 / num_samples)
        return collapsed_taylor(f, v, 2, weights=w, argnums=argnums)(*args)

    return wrapped


def biharmonic_estimate(f, key, num_samples: int, argnums=0):
    """Unbiased estimate of the biharmonic from Gaussian directions: E[D4f[v]] = 3 Delta^2 f
    for v ~ N(0, I), so the estimate is the mean of D4f[v_s] / 3, by one collapsed pass.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> est = ft.biharmonic_estimate(lambda x: fnp.sum(x ** 4), ft.random.key(0), 2000)
    >>> bool(abs(float(est(np.ones(2))) - 48.0) < 5.0)      # exact value 2 * 24
    True
    """
    @functools.wraps(f)
    def wrapped(*args):
        n = _input_size(args, argnums, "biharmonic_estimate")
        v = _random_directions(key, num_samples, n, "gaussian", "biharmonic_estimate")
        w = np.full(num_samples, 1.0 / (3.0 * num_samples))
        return collapsed_taylor(f, v, 4, weights=w, argnums=argnums)(*args)

    return wrapped
