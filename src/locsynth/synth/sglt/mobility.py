"""SGLT's mobility models (paper 002 §IV-A and §V-B): day traces, missing events, users'
profiles and the aggregate model.

SGLT works on *day traces*: one location per instant of a day. A training trace is cut into its
days (a day without any event is not a day trace); instants of a day trace without an event are
*missing* and are filled by Gibbs sampling under the user's own Markov chain (§IV-A: "make use of
algorithms such as Gibbs sampling if the traces have missing locations"), as the authors' tool
does before it learns profiles.

A day is partitioned into ``periods`` consecutive time periods of (nearly) equal length; the
mobility model of user u (eq. 1) is

    p_{r,tau}^{r'}(u) = Pr{A^{t+1} = r' | A^t = r, tau^t = tau}      (transitions out of period tau)
    pi_tau^r(u)        = Pr{A^t = r | tau^t = tau}                    (visits in period tau)

(the paper conditions transitions on the next instant's period as well; with consecutive
instants that period is tau or tau + 1 and is fixed by t, so conditioning on tau^t loses nothing
on a regular time axis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import numba
from numba import njit, prange

from ...core.errors import InputError
from ...core.rng import uniform, user_words
from ...data.traces import TraceSet
from ...metrics.transitions import period_transition_counts

#: Gibbs sweeps over the missing events of a day trace (the last sweep is kept).
FILL_SWEEPS = 10
#: Weight of the aggregate chain in a user's chain used to fill missing events (a prior of this
#: many pseudo-transitions per row).
FILL_PRIOR = 1.0
#: rows of each factor of the filling's conditional kept per user (a row is R float64 per thread)
ROW_SLOTS = 256


@dataclass(frozen=True)
class DayTraces:
    """Day traces of a TraceSet.

    Attributes
    ----------
    locs : ndarray of shape (n_days, T), int32
        One row per (trace, day) with at least one event; -1 where the instant has no event
        (before :func:`fill_missing`).
    owner : ndarray of shape (n_days,), int64
        Trace row (training user) of each day trace; sorted.
    day : ndarray of shape (n_days,), int64
        Day index of each day trace.
    """

    locs: np.ndarray
    owner: np.ndarray
    day: np.ndarray

    @property
    def missing(self) -> int:
        return int((self.locs < 0).sum())

    def of(self, u: int) -> np.ndarray:
        """Rows of user ``u``'s day traces."""
        lo, hi = np.searchsorted(self.owner, [u, u + 1])
        return np.arange(lo, hi)


def day_traces(traces: TraceSet) -> DayTraces:
    """Cut every trace of ``traces`` into day traces (the last event wins an instant with several)."""
    T = traces.time.instants_per_day
    day = traces.t // T
    key = traces.user.astype(np.int64) * (int(day.max()) + 1 if day.size else 1) + day
    uniq, row = np.unique(key, return_inverse=True)
    locs = np.full((uniq.size, T), -1, np.int32)
    locs[row, traces.t % T] = traces.loc
    first = np.searchsorted(key, uniq)          # events are sorted by (user, t), so by key too
    return DayTraces(locs, traces.user[first].astype(np.int64), day[first].astype(np.int64))


def period_of(T: int, periods: int) -> np.ndarray:
    """Period of each instant of a day: ``periods`` consecutive groups of nearly equal size."""
    if not 1 <= periods <= T:
        raise InputError(f"periods must be between 1 and the {T} instants of a day, got {periods}")
    return (np.arange(T) * periods // T).astype(np.int64)


def distance_kernel(space, floor_km: float = 1.0) -> np.ndarray:
    """Rows of max(d(r, r'), 1 km)^-2, normalised (§V-B's smoothing term; d in km as the tool's
    location file)."""
    k = 1.0 / np.maximum(distance_km(space), floor_km) ** 2
    return k / k.sum(axis=1, keepdims=True)


def distance_km(space) -> np.ndarray:
    """(R, R) distances between the locations' points, in km."""
    i = np.arange(space.n_locations)
    return space.distance_m(i[:, None], i[None, :]) / 1000.0


@dataclass(frozen=True)
class AggregateModel:
    """The aggregate mobility model <p-bar, pi-bar> (§V-B).

    Attributes
    ----------
    P : ndarray of shape (periods, R, R)
        Row-stochastic transition matrices, one per period of the current instant.
    pi : ndarray of shape (periods, R)
        Visit distributions per period.
    """

    P: np.ndarray
    pi: np.ndarray

    def log(self) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore"):
            return np.log(self.P), np.log(self.pi)

    def stationary(self, iterations: int = 1000, tol: float = 1e-12) -> np.ndarray:
        """Stationary distribution of the first period's chain (power iteration)."""
        x = np.full(self.P.shape[1], 1.0 / self.P.shape[1])
        for _ in range(iterations):
            y = x @ self.P[0]
            if np.abs(y - x).sum() < tol:
                return y
            x = y
        return x


def aggregate_model(locs: np.ndarray, owner: np.ndarray, period: np.ndarray, space, periods: int,
                    smoothing: float = 0.01, wrap: bool = False) -> AggregateModel:
    """<p-bar, pi-bar> from complete day traces (§V-B).

    .. math:: \\bar p_{r,\\tau} = (1 - s) \\, z_r^{-1} \\sum_{u} p_{r,\\tau}(u) + s \\, K_r,
              \\qquad K_r(r') \\propto \\max(1, d(r, r'))^{-2}

    where the sum runs over the users who leave r in period tau (z_r of them) and s =
    ``smoothing``. The paper writes the term as "+ epsilon max(1, d)^-2, epsilon a small
    constant" before normalising; we state it as a mixing weight so that it does not depend on
    the number of users, small by default (0.01; the authors' tool mixes half and half: s =
    0.5). A row no user leaves is K_r alone. pi-bar is the average of the users' visit distributions per period.
    """
    if not 0.0 <= smoothing <= 1.0:
        raise InputError(f"smoothing must be in [0, 1], got {smoothing}")
    R = space.n_locations
    n_users = int(owner.max()) + 1 if owner.size else 0
    K = distance_kernel(space)
    P = np.empty((periods, R, R))
    pi = np.zeros((periods, R))
    for tau in range(periods):
        mean_rows, users_per_row = _mean_user_rows(locs, owner, period, tau, R, wrap)
        seen = users_per_row > 0
        P[tau] = K
        P[tau][seen] = (1.0 - smoothing) * mean_rows[seen] + smoothing * K[seen]
        cols = np.flatnonzero(period == tau)
        v = locs[:, cols]
        per_user = sp.csr_array((np.ones(v.size), (np.repeat(owner, cols.size), v.ravel())),
                                shape=(n_users, R)).toarray()
        tot = per_user.sum(axis=1, keepdims=True)
        has = tot[:, 0] > 0
        pi[tau] = (per_user[has] / tot[has]).mean(axis=0) if has.any() else 1.0 / R
    return AggregateModel(P, pi)


def _mean_user_rows(locs, owner, period, tau, R, wrap):
    """(R, R) sum over users of p_{r,tau}(u) / number of users with row r; users per row."""
    a, b = locs[:, :-1], locs[:, 1:]
    own = np.broadcast_to(owner[:, None], a.shape)
    ptau = np.broadcast_to(period[:-1], a.shape)
    if wrap:
        a, b = np.hstack([a, locs[:, -1:]]), np.hstack([b, locs[:, :1]])
        own = np.broadcast_to(owner[:, None], a.shape)
        ptau = np.broadcast_to(np.append(period[:-1], period[-1]), a.shape)
    sel = (ptau == tau) & (a >= 0) & (b >= 0)
    u, r, r2 = own[sel].astype(np.int64), a[sel].astype(np.int64), b[sel].astype(np.int64)
    key, c = np.unique((u * R + r) * R + r2, return_counts=True)
    ur = key // R
    ur_key, inv = np.unique(ur, return_inverse=True)
    row_tot = np.bincount(inv, weights=c)
    prob = c / row_tot[inv]
    row = (key // R) % R
    summed = np.zeros((R, R))
    np.add.at(summed, (row, key % R), prob)
    users_per_row = np.bincount(ur_key % R, minlength=R)
    return summed / np.maximum(users_per_row, 1)[:, None], users_per_row


# -- filling missing events -----------------------------------------------------------------------
def fill_missing(days: DayTraces, space, seed: int = 0, sweeps: int = FILL_SWEEPS,
                 prior: float = FILL_PRIOR) -> DayTraces:
    """Day traces with every missing instant filled by Gibbs sampling.

    User u's chain is :math:`P_u[r] = (c_u[r] + \\beta \\bar p[r]) / (n_u[r] + \\beta)`: its
    observed transition counts shrunk toward the aggregate chain of the observed transitions
    (beta = ``prior``), one chain for the whole day. Missing instants start at the nearest
    observed location before them (after them at the start of a day) and are then resampled
    ``sweeps`` times, each from :math:`p(x_t \\mid x_{t-1}, x_{t+1}) \\propto P_u[x_{t-1}, x_t]
    P_u[x_t, x_{t+1}]` (the first instant from u's visits times the next step). Observed events
    are never changed; the result depends on ``seed`` and the user only.
    """
    locs = days.locs.copy()
    if not (locs < 0).any():
        return days
    R = space.n_locations
    T = locs.shape[1]
    counts = period_transition_counts(locs, np.zeros(T, np.int64), R, 1)[0]
    agg = _rows_normalized(counts, distance_kernel(space))
    agg_t = np.ascontiguousarray(agg.T)
    users = np.unique(days.owner)
    words = user_words(seed, 7, 0, int(users.max()) + 1)[:, 0] if users.size else np.zeros(0, np.uint64)
    starts = np.searchsorted(days.owner, users)
    ends = np.searchsorted(days.owner, users, side="right")
    _fill_users(locs, starts, ends, words[users], agg, agg_t, float(prior), int(sweeps),
                min(numba.get_num_threads(), max(users.size, 1)), min(R, ROW_SLOTS))
    return DayTraces(locs, days.owner, days.day)


def _rows_normalized(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    tot = counts.sum(axis=1, keepdims=True)
    return np.where(tot > 0, counts / np.maximum(tot, 1e-300), fallback)


@njit(parallel=True, cache=True)
def _fill_users(locs, starts, ends, words, agg, agg_t, prior, sweeps, nt, slots):
    """The sweeps of :func:`fill_missing` on ``nt`` threads, users dealt round robin (a user's
    draws come from its own word, so the result does not depend on the number of threads).

    Each factor of p(x_t | x_{t-1}, x_{t+1}) is a row of u's chain, P_u[x_{t-1}, .] and
    P_u[., x_{t+1}]; both stay fixed through u's sweeps, so the first ``slots`` rows of each
    that u needs are computed once and kept (the rest every time they are needed). The products
    and their running sums are the same numbers in the same order either way."""
    for t in prange(nt):
        _fill_some(locs, starts, ends, words, agg, agg_t, prior, sweeps, t, nt, slots)
    return locs


@njit(cache=True)
def _fill_some(locs, starts, ends, words, agg, agg_t, prior, sweeps, offset, step, slots):
    T = locs.shape[1]
    R = agg.shape[0]
    c = np.zeros((R, R), np.float32)        # a user's counts: integers, exact in float32
    c_t = np.zeros((R, R), np.float32)      # c transposed: the next step's column read as a row
    n = np.zeros(R)
    visits = np.zeros(R)
    w = np.empty(R)
    state = np.zeros(1, np.uint64)
    ahead = np.empty((slots, R))                # rows P_u[a, .] the sweeps have needed, in slots
    back = np.empty((slots, R))                 # columns P_u[., b], as rows
    a_slot = np.full(R, -1, np.int64)       # the slot of each row, -1 for none
    b_slot = np.full(R, -1, np.int64)
    opening = np.empty(R)                   # the first instant's factor, u's visit shares
    spare_a, spare_b = np.empty(R), np.empty(R)
    ones = np.ones(R)                       # the last instant has no second factor
    for q in range(offset, starts.size, step):
        lo, hi = starts[q], ends[q]
        state[0] = words[q]
        na = nb = 0
        # the user's observed transitions and visits
        for d in range(lo, hi):
            for t in range(T):
                if locs[d, t] >= 0:
                    visits[locs[d, t]] += 1.0
                if t + 1 < T and locs[d, t] >= 0 and locs[d, t + 1] >= 0:
                    c[locs[d, t], locs[d, t + 1]] += 1.0
                    c_t[locs[d, t + 1], locs[d, t]] += 1.0
                    n[locs[d, t]] += 1.0
        vtot = 0.0
        for r in range(R):
            vtot += visits[r]
        for r in range(R):
            opening[r] = (visits[r] + prior / R) / (vtot + prior)
        for d in range(lo, hi):
            miss = np.empty(T, np.bool_)
            for t in range(T):
                miss[t] = locs[d, t] < 0
            # start: carry the last observed location forward, the first one backward
            last = -1
            for t in range(T):
                if locs[d, t] >= 0:
                    last = locs[d, t]
                elif last >= 0:
                    locs[d, t] = last
            first = -1
            for t in range(T - 1, -1, -1):
                if locs[d, t] >= 0:
                    first = locs[d, t]
                elif first >= 0:
                    locs[d, t] = first
            for _ in range(sweeps):
                for t in range(T):
                    if not miss[t]:
                        continue
                    if t > 0:                   # first factor: P_u[x_{t-1}, .]
                        a = locs[d, t - 1]
                        ahead_row, na = _kept_row(ahead, a_slot, na, spare_a, c, agg, n, prior, a, True)
                    else:
                        ahead_row = opening
                    if t + 1 < T:               # second factor: P_u[., x_{t+1}]
                        b = locs[d, t + 1]
                        back_row, nb = _kept_row(back, b_slot, nb, spare_b, c_t, agg_t, n, prior, b, False)
                    else:
                        back_row = ones
                    tot = _running_sums(w, ahead_row, back_row)
                    u = uniform(state) * tot
                    x = np.searchsorted(w, u, side="right")
                    locs[d, t] = min(x, R - 1)
        # reset what this user touched (observed events were kept, so their pairs are here)
        a_slot[:] = -1
        b_slot[:] = -1
        for d in range(lo, hi):
            for t in range(T):
                visits[locs[d, t]] = 0.0
                n[locs[d, t]] = 0.0
                if t + 1 < T:
                    c[locs[d, t], locs[d, t + 1]] = 0.0
                    c_t[locs[d, t + 1], locs[d, t]] = 0.0


@njit(cache=True)
def _kept_row(rows, slot_of, used, spare, counts, agg, n, prior, i, forward):
    """(row i of a factor of the filling's conditional, slots used). ``forward``: P_u[i, .] from u's
    counts c and the aggregate chain; else P_u[., i] from their transposes. A row keeps its slot
    in ``rows``; a new row takes the next while any is left, else it is computed into ``spare``."""
    if slot_of[i] >= 0:
        return rows[slot_of[i]], used
    if used < rows.shape[0]:
        slot_of[i] = used
        out, used = rows[used], used + 1
    else:
        out = spare
    for x in range(out.size):       # (c_u[i, x] + beta pbar[i, x]) / (n_u[i] + beta), or transposed
        out[x] = (counts[i, x] + prior * agg[i, x]) / ((n[i] if forward else n[x]) + prior)
    return out, used


@njit(cache=True)
def _running_sums(w, f, g):
    """w[x] = sum_{y <= x} f[y] g[y], added in order; returns the total."""
    tot = 0.0
    for x in range(w.size):
        tot += f[x] * g[x]
        w[x] = tot
    return tot


# -- users' visit profiles -------------------------------------------------------------------------
def visit_profiles(locs: np.ndarray, owner: np.ndarray, n_users: int, period: np.ndarray,
                   n_locations: int, periods: int) -> tuple[sp.csr_array, np.ndarray]:
    """Each user's visit distribution per period, pi_tau(u) (eq. 1), from complete day traces.

    Returns
    -------
    profile : csr_array of shape (n_users * periods, R)
        Row u * periods + tau is pi_tau(u); indices sorted.
    weight : ndarray of shape (n_users, periods)
        Pr_u{tau}: the share of u's instants in period tau.
    """
    T = locs.shape[1]
    R = n_locations
    rows = np.repeat(owner.astype(np.int64), T) * periods + np.tile(period, owner.size)
    prof = sp.csr_array((np.ones(locs.size), (rows, locs.ravel().astype(np.int64))), shape=(n_users * periods, R))
    prof.sum_duplicates()
    tot = np.asarray(prof.sum(axis=1)).ravel()
    prof = sp.csr_array(sp.diags_array(1.0 / np.maximum(tot, 1e-300)) @ prof)
    prof.sort_indices()
    weight = tot.reshape(n_users, periods)
    weight = weight / np.maximum(weight.sum(axis=1, keepdims=True), 1e-300)
    return prof, weight


def sorted_profiles(profile: sp.csr_array, n_users: int, periods: int) -> np.ndarray:
    """(n_users, periods, M): each row of ``profile`` sorted in decreasing order, zero-padded to
    the largest support M (for :func:`..similarity.semantic_value_sorted`)."""
    nnz = np.diff(profile.indptr)
    M = max(int(nnz.max()) if nnz.size else 0, 1)
    out = np.zeros((n_users * periods, M))
    for i in range(profile.shape[0]):
        v = np.sort(profile.data[profile.indptr[i]:profile.indptr[i + 1]])[::-1]
        out[i, :v.size] = v
    return out.reshape(n_users, periods, M)
