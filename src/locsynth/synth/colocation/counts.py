"""The co-location count matrix Q and its DP release Q' (paper 000 §4.3, Proposition 2).

A co-location is two friends at the same location in the same instant (§2.1). Q[t, x] counts
them per instant of the day t and location x, summed over days.

Counting a group. At one (instant, location) the friends present form a graph; Q adds the size
of its maximum matching, the largest number of disjoint friend pairs there. For two friends that
is 1, as in the paper. Counting every pair instead would let one user among k friends (who are not
friends with each other) add k co-locations, and removing that user would move Q by k whatever the
trimming: the sensitivity would grow with the number of friends. Removing one vertex changes a
maximum matching by at most 1 (the matching without it is still a matching, and a maximum
matching loses at most the vertex's own edge).

Trimming and its knock-on effect. The paper stops reading a user's co-locations once c were read
(Fig. 5). Whether an event is a co-location depends on the friends' traces, so under that reading
removing user w changes other users' trimmed counts: every friend v for whom w was the only friend
at some event stops counting it and reads one more later event in its place. With k such friends
Q moves by c + k, and k is not bounded by c (a star of k friends around w at one place does it;
tests/test_colocation_dp.py shows Lap(c / epsilon) failing on it). Here each user's *events* are
read in time order and only the first c count, co-locations or not; this reading depends on the
user's own trace alone. Removing (or adding) user w, with all its events and friendships, then
changes only the at most c cells (instant, location) of w's first c events, each by at most 1
(the matching argument): the L1 sensitivity of Q is c, with no knock-on. The price is co-locations
later in a trace: on Gowalla's folded day (814 users, 827 co-locations) c = 5 keeps 329 of them,
c = 20 keeps 820.

Noise (Proposition 2): Laplace(c / epsilon) on every cell, or Privelet over the location hierarchy
(space.Hierarchy; root > category > sub-category > POI for Foursquare) with the same L1
sensitivity c for the whole matrix (privacy/privelet.py), both through OpenDP's sampler.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...errors import InputError
from ...metrics.population import normalise_rows
from ...privacy.laplace import laplace
from ...privacy.ledger import Ledger
from ...privacy.privelet import privelet
from ...traces import TraceSet
from ..tpm import rank_in_trace

MECHANISMS = ("privelet", "laplace")
PAIRS = ("friends", "all")


def trimmed(traces: TraceSet, trim: int | None) -> np.ndarray:
    """Mask of the events read: each trace's first ``trim`` in time order (all for None)."""
    if trim is None:
        return np.ones(traces.n_events, bool)
    return rank_in_trace(traces.user) < trim


@njit(cache=True)
def _shared_cells(starts, ends, keys, a, b, count_only, out_key, out_edge):
    """For every edge (a[e], b[e]) the cells both users have, by merging their sorted key lists."""
    n = 0
    for e in range(a.size):
        i, j = starts[a[e]], starts[b[e]]
        ie, je = ends[a[e]], ends[b[e]]
        while i < ie and j < je:
            if keys[i] < keys[j]:
                i += 1
            elif keys[i] > keys[j]:
                j += 1
            else:
                if not count_only:
                    out_key[n] = keys[i]
                    out_edge[n] = e
                n += 1
                i += 1
                j += 1
    return n


def colocated_pairs(traces: TraceSet, mask: np.ndarray, friends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cell key t * L + x, edge index) of every friend pair present in one cell among the events
    in ``mask``; sorted by key."""
    L = traces.space.n_locations
    user = traces.user[mask].astype(np.int64)
    key = traces.t[mask].astype(np.int64) * L + traces.loc[mask]
    order = np.lexsort((key, user))
    user, key = user[order], key[order]
    n = traces.n_traces
    starts = np.searchsorted(user, np.arange(n))
    ends = np.searchsorted(user, np.arange(n), side="right")
    a = np.ascontiguousarray(friends[:, 0], np.int64)
    b = np.ascontiguousarray(friends[:, 1], np.int64)
    empty = np.zeros(0, np.int64)
    size = _shared_cells(starts, ends, key, a, b, True, empty, empty)
    out_key, out_edge = np.empty(size, np.int64), np.empty(size, np.int64)
    _shared_cells(starts, ends, key, a, b, False, out_key, out_edge)
    order = np.argsort(out_key, kind="stable")
    return out_key[order], out_edge[order]


def _leaf_matching(pairs: list) -> tuple[int, list]:
    """Karp and Sipser's exact rule: a vertex of degree 1 is matched to its only neighbour (some
    maximum matching contains that edge), both leave, repeat. Returns (edges matched, the pairs
    left, none of whose vertices has degree 1)."""
    adj: dict = {}
    for a, b in pairs:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    leaves = [v for v, around in adj.items() if len(around) == 1]
    matched = 0
    while leaves:
        v = leaves.pop()
        if v not in adj or len(adj[v]) != 1:
            continue
        (u,) = adj[v]
        matched += 1
        for x in (u, v):
            for y in adj.pop(x):
                if y in adj:
                    adj[y].discard(x)
                    if len(adj[y]) == 1:
                        leaves.append(y)
    return matched, [(a, b) for a in adj for b in adj[a] if a < b]


def matching_sizes(keys: np.ndarray, edges: np.ndarray, friends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cell keys, maximum matching size of each cell's friend pairs); keys sorted, edges of one
    cell adjacent. A cell whose pairs share no user is its own matching; in the others degree-1
    users are matched first (:func:`_leaf_matching`) and what is left goes to networkx."""
    if not keys.size:
        return keys, np.zeros(0, np.int64)
    cells, start, n_edges = np.unique(keys, return_index=True, return_counts=True)
    ends = np.stack([friends[edges, 0], friends[edges, 1]], axis=1).ravel()
    cell_of = np.repeat(np.arange(cells.size), 2 * n_edges)
    distinct = np.unique(cell_of * np.int64(friends.max() + 1) + ends) // (friends.max() + 1)
    users = np.bincount(distinct, minlength=cells.size)
    size = n_edges.copy()
    shared = np.flatnonzero(users < 2 * n_edges)
    if shared.size:
        import networkx as nx
    for c in shared:
        matched, rest = _leaf_matching(friends[edges[start[c]:start[c] + n_edges[c]]].tolist())
        if rest:
            matched += len(nx.max_weight_matching(nx.Graph(rest), maxcardinality=True))
        size[c] = matched
    return cells, size


def colocation_counts(traces: TraceSet, trim: int | None = None, pairs: str = "friends") -> np.ndarray:
    """Q: (instants per day, L) co-locations (module docstring) among each trace's first ``trim``
    events. ``pairs="all"`` treats every two users as friends (data without a friend graph, such
    as Foursquare NYC); the count of a cell is then half its users, rounded down."""
    if pairs not in PAIRS:
        raise InputError(f"unknown pairs {pairs!r}; expected one of {', '.join(PAIRS)}")
    L, ipd = traces.space.n_locations, traces.time.instants_per_day
    mask = trimmed(traces, trim)
    Q = np.zeros(ipd * L, np.int64)
    if pairs == "all":
        key = traces.t[mask].astype(np.int64) * L + traces.loc[mask]
        cells, present = np.unique(key, return_counts=True)
        size = present // 2
    else:
        if traces.friends is None:
            raise InputError("co-location counts between friends need a friend graph; use pairs='all' for data "
                             "without one")
        keys, edges = colocated_pairs(traces, mask, traces.friends)
        cells, size = matching_sizes(keys, edges, traces.friends)
    t, x = np.divmod(cells, L)
    np.add.at(Q, (t % ipd) * L + x, size)
    return Q.reshape(ipd, L)


def noisy_counts(counts: np.ndarray, epsilon: float, trim: int, mechanism: str, hierarchy=None, *,
                 ledger: Ledger | None = None, saw: str = "") -> np.ndarray:
    """Q' = Q + noise of L1 sensitivity ``trim`` (module docstring): ``mechanism`` 'laplace'
    (Lap(c / epsilon) per cell) or 'privelet' (over ``hierarchy``)."""
    if mechanism not in MECHANISMS:
        raise InputError(f"unknown mechanism {mechanism!r}; expected one of {', '.join(MECHANISMS)}")
    assumptions = "each user's first c events read, co-locations counted as maximum matchings per cell"
    if mechanism == "laplace":
        return laplace(counts, epsilon, trim, ledger=ledger, saw=saw, assumptions=assumptions)
    if hierarchy is None:
        raise InputError("Privelet needs a location hierarchy")
    return privelet(counts, hierarchy, epsilon, trim, ledger=ledger, saw=saw, assumptions=assumptions)


def row_distributions(noisy: np.ndarray) -> np.ndarray:
    """R' (§4.4 step 2): each row of Q' shifted by its minimum when that is negative and divided
    by its sum; a row summing to 0 is uniform."""
    Q = np.asarray(noisy, np.float64)
    return normalise_rows(Q - np.minimum(Q.min(axis=1, keepdims=True), 0.0))


def category_matrix(counts: np.ndarray, categories: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels, Q-bar): the columns of ``counts`` summed per category (§5.2)."""
    labels, index = np.unique(np.asarray(categories).astype(str), return_inverse=True)
    out = np.zeros((counts.shape[0], labels.size))
    np.add.at(out.T, index, np.asarray(counts, np.float64).T)
    return labels, out
