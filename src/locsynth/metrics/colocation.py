"""Utility of synthetic traces with co-locations (paper 000 §5.2).

- Population distribution: the share of events at each location; MAE and MSE between the real
  and the synthetic vector (length L).
- Transition matrix: row-normalised counts of the moves between consecutive events of a trace on
  one day (synth/tpm.py's transitions); MAE and MSE over the rows the real data has (a row with no
  real transition has nothing to compare with).
- Co-locations in the synthetic set: instants at which two friends share a location, against the
  same number of pairs of users who are not friends.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..traces import TraceSet
from ..synth.colocation.counts import colocated_pairs
from ..synth.tpm import trimmed_transition_counts
from .population import normalise_rows
from .sglt import visit_counts


def _check_same_space(real: TraceSet, synthetic: TraceSet) -> None:
    if real.space.n_locations != synthetic.space.n_locations:
        raise InputError(f"the sets have {real.space.n_locations} and {synthetic.space.n_locations} locations")


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
    _check_same_space(real, synthetic)
    d = population_distribution(real) - population_distribution(synthetic)
    return {"mae": float(np.abs(d).mean()), "mse": float((d ** 2).mean())}


def transition_error(real: TraceSet, synthetic: TraceSet) -> dict[str, float]:
    """MAE and MSE of the transition matrix over the rows the real set has (nan when it has none)."""
    _check_same_space(real, synthetic)
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
