"""report.html: one self-contained page (inline CSS, plots as base64 PNG, no network needed).

:func:`render_html` lays out what :func:`locsynth.evaluation.evaluate.evaluate` measured: the counts compared,
a utility table and a privacy table against the training and uniform baselines, a summary
sentence, and the plots drawn by :mod:`locsynth.evaluation.report.plots` from ``Report.details``. Every
piece of text goes through Jinja's autoescaping.
"""

from __future__ import annotations

import math

import jinja2

from ...core.version import __version__
from ...data.modes import Bounds
from ...privacy.noise import describe_noise
from . import plots
from .page import page
from .. import suite
from .labels import (attack_keys, flavour_description, format_metric, format_value, higher_is_better,
                     metric_description, metric_label, utility_keys)

#: the report's rules on top of report.page.BASE_CSS: left-aligned tables with numbers in .num cells
CSS = """h1 { margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
p.lead { color: #555; margin-top: 0; }
th, td { text-align: left; vertical-align: top; font-variant-numeric: normal; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.best { background: #dff0d8; font-weight: 600; }
td.desc { color: #666; font-size: 0.9em; }
.summary { background: #eef4fb; border-left: 4px solid #1f77b4; padding: 0.6em 1em; }
figure { margin: 1em 0 1.6em; }
figcaption { margin-top: 0.3em; max-width: 60em; }
.note { color: #666; }
details { margin-top: 1em; font-size: 0.9em; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""

TEMPLATE = """{% macro table(rows, uniform_header="Uniform") %}
<table>
<tr><th>Metric</th><th class="num">Synthetic</th><th class="num">Training</th><th class="num">{{ uniform_header }}</th>
<th>What it measures</th></tr>
{% for row in rows %}
<tr><td>{{ row.label }}</td>
{% for cell in row.cells %}<td class="num{% if cell.best %} best{% endif %}">{{ cell.text }}</td>{% endfor %}
<td class="desc">{{ row.description }}</td></tr>
{% endfor %}
</table>
{% endmacro %}
""" + page("""<p class="lead">{{ compared }}</p>
{% if counts %}
<table>
<tr><th>Set</th><th class="num">Users</th><th class="num">Traces</th><th class="num">Events</th><th>Role</th></tr>
{% for row in counts %}
<tr><td>{{ row.name }}</td><td class="num">{{ row.users }}</td><td class="num">{{ row.traces }}</td>
<td class="num">{{ row.events }}</td><td class="desc">{{ row.role }}</td></tr>
{% endfor %}
</table>
{% endif %}

<h2>Summary</h2>
<p class="summary">{% for sentence in summary %}{{ sentence }} {% endfor %}</p>

<h2>Utility</h2>
{% if trips %}
<p class="note">Paper 004 §8.4's metrics of trips, each set against the real test trips: lower is better for the
divergence and the distance, higher for the top-K patterns. <b>Training</b> releases the training trips as they are
(the best a synthesizer can hope for); there is no uniform baseline. The better of synthetic and training is
highlighted. The trip-length JSD is the Jensen-Shannon {{ trips.jsd_text }}.</p>
{% else %}
<p class="note">Distances between statistics of each set and of the real test traces: lower is better.
<b>Training</b> releases the training traces as they are (the best a synthesizer can hope for);
<b>Uniform</b> draws every location uniformly at random (what no learning gives).
The better of synthetic and training is highlighted.</p>
{% endif %}
{{ table(utility) }}
{% if standard %}<p class="note">The field's standard suite (query to hotspot error) is in its <b>{{ standard.name }}</b>
flavour: {{ standard.description }}. The other flavours, and how they differ, are in docs/benchmark.md
(<code>evaluate --standard-flavour</code>).</p>{% endif %}
{% if trips %}
<h3>Frequent patterns (paper 004 Tables 2-3)</h3>
<p class="note">The share of the real test trips' K most frequent route segments (runs of 1 to 7 consecutive cells,
counted once per trip) found among the set's own top K.</p>
<table>
<tr><th>K</th>{% for k in trips.ks %}<th class="num">{{ k }}</th>{% endfor %}</tr>
{% for row in trips.patterns %}
<tr><td>{{ row.name }}</td>
{% for cell in row.cells %}<td class="num{% if cell.best %} best{% endif %}">{{ cell.text }}</td>{% endfor %}</tr>
{% endfor %}
</table>
<h3>Trips (paper 004 Table 1)</h3>
<table>
<tr><th>Set</th><th class="num">Trips</th><th class="num">Cells visited</th><th class="num">Length mean</th>
<th class="num">Length sd</th><th class="num">Length min</th><th class="num">Length max</th></tr>
{% for row in trips.statistics %}
<tr><td>{{ row.name }}</td>{% for v in row.numbers %}<td class="num">{{ v }}</td>{% endfor %}</tr>
{% endfor %}
</table>
{% endif %}

<h2>Privacy</h2>
{% if privacy %}
<p class="note">How well attacks on the released set learn about the training users: lower is better.
<b>Training</b> attacks the training traces released as they are; <b>Uniform</b> is a random guess.
The lower of synthetic and training is highlighted.</p>
{{ table(privacy, "Uniform / random guess") }}
{% for note in privacy_notes %}<p class="note">{{ note }}</p>{% endfor %}
{% else %}
<p class="note">No attacks were run (<code>attacks=()</code>), so this report measures utility only.</p>
{% endif %}

<h2>Guarantees</h2>
{% if ledger is none %}
<p class="note">This set carries no privacy ledger (real data, or a set made before ledgers existed): what protects
it is only what the attacks above measure.</p>
{% elif not ledger.spends %}
<p class="note">{{ method or "The method" }} took no differentially private step: no formal guarantee, only what the
attacks above measure{% if pd_test %} and the plausible-deniability test below{% endif %}.</p>
{% else %}
<p class="summary">{% for line in ledger.lines %}{{ line }}<br>{% endfor %}</p>
<table>
<tr><th>Mechanism</th><th class="num">&epsilon;</th><th class="num">&delta;</th><th class="num">Sensitivity</th>
<th>Unit</th><th>What it saw</th><th>Assumptions</th></tr>
{% for s in ledger.spends %}
<tr><td>{{ s.mechanism }}{% if not s.holds %} (bound only){% endif %}</td><td class="num">{{ s.epsilon }}</td>
<td class="num">{{ s.delta }}</td><td class="num">{{ s.sensitivity }}</td><td>{{ s.unit }}</td>
<td class="desc">{{ s.saw }}</td><td class="desc">{{ s.assumptions }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if pd_test %}
<p class="note">Plausible deniability (paper 001 §3.5): {{ pd_test }}</p>
{% endif %}
{% if privacy_tests %}
<p class="note">Privacy tests (paper 002 §V-C to §V-E): {{ privacy_tests }}</p>
{% endif %}
{% if noise %}
<p class="note">Noise: {{ noise }} (estimated from the release's noisy counts and public parameters).</p>
{% endif %}
{% if bounds %}
<p class="note">Public bounds of the movement: {{ bounds }}.</p>
{% endif %}
{% if colocations %}
<p class="note">Co-locations (paper 000): {{ colocations }}</p>
{% endif %}

{% if others %}
<h2>Other metrics</h2>
{{ table(others) }}
{% endif %}

{% if skipped %}
<h2 id="skipped">Not computed</h2>
<p class="note">Metrics this report leaves out for a set of trips, and why.</p>
<table>
<tr><th>Metrics</th><th>Why not</th></tr>
{% for row in skipped %}<tr><td>{{ row.labels }}</td><td class="desc">{{ row.reason }}</td></tr>
{% endfor %}
</table>
{% endif %}

{% if figures %}
<h2>Plots</h2>
{% for fig in figures %}
<figure>
<img src="{{ fig.uri }}" alt="{{ fig.alt }}">
<figcaption><b>{{ fig.heading }}.</b> {{ fig.caption }}</figcaption>
</figure>
{% endfor %}
{% endif %}

<details>
<summary>Options and timings</summary>
<table>
{% for key, value in options %}<tr><th>{{ key }}</th><td>{{ value }}</td></tr>{% endfor %}
</table>
</details>
<p class="note">Generated by locsynth {{ version }}. This page needs no network: the plots are embedded.</p>
""", css=CSS)

_ENV = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                          lstrip_blocks=True)
_TEMPLATE = _ENV.from_string(TEMPLATE)


def render_html(report, title: str | None = None) -> str:
    """The report as one self-contained HTML page.

    Parameters
    ----------
    report : locsynth.evaluation.evaluate.Report
        Its ``metrics`` fill the tables, ``meta`` the header, and ``details`` (when present) the
        plots: population heatmaps, per-row transition EMDs, visit fractions, the MIA ROC curve.
    title : str, optional
        Page title; "locsynth evaluation report" by default.
    """
    metrics, meta, details = report.metrics, report.meta or {}, report.details or {}
    options = meta.get("options") or {}
    space_kind = (details.get("space") or {}).get("kind")
    main, attacks = utility_keys(), attack_keys()
    utility = _rows(metrics, [k for k in main if k in metrics], options, space_kind)
    privacy = _rows(metrics, [k for k in attacks if k in metrics], options, space_kind)
    others = _rows(metrics, [k for k in metrics if k not in main and k not in attacks
                             and isinstance(metrics[k], dict)], options, space_kind)
    trips = meta.get("trips")
    return _TEMPLATE.render(
        title=title or (f"locsynth evaluation report: {meta['method']}" if meta.get("method")
                        else "locsynth evaluation report"), version=__version__,
        compared=_compared(meta), counts=_counts(meta),
        summary=summary_sentences(metrics, trips, _claimed(meta),
                                  (details.get("distance_mia") or {}).get("epsilon_ceiling")),
        trips=_trip_tables(trips, meta.get("skipped")) if trips else None, skipped=_skipped(meta.get("skipped")),
        utility=utility, privacy=privacy, others=others, privacy_notes=_privacy_notes(metrics, meta),
        figures=_figures(details, meta, space_kind), options=_options(meta), ledger=_ledger(meta),
        method=meta.get("method"), pd_test=_pd_text(meta.get("pd_test")), standard=_standard(meta),
        privacy_tests=_privacy_tests_text(meta.get("privacy_tests"), meta.get("params") or {}),
        colocations=_colocations_text(meta.get("colocations")),
        noise=describe_noise(meta["noise"]) if meta.get("noise") else None,
        bounds=Bounds.from_dict(meta["bounds"]).describe() if meta.get("bounds") else None)


def _standard(meta: dict) -> dict | None:
    """The standard suite's flavour and what it is, when the report has the suite and names one."""
    flavour = (meta.get("standard") or {}).get("flavour")
    return None if flavour is None else {"name": flavour, "description": flavour_description(flavour)}


def _claimed(meta: dict) -> float | None:
    """The epsilon per person the set's ledger claims; None without a DP claim."""
    from ...privacy.ledger import Ledger

    if "ledger" not in meta:
        return None
    ledger = Ledger.from_dict(meta["ledger"])
    return ledger.person().get("epsilon") if ledger.claims_dp else None


def _ledger(meta: dict) -> dict | None:
    """The ledger's lines and spends, formatted; None when the set has no ledger."""
    from ...privacy.ledger import Ledger

    if "ledger" not in meta:
        return None
    ledger = Ledger.from_dict(meta["ledger"])
    spends = [{"mechanism": s.mechanism, "epsilon": f"{s.epsilon:.4g}", "delta": f"{s.delta:.3g}",
               "sensitivity": "—" if s.sensitivity is None else f"{s.sensitivity:g}", "unit": s.unit,
               "saw": s.saw, "assumptions": s.assumptions, "holds": s.holds} for s in ledger.spends]
    return {"lines": ledger.describe(), "spends": spends}


def _pd_text(pd: dict | None) -> str | None:
    if not pd:
        return None
    return (f"{100 * pd['pass_rate']:.1f}% of the synthetic traces pass the (k = {pd['k']}, eta = {pd['eta']:g}) test "
            f"against {pd.get('candidates', '?')} candidate users; a release keeps only those.")


def _privacy_tests_text(tests: dict | None, params: dict) -> str | None:
    """SGLT's fakes: how many passed the intersection, similarity and plausible-deniability tests."""
    if not tests:
        return None
    if not tests.get("privacy_test"):
        return (f"not applied: the {tests['passed']} fakes are the first ones of every seed, as generated "
                f"(they may copy their seeds' locations).")
    rule = (f"delta_i = {params.get('delta_i')}, delta_s = {params.get('delta_s')}, "
            f"(k = {params.get('k')}, delta_d = {params.get('delta_d')})" if params else "")
    short = f"; {tests['seeds_short']} seeds ran out of tries" if tests.get("seeds_short") else ""
    return (f"{tests['passed']} of {tests['requested']} requested fakes passed ({rule}) in {tests['tries']} tries, "
            f"a pass rate of {100 * tests['pass_rate']:.1f}%{short}; the fakes that failed were dropped.")


def _colocations_text(c: dict | None) -> str | None:
    """Friends against non-friends, and the model's errors, in one paragraph."""
    if not c or "synthetic" not in c:
        return None
    syn = c["synthetic"]
    parts = [f"the synthetic set's {syn['friend_pairs']:,} friend pairs share a location {syn['friends_per_pair']:.2f} "
             f"instants per pair, as many non-friend pairs {syn['non_friends_per_pair']:.2f}"]
    if c.get("training"):
        tr = c["training"]
        parts.append(f"in the training set {tr['friends_per_pair']:.2f} against {tr['non_friends_per_pair']:.2f}")
    if "theta" in c:
        parts.append(f"{c.get('colocations_placed', '?')} of theta = {c['theta']} co-location events were placed")
    if "friendship_error" in c:
        parts.append(f"|p - p'| = {c['friendship_error']:.2g}")
    err = c.get("category_error") or {}
    if err:
        parts.append(f"per-category co-location matrix ({err['categories']} categories): MAE {err['mae']:.3g}, "
                     f"MSE {err['mse']:.3g} against the untrimmed counts")
    return "; ".join(parts) + "."


def _rows(metrics: dict, keys: list[str], options: dict, space_kind: str | None) -> list[dict]:
    rows = []
    for key in keys:
        values = [metrics[key].get(b) for b in ("synthetic", "training", "uniform")]
        finite = [v for v in values[:2] if _finite(v)]
        best = (max if higher_is_better(key) else min)(finite) if finite else None
        cells = [{"text": format_metric(key, v), "best": i < 2 and len(finite) == 2 and _finite(v) and v == best}
                 for i, v in enumerate(values)]
        rows.append({"label": metric_label(key, options), "cells": cells,
                     "description": metric_description(key, options, space_kind)})
    return rows


def _finite(value) -> bool:
    return value is not None and math.isfinite(float(value))


def _n(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "—" if value is None else str(value)


def _compared(meta: dict) -> str:
    syn, train, test = meta.get("synthetic"), meta.get("train"), meta.get("test")
    if not (syn and train and test):
        return "Synthetic traces compared with real test traces, against the training and uniform baselines."
    text = (f"{_n(syn.get('traces'))} synthetic traces ({_n(syn.get('events'))} events) compared with "
            f"{_n(test.get('traces'))} real test traces of users not used for training; the synthesizer was "
            f"trained on {_n(train.get('traces'))} traces.")
    k = meta.get("trace_numbers")
    if isinstance(k, int) and k > 1:
        text += (f" The synthetic set holds {k} traces per input user; utility is computed for each trace "
                 f"number and averaged.")
    return text


def _counts(meta: dict) -> list[dict]:
    roles = {"synthetic": "released set under evaluation", "train": "members: the synthesizer's input",
             "test": "non-members: the reference for utility"}
    names = {"synthetic": "Synthetic", "train": "Training", "test": "Test"}
    return [{"name": names[k], "users": _n(meta[k].get("users")), "traces": _n(meta[k].get("traces")),
             "events": _n(meta[k].get("events")), "role": roles[k]}
            for k in ("synthetic", "train", "test") if isinstance(meta.get(k), dict)]


#: a utility metric whose training and uniform baselines lie within this share of each other
#: cannot tell real traces from random ones on the data at hand
BLIND_SHARE = 0.05


def uninformative(metrics: dict) -> list[str]:
    """The utility metrics whose two baselines, the training traces and uniformly random ones, score
    within :data:`BLIND_SHARE` of each other (relative to the larger): on such data the metric
    cannot separate a good synthetic set from noise (TP-TV on sparse check-ins: 0.951 against 0.954)."""
    out = []
    for key in utility_keys():
        m = metrics.get(key) or {}
        t, u = m.get("training"), m.get("uniform")
        if _finite(t) and _finite(u) and abs(u - t) <= BLIND_SHARE * max(abs(t), abs(u)) and max(abs(t), abs(u)) > 0:
            out.append(key)
    return out


def summary_sentences(metrics: dict, trips: dict | None = None, claimed: float | None = None,
                      ceiling: float | None = None) -> list[str]:
    """The privacy-utility summary: how much of the training utility is kept, and what attacks achieve
    (for trips, given ``meta['trips']``: :func:`trip_summary`, with the ``claimed`` epsilon and the
    distance MIA bound's ``ceiling``)."""
    if trips:
        return trip_summary(metrics, distance=trips.get("jsd") == "distance", claimed=claimed, ceiling=ceiling)
    out = []
    shares = []
    blind = uninformative(metrics)
    for key in utility_keys():
        m = metrics.get(key) or {}
        s, t, u = m.get("synthetic"), m.get("training"), m.get("uniform")
        if _finite(s) and _finite(t) and _finite(u) and u != t and key not in blind:
            shares.append((u - s) / (u - t))
    if shares:
        share = sum(shares) / len(shares)
        out.append(f"Utility: over {len(shares)} utility metrics the synthetic traces go on average "
                   f"{100 * share:.0f}% of the way from uniformly random traces (0%) to the training traces "
                   f"themselves (100%)" + (", that is, closer to the real test traces than the training "
                                          "traces are." if share > 1 else "."))
    else:
        out.append("Utility: no utility metric has both baselines, so no summary is given.")
    if blind:
        out.append("Uninformative here: " + "; ".join(
            f"{key} reads {metrics[key]['training']:.3g} for the training traces and {metrics[key]['uniform']:.3g} "
            f"for uniformly random ones" for key in blind) + ". These metrics cannot tell real traces from random "
            "ones on this data (sparse traces, as check-ins a few a user, are the usual cause), so their synthetic "
            "scores say nothing; the summary above leaves them out.")
    parts = []
    reid = metrics.get("reid_rate") or {}
    if _finite(reid.get("synthetic")):
        text = f"re-identification names the right training user for {_pct(reid['synthetic'])} of synthetic traces"
        extras = []
        if _finite(reid.get("training")):
            extras.append(f"{_pct(reid['training'])} when the training traces are released")
        if _finite(reid.get("uniform")):
            extras.append(f"{_pct(reid['uniform'])} for a random guess")
        parts.append(text + (f" ({'; '.join(extras)})" if extras else ""))
    adv = metrics.get("mia_advantage") or {}
    if _finite(adv.get("synthetic")):
        text = f"membership inference reaches an advantage of {adv['synthetic']:.3f}"
        extra = f"{adv['training']:.3f} on the training traces; " if _finite(adv.get("training")) else ""
        parts.append(text + f" ({extra}0 is no better than guessing)")
    eps = metrics.get("mia_epsilon_lower_bound") or {}
    if _finite(eps.get("synthetic")):
        if eps["synthetic"] > 0:
            parts.append(f"at 95% confidence the attack shows the release is not {eps['synthetic']:.2f}-differentially "
                         f"private or better (empirical epsilon lower bound)")
        else:
            parts.append("the attack gives no significant evidence of leakage (empirical epsilon lower bound 0)")
    if parts:
        out.append("Privacy: " + "; ".join(parts) + ".")
    else:
        out.append("Privacy: not measured (no attack was run or none could be).")
    return out


def trip_summary(metrics: dict, distance: bool = False, claimed: float | None = None,
                 ceiling: float | None = None) -> list[str]:
    """Paper 004 §8.4's three metrics in words, against the training trips released as they are
    (``distance``: the length JSD is the JS distance), then :func:`trip_privacy`."""
    def pair(key, fmt):
        m = metrics.get(key) or {}
        s, t = m.get("synthetic"), m.get("training")
        if not _finite(s):
            return None
        return fmt(s) + (f" (training trips: {fmt(t)})" if _finite(t) else "")

    parts = []
    jsd = pair("trip_length_jsd", lambda v: f"{v:.3f}")
    if jsd:
        parts.append(f"the trip lengths are {jsd} apart in Jensen-Shannon {'distance' if distance else 'divergence'}"
                     f", 0 being identical and 1 disjoint")
    emd = pair("trip_sd_emd_m", lambda v: f"{v:,.0f} m")
    if emd:
        parts.append(f"moving the synthetic sources and destinations onto the real ones costs {emd} per trip "
                     f"(earth mover's distance)")
    top = pair("trip_top10_precision", _pct)
    if top:
        parts.append(f"{top} of the real top-10 route segments are among the synthetic top 10")
    out = ["Utility: " + "; ".join(parts) + "." if parts else "Utility: no trip metric could be computed."]
    out.append(trip_privacy(metrics, claimed, ceiling))
    return out


def trip_privacy(metrics: dict, claimed: float | None = None, ceiling: float | None = None) -> str:
    """The attacks on trajectories (attacks/distance_mia.py, copies.py, near_copies.py, sniffing.py,
    bayesian.py, outliers.py) in words; the distance MIA's bound beside the release's ``claimed`` epsilon per
    person (None: no claim) and the bound's ``ceiling`` at its numbers of targets."""
    def value(key, which="synthetic"):
        v = (metrics.get(key) or {}).get(which)
        return v if _finite(v) else None

    parts = []
    adv = value("dmia_advantage")
    if adv is not None:
        train = value("dmia_advantage", "training")
        parts.append(f"membership inference by trajectory distance reaches an advantage of {adv:.3f}"
                     + (f" ({train:.3f} on the training trips; 0 is guessing)" if train is not None else ""))
        tpr = value("dmia_tpr_at_fpr_0001")
        if tpr is not None:
            parts.append(f"it calls {_pct(tpr)} of the members while calling 0.1% of the non-members (0.1% is guessing)")
        eps = value("dmia_epsilon_lower_bound")
        if eps is not None:
            parts.append(_bound_sentence(eps, claimed, ceiling))
    p = value("copy_p_value")
    if p is not None:
        score = value("copy_score")
        parts.append(("the copy check flags the release: its synthetic trips lie nearer training trips than hold-out "
                      "trips of equal number far more often than chance" if p < 0.01 else
                      "the copy check finds no more synthetic trips near training trips than near hold-out trips "
                      "of equal number than chance allows") + f" (p = {p:.2g}"
                     + (f", score {score:+.3f}; 0 is no copying)" if score is not None else ")"))
    p = value("near_copy_p_value")
    if p is not None:
        parts.append(("the near-copy check flags the release: training trips copied with their points moved by up to "
                      "about a cell are nearer its synthetic trips than hold-out trips are, far more often than chance"
                      if p < 0.01 else "the near-copy check finds no synthetic trips nearer training trips than "
                      "hold-out trips more often than chance allows") + f" (p = {p:.2g})")
    for key, what in (("sniff_advantage", "a sniffed part reconstructs"), ("outlier_advantage", "outlier leakage")):
        v = value(key)
        if v is not None:
            parts.append(f"{what}: {v:+.3f} more of the members than of unseen trips")
    gain = value("bayes_gain")
    if gain is not None:
        parts.append(f"the trips through the sensitive zone bring the adversary {gain:+.3f} (JSD) towards its visitors")
    if not parts:
        return "Privacy: no attack was run on these trips; see the guarantees below."
    return "Privacy: " + "; ".join(parts) + "."


def _bound_sentence(eps: float, claimed: float | None, ceiling: float | None) -> str:
    """The distance MIA's epsilon lower bound against the claimed epsilon, with its caveat (the
    targets are trials against one release, not one fit per trial) and its ceiling."""
    most = f"; at these numbers of targets no bound can exceed {ceiling:.1f}" if ceiling else ""
    if eps <= 0:
        return f"it gives no significant evidence of leakage at low false-positive rates (epsilon lower bound 0{most})"
    text = f"its empirical epsilon lower bound is {eps:.2f} at 95% confidence{most}"
    if claimed is None:
        return text + " (the release claims no epsilon to compare with)"
    if eps > claimed:
        return (text + f", above the release's claimed epsilon of {claimed:.3g} per person: evidence against the "
                "claim, with a caveat, since the targets are trials against this one release, where the DP game "
                "draws a new release per trial")
    return text + f", within the release's claimed epsilon of {claimed:.3g} per person"


def _trip_tables(trips: dict, skipped: list | None) -> dict:
    """The top-K precision table (Tables 2-3) and the trip statistics (Table 1) of a trip report,
    and whether the attacks were among the ``skipped`` metrics."""
    patterns = trips.get("frequent_patterns") or {}
    ks = sorted({int(k) for v in patterns.values() for k in v})
    names = {"synthetic": "Synthetic", "training": "Training"}
    values = {key: [(patterns.get(key) or {}).get(str(k)) for k in ks] for key in names}
    rows = []
    for key, name in names.items():
        other = values["training" if key == "synthetic" else "synthetic"]
        rows.append({"name": name, "cells": [
            {"text": "—" if v is None else f"{100 * v:.0f}%", "best": v is not None and o is not None and v >= o}
            for v, o in zip(values[key], other)]})
    stats = trips.get("statistics") or {}
    table = [{"name": label, "numbers": [_n(s.get("trips")), _n(s.get("cells")), f"{s['length_mean']:.2f}",
                                        f"{s['length_sd']:.2f}", _n(s.get("length_min")), _n(s.get("length_max"))]}
             for key, label in (("test", "Test"), ("training", "Training"), ("synthetic", "Synthetic"))
             if (s := stats.get(key))]
    jsd = ("distance: the square root of the divergence, base 2, what scipy's jensenshannon returns and the "
           "authors' code reports" if trips.get("jsd") == "distance"
           else "divergence in bits, as paper 004 §8.4 defines it (its square root, the JS distance, is what "
                "scipy's jensenshannon returns and the authors' code reports)")
    attacks = any(entry.get("group") in ("reid", "mia") for entry in skipped or [])
    return {"ks": ks, "patterns": rows, "statistics": table, "jsd_text": jsd, "attacks_skipped": attacks}


def _skipped(skipped: list | None) -> list[dict]:
    return [{"labels": ", ".join("SGLT features" if k == "sglt_*" else metric_label(k) for k in entry["metrics"]),
             "reason": entry["reason"]} for entry in skipped or []]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _privacy_notes(metrics: dict, meta: dict) -> list[str]:
    notes = []
    reid = metrics.get("reid_rate")
    if reid is not None and not _finite(reid.get("synthetic")):
        notes.append("Re-identification was not run: the synthetic traces do not name their source user.")
    samples = meta.get("attack_samples") or {}
    reid_sample = samples.get("reid") or {}
    interval = reid_sample.get("interval")
    if interval and len(interval) == 2 and _finite(interval[0]) and interval[0] != interval[1]:
        notes.append(f"Re-identification ran on a sample of {_n(reid_sample.get('traces'))} synthetic traces; "
                     f"95% interval of the rate: {format_value(interval[0])} to {format_value(interval[1])}.")
    mia_sample = samples.get("mia") or {}
    if mia_sample.get("candidates") is not None:
        notes.append(f"Membership inference scored {_n(mia_sample['candidates'])} candidate users "
                     f"(training members and test non-members).")
    return notes


def _figures(details: dict, meta: dict, space_kind: str | None) -> list[dict]:
    """The figures every group declares (metrics/groups.Figure) whose data the report holds, in the
    groups' order."""
    figures = []
    for group in suite.groups():
        for figure in group.figures:
            if figure.when(details, meta):
                figures.append({"heading": figure.heading, "caption": figure.text(details, meta), "alt": figure.alt,
                                "uri": plots.data_uri(figure.draw(details, meta))})
    return figures


def _options(meta: dict) -> list[tuple[str, str]]:
    rows = [(str(k), ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))
            for k, v in (meta.get("options") or {}).items()]
    seconds = meta.get("seconds") or {}
    if seconds:
        rows.append(("seconds per step", ", ".join(f"{k} {float(v):.2f}" for k, v in seconds.items())))
    for name, text in (meta.get("baselines") or {}).items():
        rows.append((f"baseline: {name}", str(text)))
    return rows
