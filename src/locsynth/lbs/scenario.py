"""Fake traces for location-based services (paper 002 §VII, Figure 6).

    table = lbs_scenario(SGLT(clusters=100, tool=True).fit(train), test)   # privacy, bandwidth, pollution
    png = report.lbs.lbs_png(table)                             # Figure 6 (a) and (b)

The adversary's localization attack is attacks/localization.py; ``run_lbs`` is ``locsynth lbs``.

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
from pathlib import Path

import numpy as np
import pandas as pd
from numba import njit, prange

from ..attacks.localization import attack_errors, check_adversary, own_chain
from ..core.errors import InputError, unknown
from ..synth.sglt.mobility import day_traces, fill_missing, period_of
from ..data.traces import TraceSet, check_same_frame, is_trip_set
from ..core.validation import check_count

#: the fake-trace generators of §VII-A, in the order of Figure 6's legend
METHODS = ("sglt", "uniform-iid", "aggregate-iid", "rw-aggregate", "rw-profile")
#: random streams (SeedSequence spawn keys (repetition, stream))
QUERY_STREAM, FAKE_STREAM = 0, 1


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
        _, counts, rows, _ = own_chain(truth, lo, hi, R, kmap)
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
    from ..synth.sglt.model import SGLT

    if not isinstance(model, SGLT):
        raise InputError(f"the LBS scenario needs a fitted SGLT model, got {type(model).__name__}")
    model.check_is_fitted()
    if not isinstance(test, TraceSet):
        raise InputError(f"the test users must be a TraceSet, got {type(test).__name__}")
    check_same_frame(model, test, ("model's training", "test"), exact=True)
    ms = _fake_counts(fakes)
    methods = _check_methods(methods)
    check_adversary(adversary)
    repeats = check_count(repeats, "repeats")
    pool = check_count(pool, "pool")
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


def _fake_counts(fakes) -> list[int]:
    values = [fakes] if np.isscalar(fakes) else list(fakes)
    if not values:
        raise InputError("fakes is empty: give at least one number of fake traces, e.g. 1, 5, 10")
    return sorted({check_count(value, "the number of fake traces") for value in values})


def _check_methods(methods) -> list[str]:
    chosen = [methods] if isinstance(methods, str) else list(methods)
    if not chosen:
        raise InputError(f"no fake-trace method given; expected some of {', '.join(METHODS)}")
    for name in chosen:
        if name not in METHODS:
            raise unknown("fake-trace method", name, METHODS)
    return [name for name in METHODS if name in chosen]


def parse_fakes(text: str) -> list[int]:
    """'1,5,10' -> [1, 5, 10]; an InputError naming what is wrong."""
    try:
        counts = [int(token) for token in str(text).split(",")]
    except ValueError:
        raise InputError(f"`fakes` takes whole numbers separated by commas, e.g. 1,5,10; got {text!r}") from None
    if not counts or min(counts) < 1:
        raise InputError(f"`fakes`: every number of fake traces must be at least 1, got {text!r}")
    return counts


def run_lbs(test: str | Path, *, train: str | Path | None = None, model: str | Path | None = None,
            clusters: int | None = None, fakes="1,5,10", repeats: int = 5, pool: int = 10,
            adversary: str = "aggregate", query_minutes: float = 40.0, temperature: float | None = None,
            seed: int = 0, progress=None) -> tuple[pd.DataFrame, str, list[str]]:
    """``locsynth lbs``: the scenario on the test set at ``test`` with the SGLT model at ``model``,
    or one fitted on ``train`` as the authors' tool does (``tool=True``: its aggregate model mixes
    the distance kernel half and half, so random walks on it wander as the paper's baselines do).
    Returns the :func:`lbs_scenario` table, a sentence of what was run and notes on the input.
    ``progress(done, total, status="")``, the protocol of every long step, is told the fit (no
    total) and then each (repetition, method, m)."""
    from ..synth.base import Synthesizer
    from ..synth.sglt import SGLT

    notes: list[str] = []
    report = progress or (lambda done, total, status="": None)
    counts = parse_fakes(fakes) if isinstance(fakes, str) else _fake_counts(fakes)
    check_adversary(adversary)
    if model is None and train is None:
        raise InputError("give `train` (to fit an SGLT model on) or `model` (a fitted one)")
    if model is not None and clusters is not None:
        raise InputError("`clusters` is for the model fitted on `train`; it does not go with `model`")
    users = TraceSet.load(test)
    if is_trip_set(users):
        notes.append(f"the LBS scenario (paper 002 §VII) is made for users' daily traces; {test} holds "
                     f"{users.n_traces} trips, one per trace, which it treats as {users.n_traces} users' days; going on")
    if model is not None:
        fitted, source = Synthesizer.load(model), f"the SGLT model {model}"
        if train is not None:
            notes.append(f"using the model {model}; `train` {train} is not read")
    else:
        fitted = SGLT(tool=True, **({} if clusters is None else {"clusters": clusters}))
        report(0, None, f"fitting SGLT (the authors' tool's variant) on {train}")
        fitted.fit(TraceSet.load(train))
        source = f"SGLT (tool variant) with {fitted.clusters} classes fitted on {train}"
    table = lbs_scenario(fitted, users, fakes=counts, repeats=repeats, pool=pool, query_minutes=query_minutes,
                         adversary=adversary, seed=seed, temperature=temperature,
                         progress=lambda done, total: report(done, total, "LBS queries (repetition x method x m)"))
    what = (f"{users.n_traces} users of {test} query every {query_minutes:g} minutes on average, sending "
            f"m = {', '.join(str(m) for m in sorted(set(counts)))} fake traces; fakes and classes from {source}; "
            f"{adversary} adversary; {repeats} repetitions; pool {pool}; seed {seed}.")
    return table, what, notes
