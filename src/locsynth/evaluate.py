"""Utility metrics and privacy attacks of a synthetic TraceSet against the real ones (paper 001 §4.3).

Utility is measured against the *test* traces (users not used for training), with two
baselines as in the papers: the training traces themselves, and uniformly random traces. When
the synthetic set has several traces per input user, each trace number is evaluated as one set
and the results are averaged, as the authors do.
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
from .metrics.transitions import (axis_bins, emd_1d_rows, project_rows, tm_emd, tm_swd, transition_matrix,
                                 uniform_transitions)
from .metrics.visits import uniform_visit_fractions, visit_fraction_counts, vf_tv
from .traces import TraceSet, atomic_output

UTILITY = ("tp_tv", "tp_tv_top50", "tm_emd_x", "tm_emd_y", "tm_swd", "vf_tv")
PRIVACY = ("reid_rate", "mia_advantage", "mia_accuracy")
ATTACKS = ("reid", "mia")


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
             progress=None, client=None) -> Report:
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
        "method": synthetic.info.get("source"),
        "synthetic_fingerprint": synthetic.fingerprint(),
        "params": synthetic.info.get("params"),
        "baselines": {"training": "the training traces released as they are",
                      "uniform": "uniformly random traces (uniform population, uniform transitions; "
                                 "reid: a random guess among the training users)"},
    }
    if synthetic.ledger is not None:
        meta["ledger"] = synthetic.ledger.to_dict()
    if synthetic.info.get("fakes"):
        meta["privacy_tests"] = synthetic.info["fakes"]
    if colocations is not None:
        meta["colocations"] = colocations
        details["colocations"] = colocations
    return Report(metrics, details, meta)


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
