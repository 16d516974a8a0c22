"""Utility metrics and privacy attacks of a synthetic TraceSet against the real ones: a loop over
the metric groups that apply (metrics/groups.py), into a :class:`Report`.

Utility is measured against the *test* traces (users not used for training), with two
baselines as in the papers: the training traces themselves, and uniformly random traces. When
the synthetic set has several traces per input user, each trace number is evaluated as one set
and the results are averaged, as the authors do (paper 001 §4.3).

Sets of trips (cab_trips.py: one passenger trip per trace, its hour in the user table) are measured
instead by paper 004 §8.4's metrics (metrics/trips.py's group), and the groups whose assumptions
fail for trips are skipped, each listed with its reason in ``meta['skipped']``.
"""

from __future__ import annotations

import json
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import InputError
from .metrics.groups import Context, groups
from .metrics.standard import check_flavour, jsd_base
from .traces import TraceSet, atomic_output, check_same_frame

ATTACKS = ("reid", "mia")
#: what the report says the baselines are
BASELINES = {"traces": {"training": "the training traces released as they are",
                        "uniform": "uniformly random traces (uniform population, uniform transitions; reid: a "
                                   "random guess among the training users)"},
             "trips": {"training": "the training trips released as they are"}}


@dataclass
class Report:
    """Metrics with their baselines, plus what the report's plots need.

    ``metrics[key]`` is ``{"synthetic": x, "training": x, "uniform": x}`` (baselines where they
    apply); ``details`` holds arrays for plots; ``meta`` the counts, options and timings.
    """

    metrics: dict[str, dict[str, float | None]]
    details: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"metrics": self.metrics, "meta": self.meta}

    def to_json(self, path: str | Path | None = None, overwrite: bool = True) -> str:
        """metrics.json: each metric key maps to ``{"synthetic", "training", "uniform"}``;
        ``_meta`` holds the counts and options."""
        payload = dict(self.metrics)
        payload["_meta"] = self.meta
        text = json.dumps(payload, indent=2, default=_json_default)
        if path is not None:
            with atomic_output(Path(path), overwrite, directory=False) as tmp:
                tmp.write_text(text)
        return text

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """A directory with ``metrics.json`` and ``report.html``, written atomically."""
        with atomic_output(Path(path), overwrite, directory=True) as tmp:
            self.to_json(tmp / "metrics.json")
            self.to_html(tmp / "report.html")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> "Report":
        """The report :meth:`save` wrote (a directory, or its metrics.json): metrics and meta; the
        plots' arrays are not saved, so ``details`` is empty."""
        from .report import load_metrics

        data = load_metrics(path)
        return cls({k: v for k, v in data.items() if not k.startswith("_")}, {}, data.get("_meta") or {})

    def to_html(self, path: str | Path | None = None, overwrite: bool = True) -> str:
        """report.html: tables and plots, self-contained (opens without a network)."""
        from .report import render_html

        html = render_html(self)
        if path is not None:
            with atomic_output(Path(path), overwrite, directory=False) as tmp:
                tmp.write_text(html)
        return html


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def evaluate(train: TraceSet, test: TraceSet, synthetic: TraceSet, *, attacks=ATTACKS, top: int = 50,
             vf_bins: int = 24, emd_bins: int = 20, swd_projections: int = 50, seed: int = 0,
             mia_per_trace_number: bool = False, reid_max_traces: int | None = 20_000,
             mia_max_candidates: int | None = 10_000, sglt: bool = True, user_factors=None,
             trip_max_trips: int = 2000, jsd_distance: bool = False, standard: bool = True,
             standard_jsd_base: str = "e", standard_flavour: str = "adatrace", progress=None,
             client=None) -> Report:
    """Utility of ``synthetic`` against ``test`` and attacks against ``train`` (members) / ``test``:
    every metric group that applies (metrics/groups.py), in order, into one Report.

    Parameters
    ----------
    attacks : iterable of {'reid', 'mia'}
    top : locations kept by TP-TV-Top (50 in paper 001).
    vf_bins : bins of VF-TV (24 in paper 001; the authors' PF script uses 30).
    emd_bins : y and x bins of TM-EMD for POI spaces (a grid uses its own rows and columns).
    mia_per_trace_number : decide membership once per trace number, as the authors' script does,
        instead of once over all synthetic traces, as the paper does.
    reid_max_traces, mia_max_candidates : past these sizes the attacks run on a seeded sample
        (of synthetic traces, of candidate users), which keeps their cost linear in users; the
        sample sizes and the re-identification interval are in ``meta``. None: always exact.
    sglt : also compute SGLT's utility features (paper 002 §VIII.C) as ``sglt_*`` keys.
    user_factors : ndarray of shape (n_training_users, z), optional
        A user-factor matrix (PPMTF's A): adds ``cluster_tv``, the mean over its columns' top-10%
        clusters of the TV between the cluster's training and synthetic populations (paper 001
        §4.3 (d)); the uniform baseline is the TV to the uniform distribution.
    trip_max_trips, jsd_distance : for a set of trips (its users have an ``hour``, as cab_trips.py
        makes them): the trips drawn per hour for the source-destination EMD (2000 in paper 004
        §8.4), and whether the length divergence is reported as the Jensen-Shannon divergence
        (default, what §8.4 names, in bits) or as its square root, the JS distance that scipy's
        ``jensenshannon(base=2)`` returns and the authors' code reports.
    standard, standard_jsd_base : whether to compute the field's standard suite (AdaTrace's,
        PrivTrace's and LDPTrace's metrics, metrics/standard.py) and the logarithm of its
        Jensen-Shannon divergences: 'e' (the authors' codes) or '2' (bits).
    standard_flavour : {'adatrace', 'corrected', 'ldptrace'}
        How the suite is computed: as AdaTrace's Evaluation.java does, its slips included (the
        default, for tables beside the papers'), with those slips fixed, or as LDPTrace's
        evaluation does (metrics/standard.py, docs/benchmark.md).
    progress : callable(step: str) called before each group.
    client : a Dask client (see parallel.py) on whose cluster the attacks score their chunks of
        traces and candidates; the results equal the serial ones.
    """
    attacks = _check_inputs(train, test, synthetic, attacks)
    jsd_base(standard_jsd_base)
    check_flavour(standard_flavour)
    options = {"attacks": list(attacks), "seed": seed, "top": top, "vf_bins": vf_bins, "emd_bins": emd_bins,
               "swd_projections": swd_projections, "mia_per_trace_number": mia_per_trace_number,
               "reid_max_traces": reid_max_traces, "mia_max_candidates": mia_max_candidates, "sglt": sglt,
               "user_factors": user_factors, "trip_max_trips": trip_max_trips, "jsd_distance": jsd_distance,
               "standard": standard, "standard_jsd_base": str(standard_jsd_base),
               "standard_flavour": standard_flavour}
    ctx = Context(train, test, synthetic, options, client)
    step = progress or (lambda _: None)
    metrics, details, timings, skipped = {}, {}, {}, []
    meta = {"train": _counts(train), "test": _counts(test), "synthetic": _counts(synthetic),
            "trace_numbers": 1 if ctx.trips else len(ctx.sets),
            "options": {"attacks": list(attacks), "seed": seed}}
    if not ctx.trips:
        details["space"] = {"kind": test.space.kind, "lat": test.space.lat, "lon": test.space.lon,
                            "rows": getattr(test.space, "rows", None), "cols": getattr(test.space, "cols", None)}
    for group in groups():
        reason = group.skip(ctx)
        if reason is not None:
            if reason:
                skipped.append({"group": group.name, "metrics": list(group.keys), "reason": reason})
            continue
        step(group.step or group.name)
        start = _time.perf_counter()
        result = group.compute(ctx)
        metrics.update(result.metrics)
        details.update(result.details)
        for key, value in result.meta.items():
            meta[key] = {**meta[key], **value} if isinstance(value, dict) and isinstance(meta.get(key), dict) \
                else value
        timings.update(result.seconds or {group.name: round(_time.perf_counter() - start, 4)})
    meta.update({"seconds": timings, **_provenance(synthetic),
                 "baselines": BASELINES["trips" if ctx.trips else "traces"]})
    if skipped:
        meta["skipped"] = skipped
    return Report(metrics, details, meta)


def _check_inputs(train: TraceSet, test: TraceSet, synthetic: TraceSet, attacks) -> tuple[str, ...]:
    """The attacks as a tuple, after checking that the three sets can be compared."""
    for name, ts in (("training", train), ("test", test), ("synthetic", synthetic)):
        ts.require_exact(f"evaluate (the {name} set)")
    attacks = tuple(attacks)
    unknown = sorted(set(attacks) - set(ATTACKS))
    if unknown:
        raise InputError(f"unknown attack(s) {', '.join(unknown)}; expected some of {', '.join(ATTACKS)}")
    for name, ts in (("training", train), ("synthetic", synthetic)):
        check_same_frame(test, ts, ("test", name))
    if synthetic.n_events == 0:
        raise InputError("the synthetic set has no events")
    return attacks


def _provenance(synthetic: TraceSet) -> dict:
    """What the report says about where the synthetic set comes from: method, fingerprint,
    parameters, and its ledger and privacy tests when it has them."""
    out = {"method": synthetic.info.get("source"), "synthetic_fingerprint": synthetic.fingerprint(),
           "params": synthetic.info.get("params")}
    if synthetic.ledger is not None:
        out["ledger"] = synthetic.ledger.to_dict()
    if synthetic.info.get("fakes"):
        out["privacy_tests"] = synthetic.info["fakes"]
    return out


def _counts(ts: TraceSet) -> dict:
    return {"users": ts.n_users, "traces": ts.n_traces, "events": ts.n_events}
