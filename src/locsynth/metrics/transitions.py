"""The average transition matrix and its distances (paper 001 §4.3 (b); paper 003 §5.5).

The matrix counts, over all users, the transitions between events in consecutive instants and
normalises each row; a row with no transition becomes a self-loop (as in the authors' code).
Each row is a conditional distribution over the next location. TM-EMD-Y and TM-EMD-X project
every row onto the y (latitude) and x (longitude) bins of the grid and take the 1-D earth
mover's distance, averaged over all rows. TM-SWD takes the sliced 1-Wasserstein distance
(Bonneel et al. 2015) in the plane, in kilometres, with POT: paper 003 §5.5 calls it TM-EMD.

A transition with a deleted end is skipped; one between generalized events counts
1 / (|A| |B|) for each pair of their regions (metrics/events.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..data.space import Grid, Space
from ..data.traces import TraceSet, split_keys
from .groups import Figure, GroupResult, Metric, MetricGroup, count, not_for_trips, row
from .population import normalise_rows

if TYPE_CHECKING:                   # scipy.sparse loads where it is used: PPMTF's fit needs none of it
    import scipy.sparse as sp

KM_PER_DEGREE = 111.195
#: log of probability 0, kept finite so that every path through a chain has a score: SGLT's
#: decoding (synth/sglt/model.py) and the localization attack (attacks/localization.py) floor
#: their log-probabilities at it
LOG_ZERO = -690.0


def transition_counts(traces: TraceSet, consecutive_only: bool = True) -> sp.csr_array:
    """Counts of transitions between locations, sparse of shape (n_locations, n_locations).

    ``consecutive_only`` (the paper's definition) counts a pair of successive events of a trace
    only when their instants are consecutive; otherwise every pair of successive events counts.
    Deleted and generalized events as metrics/events.py says (a deleted event still occupies
    its instant: the events on either side of it are not consecutive).
    """
    import scipy.sparse as sp
    n = traces.space.n_locations
    if not traces.exact:
        from .events import spread_pairs

        i = traces.transition_index(consecutive_only)
        src, dst, weight = spread_pairs(traces, i, i + 1)
        return sp.csr_array((weight, (src, dst)), shape=(n, n))
    _, src, dst = traces.transitions(consecutive_only)
    return sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))


def transition_matrix(traces: TraceSet, consecutive_only: bool = True) -> sp.csr_array:
    """The average transition-probability matrix of ``traces`` (rows sum to one)."""
    return normalise_rows(transition_counts(traces, consecutive_only), empty="self-loop")


def uniform_transitions(n_locations: int) -> np.ndarray:
    """The transition matrix of uniformly random traces, dense."""
    return np.full((n_locations, n_locations), 1.0 / n_locations)


def axis_bins(space: Space, bins: int = 20) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(y bin, x bin, n_y, n_x) of every location: a grid's own rows and columns, or a
    ``bins`` x ``bins`` grid over the bounding box of a POI set (as the authors do for Foursquare)."""
    if isinstance(space, Grid):
        return space.row, space.col, space.rows, space.cols
    def cut(v):
        lo, hi = v.min(), v.max()
        if hi <= lo:
            return np.zeros(v.size, np.int64)
        return np.minimum(((v - lo) / (hi - lo) * bins).astype(np.int64), bins - 1)
    return cut(space.lat), cut(space.lon), bins, bins


def project_rows(matrix, bins_of_location: np.ndarray, n_bins: int) -> np.ndarray:
    """Each row of a (sparse or dense) matrix over locations, summed into location bins."""
    import scipy.sparse as sp
    onehot = sp.csr_array((np.ones(bins_of_location.size), (np.arange(bins_of_location.size), bins_of_location)),
                          shape=(bins_of_location.size, n_bins))
    out = matrix @ onehot
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def emd_1d_rows(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Earth mover's distance between the rows of ``p`` and ``q`` on the support 0, 1, 2, ..."""
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1)


def tm_emd(reference, synthetic, space: Space, bins: int = 20) -> tuple[float, float]:
    """(TM-EMD-Y, TM-EMD-X): the 1-D EMD of each row along latitude and longitude bins, averaged."""
    ybin, xbin, ny, nx = axis_bins(space, bins)
    emd_y = emd_1d_rows(project_rows(reference, ybin, ny), project_rows(synthetic, ybin, ny))
    emd_x = emd_1d_rows(project_rows(reference, xbin, nx), project_rows(synthetic, xbin, nx))
    return float(emd_y.mean()), float(emd_x.mean())


def planar_km(space: Space) -> np.ndarray:
    """Locations on a local plane (equirectangular around the centre), in kilometres, shape (n, 2)."""
    lat0 = np.radians(0.5 * (space.lat.min() + space.lat.max()))
    x = (space.lon - space.lon.min()) * np.cos(lat0) * KM_PER_DEGREE
    y = (space.lat - space.lat.min()) * KM_PER_DEGREE
    return np.column_stack([x, y])


def random_projections(d: int, k: int, seed: int) -> np.ndarray:
    """``ot.sliced.get_random_projections(d, k, seed=seed)`` on POT's numpy backend: k Gaussian
    directions from ``RandomState(seed)``, scaled to unit length (columns of a (d, k) array).
    Importing POT for it took 3.3 s (its backends load torch and scikit-learn), most of a first
    ``evaluate``."""
    theta = np.random.RandomState(seed).randn(d, k)
    return theta / np.sqrt(np.sum(theta ** 2, 0, keepdims=True))


def tm_swd(reference, synthetic, space: Space, n_projections: int = 50, seed: int = 0,
           chunk: int = 2048) -> float:
    """TM-SWD: sliced 1-Wasserstein distance (km) between matching rows, averaged over rows.

    .. math:: SW_1(p, q) = \\frac{1}{K} \\sum_{k=1}^{K} W_1(\\theta_k^\\top p, \\theta_k^\\top q)

    The K directions are POT's seeded random projections (:func:`random_projections`), the
    same for every row, so each row's value equals ``ot.sliced_wasserstein_distance(..., p=1)``
    with that seed; the 1-D distances are computed for all rows at once on the shared support
    (W_1 = integral of |F_p - F_q| along the projected, sorted locations).
    """
    import scipy.sparse as sp
    ref, syn = sp.csr_array(reference), sp.csr_array(synthetic)
    theta = random_projections(2, n_projections, seed)                         # (2, K)
    proj = planar_km(space) @ theta                                             # (n, K)
    order = np.argsort(proj, axis=0, kind="stable")
    gaps = np.diff(np.take_along_axis(proj, order, axis=0), axis=0)             # (n - 1, K)
    diff = sp.csr_array(ref - syn)
    rows = np.flatnonzero(np.asarray(abs(diff).sum(axis=1)).ravel() > 1e-15)
    total = 0.0
    for lo in range(0, rows.size, chunk):
        block = np.ascontiguousarray(diff[rows[lo:lo + chunk]].toarray().T)     # locations x rows
        for k in range(n_projections):
            cdf = np.cumsum(block[order[:-1, k]], axis=0)        # the last CDF value (the total) is 0
            total += float((gaps[:, k] @ np.abs(cdf)).sum())
    return total / n_projections / ref.shape[0]


# -- transitions of one day, each trace's first ones (paper 000's TPM and co-locations) ----------

def same_day_transitions(traces: TraceSet) -> np.ndarray:
    """Indices i of the events whose next event i + 1 is the same trace's, on the same day."""
    i = traces.transition_index(consecutive_only=False)
    return i[traces.time.day(traces.t[i]) == traces.time.day(traces.t[i + 1])]


def rank_in_trace(user: np.ndarray) -> np.ndarray:
    """Position of every item among its trace's items (items sorted by trace), 0-based."""
    user = np.asarray(user)
    if not user.size:
        return np.zeros(0, np.int64)
    start = np.r_[0, np.flatnonzero(user[1:] != user[:-1]) + 1]
    return np.arange(user.size) - np.repeat(start, np.diff(np.r_[start, user.size]))


def trimmed_transition_counts(traces: TraceSet, trim: int | None, *, per_user: bool = False) -> np.ndarray:
    """(L, L) counts of transitions, each trace's first ``trim`` in time order (all for None);
    ``per_user``: each user id's first ``trim`` over all of their traces, in time order, so that one
    user adds at most ``trim`` whatever their number of traces (paper 000's TPM trims per user)."""
    L = traces.space.n_locations
    i = same_day_transitions(traces)
    if trim is not None and per_user:
        who = pd.factorize(traces.users["user_id"].to_numpy())[0][traces.user[i]]
        order = np.lexsort((traces.t[i], who))
        keep = np.zeros(i.size, bool)
        keep[order[rank_in_trace(who[order]) < trim]] = True
        i = i[keep]
    elif trim is not None:
        i = i[rank_in_trace(traces.user[i]) < trim]
    counts = np.bincount(traces.loc[i].astype(np.int64) * L + traces.loc[i + 1], minlength=L * L)
    return counts.reshape(L, L).astype(np.float64)


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _emd_rows(m_test, m_syn, m_train, test, bins) -> dict:
    """Per row of the test matrix, the y and x EMDs of the synthetic (averaged over trace numbers)
    and the training matrices: what the TM-EMD plot draws."""
    ybin, xbin, ny, nx = axis_bins(test.space, bins)

    def rows(m):
        return {"y": emd_1d_rows(project_rows(m_test, ybin, ny), project_rows(m, ybin, ny)),
                "x": emd_1d_rows(project_rows(m_test, xbin, nx), project_rows(m, xbin, nx))}

    per_set = [rows(m) for m in m_syn]
    return {"synthetic": {ax: np.mean([r[ax] for r in per_set], axis=0) for ax in ("y", "x")},
            "training": rows(m_train)}


def _transitions_group(ctx) -> GroupResult:
    """TM-EMD-Y/X and TM-SWD (paper 001 §4.3 (b)), against the training and uniform baselines."""
    import time

    test, bins, projections, seed = ctx.test, ctx.option("emd_bins", 20), ctx.option("swd_projections", 50), \
        ctx.option("seed", 0)
    start = time.perf_counter()
    swd = lambda m: tm_swd(m_test, m, test.space, projections, seed)  # noqa: E731

    def reference():                  # the real sets' own: once per evaluation, or per benchmark dataset
        m_test, m_train = transition_matrix(test), transition_matrix(ctx.train)
        m_uni = uniform_transitions(test.space.n_locations)
        return m_test, m_train, [tm_emd(m_test, m_train, test.space, bins), tm_emd(m_test, m_uni, test.space, bins)]

    def swd_reference():
        return swd(m_train), swd(uniform_transitions(test.space.n_locations))

    m_test, m_train, (emd_train, emd_uni) = ctx.reference(("transitions", bins), reference)
    m_syn = [transition_matrix(s) for s in ctx.sets]
    emd_syn = np.array([tm_emd(m_test, m, test.space, bins) for m in m_syn])
    metrics = {"tm_emd_y": row(emd_syn[:, 0].mean(), emd_train[0], emd_uni[0]),
               "tm_emd_x": row(emd_syn[:, 1].mean(), emd_train[1], emd_uni[1])}
    middle = time.perf_counter()
    metrics["tm_swd"] = row(np.mean([swd(m) for m in m_syn]),
                            *ctx.reference(("transitions", "swd", projections, seed), swd_reference))
    seconds = {"tm_emd": round(middle - start, 4), "tm_swd": round(time.perf_counter() - middle, 4)}
    details = {"emd_rows": _emd_rows(m_test, m_syn, m_train, test, bins)}
    return GroupResult(metrics, details, {"options": {"emd_bins": bins, "swd_projections": projections}}, seconds)


def _emd_rows_figure(details: dict, meta: dict) -> bytes:
    from .figures import emd_rows_png

    return emd_rows_png(details["emd_rows"], "grid cells" if (details.get("space") or {}).get("kind") == "grid"
                        else "bins")


def _emd_unit(options: dict, space_kind: str | None) -> str:
    bins = options["emd_bins"]
    return ("grid cells" if space_kind == "grid" else f"bins of a {bins} x {bins} grid" if space_kind == "pois"
            else "grid cells or bins")


GROUP = MetricGroup(
    "transitions",
    (Metric("tm_emd_y", "TM-EMD-Y", "earth mover's distance between the rows of the transition matrices, "
            "projected on latitude (north-south), in {emd_unit}", range=(0.0, None), unit="{emd_unit}",
            short="EMD-Y"),
     Metric("tm_emd_x", "TM-EMD-X", "earth mover's distance between the rows of the transition matrices, "
            "projected on longitude (east-west), in {emd_unit}", range=(0.0, None), unit="{emd_unit}",
            short="EMD-X"),
     Metric("tm_swd", "TM-SWD", "sliced Wasserstein distance between the rows of the transition matrices, in km",
            range=(0.0, None), unit="km", short="TM-SWD")),
    _transitions_group, not_for_trips(
        "TM-EMD and TM-SWD count moves between events in consecutive instants (paper 001 §4.3 (b)); a real trip, "
        "self-loops merged (paper 004 §8.2), skips minutes between cells while a synthetic trip may step one "
        "instant per cell, so the two matrices would count different moves; paper 004 §8.4 measures routes by "
        "frequent patterns instead"),
    options=(count("emd_bins", 20, "y and x bins of TM-EMD for POI spaces (a grid uses its own rows and columns)."),
             count("swd_projections", 50, "Random projections of TM-SWD.")),
    figures=(Figure("Transition errors per location",
                    lambda d, m: "For every location, the earth mover's distance between its row of the transition "
                    "matrix (where users go next) and the same row for the test traces, projected on latitude "
                    "(left) and longitude (right); dashed lines are the means, TM-EMD-Y and TM-EMD-X. Lower is "
                    "better: mass near 0 means transitions are kept." + (
                        " The synthetic histogram uses the first trace number."
                        if (m.get("trace_numbers") or 1) > 1 else ""),
                    "histograms of per-row transition EMD, synthetic and training", _emd_rows_figure,
                    lambda d, m: bool(d.get("emd_rows"))),),
    fields=lambda options, space: {"emd_unit": _emd_unit(options, space)})


# -- the other shapes transitions are counted in: per trace over the pairs seen (the attacks), per
# -- period from rectangular traces (SGLT's mobility models), keyed per user (PPMTF's tensors) ----

class PairIndex:
    """Compact column ids for the transitions (i, j) seen in any of the given (src, dst) arrays."""

    def __init__(self, n_locations: int, *pairs: tuple[np.ndarray, np.ndarray]):
        self.n_locations = n_locations
        keys = [src * n_locations + dst for src, dst in pairs]
        self.keys = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)

    @property
    def size(self) -> int:
        return int(self.keys.size)

    def column(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.keys, src * self.n_locations + dst)


def trace_transition_counts(row: np.ndarray, src: np.ndarray, dst: np.ndarray, index: PairIndex,
                      n_rows: int) -> sp.csr_array:
    """How often each trace makes each transition, sparse of shape (n_rows, index.size)."""
    import scipy.sparse as sp
    out = sp.csr_array((np.ones(row.size), (row, index.column(src, dst))), shape=(n_rows, index.size))
    out.sum_duplicates()
    return out


def trace_transition_probabilities(row: np.ndarray, src: np.ndarray, dst: np.ndarray, index: PairIndex,
                             n_rows: int) -> sp.csr_array:
    """Each row's maximum-likelihood transition matrix W_n(i, j) = c_n(i, j) / c_n(i, .),
    flattened over the pair columns, sparse of shape (n_rows, index.size)."""
    import scipy.sparse as sp
    n_loc = index.n_locations
    key, count = np.unique((row * n_loc + src) * n_loc + dst, return_counts=True)
    r, s, d = key // (n_loc * n_loc), (key // n_loc) % n_loc, key % n_loc
    origin, inverse = np.unique(r * n_loc + s, return_inverse=True)
    degree = np.bincount(inverse, weights=count, minlength=origin.size)
    values = count / degree[inverse]
    return sp.csr_array((values, (r, index.column(s, d))), shape=(n_rows, index.size))


def period_transition_counts(locs: np.ndarray, period: np.ndarray, n_locations: int, periods: int,
                      wrap: bool = False) -> np.ndarray:
    """Counts (periods, R, R) of consecutive observed pairs of the rows of ``locs``; ``wrap``
    also counts the last instant to the first of the same row (the authors' tool)."""
    a, b = locs[:, :-1], locs[:, 1:]
    tau = np.broadcast_to(period[:-1], a.shape)
    if wrap:
        a = np.hstack([a, locs[:, -1:]])
        b = np.hstack([b, locs[:, :1]])
        tau = np.broadcast_to(np.append(period[:-1], period[-1]), a.shape)
    ok = (a >= 0) & (b >= 0)
    R = n_locations
    flat = (tau[ok].astype(np.int64) * R + a[ok]) * R + b[ok]
    return np.bincount(flat, minlength=periods * R * R).reshape(periods, R, R).astype(np.float64)


def keyed_transition_counts(traces: TraceSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(user, i, j, count) of R^I before trimming: transitions between consecutive instants."""
    user, src, dst = traces.transitions()
    n_loc = traces.space.n_locations
    key = (user * n_loc + src) * n_loc + dst
    return split_keys(key, n_loc, n_loc)
