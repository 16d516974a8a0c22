"""Utility of synthetic traces with co-locations (paper 000 §5.2).

- Population distribution: the share of events at each location; MAE and MSE between the real
  and the synthetic vector (length L).
- Transition matrix: row-normalised counts of the moves between consecutive events of a trace on
  one day (metrics/transitions.py's same-day transitions); MAE and MSE over the rows the real data
  has (a row with no real transition has nothing to compare with).
- Co-locations in the synthetic set: instants at which two friends share a location, against the
  same number of pairs of users who are not friends.

The co-location count matrix Q (§4.3), which the synthesizer releases under DP
(synth/colocation/counts.py), is counted here too. A co-location is two friends at the same
location in the same instant (§2.1); Q[t, x] counts them per instant of the day t and location x,
summed over days. At one (instant, location) the friends present form a graph, and Q adds the size
of its maximum matching, the largest number of disjoint friend pairs there. For two friends that
is 1, as in the paper. Counting every pair instead would let one user among k friends (who are not
friends with each other) add k co-locations, and removing that user would move Q by k whatever the
trimming: the sensitivity would grow with the number of friends. Removing one vertex changes a
maximum matching by at most 1 (the matching without it is still a matching, and a maximum
matching loses at most the vertex's own edge).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.errors import InputError, unknown
from ..data.traces import TraceSet, check_same_frame
from .population import normalise_rows
from .transitions import rank_in_trace, trimmed_transition_counts
from .visits import visit_counts
from .groups import Figure, GroupResult, Metric, MetricGroup, row


def population_distribution(traces: TraceSet) -> np.ndarray:
    """Share of events at each location."""
    counts = visit_counts(traces)
    return counts / max(counts.sum(), 1.0)


def daily_transition_matrix(traces: TraceSet) -> tuple[np.ndarray, np.ndarray]:
    """(row-stochastic (L, L) matrix, mask of rows with at least one transition); rows without
    one are uniform, and masked out of the errors below."""
    counts = trimmed_transition_counts(traces, None)
    return normalise_rows(counts), counts.sum(axis=1) > 0


def population_error(real: TraceSet, synthetic: TraceSet) -> dict[str, float]:
    """MAE and MSE of the population distribution."""
    check_same_frame(real, synthetic, ("real", "synthetic"), time=False)
    d = population_distribution(real) - population_distribution(synthetic)
    return {"mae": float(np.abs(d).mean()), "mse": float((d ** 2).mean())}


def transition_error(real: TraceSet, synthetic: TraceSet) -> dict[str, float]:
    """MAE and MSE of the transition matrix over the rows the real set has (nan when it has none)."""
    check_same_frame(real, synthetic, ("real", "synthetic"), time=False)
    P, rows = daily_transition_matrix(real)
    Q, _ = daily_transition_matrix(synthetic)
    if not rows.any():
        return {"mae": float("nan"), "mse": float("nan")}
    d = P[rows] - Q[rows]
    return {"mae": float(np.abs(d).mean()), "mse": float((d ** 2).mean())}


def pair_colocations(traces: TraceSet, pairs: np.ndarray) -> int:
    """Instants at which the two users of a pair (rows of the user table) share a location, summed
    over ``pairs`` (m, 2)."""
    pairs = np.sort(np.asarray(pairs, np.int64).reshape(-1, 2), axis=1)
    keys, _ = colocated_pairs(traces, np.ones(traces.n_events, bool), pairs)
    return int(keys.size)


def non_friend_pairs(n: int, friends: np.ndarray, m: int, seed: int = 0) -> np.ndarray:
    """``m`` distinct pairs of users who are not friends, uniformly at random."""
    total = n * (n - 1) // 2
    known = set(map(tuple, np.asarray(friends).tolist()))
    m = min(m, total - len(known))
    rng = np.random.default_rng(seed)
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < m:
        a = rng.integers(0, n, 2 * (m - len(chosen)) + 8)
        b = rng.integers(0, n, a.size)
        for x, y in zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()):
            if x != y and (x, y) not in known and len(chosen) < m:
                chosen.add((x, y))
    return np.array(sorted(chosen), np.int64).reshape(-1, 2)


def friend_colocations(traces: TraceSet, seed: int = 0) -> dict[str, float]:
    """Co-locations between the set's friends and between as many non-friend pairs."""
    if traces.friends is None:
        raise InputError("the trace set has no friend graph")
    m = int(traces.friends.shape[0])
    others = non_friend_pairs(traces.n_traces, traces.friends, m, seed)
    friends = pair_colocations(traces, traces.friends)
    strangers = pair_colocations(traces, others)
    return {"friend_pairs": m, "friends": friends, "non_friends": strangers,
            "friends_per_pair": friends / max(m, 1), "non_friends_per_pair": strangers / max(others.shape[0], 1)}


# -- the co-location count matrix Q (paper 000 §4.3): what the synthesizer releases under DP -----
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
        raise unknown("pairs", pairs, PAIRS)
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


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _colocation_group(ctx) -> GroupResult:
    """Paper 000 §5.2 for a set with a friend graph: population and transition MAE / MSE against the
    test traces, and co-locations between friends and non-friends (with the model's |p - p'| and
    per-category errors when the set carries them)."""
    train, test, synthetic, seed = ctx.train, ctx.test, ctx.synthetic, ctx.option("seed", 0)
    L = test.space.n_locations
    uniform_pop = np.abs(population_distribution(test) - 1.0 / L)
    P, rows = daily_transition_matrix(test)
    uniform_tm = np.abs(P[rows] - 1.0 / L)
    metrics = {}
    for name, fn, uniform in (("population", population_error, uniform_pop),
                              ("transition", transition_error, uniform_tm)):
        syn, real = fn(test, synthetic), fn(test, train)
        metrics[f"coloc_{name}_mae"] = row(syn["mae"], real["mae"], float(uniform.mean()) if uniform.size else None)
        metrics[f"coloc_{name}_mse"] = row(syn["mse"], real["mse"],
                                           float((uniform ** 2).mean()) if uniform.size else None)
    out = {"synthetic": friend_colocations(synthetic, seed)}
    if train.friends is not None:
        out["training"] = friend_colocations(train, seed)
    for key in ("friendship_error", "category_error", "theta", "colocations_placed"):
        if key in synthetic.info:
            out[key] = synthetic.info[key]
    return GroupResult(metrics, {"colocations": out}, {"colocations": out})


def _colocation_figure(details: dict, meta: dict) -> bytes:
    from .figures import colocations_png

    return colocations_png(details["colocations"])


GROUP = MetricGroup(
    "colocations",
    tuple(Metric(f"coloc_{what}_{err}", f"{label} {err.upper()}",
                 f"{'mean absolute' if err == 'mae' else 'mean squared'} error of the {text} (paper 000 §5.2)",
                 featured=False)
          for what, label, text in (("population", "Population", "population distribution over locations"),
                                    ("transition", "Transition", "transition matrix, over the rows the test traces "
                                                                 "have"))
          for err in ("mae", "mse")),
    _colocation_group, lambda ctx: "" if ctx.synthetic.friends is None or ctx.trips else None, step="co-locations",
    figures=(Figure("Co-locations",
                    "Instants at which two users share a location, per pair: over the set's friend pairs and over as "
                    "many pairs of users who are not friends (paper 000). Friends meeting more often than strangers "
                    "is what the co-location synthesizer adds to TPM.",
                    "bar chart of co-locations per friend pair and per non-friend pair", _colocation_figure,
                    lambda d, m: bool(d.get("colocations") and d["colocations"].get("synthetic"))),))
