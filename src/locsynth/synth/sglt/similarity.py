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
import numba
from numba import njit, prange
from scipy.optimize import linear_sum_assignment

from ...core import parallel

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
    geographic similarity is the closed form of §IV-C, computed in the same pass.

    The mappings are :func:`best_mapping`'s, computed by :func:`_assign` inside one compiled
    loop over the pairs (the tests check the result against the pair-by-pair functions).

    Returns (us, sem_uv, sem_vu, geo_uv, geo_vu, edge_r, edge_r2, edge_w): the four similarity
    blocks are (len(us), n_users) with entry [k, v] for the pair (us[k], v), v > us[k]; the
    edges are the chunk's location graph before symmetrization, summed, in integer units of
    :func:`edge_quantum`.
    """
    us = np.asarray(us, np.int64)
    ptr = profile.indptr.astype(np.int64)
    width = max(int(np.diff(ptr).max()) if ptr.size > 1 else 0, 1)
    threads = min(numba.get_num_threads(), max(us.size, 1))
    size = np.diff(ptr).reshape(n_users, periods).sum(axis=1).astype(np.float64)
    later = np.cumsum(size[::-1])[::-1] - size                   # locations of the users v > u
    order, bounds = parallel.deal(size[us] * later[us] + (n_users - us), threads)
    blocks = _pairs_kernel(us, int(n_users), int(periods), ptr, profile.indices.astype(np.int64), profile.data,
                           weight, edge_weight == "overlap", profile.shape[1], width, order, bounds,
                           1.0 / edge_quantum(n_users))
    graph = blocks[4]
    er, er2 = np.nonzero(graph)
    if ground is not None:
        blocks = blocks[:2] + _geographic_ground(us, profile, weight, n_users, periods, ground) + blocks[4:]
    return (us, *blocks[:4], er, er2, graph[er, er2])


@njit(parallel=True, cache=True)
def _pairs_kernel(us, n, P, ptr, loc, val, weight, overlap, R, width, order, bounds, scale):
    """The loop of :func:`pair_chunk`: per pair and period the best mapping (eq. 10's inner max)
    and the Hamming closed form (v's support against u's profile spread over all locations),
    then the pair's edges; one location graph per thread, thread t taking the users
    ``us[order[bounds[t]:bounds[t + 1]]]`` (:func:`..parallel.deal`)."""
    m = us.size
    nt = bounds.size - 1
    sem_uv = np.zeros((m, n), np.float32)
    sem_vu = np.zeros((m, n), np.float32)
    geo_uv = np.zeros((m, n), np.float32)
    geo_vu = np.zeros((m, n), np.float32)
    graphs = np.zeros((nt, R, R), np.int64)
    for t in prange(nt):
        g = graphs[t]
        work = _assign_buffers(width)
        pairs = np.empty((P, width), np.int64)          # per period: v's position mapped to u's i
        dense = np.zeros((P, R))                        # u's profile, 0 where u never goes
        for q in range(bounds[t], bounds[t + 1]):
            k = order[q]
            u = us[k]
            _spread(dense, ptr, loc, val, u, True)
            for v in range(u + 1, n):
                s_uv = s_vu = h_uv = h_vu = 0.0
                for tau in range(P):
                    a0, a1 = ptr[u * P + tau], ptr[u * P + tau + 1]
                    b0, b1 = ptr[v * P + tau], ptr[v * P + tau + 1]
                    x = _mapping(val[a0:a1], val[b0:b1], pairs[tau], work)
                    h = 0.0                             # the common locations' minima in location order:
                    for j in range(b0, b1):             # the others add exactly 0
                        h += min(dense[tau, loc[j]], val[j])
                    s_uv += weight[u, tau] * x
                    s_vu += weight[v, tau] * x
                    h_uv += weight[u, tau] * h
                    h_vu += weight[v, tau] * h
                sem_uv[k, v], sem_vu[k, v], geo_uv[k, v], geo_vu[k, v] = s_uv, s_vu, h_uv, h_vu
                for tau in range(P):
                    a0, a1 = ptr[u * P + tau], ptr[u * P + tau + 1]
                    b0 = ptr[v * P + tau]
                    share = 0.5 * (weight[u, tau] + weight[v, tau]) * (s_uv + s_vu)
                    for i in range(a1 - a0):
                        j = pairs[tau, i]
                        if j >= 0 and loc[a0 + i] != loc[b0 + j]:
                            add = share * min(val[a0 + i], val[b0 + j]) if overlap else share
                            g[loc[a0 + i], loc[b0 + j]] += np.int64(np.rint(add * scale))
            _spread(dense, ptr, loc, val, u, False)
    graph = graphs[0].copy()
    for t in range(1, nt):
        graph += graphs[t]
    return sem_uv, sem_vu, geo_uv, geo_vu, graph


@njit(cache=True)
def _spread(dense, ptr, loc, val, u, keep):
    """User u's visit probabilities into the (periods, R) array ``dense`` (``keep``), or those
    entries back to 0."""
    P = dense.shape[0]
    for tau in range(P):
        for i in range(ptr[u * P + tau], ptr[u * P + tau + 1]):
            dense[tau, loc[i]] = val[i] if keep else 0.0


@njit(cache=True)
def _mapping(a, b, pair, work):
    """:func:`best_mapping` of ``a`` and ``b`` into ``pair``: pair[i] is the position in ``b``
    mapped to a[i], -1 for none. Returns the mapping's value."""
    pair[:a.size] = -1
    if a.size == 0 or b.size == 0:
        return 0.0
    col4row = work[0]
    if a.size <= b.size:
        _assign(a, b, work)
        for i in range(a.size):
            pair[i] = col4row[i]
    else:                                   # scipy solves the transpose when rows outnumber columns
        _assign(b, a, work)
        for j in range(b.size):
            pair[col4row[j]] = j
    x = 0.0
    for i in range(a.size):
        if pair[i] >= 0:
            x += min(a[i], b[pair[i]])
    return x


#: every bit of an int64 but the sign: ``b ^ ((b >> 63) & KEY_BITS)`` turns a float64's bits b
#: into an integer that orders as the float does, and back
KEY_BITS = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True)
def _assign_buffers(width):
    """Work arrays of :func:`_assign` for supports of up to ``width`` locations."""
    def ints():
        return np.empty(width, np.int64)

    def reals():
        return np.empty(width)

    return (ints(), ints(), ints(), reals(), reals(), reals(),          # col4row, row4col, path, u, v, spc
            ints(), reals(), reals(), np.empty(width, np.bool_),         # the remaining columns: j, y, v, free
            reals(), ints(), ints(), ints(), ints(), np.empty(2))       # their spc, path; rows, cols, positions; minima


@njit(cache=True)
def _assign(x, y, work):
    """The assignment maximizing sum_i min(x_i, y_col4row[i]), len(x) <= len(y), into work[0].

    Shortest augmenting paths with dual variables (Crouse, IEEE TAES 2016, Algorithm 1 on the
    cost -min(x_i, y_j)), one row at a time, in the visiting order and with the tie rules of
    scipy's ``linear_sum_assignment``, so that where several mappings are optimal this one
    picks the mapping scipy picks (tests/test_sglt.py checks on tied inputs).

    scipy scans the remaining columns through an index list; here they sit compacted in scan
    order (their column, y, v, whether free, shortest path so far), so each step of the search
    is three passes over contiguous arrays: relax (:func:`_relax`), the two minima
    (:func:`_lowest`) and scipy's choice among the columns at the minimum (:func:`_pick`). A
    column leaving is swapped behind the remaining ones; undoing the swaps after the
    augmentation restores the reverse order every row's search starts from. Every comparison
    and every sum is scipy's, in its order, so the mapping is the same bit for bit.
    """
    (col4row, row4col, path, u, v, spc, cj, cy, cv, cf, cspc, cpath, rows, cols, gone, low) = work
    nr, nc = x.size, y.size
    ckey, lowkey = cspc.view(np.int64), low.view(np.int64)
    col4row[:nr] = -1
    row4col[:nc] = -1
    u[:nr] = 0.0
    v[:nc] = 0.0
    for it in range(nc):                    # reverse order: a constant matrix gives the identity
        j = nc - it - 1
        cj[it], cy[it], cv[it], cf[it] = j, y[j], 0.0, True
    for cur in range(nr):
        nrows, ncols = 0, 0
        num, minval, sink, i = nc, 0.0, -1, cur
        while sink == -1:
            rows[nrows] = i
            nrows += 1
            _relax(cy, cv, cspc, cpath, num, x[i], u[i], minval, i, nrows == 1)
            _lowest(ckey, cf, num, lowkey)
            lowest = low[0]
            index = _pick(cspc, cf, num, lowest, low[1] == lowest)
            minval = lowest
            j = cj[index]
            spc[j], path[j] = cspc[index], cpath[index]
            cols[ncols], gone[ncols] = j, index
            ncols += 1
            if cf[index]:
                sink = j
            else:
                i = row4col[j]
            num -= 1
            _swap(cj, cy, cv, cf, cspc, cpath, index, num)
        for k in range(ncols - 1, -1, -1):
            _swap(cj, cy, cv, cf, cspc, cpath, gone[k], num)
            num += 1
        u[cur] += minval
        for k in range(nrows):
            i = rows[k]
            if i != cur:
                u[i] += minval - spc[col4row[i]]
        for k in range(ncols):
            j = cols[k]
            v[j] -= minval - spc[j]
            cv[nc - 1 - j] = v[j]
        cf[nc - 1 - sink] = False
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == cur:
                break


@njit(cache=True)
def _relax(cy, cv, cspc, cpath, num, xi, ui, minval, i, first):
    """One step's shortest paths through row i to the first ``num`` remaining columns (scipy's
    reduced cost minval - min(x_i, y_j) - u_i - v_j, in its order of operations)."""
    if first:
        for it in range(num):
            m = xi if xi <= cy[it] else cy[it]
            cspc[it] = minval - m - ui - cv[it]
            cpath[it] = i
        return
    for it in range(num):
        m = xi if xi <= cy[it] else cy[it]
        r = minval - m - ui - cv[it]
        if r < cspc[it]:
            cspc[it] = r
            cpath[it] = i


@njit(cache=True)
def _lowest(ckey, cf, num, lowkey):
    """The bits of min(spc) and of its minimum over the free columns into lowkey[0], lowkey[1],
    as integer keys (see :data:`KEY_BITS`): integer minima vectorize where float ones do not.
    Keys put -0 before +0, so a zero minimum may carry another sign than scipy's; no comparison
    sees the sign of a zero, nor does any sum with a nonzero term."""
    lo = fr = KEY_BITS
    for it in range(num):
        b = ckey[it]
        key = b ^ ((b >> 63) & KEY_BITS)
        lo = min(lo, key)
        fr = min(fr, key if cf[it] else KEY_BITS)
    lowkey[0] = lo ^ ((lo >> 63) & KEY_BITS)
    lowkey[1] = fr ^ ((fr >> 63) & KEY_BITS)


@njit(cache=True)
def _pick(cspc, cf, num, lowest, free):
    """scipy's column among those at ``lowest``: its scan keeps the first, replaced by any later
    free one, so the last free column if there is one (``free``), else the first."""
    if free:
        it = num - 1
        while not (cspc[it] == lowest and cf[it]):
            it -= 1
        return it
    it = 0
    while cspc[it] != lowest:
        it += 1
    return it


@njit(cache=True)
def _swap(cj, cy, cv, cf, cspc, cpath, a, b):
    cj[a], cj[b] = cj[b], cj[a]
    cy[a], cy[b] = cy[b], cy[a]
    cv[a], cv[b] = cv[b], cv[a]
    cf[a], cf[b] = cf[b], cf[a]
    cspc[a], cspc[b] = cspc[b], cspc[a]
    cpath[a], cpath[b] = cpath[b], cpath[a]


def _geographic_ground(us, profile, weight, n_users, periods, ground) -> tuple[np.ndarray, np.ndarray]:
    """sim_G under a ground distance (EMD by POT), pair by pair: the (len(us), n_users) blocks of
    :func:`pair_chunk`."""
    P = periods
    rows = [[_row(profile, x * P + tau) for tau in range(P)] for x in range(n_users)]
    geo_uv = np.zeros((us.size, n_users), np.float32)
    geo_vu = np.zeros((us.size, n_users), np.float32)
    for k, u in enumerate(us):
        for v in range(u + 1, n_users):
            geo = np.array([geographic_similarity(rows[u][tau], rows[v][tau], ground)
                            if rows[u][tau][0].size and rows[v][tau][0].size else 0.0 for tau in range(P)])
            geo_uv[k, v], geo_vu[k, v] = weight[u] @ geo, weight[v] @ geo
    return geo_uv, geo_vu


def location_graph(edge_r: np.ndarray, edge_r2: np.ndarray, edge_w: np.ndarray, n_locations: int,
                   quantum: float = 1.0) -> sp.csr_array:
    """The symmetric location semantic graph (R x R) from accumulated edges (Fig. 2); integer
    weights in units of ``quantum`` are summed exactly, then scaled."""
    w = sp.coo_array((np.concatenate([edge_w, edge_w]), (np.concatenate([edge_r, edge_r2]),
                                                           np.concatenate([edge_r2, edge_r]))),
                     shape=(n_locations, n_locations)).tocsr()
    w.sum_duplicates()
    return sp.csr_array(w * quantum) if quantum != 1.0 else w


def edge_quantum(n_users: int) -> float:
    """The unit in which :func:`pair_chunk` sums edge weights, as integers: exact sums, so the
    graph does not depend on how pairs are split among threads and workers (spectral clustering
    turns a 1e-15 change in the graph into other classes). A pair adds at most 4 to a symmetric
    entry, so 4 x pairs units must fit in an int64; 2^-40 (about 1e-12) up to about 1M pairs,
    coarser above."""
    pairs = n_users * (n_users - 1) // 2
    return 2.0 ** -min(40, 62 - int(np.ceil(np.log2(4 * pairs + 1))))
