"""Near-copies of training trajectories in a release (issue 53): the copy check (copies.py) with a
distance that tolerates each point being moved, so that a training trip jittered point by point
(each point displaced by a fraction of a cell, snapped back to the grid or not) is found as the
verbatim and shifted copies are.

The sets and the test are the copy check's: k training parts and a hold-out of equal size m
(copies.calibration: with the same seed, the same sets), each distinct synthetic walk y's distance
d_j(y) to the nearest trajectory of each set j, the winner the set alone nearest, and the one-sided
p-value of the hold-out's share of the evidence against 1 / (k + 1), the share of every set under a
release that does not depend on which trips were trained on (copies.copy_check), a real trajectory
that wins for several walks counted once. The evidence of a walk is a count, not the copy check's
log ratio:

    w(y) = 1 if d_(2) > d_(1) + h else 0,   h = 1 m,

so the statistic is the number of decided walks the hold-out wins, binomial (decided, 1 / (k + 1))
under the null. On grid cells an honest walk that matches one real trip exactly and none of the
other sets' has a log ratio of ln(R + 1), about 7, and the few such walks of an honest release would
outweigh hundreds of jittered copies at ln((R + 1) / (r + 1)) each; counted, each decided walk
weighs one. Distances within h of each other are a tie (the cabs' cells are 499.994 m wide and
500.000 m high: a walk one cell east of one trip and one cell north of another is no evidence).

The distance is the discrete Frechet distance on the points (trip_geometry.py), capped at the reach
R = ``REACH_CELLS`` x the space's spacing (the median distance from a location to its nearest other,
500 m on the cabs' cells): d_j(y) = min(F(y, nearest of set j), R). Frechet rather than DTW because
its value is the largest displacement a coupling needs, whatever the lengths: a copy whose every
point moved by at most r lies within r of its original (within one cell once snapped back to cells),
however long the trip, while DTW adds the displacements up, so a long jittered copy reads farther
from its original than a short honest walk from an unrelated trip (measured in docs/attacks.md: DTW
flagged fewer mutants). The cap keeps what is near nothing out of the evidence (a walk farther than
R from every set ties at R: it copies nothing) and bounds the search, each set searched only within
R (trip_index.py), so the check costs seconds on the cabs.

The sets are exchangeable under the null whatever the distance, cap or evidence, so the p-value
holds for any of them; those choose which departures from the null the check has power against.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..metrics.groups import Metric, MetricGroup
from ..metrics.standard import planar
from .copies import CopyCheck, calibration, copy_check, group_result
from .trip_geometry import Trajectories, applies, distinct, nearest, real_sets, released

#: the reach, in the space's spacings: distances beyond it read as it (module docstring)
REACH_CELLS = 2.0
#: the trajectory distance (module docstring: Frechet, not DTW)
DISTANCE = "frechet"
#: metres within which two distances tie
H_M = 1.0


def nearer(nearest: np.ndarray, second: np.ndarray) -> np.ndarray:
    """w: 1 where the nearest set is nearer than the second by more than h, else 0 (module docstring)."""
    return (second > nearest + H_M).astype(np.float64)


def spacing(space) -> float:
    """The median distance in metres from a location of ``space`` to its nearest other location (a
    grid's cell size); 1 m for a space of one location. Public: it reads the space, not the data."""
    from scipy.spatial import cKDTree

    x, y = planar(space)
    if x.size < 2:
        return 1.0
    d, _ = cKDTree(np.column_stack([x, y])).query(np.column_stack([x, y]), k=2)
    return float(np.median(d[:, 1]))


def set_distances(synthetic: Trajectories, train: Trajectories, test: Trajectories, cal, reach: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(distances, rows), both (walks, k + 1): each distinct synthetic walk's distance to the nearest
    trajectory of each training part, then of the hold-out, capped at ``reach`` (module docstring),
    and that trajectory's row among the k + 1 sets one after another (-1 where capped; of tied
    trajectories the smallest row, as brute force gives it).

    What the check reads is exact: the nearest set, its distance and row, and whether another set is
    within h of it. A distance more than h beyond the nearest may read as the reach: each set is
    searched only within h of the nearest distance found so far (0 for a walk that some set holds
    verbatim, found by hashing first), which is where the training set itself, the check's baseline,
    spends nothing."""
    rows, _ = distinct(synthetic)
    walks = synthetic.subset(rows)
    sets = [train.subset(p) for p in cal.parts] + [test.subset(cal.hold_out)]
    distances = np.full((len(walks), len(sets)), float(reach))
    found = np.full((len(walks), len(sets)), -1, np.int64)
    _, group = distinct(Trajectories.concat([walks, *sets]))
    nearest_so_far = np.where(np.isin(group[:len(walks)], group[len(walks):]), 0.0, np.inf)
    for j, real in enumerate(sets):
        d, r = nearest(walks, real, DISTANCE, within=np.minimum(reach, nearest_so_far + H_M))
        near = r >= 0
        distances[near, j], found[near, j] = d[near], r[near] + j * cal.size
        nearest_so_far = np.minimum(nearest_so_far, d)
    return distances, found


def check_release(synthetic: Trajectories, train: Trajectories, test: Trajectories, reach: float,
                  seed: int = 0) -> CopyCheck:
    """The near-copy check of ``synthetic`` against the seeded calibration of the real sets (the copy
    check's), distances capped at ``reach`` metres."""
    cal = calibration(len(train), len(test), seed)
    return replace(copy_check(*set_distances(synthetic, train, test, cal, reach), evidence=nearer),
                   set_size=cal.size)


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    seed = ctx.option("seed", 0)
    train, test = real_sets(ctx)
    reach = REACH_CELLS * spacing(ctx.train.space)
    result = check_release(released(ctx), train, test, reach, seed)
    base = ctx.reference(("near_copies", seed), lambda: check_release(train, train, test, reach, seed))
    return group_result("near_copies", ("near_copy_score", "near_copy_p_value"), result, base, reach_m=reach,
                        distance=DISTANCE)


GROUP = MetricGroup(
    "near_copies",
    (Metric("near_copy_score", "Near-copy check score", "training trajectories copied with every point moved "
            "by up to about a cell (jittered, snapped back or not): the copy check with the discrete Frechet "
            "distance, capped at two cells, instead of exact shapes: how much less often than chance a hold-out "
            "trajectory is the nearest real one of a synthetic walk, among the walks one set is nearest to (0 for "
            "a release independent of its training trips, 1 when every such walk is a training trip's)",
            range=(None, 1.0), short="near copies"),
     Metric("near_copy_p_value", "Near-copy check p-value", "one-sided p-value of the same check (flagged below "
            "0.01): how likely a release independent of which trips were trained on scores as high or higher",
            range=(0.0, 1.0), goal="higher", short="near copies p")),
    _compute, applies("near_copies"), step="near-copies of training trajectories", kind="attack")
