"""Metric groups: what ``evaluate`` loops over (DESIGN.md, the evaluate step).

A group is one family of measurements with its baselines: when it applies to a (training, test,
synthetic) triple, the rows it adds to the report (each ``{"synthetic", "training", "uniform"}``),
the arrays its plots need (``details``) and what the report should say of it (``meta``). The
built-in groups live beside the metrics they compute (population.py, transitions.py, ...; the
attacks' in locsynth.attacks.groups) and are imported when first used, as methods are
(registry.py); another suite plugs in by :func:`register`, without editing ``evaluate``::

    register(MetricGroup("mine", ("my_metric",), compute=lambda ctx: GroupResult(
        {"my_metric": row(score(ctx.test, ctx.synthetic), score(ctx.test, ctx.train), None)})))
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import InputError
from ..traces import is_trip_set

#: group name -> "module:attribute" of the built-in groups, in the order evaluate runs them
BUILT_IN = {
    "population": "locsynth.metrics.population:GROUP",
    "transitions": "locsynth.metrics.transitions:GROUP",
    "visit_fractions": "locsynth.metrics.visits:GROUP",
    "sglt": "locsynth.metrics.sglt:GROUP",
    "clusters": "locsynth.metrics.clusters:GROUP",
    "colocations": "locsynth.metrics.colocation:GROUP",
    "trips": "locsynth.metrics.trips:GROUP",
    "standard": "locsynth.metrics.standard:GROUP",
    "reid": "locsynth.attacks.groups:REIDENTIFICATION",
    "mia": "locsynth.attacks.groups:MEMBERSHIP",
}
_ADDED: dict[str, "MetricGroup"] = {}


@dataclass
class Context:
    """What every group sees: the three sets, the options of ``evaluate``, a Dask client for the
    attacks, and a cache for what several groups or the plots share."""

    train: object
    test: object
    synthetic: object
    options: dict
    client: object = None
    cache: dict = field(default_factory=dict)

    @property
    def trips(self) -> bool:
        """Whether the test set is a set of trips (its users have an hour; metrics/trips.py)."""
        return is_trip_set(self.test)

    @property
    def sets(self) -> list:
        """The synthetic set split by trace number (each evaluated as one set and averaged)."""
        if "sets" not in self.cache:
            self.cache["sets"] = self.synthetic.by_trace_number()
        return self.cache["sets"]

    def option(self, name: str, default=None):
        return self.options.get(name, default)


@dataclass
class GroupResult:
    """What a group adds to the report: ``metrics`` rows, ``details`` for its plots, ``meta``
    (merged into the report's; ``options`` and ``baselines`` dictionaries are merged key by key)
    and ``seconds`` (phase -> time; the group's own time when empty)."""

    metrics: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MetricGroup:
    """A family of metrics ``evaluate`` runs.

    name : the group's name, also its progress step and the key of its time.
    keys : the metric keys it adds (a key ending in '*' is a family), listed when it is skipped.
    compute : callable(Context) -> GroupResult.
    skip : callable(Context) -> str | None: None when the group applies; otherwise why not. An
        empty string skips it silently; a reason is listed in the report (``meta['skipped']``).
    step : the progress text (default: the name).
    """

    name: str
    keys: tuple[str, ...]
    compute: Callable[[Context], GroupResult]
    skip: Callable[[Context], str | None] = lambda ctx: None
    step: str | None = None


def register(group: MetricGroup) -> None:
    """Add (or replace) a group; it runs after the built-in ones, in the order registered."""
    if not isinstance(group, MetricGroup):
        raise InputError(f"register takes a MetricGroup, got {type(group).__name__}")
    _ADDED[group.name] = group


def unregister(name: str) -> None:
    """Remove a group added by :func:`register`."""
    _ADDED.pop(name, None)


@functools.lru_cache(maxsize=None)
def _built_in(name: str) -> MetricGroup:
    module, attr = BUILT_IN[name].split(":")
    return getattr(importlib.import_module(module), attr)


def groups() -> list[MetricGroup]:
    """Every group in the order ``evaluate`` runs them."""
    return [_built_in(name) for name in BUILT_IN if name not in _ADDED] + list(_ADDED.values())


def row(synthetic, training, uniform) -> dict:
    """One metric's row: the synthetic set's value and the two baselines' (None where missing)."""
    f = lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)  # noqa: E731
    return {"synthetic": f(synthetic), "training": f(training), "uniform": f(uniform)}


def not_for_trips(reason: str):
    """A ``skip`` for the groups of daily traces: on a set of trips, listed with ``reason``."""
    return lambda ctx: reason if ctx.trips else None
