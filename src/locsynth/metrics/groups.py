"""Metric groups: what ``evaluate`` loops over, each declared once where its metrics are computed.

A group is one family of measurements with its baselines. It declares itself, and everything
that shows or parses it reads that declaration (DESIGN.md):

- its :class:`Metric` s: key, label, one-line description, goal (lower or higher is better), range,
  unit, a short column header, and whether the report shows it in its main table;
- its :class:`Option` s: name, default, help and check, in one place: ``evaluate`` validates what
  it is given against them, and ``locsynth evaluate`` offers each as ``--NAME``;
- its :class:`Figure` s: a heading, a caption and a drawing, functions of the details it computed;
- its kind: ``utility``, ``attack`` (the report's privacy table, ``--attacks``) or ``guarantee``;
- when it applies (``skip``) and what it computes (``compute``).

The groups evaluate runs are listed in :mod:`locsynth.evaluation.suite` (the built-in ones, plugins, and
those added here by :func:`register`)::

    register(MetricGroup("mine", (Metric("my_metric", "My metric", "what it measures"),),
                         compute=lambda ctx: GroupResult({"my_metric": row(score(ctx.test, ctx.synthetic),
                                                                           score(ctx.test, ctx.train), None)})))

:func:`locsynth.testing.check_metric_group` checks a group against its declaration.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.errors import InputError, did_you_mean
from ..data.traces import is_trip_set
from ..core.validation import check_flag, check_whole, in_range, parse_value

#: what "better" means for a metric
GOALS = ("lower", "higher")
#: the kinds of groups: which table of the report they fill
KINDS = ("utility", "attack", "guarantee")
#: the groups :func:`register` added, by name
_ADDED: dict[str, "MetricGroup"] = {}


@dataclass(frozen=True)
class Metric:
    """One metric a group produces.

    key : its key in metrics.json.
    label, description : how the report names and explains it; both may hold ``{fields}`` that the
        group's ``fields`` fill from the evaluation's options (e.g. 'TP-TV-Top{top}').
    goal : 'lower' or 'higher' is better.
    range : (low, high) of its values, None where unbounded.
    unit : what its values are in ('' for a share or a divergence).
    short : a column header for terminal tables (the label when None).
    featured : shown in the report's main table (else under "other metrics").
    """

    key: str
    label: str
    description: str = ""
    goal: str = "lower"
    range: tuple = (0.0, None)
    unit: str = ""
    short: str | None = None
    featured: bool = True

    def __post_init__(self):
        if self.goal not in GOALS:
            raise InputError(f"metric {self.key!r}: goal must be one of {', '.join(GOALS)}, got {self.goal!r}")

    @property
    def higher_is_better(self) -> bool:
        return self.goal == "higher"


@dataclass(frozen=True)
class Option:
    """One option of a group, declared once.

    name : its name (``evaluate(..., options={name: value})``, ``locsynth evaluate --name``).
    default : its value when not given.
    help : one line for ``--help``.
    check : value -> value, raising InputError on a bad one (None: the default's type is enforced).
    choices : the valid values, where there are few.
    cli : offered on the command line (an array, such as PPMTF's user factors, is not).
    """

    name: str
    default: object
    help: str
    check: Callable[[object], object] | None = None
    choices: tuple | None = None
    cli: bool = True

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, value):
        """The value checked (text read as the default's type, validation.parse_value); an
        InputError names the option."""
        if isinstance(value, str) and not isinstance(self.default, str):
            value = parse_value(value, self.default)
        if self.choices is not None and value not in self.choices:
            raise InputError(f"{self.name} must be one of {', '.join(map(str, self.choices))}, got {value!r}"
                             f"{did_you_mean(value, self.choices)}")
        if self.check is not None:
            return self.check(value)
        if isinstance(self.default, bool):
            return check_flag(value, self.name)
        if isinstance(self.default, int):
            return check_whole(value, self.name, -sys.maxsize)
        if isinstance(self.default, float):
            return in_range()(value, self.name)
        return value


@dataclass(frozen=True)
class Figure:
    """One figure a group draws: ``draw(details, meta)`` -> PNG bytes when ``when(details, meta)``;
    ``caption`` a text or a function of (details, meta)."""

    heading: str
    caption: str | Callable[[dict, dict], str]
    alt: str
    draw: Callable[[dict, dict], bytes]
    when: Callable[[dict, dict], bool] = lambda details, meta: True

    def text(self, details: dict, meta: dict) -> str:
        return self.caption(details, meta) if callable(self.caption) else self.caption


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
    references: dict | None = None

    def reference(self, key, compute: Callable[[], object]):
        """What does not depend on the synthetic set (the real sets' own scores, mined patterns,
        queries, grids): ``compute()`` once per ``key`` for these real sets. ``key`` must name
        every option the value depends on. With ``references`` (a dict kept by the caller across
        evaluations of the same real sets, e.g. the benchmark's per dataset) it is computed once
        for all of them; without, once per evaluation."""
        store = self.cache.setdefault("references", {}) if self.references is None else self.references
        if key not in store:
            store[key] = compute()
        return store[key]

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
    """A family of metrics ``evaluate`` runs (module docstring).

    name : the group's name, also its progress step and the key of its time.
    metrics : the :class:`Metric` s it produces (a plain key is a metric named by its key).
    compute : callable(Context) -> GroupResult.
    skip : callable(Context) -> str | None: None when the group applies; otherwise why not. An
        empty string skips it silently; a reason is listed in the report (``meta['skipped']``).
    step : the progress text (default: the name).
    kind : 'utility', 'attack' or 'guarantee'.
    options : its :class:`Option` s.
    figures : its :class:`Figure` s.
    fields : callable(options: dict, space_kind: str | None) -> dict, what the metrics' labels and
        descriptions name in braces (given the evaluation's options, defaults filled in).
    """

    name: str
    metrics: tuple
    compute: Callable[[Context], GroupResult]
    skip: Callable[[Context], str | None] = lambda ctx: None
    step: str | None = None
    kind: str = "utility"
    options: tuple[Option, ...] = ()
    figures: tuple[Figure, ...] = ()
    fields: Callable[[dict, str | None], dict] | None = None

    def __post_init__(self):
        object.__setattr__(self, "metrics", tuple(m if isinstance(m, Metric) else Metric(str(m), str(m))
                                                  for m in self.metrics))
        if self.kind not in KINDS:
            raise InputError(f"group {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    @property
    def keys(self) -> tuple[str, ...]:
        """The metric keys it declares, in order."""
        return tuple(m.key for m in self.metrics)

    def defaults(self) -> dict:
        return {o.name: o.default for o in self.options}

    def label(self, metric: Metric, options: dict | None = None, space_kind: str | None = None) -> str:
        return _fill(metric.label, self._fields(options, space_kind))

    def describe(self, metric: Metric, options: dict | None = None, space_kind: str | None = None) -> str:
        return _fill(metric.description, self._fields(options, space_kind))

    def _fields(self, options: dict | None, space_kind: str | None) -> dict:
        if self.fields is None:
            return {}
        return self.fields({**self.defaults(), **{k: v for k, v in (options or {}).items() if v is not None}},
                           space_kind)


def _fill(text: str, fields: dict) -> str:
    try:
        return text.format(**fields) if fields else text
    except (KeyError, IndexError):
        return text


def register(group: MetricGroup) -> None:
    """Add (or replace) a group; it runs after the built-in ones, in the order registered
    (:func:`locsynth.evaluation.suite.groups`)."""
    if not isinstance(group, MetricGroup):
        raise InputError(f"register takes a MetricGroup, got {type(group).__name__}")
    _ADDED[group.name] = group


def unregister(name: str) -> None:
    """Remove a group added by :func:`register`."""
    _ADDED.pop(name, None)


def added() -> list[MetricGroup]:
    """The groups :func:`register` added, in order."""
    return list(_ADDED.values())


def row(synthetic, training, uniform) -> dict:
    """One metric's row: the synthetic set's value and the two baselines' (None where missing)."""
    f = lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)  # noqa: E731
    return {"synthetic": f(synthetic), "training": f(training), "uniform": f(uniform)}


def not_for_trips(reason: str):
    """A ``skip`` for the groups of daily traces: on a set of trips, listed with ``reason``."""
    return lambda ctx: reason if ctx.trips else None


def count(name: str, default: int | None, help: str, *, minimum: int = 1) -> Option:
    """An option that is a whole number >= ``minimum`` (or None, where the default is None)."""
    def check(value):
        return None if value is None and default is None else check_whole(value, name, minimum)
    return Option(name, default, help, check)


def limit(name: str, default: int, help: str) -> Option:
    """A sample size: a whole number >= 1, or None (also 'none' on the command line) for no sample."""
    whole = count(name, default, help)
    return Option(name, default, help, lambda v: None if v is None or str(v).lower() == "none" else whole.parse(v))


def flag(name: str, default: bool, help: str) -> Option:
    """An option that is True or False."""
    return Option(name, default, help)
