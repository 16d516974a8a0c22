"""Membership inference by trajectory distance: does a real trajectory sit closer to the synthetic
set when it was trained on? (issue 37; the distance-to-closest-record attack of the synthetic-data
literature: TAPAS, Houssiau et al. 2022; the SoK on trajectory generation, PETS 2024, asks for it.)

Targets: m training trajectories (members) and m test trajectories (non-members), seeded samples of
equal size, m = min(``targets``, n_train, n_test / 2), so that no score depends on the split's
sizes. The test trajectories not drawn are the reference set R. For a target x:

    d_S(x) = min over synthetic y of F(x, y),   d_R(x) = min over r in R of F(x, r),
    score(x) = (d_S(x) + h) / (d_R(x) + h),   h = 1 m,

with F the discrete Frechet distance on points in metres (trip_geometry.py). d_R calibrates the
score: a trajectory on a busy route is close to many trajectories, trained on or not; what a
release adds is how much closer the synthetic set brings it than unseen real data does. A ratio
rather than a difference: a trajectory released exactly scores about 0 whatever its
neighbourhood, while realistic trajectories that are merely near (which bring members and
non-members alike closer) keep scores near 1; h keeps a trajectory whose twin lies in both sets
at 1. Members are called at score <= threshold. Reported: the AUC (ties counted half), the best advantage TPR -
FPR over thresholds, and the empirical epsilon lower bound at 95% confidence (Clopper-Pearson, as
the likelihood-ratio attack reports), with the threshold chosen on half of the targets and the
bound computed on the other half (trip_geometry.held_out_epsilon).

The targets are treated as independent trials against one release, as audits of one trained
model do; the strict DP game retrains per trial (privacy/audit.py does that for the mechanisms).
A bound above a method's claimed epsilon still refutes the claim only up to that caveat, and the
note says so where it happens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.groups import Figure, GroupResult, Metric, MetricGroup, limit, row
from .trip_geometry import Trajectories, applies, held_out_epsilon, nearest_each, real_sets, released, roc


#: metres added to both distances of the score, so that 0 / 0 (a trajectory whose twin is in both
#: sets) reads as 1, no evidence
H_M = 1.0


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

    @property
    def targets(self) -> int:
        return int(self.member_scores.size)


@dataclass(frozen=True)
class Targets:
    """The sampled members and non-members, and their distances to the reference set."""

    members: Trajectories
    non_members: Trajectories
    member_reference: np.ndarray
    non_member_reference: np.ndarray


def choose_targets(train: Trajectories, test: Trajectories, targets: int | None, seed: int) -> Targets:
    """Equal seeded samples of members and non-members, and each one's distance to the rest of the
    test set (module docstring)."""
    m = min(len(train), len(test) // 2) if targets is None else min(len(train), len(test) // 2, int(targets))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(37, 1)))
    member_rows = np.sort(rng.choice(len(train), m, replace=False))
    test_order = rng.permutation(len(test))
    non_rows, rest = np.sort(test_order[:m]), np.sort(test_order[m:])
    members, non_members, reference = train.subset(member_rows), test.subset(non_rows), test.subset(rest)
    (to_member, _), (to_non, _) = nearest_each((members, non_members), reference)
    return Targets(members, non_members, to_member, to_non)


def score(to_synthetic: np.ndarray, to_reference: np.ndarray) -> np.ndarray:
    """(d_S + h) / (d_R + h), h = 1 m (module docstring); no synthetic trajectory: every score equal."""
    with np.errstate(invalid="ignore"):
        s = (to_synthetic + H_M) / (to_reference + H_M)
    return np.nan_to_num(s, nan=1e300, posinf=1e300)


def distance_membership(targets: Targets, synthetic: Trajectories, seed: int = 0) -> DistanceMIA:
    """The attack against ``synthetic`` (module docstring)."""
    (to_member, _), (to_non, _) = nearest_each((targets.members, targets.non_members), synthetic)
    member, non = score(to_member, targets.member_reference), score(to_non, targets.non_member_reference)
    summary = roc(member, non)
    return DistanceMIA(member, non, summary["auc"], summary["advantage"], summary["threshold"],
                       held_out_epsilon(member, non, seed), summary["tpr"], summary["fpr"])


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    n, seed = ctx.option("dmia_targets", 1000), ctx.option("seed", 0)
    targets = ctx.reference(("distance_mia", n, seed), lambda: choose_targets(*real_sets(ctx), n, seed))
    result = distance_membership(targets, released(ctx), seed)
    base = ctx.reference(("distance_mia", "training", n, seed),
                         lambda: distance_membership(targets, real_sets(ctx)[0], seed))
    metrics = {"dmia_advantage": row(result.advantage, base.advantage, 0.0),
               "dmia_auc": row(result.auc, base.auc, 0.5),
               "dmia_epsilon_lower_bound": row(result.epsilon_lower_bound, base.epsilon_lower_bound, 0.0)}
    details = {"tpr": result.tpr, "fpr": result.fpr, "advantage": result.advantage, "auc": result.auc,
               "threshold_m": result.threshold, "targets": result.targets}
    return GroupResult(metrics, {"distance_mia": details},
                       {"attack_samples": {"distance_mia": {"members": result.targets, "non_members": result.targets}}})


def _roc(details: dict, meta: dict) -> bytes:
    from ..metrics.figures import roc_png

    return roc_png(details["distance_mia"])


GROUP = MetricGroup(
    "distance_mia",
    (Metric("dmia_advantage", "Distance MIA advantage", "membership inference by trajectory distance (discrete "
            "Frechet, calibrated by the test set): largest true-positive minus false-positive rate over thresholds, "
            "equal numbers of members and non-members (0: no better than guessing)", range=(0.0, 1.0),
            short="dist-MIA"),
     Metric("dmia_auc", "Distance MIA AUC", "area under the ROC curve of the same attack (0.5: guessing)",
            range=(0.0, 1.0), short="dist-MIA AUC"),
     Metric("dmia_epsilon_lower_bound", "Distance MIA epsilon (lower bound)", "the smallest epsilon a "
            "differentially private release would need to allow this attack, at 95% confidence (threshold "
            "chosen on half of the targets, bound on the other half)", range=(0.0, None), short="dist-MIA eps")),
    _compute, applies("distance_mia"), step="membership inference by trajectory distance", kind="attack",
    options=(limit("dmia_targets", 1000, "Distance MIA: members and as many non-members drawn as targets (none: "
                   "every one, up to half the test set)."),),
    figures=(Figure("Membership inference by trajectory distance: ROC",
                    "True-positive against false-positive rate when a real trajectory is called a member because "
                    "the synthetic set holds a trajectory closer to it (discrete Frechet distance) than the unseen "
                    "test trajectories do. The dashed diagonal is a random guess; closer to it is better for "
                    "privacy.", "ROC curve of the distance membership inference", _roc,
                    lambda d, m: bool(d.get("distance_mia", {}).get("tpr") is not None)),))
