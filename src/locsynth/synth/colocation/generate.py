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

Viterbi costs T L^2 per constrained user. When more users are constrained than there are
locations, :func:`complete` instead solves the chain once: the best unconstrained prefix into
every (instant, location), the best suffix out of it, and the best d-step bridge between any two
locations (max-plus powers of log P, T L^3 in all); a user's best path through fixed events
(t_1, x_1) < ... < (t_k, x_k) is then the prefix into (t_1, x_1), the bridges between
consecutive events and the suffix out of (t_k, x_k), each optimal on its own because the chain
is first-order, read back in O(T). Both give a most likely path; where two paths tie they may
pick different ones.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ...core.rng import below, uniform

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


@njit(cache=True, parallel=True)
def _chain_tables(log_p, log_first, T):
    """prefix[t, y], its back pointer; suffix[t, x], its next location; bridge[d, x, y] (best d-step
    path from x to y, d = 1 .. T - 1) and the location before y on it."""
    L = log_first.size
    prefix = np.empty((T, L))
    prefix_arg = np.zeros((T, L), np.int64)
    prefix[0] = log_first
    for t in range(1, T):
        for y in prange(L):
            best, arg = -np.inf, 0
            for x in range(L):
                v = prefix[t - 1, x] + log_p[x, y]
                if v > best:
                    best, arg = v, x
            prefix[t, y] = best
            prefix_arg[t, y] = arg
    suffix = np.zeros((T, L))
    suffix_arg = np.zeros((T, L), np.int64)
    for t in range(T - 2, -1, -1):
        for x in prange(L):
            best, arg = -np.inf, 0
            for y in range(L):
                v = log_p[x, y] + suffix[t + 1, y]
                if v > best:
                    best, arg = v, y
            suffix[t, x] = best
            suffix_arg[t, x] = arg
    bridge = np.empty((max(T, 2), L, L))
    bridge_arg = np.zeros((max(T, 2), L, L), np.int32)
    bridge[1] = log_p
    for x in range(L):
        for y in range(L):
            bridge_arg[1, x, y] = x
    for d in range(2, T):                       # bridge[d] = bridge[d - 1] (max, +) log P
        for x in prange(L):
            row, arg = bridge[d, x], bridge_arg[d, x]
            row[:] = -np.inf
            for z in range(L):
                xz = bridge[d - 1, x, z]
                for y in range(L):
                    v = xz + log_p[z, y]
                    if v > row[y]:
                        row[y] = v
                        arg[y] = z
    return prefix, prefix_arg, suffix, suffix_arg, bridge, bridge_arg


@njit(cache=True, parallel=True)
def _paths_through(tables, fixed, rows, out):
    prefix, prefix_arg, suffix, suffix_arg, bridge, bridge_arg = tables
    T = fixed.shape[1]
    for k in prange(rows.size):
        f, o = fixed[rows[k]], out[rows[k]]
        first, last = -1, -1
        for t in range(T):
            if f[t] >= 0:
                if first < 0:
                    first = t
                else:                              # the bridge from the previous event, backwards
                    a, b = f[last], f[t]
                    y = b
                    for d in range(t - last, 1, -1):
                        y = bridge_arg[d, a, y]
                        o[last + d - 1] = y
                last = t
                o[t] = f[t]
        for t in range(first, 0, -1):
            o[t - 1] = prefix_arg[t, o[t]]
        for t in range(last, T - 1):
            o[t + 1] = suffix_arg[t, o[t]]


def complete(walks: np.ndarray, fixed: np.ndarray, matrix: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Traces: ``walks`` where a user has no co-location event, else a most likely path of the
    chain (``matrix``, ``first`` = its stationary distribution) through the user's fixed events:
    Viterbi per user, or the chain's tables when more users than locations need one (module
    docstring)."""
    out = np.array(walks, np.int64, copy=True)
    rows = np.flatnonzero((fixed >= 0).any(axis=1))
    log_p, log_first = np.log(np.maximum(matrix, FLOOR)), np.log(np.maximum(first, FLOOR))
    if rows.size > log_first.size:
        _paths_through(_chain_tables(log_p, log_first, fixed.shape[1]), fixed, rows, out)
    else:
        _viterbi_all(log_p, log_first, fixed, rows, out)
    return out
