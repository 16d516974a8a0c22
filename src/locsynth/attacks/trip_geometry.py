"""What the attacks on trajectories share (attacks on trips, issue 37): the sets as planar points,
two trajectory distances, the nearest trajectory of a pool found through an index, balanced target
samples, a uniform grid over the public space, and the members-against-non-members summary.

Points are the locations' representative points (a discrete set's cells' centres) in metres,
equirectangular around the space's mean latitude (metrics/standard.py ``planar``), so every set
over one space is measured in one frame. A trajectory is one trace; generalized events are left
out and empty traces dropped (``standard.points``).

Distances (both on points, in metres):

- the discrete Frechet distance (Eiter and Mannila 1994): the smallest, over monotone couplings of
  the two point sequences that start at both starts and end at both ends, of the largest distance
  between coupled points. It reads "every point of one is within d of its partner in the other",
  whatever the lengths; the membership inference and the outlier leakage use it.
- DTW (dynamic time warping), the same couplings with the sum instead of the largest; AdaTrace's
  sniffing attack uses it (Evaluation.calculateDTW: Euclidean point distances, summed).

Both couple the two starts and the two ends, and every point has a partner within the Frechet
distance, so a trajectory's start, end and bounding box bound both distances from below: a tree over
them finds the exact nearest trajectory without scoring all pairs (trip_index.py; :func:`nearest`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..metrics.standard import planar, points
from ..privacy.empirical import clopper_pearson
from ..data.traces import TraceSet, ranges
from .trip_index import build, coupled, features, search

SQRT2 = float(np.sqrt(2.0))
DISTANCES = ("frechet", "dtw")


@dataclass(frozen=True)
class Trajectories:
    """Point sequences: trajectory ``i`` is ``x[offsets[i]:offsets[i + 1]]`` (metres), likewise ``y``."""

    x: np.ndarray
    y: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def ends(self) -> np.ndarray:
        """(n, 4): every trajectory's start x, y and end x, y."""
        first, last = self.offsets[:-1], self.offsets[1:] - 1
        return np.column_stack([self.x[first], self.y[first], self.x[last], self.y[last]])

    @staticmethod
    def concat(parts) -> "Trajectories":
        """The trajectories of ``parts``, one after another."""
        parts = list(parts)
        lengths = np.concatenate([p.lengths for p in parts]) if parts else np.zeros(0, np.int64)
        return Trajectories(np.concatenate([p.x for p in parts]) if parts else np.zeros(0),
                            np.concatenate([p.y for p in parts]) if parts else np.zeros(0),
                            np.r_[0, np.cumsum(lengths)].astype(np.int64))

    def subset(self, rows) -> "Trajectories":
        rows = np.asarray(rows, np.int64)
        lengths = self.lengths[rows]
        idx = ranges(self.offsets[rows], lengths)
        return Trajectories(self.x[idx], self.y[idx], np.r_[0, np.cumsum(lengths)].astype(np.int64))


def trajectories(ts: TraceSet) -> Trajectories:
    """``ts`` as planar trajectories (module docstring)."""
    p = points(ts, planar(ts.space))
    return Trajectories(p.x, p.y, p.offsets)


def public_box(space) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in metres of the space's own locations: the public space, never a data set's
    extent."""
    x, y = planar(space)
    return float(x.min()), float(y.min()), float(x.max()), float(y.max())


def diagonal(box) -> float:
    return float(np.hypot(box[2] - box[0], box[3] - box[1]))


# -- distances ----------------------------------------------------------------------------------------

@njit(cache=True, parallel=True)
def _pair_distances(ax, ay, aoff, bx, by, boff, left, right, kind, bounds):
    out = np.empty(left.size)
    for k in prange(left.size):
        i, j = left[k], right[k]
        a0, a1, b0, b1 = aoff[i], aoff[i + 1], boff[j], boff[j + 1]
        out[k] = coupled(ax[a0:a1], ay[a0:a1], bx[b0:b1], by[b0:b1], kind == 0, bounds[k], np.empty(b1 - b0))
    return out


def pair_distances(a: Trajectories, b: Trajectories, left, right, distance: str = "frechet",
                   bounds: np.ndarray | None = None) -> np.ndarray:
    """The distance of a[left[k]] to b[right[k]] for every k; inf where it exceeds ``bounds[k]``
    (a search that needs only the pairs nearer than its best so far)."""
    left, right = np.asarray(left, np.int64), np.asarray(right, np.int64)
    bounds = np.full(left.size, np.inf) if bounds is None else np.asarray(bounds, np.float64)
    return _pair_distances(a.x, a.y, a.offsets, b.x, b.y, b.offsets, left, right, DISTANCES.index(distance), bounds)


def distance(a: Trajectories, i: int, b: Trajectories, j: int, distance: str = "frechet") -> float:
    return float(pair_distances(a, b, [i], [j], distance)[0])


# -- the nearest trajectory through an index -------------------------------------------------------------

@njit(cache=True)
def same_points(ax, ay, aoff, i, bx, by, boff, j):
    """Whether trajectory i of (ax, ay, aoff) and trajectory j of (bx, by, boff) hold the same points,
    value for value (the same set may be passed twice)."""
    if aoff[i + 1] - aoff[i] != boff[j + 1] - boff[j]:
        return False
    for k in range(aoff[i + 1] - aoff[i]):
        if ax[aoff[i] + k] != bx[boff[j] + k] or ay[aoff[i] + k] != by[boff[j] + k]:
            return False
    return True


@njit(cache=True)
def _hashes(xb, yb, offsets):
    """FNV-1a over each trajectory's point bits and its length."""
    n = offsets.size - 1
    out = np.empty(n, np.uint64)
    prime = np.uint64(1099511628211)
    for i in range(n):
        h = np.uint64(14695981039346656037) ^ np.uint64(offsets[i + 1] - offsets[i])
        for k in range(offsets[i], offsets[i + 1]):
            h = (h ^ xb[k]) * prime
            h = (h ^ yb[k]) * prime
        out[i] = h
    return out


@njit(cache=True)
def _representatives(xb, yb, offsets, order, h):
    """For each row, the first row in ``order`` (sorted by hash, then row) with the same points."""
    n = order.size
    rep = np.full(n, -1, np.int64)
    i = 0
    while i < n:
        j = i
        while j < n and h[order[j]] == h[order[i]]:
            j += 1
        for a in range(i, j):
            r = order[a]
            if rep[r] >= 0:
                continue
            rep[r] = r
            for b in range(a + 1, j):
                q = order[b]
                if rep[q] < 0 and same_points(xb, yb, offsets, r, xb, yb, offsets, q):
                    rep[q] = r
        i = j
    return rep


def distinct(t: Trajectories) -> tuple[np.ndarray, np.ndarray]:
    """(rows, group): the smallest row of every distinct point sequence of ``t``, ascending, and
    each row's position among them (rows[group[i]] holds the same points as row i). Hashed, then
    compared point by point, so a hash collision never merges two sequences."""
    xb, yb = np.ascontiguousarray(t.x, np.float64).view(np.uint64), np.ascontiguousarray(t.y, np.float64).view(np.uint64)
    h = _hashes(xb, yb, t.offsets)
    rep = _representatives(xb, yb, t.offsets, np.lexsort((np.arange(h.size), h)), h)
    rows = np.flatnonzero(rep == np.arange(rep.size))
    return rows, np.searchsorted(rows, rep)


def same_walk(targets: Trajectories, pool: Trajectories) -> np.ndarray:
    """For every target, the smallest pool row with the same points (-1 where none): hashed, then
    compared point by point (:func:`distinct`)."""
    _, group = distinct(Trajectories.concat([targets, pool]))
    first = np.full(group.max() + 1 if group.size else 0, len(pool), np.int64)
    np.minimum.at(first, group[len(targets):], np.arange(len(pool)))     # the smallest row of each group
    found = first[group[:len(targets)]]
    return np.where(found < len(pool), found, -1)


def nearest(targets: Trajectories, pool: Trajectories, distance: str = "frechet", leaf: int = 16,
            exclude: np.ndarray | None = None, ties: bool = False, within=np.inf, smallest: bool = True):
    """For every target, its distance to the nearest trajectory of ``pool`` (exact; module docstring).

    The pool's trajectories are searched through a tree over their starts, ends and bounding boxes
    (trip_index.py), whose lower bounds skip every pool trajectory that cannot win or tie, so the
    work follows how many trajectories lie about as near as the nearest, never all pairs; a target
    that the pool holds verbatim (found by hashing first) starts at distance 0. Without
    ``exclude`` the pool's repeated sequences are searched once (:func:`distinct`): a release can
    hold thousands of copies of one short walk, all at one distance; likewise repeated targets are
    searched once, each copy given the answer of its first.

    leaf : trajectories per leaf of the tree (the result does not depend on it).
    exclude : for each target a pool row it may not match (itself, when the pool holds it), or -1.
    ties : also return, per target, every pool row at that distance (a list of arrays).
    within : only pool trajectories at this distance or nearer count (a search that needs no
        farther ones stops there); a target with none gets inf and -1. A number, or one per target
        (a repeated target is searched as far as the farthest of its copies asks).
    smallest : of the rows at the nearest distance, return the smallest (what brute force gives);
        False: the first the search meets, the same distance sooner where many pool trajectories tie
        (a search that needs only the distance).

    Returns (distance, row) arrays (inf and -1 for an empty pool; of tied rows the smallest, or one
    of them), and the ties when asked.
    """
    within = np.broadcast_to(np.asarray(within, np.float64), (len(targets),))
    if exclude is None and len(targets) > 1:
        # repeated targets (a common trip, released or real, many times over) are searched once, as
        # far as the farthest of them asks
        t_rows, t_group = distinct(targets)
        if t_rows.size < len(targets):
            reach = np.full(t_rows.size, -np.inf)
            np.maximum.at(reach, t_group, within)
            found = nearest(targets.subset(t_rows), pool, distance, leaf, None, ties, reach, smallest)
            out = (found[0][t_group], found[1][t_group])
            return (*out, [found[2][g] for g in t_group]) if ties else out
    if exclude is None and len(pool):
        rows, group = distinct(pool)
        if rows.size < len(pool):
            found = _nearest(targets, pool.subset(rows), distance, leaf, None, ties, within, smallest)
            best, row = found[0], np.where(found[1] >= 0, rows[np.maximum(found[1], 0)], -1)
            if not ties:
                return best, row
            order = np.argsort(group, kind="stable")
            bounds = np.r_[0, np.cumsum(np.bincount(group, minlength=rows.size))]
            tied = [np.sort(np.concatenate([order[bounds[u]:bounds[u + 1]] for u in t])) if t.size else t
                    for t in found[2]]
            return best, row, tied
    return _nearest(targets, pool, distance, leaf, exclude, ties, within, smallest)


def nearest_each(groups, pool: Trajectories, distance: str = "frechet", ties: bool = False,
                 smallest: bool = True) -> list:
    """:func:`nearest` of several target sets against one pool in one search (one index over the
    pool, one pass of :func:`distinct`): its result for each set, in order. Each target's answer
    depends on the pool alone, so it is the one a search of its own set gives."""
    groups = list(groups)
    cuts = np.cumsum([len(g) for g in groups])[:-1]
    found = nearest(Trajectories.concat(groups), pool, distance, ties=ties, smallest=smallest)
    split = [np.split(a, cuts) for a in found[:2]]
    if not ties:
        return list(zip(*split))
    tied = [found[2][lo:hi] for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(found[2])])]
    return list(zip(*split, tied))


def _nearest(targets: Trajectories, pool: Trajectories, distance: str, leaf: int, exclude, ties: bool,
             within=np.inf, smallest: bool = True):
    """:func:`nearest` on the pool as given."""
    n, m = len(targets), len(pool)
    if n == 0 or m == 0:
        best, row = np.full(n, np.inf), np.full(n, -1, np.int64)
        return (best, row, [np.zeros(0, np.int64) for _ in range(n)]) if ties else (best, row)
    exclude = np.full(n, -1, np.int64) if exclude is None else np.asarray(exclude, np.int64)
    known = same_walk(targets, pool)
    known[known == exclude] = -1
    t_features, p_features = features(targets.x, targets.y, targets.offsets), features(pool.x, pool.y, pool.offsets)
    best, row = search(targets.x, targets.y, targets.offsets, t_features, pool.x, pool.y, pool.offsets, p_features,
                       build(p_features, leaf), DISTANCES.index(distance), exclude,
                       np.array(np.broadcast_to(within, (n,)), np.float64), known, smallest or ties)
    if not ties:
        return best, row
    from scipy.spatial import cKDTree

    # every row tied with the best lies within sqrt(2) x it by (start, end): those scored in one call
    tree, q = cKDTree(pool.ends()), targets.ends()
    tied = [np.zeros(0, np.int64) for _ in range(n)]
    found = np.flatnonzero(np.isfinite(best))
    cands = [np.asarray(c, np.int64) for c in tree.query_ball_point(q[found], best[found] * SQRT2 * (1 + 1e-9) + 1e-9)]
    left = np.repeat(found, [c.size for c in cands])
    right = np.concatenate(cands) if cands else np.zeros(0, np.int64)
    keep = (right != exclude[left]) & (pair_distances(targets, pool, left, right, distance) <= best[left] * (1 + 1e-12))
    left, right = left[keep], right[keep]
    for t, rows in zip(found, np.split(right, np.searchsorted(left, found[1:]))):
        tied[t] = np.sort(rows)
    return best, row, tied


# -- targets and the summary -------------------------------------------------------------------------------

def balanced(n_members: int, n_non_members: int, limit: int | None, seed) -> tuple[np.ndarray, np.ndarray]:
    """Equal numbers of member and non-member rows, a seeded sample of each (sorted): min(n_members,
    n_non_members, limit) of both, so that no score depends on the split's sizes. ``seed``: an int
    or a SeedSequence (each attack draws from its own stream)."""
    n = min(n_members, n_non_members) if limit is None else min(n_members, n_non_members, int(limit))
    rng = np.random.default_rng(seed)
    return (np.sort(rng.choice(n_members, n, replace=False)), np.sort(rng.choice(n_non_members, n, replace=False)))


def roc(member_scores: np.ndarray, non_member_scores: np.ndarray) -> dict:
    """Members are called at score <= threshold (a smaller distance). TPR and FPR at every cut
    between distinct scores, the AUC (ties counted half), the best advantage and where."""
    s = np.r_[member_scores, non_member_scores]
    y = np.r_[np.ones(member_scores.size, bool), np.zeros(non_member_scores.size, bool)]
    order = np.argsort(s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[s[1:] != s[:-1], True]
    tp, fp = np.r_[0, np.cumsum(y)[last]], np.r_[0, np.cumsum(~y)[last]]
    pos, neg = max(int(y.sum()), 1), max(int((~y).sum()), 1)
    tpr, fpr = tp / pos, fp / neg
    auc = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))
    adv = tpr - fpr
    best = int(np.argmax(adv))
    thresholds = np.r_[-np.inf, s[last]]
    return {"tpr": tpr, "fpr": fpr, "auc": auc, "advantage": float(adv[best]), "threshold": float(thresholds[best]),
            "thresholds": thresholds, "tp": tp, "fp": fp, "positives": pos, "negatives": neg}


def held_out_epsilon(member_scores: np.ndarray, non_member_scores: np.ndarray, seed: int,
                     max_fpr: float | None = None) -> float:
    """The empirical epsilon lower bound at 95% (privacy/empirical.py: Clopper-Pearson bounds on
    TPR / FPR, or TNR / FNR), with the threshold and the direction chosen on one half of the
    targets and the bound computed on the other half, so that the confidence holds for the number
    reported (the largest bound over every threshold of the same targets would overstate it).

    max_fpr : choose only among thresholds whose false-positive rate on the first half is at most
        this, in the direction members-closer (TPR / FPR): the low-FPR region where an attack on
        the most exposed records shows (Carlini et al., S&P 2022, §IV). None: every threshold,
        both directions. Its largest possible value is :func:`epsilon_ceiling`.
    """
    rng = np.random.default_rng(seed)
    m_half = rng.permutation(member_scores.size) < member_scores.size // 2
    n_half = rng.permutation(non_member_scores.size) < non_member_scores.size // 2
    first = roc(member_scores[m_half], non_member_scores[n_half])
    if first["tp"].size < 2:
        return 0.0
    bounds = _bounds(first["tp"], first["positives"] - first["tp"], first["fp"], first["negatives"] - first["fp"])
    bounds[~np.isfinite(bounds)] = -np.inf
    if max_fpr is not None:
        bounds[1] = -np.inf
        bounds[0, first["fpr"] > max_fpr] = -np.inf
    direction, cut = np.unravel_index(int(np.argmax(bounds)), bounds.shape)
    threshold = first["thresholds"][cut]
    ms, ns = member_scores[~m_half], non_member_scores[~n_half]
    tp, fp = int((ms <= threshold).sum()), int((ns <= threshold).sum())
    held = _bounds(np.array([tp]), np.array([ms.size - tp]), np.array([fp]), np.array([ns.size - fp]))[direction, 0]
    return float(max(held, 0.0)) if np.isfinite(held) else 0.0


def epsilon_ceiling(n_members: int, n_non_members: int) -> float:
    """The largest bound :func:`held_out_epsilon` can return for these numbers of targets: every
    held-out member called and no held-out non-member, ln(q_m / (1 - q_n)) with q = 0.025^(1 / n)
    for the n targets of each held-out half (the Clopper-Pearson bounds at 0 and n of n). A release
    that is not epsilon-DP for an epsilon above it cannot be shown so at these sizes."""
    m, n = n_members - n_members // 2, n_non_members - n_non_members // 2
    if m < 1 or n < 1:
        return 0.0
    return float(np.log(0.025 ** (1 / m) / (1 - 0.025 ** (1 / n))))


def tpr_at_fpr(member_scores: np.ndarray, non_member_scores: np.ndarray, fpr: float) -> float:
    """The largest true-positive rate among the thresholds whose false-positive rate is at most
    ``fpr`` (members called at score <= threshold; tied scores are called together, never split):
    Carlini et al.'s measure of an attack on the most exposed records (S&P 2022, §III-B)."""
    r = roc(member_scores, non_member_scores)
    return float(r["tpr"][r["fpr"] <= fpr].max())


def _bounds(tp, fn, fp, tn) -> np.ndarray:
    """(2, cuts): log(TPR_low / FPR_high) and log(TNR_low / FNR_high) at 95%."""
    tpr_low, _ = clopper_pearson(tp, tp + fn)
    _, fpr_high = clopper_pearson(fp, fp + tn)
    tnr_low, _ = clopper_pearson(tn, fp + tn)
    _, fnr_high = clopper_pearson(fn, tp + fn)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.vstack([np.log(tpr_low / fpr_high), np.log(tnr_low / fnr_high)])


# -- a uniform grid over the public space -------------------------------------------------------------------

def grid_cells(x: np.ndarray, y: np.ndarray, box, g: int) -> np.ndarray:
    """The cell of every point on a g x g grid over ``box`` (row-major from the lower left; points on
    the far edges in the last cell)."""
    cx = np.clip(((x - box[0]) / max(box[2] - box[0], 1e-9) * g).astype(np.int64), 0, g - 1)
    cy = np.clip(((y - box[1]) / max(box[3] - box[1], 1e-9) * g).astype(np.int64), 0, g - 1)
    return cy * g + cx


def trips_through(cells: np.ndarray, offsets: np.ndarray, n_cells: int) -> np.ndarray:
    """How many trajectories pass through each cell (each trajectory counted once per cell)."""
    owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    pairs = np.unique(owner * n_cells + cells)
    return np.bincount(pairs % n_cells, minlength=n_cells)


def nth_densest(counts: np.ndarray, n: int) -> int:
    """The n-th densest cell (1-based; ties by the smaller cell; the last non-empty one when fewer
    cells are visited)."""
    order = np.lexsort((np.arange(counts.size), -counts))
    visited = int((counts > 0).sum())
    return int(order[min(n, max(visited, 1)) - 1])


# -- what the groups share -------------------------------------------------------------------------------------

def real_sets(ctx) -> tuple[Trajectories, Trajectories]:
    """The training and test sets of an evaluation as trajectories, made on first use and kept in
    the evaluation's cache: what the attacks keep across evaluations (Context.reference) is what
    they derive from them (targets, zones, baselines), which is small, while these are as large as
    the sets and quicker to remake than to store. With a warm store they are never made."""
    if "real_trajectories" not in ctx.cache:
        ctx.cache["real_trajectories"] = (trajectories(ctx.train), trajectories(ctx.test))
    return ctx.cache["real_trajectories"]


def released(ctx) -> Trajectories:
    """The synthetic set of an evaluation as trajectories (once per evaluation)."""
    if "trajectories" not in ctx.cache:
        ctx.cache["trajectories"] = trajectories(ctx.synthetic)
    return ctx.cache["trajectories"]


def applies(name: str, minimum: int = 4):
    """A group's ``skip``: silent when the attack was not asked for; with a reason when the real sets
    are too small to draw members and non-members from."""
    def skip(ctx):
        if name not in ctx.option("attacks", ()):
            return ""
        if ctx.train.n_traces < minimum or ctx.test.n_traces < minimum:
            return (f"the attack draws members from the training set and non-members from the test set; each "
                    f"needs at least {minimum} trajectories")
        return None
    return skip
