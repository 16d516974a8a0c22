"""Utility of synthetic trips (paper 004 §8.4): trip-length divergence, frequent patterns and the
source-destination earth mover's distance, per hour of the day.

Both sets are TraceSets of trips with an ``hour`` column in their user table (data/trips.py). A
synthetic set without hours (a trip method without its time model, ``time_share=0``: ``hour`` is -1 or missing) is compared as a
whole with the real trips of every hour, as paper 004 §8.5 compares NGRAM with each hour of
Figure 4; its trip-length divergence is one value (§8.5: "we only report one value").
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..core.errors import InputError
from ..data.traces import TraceSet
from .groups import Figure, GroupResult, Metric, MetricGroup, count, flag, row

HOURS = 24
#: paper 004 §8.4 reports K = 10, 20, 50, 100
TOP_K = (10, 20, 50, 100)


def trip_hours(trips: TraceSet, *, from_events: bool = False) -> np.ndarray | None:
    """The hour (0-23) of every trip: its ``hour`` column (data/trips.py's), checked. A set without
    hours (no ``hour`` column, or -1 everywhere) gives None, or with ``from_events`` the local hour
    of each trace's first event (a trace set made otherwise, NGRAM's trips without time)."""
    hour = trips.users["hour"].to_numpy().astype(np.int64) if "hour" in trips.users else None
    if hour is None or (hour < 0).all():
        if not from_events:
            return None
        return np.asarray(trips.time.start_of(trips.t[trips.offsets[:-1]]).hour, np.int64)
    if hour.min() < 0 or hour.max() >= HOURS:
        raise InputError(f"trip hours must be in 0..23 (or all -1 for a set without time), got "
                         f"{hour.min()}..{hour.max()}")
    return hour


def trip_statistics(trips: TraceSet) -> dict:
    """The columns of paper 004 Table 1: |D| trips, |L| cells visited, and the trip length (cells
    per trip) max, mean and standard deviation (population, ddof = 0), plus the minimum."""
    if trips.n_traces == 0:
        raise InputError("no trips to describe")
    length = trips.counts()
    return {"trips": int(trips.n_traces), "cells": int(np.unique(trips.loc).size),
            "length_max": int(length.max()), "length_mean": float(length.mean()),
            "length_sd": float(length.std()), "length_min": int(length.min())}


# -- trip length ---------------------------------------------------------------------------------

def length_distribution(lengths: np.ndarray, size: int) -> np.ndarray:
    """Relative frequency of trip lengths 0 .. size - 1 (lengths of at least ``size`` in the last bin)."""
    counts = np.bincount(np.minimum(np.asarray(lengths, np.int64), size - 1), minlength=size).astype(np.float64)
    return counts / counts.sum() if counts.sum() else counts


def jensen_shannon(p: np.ndarray, q: np.ndarray, distance: bool = False, base: float = 2.0) -> float:
    """Jensen-Shannon divergence, in bits by default (0 for equal distributions, 1 for disjoint ones):

    .. math:: \\mathrm{JSD}(P, Q) = \\tfrac12 \\mathrm{KL}(P \\| M) + \\tfrac12 \\mathrm{KL}(Q \\| M),
              \\quad M = \\tfrac12 (P + Q)

    With ``distance`` its square root, which is what the authors' code reports (scipy's
    ``jensenshannon(p, q, base=2)``, REFERENCE.md); the paper names the divergence. ``base``: of
    the logarithm (AdaTrace's suite uses e, metrics/standard.py).
    """
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    if p.shape != q.shape or p.sum() <= 0 or q.sum() <= 0:
        raise InputError("Jensen-Shannon needs two non-empty distributions over the same bins")
    p, q = p / p.sum(), q / q.sum()
    m = (p + q) / 2

    def kl(a):
        nz = a > 0
        return float((a[nz] * np.log(a[nz] / m[nz])).sum())

    value = max(0.5 * kl(p) + 0.5 * kl(q), 0.0) / np.log(base)
    return float(np.sqrt(value)) if distance else value


def trip_length_jsd(real: TraceSet, synthetic: TraceSet, *, distance: bool = False) -> dict:
    """Trip-size distribution (paper 004 §8.4): the Jensen-Shannon divergence between the
    distributions of trip lengths (cells per trip) of the real and synthetic trips.

    Returns ``{"overall": all trips against all trips, "by_hour": ndarray of shape (24,)}``;
    ``by_hour`` compares the trips of each hour (NaN where either set has none) and is None when
    the synthetic set has no hours. ``distance``: the square root (see :func:`jensen_shannon`).
    """
    lr, ls = real.counts(), synthetic.counts()
    if lr.size == 0 or ls.size == 0:
        raise InputError("both trip sets need at least one trip")
    size = int(max(lr.max(), ls.max())) + 1
    out = {"overall": jensen_shannon(length_distribution(lr, size), length_distribution(ls, size), distance),
           "by_hour": None}
    hr, hs = _hours_of(real, "real"), trip_hours(synthetic)
    if hs is None:
        return out
    by_hour = np.full(HOURS, np.nan)
    for h in range(HOURS):
        a, b = lr[hr == h], ls[hs == h]
        if a.size and b.size:
            by_hour[h] = jensen_shannon(length_distribution(a, size), length_distribution(b, size), distance)
    out["by_hour"] = by_hour
    return out


def _hours_of(trips: TraceSet, name: str) -> np.ndarray:
    hours = trip_hours(trips)
    if hours is None:
        raise InputError(f"the {name} trips need an hour per trip (a user-table column 'hour', see trips.py)")
    return hours


# -- frequent patterns ---------------------------------------------------------------------------

@njit(cache=True)
def _trip_supports(gram, offsets, n_grams):
    """The number of trips holding each gram at least once (each trip counted once, -1 skipped: a
    trip's earlier events are scanned, trips being short), and the first event of each gram."""
    support = np.zeros(n_grams, np.int64)
    first = np.full(n_grams, -1, np.int64)
    for trip in range(offsets.size - 1):
        a, b = offsets[trip], offsets[trip + 1]
        for p in range(a, b):
            g = gram[p]
            if g < 0:
                continue
            if first[g] < 0:
                first[g] = p
            seen = False
            for q in range(a, p):
                if gram[q] == g:
                    seen = True
                    break
            if not seen:
                support[g] += 1
    return support, first


def pattern_supports(trips: TraceSet, max_length: int = 7) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every contiguous pattern of 1 .. ``max_length`` cells and its support, the number of trips
    that contain it at least once.

    Choice: paper 004 §8.4 calls patterns "subsequences of locations"; the authors' code mines
    unordered itemsets with FP-growth (minimum support 0.05, up to 7 cells, REFERENCE.md). A trip
    moves from cell to adjacent cell, so its subsequences that keep the order and adjacency --
    route segments -- are what we count, exactly, up to 7 cells as the authors do.

    Returns, per length n, (patterns of shape (m_n, n), supports of shape (m_n,)), the patterns in
    the lexicographic order of their cells. The n-cell patterns are numbered from the (n-1)-cell
    ones (gram id * L + the next cell) by a hash table whose distinct keys alone are sorted
    (pandas' factorize), and each trip counts a pattern once by scanning its own earlier events:
    linear in the events (the sort-based version took 85 s a set at 1.7 million trips, issue 39).
    """
    import pandas as pd

    if max_length < 1:
        raise InputError(f"patterns need at least one cell, got max_length = {max_length}")
    L = trips.space.n_locations
    off = trips.offsets
    loc = trips.loc.astype(np.int64)
    events = np.arange(trips.n_events)
    # the events that start a gram of n cells: n - 1 further events in their trip
    room = off[1:][trips.user] - events
    gram = np.full(trips.n_events, -1, np.int64)           # gram id of the n cells starting at each event
    patterns, supports = [], []
    for n in range(1, max_length + 1):
        idx = np.flatnonzero(room >= n)
        if not idx.size:
            break
        key = loc[idx] if n == 1 else gram[idx] * L + loc[idx + n - 1]
        inv, uniq = pd.factorize(key, sort=True)
        gram = np.full(trips.n_events, -1, np.int64)
        gram[idx] = inv
        support, first = _trip_supports(gram, off, uniq.size)
        patterns.append(loc[first[:, None] + np.arange(n)[None, :]])
        supports.append(support)
    return patterns, supports


def top_patterns(trips: TraceSet, k: int, max_length: int = 7) -> list[tuple[int, ...]]:
    """The ``k`` patterns of highest support (:func:`pattern_supports`); ties go to the shorter
    pattern, then to the lower cell ids.

    Only patterns that can reach the top k are counted (Apriori: a pattern's support is at most its
    prefix's, so once k patterns of support >= s are known, an n-cell pattern whose first n - 1
    cells have support < s cannot be among the top k and is not extended). Patterns of support
    equal to the bound are kept, so ties are broken as over every pattern; the result equals the
    top k of :func:`pattern_supports` (tests/test_trips_scale.py), in time about linear in the
    events (1.7 million trips: seconds instead of 85 s, issue 39).
    """
    if max_length < 1:
        raise InputError(f"patterns need at least one cell, got max_length = {max_length}")
    L = trips.space.n_locations
    off = trips.offsets
    loc = trips.loc.astype(np.int64)
    room = off[1:][trips.user] - np.arange(trips.n_events)   # events from each to its trip's end
    candidates: list[tuple[int, int, tuple]] = []
    bound = 0                                              # the k-th best support so far (0: fewer than k)
    gram = loc                                             # id of the kept (n-1)-cell gram at each event, or -1
    kept = L                                               # how many (n-1)-cell grams are kept
    for n in range(1, max_length + 1):
        if n == 1:
            ids, size = np.where(room >= 1, loc, -1), L
        else:
            ok = (gram >= 0) & (room >= n)
            key = np.where(ok, gram * L + loc[np.minimum(np.arange(loc.size) + n - 1, loc.size - 1)], -1)
            ids, size = _number(key, ok, kept * L)
        if size == 0:
            break
        support, first = _trip_supports(ids, off, size)
        best = np.argsort(-support, kind="stable")[:k]       # ids follow the cells' order
        candidates = sorted(candidates + [(-int(support[i]), n, tuple(loc[first[i]:first[i] + n].tolist()))
                                          for i in best])[:k]
        if len(candidates) == k:
            bound = -candidates[-1][0]
        frequent = support >= max(bound, 1)
        renumber = np.where(frequent, np.cumsum(frequent) - 1, -1)
        gram, kept = np.where(ids >= 0, renumber[np.maximum(ids, 0)], -1), int(frequent.sum())
        if kept == 0:
            break
    return [c[2] for c in candidates]


def _number(key: np.ndarray, ok: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """Ids 0 .. m - 1 of the distinct keys where ``ok``, in the keys' order (-1 elsewhere), and m:
    through a table of ``span`` flags when it is small, else pandas' factorize."""
    ids = np.full(key.size, -1, np.int64)
    if span <= 64_000_000:
        present = np.zeros(span, bool)
        present[key[ok]] = True
        rank = np.cumsum(present) - 1
        ids[ok] = rank[key[ok]]
        return ids, int(present.sum())
    import pandas as pd

    inv, uniq = pd.factorize(key[ok], sort=True)
    ids[ok] = inv
    return ids, int(uniq.size)


def frequent_pattern_precision(real: TraceSet, synthetic: TraceSet, ks=TOP_K, max_length: int = 7, *,
                               real_top: list | None = None) -> dict[int, float]:
    """Frequent patterns (paper 004 §8.4): for each K, |F_K(D) ∩ F_K(D')| / K, the share of the
    real top-K patterns found among the synthetic top-K.

    Choice: when the real trips hold fewer than K distinct patterns, F_K(D) is all of them and the
    share is taken of |F_K(D)| instead of K, so that identical sets always score 1 (on the cabs,
    with thousands of patterns, the two agree).

    ``real_top``: the real set's ``top_patterns(real, max(ks), max_length)``, when already mined.
    """
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise InputError(f"K must be at least 1, got {ks}")
    top_r = top_patterns(real, max(ks), max_length) if real_top is None else real_top
    top_s = top_patterns(synthetic, max(ks), max_length)
    if not top_r:
        raise InputError("the real trips have no events, hence no pattern")
    return {k: len(set(top_r[:k]) & set(top_s[:k])) / min(k, len(top_r)) for k in ks}


# -- source and destination ----------------------------------------------------------------------

def source_destination(trips: TraceSet) -> np.ndarray:
    """(first cell, last cell) of every trip, shape (n_trips, 2)."""
    off = trips.offsets
    if (np.diff(off) == 0).any():
        raise InputError("every trip needs at least one event")
    return np.column_stack([trips.loc[off[:-1]], trips.loc[off[1:] - 1]]).astype(np.int64)


def pair_emd(space, real_pairs: np.ndarray, synthetic_pairs: np.ndarray) -> float:
    """Earth mover's distance in metres between the empirical distributions of (source,
    destination) pairs; the ground distance between two pairs is the sum of the great-circle
    distances between their sources and between their destinations (cell centres), paper 004
    §8.4. Exact (POT's network simplex, ``ot.emd2``)."""
    import ot

    a_pairs, a = np.unique(real_pairs, axis=0, return_counts=True)
    b_pairs, b = np.unique(synthetic_pairs, axis=0, return_counts=True)
    # distances between the distinct cells once (a grid has far fewer cells than pairs), then looked up
    cells, index = np.unique(np.concatenate([a_pairs.ravel(), b_pairs.ravel()]), return_inverse=True)
    d = space.distance_m(cells[:, None], cells[None, :])
    ia, ib = index[:a_pairs.size].reshape(-1, 2), index[a_pairs.size:].reshape(-1, 2)
    cost = d[ia[:, 0][:, None], ib[:, 0][None, :]] + d[ia[:, 1][:, None], ib[:, 1][None, :]]
    return float(ot.emd2(a / a.sum(), b / b.sum(), np.ascontiguousarray(cost, np.float64), numItermax=10_000_000))


def source_destination_emd(real: TraceSet, synthetic: TraceSet, *, max_trips: int = 2000, seed: int = 0) -> dict:
    """Spatio-temporal distribution of source and destination pairs (paper 004 §8.4): per hour,
    the EMD in metres between the real and synthetic (source, destination) distributions, each
    estimated from at most ``max_trips`` trips drawn uniformly without replacement (seeded),
    using only the pairs that occur in the draws.

    Returns ``{"overall": all trips, "by_hour": ndarray of shape (24,)}`` (NaN where an hour has
    no real or no synthetic trip); a synthetic set without hours is compared whole with each hour.
    """
    if real.space.n_locations != synthetic.space.n_locations:
        raise InputError("the real and synthetic trips must be on the same space")
    if max_trips < 1:
        raise InputError(f"max_trips must be at least 1, got {max_trips}")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(24,)))
    pr, ps = source_destination(real), source_destination(synthetic)
    hr, hs = _hours_of(real, "real"), trip_hours(synthetic)

    def draw(pairs):
        return pairs if pairs.shape[0] <= max_trips else pairs[rng.choice(pairs.shape[0], max_trips, replace=False)]

    # the draws in their order (the seeded stream), then the 25 transport problems on the cores
    pooled = draw(ps)
    jobs = {"overall": (draw(pr), pooled)}
    for h in range(HOURS):
        a = pr[hr == h]
        b = pooled if hs is None else ps[hs == h]
        if a.size and b.size:
            jobs[h] = (draw(a), b if hs is None else draw(b))
    with ThreadPoolExecutor(max(1, min(len(jobs), os.cpu_count() or 1))) as pool:   # POT frees the GIL
        values = dict(zip(jobs, pool.map(lambda job: pair_emd(real.space, *job), jobs.values())))
    by_hour = np.full(HOURS, np.nan)
    for h in range(HOURS):
        if h in values:
            by_hour[h] = values[h]
    return {"overall": values["overall"], "by_hour": by_hour}


def trip_metrics(real: TraceSet, synthetic: TraceSet, *, ks=TOP_K, max_length: int = 7, max_trips: int = 2000,
                 seed: int = 0, distance: bool = False, real_top: list | None = None) -> dict:
    """All three metrics of paper 004 §8.4 in one dictionary (``real_top``: see
    :func:`frequent_pattern_precision`)."""
    return {"length_jsd": trip_length_jsd(real, synthetic, distance=distance),
            "frequent_patterns": frequent_pattern_precision(real, synthetic, ks, max_length, real_top=real_top),
            "sd_emd": source_destination_emd(real, synthetic, max_trips=max_trips, seed=seed)}


__all__ = ["HOURS", "TOP_K", "frequent_pattern_precision", "jensen_shannon", "length_distribution",
           "pair_emd", "pattern_supports", "source_destination", "source_destination_emd", "top_patterns",
           "trip_hours", "trip_length_jsd", "trip_metrics"]


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _curve(measured: dict) -> dict:
    """``{"overall": float, "by_hour": list of 24 (None where NaN) or None}``, ready for JSON."""
    by_hour = measured["by_hour"]
    if by_hour is not None:
        by_hour = [None if not np.isfinite(v) else float(v) for v in np.asarray(by_hour, np.float64)]
    return {"overall": float(measured["overall"]), "by_hour": by_hour}


def _hour_mean(by_hour) -> float | None:
    """The mean over the hours that have a value; None when there is none."""
    if by_hour is None:
        return None
    values = np.asarray(by_hour, np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else None


def _trip_group(ctx) -> GroupResult:
    """Paper 004 §8.4 on a set of trips, against the training trips released as they are; no uniform
    baseline.

    Rows: ``trip_length_jsd`` (Jensen-Shannon divergence in bits between the trip-length
    distributions of all trips, the square root with the ``jsd_distance`` option) and its mean over
    the hours both sets have trips in, ``trip_length_jsd_hourly`` (None for a set without hours, as
    NGRAM's: §8.5 reports one value for it); ``trip_sd_emd_m`` (EMD in metres between the (source,
    destination) distributions of at most ``trip_max_trips`` trips a set) and its hourly mean; and
    ``trip_top{K}_precision``, the share of the real top-K route segments among the synthetic top-K.
    The per-hour curves (Figures 3-4), the precisions and Table 1's statistics go to
    ``meta['trips']``. A synthetic set of several trace numbers is measured as one set of trips.
    """
    import functools
    import time

    test, train, synthetic = ctx.test, ctx.train, ctx.synthetic
    seed, max_trips, distance = ctx.option("seed", 0), ctx.option("trip_max_trips", 2000), \
        ctx.option("jsd_distance", False)
    measured, seconds = {}, {}
    # the real set's top patterns and the training column do not depend on the synthetic set: once
    # per evaluation, or once per benchmark dataset with a kept store (Context.reference)
    real_top = ctx.reference(("trips", "top_patterns", max(TOP_K), 7), lambda: top_patterns(test, max(TOP_K)))
    for name, other in (("synthetic", synthetic), ("training", train)):
        clock = time.perf_counter()
        measure = functools.partial(trip_metrics, test, other, ks=TOP_K, max_trips=max_trips, seed=seed,
                                    distance=distance, real_top=real_top)
        measured[name] = measure() if name == "synthetic" else \
            ctx.reference(("trips", "training", seed, max_trips, distance), measure)
        seconds[f"trips_{name}"] = round(time.perf_counter() - clock, 4)

    def both(pick):
        return row(pick(measured["synthetic"]), pick(measured["training"]), None)

    metrics = {
        "trip_length_jsd": both(lambda m: m["length_jsd"]["overall"]),
        "trip_length_jsd_hourly": both(lambda m: _hour_mean(m["length_jsd"]["by_hour"])),
        "trip_sd_emd_m": both(lambda m: m["sd_emd"]["overall"]),
        "trip_sd_emd_hourly_m": both(lambda m: _hour_mean(m["sd_emd"]["by_hour"])),
        **{f"trip_top{k}_precision": both(lambda m, k=k: m["frequent_patterns"][k]) for k in TOP_K},
    }
    sets = {"test": test, "training": train, "synthetic": synthetic}
    trips = {
        "hours": list(range(HOURS)),
        "jsd": "distance" if distance else "divergence",
        "synthetic_has_hours": trip_hours(synthetic) is not None,
        "length_jsd": {k: _curve(m["length_jsd"]) for k, m in measured.items()},
        "sd_emd_m": {k: _curve(m["sd_emd"]) for k, m in measured.items()},
        "frequent_patterns": {k: {str(kk): v for kk, v in m["frequent_patterns"].items()} for k, m in measured.items()},
        "statistics": {k: trip_statistics(ts) for k, ts in sets.items()},
    }
    size = int(max(ts.counts().max() for ts in sets.values())) + 1
    details = {"trips": {**trips, "length_distribution": {k: length_distribution(ts.counts(), size)
                                                          for k, ts in sets.items()}}}
    meta = {"trace_numbers": 1, "kind": "trips", "trips": trips,
            "options": {"max_trips": max_trips, "top_k": list(TOP_K),
                        "jsd": trips["jsd"] + (" (square root of the divergence, base 2)" if distance
                                               else " (base 2, in bits)")}}
    return GroupResult(metrics, details, meta, seconds)


def _trips_of(details: dict, meta: dict) -> dict:
    return details.get("trips") or meta.get("trips") or {}


def _jsd_name(trips: dict) -> str:
    return "JS distance" if trips.get("jsd") == "distance" else "JS divergence (bits)"


def _no_hours(trips: dict) -> str:
    return "" if trips.get("synthetic_has_hours", True) else (
        " The synthetic set has no hours (its method released no time: time_share=0): its line is one value over "
        "all trips for the "
        "length, and its whole set against each hour's real trips for the EMD, as paper 004 §8.5 does.")


def _length_jsd_figure(details: dict, meta: dict) -> bytes:
    from .figures import hourly_png

    trips = _trips_of(details, meta)
    return hourly_png(trips.get("length_jsd") or {}, _jsd_name(trips), "trip-length JSD against the test trips")


def _sd_emd_figure(details: dict, meta: dict) -> bytes:
    from .figures import hourly_png

    return hourly_png(_trips_of(details, meta).get("sd_emd_m") or {}, "EMD (metres)",
                      "source-destination EMD against the test trips")


def _lengths_figure(details: dict, meta: dict) -> bytes:
    from .figures import trip_lengths_png

    return trip_lengths_png(_trips_of(details, meta)["length_distribution"])


FIGURES = (
    Figure("Trip-length divergence per hour (paper 004 Figure 3)",
           lambda d, m: f"The {_jsd_name(_trips_of(d, m))} between the distribution of trip lengths (cells per "
           f"trip) of the real test trips of each hour and that of the synthetic (blue) and training (orange) trips "
           f"of the same hour. Lower is better; the training trips show how far two samples of real trips lie "
           f"apart." + _no_hours(_trips_of(d, m)),
           "line chart of the trip-length Jensen-Shannon divergence per hour of the day", _length_jsd_figure,
           lambda d, m: bool(_trips_of(d, m))),
    Figure("Source-destination EMD per hour (paper 004 Figure 4)",
           lambda d, m: "The earth mover's distance in metres between the (source, destination) pairs of the real "
           "test trips of each hour and those of the synthetic and training trips (at most "
           f"{(m.get('options') or {}).get('max_trips', 2000)} trips drawn per set and hour). Lower is better."
           + _no_hours(_trips_of(d, m)),
           "line chart of the source-destination earth mover's distance per hour of the day", _sd_emd_figure,
           lambda d, m: bool(_trips_of(d, m))),
    Figure("Trip lengths",
           "The share of trips of each length (cells per trip, self-loops merged) in the test, training and "
           "synthetic sets; the trip-length JSD compares these distributions.",
           "step chart of the trip-length distributions", _lengths_figure,
           lambda d, m: bool(_trips_of(d, m).get("length_distribution"))),
)

METRICS = (
    Metric("trip_length_jsd", "Trip-length JSD", "Jensen-Shannon {jsd} between the distributions of trip lengths "
           "(cells per trip), all trips (paper 004 §8.4)", range=(0.0, 1.0), short="len JSD"),
    Metric("trip_length_jsd_hourly", "Trip-length JSD, hourly mean", "the same between the trips of each hour, "
           "averaged over the hours (Figure 3); none for a set without hours", range=(0.0, 1.0), short="len JSD/h"),
    Metric("trip_sd_emd_m", "Source-destination EMD (m)", "earth mover's distance in metres between the "
           "distributions of (source, destination) pairs, all trips", unit="m", short="SD-EMD m"),
    Metric("trip_sd_emd_hourly_m", "Source-destination EMD, hourly mean (m)", "the same per hour, averaged over "
           "the hours (Figure 4)", unit="m", short="SD-EMD/h"),
    *(Metric(f"trip_top{k}_precision", f"Top-{k} patterns", f"share of the real {k} most frequent route segments "
             f"found among the synthetic top {k} (Tables 2-3); higher is better", goal="higher", range=(0.0, 1.0),
             short=f"top-{k}") for k in TOP_K),
)

GROUP = MetricGroup(
    "trips", METRICS, _trip_group, lambda ctx: None if ctx.trips else "",
    options=(count("trip_max_trips", 2000, "Trips: the trips drawn per hour for the source-destination EMD "
                   "(paper 004 §8.4: 2000)."),
             flag("jsd_distance", False, "Trips: report the trip-length JS distance (the square root, what scipy's "
                  "jensenshannon and paper 004's code give) instead of the divergence.")),
    figures=FIGURES,
    fields=lambda options, space: {"jsd": "distance (the square root of the divergence, base 2, as scipy's "
                                          "jensenshannon returns)" if options.get("jsd_distance") or
                                          str(options.get("jsd", "")).startswith("distance")
                                   else "divergence in bits (0 to 1)"})
