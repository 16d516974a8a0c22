"""Utility metrics and privacy attacks of a synthetic TraceSet against the real ones: a loop over
the metric groups that apply (metrics/groups.py), into a :class:`Report`.

Utility is measured against the *test* traces (users not used for training), with two
baselines as in the papers: the training traces themselves, and uniformly random traces. When
the synthetic set has several traces per input user, each trace number is evaluated as one set
and the results are averaged, as the authors do (paper 001 §4.3).

Sets of trips (data/trips.py: one passenger trip per trace, its hour in the user table) are measured
instead by paper 004 §8.4's metrics (metrics/trips.py's group), and the groups whose assumptions
fail for trips are skipped, each listed with its reason in ``meta['skipped']``.
"""

from __future__ import annotations

import json
import time as _time
from dataclasses import dataclass, field
from pathlib import Path


import warnings

from ..core.errors import InputError, LongRunWarning
from ..core.jsonable import json_default
from . import suite
from ..metrics.groups import Context
from ..core.progress import reporter, resolve
from ..core.files import atomic_output
from ..data.traces import TraceSet, check_same_frame, is_trip_set, require_traceset

#: the attacks (the attack groups of locsynth.evaluation.suite), as earlier versions named them
ATTACKS = ("reid", "mia")
#: the groups that search every trajectory against every set, and the training trips from which
#: evaluate says before it starts that they take minutes (docs/attacks.md, the searches at Porto size)
SEARCHES = {"distance_mia": "the distance MIA", "near_copies": "the near-copy check"}
LONG_SEARCH_TRIPS = 500_000
#: what the report says the baselines are
BASELINES = {"traces": {"training": "the training traces released as they are",
                        "uniform": "uniformly random traces (uniform population, uniform transitions; reid: a "
                                   "random guess among the training users)"},
             "trips": {"training": "the training trips released as they are",
                       "uniform": "chance: what an attack gets from a release that tells nothing (advantage and gain 0, "
                                  "AUC 0.5)"}}


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

    def to_frame(self):
        """The metrics as a pandas DataFrame: a row per metric, a column per compared set
        (``synthetic``, ``training``, ``uniform`` where they apply)."""
        from ..core.display import report_frame

        return report_frame(self)

    def __repr__(self) -> str:
        method = (self.meta or {}).get("method")
        return f"Report({len(self.metrics)} metrics{f' of {method}' if method else ''}; .to_frame() shows them)"

    def _repr_html_(self) -> str:
        from ..core.display import report_html

        return report_html(self)

    def to_json(self, path: str | Path | None = None, overwrite: bool = True) -> str:
        """metrics.json: each metric key maps to ``{"synthetic", "training", "uniform"}``;
        ``_meta`` holds the counts and options."""
        payload = dict(self.metrics)
        payload["_meta"] = self.meta
        text = json.dumps(payload, indent=2, default=json_default)
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


def evaluate(train: TraceSet, test: TraceSet, synthetic: TraceSet, *, groups=None, options: dict | None = None,
             attacks=None, progress=None, client=None, references: dict | None = None,
             **named) -> Report:
    """Utility of ``synthetic`` against ``test`` and attacks against ``train`` (members) / ``test``:
    every metric group that applies (:func:`locsynth.evaluation.suite.groups`), in order, into one Report.

    Parameters
    ----------
    groups : iterable of group names, optional
        Run only these (those that apply); None: every group.
    options : dict, optional
        The groups' options by name (:func:`locsynth.evaluation.suite.options` lists them with their defaults
        and help: ``top``, ``vf_bins``, ``emd_bins``, ``swd_projections``, ``seed``,
        ``mia_per_trace_number``, ``reid_max_traces``, ``mia_max_candidates``, ``sglt``,
        ``user_factors``, ``trip_max_trips``, ``jsd_distance``, ``standard``, ``standard_jsd_base``,
        ``standard_flavour``, and those of any group a plugin adds); each is checked against its
        declaration and an unknown one is refused, naming the valid ones. They may also be given as
        keywords (``evaluate(train, test, syn, top=50)``), as before the declarations.
    attacks : iterable of attack group names, 'all' or None
        The attack groups to run (None: every one).
    progress : callable(done, total, status), optional
        Called before each group, `status` naming it (core/progress.py; a one-argument callable
        gets the step's name, as before the protocol).
    client : a Dask client, optional
        On its cluster (see core/parallel.py) the attacks score their chunks of traces and
        candidates; the results equal the serial ones.
    references : dict, optional
        Kept by the caller across evaluations against the same ``train`` and ``test`` (the
        benchmark keeps one per dataset): what does not depend on the synthetic set is computed
        into it once (metrics.groups.Context.reference). Results equal those without it.
    """
    given = dict(options or {})
    twice = sorted(set(given) & set(named))
    if twice:
        raise InputError(f"option(s) {', '.join(twice)} given both in options and as keywords")
    settings = suite.check_options({**given, **named})
    chosen = _check_inputs(train, test, synthetic, attacks)
    run = _chosen_groups(groups)
    ctx = Context(train, test, synthetic, {**settings, "attacks": list(chosen)}, client, references=references)
    step = reporter(resolve(progress, "evaluate"))
    slow = long_searches(ctx, run)
    if slow:
        warnings.warn(LongRunWarning(slow), stacklevel=2)
    metrics, details, timings, skipped = {}, {}, {}, []
    meta = {"train": _counts(train), "test": _counts(test), "synthetic": _counts(synthetic),
            "trace_numbers": 1 if ctx.trips else len(ctx.sets),
            "options": {"attacks": list(chosen), "seed": settings["seed"]}}
    if not ctx.trips:
        details["space"] = {"kind": test.space.kind, "lat": test.space.lat, "lon": test.space.lon,
                            "rows": getattr(test.space, "rows", None), "cols": getattr(test.space, "cols", None)}
    for number, group in enumerate(run):
        reason = group.skip(ctx)
        if reason is not None:
            if reason:
                skipped.append({"group": group.name, "metrics": list(group.keys), "reason": reason})
            continue
        step(number, len(run), group.step or group.name)
        meta["options"].update({o.name: settings[o.name] for o in group.options if o.cli})
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


def long_searches(ctx: Context, run) -> str | None:
    """What to say before a run whose searches of every trajectory take minutes (trip sets of
    LONG_SEARCH_TRIPS training trips or more), or None."""
    names = [g.name for g in run if g.name in SEARCHES and g.skip(ctx) is None
             and not (g.name == "distance_mia" and ctx.option("dmia_targets", None) is not None)]
    if not ctx.trips or not names or ctx.train.n_traces < LONG_SEARCH_TRIPS:
        return None
    which = " and ".join(SEARCHES[n] for n in names)
    return (f"{ctx.train.n_traces:,} training trips: {which} search{'es' * (len(names) < 2)} every trajectory "
            f"against every set, which takes minutes at this size (about 15 on 2 cores at 1.7 million trips a "
            f"set); a sample of 20,000 trips a set for every group but the standard suite (locsynth evaluate "
            f"--sample-trips 20000, evaluate_partitioned(..., sample_trips=20000)) takes about 25 s there, its "
            f"report stating the sample's error")


def _chosen_groups(names) -> list:
    """The groups to run: every one, or those named (an unknown name is refused, naming the valid ones)."""
    every = suite.groups()
    if names is None:
        return every
    names = [names] if isinstance(names, str) else list(names)
    unknown = sorted(set(names) - {g.name for g in every})
    if unknown:
        raise InputError(f"unknown metric group(s) {', '.join(unknown)}; expected some of "
                         f"{', '.join(g.name for g in every)}")
    return [g for g in every if g.name in names]


def parse_attacks(text) -> tuple[str, ...]:
    """The attacks to run from a text or an iterable: names, comma-separated, 'all' (or 'both', as
    earlier command lines said) for every attack group, 'none' for none; None: every one."""
    known = suite.attacks()
    if text is None:
        return known
    items = [a.strip() for a in text.split(",")] if isinstance(text, str) else [str(a).strip() for a in text]
    items = [a for a in items if a]
    if [a.lower() for a in items] in (["all"], ["both"]):
        return known
    if [a.lower() for a in items] == ["none"]:
        return ()
    unknown = sorted(set(items) - set(known))
    if unknown:
        raise InputError(f"unknown attack(s) {', '.join(unknown)}; expected some of {', '.join(known)}, 'all' "
                         f"or 'none'")
    return tuple(a for a in known if a in items)


def _check_inputs(train: TraceSet, test: TraceSet, synthetic: TraceSet, attacks) -> tuple[str, ...]:
    """The attacks as a tuple, after checking that the three sets can be compared."""
    for name, ts in (("training", train), ("test", test), ("synthetic", synthetic)):
        require_traceset(ts, f"evaluate (its {name} set)")
        ts.require_exact(f"evaluate (the {name} set)")
    attacks = parse_attacks(attacks)
    for name, ts in (("training", train), ("synthetic", synthetic)):
        check_same_frame(test, ts, ("test", name))
    if synthetic.n_events == 0:
        raise InputError("the synthetic set has no events")
    return attacks


def _provenance(synthetic: TraceSet) -> dict:
    """What the report says about where the synthetic set comes from: method, fingerprint,
    parameters, its ledger and privacy tests when it has them, the estimated share of noise in a DP
    release and a trip set's public bounds."""
    out = {"method": synthetic.info.get("source"), "synthetic_fingerprint": synthetic.fingerprint(),
           "params": synthetic.info.get("params")}
    if synthetic.ledger is not None:
        out["ledger"] = synthetic.ledger.to_dict()
    if synthetic.info.get("fakes"):
        out["privacy_tests"] = synthetic.info["fakes"]
    if "noise" in synthetic.info:             # the estimated share of noise in a DP release (privacy/noise.py)
        out["noise"] = synthetic.info["noise"]
    if "bounds" in synthetic.info or is_trip_set(synthetic):
        out["bounds"] = synthetic.bounds.to_dict()
    return out


def _counts(ts: TraceSet) -> dict:
    return {"users": ts.n_users, "traces": ts.n_traces, "events": ts.n_events}
