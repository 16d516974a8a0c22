"""Whether a set of trips could be the movement it stands for (issue 54): where its points lie
against the real test trips, how fast its steps go against the set's public speed bound, how long
its trips last, and how many are a single point. The standard suite (standard.py) compares
distributions on coarse grids and misses a ship on land or a walk at 300 km/h; these do not.

Definitions (the real points are the test set's; a location's distance to them is its point's
distance to the nearest location the test set visits, by a k-d tree on the planar coordinates,
computed once per location of the space):

- **off the map, one cell**: the share of a set's points farther than 1.5 cell sides from every
  real point, i.e. outside the 3 x 3 cells around each (the cell: ``info['cell_m']`` of a set of
  trips, else the median distance between a location and its nearest other one);
- **off the map, 1 km**: the share farther than 1 km;
- **steps over the bound**: the share of steps faster than the real set's public speed bound
  (``TraceSet.bounds.max_speed_kmh``; 150 km/h, the cabs', for a set prepared without one), speeds
  as metrics/trip_times.py reads them; metrics.json's meta names the bound;
- **median duration factor**: the larger of (synthetic median / real median, real / synthetic) of
  the trips' durations (first to last point, trips of two points or more): 1 when they agree, 1.5
  when one lasts half as long again as the other;
- **one-point trips**: the share of trips with a single point (no length, no speed: real trips have
  none, data/trips.py drops them).

The training set's values stand beside the synthetic set's; the uniform column holds what points
drawn uniformly over the space's locations (those a public domain allows) would give for the two
map shares, and nothing for the others (a uniform guess has no times or lengths of its own).
"""

from __future__ import annotations

import numpy as np

from ..data.traces import TraceSet
from .groups import GroupResult, Metric, MetricGroup, row
from .standard import planar
from .trip_times import trip_times

#: a point farther than this many cell sides from every real point is off the map (outside the
#: 3 x 3 cells around them: a diagonal neighbour lies at 1.41 sides, the next ring at 2)
CELL_SIDES = 1.5
#: the second distance, in metres
FAR_M = 1000.0


def speed_bound(ts: TraceSet) -> float:
    """The set's public speed bound in km/h (its ``bounds``: the cabs' 150 for a set prepared without a
    mode, data/modes.py)."""
    return float(ts.bounds.max_speed_kmh)


def cell_m(ts: TraceSet) -> float:
    """A cell's side in metres: ``info['cell_m']`` of trips, else the median distance from each
    location to its nearest other one."""
    if "cell_m" in ts.info:
        return float(ts.info["cell_m"])
    from scipy.spatial import cKDTree

    xy = np.column_stack(planar(ts.space))
    if len(xy) < 2:
        return FAR_M
    return float(np.median(cKDTree(xy).query(xy, k=2)[0][:, 1]))


def distance_to_real(real: TraceSet) -> np.ndarray:
    """Shape (n_locations,): each location's distance in metres to the nearest location ``real``
    visits."""
    from scipy.spatial import cKDTree

    xy = np.column_stack(planar(real.space))
    visited = np.unique(real.loc[real.loc >= 0])
    return cKDTree(xy[visited]).query(xy)[0]


def realism(ts: TraceSet, near: np.ndarray, cell: float, bound: float) -> dict:
    """The figures of the module docstring for ``ts`` (``near``: :func:`distance_to_real` of the
    real set on the same space); None where ``ts`` has no times, or no trip of two points."""
    loc = ts.loc[ts.loc >= 0]
    counts = ts.counts()
    out = {"far_cell": float((near[loc] > CELL_SIDES * cell).mean()) if loc.size else None,
           "far_km": float((near[loc] > FAR_M).mean()) if loc.size else None,
           "one_point": float((counts[counts > 0] == 1).mean()) if (counts > 0).any() else None,
           "fast": None, "median_minutes": None}
    if ts.has_times and (counts > 1).any():
        times = trip_times(ts)
        # a step at the bound computes a hair above it (2.5 km in a minute: 150.00000000000003)
        out["fast"] = float((times["kmh"] > bound * (1 + 1e-9)).mean()) if times["kmh"].size else 0.0
        out["median_minutes"] = float(np.median(times["minutes"]))
    return out


def duration_factor(median: float | None, real: float | None) -> float | None:
    """max(median / real, real / median): 1 when equal; None without both, inf when one is 0 and
    the other not."""
    if median is None or real is None:
        return None
    if median <= 0 or real <= 0:
        return 1.0 if median == real else float("inf")
    return float(max(median / real, real / median))


def uniform(space, near: np.ndarray, cell: float) -> dict:
    """The map shares of points drawn uniformly over the space's (allowed) locations."""
    keep = space.allowed_locations()
    return {"far_cell": float((near[keep] > CELL_SIDES * cell).mean()), "far_km": float((near[keep] > FAR_M).mean())}


def _group(ctx) -> GroupResult:
    cell, bound = cell_m(ctx.test), speed_bound(ctx.test)
    near = ctx.reference(("realism", "near"), lambda: distance_to_real(ctx.test))
    real = ctx.reference(("realism", "test"), lambda: realism(ctx.test, near, cell, bound))
    training = ctx.reference(("realism", "training"), lambda: realism(ctx.train, near, cell, bound))
    synthetic = realism(ctx.synthetic, near, cell, bound)
    even = uniform(ctx.test.space, near, cell)
    metrics = {
        "realism_far_cell": row(synthetic["far_cell"], training["far_cell"], even["far_cell"]),
        "realism_far_km": row(synthetic["far_km"], training["far_km"], even["far_km"]),
        "realism_fast_steps": row(synthetic["fast"], training["fast"], None),
        "realism_duration_factor": row(duration_factor(synthetic["median_minutes"], real["median_minutes"]),
                                       duration_factor(training["median_minutes"], real["median_minutes"]), None),
        "realism_one_point": row(synthetic["one_point"], training["one_point"], None),
    }
    meta = {"realism": {"speed_bound_kmh": bound, "cell_m": cell, "far_m": FAR_M,
                        "real_median_minutes": real["median_minutes"],
                        "synthetic_median_minutes": synthetic["median_minutes"]}}
    return GroupResult(metrics, {"realism": {"test": real, "training": training, "synthetic": synthetic}}, meta)


def _skip(ctx) -> str | None:
    if not ctx.trips:
        return ""
    if ctx.synthetic.space.n_locations != ctx.test.space.n_locations:
        return "the synthetic and test sets are on different spaces"
    if not (ctx.test.loc >= 0).any():
        return "the test set has no located event"
    return None


METRICS = (
    Metric("realism_far_cell", "Points off the map (1 cell)", "share of the set's points farther than one cell from "
           "every real point of the test set (outside the 3 x 3 cells around them)", range=(0.0, 1.0),
           short="off 1 cell"),
    Metric("realism_far_km", "Points off the map (1 km)", "share of the set's points farther than 1 km from every "
           "real point of the test set", range=(0.0, 1.0), short="off 1 km"),
    Metric("realism_fast_steps", "Steps over the speed bound", "share of the set's steps faster than the real set's "
           "public speed bound (metrics.json meta 'realism' names it; 150 km/h, the cabs', for a set without one)",
           range=(0.0, 1.0), short="> bound"),
    Metric("realism_duration_factor", "Median duration factor", "the factor between the set's median trip duration "
           "and the test set's, max(a / b, b / a): 1 when they agree", range=(1.0, None), short="dur x"),
    Metric("realism_one_point", "One-point trips", "share of the set's trips that are a single point (no length, "
           "no speed)", range=(0.0, 1.0), short="1-pt"),
)

GROUP = MetricGroup("realism", METRICS, _group, _skip, step="realism (map, speed bound, durations)")
