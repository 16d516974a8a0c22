"""The localization attack of paper 002 §VII-B (after Shokri et al. [46]): an adversary who
knows the aggregate mobility model <p-bar, pi-bar> and sees the set of locations sent at every
query instant decodes the true locations by Viterbi. The hidden state of a hidden Markov model is
the true location, the emission is 1 when the state is one of the sent locations at a query
instant (no constraint between queries), and the most likely path gives its guess at every query
instant. ``adversary="profile"`` is a stronger one that also knows the user's own smoothed chain
(see locsynth.lbs.scenario, the scenario that runs it).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..core.errors import InputError, unknown
from ..metrics.transitions import LOG_ZERO

#: what the adversary knows: the aggregate model (§VII-B) or also the user's own chain
ADVERSARIES = ("aggregate", "profile")
#: score of a state the observations rule out (finite, so that the max-reductions may vectorize)
NEG = -1e300

def localize(sent: np.ndarray, query: np.ndarray, P: np.ndarray, pi: np.ndarray, period: np.ndarray, *,
             own: np.ndarray | None = None, groups: np.ndarray | None = None) -> np.ndarray:
    """The adversary's most likely path of every row given the locations sent at its queries.

    .. math:: \\hat x = \\arg\\max_x \\; \\log \\pi_{\\tau_0}(x_0) + \\sum_{t \\ge 1}
              \\log p_{\\tau_{t-1}}(x_{t-1}, x_t) \\quad \\text{s.t. } x_t \\in O_t
              \\text{ at every query instant } t

    with O_t = {sent[n, s, t]} (emission 1 on the sent locations, 0 elsewhere). Disallowed
    states score :data:`NEG` and log-probabilities are floored at ``LOG_ZERO`` (as in SGLT's own
    decoding), so every row has a path.

    Parameters
    ----------
    sent : ndarray of shape (N, S, T), int
        The S locations sent at every instant (the true one and the fakes, in any order; read at
        query instants only).
    query : ndarray of shape (N, T), bool
        Query instants.
    P, pi : ndarrays of shape (periods, R, R) and (periods, R)
        The aggregate model <p-bar, pi-bar> (p_tau indexed by the period of the current instant).
    period : ndarray of shape (T,), int
        Period of each instant.
    own : ndarray of shape (N_own, T), int, optional
        Traces the adversary learns each row's own chain from (``adversary="profile"``): row n
        uses (c_u[r] + p-bar[r]) / (n_u[r] + 1) and starts from (v_u + pi-bar) / (|v_u| + 1), with
        c_u, n_u, v_u the transition counts, their row sums and the visit counts of
        ``own[groups[n, 0]:groups[n, 1]]``. None: the aggregate model for every row.
    groups : ndarray of shape (N, 2), int, optional
        Row range of ``own`` of each row (default: row n of ``own``).

    Returns
    -------
    ndarray of shape (N, T), int64
        The decoded path; its values at query instants are the adversary's guesses.
    """
    sent = np.ascontiguousarray(sent, np.int64)
    query = np.ascontiguousarray(query, np.bool_)
    N, S, T = sent.shape
    if query.shape != (N, T):
        raise InputError(f"query has shape {query.shape}; expected {(N, T)}")
    P = np.asarray(P, np.float64)
    pi = np.asarray(pi, np.float64)
    with np.errstate(divide="ignore"):
        log_p = np.maximum(np.log(P), LOG_ZERO)
        log_pi = np.maximum(np.log(pi), LOG_ZERO)
    profile = own is not None
    if own is None:
        own = np.zeros((0, T), np.int64)
        groups = np.zeros((N, 2), np.int64)
    elif groups is None:
        groups = np.stack([np.arange(N), np.arange(1, N + 1)], axis=1)
    out = np.empty((N, T), np.int64)
    _viterbi_rows(sent, query, log_p, log_pi, np.asarray(period, np.int64), P, pi,
                  np.ascontiguousarray(own, np.int64), np.ascontiguousarray(groups, np.int64), profile, out)
    return out


def attack_errors(truth: np.ndarray, fakes: np.ndarray, query: np.ndarray, P: np.ndarray, pi: np.ndarray,
                  period: np.ndarray, *, adversary: str = "aggregate",
                  groups: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mistakes and queries of the localization attack on every row (§VII-B).

    Parameters
    ----------
    truth : ndarray of shape (N, T), int
        True (complete) traces.
    fakes : ndarray of shape (N, m, T), int
        Each row's fake traces; at a query instant t the row sends truth[n, t] and fakes[n, :, t].
    query : ndarray of shape (N, T), bool
    adversary : 'aggregate' or 'profile' (see :func:`localize`; the profile is learned from
        ``truth[groups[n, 0]:groups[n, 1]]``).

    Returns
    -------
    mistakes, queries : ndarrays of shape (N,), int64
        Query instants where the guess is not the true location; query instants.
    """
    check_adversary(adversary)
    truth = np.asarray(truth, np.int64)
    sent = np.concatenate([truth[:, None, :], np.asarray(fakes, np.int64)], axis=1)
    own = truth if adversary == "profile" else None
    guess = localize(sent, query, P, pi, period, own=own, groups=groups if own is not None else None)
    query = np.asarray(query, bool)
    return ((guess != truth) & query).sum(axis=1), query.sum(axis=1)


@njit(cache=True)
def own_chain(own, lo, hi, R, kmap):
    """Rows of the chain learned from ``own[lo:hi]``: kmap[r] = k for each location r left at
    least once (caller passes kmap full of -1), ``touched[k]`` = r, counts (K, R), row sums (K,)
    and visit counts (R,)."""
    T = own.shape[1]
    touched = np.empty((hi - lo) * T + 1, np.int64)
    K = 0
    for d in range(lo, hi):
        for t in range(T - 1):
            r = own[d, t]
            if kmap[r] < 0:
                kmap[r] = K
                touched[K] = r
                K += 1
    counts = np.zeros((K, R))
    rows = np.zeros(K)
    visits = np.zeros(R)
    for d in range(lo, hi):
        for t in range(T):
            visits[own[d, t]] += 1.0
            if t + 1 < T:
                k = kmap[own[d, t]]
                counts[k, own[d, t + 1]] += 1.0
                rows[k] += 1.0
    return touched[:K], counts, rows, visits


@njit(cache=True)
def _step(i, j, tau, log_p, kmap, row_log):
    """log p_tau(i, j) of the row's chain: its own row when it left i, else the aggregate one."""
    k = kmap[i]
    if k >= 0:
        return row_log[tau, k, j]
    return log_p[tau, i, j]


@njit(cache=True, fastmath=True)
def _relax(cur, a, row):
    """cur = max(cur, a + row), elementwise (vectorized: every value is finite)."""
    for j in range(cur.size):
        v = a + row[j]
        cur[j] = v if v > cur[j] else cur[j]


@njit(cache=True)
def _viterbi_row(n, sent, query, log_p, log_pi, period, P, pi, own, groups, profile, out):
    S, T = sent.shape[1], sent.shape[2]
    n_per, R = log_pi.shape
    kmap = np.full(R, -1, np.int64)
    init = log_pi[period[0]].copy()
    if profile:
        touched, counts, rows, visits = own_chain(own, groups[n, 0], groups[n, 1], R, kmap)
        row_log = np.empty((n_per, touched.size, R))
        for tau in range(n_per):
            for k in range(touched.size):
                r = touched[k]
                for j in range(R):
                    row_log[tau, k, j] = max(np.log((counts[k, j] + P[tau, r, j]) / (rows[k] + 1.0)), LOG_ZERO)
        nv = visits.sum()
        for j in range(R):
            init[j] = max(np.log((visits[j] + pi[period[0], j]) / (nv + 1.0)), LOG_ZERO)
    else:
        row_log = np.zeros((n_per, 0, R))
    # delta[t, j]: the best score of a path ending at j at t (NEG where the queries rule j out)
    delta = np.empty((T, R))
    if query[n, 0]:
        delta[0, :] = NEG
        for s in range(S):
            delta[0, sent[n, s, 0]] = init[sent[n, s, 0]]
    else:
        delta[0, :] = init
    for t in range(1, T):
        tau = period[t - 1]
        prev, cur = delta[t - 1], delta[t]
        cur[:] = NEG
        # predecessors: the sent locations after a query, every location otherwise
        n_i = S if query[n, t - 1] else R
        for ii in range(n_i):
            i = sent[n, ii, t - 1] if query[n, t - 1] else ii
            if query[n, t]:
                for s in range(S):
                    j = sent[n, s, t]
                    v = prev[i] + _step(i, j, tau, log_p, kmap, row_log)
                    if v > cur[j]:
                        cur[j] = v
            else:
                k = kmap[i]
                _relax(cur, prev[i], row_log[tau, k] if k >= 0 else log_p[tau, i])
    # backward: the last instant's best state, then a predecessor that achieves each max
    x, best = 0, NEG + NEG
    for j in range(R):
        if delta[T - 1, j] > best:
            x, best = j, delta[T - 1, j]
    out[n, T - 1] = x
    for t in range(T - 1, 0, -1):
        tau = period[t - 1]
        arg, best = R, NEG + NEG
        n_i = S if query[n, t - 1] else R
        for ii in range(n_i):
            i = sent[n, ii, t - 1] if query[n, t - 1] else ii
            v = delta[t - 1, i] + _step(i, x, tau, log_p, kmap, row_log)
            if v > best or (v == best and i < arg):
                arg, best = i, v
        x = arg
        out[n, t - 1] = x


@njit(cache=True, parallel=True)
def _viterbi_rows(sent, query, log_p, log_pi, period, P, pi, own, groups, profile, out):
    for n in prange(sent.shape[0]):
        _viterbi_row(n, sent, query, log_p, log_pi, period, P, pi, own, groups, profile, out)


def check_adversary(adversary: str) -> None:
    if adversary not in ADVERSARIES:
        raise unknown("adversary", adversary, ADVERSARIES)
