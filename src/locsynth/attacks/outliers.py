"""Outlier leakage (AdaTrace, Gursoy et al., CCS 2018, §3 and §5.2, attack 3; the authors'
Main.generateAttackResilientTrajectories runs it as a defence on trip starts, ends and lengths).

Trajectories that start far from the others are the easiest to single out: a synthetic trajectory
that reproduces one points at the person behind it. The outliers are scored as the paper does: a
trajectory's score is the mean distance of its start to the ``neighbours`` (50) nearest starts of
its set, and the ``count`` (200) highest scores are the outliers. An outlier leaks when a
synthetic trajectory lies within the paper's thresholds of its start and path: the nearest
synthetic trajectory by discrete Frechet distance (trip_geometry.py) lies within beta x the
diagonal of the public box, beta = 0.05 (the paper's plausible-deniability beta), which places its
start within beta x diagonal of the outlier's start, inside the paper's closeness threshold of
0.1 x diagonal.

Members against non-members: the outliers of seeded samples of the training and the test set, both
of min(n_train, n_test, ``pool``) trajectories (outlier scores depend on a set's density, so the
two pools are of equal size; ``pool`` = 20,000 keeps the scoring at a city's size to that of the
200 cabs' test set, 18,117 trips, where it takes them all). Reported: the share of each that leaks and the difference,
``outlier_advantage``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.groups import GroupResult, Metric, MetricGroup, Option, count, limit, row
from ..core.validation import in_range
from .trip_geometry import Trajectories, applies, balanced, diagonal, nearest_each, public_box, real_sets, released


@dataclass(frozen=True)
class Outliers:
    members: float | None
    non_members: float | None
    outliers: int
    threshold_m: float
    member_distances: np.ndarray
    non_member_distances: np.ndarray

    @property
    def advantage(self) -> float | None:
        return None if self.members is None else self.members - self.non_members


@dataclass(frozen=True)
class OutlierTargets:
    members: Trajectories
    non_members: Trajectories


def outlier_rows(t: Trajectories, count: int = 200, neighbours: int = 50) -> np.ndarray:
    """The ``count`` trajectories of ``t`` whose starts have the largest mean distance to their
    ``neighbours`` nearest other starts (ties by the smaller row)."""
    from scipy.spatial import cKDTree

    n = len(t)
    if n < 2:
        return np.arange(n)
    starts = t.ends()[:, :2]
    k = min(neighbours, n - 1)
    d, _ = cKDTree(starts).query(starts, k=k + 1)
    score = np.asarray(d).reshape(n, k + 1)[:, 1:].mean(axis=1)
    order = np.lexsort((np.arange(n), -score))
    return np.sort(order[:min(count, n)])


def choose_targets(train: Trajectories, test: Trajectories, count: int = 200, neighbours: int = 50,
                   seed: int = 0, pool: int | None = 20_000) -> OutlierTargets:
    """The outliers of equal-sized seeded samples of the training and test sets (at most ``pool``
    trajectories each; None: min(n_train, n_test))."""
    pools = balanced(len(train), len(test), pool, np.random.SeedSequence(seed, spawn_key=(37, 5)))
    chosen = [t.subset(rows) for t, rows in zip((train, test), pools)]
    return OutlierTargets(*(c.subset(outlier_rows(c, count, neighbours)) for c in chosen))


def outliers(targets: OutlierTargets, synthetic: Trajectories, threshold_m: float) -> Outliers:
    """The attack against ``synthetic`` (module docstring); ``threshold_m`` = beta x diagonal."""
    (dm, _), (dn, _) = nearest_each((targets.members, targets.non_members), synthetic, smallest=False)
    n = len(targets.members)
    if n == 0:
        return Outliers(None, None, 0, threshold_m, dm, dn)
    return Outliers(float((dm <= threshold_m).mean()), float((dn <= threshold_m).mean()), n, threshold_m, dm, dn)


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    box = public_box(ctx.test.space)
    n, k, beta, pool, seed = (ctx.option(name) for name in ("outlier_count", "outlier_neighbours", "outlier_beta",
                                                              "outlier_pool", "seed"))
    targets = ctx.reference(("outliers", n, k, pool, seed), lambda: choose_targets(*real_sets(ctx), n, k, seed, pool))
    threshold = beta * diagonal(box)
    result = outliers(targets, released(ctx), threshold)
    base = ctx.reference(("outliers", n, k, pool, seed, beta, "training"),
                         lambda: outliers(targets, real_sets(ctx)[0], threshold))
    metrics = {"outlier_advantage": row(result.advantage, base.advantage, 0.0),
               "outlier_members": row(result.members, base.members, None),
               "outlier_non_members": row(result.non_members, base.non_members, None)}
    details = {"outliers": result.outliers, "threshold_m": threshold, "members": result.members,
               "non_members": result.non_members,
               "leaked": [int((d <= threshold).sum()) for d in (result.member_distances, result.non_member_distances)]}
    return GroupResult(metrics, {"outliers": details},
                       {"attack_samples": {"outliers": {"members": result.outliers, "non_members": result.outliers}}})


GROUP = MetricGroup(
    "outliers",
    (Metric("outlier_advantage", "Outlier leakage advantage", "outlier leakage (AdaTrace): share of the training set's "
            "{outlier_count} most isolated trip starts whose path a synthetic trajectory reproduces (discrete Frechet "
            "within {outlier_beta:g} x the box diagonal) minus the same share for the test set's", range=(-1.0, 1.0),
            short="outliers"),
     Metric("outlier_members", "Outliers: members leaked", "share of the training set's outliers reproduced",
            range=(0.0, 1.0), featured=False),
     Metric("outlier_non_members", "Outliers: non-members leaked", "share of the test set's outliers reproduced "
            "(the synthesizer never saw them)", range=(0.0, 1.0), featured=False)),
    _compute, applies("outliers"), step="outlier leakage", kind="attack",
    options=(count("outlier_count", 200, "Outlier leakage: how many outliers of each set (AdaTrace: 200)."),
             count("outlier_neighbours", 50, "Outlier leakage: a start's score is its mean distance to this many "
                   "nearest starts (AdaTrace: 50)."),
             limit("outlier_pool", 20_000, "Outlier leakage: the outliers of a seeded sample of this many "
                   "trajectories of each set (none: min(n_train, n_test))."),
             Option("outlier_beta", 0.05, "Outlier leakage: an outlier leaks when a synthetic trajectory lies within "
                    "this share of the public box's diagonal (AdaTrace's beta: 0.05).",
                    lambda v: in_range(0.0, 1.0)(v, "outlier_beta"))),
    fields=lambda options, space_kind: options)
