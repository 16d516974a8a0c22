"""Utility metrics and privacy attacks of a synthetic TraceSet against the real ones (paper 001 §4.3).

Utility is measured against the *test* traces (users not used for training), with two
baselines as in the papers: the training traces themselves, and uniformly random traces. When
the synthetic set has several traces per input user, each trace number is evaluated as one set
and the results are averaged, as the authors do.

Sets of trips (trips.py: one passenger trip per trace, its hour in the user table) are measured
instead by paper 004 §8.4's metrics -- trip-length Jensen-Shannon divergence, top-K frequent
patterns, source-destination earth mover's distance, per hour of the day -- and the paper 001
metrics and attacks whose assumptions fail for trips are skipped, each with its reason
(:data:`TRIP_SKIPPED`).
"""

from __future__ import annotations

import json
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .attacks import membership_inference, reidentify
from .errors import InputError
from .metrics.population import population_by_slot, tp_tv, uniform_population
from .metrics.trips import TOP_K, is_trip_set
from .metrics.transitions import (axis_bins, emd_1d_rows, project_rows, tm_emd, tm_swd, transition_matrix,
                                 uniform_transitions)
from .metrics.visits import uniform_visit_fractions, visit_fraction_counts, vf_tv
from .traces import TraceSet, atomic_output

UTILITY = ("tp_tv", "tp_tv_top50", "tm_emd_x", "tm_emd_y", "tm_swd", "vf_tv")
PRIVACY = ("reid_rate", "mia_advantage", "mia_accuracy")
ATTACKS = ("reid", "mia")
#: paper 004 §8.4's metrics of a trip set, in the order of its Figures 3-4 and Tables 2-3
TRIP_UTILITY = ("trip_length_jsd", "trip_length_jsd_hourly", "trip_sd_emd_m", "trip_sd_emd_hourly_m",
                *(f"trip_top{k}_precision" for k in TOP_K))
#: what evaluate leaves out for a trip set, and why: (metric keys, reason); a key ending in '*' is
#: a family. Each group is listed in ``meta['skipped']`` when it would otherwise have been computed.
TRIP_SKIPPED = {
    "population": (("tp_tv", "tp_tv_top50"),
                   "TP-TV reads every event's instant as a time of day (paper 001 §4.3 (a)); a synthetic trip "
                   "carries at most its hour (NGRAM none: its events sit on instants 0, 1, ...), so paper 004 "
                   "§8.4 compares the trips of each hour instead"),
    "transitions": (("tm_emd_y", "tm_emd_x", "tm_swd"),
                    "TM-EMD and TM-SWD count moves between events in consecutive instants (paper 001 §4.3 (b)); "
                    "a real trip, self-loops merged (paper 004 §8.2), skips minutes between cells while a "
                    "synthetic trip may step one instant per cell, so the two matrices would count different "
                    "moves; paper 004 §8.4 measures routes by frequent patterns instead"),
    "visit_fractions": (("vf_tv",),
                        "VF-TV compares how each user's events spread over locations across days; a trace here "
                        "is one trip, which visits each of its cells about once"),
    "sglt": (("sglt_*",),
             "SGLT's features (paper 002 §VIII.C) describe users' check-ins over days: time allocation and "
             "per-user similarities have no meaning for one trip"),
    "clusters": (("cluster_tv",), "PPMTF's user factors cluster users, not trips"),
    "reid": (("reid_rate",),
             "re-identification names the training user whose transition matrix best explains a synthetic "
             "trace (paper 001 §4.3); here every trip is its own user, trained on its few moves, and a trip "
             "synthesizer keeps no source user; paper 004 reports no attack"),
    "mia": (("mia_advantage", "mia_accuracy", "mia_epsilon_lower_bound"),
            "membership inference (paper 001 §4.3) models each candidate by a transition matrix trained on the "
            "candidate's own traces; one trip of a few cells gives a matrix of a few moves, so the score "
            "measures overlap with popular routes rather than membership; paper 004 reports no attack"),
}


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


def as_synthetic(traces: TraceSet) -> TraceSet:
    """The training traces released as they are: each trace is its own source (the 'training' baseline)."""
    from dataclasses import replace

    users = traces.users.assign(source=np.arange(traces.n_traces, dtype=np.int32), trace_no=np.int32(0))
    return replace(traces, users=users)


def check_compatible(reference: TraceSet, other: TraceSet, name: str) -> None:
    if other.space.n_locations != reference.space.n_locations or other.space.kind != reference.space.kind:
        raise InputError(f"the {name} set has {other.space.n_locations} {other.space.kind} locations but the test "
                         f"set has {reference.space.n_locations} {reference.space.kind}; prepare it with --like")
    if other.time.n_slots != reference.time.n_slots or other.time.instants_per_day != reference.time.instants_per_day:
        raise InputError(f"the {name} set's time axis ({other.time.describe()}) differs from the test set's "
                         f"({reference.time.describe()}); prepare it with --like")


def evaluate(train: TraceSet, test: TraceSet, synthetic: TraceSet, *, attacks=ATTACKS, top: int = 50,
             vf_bins: int = 24, emd_bins: int = 20, swd_projections: int = 50, seed: int = 0,
             mia_per_trace_number: bool = False, reid_max_traces: int | None = 20_000,
             mia_max_candidates: int | None = 10_000, sglt: bool = True, user_factors=None,
             trip_max_trips: int = 2000, jsd_distance: bool = False, progress=None, client=None) -> Report:
    """Utility of ``synthetic`` against ``test`` and attacks against ``train`` (members) / ``test``.

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
    trip_max_trips, jsd_distance : for a trip set (:func:`locsynth.metrics.trips.is_trip_set`
        of the test set: a user table with an ``hour`` column, as trips.py makes): the trips drawn
        per hour for the source-destination EMD (2000 in paper 004 §8.4), and whether the length
        divergence is reported as the Jensen-Shannon divergence (default, what §8.4 names, in bits)
        or as its square root, the JS distance that scipy's ``jensenshannon(base=2)`` returns and
        the authors' code reports. See :func:`evaluate_trips`.
    progress : callable(step: str) called before each step.
    client : a Dask client (see parallel.py) on whose cluster the attacks score their chunks of
        traces and candidates; the results equal the serial ones.
    """
    for name, ts in (("training", train), ("test", test), ("synthetic", synthetic)):
        ts.require_exact(f"evaluate (the {name} set)")
    attacks = tuple(attacks)
    unknown = sorted(set(attacks) - set(ATTACKS))
    if unknown:
        raise InputError(f"unknown attack(s) {', '.join(unknown)}; expected some of {', '.join(ATTACKS)}")
    for name, ts in (("training", train), ("synthetic", synthetic)):
        check_compatible(test, ts, name)
    if synthetic.n_events == 0:
        raise InputError("the synthetic set has no events")
    if is_trip_set(test):
        skip = ["population", "transitions", "visit_fractions", *(["sglt"] if sglt else []),
                *(["clusters"] if user_factors is not None else []), *attacks]
        return evaluate_trips(train, test, synthetic, seed=seed, max_trips=trip_max_trips, distance=jsd_distance,
                              skipped=skip, progress=progress)
    step = progress or (lambda _: None)
    timings: dict[str, float] = {}
    clock = _time.perf_counter()

    def lap(name):
        nonlocal clock
        now = _time.perf_counter()
        timings[name] = round(now - clock, 4)
        clock = now

    sets = synthetic.by_trace_number()
    n_loc, n_slots = test.space.n_locations, test.time.n_slots

    step("population")
    p_test, p_train = population_by_slot(test), population_by_slot(train)
    p_syn = [population_by_slot(s) for s in sets]
    p_uni = uniform_population(n_slots, n_loc)
    metrics = {
        "tp_tv": _row(np.mean([tp_tv(p_test, q) for q in p_syn]), tp_tv(p_test, p_train), tp_tv(p_test, p_uni)),
        "tp_tv_top50": _row(np.mean([tp_tv(p_test, q, top) for q in p_syn]), tp_tv(p_test, p_train, top),
                            tp_tv(p_test, p_uni, top)),
    }
    lap("population")

    step("transitions")
    m_test, m_train = transition_matrix(test), transition_matrix(train)
    m_syn = [transition_matrix(s) for s in sets]
    m_uni = uniform_transitions(n_loc)
    emd_syn = np.array([tm_emd(m_test, m, test.space, emd_bins) for m in m_syn])
    emd_train, emd_uni = tm_emd(m_test, m_train, test.space, emd_bins), tm_emd(m_test, m_uni, test.space, emd_bins)
    metrics["tm_emd_y"] = _row(emd_syn[:, 0].mean(), emd_train[0], emd_uni[0])
    metrics["tm_emd_x"] = _row(emd_syn[:, 1].mean(), emd_train[1], emd_uni[1])
    lap("tm_emd")
    swd = lambda m: tm_swd(m_test, m, test.space, swd_projections, seed)  # noqa: E731
    metrics["tm_swd"] = _row(np.mean([swd(m) for m in m_syn]), swd(m_train), swd(m_uni))
    lap("tm_swd")

    step("visit fractions")
    v_test = visit_fraction_counts(test, vf_bins)
    metrics["vf_tv"] = _row(np.mean([vf_tv(v_test, visit_fraction_counts(s, vf_bins)) for s in sets]),
                            vf_tv(v_test, visit_fraction_counts(train, vf_bins)),
                            vf_tv(v_test, uniform_visit_fractions(n_loc, vf_bins)))
    lap("vf_tv")

    if sglt:
        step("SGLT features")
        from .metrics.sglt import sglt_features

        syn_f, train_f = sglt_features(test, synthetic), sglt_features(test, train)
        for key, value in syn_f.items():
            if np.isfinite(value):
                metrics[f"sglt_{key}"] = _row(value, train_f.get(key), None)
        lap("sglt")

    if user_factors is not None:
        step("cluster-specific populations")
        from .metrics.clusters import cluster_population, cluster_population_tv, clusters_from_factors

        clusters = clusters_from_factors(np.asarray(user_factors))
        tv = cluster_population_tv(train, synthetic, clusters)
        uniform = [0.5 * np.abs(cluster_population(train, c) - 1.0 / n_loc).sum() for c in clusters]
        metrics["cluster_tv"] = _row(np.nanmean(tv), None, np.mean(uniform))
        lap("clusters")

    colocations = None
    if synthetic.friends is not None:
        step("co-locations")
        colocations = _colocation_metrics(train, test, synthetic, metrics, seed)
        lap("colocations")

    details = {
        "population": {"test": p_test, "synthetic": np.mean(p_syn, axis=0), "training": p_train},
        "emd_rows": _emd_rows(m_test, m_syn, m_train, test, emd_bins),
        "visit_fractions": {"test": _vf_profile(v_test),
                            "synthetic": _vf_profile(np.sum([visit_fraction_counts(s, vf_bins) for s in sets], axis=0)),
                            "training": _vf_profile(visit_fraction_counts(train, vf_bins))},
        "space": {"kind": test.space.kind, "lat": test.space.lat, "lon": test.space.lon,
                  "rows": getattr(test.space, "rows", None), "cols": getattr(test.space, "cols", None)},
        "slot_labels": _slot_labels(test),
    }

    if "reid" in attacks:
        step("re-identification")
        if "source" in synthetic.users and (synthetic.users["source"] >= 0).any():
            reid = reidentify(train, synthetic, max_traces=reid_max_traces, seed=seed, client=client)
            reid_train = reidentify(train, as_synthetic(train), max_traces=reid_max_traces, seed=seed,
                                    client=client)
            metrics["reid_rate"] = _row(reid.rate, reid_train.rate, 1.0 / train.n_traces)
            details["reid"] = {"rate": reid.rate, "interval": reid.interval, "traces": int(reid.rows.size)}
        else:
            metrics["reid_rate"] = _row(None, None, None)
        lap("reid")
    if "mia" in attacks:
        step("membership inference")
        mia = membership_inference(train, test, synthetic, per_trace_number=mia_per_trace_number,
                                   max_candidates=mia_max_candidates, seed=seed, client=client)
        mia_train = membership_inference(train, test, as_synthetic(train), max_candidates=mia_max_candidates,
                                         seed=seed, client=client)
        metrics["mia_advantage"] = _row(mia.advantage, mia_train.advantage, 0.0)
        metrics["mia_accuracy"] = _row(mia.accuracy, mia_train.accuracy, 0.5)
        metrics["mia_epsilon_lower_bound"] = _row(mia.epsilon_lower_bound, mia_train.epsilon_lower_bound, 0.0)
        details["mia"] = {"tpr": mia.tpr, "fpr": mia.fpr, "advantage": mia.advantage,
                          "threshold": mia.threshold, "candidates": int(mia.candidates.size)}
        lap("mia")

    meta = {
        "train": _counts(train), "test": _counts(test), "synthetic": _counts(synthetic),
        "trace_numbers": len(sets),
        "options": {"attacks": list(attacks), "top": top, "vf_bins": vf_bins, "emd_bins": emd_bins,
                    "swd_projections": swd_projections, "seed": seed,
                    "mia_per_trace_number": mia_per_trace_number, "reid_max_traces": reid_max_traces,
                    "mia_max_candidates": mia_max_candidates},
        "attack_samples": {k: {kk: vv for kk, vv in v.items() if kk in ("traces", "interval", "candidates")}
                           for k, v in details.items() if k in ("reid", "mia")},
        "seconds": timings,
        **_provenance(synthetic),
        "baselines": {"training": "the training traces released as they are",
                      "uniform": "uniformly random traces (uniform population, uniform transitions; "
                                 "reid: a random guess among the training users)"},
    }
    if colocations is not None:
        meta["colocations"] = colocations
        details["colocations"] = colocations
    return Report(metrics, details, meta)


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


# -- trips (paper 004 §8.4) ------------------------------------------------------------------------

def evaluate_trips(train: TraceSet, test: TraceSet, synthetic: TraceSet, *, seed: int = 0, max_trips: int = 2000,
                   distance: bool = False, skipped=(), progress=None) -> Report:
    """Utility of synthetic trips against the real test trips (paper 004 §8.4), with the training
    trips released as they are as the baseline; no uniform baseline.

    Rows of ``metrics`` (each ``{"synthetic", "training", "uniform": None}``):

    - ``trip_length_jsd``: Jensen-Shannon divergence in bits between the trip-length distributions
      of all trips (the square root with ``distance``); ``trip_length_jsd_hourly`` its mean over the
      hours both sets have trips in (None for a set without hours, as NGRAM's: paper 004 §8.5
      "only report[s] one value" for it).
    - ``trip_sd_emd_m``: earth mover's distance in metres between the (source, destination)
      distributions of at most ``max_trips`` trips of each set; ``trip_sd_emd_hourly_m`` its mean
      over hours (a set without hours is compared whole with each hour, as §8.5 does for NGRAM).
    - ``trip_top{K}_precision``, K = 10, 20, 50, 100: the share of the real top-K route segments
      found among the synthetic top-K (higher is better).

    The per-hour curves (Figures 3-4: ``length_jsd`` and ``sd_emd_m``, each ``{set: {"overall",
    "by_hour"}}``), the precisions and Table 1's trip statistics of every set go to
    ``meta['trips']`` (and ``details['trips']``, with the trip-length distributions); ``skipped``
    names groups of :data:`TRIP_SKIPPED` (or attacks) listed with their reasons in
    ``meta['skipped']``. A synthetic set of several trace numbers is measured as one set of trips.
    """
    from .metrics.trips import HOURS, length_distribution, trip_hours, trip_metrics
    from .trips import trip_statistics

    step = progress or (lambda _: None)
    timings = {}
    measured = {}
    for name, other in (("synthetic", synthetic), ("training", train)):
        step(f"trips ({name})")
        clock = _time.perf_counter()
        measured[name] = trip_metrics(test, other, ks=TOP_K, max_trips=max_trips, seed=seed, distance=distance)
        timings[f"trips_{name}"] = round(_time.perf_counter() - clock, 4)

    def row(pick):
        return _row(pick(measured["synthetic"]), pick(measured["training"]), None)

    metrics = {
        "trip_length_jsd": row(lambda m: m["length_jsd"]["overall"]),
        "trip_length_jsd_hourly": row(lambda m: _hour_mean(m["length_jsd"]["by_hour"])),
        "trip_sd_emd_m": row(lambda m: m["sd_emd"]["overall"]),
        "trip_sd_emd_hourly_m": row(lambda m: _hour_mean(m["sd_emd"]["by_hour"])),
        **{f"trip_top{k}_precision": row(lambda m, k=k: m["frequent_patterns"][k]) for k in TOP_K},
    }
    sets = {"test": test, "training": train, "synthetic": synthetic}
    trips = {
        "hours": list(range(HOURS)),
        "jsd": "distance" if distance else "divergence",
        "synthetic_has_hours": trip_hours(synthetic) is not None,
        "length_jsd": {k: _curve(m["length_jsd"]) for k, m in measured.items()},
        "sd_emd_m": {k: _curve(m["sd_emd"]) for k, m in measured.items()},
        "frequent_patterns": {k: {str(kk): v for kk, v in m["frequent_patterns"].items()}
                              for k, m in measured.items()},
        "statistics": {k: trip_statistics(ts) for k, ts in sets.items()},
    }
    size = int(max(ts.counts().max() for ts in sets.values())) + 1
    details = {"trips": {**trips, "length_distribution": {k: length_distribution(ts.counts(), size)
                                                          for k, ts in sets.items()}}}
    meta = {
        "train": _counts(train), "test": _counts(test), "synthetic": _counts(synthetic),
        "trace_numbers": 1, "kind": "trips",
        "options": {"seed": seed, "max_trips": max_trips, "top_k": list(TOP_K),
                    "jsd": trips["jsd"] + (" (square root of the divergence, base 2)" if distance
                                           else " (base 2, in bits)")},
        "seconds": timings,
        **_provenance(synthetic),
        "baselines": {"training": "the training trips released as they are"},
        "trips": trips,
        "skipped": [_skip_entry(name) for name in skipped],
    }
    return Report(metrics, details, meta)


def _skip_entry(name: str) -> dict:
    keys, reason = TRIP_SKIPPED[name]
    return {"group": name, "metrics": list(keys), "reason": reason}


def _curve(measured: dict) -> dict:
    """``{"overall": float, "by_hour": list of 24 (None where NaN) or None}``, ready for JSON."""
    by_hour = measured["by_hour"]
    if by_hour is not None:
        by_hour = [None if not np.isfinite(v) else float(v) for v in np.asarray(by_hour, np.float64)]
    return {"overall": float(measured["overall"]), "by_hour": by_hour}


def _hour_mean(by_hour) -> float | None:
    """The mean over the hours that have a value; None when there is none."""
    if by_hour is None:
        return None
    values = np.asarray(by_hour, np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if values.size else None


def _colocation_metrics(train: TraceSet, test: TraceSet, synthetic: TraceSet, metrics: dict, seed: int) -> dict:
    """Paper 000 §5.2 for a set with a friend graph: population and transition MAE / MSE against the
    test traces (rows added to ``metrics``), and co-locations between friends and non-friends
    (returned, with the model's |p - p'| and per-category errors when the set carries them)."""
    from .metrics.colocation import (daily_transition_matrix, friend_colocations, population_distribution,
                                     population_error, transition_error)

    L = test.space.n_locations
    uniform_pop = np.abs(population_distribution(test) - 1.0 / L)
    P, rows = daily_transition_matrix(test)
    uniform_tm = np.abs(P[rows] - 1.0 / L)
    for name, fn, uniform in (("population", population_error, uniform_pop), ("transition", transition_error,
                                                                              uniform_tm)):
        syn, real = fn(test, synthetic), fn(test, train)
        metrics[f"coloc_{name}_mae"] = _row(syn["mae"], real["mae"], float(uniform.mean()) if uniform.size else None)
        metrics[f"coloc_{name}_mse"] = _row(syn["mse"], real["mse"],
                                            float((uniform ** 2).mean()) if uniform.size else None)
    out = {"synthetic": friend_colocations(synthetic, seed)}
    if train.friends is not None:
        out["training"] = friend_colocations(train, seed)
    for key in ("friendship_error", "category_error", "theta", "colocations_placed"):
        if key in synthetic.info:
            out[key] = synthetic.info[key]
    return out


def _row(synthetic, training, uniform) -> dict:
    f = lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)  # noqa: E731
    return {"synthetic": f(synthetic), "training": f(training), "uniform": f(uniform)}


def _counts(ts: TraceSet) -> dict:
    return {"users": ts.n_users, "traces": ts.n_traces, "events": ts.n_events}


def _emd_rows(m_test, m_syn, m_train, test, bins) -> dict:
    ybin, xbin, ny, nx = axis_bins(test.space, bins)

    def rows(m):
        return {"y": emd_1d_rows(project_rows(m_test, ybin, ny), project_rows(m, ybin, ny)),
                "x": emd_1d_rows(project_rows(m_test, xbin, nx), project_rows(m, xbin, nx))}

    per_set = [rows(m) for m in m_syn]       # averaged over trace numbers, as in the table
    return {"synthetic": {ax: np.mean([r[ax] for r in per_set], axis=0) for ax in ("y", "x")},
            "training": rows(m_train)}


def _vf_profile(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=0)
    return total / total.sum() if total.sum() > 0 else total


def _slot_labels(ts: TraceSet) -> list[str]:
    starts = ts.time.start_of(np.searchsorted(ts.time.slot_of, np.arange(ts.time.n_slots)))
    local = pd.DatetimeIndex(starts).tz_convert(ts.time.timezone)
    return [t.strftime("%H:%M") for t in local]
