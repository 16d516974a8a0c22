"""Copies and near-copies of training trajectories in a release, calibrated on hold-out data of
equal size (issue 48): the distance-to-closest-record check of synthetic-data libraries (SDMetrics'
DCR overfitting protection, synthcity's DCR), which compares each synthetic record's nearest
training record with its nearest hold-out record, with a p-value.

The training set is split at random into k = round(n_train / n_test) parts of m = min(n_test,
n_train // k) trajectories, and m test trajectories are drawn: k + 1 real sets of equal size, the
hold-out H last (the 200 cabs: k = 4, m = 18,116). Every training trajectory is in one part, so a
copied one is found whichever it is (subsampling the training set to the hold-out's size would
lose k - 1 of k copies).

The distance is the copy distance: between two trajectories of the same shape (the same number of
points, each at the same offset from the first point, to the metre), how far apart their first
points are; between trajectories of different shapes, infinite. A verbatim copy is at 0 from its
original, a copy moved by one cell at one cell's width (500 m on the cabs' cells), whichever way;
a trip jittered point by point, cut or resampled is not a copy in this sense (the near-copy check,
near_copies.py, sees jittered ones with the same sets and test). Exact on shapes (hashed, then
compared point by point), so it costs one pass over the sets, not a nearest-neighbour search.

For each distinct synthetic walk y (a walk released many times counts once), with d_j(y) its copy
distance to the nearest trajectory of set j (the public box's diagonal D where set j holds no
trajectory of its shape):

    d_(1) <= d_(2): the two smallest of d_0 .. d_k,   w(y) = ln((d_(2) + h) / (d_(1) + h)),  h = 1 m,

and the winner, the set at d_(1) when it is alone there (w > 0; a tie gives w = 0, no evidence:
a common shape is in every set, nearby). An exact copy of a trip whose shape no other set holds
has w = ln(D + 1), about 10 on the cabs; moved one cell, ln((D + 1) / 501); a realistic
synthetic trip whose shape is common, w near 0.

Null: a release that does not depend on which real trajectories were trained on. The k + 1 sets are
then exchangeable (the split and the parts are random draws of equal size), so given the distances
the winner is each set with probability 1 / (k + 1), whatever w is. A real trajectory that is the
winner's nearest for several walks counts once, with its largest w (its set decides them all, so
they are one piece of evidence; copies of different trips are several). The statistic

    T = sum over y of w(y) [winner(y) = H],   E T = W / (k + 1),   Var T = sum w^2 k / (k + 1)^2,

with W = sum w, is below its mean when the training parts win more often than chance where it
matters (large w). Reported: the one-sided p-value of z = (T - E T) / sd T (normal approximation;
the winning real trajectories are treated as independent, as a random split makes them), and the
score 1 - (k + 1) T / W: 0 when the hold-out wins its fair share, 1 when it never wins (every
copy-like walk is a training trip's), negative when the hold-out wins more (a release built from
the test set). A release is flagged at p < ``ALPHA``.

A DP release does depend on its training data, within its epsilon; the test is of the whole
release, so a large honest release could in principle be flagged for what DP allows. The false
alarm rate on honest releases is measured in docs/attacks.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..metrics.groups import GroupResult, Metric, MetricGroup, row
from .trip_geometry import (Trajectories, _hashes, applies, diagonal, distinct, public_box, real_sets, released,
                            same_points)

#: metres added to both distances of w, so that two exact copies read as a tie (w = 0)
H_M = 1.0
#: the p-value below which a release is flagged as holding copies
ALPHA = 0.01


@dataclass(frozen=True)
class Calibration:
    """The k training parts and the hold-out, as row numbers of the training and test sets."""

    parts: tuple[np.ndarray, ...]
    hold_out: np.ndarray

    @property
    def size(self) -> int:
        return int(self.hold_out.size)


@dataclass(frozen=True)
class CopyCheck:
    """The check of one release (module docstring)."""

    p_value: float
    score: float
    z: float
    walks: int                   # distinct synthetic walks
    decided: int                 # of them with a set alone at the smallest distance (w > 0)
    training_wins: int
    hold_out_wins: int
    parts: int                   # k
    set_size: int                # m

    @property
    def flagged(self) -> bool:
        return self.p_value < ALPHA


def calibration(n_train: int, n_test: int, seed: int) -> Calibration:
    """k = round(n_train / n_test) parts of the training rows and a hold-out of the test rows, all of
    m = min(n_test, n_train // k) rows, seeded (module docstring)."""
    k = max(1, int(round(n_train / n_test)))
    m = min(n_test, n_train // k)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(48, 1)))
    order = rng.permutation(n_train)
    parts = tuple(np.sort(order[i * m:(i + 1) * m]) for i in range(k))
    return Calibration(parts, np.sort(rng.choice(n_test, m, replace=False)))


def set_distances(synthetic: Trajectories, train: Trajectories, test: Trajectories, cal: Calibration,
                  far: float) -> tuple[np.ndarray, np.ndarray]:
    """(distances, rows), both (walks, k + 1): each distinct synthetic walk's copy distance (module
    docstring) to the nearest trajectory of each training part, then of the hold-out, and that
    trajectory's row among the k + 1 sets one after another (-1 and ``far``, the public box's
    diagonal, where the set holds no trajectory of the walk's shape)."""
    rows, _ = distinct(synthetic)
    walks = synthetic.subset(rows)
    real = Trajectories.concat([train.subset(p) for p in cal.parts] + [test.subset(cal.hold_out)])
    label = np.repeat(np.arange(len(cal.parts) + 1), [p.size for p in cal.parts] + [cal.hold_out.size])
    wx, wy = _offsets(walks)
    rx, ry = _offsets(real)
    # a shape's hash: trip_geometry's FNV-1a over the offsets' bits
    wh = _hashes(wx.view(np.uint64), wy.view(np.uint64), walks.offsets)
    rh = _hashes(rx.view(np.uint64), ry.view(np.uint64), real.offsets)
    return grouped_distances(wx, wy, walks.offsets, wh, walks.x, walks.y, rx, ry, real.offsets, rh, real.x, real.y,
                             label, len(cal.parts) + 1, float(far))


def grouped_distances(wx, wy, woff, wh, wpx, wpy, rx, ry, roff, rh, rpx, rpy, label, sets: int, far: float):
    """Each walk's copy distance to the nearest trajectory of each set, and its row (module
    docstring), with the real trajectories grouped by shape (their hashes): a group whose members
    all hold one shape (no hash collision inside it) is searched over its distinct (set, first
    point) pairs, each standing for its smallest row, instead of over every member; the distances
    and rows are the same (a shape's copy distance depends on the first point alone, and of tied
    rows the smallest is kept either way). A common shape (a one-cell hop) is held by tens of
    thousands of real trips at Porto size but starts in at most as many places as there are cells."""
    order = np.argsort(rh, kind="stable")
    rh_sorted = rh[order]
    starts = np.flatnonzero(np.r_[True, rh_sorted[1:] != rh_sorted[:-1]]) if rh.size else np.zeros(0, np.int64)
    bounds = np.r_[starts, rh_sorted.size]
    mixed = _mixed_groups(rx, ry, roff, order, bounds)
    first = roff[:-1][order]
    group = np.repeat(np.arange(starts.size), np.diff(bounds))
    # one candidate per (group, set, first point): the smallest row, which the sort puts first
    columns = (group, label[order], rpx[first], rpy[first])
    keys = np.lexsort((order, *columns[::-1]))
    new = np.zeros(keys.size, bool)
    new[:1] = True
    for c in columns:
        new[1:] |= c[keys][1:] != c[keys][:-1]
    kept = keys[new]
    cand_bounds = np.searchsorted(group[kept], np.arange(starts.size + 1))
    return _grouped(wx, wy, woff, wh, wpx, wpy, rx, ry, roff, rh_sorted[starts], bounds, order, mixed,
                    cand_bounds, order[kept], rpx, rpy, label, sets, far)


@njit(cache=True)
def _mixed_groups(rx, ry, roff, order, bounds):
    """For each group of equal hashes (``order[bounds[g]:bounds[g + 1]]``), whether its members hold
    more than one shape (a collision of the hash)."""
    out = np.zeros(bounds.size - 1, np.bool_)
    for g in range(bounds.size - 1):
        head = order[bounds[g]]
        for a in range(bounds[g] + 1, bounds[g + 1]):
            if not same_points(rx, ry, roff, head, rx, ry, roff, order[a]):
                out[g] = True
                break
    return out


@njit(cache=True, parallel=True)
def _grouped(wx, wy, woff, wh, wpx, wpy, rx, ry, roff, hashes, bounds, order, mixed, cand_bounds, cand_rows,
             rpx, rpy, label, sets, far):
    n = woff.size - 1
    out = np.full((n, sets), far)
    row = np.full((n, sets), -1, np.int64)
    for i in prange(n):
        g = np.searchsorted(hashes, wh[i])
        if g == hashes.size or hashes[g] != wh[i]:
            continue
        if mixed[g]:
            lo, hi, rows = bounds[g], bounds[g + 1], order
        elif same_points(wx, wy, woff, i, rx, ry, roff, order[bounds[g]]):
            lo, hi, rows = cand_bounds[g], cand_bounds[g + 1], cand_rows
        else:
            continue
        for a in range(lo, hi):
            j = rows[a]
            if mixed[g] and not same_points(wx, wy, woff, i, rx, ry, roff, j):
                continue
            d = np.hypot(wpx[woff[i]] - rpx[roff[j]], wpy[woff[i]] - rpy[roff[j]])
            if d < out[i, label[j]] or (d == out[i, label[j]] and j < row[i, label[j]]):
                out[i, label[j]], row[i, label[j]] = d, j
    return out, row


def _offsets(t: Trajectories) -> tuple[np.ndarray, np.ndarray]:
    """Every point's offset from its trajectory's first point, in whole metres (the shape)."""
    first = np.repeat(t.offsets[:-1], t.lengths)
    return np.round(t.x - t.x[first]).astype(np.int64), np.round(t.y - t.y[first]).astype(np.int64)


def log_ratio(nearest: np.ndarray, second: np.ndarray) -> np.ndarray:
    """w = ln((d_(2) + h) / (d_(1) + h)) (module docstring); 0 where there is no nearest at all (an empty set)."""
    with np.errstate(invalid="ignore"):
        w = np.log((second + H_M) / (nearest + H_M))
    w[~np.isfinite(w)] = 0.0
    return w


def copy_check(distances: np.ndarray, rows: np.ndarray | None = None, evidence=log_ratio) -> CopyCheck:
    """The test of the module docstring on the (walks, k + 1) distances of :func:`set_distances`.
    With ``rows`` (the nearest real trajectory of each set), a real trajectory that wins for several
    walks counts once, with its largest w: walks near one real trip are not independent evidence
    (its set decides them all), while copies of different trips are. ``evidence``: w from the two
    smallest distances of each walk (:func:`log_ratio`; any function that is 0 where they tie)."""
    n, sets = distances.shape
    k = sets - 1
    if n == 0 or k < 1:
        return CopyCheck(1.0, 0.0, 0.0, n, 0, 0, 0, k, 0)
    two = np.sort(distances, axis=1)[:, :2]
    w = evidence(two[:, 0], two[:, 1])
    winner = np.argmin(distances, axis=1)
    if rows is not None:
        w = _once_per_record(w, rows[np.arange(n), winner])
    held = (winner == k) & (w > 0)
    total, observed = float(w.sum()), float(w[held].sum())
    expected, sd = total / sets, float(np.sqrt((w ** 2).sum() * k)) / sets
    z = (observed - expected) / sd if sd > 0 else 0.0
    decided = int((w > 0).sum())
    # the standard normal's distribution function, without importing scipy.stats (0.6 s) for it
    return CopyCheck(0.5 * math.erfc(-z / math.sqrt(2)) if sd > 0 else 1.0, 1.0 - sets * observed / total if total > 0 else 0.0,
                     float(z), n, decided, decided - int(held.sum()), int(held.sum()), k, 0)


def _once_per_record(w: np.ndarray, record: np.ndarray) -> np.ndarray:
    """w with every real record's walks but its one of largest w (the first of equals) set to 0."""
    out = np.zeros_like(w)
    live = np.flatnonzero((w > 0) & (record >= 0))
    order = live[np.lexsort((live, -w[live], record[live]))]
    first = order[np.r_[True, record[order][1:] != record[order][:-1]]] if order.size else order
    out[first] = w[first]
    return out


def check_release(synthetic: Trajectories, train: Trajectories, test: Trajectories, far: float,
                  seed: int = 0) -> CopyCheck:
    """:func:`copy_check` of ``synthetic`` against the seeded :func:`calibration` of the real sets;
    ``far``: the copy distance where a set holds no trajectory of a walk's shape (the public box's
    diagonal)."""
    from dataclasses import replace

    cal = calibration(len(train), len(test), seed)
    return replace(copy_check(*set_distances(synthetic, train, test, cal, far)), set_size=cal.size)


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    seed = ctx.option("seed", 0)
    train, test = real_sets(ctx)
    far = diagonal(public_box(ctx.train.space))
    result = check_release(released(ctx), train, test, far, seed)
    base = ctx.reference(("copies", seed), lambda: check_release(train, train, test, far, seed))
    return group_result("copies", ("copy_score", "copy_p_value"), result, base)


def group_result(group: str, keys: tuple[str, str], result: CopyCheck, base: CopyCheck, **details) -> GroupResult:
    """A check's metrics (``keys``: its score and p-value, beside the training set's and chance), its
    details (with ``details`` added) and its sample sizes, for the group named ``group``."""
    metrics = {keys[0]: row(result.score, base.score, 0.0), keys[1]: row(result.p_value, base.p_value, None)}
    details = {"p_value": result.p_value, "score": result.score, "z": result.z, "flagged": result.flagged,
               "alpha": ALPHA, **details, "walks": result.walks, "decided": result.decided,
               "training_wins": result.training_wins, "hold_out_wins": result.hold_out_wins,
               "parts": result.parts, "set_size": result.set_size}
    return GroupResult(metrics, {group: details},
                       {"attack_samples": {group: {"walks": result.walks, "parts": result.parts,
                                                   "set_size": result.set_size}}})


GROUP = MetricGroup(
    "copies",
    (Metric("copy_score", "Copy check score", "copies of training trajectories, verbatim or moved: how much less "
            "often than chance a hold-out trajectory is the nearest real one of a synthetic walk's shape, weighted by "
            "how much nearer than the other sets (k training parts and a hold-out of equal size): 0 for a release "
            "independent of its training trips, 1 when every copy-like walk is a training trip's, negative when the "
            "release holds test trips", range=(None, 1.0), short="copies"),
     Metric("copy_p_value", "Copy check p-value", "one-sided p-value of the same check (flagged below 0.01): how "
            "likely a release independent of which trips were trained on scores as high or higher", range=(0.0, 1.0),
            goal="higher", short="copies p")),
    _compute, applies("copies"), step="copies of training trajectories", kind="attack")
