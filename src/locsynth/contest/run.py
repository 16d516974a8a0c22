"""The judge's workflow (paper 003 §3.4, Figure 5): anonymize, score utility, pseudonymize, attack,
score privacy; one table row per anonymizer (the preliminary experiments of §4, Figure 8).

Anonymizer specs (``;``-separated in ``contest run``): the contest's forms (:data:`FORMS`), or any
registered anonymizer with PARAM=VALUE pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..data.traces import TraceSet, check_same_frame
from ..core.progress import reporter
from ..core.validation import parse_assignment
from . import scores
from .attacks import ATTACKS, attack
from .pseudonymize import pseudonymize

COLUMNS = ["anonymizer", "utility"] + [f"reid_{a}" for a in ATTACKS] + [f"trace_{a}" for a in ATTACKS]
#: the contest's spellings of its anonymizers (paper 003 §4.1), the one alias table: short name ->
#: (registered anonymizer, the parameters its comma-separated values give in order, the values
#: ``contest run`` takes by default). Any registered anonymizer also takes NAME:PARAM=VALUE,...
FORMS = {
    "none": ("none", (), ()),
    "mrlh": ("mrlh", ("mu_x", "mu_y", "lam"), (1, 1, 0)),
    "krr": ("krr", ("epsilon",), (1,)),
    "pl": ("planar-laplace", ("l", "r"), (1, 1)),
    "cheat": ("cheat", ("p",), (1,)),
    "kmeans": ("kmeans", ("k",), (100,)),
}


def spelled(short: str, values) -> str:
    """A contest spec from a short name and its values ('krr', (1,) -> the spec of k-RR at 1)."""
    return short + (":" + ",".join(map(str, values)) if values else "")


def forms() -> str:
    """The spellings in words, from :data:`FORMS` (for help texts and errors)."""
    return ", ".join(spelled(short, [p.upper() for p in names]) for short, (_, names, _) in FORMS.items()) + \
        "; or NAME:PARAM=VALUE,... for any registered anonymizer"


#: what ``contest run`` runs by default
DEFAULT_ANONYMIZERS = ";".join(spelled(short, values) for short, (_, _, values) in FORMS.items())


def parse_anonymizer(spec: str):
    """``"mrlh:1,1,0"`` -> MRLH(mu_x=1, mu_y=1, lam=0): a contest form (:data:`FORMS`, every value in
    order) or any registered anonymizer with PARAM=VALUE pairs (``"mrlh:lam=0.3"``), each value read
    and checked as the anonymizer declares it; an InputError lists the valid forms."""
    from ..synth import registry

    text = spec.strip()
    short, _, args = text.partition(":")
    name, positional = FORMS[short][:2] if short in FORMS else (short, ())
    if name not in registry.names("anonymizer"):
        raise InputError(f"unknown anonymizer {text!r}; expected {forms()}")
    kind = registry.get(name)
    values = [v.strip() for v in args.split(",")] if args.strip() else []
    if values and all("=" in v for v in values):
        pairs = dict(parse_assignment(v) for v in values)
    elif any("=" in v for v in values):
        raise InputError(f"anonymizer {text!r}: give every value by position or every one as PARAM=VALUE")
    elif short in FORMS and len(values) == len(positional):
        pairs = dict(zip(positional, values))
    elif short in FORMS:
        raise InputError(f"anonymizer {text!r} needs {len(positional)} parameter(s): {forms()}")
    elif values:
        raise InputError(f"anonymizer {text!r}: give its parameters as PARAM=VALUE ({', '.join(kind.declarations())})")
    else:
        pairs = {}
    try:
        return kind(**kind.parse_params(pairs))
    except InputError as exc:
        raise InputError(f"anonymizer {text!r}: {exc}") from None


def parse_anonymizers(specs: str) -> list[tuple[str, object]]:
    out = [(s.strip(), parse_anonymizer(s)) for s in specs.split(";") if s.strip()]
    if not out:
        raise InputError(f"no anonymizer given; e.g. `anonymizers` '{DEFAULT_ANONYMIZERS}'")
    labels = [label for label, _ in out]
    if len(set(labels)) != len(labels):
        raise InputError(f"an anonymizer is listed twice in {specs!r}")
    return out


@dataclass
class Entry:
    """One anonymizer's run: its anonymized and pseudonymized traces, the secret table, the attacks' outputs."""

    label: str
    anonymized: TraceSet
    published: TraceSet
    table: pd.DataFrame
    inferences: dict = field(default_factory=dict)
    row: dict = field(default_factory=dict)


def score_entry(original: TraceSet, reference: TraceSet, label: str, anonymized: TraceSet, *, seed: int,
                attacks=ATTACKS, distances: np.ndarray | None = None, event_share: float = 1.0,
                region_cap: int | None = None) -> Entry:
    """Utility, pseudonymization and every attack for one anonymized set."""
    d = scores.distance_matrix(original.space) if distances is None else distances
    published, table = pseudonymize(anonymized, seed=seed)
    entry = Entry(label, anonymized, published, table)
    entry.row = {"anonymizer": label, "utility": scores.utility(original, anonymized, distances=d)}
    for name in attacks:
        inference = attack(name, reference, published, seed=seed, **attack_options(name, event_share, region_cap))
        entry.inferences[name] = inference
        entry.row[f"reid_{name}"] = scores.reidentification(table, inference.table)
        entry.row[f"trace_{name}"] = scores.trace_inference(original, inference.traces, distances=d)
    return entry


def attack_options(name: str, event_share: float = 1.0, region_cap: int | None = None) -> dict:
    """The kit's shortcuts (contest/attacks.py) that apply to the attack ``name``: the event share to
    VisitProb only, the cap on a generalized event's regions to VisitProb and HomeProb."""
    out = {}
    if name == "visitprob" and event_share != 1:
        out["event_share"] = event_share
    if name in ("visitprob", "homeprob") and region_cap is not None:
        out["region_cap"] = region_cap
    return out


def kit_phrase(event_share: float = 1.0, region_cap: int | None = None) -> str:
    """What the attacks scored, in words, for the report and the command line."""
    visit = "every event" if event_share == 1 else f"a random {event_share:g} of the events"
    regions = ("every region of a generalized event" if region_cap is None else
               f"at most {region_cap} regions of a generalized event")
    kit = " (the organisers' kit)" if (event_share, region_cap) == (0.1, 10) else ""
    return f"VisitProb scores {visit}, HomeProb every event of 8:00-8:59; both score {regions}{kit}"


def lead(original: TraceSet, reference: TraceSet, original_name: str, reference_name: str, *, seed: int = 0,
         event_share: float = 1.0, region_cap: int | None = None) -> str:
    """The first sentence of a run's page: its users, its files and their events, its seed and what
    the attacks scored (:func:`kit_phrase`)."""
    return (f"{original.n_traces} users, original {original_name} ({original.n_events} events), reference "
            f"{reference_name} ({reference.n_events} events), seed {seed}. {kit_phrase(event_share, region_cap)}.")


def run(original: TraceSet, reference: TraceSet, anonymizers, *, seed: int = 0, progress=None,
        event_share: float = 1.0, region_cap: int | None = None) -> list[Entry]:
    """Every anonymizer (``[(label, Anonymizer)]``) through the contest; ``progress(done, total, label)``
    before each (core/progress.py);
    ``event_share`` < 1 (VisitProb) and ``region_cap`` (VisitProb and HomeProb): the organisers' kit's
    shortcuts (contest/attacks.py)."""
    check_pair(original, reference)
    d = scores.distance_matrix(original.space)
    entries, report = [], reporter(progress)
    anonymizers = list(anonymizers)
    for k, (label, anonymizer) in enumerate(anonymizers):
        report(k, len(anonymizers), label)
        anonymized = anonymizer.transform(original, seed=_seed(seed, k))
        entries.append(score_entry(original, reference, label, anonymized, seed=_seed(seed, k), distances=d,
                                   event_share=event_share, region_cap=region_cap))
    return entries


def results(entries: list[Entry]) -> pd.DataFrame:
    """results.csv: utility and every privacy score (higher is better), one row per anonymizer."""
    return pd.DataFrame([e.row for e in entries], columns=COLUMNS)


def minimum_scores(table: pd.DataFrame, attacks=ATTACKS) -> pd.DataFrame:
    """Per anonymizer: s_U, validity (s_U >= s_req) and the minimum privacy scores over the attacks."""
    return pd.DataFrame({
        "anonymizer": table["anonymizer"], "utility": table["utility"],
        "valid": table["utility"] >= scores.S_REQ,
        "reid_min": table[[f"reid_{a}" for a in attacks]].min(axis=1),
        "trace_min": table[[f"trace_{a}" for a in attacks]].min(axis=1),
    })


def describe(table: pd.DataFrame, analysis: pd.DataFrame) -> list[str]:
    """A run in lines for people: per anonymizer its utility, validity and minimum privacy scores
    (``table``: what :func:`write_run` returned), then its §5.5 analyses."""
    lines = [f"{row['anonymizer']:>16}  utility {row['utility']:.4f}{'' if row['valid'] else ' (invalid)'}  "
             f"reid_min {row['reid_min']:.4f}  trace_min {row['trace_min']:.4f}"
             for _, row in minimum_scores(table).iterrows()]
    return lines + [f"{row.anonymizer:>16}  POI accuracy {row.poi_accuracy:.4f}  TP-TV-Top50 {row.tp_tv_top50:.4f}  "
                    f"TM-EMD {row.tm_emd:.4f} km" for row in analysis.itertuples()]


def check_pair(original: TraceSet, reference: TraceSet) -> None:
    original.require_exact("the original traces")
    reference.require_exact("the reference traces")
    check_same_frame(original, reference, ("original", "reference"), time=False)
    unknown = set(original.users["user_id"]) - set(reference.users["user_id"])
    if unknown:
        raise InputError(f"{len(unknown)} users of the original traces have no reference trace "
                         f"(e.g. {sorted(unknown)[0]})")


def _seed(seed: int, k: int) -> int:
    return int(np.random.SeedSequence(seed, spawn_key=(60, k)).generate_state(1)[0])


def write_run(entries: list[Entry], out, *, times=None, overwrite: bool = False, title: str | None = None,
              lead: str = "", analysis: pd.DataFrame | None = None, settings: dict | None = None) -> "pd.DataFrame":
    """``out/results.csv`` (exact columns COLUMNS), ``out/settings.json`` (how it was run: seed,
    anonymizers, the attacks' event share), ``out/report.html`` (Figure 8) and, per
    anonymizer, its anonymized file, the published (pseudonymized) file and the secret ID table,
    written atomically: an interrupted run leaves no directory. With ``analysis`` (the §5.5
    table of contest/analyses.py) also ``out/analyses.csv`` and its section of the page."""
    from pathlib import Path

    from .page import contest_html
    from ..core.files import atomic_output
    from .files import write_id_table, write_traces

    import json

    table = results(entries)
    minimum = minimum_scores(table)
    with atomic_output(Path(out), overwrite, directory=True) as tmp:
        table.to_csv(tmp / "results.csv", index=False, float_format="%.6f", lineterminator="\n")
        if settings is not None:
            (tmp / "settings.json").write_text(json.dumps(settings, indent=2))
        if analysis is not None:
            analysis.to_csv(tmp / "analyses.csv", index=False, float_format="%.6f", lineterminator="\n")
        files = tmp / "files"
        files.mkdir()
        for e in entries:
            stem = "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in e.label)
            write_traces(e.anonymized, files / f"anotraces_{stem}.csv", times)
            write_traces(e.published, files / f"pubtraces_{stem}.csv", times, id_column="pse_id")
            write_id_table(e.table, files / f"ptable_{stem}.csv")
        notes = [f"{e.label}: {len(e.published.users)} traces, {int((e.anonymized.loc == -1).sum())} deleted and "
                 f"{int((e.anonymized.loc < -1).sum())} generalized events" for e in entries]
        html = contest_html(table, minimum, ATTACKS, title=title or "PWS Cup contest run", lead=lead, notes=notes,
                            analysis=analysis)
        (tmp / "report.html").write_text(html)
    return table
