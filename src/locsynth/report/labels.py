"""Names, descriptions and number formats of the metrics, shared by the report and the comparison."""

from __future__ import annotations

import math
from typing import NamedTuple


class MetricInfo(NamedTuple):
    label: str
    description: str


#: utility metrics of paper 001 §4.3, in the order of its tables; lower is better for all
UTILITY = {
    "tp_tv": MetricInfo("TP-TV", "total variation between the time-dependent population distributions, "
                                 "averaged over time slots"),
    "tp_tv_top50": MetricInfo("TP-TV-Top50", "TP-TV restricted to the {top} locations most visited in the "
                                             "test traces"),
    "tm_emd_y": MetricInfo("TM-EMD-Y", "earth mover's distance between the rows of the transition matrices, "
                                       "projected on latitude (north-south), in {emd_unit}"),
    "tm_emd_x": MetricInfo("TM-EMD-X", "earth mover's distance between the rows of the transition matrices, "
                                       "projected on longitude (east-west), in {emd_unit}"),
    "tm_swd": MetricInfo("TM-SWD", "sliced Wasserstein distance between the rows of the transition "
                                   "matrices, in km"),
    "vf_tv": MetricInfo("VF-TV", "total variation between the distributions of visit fractions per "
                                 "location"),
}

#: attacks; lower is better (less is learnt about the training users)
PRIVACY = {
    "reid_rate": MetricInfo("Re-identification rate", "share of synthetic traces whose source training "
                                                       "user the attacker names correctly"),
    "mia_advantage": MetricInfo("MIA advantage", "membership inference: largest true-positive rate minus "
                                                 "false-positive rate over thresholds (0: no better than "
                                                 "guessing)"),
    "mia_accuracy": MetricInfo("MIA accuracy", "membership inference: best accuracy over thresholds "
                                               "(0.5: no better than guessing)"),
    "mia_epsilon_lower_bound": MetricInfo("Empirical epsilon (lower bound)",
                                          "the smallest epsilon a differentially private release "
                                          "would need to allow this attack, at 95% confidence"),
}

BASELINES = ("synthetic", "training", "uniform")


def metric_label(key: str, options: dict | None = None) -> str:
    """Display name of a metric key ('tp_tv_top50' -> 'TP-TV-Top50', or Top<top> from the options)."""
    if key == "tp_tv_top50" and options and options.get("top") not in (None, 50):
        return f"TP-TV-Top{options['top']}"
    info = UTILITY.get(key) or PRIVACY.get(key)
    return info.label if info else key


def metric_description(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    info = UTILITY.get(key) or PRIVACY.get(key)
    if info is None:
        return ""
    options = options or {}
    emd_unit = ("grid cells" if space_kind == "grid"
                else f"bins of a {options.get('emd_bins', 20)} x {options.get('emd_bins', 20)} grid"
                if space_kind == "pois" else "grid cells or bins")
    return info.description.format(top=options.get("top", 50), emd_unit=emd_unit)


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
