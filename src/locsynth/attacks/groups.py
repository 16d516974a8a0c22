"""The attacks as metric groups of ``evaluate`` (metrics/groups.py): re-identification and
membership inference (paper 001 §4.3, Appendix D), each against the training traces released as
they are and a random guess."""

from __future__ import annotations

import numpy as np

from ..metrics.groups import Figure, GroupResult, Metric, MetricGroup, flag, limit, row
from .membership import membership_inference
from .reidentify import reidentify


def released_as_is(traces):
    """The training traces released as they are: each trace is its own source (the 'training' baseline)."""
    from dataclasses import replace

    users = traces.users.assign(source=np.arange(traces.n_traces, dtype=np.int32), trace_no=np.int32(0))
    return replace(traces, users=users)


def _reidentification(ctx) -> GroupResult:
    train, synthetic = ctx.train, ctx.synthetic
    limit, seed = ctx.option("reid_max_traces", 20_000), ctx.option("seed", 0)
    if not ("source" in synthetic.users and (synthetic.users["source"] >= 0).any()):
        return GroupResult({"reid_rate": row(None, None, None)}, meta={"options": {"reid_max_traces": limit}})
    reid = reidentify(train, synthetic, max_traces=limit, seed=seed, client=ctx.client)
    reid_train = reidentify(train, released_as_is(train), max_traces=limit, seed=seed, client=ctx.client)
    details = {"rate": reid.rate, "interval": reid.interval, "traces": int(reid.rows.size)}
    return GroupResult({"reid_rate": row(reid.rate, reid_train.rate, 1.0 / train.n_traces)}, {"reid": details},
                       {"options": {"reid_max_traces": limit},
                        "attack_samples": {"reid": {"traces": details["traces"], "interval": details["interval"]}}})


def _membership(ctx) -> GroupResult:
    train, test, synthetic, client = ctx.train, ctx.test, ctx.synthetic, ctx.client
    limit, seed, per = ctx.option("mia_max_candidates", 10_000), ctx.option("seed", 0), \
        ctx.option("mia_per_trace_number", False)
    mia = membership_inference(train, test, synthetic, per_trace_number=per, max_candidates=limit, seed=seed,
                               client=client)
    mia_train = membership_inference(train, test, released_as_is(train), max_candidates=limit, seed=seed,
                                     client=client)
    metrics = {"mia_advantage": row(mia.advantage, mia_train.advantage, 0.0),
               "mia_accuracy": row(mia.accuracy, mia_train.accuracy, 0.5),
               "mia_epsilon_lower_bound": row(mia.epsilon_lower_bound, mia_train.epsilon_lower_bound, 0.0)}
    details = {"tpr": mia.tpr, "fpr": mia.fpr, "advantage": mia.advantage, "threshold": mia.threshold,
               "candidates": int(mia.candidates.size)}
    return GroupResult(metrics, {"mia": details},
                       {"options": {"mia_per_trace_number": per, "mia_max_candidates": limit},
                        "attack_samples": {"mia": {"candidates": details["candidates"]}}})


def _skip(name: str, reason: str):
    def skip(ctx):
        if name not in ctx.option("attacks", ()):
            return ""
        return reason if ctx.trips else None
    return skip


def _roc_figure(details: dict, meta: dict) -> bytes:
    from ..metrics.figures import roc_png

    return roc_png(details["mia"])


REIDENTIFICATION = MetricGroup(
    "reid",
    (Metric("reid_rate", "Re-identification rate", "share of synthetic traces whose source training user the "
            "attacker names correctly", range=(0.0, 1.0), short="re-id"),),
    _reidentification, _skip("reid", (
        "re-identification names the training user whose transition matrix best explains a synthetic trace (paper "
        "001 §4.3); here every trip is its own user, trained on its few moves, and a trip synthesizer keeps no "
        "source user; paper 004 reports no attack")), step="re-identification", kind="attack",
    options=(limit("reid_max_traces", 20_000, "Re-identification: past this many synthetic traces, a seeded sample "
                    "(none: always all)."),))

MEMBERSHIP = MetricGroup(
    "mia",
    (Metric("mia_advantage", "MIA advantage", "membership inference: largest true-positive rate minus "
            "false-positive rate over thresholds (0: no better than guessing)", range=(0.0, 1.0), short="MIA adv"),
     Metric("mia_accuracy", "MIA accuracy", "membership inference: best accuracy over thresholds (0.5: no better "
            "than guessing)", range=(0.0, 1.0), short="MIA acc"),
     Metric("mia_epsilon_lower_bound", "Empirical epsilon (lower bound)", "the smallest epsilon a differentially "
            "private release would need to allow this attack, at 95% confidence", range=(0.0, None))),
    _membership, _skip("mia", (
        "membership inference (paper 001 §4.3) models each candidate by a transition matrix trained on the "
        "candidate's own traces; one trip of a few cells gives a matrix of a few moves, so the score measures "
        "overlap with popular routes rather than membership; paper 004 reports no attack; the attacks on trajectories "
        "(distance_mia, sniffing, bayesian, outliers) run instead")),
    step="membership inference", kind="attack",
    options=(flag("mia_per_trace_number", False, "Membership inference: decide once per trace number, as the "
                  "authors' script does (the paper decides over all traces)."),
             limit("mia_max_candidates", 10_000, "Membership inference: past this many candidate users, a seeded "
                    "sample (none: always all).")),
    figures=(Figure("Membership inference ROC",
                    "True-positive against false-positive rate of the membership-inference attack over all "
                    "thresholds. The dashed diagonal is a random guess; the red segment marks the largest gap, the "
                    "MIA advantage. A curve close to the diagonal is better for privacy.",
                    "ROC curve of the membership-inference attack", _roc_figure,
                    lambda d, m: bool(d.get("mia") and "tpr" in d["mia"] and "fpr" in d["mia"])),))
