"""``evaluate`` of sets larger than memory: partitioned sets (data/partitioned.py), whose every trip is
counted where the metric is a count and a stated uniform sample is scored where it is not (issue 56).

- The field's standard suite (its ``adatrace`` and ``corrected`` flavours: densities, trips,
  lengths, diameters, patterns, coverage, hotspots and the range queries' answers) over every trip
  of every set, from sums over partitions (metrics/standard_counts.py): the values equal those of
  the sets whole.
- Every other group (paper 004's trip metrics, the trips' times, the attacks) on a uniform sample
  of ``sample_trips`` trips of each set, without replacement, seeded by the evaluation's ``seed``
  (data/chunks.sample_traces): the same sample whatever the partitions and the workers.

The report says which metrics saw every trip and which a sample (``meta['by_partitions']``), the
sample's size against each set's, and each sampled metric's error estimated from two halves of the
sample, scored apart: half their difference, which estimates the standard deviation of the value
on the whole sample (each half's has sqrt(2) times it, their difference twice it) from one pair;
the bias a small sample gives some metrics (a divergence of two finite samples is above 0 even for
one distribution) is not in it.
"""

from __future__ import annotations

import time

import numpy as np

from ..data.chunks import sample_traces
from ..data.traces import TraceSet
from ..metrics.standard import KEYS, Settings, group_result, jsd_base
from ..metrics.standard_counts import SUMMED, standard_by_chunks
from . import suite
from .evaluate import Report, evaluate

#: trips of each set scored in the sampled groups, by default: the Porto set's size was evaluated in
#: about two minutes on 2 cores (docs/scale.md); a fifth of it keeps an evaluation at scale short
SAMPLE_TRIPS = 200_000


def evaluate_partitioned(train, test, synthetic, *, sample_trips: int = SAMPLE_TRIPS, sample_error: bool = True,
                         groups=None, options: dict | None = None, attacks=None, progress=None, client=None,
                         **named) -> Report:
    """:func:`locsynth.evaluation.evaluate.evaluate` of ``train``, ``test`` and ``synthetic``, any of
    them partitioned (module docstring): the standard suite over every trip, the other groups on a
    uniform sample of ``sample_trips`` trips of each set, with the sample's error when
    ``sample_error`` (two more evaluations of half the sample's size). ``client`` counts and
    samples the partitions on its cluster, and the attacks score their chunks there."""
    settings = suite.check_options({**(options or {}), **named})
    seed = int(settings["seed"])
    sets = {"train": train, "test": test, "synthetic": synthetic}
    sampled = {name: sample_traces(ts, sample_trips, seed, client, stream=k) for k, (name, ts) in enumerate(sets.items())}
    flavour = settings.get("standard_flavour", "adatrace")
    # the standard suite is counted over every trip below: the sample does not score it first
    summed = flavour in SUMMED and settings.get("standard", True) and (groups is None or "standard" in groups)
    report = evaluate(sampled["train"], sampled["test"], sampled["synthetic"], groups=groups,
                      options={**settings, "standard": False} if summed else settings, attacks=attacks,
                      progress=progress, client=client)
    every = []
    if summed:
        every = list(KEYS)
        standard = Settings(flavour=flavour, jsd_base=jsd_base(settings["standard_jsd_base"]), seed=seed)
        clock = time.perf_counter()
        exact, located = standard_by_chunks(test, {"synthetic": synthetic, "training": train}, standard, client)
        report.meta["seconds"]["standard"] = round(time.perf_counter() - clock, 4)
        counted = group_result(exact["synthetic"], exact["training"], standard,
                               {name: located["real"] / located[name] for name in ("synthetic", "training")})
        order = [key for group in suite.groups() for key in group.keys]
        report.metrics = dict(sorted({**report.metrics, **counted.metrics}.items(),
                                     key=lambda item: order.index(item[0]) if item[0] in order else len(order)))
        report.meta["standard"] = counted.meta["standard"]
        report.meta["options"].update(counted.meta["options"])
    totals = {name: {"traces": int(ts.n_traces), "events": int(ts.n_events)} for name, ts in sets.items()}
    sample = {"trips": {name: ts.n_traces for name, ts in sampled.items()}, "of": totals, "seed": seed}
    if sample_error and any(sample["trips"][name] < totals[name]["traces"] for name in sets):
        sample["error"] = _half_difference(sampled, report, every, groups, settings, attacks, client)
        sample["error_is"] = ("half the difference of the metric on two halves of the sample: the standard deviation "
                              "of its value on the whole sample, estimated from one pair (a small sample's bias not "
                              "included)")
    for name, ts in sets.items():
        report.meta[name] = {**report.meta[name], **totals[name], "users": report.meta[name]["users"]
                             if totals[name]["traces"] == sample["trips"][name] else None}
    report.meta["by_partitions"] = {"every_trip": every, "sampled": [k for k in report.metrics if k not in every],
                                    "sample": sample}
    return report




def _half_difference(sampled: dict, report: Report, every: list, groups, settings: dict, attacks, client) -> dict:
    """Half the difference of every sampled metric between two halves of the samples (module docstring)."""
    halves = []
    for half in (0, 1):
        parts = {name: _half(ts, half, int(settings["seed"])) for name, ts in sampled.items()}
        chosen = [g.name for g in suite.groups() if (groups is None or g.name in groups)
                  and not (every and g.name == "standard")]
        halves.append(evaluate(parts["train"], parts["test"], parts["synthetic"], groups=chosen, options=settings,
                               attacks=attacks, client=client).metrics)
    out = {}
    for key in report.metrics:
        a, b = (h.get(key, {}).get("synthetic") for h in halves)
        if key not in every and a is not None and b is not None:
            out[key] = abs(a - b) / 2
    return out


def _half(ts: TraceSet, half: int, seed: int) -> TraceSet:
    """One of two halves of ``ts``'s traces, drawn at random (seeded), in the set's order."""
    order = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(56, ts.n_traces))).permutation(ts.n_traces)
    return ts.select_users(np.sort(order[half::2]))
