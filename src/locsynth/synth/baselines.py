"""Baselines with PPMTF's protocol: Uniform, SGD and Training (paper 001 §4.2 and Appendix C)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..data.traces import TraceSet, is_trip_set
from ..core.rng import user_uniforms
from .base import Synthesizer, Tags
from ..core.validation import check_count
from ..core.validation import check_seed, whole


class Uniform(Synthesizer):
    """Every event at a location drawn uniformly at random (among those a public domain allows).

    On daily traces (paper 001 §4.2) every instant of each day is an event. On trips (a set with
    an ``hour`` per trace, :func:`..traces.is_trip_set`) a day's walk would turn a trip of a few
    minutes into 1,440 events: each training trip keeps its instants and takes a uniform cell at
    each (choice: the baseline then shares the trips' lengths, as Training shares everything).
    """

    name = "uniform"
    tags = Tags(baseline=True, domain=True)
    checks = {"seed": check_seed}

    def __init__(self, seed: int = 0):
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "Uniform":
        self._remember_frame(train)
        self.times_ = (train.user.copy(), train.t.copy()) if is_trip_set(train) else None
        return self

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1,
                users=None, progress=None, client=None) -> TraceSet:
        """``traces_per_user`` uniformly random traces for each of the training users 0 .. n - 1 (or
        ``users``): of ``days`` days, or on trips at the instants of the user's trip."""
        rows = self._rows(n, users)
        k = check_count(traces_per_user, "traces_per_user")
        keep = self.space_.allowed_locations()           # every location, or those a public domain allows
        L = keep.size
        if self.times_ is not None:
            return self._uniform_trips(rows, k, seed)
        T = check_count(days, "days") * self.time_.instants_per_day
        locs = np.vstack([keep[np.minimum((user_uniforms(seed, int(u), (k, T)) * L).astype(np.int64), L - 1)]
                          for u in rows]) if rows.size else np.zeros((0, T), np.int64)
        return self._rectangular(locs, np.repeat(rows, k), np.tile(np.arange(k), rows.size), days)

    def _uniform_trips(self, rows: np.ndarray, k: int, seed: int) -> TraceSet:
        user, t = self.times_
        zero = np.zeros(user.size, np.int32)
        chosen = TraceSet(user, t, zero, self.users_, self.space_, self.time_).select_users(np.repeat(rows, k))
        off = np.concatenate([[0], np.cumsum(np.bincount(chosen.user, minlength=rows.size * k))])
        loc = np.empty(chosen.n_events, np.int64)
        keep = self.space_.allowed_locations()
        L = keep.size
        for q, u in enumerate(np.repeat(rows, k)):
            draws = user_uniforms(seed, int(u), (k, off[q + 1] - off[q]))[q % k]
            loc[off[q]:off[q + 1]] = keep[np.minimum((draws * L).astype(np.int64), L - 1)]
        return self._synthetic(chosen.user, chosen.t, loc, np.repeat(rows, k), np.tile(np.arange(k), rows.size),
                               presorted=True)

    def _arrays(self):
        return {} if self.times_ is None else dict(zip(("user", "t"), self.times_))

    def _restore(self, arrays, fitted):
        self.times_ = (arrays["user"], arrays["t"]) if "user" in arrays else None


class Training(Synthesizer):
    """The training traces released as they are (the upper end of utility, and of risk)."""

    name = "training"
    tags = Tags(baseline=True, domain=True)

    def __init__(self):
        pass

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "Training":
        self._remember_frame(train)
        self.events_ = (train.user.copy(), train.t.copy(), train.loc.copy())
        return self

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1,
                users=None, progress=None, client=None) -> TraceSet:
        """The training traces of users 0 .. n - 1 (or ``users``) themselves, ``traces_per_user``
        copies each, whatever their length (``days`` and ``seed`` are not used)."""
        rows = self._rows(n, users)
        k = check_count(traces_per_user, "traces_per_user")
        user, t, loc = self.events_
        chosen = TraceSet(user, t, loc, self.users_, self.space_, self.time_).select_users(np.repeat(rows, k))
        return self._synthetic(chosen.user, chosen.t, chosen.loc, np.repeat(rows, k), np.tile(np.arange(k), rows.size),
                               presorted=True)

    def _arrays(self):
        return dict(zip(("user", "t", "loc"), self.events_))

    def _restore(self, arrays, fitted):
        self.events_ = (arrays["user"], arrays["t"], arrays["loc"])


class SGD(Synthesizer):
    """SGD for location traces (Bindschaedler et al. 2017, as applied in paper 001 Appendix C).

    One transition matrix per time slot and the distribution of the first instant, by maximum
    likelihood over the training traces, common to all users. A synthetic trace copies the first
    ``xi`` events of its input user's trace and draws the rest from the matrices. A row never
    observed in a slot falls back to the row pooled over slots, and then to a uniform row (the
    paper leaves this open).

    Parameters
    ----------
    xi : int
        Events copied from the input user's trace before the matrices take over (0: none).
    """

    name = "sgd"
    checks = {"xi": whole(0), "seed": check_seed}

    def __init__(self, xi: int = 0, seed: int = 0):
        self.xi = xi
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "SGD":
        self._remember_frame(train)
        L, S = self.space_.n_locations, self.time_.n_slots
        i = train.transition_index()
        slot = train.time.slot(train.t[i + 1]).astype(np.int64)
        src, dst = train.loc[i].astype(np.int64), train.loc[i + 1].astype(np.int64)
        self.counts_ = sp.csr_array((np.ones(src.size), (slot * L + src, dst)), shape=(S * L, L))
        self.counts_.sum_duplicates()
        first_instant = train.t % train.time.instants_per_day == 0
        first = np.bincount(train.loc[first_instant], minlength=L).astype(np.float64)
        if first.sum() == 0:
            first = np.bincount(train.loc, minlength=L).astype(np.float64)
        self.first_ = first / first.sum()
        self.events_ = (train.user.copy(), train.t.copy(), train.loc.copy())
        return self

    def transition_rows(self) -> sp.csr_array:
        """Row-stochastic (slot * L + from, to) matrix with the fallbacks of the class docstring."""
        L, S = self.space_.n_locations, self.time_.n_slots
        counts = sp.csr_array(self.counts_)
        pooled = sum(counts[s * L:(s + 1) * L] for s in range(S))
        pooled_total = np.asarray(pooled.sum(axis=1)).ravel()
        total = np.asarray(counts.sum(axis=1)).ravel()
        empty = np.flatnonzero(total == 0)
        fill_from = empty % L
        use_pooled = pooled_total[fill_from] > 0
        blocks = [counts]
        if use_pooled.any():
            sel = sp.csr_array(pooled[fill_from[use_pooled]])
            rows = np.repeat(empty[use_pooled], np.diff(sel.indptr))
            blocks.append(sp.csr_array((sel.data, (rows, sel.indices)), shape=counts.shape))
        uniform_rows = empty[~use_pooled]
        if uniform_rows.size:
            blocks.append(sp.csr_array((np.ones(uniform_rows.size * L), (np.repeat(uniform_rows, L),
                                                                         np.tile(np.arange(L), uniform_rows.size))),
                                       shape=counts.shape))
        full = sp.csr_array(sum(blocks))
        full.sum_duplicates()
        full.sort_indices()
        scale = 1.0 / np.asarray(full.sum(axis=1)).ravel()
        return sp.csr_array(sp.diags_array(scale) @ full)

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1,
                users=None, progress=None, client=None) -> TraceSet:
        """``traces_per_user`` traces of ``days`` days for each of the training users 0 .. n - 1
        (or ``users``), each starting with its user's first ``xi`` events."""
        rows = self._rows(n, users)
        traces_per_user = check_count(traces_per_user, "traces_per_user")
        T = check_count(days, "days") * self.time_.instants_per_day
        L = self.space_.n_locations
        P = self.transition_rows()
        cdf = np.empty_like(P.data)
        _row_cdf(P.indptr, P.data, cdf)
        slots = self.time_.slot(np.arange(T)).astype(np.int64)
        first_cdf = np.cumsum(self.first_)
        user, t, loc = self.events_
        locs = np.empty((rows.size * traces_per_user, T), np.int64)
        for q, n in enumerate(rows):
            prefix = np.full(T, -1, np.int64)
            if self.xi:
                lo, hi = np.searchsorted(user, [n, n + 1])
                keep = t[lo:hi] < min(self.xi, T)
                prefix[t[lo:hi][keep]] = loc[lo:hi][keep]
            u = user_uniforms(seed, int(n), (traces_per_user, T))
            _walk(P.indptr, P.indices, cdf, first_cdf, slots, L, prefix, u,
                  locs[q * traces_per_user:(q + 1) * traces_per_user])
        return self._rectangular(locs, np.repeat(rows, traces_per_user), np.tile(np.arange(traces_per_user), rows.size),
                                 days)

    def _arrays(self):
        c = self.counts_.tocoo()
        user, t, loc = self.events_
        return {"row": c.row, "col": c.col, "val": c.data, "first": self.first_, "user": user, "t": t, "loc": loc}

    def _restore(self, arrays, fitted):
        L, S = self.space_.n_locations, self.time_.n_slots
        self.counts_ = sp.csr_array((arrays["val"], (arrays["row"], arrays["col"])), shape=(S * L, L))
        self.first_ = arrays["first"]
        self.events_ = (arrays["user"], arrays["t"], arrays["loc"])


@njit(cache=True)
def _row_cdf(indptr, data, out):
    for r in range(indptr.size - 1):
        acc = 0.0
        for k in range(indptr[r], indptr[r + 1]):
            acc += data[k]
            out[k] = acc


@njit(cache=True)
def _pick(cdf, lo, hi, u):
    k = lo + np.searchsorted(cdf[lo:hi], u * cdf[hi - 1], side="right")
    return min(k, hi - 1)


@njit(cache=True)
def _walk(indptr, indices, cdf, first_cdf, slots, L, prefix, uniforms, out):
    """Markov walks: the first instant from ``first_cdf``, then the row of (slot, location);
    ``prefix`` >= 0 copies the input user's event at that instant (SGD's xi)."""
    n, T = uniforms.shape
    for k in range(n):
        a = prefix[0]
        if a < 0:
            a = np.searchsorted(first_cdf, uniforms[k, 0] * first_cdf[-1], side="right")
            a = min(a, L - 1)
        out[k, 0] = a
        for t in range(1, T):
            b = prefix[t]
            if b < 0:
                r = slots[t] * L + a
                b = indices[_pick(cdf, indptr[r], indptr[r + 1], uniforms[k, t])]
            out[k, t] = b
            a = b
