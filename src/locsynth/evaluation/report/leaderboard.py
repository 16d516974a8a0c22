"""leaderboard.html: the benchmark's page (benchmark/runs.py). Per dataset, one table of mean ± standard
deviation over the repeats for every method and epsilon, ranks, utility against epsilon, and the
privacy-utility frontier.

Honest highlights (as the comparison page, compare.py): rows are grouped by kind, and the
baselines, which publish the real traces as they are or random ones, are shown apart, never
ranked and never marked best. The best mean of a column is marked among the methods that make a
privacy claim or protect otherwise (synthesizers, anonymizers); a rank is the mean, over the
utility columns, of a row's rank in each (1: best).
"""

from __future__ import annotations

import math

import jinja2
import numpy as np
import pandas as pd

from ...core.version import __version__
from . import plots
from .compare import KIND_HEADINGS, KINDS
from .page import page
from .. import suite
from .labels import (attack_keys, flavour_description, format_metric, higher_is_better, metric_description,
                     metric_label)

#: the seeds' own metrics shown beside the standard suite (all of them are in results.csv), then
#: the trip times' divergences
SEED_METRICS = ("tp_tv", "vf_tv", "trip_length_jsd", "trip_sd_emd_m",
                "trip_start_hour_jsd", "trip_duration_jsd", "trip_speed_jsd",
                # the realism of trips (metrics/realism.py: on the map, within the bound, lasting as long)
                "realism_far_cell", "realism_far_km", "realism_fast_steps", "realism_duration_factor",
                "realism_one_point")
#: the built-in attacks' metrics shown, the first on the frontier's x axis when present (every method has MIA);
#: on trips, the distance MIA's TPR at 0.1% FPR besides its advantage (issue 48: the most exposed people)
ATTACKS = ("mia_advantage", "reid_rate", "dmia_advantage", "dmia_tpr_at_fpr_0001")


def _standard_keys() -> list[str]:
    return [k for k, (g, _) in suite.catalogue().items() if g.name == "standard"]


def _added(kind: str) -> list[str]:
    """The featured metrics of the groups of ``kind`` that are not built in (plugins, register()):
    the page shows them all."""
    return [k for k, (g, m) in suite.catalogue().items() if g.name not in suite.BUILT_IN and g.kind == kind
            and (m.featured or kind == "attack")]


def _attacks() -> list[str]:
    """The attacks' columns: the built-in two, then the first metric of every other attack group
    (a new attack shows on the page without an edit here) and every metric of a plugin's."""
    firsts = [g.metrics[0].key for g in suite.groups() if g.kind == "attack" and g.metrics]
    return list(dict.fromkeys([*ATTACKS, *firsts, *_added("attack")]))
#: the utility on the frontier's y axis: AdaTrace's first metric
FRONTIER_UTILITY = "query_error"


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1; NaN for one repeat) and count of every (dataset, method,
    kind, epsilon, metric) over the repeats."""
    keys = ["dataset", "method", "kind", "epsilon", "metric"]
    frame = results.assign(epsilon=results["epsilon"].astype(float))
    return (frame.groupby(keys, dropna=False)["value"].agg(["mean", "std", "count"]).reset_index())


def row_name(method: str, epsilon) -> str:
    return method if epsilon is None or not math.isfinite(float(epsilon)) else f"{method} ε={float(epsilon):g}"


def dataset_table(summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict, list[str], list[str]]:
    """One dataset's (means, sds, kinds, utility columns, privacy columns): rows 'method ε=..'."""
    frame = summary.assign(row=[row_name(m, e) for m, e in zip(summary["method"], summary["epsilon"])])
    means = frame.pivot_table(index="row", columns="metric", values="mean", dropna=False, sort=False)
    sds = frame.pivot_table(index="row", columns="metric", values="std", dropna=False, sort=False)
    kinds = dict(zip(frame["row"], frame["kind"]))
    present = [c for c in means.columns if means[c].notna().any()]
    utility = [k for k in [*_standard_keys(), *SEED_METRICS, *_added("utility")] if k in present]
    privacy = [k for k in _attacks() if k in present]
    return means, sds.reindex(index=means.index, columns=means.columns), kinds, utility, privacy


def ranks(means: pd.DataFrame, kinds: dict, utility: list[str]) -> pd.Series:
    """Mean rank over the utility columns among the rows that are not baselines (1: best)."""
    protecting = [r for r in means.index if kinds[r] != "baseline"]
    if not protecting or not utility:
        return pd.Series(np.nan, index=means.index)
    table = means.loc[protecting, utility]
    signed = table.apply(lambda col: -col if higher_is_better(col.name) else col)
    return signed.rank(axis=0, method="average").mean(axis=1).reindex(means.index)


def _best(means: pd.DataFrame, kinds: dict, columns: list[str]) -> dict:
    protecting = means.loc[[r for r in means.index if kinds[r] != "baseline"]]
    if len(protecting) < 2:
        return {}
    return {c: (protecting[c].max() if higher_is_better(c) else protecting[c].min()) for c in columns}


def _cell(key: str, mean: float, sd: float, best) -> dict:
    text = format_metric(key, mean)
    spread = "" if not math.isfinite(sd) else f"± {format_metric(key, sd)}"
    return {"text": text, "sd": spread, "best": best is not None and math.isfinite(mean) and mean == best}


def table_groups(means, sds, kinds, columns) -> list[dict]:
    """The table's rows grouped by kind, each group ordered by rank."""
    rank = ranks(means, kinds, [c for c in columns if c not in attack_keys()])
    best = _best(means, kinds, columns)
    groups = []
    for kind in KINDS:
        names = sorted((r for r in means.index if kinds[r] == kind),
                       key=lambda r: (rank[r] if math.isfinite(rank[r]) else math.inf, r))
        rows = [{"name": r, "rank": "—" if not math.isfinite(rank[r]) else f"{rank[r]:.1f}",
                 "baseline": kind == "baseline",
                 "cells": [_cell(c, float(means.at[r, c]), float(sds.at[r, c]),
                                 None if kind == "baseline" else best.get(c)) for c in columns]}
                for r in names]
        if rows:
            groups.append({"heading": KIND_HEADINGS[kind], "rows": rows})
    return groups


def epsilon_figure(summary: pd.DataFrame) -> bytes | None:
    """Each standard metric against epsilon, one line per method (plots.epsilon_png)."""
    panels = []
    for key in [k for k in _standard_keys() if k in set(summary["metric"])]:
        part = summary[summary["metric"] == key]
        lines = []
        for (method, kind), rows in part.groupby(["method", "kind"], sort=True):
            rows = rows.sort_values("epsilon")
            lines.append({"name": method, "epsilon": rows["epsilon"].to_numpy(float), "mean": rows["mean"].to_numpy(),
                          "sd": rows["std"].to_numpy(), "baseline": kind == "baseline"})
        arrow = "↑" if higher_is_better(key) else "↓"
        panels.append((f"{metric_label(key)} {arrow}", lines))
    return plots.epsilon_png(panels) if panels else None


def frontier_figure(means: pd.DataFrame, kinds: dict) -> bytes | None:
    """Utility loss (query error) against each attack's success, one point per method and epsilon,
    with the Pareto frontier of the methods that protect."""
    if FRONTIER_UTILITY not in means.columns:
        return None
    panels = []
    for attack in [a for a in _attacks() if a in means.columns]:
        pts = [(r, float(means.at[r, attack]), float(means.at[r, FRONTIER_UTILITY]), kinds[r] == "baseline")
               for r in means.index
               if math.isfinite(means.at[r, attack]) and math.isfinite(means.at[r, FRONTIER_UTILITY])]
        if pts:
            panels.append((metric_label(attack), pts))
    if not panels:
        return None
    return plots.tradeoff_png(panels[0][1], panels[0][0], metric_label(FRONTIER_UTILITY), panels=panels[1:],
                              frontier=True)


PAGE = page("""<p class="note">Each cell is the mean ± standard deviation over {{ repeats }} of a metric of the synthetic set
against the dataset's real test traces; every synthetic set has the test set's number of traces. Lower is better
but in the columns marked &uarr;. The best mean of each column is highlighted among the methods that protect;
the baselines (real traces as they are, or random ones) are shown apart and never marked best. Rank: the mean of a
row's ranks over the utility columns. Every metric of every run is in results.csv.</p>
{% if flavour %}<p class="note">Standard suite (query to hotspot error): the <b>{{ flavour.name }}</b> flavour,
{{ flavour.description }} (the flavours and how they differ: docs/benchmark.md).</p>{% endif %}
{% for d in datasets %}
<h2>{{ d.name }}</h2>
<div class="wide">
<table>
<tr><th>Method</th><th title="mean rank over the utility columns">rank</th>{% for c in d.columns %}<th title="{{ c.description }}">{{ c.label }}{% if c.higher %} &uarr;{% endif %}</th>{% endfor %}</tr>
{% for group in d.groups %}
<tr class="group"><th colspan="{{ d.columns | length + 2 }}">{{ group.heading }}</th></tr>
{% for row in group.rows %}
<tr{% if row.baseline %} class="baseline"{% endif %}><td>{{ row.name }}</td><td>{{ row.rank }}</td>
{% for cell in row.cells %}<td{% if cell.best %} class="best"{% endif %}>{{ cell.text }}<span class="sd">{{ cell.sd }}</span></td>{% endfor %}</tr>
{% endfor %}
{% endfor %}
</table>
</div>
{% if d.skipped %}<p class="note">Not run here: {% for methods, reason in d.skipped %}{{ methods }} ({{ reason }}){% if not loop.last %}; {% endif %}{% endfor %}.</p>{% endif %}
{% if d.epsilon %}
<figure><img src="{{ d.epsilon }}" alt="utility against epsilon on {{ d.name }}">
<figcaption><b>Utility against epsilon on {{ d.name }}.</b> One line per method swept over epsilon (mean ± standard
deviation over the repeats); dashed lines for methods run once without an epsilon, grey for the baselines.</figcaption></figure>
{% endif %}
{% if d.frontier %}
<figure><img src="{{ d.frontier }}" alt="privacy-utility frontier on {{ d.name }}">
<figcaption><b>Privacy-utility frontier on {{ d.name }}.</b> Query error against each attack's success, one point per
method and epsilon (means over the repeats); the line joins the methods that protect and that no other beats on
both axes; grey squares are the baselines. Lower-left is better.</figcaption></figure>
{% endif %}
{% endfor %}
<p class="note">Generated by locsynth {{ version }}. This page needs no network: the plots are embedded.</p>
""", css="""main { max-width: 1400px; }
table { font-size: 0.8em; }
th, td { padding: 0.25em 0.45em; }
td { white-space: nowrap; }
td .sd { display: block; color: #888; font-size: 0.85em; }
tr.baseline td { color: #777; }
td.best { background: #dff0d8; font-weight: 600; }
tr.group th { text-align: left; background: #fff; color: #444; font-weight: 600; padding-top: 0.9em;
              border-bottom: 1px solid #bbb; }
""")

_PAGE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                           lstrip_blocks=True).from_string(PAGE)


def _by_reason(skipped: list[dict]) -> list[tuple[str, str]]:
    """("tpm, ppmtf, sglt", reason): the methods skipped for one reason named once."""
    reasons: dict[str, list[str]] = {}
    for s in skipped:
        reasons.setdefault(s["reason"], []).append(s["method"])
    return [(", ".join(methods), reason) for reason, methods in reasons.items()]


def leaderboard_html(results: pd.DataFrame, skipped: list[dict] | None = None,
                     title: str = "locsynth benchmark", standard_flavour: str | None = None) -> str:
    """The page for ``results`` (benchmark.collect's frame); ``skipped``: (dataset, method, reason);
    ``standard_flavour``: the standard suite's flavour, named on the page."""
    summary = summarise(results)
    datasets = []
    for name, part in summary.groupby("dataset", sort=False):
        means, sds, kinds, utility, privacy = dataset_table(part)
        columns = utility + privacy
        epsilon, frontier = epsilon_figure(part), frontier_figure(means, kinds)
        datasets.append({
            "name": name, "groups": table_groups(means, sds, kinds, columns),
            "columns": [{"label": metric_label(c),
                         "description": metric_description(c, {"standard_flavour": standard_flavour}),
                         "higher": higher_is_better(c)} for c in columns],
            "skipped": _by_reason([s for s in skipped or [] if s["dataset"] == name]),
            "epsilon": plots.data_uri(epsilon) if epsilon else None,
            "frontier": plots.data_uri(frontier) if frontier else None})
    repeats = int(results.groupby(["dataset", "method", "epsilon"], dropna=False)["repeat"].nunique().max()) \
        if len(results) else 0
    flavour = None if standard_flavour is None else {"name": standard_flavour,
                                                     "description": flavour_description(standard_flavour)}
    return _PAGE.render(title=title, datasets=datasets, repeats=f"{repeats} repeat{'s' if repeats != 1 else ''}",
                        version=__version__, flavour=flavour)
