"""Compare several evaluations: one table row per synthetic set, a privacy-utility scatter, a page.

Each evaluation is the ``metrics.json`` that :meth:`locsynth.evaluation.evaluate.Report.to_json` writes:
metric keys mapping to ``{"synthetic", "training", "uniform"}`` plus ``_meta``. The baselines
(training traces released as they are, uniformly random traces) come from the first evaluation;
they only make sense when every evaluation used the same training and test sets and options, and
a warning says so when their baselines differ.

Evaluations of trips (paper 004) put their metrics side by side in the same table and their
per-hour curves on one plot each (:func:`trip_figures`): Figure 3's trip-length divergence and
Figure 4's source-destination EMD, one line per set (e.g. NGRAM against the DP trip synthesizer).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

from ...core.version import __version__
from ...core.errors import InputError
from ...core.files import atomic_output
from . import plots
from .labels import attack_headlines, attack_keys, format_metric, higher_is_better, metric_description, metric_label, utility_keys
from .page import page

#: the rows that hold the baselines of the first evaluation
BASELINE_ROWS = {"training": "Training", "uniform": "Uniform"}
FIELDS = ("synthetic", "training", "uniform")
#: how rows are grouped, in this order: methods that protect (synthesizers, anonymizers), then the
#: baselines, which release real or random traces and are never marked best
KINDS = ("synthesizer", "anonymizer", "baseline")
KIND_HEADINGS = {"synthesizer": "Synthesizers", "anonymizer": "Anonymizers",
                 "baseline": "Baselines: real traces released as they are, or random ones (never marked best)"}


def method_kind(method: str | None) -> str:
    """'synthesizer', 'anonymizer' or 'baseline' for a registered method name (unknown names, as
    an external set's: 'synthesizer')."""
    from ...synth import registry

    if not method or method not in registry.names():
        return "synthesizer"
    if registry.get(method).tags.baseline:
        return "baseline"
    return registry.method(method).kind


def run_meta(data) -> dict:
    """``_meta`` of a loaded metrics.json, or a Report's ``meta``."""
    meta = getattr(data, "meta", None) if not isinstance(data, dict) else data.get("_meta")
    return meta or {}


def load_metrics(path: str | Path) -> dict:
    """A metrics.json file, or the one in a directory, checked to hold metric entries.

    Raises
    ------
    InputError
        When the file is missing, is not JSON, or does not hold ``{"synthetic", "training",
        "uniform"}`` entries.
    """
    path = Path(path)
    file = path / "metrics.json" if path.is_dir() else path
    if not file.is_file():
        where = f"no metrics.json in the directory {path}" if path.is_dir() else f"{path} does not exist"
        raise InputError(f"{where}; expected the metrics.json written by 'locsynth evaluate'")
    try:
        data = json.loads(file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{file} is damaged: not valid JSON ({exc})") from None
    _check_metrics(data, str(file))
    return data


def _check_metrics(data, name: str) -> dict[str, dict]:
    """The metric entries of a loaded metrics.json (everything but ``_meta``), or an InputError."""
    if not isinstance(data, dict):
        raise InputError(f"{name} is not a locsynth metrics.json: expected a JSON object, found "
                         f"{type(data).__name__}")
    entries = {k: v for k, v in data.items() if not k.startswith("_")}
    bad = [k for k, v in entries.items() if not isinstance(v, dict) or not set(v) <= set(FIELDS)]
    if bad or not entries:
        found = f"entries {', '.join(map(repr, bad[:3]))} are not" if bad else "it has no metric entries,"
        raise InputError(f"{name} is not a locsynth metrics.json: {found} metric entries of the form "
                         f'{{"synthetic": x, "training": x, "uniform": x}}')
    for key, entry in entries.items():
        for field, value in entry.items():
            if value is not None and not isinstance(value, (int, float)):
                raise InputError(f"{name}: {key}.{field} is {value!r}; expected a number or null")
    return entries


def _float(value) -> float:
    return float("nan") if value is None else float(value)


def compare(reports: dict[str, dict]) -> pd.DataFrame:
    """One row per synthetic set, plus the Training and Uniform baselines of the first report.

    Parameters
    ----------
    reports : dict of name -> loaded metrics.json (see :func:`load_metrics`)
        A :class:`~locsynth.evaluation.evaluate.Report` is accepted too (its ``metrics`` are used).

    Returns
    -------
    DataFrame of shape (len(reports) + 2, n_metrics) at most
        Index ``set``: the report names in the given order, then 'Training' and 'Uniform' (a
        baseline without any value, as the uniform one of trips, is left out);
        columns: the metric keys (utility first, trips' next, then privacy, then any others);
        missing values are NaN. Lower is better in every column but those of
        those whose metric declares the goal 'higher' (locsynth.evaluation.suite).
    """
    if not reports:
        raise InputError("compare needs at least one metrics.json")
    entries = {}
    for name, data in reports.items():
        name = str(name)
        if name in BASELINE_ROWS.values():
            raise InputError(f"the name {name!r} is reserved for a baseline row; rename that set")
        entries[name] = _check_metrics(getattr(data, "metrics", data), repr(name))
    keys = []
    for metrics in entries.values():
        keys += [k for k in metrics if k not in keys]
    ordered = [k for k in [*utility_keys(), *attack_keys()] if k in keys]
    ordered += [k for k in keys if k not in ordered]
    rows = {name: [_float((m.get(k) or {}).get("synthetic")) for k in ordered] for name, m in entries.items()}
    first_name, first = next(iter(entries.items()))
    for field, row_name in BASELINE_ROWS.items():
        values = [_float((first.get(k) or {}).get(field)) for k in ordered]
        if not all(np.isnan(values)):                    # trips have no uniform baseline
            rows[row_name] = values
    _warn_on_different_baselines(first_name, first, entries)
    kinds = {str(name): method_kind(run_meta(data).get("method") or str(name)) for name, data in reports.items()}
    kinds.update({row: "baseline" for row in BASELINE_ROWS.values() if row in rows})
    order = sorted(rows, key=lambda name: KINDS.index(kinds[name]))     # stable: given order within a kind
    table = pd.DataFrame.from_dict({name: rows[name] for name in order}, orient="index", columns=ordered)
    table.index.name = "set"
    table.attrs["kinds"] = {name: kinds[name] for name in order}
    return table


def row_kinds(table: pd.DataFrame) -> dict[str, str]:
    """Each row's kind (:data:`KINDS`): from :func:`compare`, else the baseline rows by name."""
    known = table.attrs.get("kinds") or {}
    return {str(name): known.get(str(name), "baseline" if name in BASELINE_ROWS.values() else "synthesizer")
            for name in table.index}


def _warn_on_different_baselines(first_name: str, first: dict, entries: dict) -> None:
    for name, metrics in entries.items():
        differ = []
        for key, entry in metrics.items():
            for field in ("training", "uniform"):
                a, b = _float((first.get(key) or {}).get(field)), _float(entry.get(field))
                if not (np.isnan(a) or np.isnan(b) or np.isclose(a, b, rtol=1e-9, atol=1e-12)):
                    differ.append(f"{key} ({field})")
        if differ:
            warnings.warn(f"the baselines of {name!r} differ from those of {first_name!r} in "
                          f"{', '.join(differ[:4])}{', ...' if len(differ) > 4 else ''}: they were evaluated "
                          f"on other training/test sets or options, so their rows are not comparable",
                          UserWarning, stacklevel=3)


def tradeoff_plot(table: pd.DataFrame, utility: str = "tp_tv", privacy: str = "reid_rate",
                  path: str | Path | None = None, overwrite: bool = True,
                  also: tuple[str, ...] | None = None) -> bytes:
    """Utility loss against privacy risk, one labelled point per row (paper 001, Figure 7): a panel
    for ``privacy`` (e.g. the re-identification rate), and one for each of ``also`` that the table
    has (membership inference, which every method has, where virtual users cannot be
    re-identified). y is the ``utility`` column (e.g. TP-TV); baselines are grey squares.
    Lower-left is better. Rows missing a panel's values are left out of it. ``also`` None: membership
    inference and every other attack's first metric (the attacks on trajectories among them).

    Returns
    -------
    bytes
        The PNG, also written to ``path`` when given.
    """
    for column, what in ((utility, "utility"), (privacy, "privacy")):
        if column not in table.columns:
            raise InputError(f"no {what} metric {column!r} in the table; expected one of "
                             f"{', '.join(map(str, table.columns))}")
    kinds = row_kinds(table)
    if also is None:
        also = ("mia_advantage", *attack_headlines())

    def points(x_key):
        return [(str(name), float(row[x_key]), float(row[utility]), kinds[str(name)] == "baseline")
                for name, row in table.iterrows()
                if math.isfinite(float(row[x_key])) and math.isfinite(float(row[utility]))]

    panels = [(metric_label(key), points(key)) for key in dict.fromkeys((privacy, *[k for k in also if k != privacy]))
              if key in table.columns]
    panels = [(label, pts) for label, pts in panels if pts]
    if not panels:
        raise InputError(f"no row has both {privacy} and {utility}; run the evaluations with the attacks")
    png = plots.tradeoff_png(panels[0][1], panels[0][0], metric_label(utility), panels=panels[1:])
    if path is not None:
        with atomic_output(Path(path), overwrite, directory=False) as tmp:
            tmp.write_bytes(png)
    return png


PAGE = page("""<p class="note">Each row is one synthetic set evaluated against the same real test traces, grouped by kind:
synthesizers, anonymizers, then the baselines, which release the real traces as they are (training, none,
cheat) or random ones (uniform) and show what no protection, or no utility, looks like.
Lower is better in every column{% if any_higher %} but those marked &uarr;, where higher is better{% endif %}; the
best set in each column among those that protect is highlighted, never a baseline.</p>
<div class="wide">
<table>
<tr><th>Set</th>{% for c in columns %}<th title="{{ c.description }}">{{ c.label }}{% if c.higher %} &uarr;{% endif %}</th>{% endfor %}</tr>
{% for group in groups %}
<tr class="group"><th colspan="{{ columns | length + 1 }}">{{ group.heading }}</th></tr>
{% for row in group.rows %}
<tr{% if row.baseline %} class="baseline"{% endif %}><td>{% if row.link %}<a href="{{ row.link }}">{{ row.name }}</a>{% else %}{{ row.name }}{% endif %}</td>
{% for cell in row.cells %}<td{% if cell.best %} class="best"{% endif %}>{{ cell.text }}</td>{% endfor %}</tr>
{% endfor %}
{% endfor %}
</table>
</div>
{% if notes %}
<h2>Methods</h2>
<ul>
{% for note in notes %}<li class="note">{{ note }}</li>
{% endfor %}
</ul>
{% endif %}
{% for fig in figures %}
<figure>
<img src="{{ fig.uri }}" alt="{{ fig.heading }}">
<figcaption><b>{{ fig.heading }}.</b> {{ fig.caption }}</figcaption>
</figure>
{% endfor %}
{% if uri %}
<figure>
<img src="{{ uri }}" alt="privacy-utility trade-off">
<figcaption>Utility loss against privacy risk, one point per set, one panel per attack (sets of virtual users
cannot be re-identified, so they appear in the membership-inference panel only){% if has_baselines %}; the
baselines are grey squares{% endif %}. Lower-left is better: little utility lost and little learnt by the attacker.</figcaption>
</figure>
{% endif %}
<p class="note">Generated by locsynth {{ version }}. This page needs no network: the plots are embedded.</p>
""", css="""tr.baseline td { color: #777; }
td.best { background: #dff0d8; font-weight: 600; }
tr.group th { text-align: left; background: #fff; color: #444; font-weight: 600; padding-top: 0.9em;
              border-bottom: 1px solid #bbb; }
""")

_PAGE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                           lstrip_blocks=True).from_string(PAGE)


def compare_html(table: pd.DataFrame, png: bytes | None = None, title: str | None = None,
                 notes: list[str] | None = None, links: dict[str, str] | None = None,
                 figures: list[dict] | None = None) -> str:
    """A small self-contained page: the :func:`compare` table grouped by kind (:data:`KINDS`) and
    the :func:`tradeoff_plot` PNG, with ``notes`` (one line per set), ``links`` (set name -> its
    own report) and ``figures`` (:func:`trip_figures`). The best value of a column is marked among
    the sets that protect, never among the baselines."""
    kinds = row_kinds(table)
    protecting = table.loc[[n for n in table.index if kinds[str(n)] != "baseline"]]
    higher = [c for c in table.columns if higher_is_better(c)]
    best = pd.Series(dtype=float)
    if len(protecting):
        best = protecting.min(axis=0, skipna=True)
        best[higher] = protecting[higher].max(axis=0, skipna=True)
    groups = []
    for kind in KINDS:
        rows = []
        for name, row in table.iterrows():
            if kinds[str(name)] != kind:
                continue
            baseline = kind == "baseline"
            cells = [{"text": format_metric(str(c), row[c]),
                      "best": (not baseline and len(protecting) > 1 and math.isfinite(row[c]) and row[c] == best[c])}
                     for c in table.columns]
            rows.append({"name": str(name), "baseline": baseline, "cells": cells,
                         "link": (links or {}).get(str(name))})
        if rows:
            groups.append({"heading": KIND_HEADINGS[kind], "rows": rows})
    columns = [{"label": metric_label(str(c)), "description": metric_description(str(c)), "higher": c in higher}
               for c in table.columns]
    shown = [{**fig, "uri": plots.data_uri(fig["png"])} for fig in figures or []]
    return _PAGE.render(title=title or "locsynth comparison", columns=columns, groups=groups,
                        uri=plots.data_uri(png) if png else None, version=__version__, notes=notes or [],
                        has_baselines="baseline" in kinds.values(), figures=shown, any_higher=bool(higher))


def _trips_meta(data) -> dict | None:
    """``_meta['trips']`` of a loaded metrics.json (or a Report's ``meta['trips']``)."""
    return run_meta(data).get("trips")


def trip_figures(reports: dict[str, dict]) -> list[dict]:
    """Paper 004 Figures 3 and 4 over several evaluations of trips: per hour, one line per set
    (a set without hours, as NGRAM's, as one dashed value) and the first evaluation's training
    trips, in orange.

    Parameters
    ----------
    reports : dict of name -> loaded metrics.json (or :class:`~locsynth.evaluation.evaluate.Report`)

    Returns
    -------
    list of dict with keys ``file`` (a PNG file name), ``heading``, ``caption`` and ``png`` (bytes);
    empty when no evaluation is of trips.
    """
    runs = {str(name): t for name, data in reports.items() if (t := _trips_meta(data))}
    if not runs:
        return []
    first = next(iter(runs.values()))
    jsd = "JS distance" if first.get("jsd") == "distance" else "JS divergence (bits)"
    figures = []
    for key, file, heading, y_label, what in (
            ("length_jsd", "trip_length_jsd.png", "Trip-length divergence per hour (paper 004 Figure 3)", jsd,
             f"the {jsd} between the trip-length distributions"),
            ("sd_emd_m", "trip_sd_emd.png", "Source-destination EMD per hour (paper 004 Figure 4)", "EMD (metres)",
             "the earth mover's distance in metres between the (source, destination) distributions")):
        curves = {name: t[key]["synthetic"] for name, t in runs.items() if (t.get(key) or {}).get("synthetic")}
        training = (first.get(key) or {}).get("training")
        if training:
            curves[BASELINE_ROWS["training"]] = training
        if not curves:
            continue
        png = plots.hourly_png(curves, y_label, heading.split(" (")[0],
                               colors={BASELINE_ROWS["training"]: plots.COLORS["training"]})
        figures.append({"file": file, "heading": heading, "png": png, "caption": (
            f"Per hour of the day, {what} of each set's trips and the real test trips of that hour; lower is better. "
            f"A set without hours is one dashed line. Training: the first evaluation's training trips released "
            f"as they are.")})
    return figures


#: the trade-off of sets of trips: the standard suite's first metric against every attack's first
TRIP_UTILITY, TRIP_PRIVACY = "query_error", "dmia_advantage"


def comparison(reports: dict[str, dict], *, utility: str = "tp_tv", privacy: str = "reid_rate",
               title: str | None = None) -> tuple[pd.DataFrame, dict[str, bytes | str]]:
    """Everything ``locsynth compare`` writes besides compare.csv: (the :func:`compare` table,
    file name -> content). The files are ``tradeoff.png`` (:func:`tradeoff_plot`; when every
    evaluation is of trips, the query error against the attacks on trajectories, where they ran), the
    :func:`trip_figures` when some are of trips, and ``compare.html`` showing them all."""
    table = compare(reports)
    figures = trip_figures(reports)
    files: dict[str, bytes | str] = {}
    png = None
    if not figures or not all(_trips_meta(data) for data in reports.values()):
        png = files["tradeoff.png"] = tradeoff_plot(table, utility=utility, privacy=privacy)
    elif {TRIP_UTILITY, TRIP_PRIVACY} <= set(table.columns):
        # every evaluation is of trips: the trip attacks against the standard suite's query error
        png = files["tradeoff.png"] = tradeoff_plot(
            table, utility=TRIP_UTILITY if utility == "tp_tv" else utility,
            privacy=TRIP_PRIVACY if privacy == "reid_rate" else privacy)
    files.update({fig["file"]: fig["png"] for fig in figures})
    files["compare.html"] = compare_html(table, png, title=title, figures=figures)
    return table, files
