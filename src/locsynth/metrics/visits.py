"""Distributions of visit fractions per location (paper 001 §4.3 (c)).

For every trace with at least ``min_events`` events and every location it visits, the fraction
of the trace's events at that location falls into one of B bins (0, 1/B], (1/B, 2/B], ...,
((B-1)/B, 1); bin = ceil(f B) - 1. A fraction of exactly 1 (a trace that never moves) is skipped,
as in the authors' code. Each location then has a distribution over the bins; VF-TV is the total
variation between the reference and synthetic distributions, averaged over the locations that
have one in the reference.
"""

from __future__ import annotations

import numpy as np

from ..traces import TraceSet


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
