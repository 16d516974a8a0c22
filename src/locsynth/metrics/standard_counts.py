"""The field's standard suite (metrics/standard.py) from sums over chunks of traces: every trip of a
partitioned set counted where it lies (data/chunks.py), no set held whole (issue 56).

Every value of the suite in the ``adatrace`` and ``corrected`` flavours is a function of counts
that add up over chunks, given two facts of the real set: the box its points span (the grids'
box, the queries' circles) and the smallest and largest travelled distance and diameter of its
traces (the buckets' edges). So one pass over the real set's chunks finds those (minima and maxima,
:func:`extent`), and one pass over each set sums its counts (:func:`set_counts`): points and paths
per cell, trip pairs, traces through each cell, the traces in each bucket of lengths and
diameters, the occurrences of each pattern, the traces answering each query. The values equal
:func:`locsynth.metrics.standard.standard_metrics` on the sets whole (tests/test_partitions.py).
The ``ldptrace`` flavour breaks pattern ties by first occurrence and resamples the real paths'
points, which sums over chunks do not give: it is computed on a sample (evaluation/partitioned.py).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..data.chunks import SparseCounts, chunks
from ..data.traces import TraceSet
from .standard import (FLAVOUR, JAVA_MIN_VALUE, KEYS, Patterns, Settings, adatrace_f1, diameters, f1, hotspot_ndcg,
                       java_jsd, jsd, kendall_tau, points, queries, query_answers, relative_error, shares,
                       support_error, travelled)

#: the flavours whose values are sums over chunks
SUMMED = ("adatrace", "corrected")


def extent(traces: TraceSet, flavour: str) -> np.ndarray:
    """(x min, y min, x max, y max, travelled distance min, max, diameter min, max) of a chunk's
    located traces in the flavour's units; +-inf where it has none."""
    p = points(traces, FLAVOUR[flavour].coordinates(traces.space))
    if p.n_traces == 0:
        return np.array([np.inf, np.inf, -np.inf, -np.inf] * 2)
    lengths, diam = travelled(p), diameters(p.x, p.y, p.offsets)
    return np.array([p.x.min(), p.y.min(), p.x.max(), p.y.max(), lengths.min(), lengths.max(), diam.min(), diam.max()])


def buckets(values: np.ndarray, lo: float, hi: float, settings: Settings) -> np.ndarray:
    """The traces in each bucket of travelled distance or diameter between the real ``lo`` and
    ``hi``: AdaTrace's (standard.adatrace_bucket_shares: from 0, values in none left out) or the
    corrected ones (standard.bucket_jsd: from ``lo``, values beyond in the edge buckets)."""
    b = settings.buckets
    if settings.flavour == "adatrace":
        edges = np.arange(b + 1, dtype=np.float64) * ((max(hi, JAVA_MIN_VALUE) - lo) / b)
        i = np.searchsorted(edges, values, side="right") - 1
        return np.bincount(i[(i >= 0) & (i < b)], minlength=b)
    width = (hi - lo) / b if hi > lo else 1.0
    return np.bincount(np.clip(((values - lo) / width).astype(np.int64), 0, b - 1), minlength=b)


def set_counts(traces: TraceSet, settings: Settings, box: tuple, real: np.ndarray) -> dict:
    """The counting step of the suite on one chunk (sums over chunks add up), given the grids' ``box``
    and the real set's :func:`extent` ``real``."""
    flavour = FLAVOUR[settings.flavour]
    p = points(traces, flavour.coordinates(traces.space))
    k2, c2 = settings.grid ** 2, settings.coverage_grid ** 2
    if p.n_traces == 0:
        return {"n": 0, "density": np.zeros(k2), "trips": np.zeros(k2 * k2), "coverage": np.zeros(c2),
                "lengths": np.zeros(settings.buckets, np.int64), "diameters": np.zeros(settings.buckets, np.int64),
                "patterns": SparseCounts(np.zeros(0, np.int64), np.zeros(0, np.int64), 0),
                "answers": np.zeros(settings.queries, np.int64)}
    f = flavour.features(p, box, settings)
    cx, cy, r = queries(box, settings)
    return {"n": p.n_traces, "density": f.density, "trips": f.trips, "coverage": f.coverage,
            "lengths": buckets(f.lengths, real[4], real[5], settings),
            "diameters": buckets(f.diameters, real[6], real[7], settings),
            "patterns": SparseCounts(f.patterns.codes, f.patterns.counts, 0),
            "answers": query_answers(p, cx, cy, r, settings.flavour)}


def scores(r: dict, f: dict, settings: Settings) -> dict[str, float]:
    """The nine values from the real set's counts ``r`` and another's ``f`` (the flavours of
    standard.scores_adatrace and scores_corrected)."""
    adatrace, base = settings.flavour == "adatrace", settings.jsd_base
    real_p, syn_p = (Patterns(c["patterns"].keys, c["patterns"].counts, np.zeros(c["patterns"].keys.size, np.int64))
                     for c in (r, f))
    real_top, syn_top = real_p.top(settings.top_patterns), syn_p.top(settings.top_patterns)
    scale = r["n"] / f["n"] if settings.scale_counts else 1.0

    def distances(key):
        if adatrace:
            return java_jsd(r[key] / float(r["n"]), f[key] / float(f["n"]), base)
        return jsd(r[key], f[key], base)

    return {
        "query_error": relative_error(r["answers"].astype(np.float64), f["answers"] * scale, settings.sanity * r["n"]),
        "density_error": jsd(r["density"], f["density"], base),
        "trip_error": java_jsd(shares(r["trips"]), shares(f["trips"]), base) if adatrace
        else jsd(r["trips"], f["trips"], base),
        "length_error": distances("lengths"),
        "diameter_error": distances("diameters"),
        "pattern_f1": adatrace_f1(real_top, syn_top) if adatrace else f1(real_top, syn_top),
        "pattern_support_error": support_error(real_p, syn_p, real_top, scale),
        "kendall_tau": kendall_tau(r["coverage"], f["coverage"], "adatrace" if adatrace else "b"),
        "hotspot_error": 1.0 - hotspot_ndcg(r["density"], f["density"], settings.hotspots),
    }


def standard_by_chunks(real, others: dict, settings: Settings = Settings(), client=None) -> tuple[dict, dict]:
    """The suite's values of each of ``others`` (name -> a TraceSet or partitioned set) against
    ``real``, every trace counted (module docstring): (name -> {key: value}, the located traces of
    each set and of the ``"real"`` one)."""
    if settings.flavour not in SUMMED:
        raise InputError(f"the {settings.flavour} flavour of the standard suite is not a sum over chunks; "
                         f"those that are: {', '.join(SUMMED)}")
    data = chunks(real, client)
    parts = np.array(data.each(extent, settings.flavour))
    ext = np.concatenate([parts[:, [0, 1]].min(axis=0), parts[:, [2, 3]].max(axis=0),
                          [parts[:, 4].min(), parts[:, 5].max(), parts[:, 6].min(), parts[:, 7].max()]])
    if not np.isfinite(ext).all():
        raise InputError("a set without a located event cannot be scored by the standard suite")
    box = FLAVOUR[settings.flavour].box(tuple(float(v) for v in ext[:4]))
    r = data.total(set_counts, settings, box, ext)
    out, located = {}, {"real": int(r["n"])}
    for name, other in others.items():
        f = chunks(other, client).total(set_counts, settings, box, ext)
        if f["n"] == 0:
            raise InputError(f"the {name} set has no located event to score by the standard suite")
        values = scores(r, f, settings)
        out[name], located[name] = {key: float(values[key]) for key in KEYS}, int(f["n"])
    return out, located
