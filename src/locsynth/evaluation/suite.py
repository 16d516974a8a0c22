"""The metric groups ``evaluate`` runs, and what they declare (metrics/groups.py): every metric's
label and goal, every option with its default and check, the attacks. The report, ``compare``, the
benchmark page and the command line read them here.

The groups, in the order evaluate runs them: the built-in ones (:data:`BUILT_IN`, each beside the
metrics it computes: metrics/*.py and attacks/groups.py, imported on first use), then those that
plugins and :func:`locsynth.metrics.groups.register` added. A plugin is a module named in the
``LOCSYNTH_PLUGINS`` environment variable (comma-separated) or in the ``locsynth.plugins`` entry
points of an installed package; importing it registers its groups (and methods,
:func:`locsynth.synth.registry.register`), so a new metric costs one file.
"""

from __future__ import annotations

import functools
import importlib

from ..core.errors import InputError
from ..metrics.groups import Metric, MetricGroup, Option, added
from ..core.plugins import load_plugins
from ..core.validation import check_seed

#: group name -> "module:attribute" of the built-in groups, in the order evaluate runs them
BUILT_IN = {
    "population": "locsynth.metrics.population:GROUP",
    "transitions": "locsynth.metrics.transitions:GROUP",
    "visit_fractions": "locsynth.metrics.visits:GROUP",
    "sglt": "locsynth.metrics.sglt:GROUP",
    "clusters": "locsynth.metrics.clusters:GROUP",
    "colocations": "locsynth.metrics.colocation:GROUP",
    "trips": "locsynth.metrics.trips:GROUP",
    "trip_times": "locsynth.metrics.trip_times:GROUP",
    "standard": "locsynth.metrics.standard:GROUP",
    "realism": "locsynth.metrics.realism:GROUP",
    "reid": "locsynth.attacks.groups:REIDENTIFICATION",
    "mia": "locsynth.attacks.groups:MEMBERSHIP",
    "distance_mia": "locsynth.attacks.distance_mia:GROUP",
    "copies": "locsynth.attacks.copies:GROUP",
    "near_copies": "locsynth.attacks.near_copies:GROUP",
    "sniffing": "locsynth.attacks.sniffing:GROUP",
    "bayesian": "locsynth.attacks.bayesian:GROUP",
    "outliers": "locsynth.attacks.outliers:GROUP",
}
#: options of evaluate itself, beside the groups' own
SEED = Option("seed", 0, "Seed of every random choice of the metrics and attacks (projections, samples, queries).",
              check_seed)


@functools.lru_cache(maxsize=None)
def _built_in(name: str) -> MetricGroup:
    module, attr = BUILT_IN[name].split(":")
    return getattr(importlib.import_module(module), attr)


def groups() -> list[MetricGroup]:
    """Every group in the order ``evaluate`` runs them (module docstring)."""
    load_plugins()
    extra = added()
    names = {g.name for g in extra}
    return [_built_in(name) for name in BUILT_IN if name not in names] + extra


def attacks() -> tuple[str, ...]:
    """The names of the attack groups (``evaluate(attacks=...)``, ``--attacks``)."""
    return tuple(g.name for g in groups() if g.kind == "attack")


def catalogue() -> dict[str, tuple[MetricGroup, Metric]]:
    """Every declared metric by key, with its group, in the groups' order (built once per set of
    groups: the report asks for it once or more per metric)."""
    current = groups()
    key = tuple(map(id, current))
    if _CATALOGUE.get("key") != key:
        out = {}
        for group in current:
            for metric in group.metrics:
                out.setdefault(metric.key, (group, metric))
        _CATALOGUE.update(key=key, groups=current, table=out)
    return _CATALOGUE["table"]


_CATALOGUE: dict = {}


def options() -> dict[str, Option]:
    """Every option evaluate takes (its own and the groups'), by name; two groups that declare one
    name must agree on its default."""
    out = {SEED.name: SEED}
    for group in groups():
        for option in group.options:
            known = out.get(option.name)
            if known is not None and known.default != option.default:
                raise InputError(f"groups disagree on the option {option.name!r}: defaults {known.default!r} and "
                                 f"{option.default!r}")
            out.setdefault(option.name, option)
    return out


def check_options(given: dict) -> dict:
    """Every option with its value: ``given`` checked against the declarations (an unknown name is one
    InputError listing the valid ones), the rest at their defaults."""
    declared = options()
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise InputError(f"unknown evaluate option(s) {', '.join(unknown)}; the options are "
                         f"{', '.join(sorted(declared))}")
    return {name: (option.parse(given[name]) if name in given else option.default)
            for name, option in declared.items()}


def metric(key: str) -> Metric | None:
    """The declared metric ``key`` (None when no group declares it)."""
    found = catalogue().get(key)
    return found[1] if found else None


def label(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    """How the report names metric ``key`` (the key itself when no group declares it)."""
    found = catalogue().get(key)
    return found[0].label(found[1], options, space_kind) if found else key


def description(key: str, options: dict | None = None, space_kind: str | None = None) -> str:
    found = catalogue().get(key)
    return found[0].describe(found[1], options, space_kind) if found else ""


def higher_is_better(key: str) -> bool:
    found = metric(key)
    return bool(found and found.higher_is_better)


def kind(key: str) -> str | None:
    """'utility', 'attack' or 'guarantee' for a declared metric, else None."""
    found = catalogue().get(key)
    return found[0].kind if found else None
