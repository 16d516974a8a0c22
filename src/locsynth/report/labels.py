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

#: SGLT's utility features (paper 002 §VIII.C (a)-(f); metrics/sglt.py), shown as "other metrics"
OTHER = {
    "sglt_visits_kl": MetricInfo("Visits KL (a)", "KL divergence of the visit distribution over locations"),
    "sglt_visits_kl_rank": MetricInfo("Visits KL by rank (a)", "the same with locations sorted by popularity"),
    "sglt_visits_relative_error": MetricInfo("Visits relative error (a)", "mean relative error of the visit "
                                                                          "counts per location"),
    "sglt_top50_visits_kl": MetricInfo("Top-50 visits KL (b)", "visits KL over the 50 most visited locations"),
    "sglt_top50_visits_relative_error": MetricInfo("Top-50 relative error (b)", "relative error over the 50 "
                                                                                "most visited locations"),
    **{f"sglt_top{n}_coverage": MetricInfo(f"Top-{n} coverage (c)", f"share of the reference's {n} most "
                                           f"visited locations among the set's {n} most visited; higher is better")
       for n in (10, 20, 30, 40, 50)},
    **{f"sglt_time_allocation_kl_{k}": MetricInfo(f"Time allocation KL, #{k} (d)", f"KL divergence of the "
                                                  f"share of time users spend at their #{k} location")
       for k in (1, 2, 3)},
    **{f"sglt_time_allocation_paired_kl_{k}": MetricInfo(f"Paired time allocation KL, #{k} (d)", "the same, "
                                                         "each synthetic trace against its own seed")
       for k in (1, 2, 3)},
    "sglt_mobility_visit_similarity": MetricInfo("Aggregate visit similarity (e)", "geographic similarity of the "
                                                 "aggregate visit distributions; higher is better"),
    "sglt_mobility_transition_similarity": MetricInfo("Aggregate transition similarity (e)", "geographic "
                                                      "similarity of the aggregate transition models; higher is "
                                                      "better"),
    "sglt_seed_semantic_similarity": MetricInfo("Seed semantic similarity (f)", "mean semantic similarity of a "
                                                "synthetic trace to its seed; higher is better"),
    "sglt_semantic_qq_correlation": MetricInfo("Semantic Q-Q correlation (f)", "how straight the Q-Q plot of "
                                               "pairwise semantic similarities is; higher is better"),
    **{f"coloc_{what}_{err}": MetricInfo(f"{label} {err.upper()}", f"{'mean absolute' if err == 'mae' else 'mean squared'} "
                                         f"error of the {text} (paper 000 §5.2)")
       for what, label, text in (("population", "Population", "population distribution over locations"),
                                 ("transition", "Transition", "transition matrix, over the rows the test traces "
                                                              "have"))
       for err in ("mae", "mse")},
}
#: paper 004 §8.4's metrics of trip sets (metrics/trips.py's group), in the order of its figures and tables
TRIPS = {
    "trip_length_jsd": MetricInfo("Trip-length JSD", "Jensen-Shannon {jsd} between the distributions of trip "
                                                     "lengths (cells per trip), all trips (paper 004 §8.4)"),
    "trip_length_jsd_hourly": MetricInfo("Trip-length JSD, hourly mean", "the same between the trips of each "
                                         "hour, averaged over the hours (Figure 3); none for a set without hours"),
    "trip_sd_emd_m": MetricInfo("Source-destination EMD (m)", "earth mover's distance in metres between the "
                                "distributions of (source, destination) pairs, all trips"),
    "trip_sd_emd_hourly_m": MetricInfo("Source-destination EMD, hourly mean (m)", "the same per hour, averaged "
                                       "over the hours (Figure 4)"),
    **{f"trip_top{k}_precision": MetricInfo(f"Top-{k} patterns", f"share of the real {k} most frequent route "
                                            f"segments found among the synthetic top {k} (Tables 2-3); higher "
                                            f"is better")
       for k in (10, 20, 50, 100)},
}
#: the field's standard suite (AdaTrace CCS 2018 §6, PrivTrace USENIX Security 2023 §6.1, LDPTrace VLDB 2023 §6;
#: metrics/standard.py), named as the papers name them
STANDARD = {
    "query_error": MetricInfo("Query error", "average relative error of 200 range-count queries ({query}), "
                                             "sanity bound 1% of the real {counted}"),
    "density_error": MetricInfo("Density error", "Jensen-Shannon divergence of the points' distribution "
                                                 "over a 6 x 6 grid"),
    "trip_error": MetricInfo("Trip error", "Jensen-Shannon divergence of the (start cell, end cell) "
                                           "distribution on a 6 x 6 grid"),
    "length_error": MetricInfo("Length error", "Jensen-Shannon divergence of travelled distances in 20 "
                                               "equal buckets"),
    "diameter_error": MetricInfo("Diameter error", "Jensen-Shannon divergence of trace diameters (largest "
                                                   "distance between two points) in 20 equal buckets"),
    "pattern_f1": MetricInfo("Frequent pattern F1", "F1 of the top-100 runs of 2 to 8 cells on a 6 x 6 "
                                                    "grid; higher is better"),
    "pattern_support_error": MetricInfo("Pattern support error", "mean relative error of the supports of "
                                                                 "the real top-100 patterns"),
    "kendall_tau": MetricInfo("Location coverage (Kendall tau)", "Kendall tau ({kendall}) between the "
                                                                 "numbers of traces through each cell of a "
                                                                 "{coverage} grid; higher is better"),
    "hotspot_error": MetricInfo("Hotspot error", "1 - NDCG of the synthetic ranking of the real top-5 "
                                                 "cells (LDPTrace)"),
}
#: metrics for which higher is better (all others: lower)
HIGHER_IS_BETTER = frozenset(k for k, v in {**OTHER, **TRIPS, **STANDARD}.items()
                             if v.description.endswith("higher is better"))

BASELINES = ("synthetic", "training", "uniform")

#: short column headers for tables printed in a terminal, and the order in which the key metrics
#: are shown when the width allows only some (``locsynth compare``)
SHORT = {"tp_tv": "TP-TV", "trip_length_jsd": "len JSD", "trip_sd_emd_m": "SD-EMD m", "tm_emd_x": "EMD-X",
         "tm_emd_y": "EMD-Y", "reid_rate": "re-id", "mia_advantage": "MIA adv", "trip_top10_precision": "top-10",
         "tp_tv_top50": "TP-Top50", "vf_tv": "VF-TV", "trip_top100_precision": "top-100", "tm_swd": "TM-SWD",
         "trip_length_jsd_hourly": "len JSD/h", "trip_sd_emd_hourly_m": "SD-EMD/h", "mia_accuracy": "MIA acc",
         "trip_top20_precision": "top-20", "trip_top50_precision": "top-50", "query_error": "query",
         "density_error": "density", "trip_error": "trip", "length_error": "length", "diameter_error": "diam.",
         "pattern_f1": "FP F1", "pattern_support_error": "FP err", "kendall_tau": "tau", "hotspot_error": "hotspot"}


def run_label(meta: dict, fallback: str) -> str:
    """How a run is named in tables and plots: its method and, where it has one, its epsilon
    ('tpm ε=1'); ``fallback`` (e.g. the directory's name) when the evaluated set is not a
    registered method's output (real data, an external synthesizer's files)."""
    from .. import registry

    method = (meta or {}).get("method")
    if not method or method not in registry.names():
        return fallback
    params = (meta or {}).get("params") or {}
    eps = params.get("epsilon")
    return f"{method} ε={eps:g}" if isinstance(eps, (int, float)) else str(method)


def metric_label(key: str, options: dict | None = None) -> str:
    """Display name of a metric key ('tp_tv_top50' -> 'TP-TV-Top50', or Top<top> from the options)."""
    if key == "tp_tv_top50" and options and options.get("top") not in (None, 50):
        return f"TP-TV-Top{options['top']}"
    info = _info(key)
    return info.label if info else key


def _info(key: str) -> MetricInfo | None:
    return UTILITY.get(key) or PRIVACY.get(key) or OTHER.get(key) or TRIPS.get(key) or STANDARD.get(key)


def metric_description(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    info = _info(key)
    if info is None:
        return ""
    options = options or {}
    emd_unit = ("grid cells" if space_kind == "grid"
                else f"bins of a {options.get('emd_bins', 20)} x {options.get('emd_bins', 20)} grid"
                if space_kind == "pois" else "grid cells or bins")
    jsd = ("distance (the square root of the divergence, base 2, as scipy's jensenshannon returns)"
           if str(options.get("jsd", "")).startswith("distance") else "divergence in bits (0 to 1)")
    return info.description.format(top=options.get("top", 50), emd_unit=emd_unit, jsd=jsd,
                                   **_FLAVOURED.get(options.get("standard_flavour"), _FLAVOURED[None]))


#: the standard suite's descriptions that depend on its flavour (metrics/standard.py); None: a report
#: made before the flavours (locsynth's earlier reading, with tau-b)
_FLAVOURED = {
    None: {"query": "circles: traces within a radius of a random centre", "counted": "traces", "kendall": "tau-b",
           "coverage": "15 x 15"},
    "adatrace": {"query": "circles: traces within a radius of a random centre, as AdaTrace's Query.java decides",
                 "counted": "traces", "kendall": "AdaTrace's formula", "coverage": "15 x 15"},
    "corrected": {"query": "circles: traces within a radius of a random centre", "counted": "traces",
                  "kendall": "tau-b", "coverage": "15 x 15"},
    "ldptrace": {"query": "squares: points inside", "counted": "points", "kendall": "LDPTrace's formula",
                 "coverage": "6 x 6"},
}


def flavour_description(name: str) -> str:
    """What the standard suite's flavour ``name`` is, from its declaration in metrics/standard.py."""
    from ..metrics.standard import FLAVOUR

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
    if key.endswith("_m") and value is not None and math.isfinite(float(value)):
        return f"{float(value):,.0f}"
    return format_value(value)
