"""Fake traces for location-based services (paper 002 §VII, Figure 6).

    table = lbs_scenario(SGLT(clusters=100, tool=True).fit(train), test)   # privacy, bandwidth, pollution
    png = report.lbs.lbs_png(table)                             # Figure 6 (a) and (b)

Every test user queries a location-based service (LBS) at random instants of her day traces; at
a query instant t her device sends her true location together with the location at t of each of
her m fake traces (§VII-A). The fakes come from one of :data:`METHODS`:

``sglt``
    fakes drawn from a pool of SGLT fakes (``model.sample(traces_per_user=pool)``), m distinct
    ones per user, without replacement, with probability proportional to exp(loglik / T)
    ("according to the synthetic traces likelihoods", §VI-C).
``uniform-iid``, ``aggregate-iid``
    each fake location drawn independently, uniformly or from pi-bar of the instant's period [45].
``rw-aggregate``
    a random walk on p-bar, started from pi-bar of the first period [10, 24, 26, 56].
``rw-profile``
    a random walk on the user's own mobility profile p(u) [23, 49] (see :func:`localize` for the
    smoothed chain).

The adversary (§VII-B) is the service provider. It knows the aggregate model <p-bar, pi-bar>,
sees the set of locations sent at every query instant, and runs the localization attack of
[46]: the hidden state of a hidden Markov model is the true location, the emission is 1 when the
state is one of the sent locations at a query instant (no constraint between queries), and the
most likely path (Viterbi) gives its guess at every query instant. Privacy is its probability of
error (the share of the user's query instants it gets wrong), the median over users; utility
loss is the bandwidth (distinct locations sent per query) and the profile pollution (distinct
semantic classes, the SGLT model's ``labels_``, sent per query), averaged over all queries (§VII-C).

The paper ran this scenario with the authors' tool, whose aggregate model mixes the distance
kernel half and half (``SGLT(tool=True)``, what ``locsynth lbs`` fits): random walks on it wander
and the adversary filters them out, as in Fig. 6. With the default model (smoothing 0.01) p-bar is
nearly deterministic where few users go, random walks on it are as likely as real traces, and
``rw-aggregate`` ties SGLT at the ceiling (median error 1) for m = 5 and 10 on PF.

Where the paper is silent the choices are ours:

- a query happens at each instant independently with probability
  min(1, instant length / ``query_minutes``), so once every 40 minutes on average (Fig. 6);
- the SGLT selection is tempered to exp(loglik / T), the likelihood per step (``temperature``
  None): the log-likelihoods of a pool spread over tens of nats, so weights exp(loglik)
  (``temperature=1``) give (almost) every user the same few most likely fakes (on PF, 12
  distinct fakes for 500 users at m = 1, out of a pool of 5000);
- a user's fakes for m = 1, 5, 10 are nested (the first m of one draw of max(m)), and within a
  repetition all methods see the same query instants (common random numbers);
- instants of a test user's day trace without an event are filled by
  :func:`mobility.fill_missing` (the adversary tracks a complete true trace);
- the profile chain of ``rw-profile`` (and of ``adversary="profile"``) is the user's transition
  counts c_u over all her day traces, each row smoothed as (c_u[r] + p-bar[r]) / (n_u[r] + 1),
  one chain for the day with p-bar of the period of the current instant;
- ``adversary="profile"`` is a stronger adversary that knows that chain (and starts from the
  user's visits smoothed the same way by pi-bar). With one day per user (PF) the chain is learned
  from the very trace it tracks, so it is an upper bound on what a profiling adversary learns;
- the paper repeats 20 times (4 selections of fakes x 5 query draws); a repetition here redraws
  query instants, the selection of SGLT fakes and the baselines' randomness together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit, prange

from ...errors import InputError
from ...traces import TraceSet
from ...validation import check_count
from .generate import LOG_ZERO
from .mobility import day_traces, fill_missing, period_of

#: the fake-trace generators of §VII-A, in the order of Figure 6's legend
METHODS = ("sglt", "uniform-iid", "aggregate-iid", "rw-aggregate", "rw-profile")
#: what the adversary knows: the aggregate model (§VII-B) or also the user's own chain
ADVERSARIES = ("aggregate", "profile")
#: score of a state the observations rule out (finite, so that the max-reductions may vectorize)
NEG = -1e300
#: random streams (SeedSequence spawn keys (repetition, stream))
QUERY_STREAM, FAKE_STREAM = 0, 1


# -- the adversary: Viterbi decoding of the true locations ------------------------------------------
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
    _check_adversary(adversary)
    truth = np.asarray(truth, np.int64)
    sent = np.concatenate([truth[:, None, :], np.asarray(fakes, np.int64)], axis=1)
    own = truth if adversary == "profile" else None
    guess = localize(sent, query, P, pi, period, own=own, groups=groups if own is not None else None)
    query = np.asarray(query, bool)
    return ((guess != truth) & query).sum(axis=1), query.sum(axis=1)


@njit(cache=True)
def _own_chain(own, lo, hi, R, kmap):
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
        touched, counts, rows, visits = _own_chain(own, groups[n, 0], groups[n, 1], R, kmap)
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


# -- the fake-trace generators (§VII-A) ---------------------------------------------------------------
@dataclass(frozen=True)
class _Setting:
    """What the generators draw from: the aggregate model, the test users' true traces and the
    SGLT pool."""

    P: np.ndarray                 # (periods, R, R)
    pi: np.ndarray                # (periods, R)
    period: np.ndarray            # (T,)
    truth: np.ndarray             # (N, T): every test day trace, complete
    groups: np.ndarray            # (N, 2): rows of truth of the same test user
    pool: np.ndarray | None       # (n_pool, T): SGLT fakes
    pool_logw: np.ndarray | None  # (n_pool,): loglik / T


def _draw(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws: for each row of ``cdf`` (..., R, unnormalized), the first index whose
    cumulative mass exceeds u times the row's total."""
    return np.minimum((cdf <= (u * cdf[..., -1])[..., None]).sum(axis=-1), cdf.shape[-1] - 1)


def _fakes_sglt(m: int, s: _Setting, rng: np.random.Generator) -> np.ndarray:
    """m distinct pool fakes per row, drawn without replacement with probability proportional to
    exp(loglik / T): the m largest of logw + Gumbel noise (successive sampling)."""
    N, n_pool = s.truth.shape[0], s.pool.shape[0]
    keys = s.pool_logw[None, :] + rng.gumbel(size=(N, n_pool))
    top = np.argpartition(-keys, m - 1, axis=1)[:, :m] if m < n_pool else np.tile(np.arange(n_pool), (N, 1))
    order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1, kind="stable")
    return s.pool[np.take_along_axis(top, order, axis=1)]


def _fakes_uniform_iid(m: int, s: _Setting, rng: np.random.Generator) -> np.ndarray:
    """Each fake location uniform over the R locations, independently [45]."""
    N, T = s.truth.shape
    return rng.integers(0, s.pi.shape[1], size=(N, m, T))


def _fakes_aggregate_iid(m: int, s: _Setting, rng: np.random.Generator) -> np.ndarray:
    """Each fake location from pi-bar of its instant's period, independently [45]."""
    N, T = s.truth.shape
    cdf = np.cumsum(s.pi, axis=1)[s.period]                    # (T, R)
    return _draw(cdf[None, None], rng.random((N, m, T)))


def _fakes_rw_aggregate(m: int, s: _Setting, rng: np.random.Generator) -> np.ndarray:
    """A random walk on p-bar started from pi-bar of the first period."""
    N, T = s.truth.shape
    cdf_p = np.cumsum(s.P, axis=2)
    out = np.empty((N, m, T), np.int64)
    u = rng.random((T, N, m))
    out[:, :, 0] = _draw(np.cumsum(s.pi[s.period[0]])[None, None], u[0])
    for t in range(1, T):
        out[:, :, t] = _draw(cdf_p[s.period[t - 1]][out[:, :, t - 1]], u[t])
    return out


def _fakes_rw_profile(m: int, s: _Setting, rng: np.random.Generator) -> np.ndarray:
    """A random walk on the user's smoothed chain (c_u[r] + p-bar[r]) / (n_u[r] + 1), started from
    her visit distribution [23, 49]."""
    N, T = s.truth.shape
    out = np.empty((N, m, T), np.int64)
    _walk_profile(s.truth, s.groups, np.cumsum(s.P, axis=2), s.period, rng.random((N, m, T, 2)), out)
    return out


@njit(cache=True, parallel=True)
def _walk_profile(truth, groups, cdf_p, period, u, out):
    N, m, T = out.shape
    R = cdf_p.shape[1]
    for n in prange(N):
        kmap = np.full(R, -1, np.int64)
        lo, hi = groups[n, 0], groups[n, 1]
        _, counts, rows, _ = _own_chain(truth, lo, hi, R, kmap)
        for f in range(m):
            e = min(int(u[n, f, 0, 0] * (hi - lo) * T), (hi - lo) * T - 1)   # a uniform visit of hers
            x = truth[lo + e // T, e % T]
            out[n, f, 0] = x
            for t in range(1, T):
                k = kmap[x]
                a, b = u[n, f, t, 0], u[n, f, t, 1]
                if k >= 0 and a * (rows[k] + 1.0) < rows[k]:
                    # one of her own transitions out of x, with probability n_u[x] / (n_u[x] + 1)
                    target, acc, y = b * rows[k], 0.0, R - 1
                    for j in range(R):
                        acc += counts[k, j]
                        if acc > target:
                            y = j
                            break
                else:
                    row = cdf_p[period[t - 1], x]
                    target, y = b * row[R - 1], R - 1
                    for j in range(R):
                        if row[j] > target:
                            y = j
                            break
                x = y
                out[n, f, t] = x


GENERATORS = {"sglt": _fakes_sglt, "uniform-iid": _fakes_uniform_iid, "aggregate-iid": _fakes_aggregate_iid,
              "rw-aggregate": _fakes_rw_aggregate, "rw-profile": _fakes_rw_profile}


# -- utility loss (§VII-C) ------------------------------------------------------------------------------
def _distinct(values: np.ndarray) -> np.ndarray:
    """Distinct values along axis 1 of (N, S, T) -> (N, T)."""
    v = np.sort(values, axis=1)
    return 1 + (np.diff(v, axis=1) != 0).sum(axis=1)


# -- the scenario -----------------------------------------------------------------------------------------
def lbs_scenario(model, test: TraceSet, fakes=(1, 5, 10), methods=METHODS, repeats: int = 5, pool: int = 10,
                 query_minutes: float = 40.0, adversary: str = "aggregate", seed: int = 0,
                 temperature: float | None = None, progress=None) -> pd.DataFrame:
    """Privacy and utility loss of every fake-trace method for the test users (Figure 6).

    Parameters
    ----------
    model : SGLT
        A fitted SGLT model: its aggregate model is the adversary's knowledge and the baselines'
        source, its ``labels_`` the semantic classes, its fakes the ``sglt`` method's pool.
    test : TraceSet
        The LBS users (on the model's space and time axis); every day trace is a day of queries.
    fakes : the numbers m of fake traces (paper: 1, 5, 10).
    methods : among :data:`METHODS`.
    repeats : repetitions averaged (paper: 20); each redraws queries, selections and baselines.
    pool : SGLT fakes per training user in the pool (``model.sample(traces_per_user=pool)``).
    query_minutes : mean time between queries (paper: 40).
    adversary : 'aggregate' (the paper's) or 'profile' (see the module docstring).
    seed : seed of everything random here (the pool, the filled instants, queries and fakes).
    temperature : the SGLT fakes are drawn with weights exp(loglik / temperature); None is T,
        the instants of a day (the likelihood per step, our default); 1 is the untempered
        likelihood, under which every user gets nearly the same few most likely fakes.
    progress : called as progress(done, total) after each (repetition, method, m).

    Returns
    -------
    DataFrame with one row per (method, m): ``method``, ``fakes`` (m), ``privacy`` (the median
    over users of the adversary's probability of error, users without a query skipped, averaged
    over repetitions), ``bandwidth`` and ``pollution`` (distinct locations and distinct semantic
    classes sent per query, over all queries, averaged over repetitions).
    """
    from .model import SGLT

    if not isinstance(model, SGLT):
        raise InputError(f"the LBS scenario needs a fitted SGLT model, got {type(model).__name__}")
    model.check_is_fitted()
    if not isinstance(test, TraceSet):
        raise InputError(f"the test users must be a TraceSet, got {type(test).__name__}")
    _check_frame(model, test)
    ms = _fake_counts(fakes)
    methods = _check_methods(methods)
    _check_adversary(adversary)
    repeats = check_count("repeats", repeats)
    pool = check_count("pool", pool)
    if not query_minutes > 0:
        raise InputError(f"query_minutes must be positive, got {query_minutes}")
    if temperature is not None and not temperature > 0:
        raise InputError(f"temperature must be positive (or None for the instants of a day), got {temperature}")
    if test.n_events == 0:
        raise InputError("the test set has no events: there is no LBS user")

    T = model.time_.instants_per_day
    period = period_of(T, model.periods)
    P, pi = model.aggregate_.P, model.aggregate_.pi
    days = fill_missing(day_traces(test), test.space, seed=seed)
    truth = days.locs.astype(np.int64)
    owner = days.owner
    lo = np.searchsorted(owner, owner)
    hi = np.searchsorted(owner, owner, side="right")
    groups = np.stack([lo, hi], axis=1)
    pool_locs = pool_logw = None
    if "sglt" in methods:
        syn = model.sample(traces_per_user=pool, seed=seed)
        pool_locs = syn.loc.astype(np.int64).reshape(syn.n_traces, T)
        pool_logw = syn.users["loglik"].to_numpy(np.float64) / (T if temperature is None else temperature)
        if pool_locs.shape[0] < ms[-1]:
            raise InputError(f"the SGLT pool has {pool_locs.shape[0]} fakes, fewer than the {ms[-1]} fakes to "
                             f"send; increase pool (fakes per training user)")
    setting = _Setting(P, pi, period, truth, groups, pool_locs, pool_logw)
    labels = np.asarray(model.labels_, np.int64)
    q = min(1.0, model.time_.instant.total_seconds() / (60.0 * query_minutes))
    n_users = len(test.users)
    totals = {(meth, m): np.zeros(3) for meth in methods for m in ms}
    done, total = 0, repeats * len(methods) * len(ms)
    for rep in range(repeats):
        query = _rng(seed, rep, QUERY_STREAM).random(truth.shape) < q
        n_queries = int(query.sum())
        for meth in methods:
            drawn = GENERATORS[meth](ms[-1], setting, _rng(seed, rep, FAKE_STREAM + METHODS.index(meth)))
            for m in ms:
                sent = np.concatenate([truth[:, None, :], drawn[:, :m]], axis=1)
                mistakes, asked = attack_errors(truth, drawn[:, :m], query, P, pi, period, adversary=adversary,
                                                groups=groups)
                wrong = np.bincount(owner, weights=mistakes, minlength=n_users)
                per_user = np.bincount(owner, weights=asked, minlength=n_users)
                has = per_user > 0
                privacy = float(np.median(wrong[has] / per_user[has])) if has.any() else float("nan")
                bandwidth = _distinct(sent)[query].sum() / max(n_queries, 1)
                pollution = _distinct(labels[sent])[query].sum() / max(n_queries, 1)
                totals[meth, m] += (privacy, bandwidth, pollution)
                done += 1
                if progress:
                    progress(done, total)
    rows = [(meth, m, *(totals[meth, m] / repeats)) for meth in methods for m in ms]
    return pd.DataFrame(rows, columns=["method", "fakes", "privacy", "bandwidth", "pollution"])


def _rng(seed: int, rep: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(rep, stream)))


def _check_frame(model, test: TraceSet) -> None:
    space, time = model.space_, model.time_
    if test.space.n_locations != space.n_locations:
        raise InputError(f"the test set has {test.space.n_locations} {test.space.kind} locations but the model "
                         f"was fitted on {space.n_locations} {space.kind} locations; both must be on the same space")
    if test.space.meta() != space.meta():
        raise InputError(f"the test set's space {test.space.meta()} differs from the model's {space.meta()}; both "
                         f"must be on the same space")
    if test.time.instants_per_day != time.instants_per_day or test.time.instant != time.instant:
        raise InputError(f"the test set's time axis ({test.time.describe()}) differs from the model's "
                         f"({time.describe()}); both need the same instants of a day")


def _fake_counts(fakes) -> list[int]:
    values = [fakes] if np.isscalar(fakes) else list(fakes)
    if not values:
        raise InputError("fakes is empty: give at least one number of fake traces, e.g. 1, 5, 10")
    return sorted({check_count("the number of fake traces", value) for value in values})


def _check_methods(methods) -> list[str]:
    chosen = [methods] if isinstance(methods, str) else list(methods)
    if not chosen:
        raise InputError(f"no fake-trace method given; expected some of {', '.join(METHODS)}")
    for name in chosen:
        if name not in METHODS:
            raise InputError(f"unknown fake-trace method {name!r}; expected one of {', '.join(METHODS)}")
    return [name for name in METHODS if name in chosen]


def _check_adversary(adversary: str) -> None:
    if adversary not in ADVERSARIES:
        raise InputError(f"unknown adversary {adversary!r}; expected one of {', '.join(ADVERSARIES)}")
