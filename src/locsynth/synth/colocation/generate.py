"""Synthetic traces with co-locations (paper 000 §4.4 steps 3 and 4).

Step 3 draws theta co-location events: a friend pair of the synthetic graph uniformly, an instant
uniformly, a location from R'[instant of the day]. If one of the two already has a location at
that instant, the other joins it there (the paper's consistency rule). If both already have one,
the draw is dropped (the paper does not say; joining would break one of the earlier events), and
so is a draw that would repeat a pair's co-location. Drawing stops after theta events or
100 theta draws; how many were placed is reported.

Step 4 completes every trace under the TPM chain. A trace with co-location events gets the most
likely path through them (Viterbi, with log max(P, 1e-12) so that some path always exists); a
trace without any is a walk of the chain from its stationary distribution, as TPM makes it
(a Viterbi path without constraints would give every such user the same trace).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ...rng import below, uniform

FLOOR = 1e-12


@njit(cache=True)
def _place(edges, cdf, T, ipd, theta, max_draws, state, fixed):
    placed = 0
    draws = 0
    m = edges.shape[0]
    L = cdf.shape[1]
    while placed < theta and draws < max_draws and m > 0:
        draws += 1
        e = below(state, m)
        t = below(state, T)
        a, b = edges[e, 0], edges[e, 1]
        la, lb = fixed[a, t], fixed[b, t]
        if la >= 0 and lb >= 0:
            continue
        if la >= 0:
            fixed[b, t] = la
        elif lb >= 0:
            fixed[a, t] = lb
        else:
            row = cdf[t % ipd]
            x = min(np.searchsorted(row, uniform(state) * row[-1], side="right"), L - 1)
            fixed[a, t] = x
            fixed[b, t] = x
        placed += 1
    return placed


def place_colocations(edges: np.ndarray, rows: np.ndarray, n: int, T: int, theta: int, seed: int
                      ) -> tuple[np.ndarray, int]:
    """(fixed, placed): fixed[u, t] is the location of user u's co-location event at instant t
    (-1: none), for ``theta`` events drawn as in the module docstring from ``rows`` = R'."""
    fixed = np.full((n, T), -1, np.int32)
    state = np.random.SeedSequence(seed, spawn_key=(3,)).generate_state(1, np.uint64)
    cdf = np.cumsum(rows, axis=1)
    placed = _place(np.ascontiguousarray(edges, np.int64), cdf, T, rows.shape[0], int(theta),
                    100 * int(theta), state, fixed)
    return fixed, int(placed)


@njit(cache=True)
def _viterbi(log_p, log_first, fixed_row, out_row):
    T = fixed_row.size
    L = log_first.size
    delta = np.empty(L)
    nxt = np.empty(L)
    back = np.zeros((T, L), np.int64)
    for x in range(L):
        delta[x] = log_first[x] if fixed_row[0] < 0 or fixed_row[0] == x else -np.inf
    for t in range(1, T):
        for y in range(L):
            if fixed_row[t] >= 0 and fixed_row[t] != y:
                nxt[y] = -np.inf
                back[t, y] = 0
                continue
            best, arg = -np.inf, 0
            for x in range(L):
                v = delta[x] + log_p[x, y]
                if v > best:
                    best, arg = v, x
            nxt[y] = best
            back[t, y] = arg
        delta[:] = nxt
    a = 0
    for x in range(L):
        if delta[x] > delta[a]:
            a = x
    out_row[T - 1] = a
    for t in range(T - 1, 0, -1):
        a = back[t, a]
        out_row[t - 1] = a


@njit(cache=True, parallel=True)
def _viterbi_all(log_p, log_first, fixed, rows, out):
    for k in prange(rows.size):
        _viterbi(log_p, log_first, fixed[rows[k]], out[rows[k]])


def complete(walks: np.ndarray, fixed: np.ndarray, matrix: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Traces: ``walks`` where a user has no co-location event, else the Viterbi path of the chain
    (``matrix``, ``first`` = its stationary distribution) through the user's fixed events."""
    out = np.array(walks, np.int64, copy=True)
    rows = np.flatnonzero((fixed >= 0).any(axis=1))
    _viterbi_all(np.log(np.maximum(matrix, FLOOR)), np.log(np.maximum(first, FLOOR)), fixed, rows, out)
    return out
