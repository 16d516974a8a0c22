"""When trips happen and how fast they go: the divergences of start hours, durations and speeds
between a set of trips and the real test trips, and the share of steps faster than the public
speed bound.

Definitions (each set's trips with two points or more; a set without times has none of these):

- **start hour**: the hour of the day (0-23, on the set's clock) of a trip's first point;
- **duration**: minutes from a trip's first point to its last, in :data:`DURATION_BINS` (5-minute
  bins to an hour, then 60-90, 90-120 and beyond);
- **speed**: every step's speed in km/h, the distance between its two points' locations over the
  time between them, in 30 equal bins up to the test set's public speed bound, then beyond
  (:func:`speed_bins`: 5 km/h bins to 150 for the cabs' taxi bounds); a step within one instant
  counts as taking one;
- **fast steps**: the share of a set's steps faster than the test set's public speed bound (its
  mode's, :attr:`TraceSet.bounds <locsynth.data.traces.TraceSet.bounds>`: 150 km/h for the cabs,
  60 for a ship), which the trip time model respects (synth/trip_times.py) and real trips are
  prepared to keep (data/trips.py); the report names the bound (``meta['speed_bound']``).

Each divergence is Jensen-Shannon's in bits (0: the same distribution, 1: disjoint), the synthetic
set's and the training set's against the test set's; the uniform column holds a uniform
distribution over the same bins (all hours alike; durations up to two hours; speeds up to the
bound).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.traces import TraceSet
from .groups import GroupResult, Metric, MetricGroup, row
from .trips import HOURS, jensen_shannon

#: duration bins in minutes
DURATION_BINS = np.array([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 90, 120, np.inf])
#: speed bins in km/h for the cabs' bound (:func:`speed_bins` of 150)
SPEED_BINS = np.r_[np.arange(0, 155, 5.0), np.inf]
#: the cabs' speed bound, km/h (paper 004), which sets without bounds of their own are read with
BOUND_KMH = 150.0


def speed_bins(bound_kmh: float) -> np.ndarray:
    """30 equal speed bins from 0 to the bound, then one beyond, km/h."""
    return np.r_[np.linspace(0.0, float(bound_kmh), 31), np.inf]


def trip_times(trips: TraceSet) -> dict[str, np.ndarray]:
    """Each trip's start hour and duration (minutes) and each step's speed (km/h), for trips of two
    points or more."""
    offsets = trips.offsets
    full = np.diff(offsets) > 1
    first, last = offsets[:-1][full], offsets[1:][full] - 1
    seconds = trips.time.start_of(trips.t).as_unit("s").asi8
    start = pd.DatetimeIndex(pd.to_datetime(seconds[first], unit="s", utc=True)).tz_convert(trips.time.timezone)
    same = trips.user[1:] == trips.user[:-1]
    metres = np.asarray(trips.space.distance_m(trips.loc[:-1][same], trips.loc[1:][same]), np.float64)
    took = np.maximum(np.diff(seconds)[same], trips.time.instant.total_seconds())
    return {"hour": np.asarray(start.hour, np.int64), "minutes": (seconds[last] - seconds[first]) / 60.0,
            "kmh": 3.6 * metres / took}


def distributions(trips: TraceSet, bound_kmh: float = BOUND_KMH) -> dict[str, np.ndarray]:
    """The three histograms of :func:`trip_times` (counts over their bins, speeds in
    :func:`speed_bins` of ``bound_kmh``); the steps over the bound are the realism group's."""
    v = trip_times(trips)
    return {"start_hour": np.bincount(v["hour"], minlength=HOURS).astype(np.float64),
            "duration": np.histogram(v["minutes"], bins=DURATION_BINS)[0].astype(np.float64),
            "speed": np.histogram(v["kmh"], bins=speed_bins(bound_kmh))[0].astype(np.float64)}


def _uniform() -> dict[str, np.ndarray]:
    durations, speeds = np.ones(DURATION_BINS.size - 1), np.ones(SPEED_BINS.size - 1)
    durations[-1] = speeds[-1] = 0.0                       # nothing beyond two hours or the bound
    return {"start_hour": np.ones(HOURS), "duration": durations, "speed": speeds}


def _skip(ctx) -> str | None:
    if not ctx.trips:
        return ""
    for name, ts in (("test", ctx.test), ("synthetic", ctx.synthetic)):
        if not ts.has_times:
            return (f"the {name} set has no times (its method releases where trips go, not when; with a time "
                    f"model, time_share > 0, it would)")
        if (np.diff(ts.offsets) > 1).sum() == 0:
            return f"the {name} set has no trip of two points"
    return None


def _group(ctx) -> GroupResult:
    bounds = ctx.test.bounds
    bound = bounds.max_speed_kmh
    real = ctx.reference(("trip_times", "test", bound), lambda: distributions(ctx.test, bound))
    training = ctx.reference(("trip_times", "training", bound), lambda: distributions(ctx.train, bound)
                             if ctx.train.has_times else None)
    synthetic, uniform = distributions(ctx.synthetic, bound), _uniform()

    def jsd(kind, other):
        if other is None or other[kind].sum() <= 0 or real[kind].sum() <= 0:
            return None
        return jensen_shannon(other[kind], real[kind])

    metrics = {f"trip_{kind}_jsd": row(jsd(kind, synthetic), jsd(kind, training), jsd(kind, uniform))
               for kind in ("start_hour", "duration", "speed")}
    details = {"trip_times": {name: {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}
                              for name, d in (("test", real), ("training", training or {}), ("synthetic", synthetic))}}
    details["trip_times"]["bound_kmh"] = bound
    return GroupResult(metrics, details, meta={"speed_bound": {"kmh": bound, "mode": bounds.mode}})


METRICS = (
    Metric("trip_start_hour_jsd", "Start-hour JSD", "Jensen-Shannon divergence in bits between the distributions of "
           "the hour trips start in (their first point, on the set's clock)", range=(0.0, 1.0), short="start JSD"),
    Metric("trip_duration_jsd", "Duration JSD", "Jensen-Shannon divergence in bits between the distributions of "
           "trip durations (first to last point, 5-minute bins to an hour)", range=(0.0, 1.0), short="dur JSD"),
    Metric("trip_speed_jsd", "Speed JSD", "Jensen-Shannon divergence in bits between the distributions of step "
           "speeds (km/h, 30 bins to the public speed bound: 5 km/h bins to 150 for the cabs)", range=(0.0, 1.0),
           short="speed JSD"),
)

GROUP = MetricGroup("trip_times", METRICS, _group, _skip)
