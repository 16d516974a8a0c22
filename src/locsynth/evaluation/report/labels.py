"""Names, descriptions and number formats of the metrics, shared by the report and the comparison:
each metric's label, description, goal and short name are what its group declares (locsynth.evaluation.suite)."""

from __future__ import annotations

import math
from typing import NamedTuple

from .. import suite


class MetricInfo(NamedTuple):
    label: str
    description: str


def utility_keys() -> list[str]:
    """The utility metrics the report shows in its main table, in the groups' order (locsynth.evaluation.suite)."""
    return [key for key, (group, m) in suite.catalogue().items() if group.kind == "utility" and m.featured]


def attack_keys() -> list[str]:
    """The attacks' metrics, in the groups' order."""
    return [key for key, (group, _) in suite.catalogue().items() if group.kind == "attack"]


def attack_headlines() -> list[str]:
    """Every attack group's first metric (what the trade-off plots and the frontier show)."""
    return [g.keys[0] for g in suite.groups() if g.kind == "attack" and g.keys]


def other_keys() -> list[str]:
    """The metrics shown under "other metrics" (declared not featured)."""
    return [key for key, (group, m) in suite.catalogue().items() if group.kind != "attack" and not m.featured]


def higher_is_better(key: str) -> bool:
    """Whether a larger value of metric ``key`` is better (its declared goal)."""
    return suite.higher_is_better(key)


def short(key: str) -> str:
    """A column header for terminal tables: the metric's declared short name, else its label."""
    m = suite.metric(key)
    return (m.short or m.label) if m else key


def key_metrics(present) -> list[str]:
    """The metrics of ``present`` in the order a narrow table should keep them: the first three
    utility metrics, the first two attack metrics, then the rest of each."""
    present = set(present)
    utility, attacks = [k for k in utility_keys() if k in present], [k for k in attack_keys() if k in present]
    return utility[:3] + attacks[:2] + utility[3:] + attacks[2:]


def _infos(keys: list[str]) -> dict[str, MetricInfo]:
    return {k: MetricInfo(suite.label(k), suite.description(k)) for k in keys}


#: names kept from before the declarations, computed from them: UTILITY (the main table's utility
#: metrics), PRIVACY (the attacks'), OTHER, TRIPS and STANDARD (those groups'), HIGHER_IS_BETTER, SHORT
_COMPUTED = {
    "UTILITY": lambda: _infos(utility_keys()),
    "PRIVACY": lambda: _infos(attack_keys()),
    "OTHER": lambda: _infos(other_keys()),
    "TRIPS": lambda: _infos([k for k, (g, _) in suite.catalogue().items() if g.name == "trips"]),
    "STANDARD": lambda: _infos([k for k, (g, _) in suite.catalogue().items() if g.name == "standard"]),
    "HIGHER_IS_BETTER": lambda: frozenset(k for k in suite.catalogue() if suite.higher_is_better(k)),
    "SHORT": lambda: {k: short(k) for k in suite.catalogue()},
}


def __getattr__(name: str):
    if name in _COMPUTED:
        return _COMPUTED[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


BASELINES = ("synthetic", "training", "uniform")


def run_label(meta: dict, fallback: str) -> str:
    """How a run is named in tables and plots: its method and, where it has one, its epsilon
    ('tpm ε=1'); ``fallback`` (e.g. the directory's name) when the evaluated set is not a
    registered method's output (real data, an external synthesizer's files)."""
    from ...synth import registry

    method = (meta or {}).get("method")
    if not method or method not in registry.names():
        return fallback
    params = (meta or {}).get("params") or {}
    eps = params.get("epsilon")
    return f"{method} ε={eps:g}" if isinstance(eps, (int, float)) else str(method)


def metric_label(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    """Display name of a metric key, from its declaration ('tp_tv_top50' -> 'TP-TV-Top50', or
    Top<top> from the options); the key itself for a metric no group declares."""
    return suite.label(key, options, space_kind)


def metric_description(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    """The one-line description a metric declares, its fields filled from the options ('' when undeclared)."""
    return suite.description(key, options, space_kind)


def flavour_description(name: str) -> str:
    """What the standard suite's flavour ``name`` is, from its declaration in metrics/standard.py."""
    from ...metrics.standard import FLAVOUR

    flavour = FLAVOUR.get(name)
    return f"{flavour.description}; coordinates in {flavour.units}" if flavour else f"an unknown flavour {name!r}"


def format_value(value, digits: int = 4) -> str:
    """A metric value for a table: 4 decimals, '—' when missing, '∞' when infinite."""
    if value is None:
        return "—"
    value = float(value)
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value != 0 and (abs(value) >= 10_000 or abs(value) < 10 ** -digits):
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}f}"


def format_metric(key: str, value) -> str:
    """:func:`format_value`, except distances in metres (keys ending in ``_m``): whole metres."""
    declared = suite.metric(key)
    metres = declared.unit == "m" if declared else key.endswith("_m")
    if metres and value is not None and math.isfinite(float(value)):
        return f"{float(value):,.0f}"
    return format_value(value)
