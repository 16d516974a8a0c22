"""Membership inference by trajectory distance: does a real trajectory sit closer to the synthetic
set when it was trained on? (issue 37; the distance-to-closest-record attack of the synthetic-data
literature: TAPAS, Houssiau et al. 2022; the SoK on trajectory generation, PETS 2024, asks for it.)

Targets: every training trajectory (members) and every test trajectory (non-members) by default
(issue 48: a release that copies 1 % of its training trips exposes about 700 people, which a
sample of 1,000 targets meets about 10 times); ``targets`` m draws seeded samples of m of each
instead. The reference set R of a target is the test set without the target itself. For a target x:

    d_S(x) = min over synthetic y of F(x, y),   d_R(x) = min over r in R, r != x of F(x, r),
    score(x) = (d_S(x) + h) / (d_R(x) + h),   h = 1 m,

with F the discrete Frechet distance on points in metres (trip_geometry.py). d_R calibrates the
score: a trajectory on a busy route is close to many trajectories, trained on or not; what a
release adds is how much closer the synthetic set brings it than unseen real data does. A common
trip has a twin in the test set (d_R = 0), so an exact synthetic copy of it scores 1, no evidence,
whether the target was trained on or not; a rare one copied exactly scores 1 / (d_R + 1), about
0.002 on 500 m cells. A ratio rather than a difference: realistic trajectories that are merely
near (which bring members and non-members alike closer) keep scores near 1. Every target's
reference holds the same number of unseen trips (the whole test set for a member, all others for a
non-member), so an honest release scores members and non-members alike.

Members are called at score <= threshold. Reported: the AUC (ties counted half), the best advantage
TPR - FPR over thresholds, the TPR at 0.1 % and 1 % FPR (Carlini et al., "Membership Inference
Attacks From First Principles", S&P 2022: an average such as the AUC cannot see a few hundred
exposed people among tens of thousands; the rate at a low false-positive rate can), and the
empirical epsilon lower bound at 95% confidence (Clopper-Pearson, as the likelihood-ratio attack
reports) from the low-FPR region: the threshold chosen among those with FPR <= 1 % on half of the
targets, the bound computed on the other half (trip_geometry.held_out_epsilon). Its ceiling at n
targets per held-out half is ln(q_m / (1 - q_n)), q = 0.025^(1/n) (trip_geometry.epsilon_ceiling):
7.8 on the 200 cabs' full sets, 4.9 at 1,000 targets of each.

The targets are treated as independent trials against one release, as audits of one trained
model do; the strict DP game retrains per trial (privacy/audit.py does that for the mechanisms).
A bound above a method's claimed epsilon still refutes the claim only up to that caveat, and the
report says so where it happens.

A release of the test set itself reads AUC well below 0.5: its non-member targets are in it. That
reverse signal is not a leak of the training data; the bound counts only the members' direction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.groups import Figure, GroupResult, Metric, MetricGroup, limit, row
from .trip_geometry import (Trajectories, applies, distinct, epsilon_ceiling, held_out_epsilon, nearest,
                            nearest_each, real_sets, released, roc, tpr_at_fpr)


#: metres added to both distances of the score, so that 0 / 0 (a trajectory whose twin is in both
#: sets) reads as 1, no evidence
H_M = 1.0
#: the false-positive rates at which the true-positive rate is reported (Carlini et al. 2022)
LOW_FPR = (0.001, 0.01)
#: the bound's threshold is chosen among those with at most this false-positive rate
BOUND_FPR = 0.01
TPR_KEYS = ("dmia_tpr_at_fpr_0001", "dmia_tpr_at_fpr_001")


@dataclass(frozen=True)
class DistanceMIA:
    """scores of the member then the non-member targets, and their summary."""

    member_scores: np.ndarray
    non_member_scores: np.ndarray
    auc: float
    advantage: float
    threshold: float
    epsilon_lower_bound: float
    tpr: np.ndarray
    fpr: np.ndarray
    tpr_at_low_fpr: tuple[float, ...]
    epsilon_ceiling: float

    @property
    def targets(self) -> int:
        return int(self.member_scores.size)

    @property
    def non_member_targets(self) -> int:
        return int(self.non_member_scores.size)


@dataclass(frozen=True)
class Targets:
    """The sampled members and non-members, and their distances to the reference set."""

    members: Trajectories
    non_members: Trajectories
    member_reference: np.ndarray
    non_member_reference: np.ndarray


def choose_targets(train: Trajectories, test: Trajectories, targets: int | None, seed: int) -> Targets:
    """Every member and non-member (``targets`` None) or seeded samples of ``targets`` of each, and
    each one's distance to the test set without itself (module docstring)."""
    if targets is None:
        member_rows, non_rows = np.arange(len(train)), np.arange(len(test))
    else:
        m = min(len(train), len(test), int(targets))
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(37, 1)))
        member_rows = np.sort(rng.choice(len(train), m, replace=False))
        non_rows = np.sort(rng.choice(len(test), m, replace=False))
    members, non_members = train.subset(member_rows), test.subset(non_rows)
    to_member, to_non = reference_distances(members, test, non_rows)
    return Targets(members, non_members, to_member, to_non)


def reference_distances(members: Trajectories, test: Trajectories,
                        non_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d_R of the members (to the whole test set) and of the test rows ``non_rows`` (to the test set
    without themselves). Searched among the test set's distinct walks: a non-member whose walk
    occurs again in the test set is at 0 from its twin; one whose walk is its own is searched with
    that walk excluded."""
    rows, group = distinct(test)
    pool = test.subset(rows)
    own = group[non_rows]
    alone = np.bincount(group, minlength=rows.size)[own] == 1
    to_member, _ = nearest(members, pool, smallest=False)
    to_non, _ = nearest(test.subset(non_rows), pool, exclude=np.where(alone, own, -1), smallest=False)
    return to_member, to_non


def score(to_synthetic: np.ndarray, to_reference: np.ndarray) -> np.ndarray:
    """(d_S + h) / (d_R + h), h = 1 m (module docstring); no synthetic trajectory: every score equal."""
    with np.errstate(invalid="ignore"):
        s = (to_synthetic + H_M) / (to_reference + H_M)
    return np.nan_to_num(s, nan=1e300, posinf=1e300)


def distance_membership(targets: Targets, synthetic: Trajectories, seed: int = 0) -> DistanceMIA:
    """The attack against ``synthetic`` (module docstring)."""
    (to_member, _), (to_non, _) = nearest_each((targets.members, targets.non_members), synthetic, smallest=False)
    member, non = score(to_member, targets.member_reference), score(to_non, targets.non_member_reference)
    summary = roc(member, non)
    return DistanceMIA(member, non, summary["auc"], summary["advantage"], summary["threshold"],
                       held_out_epsilon(member, non, seed, max_fpr=BOUND_FPR), summary["tpr"], summary["fpr"],
                       tuple(tpr_at_fpr(member, non, f) for f in LOW_FPR), epsilon_ceiling(member.size, non.size))


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    n, seed = ctx.option("dmia_targets", None), ctx.option("seed", 0)
    targets = ctx.reference(("distance_mia", "loo", n, seed), lambda: choose_targets(*real_sets(ctx), n, seed))
    result = distance_membership(targets, released(ctx), seed)
    base = ctx.reference(("distance_mia", "loo", "training", n, seed),
                         lambda: distance_membership(targets, real_sets(ctx)[0], seed))
    metrics = {"dmia_advantage": row(result.advantage, base.advantage, 0.0),
               "dmia_auc": row(result.auc, base.auc, 0.5),
               **{key: row(r, b, f)
                  for key, r, b, f in zip(TPR_KEYS, result.tpr_at_low_fpr, base.tpr_at_low_fpr, LOW_FPR)},
               "dmia_epsilon_lower_bound": row(result.epsilon_lower_bound, base.epsilon_lower_bound, 0.0)}
    details = {"tpr": result.tpr, "fpr": result.fpr, "advantage": result.advantage, "auc": result.auc,
               "threshold_m": result.threshold, "targets": result.targets,
               "non_member_targets": result.non_member_targets, "epsilon_ceiling": result.epsilon_ceiling,
               "tpr_at_low_fpr": dict(zip(map(str, LOW_FPR), result.tpr_at_low_fpr))}
    return GroupResult(metrics, {"distance_mia": details},
                       {"attack_samples": {"distance_mia": {"members": result.targets,
                                                            "non_members": result.non_member_targets}}})


def _roc(details: dict, meta: dict) -> bytes:
    from ..metrics.figures import roc_png

    return roc_png(details["distance_mia"])


GROUP = MetricGroup(
    "distance_mia",
    (Metric("dmia_advantage", "Distance MIA advantage", "membership inference by trajectory distance (discrete "
            "Frechet, calibrated by the test set): largest true-positive minus false-positive rate over thresholds, "
            "every training trajectory against every test trajectory by default (0: no better than guessing)",
            range=(0.0, 1.0), short="dist-MIA"),
     Metric("dmia_auc", "Distance MIA AUC", "area under the ROC curve of the same attack (0.5: guessing; well below "
            "0.5: the release holds the test trajectories, a reverse signal, not a leak of the training data)",
            range=(0.0, 1.0), short="dist-MIA AUC"),
     Metric(TPR_KEYS[0], "Distance MIA TPR at 0.1% FPR", "share of the members the same attack calls at a threshold "
            "that calls at most 0.1% of the non-members (Carlini et al. 2022; 0.001: guessing): the most exposed "
            "people, whom an average hides", range=(0.0, 1.0), short="dist-MIA TPR@0.1%"),
     Metric(TPR_KEYS[1], "Distance MIA TPR at 1% FPR", "the same at at most 1% of the non-members called "
            "(0.01: guessing)", range=(0.0, 1.0), short="dist-MIA TPR@1%"),
     Metric("dmia_epsilon_lower_bound", "Distance MIA epsilon (lower bound)", "the smallest epsilon a "
            "differentially private release would need to allow this attack, at 95% confidence (threshold "
            "chosen among those calling at most 1% of the non-members on half of the targets, bound on the other "
            "half; targets are trials against one release; at most ln(q/(1-q)), q = 0.025^(1/n) for n targets "
            "per half: 7.8 on the 200 cabs, 4.9 at 1,000 targets)", range=(0.0, None), short="dist-MIA eps")),
    _compute, applies("distance_mia"), step="membership inference by trajectory distance", kind="attack",
    options=(limit("dmia_targets", None, "Distance MIA: members and non-members drawn as targets, as many of each "
                   "(none, the default: every training and every test trajectory)."),),
    figures=(Figure("Membership inference by trajectory distance: ROC",
                    "True-positive against false-positive rate when a real trajectory is called a member because "
                    "the synthetic set holds a trajectory closer to it (discrete Frechet distance) than the unseen "
                    "test trajectories do. The dashed diagonal is a random guess; closer to it is better for "
                    "privacy.", "ROC curve of the distance membership inference", _roc,
                    lambda d, m: bool(d.get("distance_mia", {}).get("tpr") is not None)),))
