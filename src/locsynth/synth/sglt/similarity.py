"""Geographic and semantic similarity of mobility profiles, and the location semantic graph
(paper 002 §IV-B to §IV-D, eqs. 5-10, and Fig. 2's SemanticClustering).

Profiles are visit distributions per time period (:func:`.mobility.visit_profiles`): the
zeroth-order model eq. (10) uses, and the one the authors' tool uses for both similarities.
Eq. (11), on the transition profile, is a quadratic assignment problem the paper only
approximates; it is not computed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.optimize import linear_sum_assignment

#: Weight every location pair starts with in the location graph (the authors' tool), so that the
#: graph of the visited locations is connected.
GRAPH_FLOOR = 1e-8
#: how a mapped pair of locations adds to its edge: the pair's similarity (paper 002 Fig. 2) or
#: that times the pair's matched mass min(pi^r(u), pi^sigma(r)(v)) (the authors' tool)
EDGE_WEIGHTS = ("similarity", "overlap")


def _row(profile: sp.csr_array, i: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = profile.indptr[i], profile.indptr[i + 1]
    return profile.indices[lo:hi], profile.data[lo:hi]


# -- geographic similarity ----------------------------------------------------------------------
def geographic_similarity(pu: tuple[np.ndarray, np.ndarray], pv: tuple[np.ndarray, np.ndarray],
                          ground: np.ndarray | None = None) -> float:
    """sim_G of two visit distributions given as (support, probabilities) (eqs. 2-5, 7).

    .. math:: sim_G(u, v) = 1 - M_d(\\pi(u), \\pi(v)) / z_g

    with the Mallows distance (EMD) :math:`M_d` under the ground distance ``ground`` (an R x R
    matrix, e.g. km between locations) and z_g its largest entry, the largest value M_d can
    take. ``ground`` None is the Hamming distance :math:`1_{r \\ne r'}`, whose EMD has the closed
    form :math:`1 - \\sum_r \\min(\\pi^r(u), \\pi^r(v))` (§IV-C), z_g = 1. EMD is solved exactly
    by POT on the union of the two supports: mass outside it is zero, so no transport plan
    uses other locations.
    """
    su, au = pu
    sv, av = pv
    if ground is None:
        common, iu, iv = np.intersect1d(su, sv, assume_unique=True, return_indices=True)
        return float(np.minimum(au[iu], av[iv]).sum())
    import ot

    zg = float(ground.max())
    if zg <= 0:
        return 1.0
    emd = ot.emd2(au / au.sum(), av / av.sum(), np.ascontiguousarray(ground[np.ix_(su, sv)]))
    return float(1.0 - emd / zg)


# -- semantic similarity ------------------------------------------------------------------------
def best_mapping(au: np.ndarray, av: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """max over mappings sigma of sum_r min(pi^r(u), pi^{sigma(r)}(v)) (the inner term of eq. 10),
    on the supports: ``au`` and ``av`` are u's and v's positive visit probabilities.

    Restricting to the supports is exact: a location r that u never visits has
    :math:`\\pi^r(u) = 0`, so its term is 0 whatever sigma(r) is, and likewise when sigma(r) is
    a location v never visits. Only pairs (r, sigma(r)) in supp(u) x supp(v) can add to the
    sum, so the maximum over the R! permutations of all locations is the maximum over partial
    one-to-one matchings between the two supports (any matching extends to a permutation with
    zero terms). That is a linear assignment on the |supp u| x |supp v| matrix of minima,
    solved by the Hungarian method (scipy's ``linear_sum_assignment``, O(n^3) in the support
    size instead of R). With nonnegative weights, assigning every row of the smaller side
    loses nothing.

    Returns (value, i, j): ``au[i]`` is mapped to ``av[j]``.
    """
    w = np.minimum.outer(au, av)
    i, j = linear_sum_assignment(w, maximize=True)
    return float(w[i, j].sum()), i, j


def period_mappings(profile: sp.csr_array, u: int, v: int, periods: int
                    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Per period tau, the value max_sigma sum_r min(pi_tau^r(u), pi_tau^sigma(r)(v)) and the
    mapped location pairs (r, sigma(r), their minimum) with both in the supports (see
    :func:`best_mapping`)."""
    values = np.zeros(periods)
    pairs = []
    for tau in range(periods):
        su, au = _row(profile, u * periods + tau)
        sv, av = _row(profile, v * periods + tau)
        if not su.size or not sv.size:
            pairs.append((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)))
            continue
        values[tau], i, j = best_mapping(au, av)
        pairs.append((su[i].astype(np.int64), sv[j].astype(np.int64), np.minimum(au[i], av[j])))
    return values, pairs


def semantic_similarity(profile: sp.csr_array, weight: np.ndarray, u: int, v: int,
                        periods: int) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    """sim_S(u, v) by eq. (10), one best mapping per period, and the mapped location pairs.

    .. math:: sim_S(u, v) = \\sum_\\tau \\Pr_u\\{\\tau\\} \\max_\\sigma \\sum_r
              \\min\\{\\pi_\\tau^r(u), \\pi_\\tau^{\\sigma(r)}(v)\\}

    Eq. (10) is printed as 1 minus this sum, the *dis*\\ similarity of eq. (8); we return the
    similarity, consistent with eq. (9). Pr{tau} is u's, so the measure is asymmetric for
    periods > 1 (as eq. 6). Returns (sim, [(r, sigma(r), min) arrays per period]).
    """
    values, pairs = period_mappings(profile, u, v, periods)
    return float(weight[u] @ values), pairs


@njit(cache=True)
def semantic_value_sorted(a, wa, b):
    """sim_S(u, v) from decreasingly sorted (periods, M) profiles ``a`` of u and ``b`` of v, and
    u's period weights ``wa`` (periods,).

    min is supermodular, so the sum of :math:`\\min(a_r, b_{\\sigma(r)})` is largest when sigma
    pairs the two vectors in the same sorted order (the rearrangement inequality): the value of
    the assignment in :func:`best_mapping` is the sum of the minima of the sorted vectors. Used
    where only values are needed (the plausible-deniability test); tests check both agree.
    """
    total = 0.0
    for tau in range(a.shape[0]):
        s = 0.0
        for i in range(a.shape[1]):
            x, y = a[tau, i], b[tau, i]
            if x == 0.0 or y == 0.0:
                break
            s += x if x < y else y
        total += wa[tau] * s
    return total


# -- all pairs and the location graph ---------------------------------------------------------------
def pair_chunk(us: np.ndarray, profile: sp.csr_array, weight: np.ndarray, n_users: int, periods: int,
               ground: np.ndarray | None, edge_weight: str = "similarity") -> tuple:
    """Similarities of the pairs (u, v), u in ``us``, v > u, and the location-graph edges they add.

    Fig. 2 adds s_u^v to w(r, sigma_u^v(r)) for every ordered pair (u, v); we take sigma_v^u as
    the inverse of sigma_u^v (an optimal mapping too; where several tie, a separate assignment
    could pick another), so the unordered pair adds s_u^v + s_v^u to each mapped pair, per
    period weighted by the period's mean share. Only pairs of visited locations (positive minima) are
    edges: the rest of a permutation is arbitrary (every choice has value 0), and a location
    mapped to itself is no edge. ``edge_weight`` 'overlap' multiplies a pair's addition by
    min(pi^r(u), pi^sigma(r)(v)), as the authors' tool does. With the Hamming ground the
    geographic similarities of u to all v are one array operation (the closed form of §IV-C).

    Returns (u, v, sem_uv, sem_vu, geo_uv, geo_vu, edge_r, edge_r2, edge_w).
    """
    P = periods
    rows = [[_row(profile, x * P + tau) for tau in range(P)] for x in range(n_users)]
    dense = profile.toarray().reshape(n_users, P, -1) if ground is None else None
    out_u, out_v, values_all, geo_all = [], [], [], []
    er, er2, emin, ecount = [], [], [], []
    for u in us:
        vs = np.arange(u + 1, n_users)
        values = np.zeros((vs.size, P))
        if ground is None:
            geo = np.minimum(dense[u][None], dense[vs]).sum(axis=2)
        else:
            geo = np.zeros((vs.size, P))
        for q, v in enumerate(vs):
            for tau in range(P):
                su, au = rows[u][tau]
                sv, av = rows[v][tau]
                if not su.size or not sv.size:
                    ecount.append(0)
                    continue
                w = np.minimum.outer(au, av)
                i, j = linear_sum_assignment(w, maximize=True)
                mins = w[i, j]
                values[q, tau] = mins.sum()
                r, r2 = su[i], sv[j]
                keep = r != r2
                er.append(r[keep])
                er2.append(r2[keep])
                emin.append(mins[keep])
                ecount.append(int(keep.sum()))
                if ground is not None:
                    geo[q, tau] = geographic_similarity((su, au), (sv, av), ground)
        out_u.append(np.full(vs.size, u))
        out_v.append(vs)
        values_all.append(values)
        geo_all.append(geo)
    cat = (lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt))
    u, v = cat(out_u, np.int64), cat(out_v, np.int64)
    values = np.concatenate(values_all) if values_all else np.zeros((0, P))
    geo = np.concatenate(geo_all) if geo_all else np.zeros((0, P))
    s_uv, s_vu = (weight[u] * values).sum(axis=1), (weight[v] * values).sum(axis=1)
    # the addition of each (pair, period) to its mapped location pairs
    per = 0.5 * (weight[u] + weight[v]) * (s_uv + s_vu)[:, None]
    ew = np.repeat(per.ravel(), np.asarray(ecount, np.int64))
    if edge_weight == "overlap":
        ew = ew * cat(emin, np.float64)
    return (u, v, s_uv, s_vu, (weight[u] * geo).sum(axis=1), (weight[v] * geo).sum(axis=1),
            cat(er, np.int64), cat(er2, np.int64), ew)


def location_graph(edge_r: np.ndarray, edge_r2: np.ndarray, edge_w: np.ndarray, n_locations: int) -> sp.csr_array:
    """The symmetric location semantic graph (R x R) from accumulated edges (Fig. 2)."""
    w = sp.coo_array((np.concatenate([edge_w, edge_w]), (np.concatenate([edge_r, edge_r2]),
                                                           np.concatenate([edge_r2, edge_r]))),
                     shape=(n_locations, n_locations)).tocsr()
    w.sum_duplicates()
    return w
