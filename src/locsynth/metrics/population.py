"""Time-dependent population distributions (paper 001 §4.3 (a); paper 003 §5.5).

TP-TV is the total variation between the reference and synthetic location distributions of
each time slot, averaged over slots:

.. math:: \\mathrm{TP\\text{-}TV} = \\frac{1}{|\\mathcal{L}|} \\sum_{l} \\frac{1}{2}
          \\sum_{x \\in \\mathcal{X}} |p_l(x) - q_l(x)|

TP-TV-Top50 keeps, per slot, only the 50 locations most frequent in the reference; the error of
every other location counts as 0.

Deleted events are skipped and a generalized event counts 1 / |set| at each region of its set
(metrics/events.py).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..data.traces import TraceSet
from .groups import Figure, GroupResult, Metric, MetricGroup, count, not_for_trips, row


def population_by_slot(traces: TraceSet) -> np.ndarray:
    """Location distribution of each slot, ndarray of shape (n_slots, n_locations).

    A slot without events gets the uniform distribution (as the authors' evaluation does).
    Deleted and generalized events as metrics/events.py says.
    """
    n_slots, n_loc = traces.time.n_slots, traces.space.n_locations
    slot = traces.time.slot(traces.t).astype(np.int64)
    if traces.exact:
        counts = np.bincount(slot * n_loc + traces.loc, minlength=n_slots * n_loc)
    else:
        from .events import spread

        event, loc, weight = spread(traces)
        counts = np.bincount(slot[event] * n_loc + loc, weight, minlength=n_slots * n_loc)
    return normalise_rows(counts.reshape(n_slots, n_loc).astype(np.float64))


def normalise_rows(counts, empty: str = "uniform"):
    """Rows scaled to sum to one. An all-zero row becomes ``empty``: "uniform" (every column
    1 / n) or "self-loop" (1 on the diagonal: paper 001's TM-EMD, where a location nobody leaves
    keeps its mass). A scipy sparse matrix stays sparse (its empty rows only as self-loops)."""
    import scipy.sparse as sp

    if empty not in ("uniform", "self-loop"):
        raise InputError(f"unknown rule for empty rows {empty!r}; expected 'uniform' or 'self-loop'")
    if sp.issparse(counts):
        if empty != "self-loop":
            raise InputError("the empty rows of a sparse matrix can only become self-loops")
        counts = sp.csr_array(counts, dtype=np.float64)
        total = np.asarray(counts.sum(axis=1)).ravel()
        rows = np.flatnonzero(total == 0)
        scaled = sp.diags_array(np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)) @ counts
        return sp.csr_array(scaled + sp.csr_array((np.ones(rows.size), (rows, rows)), shape=counts.shape))
    counts = np.asarray(counts, np.float64)
    total = counts.sum(axis=1, keepdims=True)
    fill = np.full_like(counts, 1.0 / counts.shape[1]) if empty == "uniform" else np.eye(*counts.shape)
    return np.divide(counts, total, out=fill, where=total > 0)


def top_mask(reference: np.ndarray, top: int) -> np.ndarray:
    """Boolean mask of the ``top`` largest entries of each row of ``reference``.

    Ties at the cut are broken by the lower location id (a stable sort). The authors' script
    takes ``np.argsort(p)[::-1]``, whose order among ties depends on numpy's sorting algorithm
    and version; on PF the two agree on TP-TV-Top50 to within 1e-3.
    """
    order = np.argsort(-reference, axis=1, kind="stable")[:, :top]
    mask = np.zeros(reference.shape, dtype=bool)
    np.put_along_axis(mask, order, True, axis=1)
    return mask


def tp_tv(reference: np.ndarray, synthetic: np.ndarray, top: int | None = None) -> float:
    """TP-TV (or TP-TV-Top``top``) between two (n_slots, n_locations) distributions."""
    diff = np.abs(reference - synthetic)
    if top is not None:
        diff = np.where(top_mask(reference, top), diff, 0.0)
    return float(0.5 * diff.sum(axis=1).mean())


def uniform_population(n_slots: int, n_locations: int) -> np.ndarray:
    """The population of uniformly random traces: 1 / |X| everywhere."""
    return np.full((n_slots, n_locations), 1.0 / n_locations)


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def slot_labels(ts: TraceSet) -> list[str]:
    """The local start time of every slot, 'HH:MM' (the population plot's panels)."""
    import pandas as pd

    starts = ts.time.start_of(np.searchsorted(ts.time.slot_of, np.arange(ts.time.n_slots)))
    local = pd.DatetimeIndex(starts).tz_convert(ts.time.timezone)
    return [t.strftime("%H:%M") for t in local]


def _population_group(ctx) -> GroupResult:
    """TP-TV and TP-TV-Top (paper 001 §4.3 (a)), against the training and uniform baselines."""
    top = ctx.option("top", 50)

    def reference():                  # the real sets' own: once per evaluation, or per benchmark dataset
        p_test, p_train = population_by_slot(ctx.test), population_by_slot(ctx.train)
        p_uni = uniform_population(ctx.test.time.n_slots, ctx.test.space.n_locations)
        return p_test, p_train, [tp_tv(p_test, p_train), tp_tv(p_test, p_uni)], \
            [tp_tv(p_test, p_train, top), tp_tv(p_test, p_uni, top)]

    p_test, p_train, baselines, baselines_top = ctx.reference(("population", top), reference)
    p_syn = [population_by_slot(s) for s in ctx.sets]
    metrics = {
        "tp_tv": row(np.mean([tp_tv(p_test, q) for q in p_syn]), *baselines),
        "tp_tv_top50": row(np.mean([tp_tv(p_test, q, top) for q in p_syn]), *baselines_top),
    }
    details = {"population": {"test": p_test, "synthetic": np.mean(p_syn, axis=0), "training": p_train},
               "slot_labels": slot_labels(ctx.test)}
    return GroupResult(metrics, details, {"options": {"top": top}})


def _population_figure(details: dict, meta: dict) -> bytes:
    from .figures import population_png

    return population_png(details["population"], details.get("slot_labels") or [], details["space"])


def _population_caption(details: dict, meta: dict) -> str:
    from .figures import evenly_spaced

    where = ("a grid cell (image rows are grid rows, south at the bottom)" if details["space"].get("kind") == "grid"
             else "a point of interest, drawn at its coordinates")
    return (f"The share of users at each location in {len(evenly_spaced(len(details['population']['test'])))} "
            f"evenly spaced time slots (slot start times in local time): real test traces on top, synthetic traces "
            f"below, on one colour scale. Each square is {where}. The closer the two rows look, the lower TP-TV.")


GROUP = MetricGroup(
    "population",
    (Metric("tp_tv", "TP-TV", "total variation between the time-dependent population distributions, averaged "
            "over time slots", range=(0.0, 1.0), short="TP-TV"),
     Metric("tp_tv_top50", "TP-TV-Top{top}", "TP-TV restricted to the {top} locations most visited in the test "
            "traces", range=(0.0, 1.0), short="TP-Top50")),
    _population_group, not_for_trips(
        "TP-TV reads every event's instant as a time of day (paper 001 §4.3 (a)); a synthetic trip carries at most "
        "its hour (NGRAM none: its events sit on instants 0, 1, ...), so paper 004 §8.4 compares the trips of each "
        "hour instead"),
    options=(count("top", 50, "Locations kept by TP-TV-Top (paper 001: the 50 most visited)."),),
    figures=(Figure("Population per time slot", _population_caption,
                    "heatmaps of the population distribution per time slot, test and synthetic", _population_figure,
                    lambda d, m: bool(d.get("population") and d.get("space") and "test" in d["population"]
                                      and "synthetic" in d["population"])),),
    fields=lambda options, space: {"top": options["top"]})
