"""Distributions of visit fractions per location (paper 001 §4.3 (c)).

For every trace with at least ``min_events`` events and every location it visits, the fraction
of the trace's events at that location falls into one of B bins (0, 1/B], (1/B, 2/B], ...,
((B-1)/B, 1); bin = ceil(f B) - 1. A fraction of exactly 1 (a trace that never moves) is skipped,
as in the authors' code. Each location then has a distribution over the bins; VF-TV is the total
variation between the reference and synthetic distributions, averaged over the locations that
have one in the reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..data.traces import DELETED, TraceSet, generalized_code, split_keys
from .groups import Figure, GroupResult, Metric, MetricGroup, count, not_for_trips, row

if TYPE_CHECKING:                   # loaded where it is used (see transitions.py)
    import scipy.sparse as sp


def visit_fraction_counts(traces: TraceSet, bins: int = 24, min_events: int = 5) -> np.ndarray:
    """Histogram of visit fractions per location, ndarray of shape (n_locations, bins).

    A user's visit fraction needs her exact locations: deleted or generalized events (paper 003's
    obfuscations) are refused by name."""
    traces.require_exact("VF-TV (visit fractions)")
    n_loc = traces.space.n_locations
    events = traces.counts()
    key, count = np.unique(traces.user.astype(np.int64) * n_loc + traces.loc, return_counts=True)
    row, loc = key // n_loc, key % n_loc
    frac = count / events[row]
    keep = (events[row] >= min_events) & (frac < 1)
    b = np.ceil(frac[keep] * bins).astype(np.int64) - 1
    return np.bincount(loc[keep] * bins + b, minlength=n_loc * bins).reshape(n_loc, bins).astype(np.float64)


def vf_tv(reference: np.ndarray, synthetic: np.ndarray) -> float:
    """VF-TV between two (n_locations, bins) histograms.

    Averaged over locations with a reference histogram; a location absent from the synthetic
    traces counts as all mass in the first bin (its visit fraction is 0), as the authors do.
    """
    ref_total = reference.sum(axis=1)
    rows = ref_total > 0
    if not rows.any():
        return float("nan")
    p = reference[rows] / ref_total[rows, None]
    q = synthetic[rows].copy()
    q_total = q.sum(axis=1)
    q[q_total == 0, 0] = 1.0
    q /= q.sum(axis=1, keepdims=True)
    return float(0.5 * np.abs(p - q).sum(axis=1).mean())


def uniform_visit_fractions(n_locations: int, bins: int) -> np.ndarray:
    """Uniformly random traces visit each location with fraction about 1 / |X|: bin ceil(B / |X|) - 1."""
    out = np.zeros((n_locations, bins))
    out[:, int(np.ceil(bins / n_locations)) - 1] = 1.0
    return out


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _profile(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=0)
    return total / total.sum() if total.sum() > 0 else total


def _visit_fraction_group(ctx) -> GroupResult:
    """VF-TV (paper 001 §4.3 (c)), against the training and uniform baselines."""
    bins, n_loc = ctx.option("vf_bins", 24), ctx.test.space.n_locations
    def reference():                  # the real sets' own: once per evaluation, or per benchmark dataset
        v_test, v_train = visit_fraction_counts(ctx.test, bins), visit_fraction_counts(ctx.train, bins)
        return v_test, v_train, (vf_tv(v_test, v_train), vf_tv(v_test, uniform_visit_fractions(n_loc, bins)))

    v_test, v_train, baselines = ctx.reference(("visit_fractions", bins), reference)
    v_syn = [visit_fraction_counts(s, bins) for s in ctx.sets]
    metrics = {"vf_tv": row(np.mean([vf_tv(v_test, v) for v in v_syn]), *baselines)}
    details = {"visit_fractions": {"test": _profile(v_test), "synthetic": _profile(np.sum(v_syn, axis=0)),
                                   "training": _profile(v_train)}}
    return GroupResult(metrics, details, {"options": {"vf_bins": bins}})


def _visit_fraction_figure(details: dict, meta: dict) -> bytes:
    from .figures import visit_fractions_png

    return visit_fractions_png(details["visit_fractions"])


GROUP = MetricGroup(
    "visit_fractions",
    (Metric("vf_tv", "VF-TV", "total variation between the distributions of visit fractions per location",
            range=(0.0, 1.0), short="VF-TV"),),
    _visit_fraction_group, not_for_trips(
        "VF-TV compares how each user's events spread over locations across days; a trace here is one trip, which "
        "visits each of its cells about once"), step="visit fractions",
    options=(count("vf_bins", 24, "Bins of VF-TV (paper 001: 24; the authors' PF script: 30)."),),
    figures=(Figure("Visit fractions",
                    "How often a trace returns to the same location: the share of (trace, location) pairs whose "
                    "location takes a given fraction of the trace's events, on a log scale. Curves that follow the "
                    "test curve give a low VF-TV (VF-TV compares these histograms location by location).",
                    "visit fraction distributions of test, synthetic and training traces", _visit_fraction_figure,
                    lambda d, m: bool(d.get("visit_fractions") and "test" in d["visit_fractions"])),))


def keyed_visit_counts(traces: TraceSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(user, i, slot, count) of R^II before trimming."""
    n_loc, n_slots = traces.space.n_locations, traces.time.n_slots
    key = (traces.user.astype(np.int64) * n_loc + traces.loc) * n_slots + traces.time.slot(traces.t)
    return split_keys(key, n_loc, n_slots)


def visit_counts(traces: TraceSet) -> np.ndarray:
    """Number of events at each location, ndarray of shape (n_locations,)."""
    return np.bincount(traces.loc, minlength=traces.space.n_locations).astype(np.float64)


def trace_visit_counts(traces: TraceSet, keep: np.ndarray | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(exact counts: traces x locations, generalized counts: traces x location sets) of the events in ``keep``."""
    import scipy.sparse as sp

    keep = np.ones(traces.n_events, bool) if keep is None else keep
    n, L = traces.n_traces, traces.space.n_locations
    loc = traces.loc.astype(np.int64)
    exact = keep & (loc >= 0)
    C = sp.csr_matrix((np.ones(int(exact.sum())), (traces.user[exact], loc[exact])), shape=(n, L))
    gen = keep & (loc < DELETED)
    S = 0 if traces.locsets is None else traces.locsets.n_sets
    G = sp.csr_matrix((np.ones(int(gen.sum())), (traces.user[gen], generalized_code(loc[gen]))), shape=(n, S))
    return C, G
