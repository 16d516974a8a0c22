"""Utility of anonymized traces for applications (paper 003 §5.5, Figure 13): POI recommendation
and geo-data analysis, for the original traces against an anonymized release.

* **POI accuracy** (successive personalized POI recommendation): a user wants the POIs within
  r1 = 1 km of each of her original locations (the nearby POIs); the LBS sends every POI within
  r2 = 2 km of the released location and the client keeps the nearby ones. The accuracy of an
  event is the share of its nearby POIs that were received, averaged over all original events.
  The paper used 4692 "food" POIs of the people-flow data; we have no POIs for the contest's
  cities, so **every region's centre stands for one POI** (1024 POIs on the 32 x 32 grid, about
  27 of them within 1 km of a centre). A generalized event scores the mean over its regions
  (each region released alone, as the utility score reads it), a deleted event scores 0 (nothing
  is asked, nothing received).
* **TP-TV-Top50**: per time of day (20 instants, 8:00-17:30), the region distribution of the
  original and of the anonymized traces; the total variation over the 50 regions most frequent
  in the original, averaged over the times (metrics.population).
* **TM-EMD**: the average transition matrix over all users and times (consecutive instants of a
  day) of each side, and the sliced 1-Wasserstein distance (50 projections, in km) between
  matching rows, averaged over the rows (metrics.transitions.tm_swd; the paper computes the
  sliced distance because the 2-D EMD is expensive).

Deleted events are skipped and generalized ones spread 1 / |set| over their regions in both
geo-data metrics (metrics/events.py). The paper reports these metrics for the valid anonymized
traces (s_U >= 0.7); ``analyses`` computes them for every release and says which are valid.
Figure 13's baselines are rows of their own: ``(reference)`` releases each user's reference trace
in place of the original (reference day k for original day k; where a reference day is missing
the event counts as deleted) and ``(uniform)`` a uniformly random region per event.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..metrics.population import population_by_slot, tp_tv
from ..metrics.transitions import tm_swd, transition_matrix
from ..data.traces import DELETED, TraceSet
from . import scores

R1 = 1000.0
R2 = 2000.0
TOP = 50
COLUMNS = ["anonymizer", "utility", "valid", "poi_accuracy", "tp_tv_top50", "tm_emd"]


def poi_accuracy_matrix(distances: np.ndarray, r1: float = R1, r2: float = R2) -> np.ndarray:
    """(true region x released region): the share of the POIs (region centres) within ``r1`` of
    the true region that lie within ``r2`` of the released one."""
    nearby = (distances <= r1).astype(np.float64)
    received = (distances <= r2).astype(np.float64)
    return (nearby @ received.T) / nearby.sum(axis=1, keepdims=True)


def poi_accuracy(original: TraceSet, anonymized: TraceSet, *, r1: float = R1, r2: float = R2,
                 distances: np.ndarray | None = None) -> float:
    """POI Accuracy (§5.5) averaged over the original events; POIs are region centres."""
    original.require_exact("the POI accuracy (the original traces)")
    d = scores.distance_matrix(original.space) if distances is None else distances
    return float(scores.event_values(original, anonymized, poi_accuracy_matrix(d, r1, r2), "anonymized traces").mean())


def tp_tv_top50(original: TraceSet, anonymized: TraceSet, top: int = TOP) -> float:
    """TP-TV-Top50 (§5.5) between the time-of-day population distributions."""
    return tp_tv(population_by_slot(original), population_by_slot(anonymized), top=top)


def tm_emd(original: TraceSet, anonymized: TraceSet, *, n_projections: int = 50, seed: int = 0) -> float:
    """TM-EMD (§5.5): the sliced 1-Wasserstein distance (km) between the rows of the two average
    transition matrices, averaged over the rows."""
    return tm_swd(transition_matrix(original), transition_matrix(anonymized), original.space,
                  n_projections=n_projections, seed=seed)


def analyse(original: TraceSet, anonymized: TraceSet, label: str, *, distances: np.ndarray | None = None,
            seed: int = 0) -> dict:
    """One row of analyses.csv: s_U, validity and the three §5.5 metrics."""
    d = scores.distance_matrix(original.space) if distances is None else distances
    s_u = scores.utility(original, anonymized, distances=d)
    return {"anonymizer": label, "utility": s_u, "valid": s_u >= scores.S_REQ,
            "poi_accuracy": poi_accuracy(original, anonymized, distances=d),
            "tp_tv_top50": tp_tv_top50(original, anonymized), "tm_emd": tm_emd(original, anonymized, seed=seed)}


def reference_release(original: TraceSet, reference: TraceSet) -> TraceSet:
    """Figure 13's "Reference": each original event replaced by the user's reference region at the
    same time of the corresponding reference day (deleted where there is none)."""
    axis = original.time
    k = axis.instants_per_day
    o_day, r_day = axis.day(original.t), reference.time.day(reference.t)
    shift = int(o_day.min()) - int(r_day.min()) if reference.n_events else 0
    ref_key = pd.MultiIndex.from_arrays([reference.users["user_id"].to_numpy()[reference.user],
                                         reference.t + shift * k])
    org_key = pd.MultiIndex.from_arrays([original.users["user_id"].to_numpy()[original.user], original.t])
    keep = ~ref_key.duplicated()
    at = ref_key[keep].get_indexer(org_key)
    loc = np.where(at >= 0, reference.loc[keep][np.maximum(at, 0)], DELETED)
    return replace(original, loc=loc.astype(np.int32), info={**original.info, "baseline": "reference"})


def uniform_release(original: TraceSet, seed: int = 0) -> TraceSet:
    """Figure 13's "Uniform": a uniformly random region per original event."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(55,)))
    loc = rng.integers(0, original.space.n_locations, original.n_events)
    return replace(original, loc=loc.astype(np.int32), info={**original.info, "baseline": "uniform"})


def analyses(original: TraceSet, releases, *, reference: TraceSet | None = None, seed: int = 0,
             distances: np.ndarray | None = None) -> pd.DataFrame:
    """analyses.csv: one row per ``(label, anonymized traces)`` of ``releases``, then the
    ``(reference)`` (when ``reference`` is given) and ``(uniform)`` baselines."""
    d = scores.distance_matrix(original.space) if distances is None else distances
    rows = [analyse(original, anonymized, label, distances=d, seed=seed) for label, anonymized in releases]
    if reference is not None:
        rows.append(analyse(original, reference_release(original, reference), "(reference)", distances=d, seed=seed))
    rows.append(analyse(original, uniform_release(original, seed), "(uniform)", distances=d, seed=seed))
    return pd.DataFrame(rows, columns=COLUMNS)


def write_analyses(table: pd.DataFrame, out, *, overwrite: bool = False) -> None:
    """The analyses as CSV (the columns of a run's analyses.csv), written whole or not at all."""
    from ..core.files import atomic_output

    with atomic_output(out, overwrite, directory=False) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6f", lineterminator="\n")


def describe(table: pd.DataFrame) -> list[str]:
    """The analyses in lines for people, one per anonymized set."""
    return [f"{row.anonymizer:>24}  utility {row.utility:.4f}{'' if row.valid else ' (invalid)'}  POI accuracy "
            f"{row.poi_accuracy:.4f}  TP-TV-Top50 {row.tp_tv_top50:.4f}  TM-EMD {row.tm_emd:.4f} km"
            for row in table.itertuples()]
