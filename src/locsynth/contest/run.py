"""The judge's workflow (paper 003 §3.4, Figure 5): anonymize, score utility, pseudonymize, attack,
score privacy; one table row per anonymizer (the preliminary experiments of §4, Figure 8).

Anonymizer specs (``;``-separated in ``contest run``): ``none``, ``mrlh:MU_X,MU_Y,LAMBDA``,
``krr:EPSILON``, ``pl:L,R_KM``, ``cheat:P``, ``kmeans:K``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..traces import TraceSet, check_same_frame
from . import scores
from .attacks import ATTACKS, attack
from .pseudonymize import pseudonymize

COLUMNS = ["anonymizer", "utility"] + [f"reid_{a}" for a in ATTACKS] + [f"trace_{a}" for a in ATTACKS]
#: the contest's short names for registered anonymizers (paper 003 §4.1's "PL")
ALIASES = {"pl": "planar-laplace"}
#: how many values the contest's forms give (the judge's syntax: every one, in order)
ARITY = {"none": 0, "mrlh": 3, "krr": 1, "planar-laplace": 2, "cheat": 1, "kmeans": 1}
FORMS = ("NAME[:VALUE,...] with NAME a registered anonymizer (locsynth methods) or pl for planar-laplace, "
         "the values its first parameters in order: none, mrlh:MU_X,MU_Y,LAMBDA, krr:EPSILON, pl:L,R_KM, cheat:P, "
         "kmeans:K")


def parse_anonymizer(spec: str):
    """``"mrlh:1,1,0"`` -> MRLH(mu_x=1, mu_y=1, lam=0.0): a registered anonymizer by name (or a
    contest alias, :data:`ALIASES`) with its first constructor parameters in order, converted to
    the types of their defaults; an InputError lists the valid forms."""
    from .. import registry

    text = spec.strip()
    name, _, args = text.partition(":")
    name = ALIASES.get(name, name)
    if name not in registry.names("anonymizer"):
        raise InputError(f"unknown anonymizer {text!r}; expected {FORMS}")
    kind = registry.get(name)
    params = list(kind.hyperparameters().values())
    values = [v.strip() for v in args.split(",")] if args.strip() else []
    if name in ARITY and len(values) != ARITY[name]:
        raise InputError(f"anonymizer {text!r} needs {ARITY[name]} parameter(s): {FORMS}")
    if len(values) > len(params):
        raise InputError(f"anonymizer {text!r} takes at most {len(params)} parameter(s) "
                         f"({', '.join(p.name for p in params) or 'none'})")
    kwargs = {}
    for param, value in zip(params, values):
        convert = type(param.default) if param.default is not None else float
        try:
            kwargs[param.name] = (value.lower() in ("1", "true", "yes")) if convert is bool else convert(value)
        except ValueError:
            raise InputError(f"anonymizer {text!r}: {param.name} = {value!r} is not a {convert.__name__}") from None
    return kind(**kwargs)


def parse_anonymizers(specs: str) -> list[tuple[str, object]]:
    out = [(s.strip(), parse_anonymizer(s)) for s in specs.split(";") if s.strip()]
    if not out:
        raise InputError("no anonymizer given; e.g. --anonymizers 'none;mrlh:1,1,0;krr:1'")
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


def run(original: TraceSet, reference: TraceSet, anonymizers, *, seed: int = 0, progress=None,
        event_share: float = 1.0, region_cap: int | None = None) -> list[Entry]:
    """Every anonymizer (``[(label, Anonymizer)]``) through the contest; ``progress(label)`` before each;
    ``event_share`` < 1 (VisitProb) and ``region_cap`` (VisitProb and HomeProb): the organisers' kit's
    shortcuts (contest/attacks.py)."""
    check_pair(original, reference)
    d = scores.distance_matrix(original.space)
    entries = []
    for k, (label, anonymizer) in enumerate(anonymizers):
        if progress is not None:
            progress(label)
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
    from ..traces import atomic_output
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
