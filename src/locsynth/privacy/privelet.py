"""Privelet for nominal data (Xiao, Wang and Gehrke, "Differential privacy via wavelet
transforms", ICDE 2010 / TKDE 2011, §5): Laplace noise on the nominal wavelet coefficients of a
vector of counts over a hierarchy (categories > sub-categories > items; a grid's quad-tree when
there are no categories, see privacy/hierarchy.py, built by Space.hierarchy).

Transform. With s_v the sum of the leaves under node v and f_p the fanout of node p, the
coefficient of the root is s_root and that of any other node v with parent p is
s_v - s_p / f_p (zero, and not released, when f_p = 1).

Weights and generalized sensitivity. Coefficient c gets weight W(c) = 1 for the root and
W(c) = f_p / (2 f_p - 2) for a child of p. Changing one leaf by x changes the root by x and, at
each ancestor p with f_p >= 2, the child on the leaf's path by x (1 - 1/f_p) and its f_p - 1
siblings by -x / f_p each: a weighted change of W (x (f_p - 1) / f_p) 2 = x. Summed over the path,
sum_c W(c) |change of c| <= rho ||change of the leaves||_1 with rho = 1 + the largest number of
ancestors of fanout >= 2 on a leaf's path (the paper's h for a balanced tree), whatever the leaves
changed. Hence the weighted coefficients W(c) c have L1 sensitivity rho Delta when the counts have
Delta, and Laplace(rho Delta / epsilon) on them, i.e. Laplace(lambda / W(c)) on c with
lambda = rho Delta / epsilon, is epsilon-DP (the paper's Theorem 3). The noise is OpenDP's
(laplace.laplace on the weighted coefficients), so the ledger records OpenDP's privacy map.

Reconstruction (post-processing). The children of every node have coefficients that sum to zero;
their noisy ones are shifted by their mean so that they do again (the paper's mean subtraction),
and the leaves follow top-down: s_root = c_root, s_v = c_v + s_p / f_p.

Accuracy against Laplace on the leaves (what paper 000's Figure 8 compares). A node v just below
the root (a top-level category of n_v leaves) is read as s_v = c_v + s_root / F with F the root's
fanout, so after mean subtraction

    Var(s_v) = 2 (lambda / W)^2 (1 - 1/F) + 2 lambda^2 / F^2,   W = F / (2F - 2),

against 2 n_v (Delta / epsilon)^2 for Laplace(Delta / epsilon) on each of its leaves. Privelet is
the more accurate for that category only when n_v > rho^2 (4 (F - 1)^3 / F^3 + 1 / F^2): with
rho = 4 (root > category > sub-category > POI) that is 28 leaves for F = 4 and 45 for F = 9.
Paper 000 reports Privelet "much" more accurate on 100 Tokyo POIs in 4 categories (Table 2);
with rho in the noise, as Theorem 3 of Xiao et al. requires, the two are within about 10 % of
each other on that shape (larger categories gain, smaller lose), and on Foursquare NYC's 9 top
levels of about 11 POIs each Laplace is about twice as accurate. Without rho (Lap(lambda / W)
with lambda = Delta / epsilon) the figure's gap appears, but the release is then only
rho epsilon-DP; tests/test_colocation_dp.py catches that reading. locsynth keeps rho; the
formula is tested in tests/test_colocation.py.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.errors import InputError
from .hierarchy import Hierarchy
from .laplace import laplace
from .ledger import Ledger
from ..core.validation import check_epsilon, check_sensitivity


def weights(h: Hierarchy) -> np.ndarray:
    """W(c) of every node: 1 for the root, f_p / (2 f_p - 2) for a child of p, 0 where f_p = 1
    (that coefficient is always zero and is not released)."""
    f = h.fanout
    w = np.ones(h.n_nodes)
    child = h.parent >= 0
    fp = f[h.parent[child]].astype(np.float64)
    w[child] = np.where(fp >= 2, fp / np.maximum(2 * fp - 2, 1), 0.0)
    return w


def generalized_sensitivity(h: Hierarchy) -> int:
    """rho: 1 + the largest number of fanout >= 2 ancestors on a leaf's path to the root."""
    branching = (h.fanout >= 2).astype(np.int64)
    count = np.zeros(h.n_nodes, np.int64)
    for d in range(1, int(h.depth.max()) + 1):
        nodes = np.flatnonzero(h.depth == d)
        count[nodes] = count[h.parent[nodes]] + branching[h.parent[nodes]]
    return 1 + int(count[:h.n_leaves].max()) if h.n_leaves else 1


def _ancestors(h: Hierarchy) -> sp.csr_array:
    """(n_leaves, n_nodes) 0/1 matrix: leaf i is under node v (itself included)."""
    rows, cols = [], []
    node = np.arange(h.n_leaves)
    leaf = np.arange(h.n_leaves)
    while node.size:
        rows.append(leaf)
        cols.append(node)
        up = h.parent[node]
        keep = up >= 0
        leaf, node = leaf[keep], up[keep]
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((np.ones(r.size), (r, c)), shape=(h.n_leaves, h.n_nodes))


def coefficients(counts, h: Hierarchy) -> np.ndarray:
    """The nominal wavelet coefficients of ``counts`` (..., n_leaves) -> (..., n_nodes)."""
    x = np.asarray(counts, np.float64)
    if x.shape[-1:] != (h.n_leaves,):
        raise InputError(f"counts have {x.shape[-1] if x.ndim else 0} entries along the last axis; the "
                         f"hierarchy has {h.n_leaves} leaves")
    flat = x.reshape(-1, h.n_leaves)
    s = np.asarray(flat @ _ancestors(h))
    c = s.copy()
    child = np.flatnonzero(h.parent >= 0)
    p = h.parent[child]
    c[:, child] = s[:, child] - s[:, p] / h.fanout[p]
    c[:, weights(h) == 0] = 0.0
    return c.reshape(x.shape[:-1] + (h.n_nodes,))


def reconstruct(coefs, h: Hierarchy) -> np.ndarray:
    """Leaf counts from (noisy) coefficients (..., n_nodes): siblings' coefficients shifted to sum
    to zero (mean subtraction), then s_v = c_v + s_p / f_p from the root down."""
    c = np.asarray(coefs, np.float64)
    flat = c.reshape(-1, h.n_nodes).copy()
    f = h.fanout
    child = np.flatnonzero(h.parent >= 0)
    p = h.parent[child]
    group_sum = np.zeros_like(flat)
    np.add.at(group_sum.T, p, flat[:, child].T)
    flat[:, child] -= group_sum[:, p] / f[p]
    s = np.zeros_like(flat)
    s[:, h.root] = flat[:, h.root]
    for d in range(1, int(h.depth.max()) + 1):
        nodes = np.flatnonzero(h.depth == d)
        up = h.parent[nodes]
        s[:, nodes] = flat[:, nodes] + s[:, up] / f[up]
    return s[:, :h.n_leaves].reshape(c.shape[:-1] + (h.n_leaves,))


def noisy_coefficients(counts, h: Hierarchy, epsilon: float, sensitivity: float, *, ledger: Ledger | None = None,
                       unit: str = "user", saw: str = "", assumptions: str = "") -> np.ndarray:
    """The mechanism proper: coefficients plus Laplace(rho sensitivity / (epsilon W(c))), drawn by
    OpenDP's Laplace on the weighted coefficients W(c) c (module docstring); ``sensitivity`` is
    the L1 sensitivity of all of ``counts`` (every row of a matrix together)."""
    eps, delta_1 = check_epsilon(epsilon), check_sensitivity(sensitivity)
    w = weights(h)
    released = w > 0
    c = coefficients(counts, h)
    out = np.zeros_like(c)
    rho = generalized_sensitivity(h)
    spent = Ledger()
    out[..., released] = laplace(c[..., released] * w[released], eps, rho * delta_1, ledger=spent) / w[released]
    if ledger is not None:
        ledger.record("privelet", spent.spends[0].epsilon, 0.0, delta_1, unit, saw,
                      (assumptions + "; " if assumptions else "")
                      + f"hierarchy of {h.n_leaves} leaves, generalized sensitivity rho = {rho}")
    return out


def privelet(counts, h: Hierarchy, epsilon: float, sensitivity: float, *, ledger: Ledger | None = None,
             unit: str = "user", saw: str = "", assumptions: str = "") -> np.ndarray:
    """Privelet: noisy leaf counts of ``counts`` (..., n_leaves) under ``h``, epsilon-DP for an L1
    ``sensitivity`` of the whole array (module docstring)."""
    return reconstruct(noisy_coefficients(counts, h, epsilon, sensitivity, ledger=ledger, unit=unit, saw=saw,
                                          assumptions=assumptions), h)


def top_level_variance(h: Hierarchy, epsilon: float, sensitivity: float) -> np.ndarray:
    """Variance of Privelet's estimate of each root child's leaf sum (module docstring), in the
    order of the root's children (node ids ascending); Laplace on the leaves gives
    2 n_v (sensitivity / epsilon)^2 for the same sum."""
    eps, delta_1 = check_epsilon(epsilon), check_sensitivity(sensitivity)
    lam = generalized_sensitivity(h) * delta_1 / eps
    F = int(h.fanout[h.root])
    children = np.flatnonzero(h.parent == h.root)
    if F < 2:                                            # the child's coefficient is not released
        return np.full(children.size, 2 * lam ** 2)
    W = F / (2 * F - 2)
    return np.full(children.size, 2 * (lam / W) ** 2 * (1 - 1 / F) + 2 * lam ** 2 / F ** 2)
