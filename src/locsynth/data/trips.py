"""Passenger trips of the San Francisco cabs on a grid (paper 004 §8.1-8.2 and its Table 1).

A trip is a maximal run of occupied fixes of one cab (``io.read_cabs(trips=True)``); paper 004
protects passengers, so one trace is one trip. The steps, in the order the data flows, each one
function below:

1. :func:`trip_grid`: square cells of 250 m or 500 m over the paper's bounding box
   (37.6017N, 122.5158W) - (37.8112N, 122.3527W) (§8.1).
2. :func:`bad_trips`: a trip with a speed above 150 km/h between two consecutive GPS fixes, or
   with a fix outside the box, is dropped whole (§8.2: "All traces are dropped with velocity
   larger than 150 km/h (calculated between two GPS points) or being out of the bounding box").
3. :func:`weekday_trips`: trips that start on a Saturday, a Sunday or a US federal holiday, in
   Pacific time, are dropped (§8.2: "weekdays only"; 2008-05-26, Memorial Day, is the holiday
   inside the data's 2008-05-17 .. 2008-06-10).
4. :func:`aggregate`: one visit per 60 s, the trip's most frequent cell among its fixes in that
   minute (§8.2, transformation (1)).
5. :func:`interpolate_gaps`: minutes missing between two visits less than 5 minutes apart are
   filled by linear interpolation (§8.2, transformation (2)).
6. :func:`majority_hour`: the hour of the day in which the larger part of the trip lies (§8.2:
   a trip from 17:58 to 18:10 gets hour 18), stored per trip in the user table (``hour``).
7. :func:`merge_self_loops`: consecutive visits to the same cell collapse into the first one.
8. trips left with a single visit are dropped.

The output is a TraceSet whose traces are the trips (ragged), on the grid, with 60-second
instants in Pacific time (slots of one hour), and user-table columns ``user_id`` (the trip,
``cab-00012``), ``cab`` and ``hour``. :func:`locsynth.metrics.trips.trip_statistics` gives the
columns of Table 1.

Where §8.2 leaves a choice open, the choice is written beside the code (search "Choice:").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from .points import shift_times
from ..core.geo import EARTH_RADIUS_M, haversine_m
from .space import Grid
from .timeaxis import TimeAxis, check_timezone
from .traces import TraceSet

#: (lat_min, lat_max, lon_min, lon_max) of paper 004 §8.1
PAPER_BBOX = (37.6017, 37.8112, -122.5158, -122.3527)
TIMEZONE = "America/Los_Angeles"
METRES_PER_DEGREE = math.pi * EARTH_RADIUS_M / 180.0


@dataclass(frozen=True)
class Visits:
    """Visits sorted by (trip, minute): ``trip`` (row in the trip table), ``minute`` (unix
    seconds // 60, or the fix's unix seconds before aggregation) and ``cell``."""

    trip: np.ndarray
    minute: np.ndarray
    cell: np.ndarray

    def take(self, keep: np.ndarray) -> "Visits":
        return Visits(self.trip[keep], self.minute[keep], self.cell[keep])

    def __len__(self) -> int:
        return int(self.trip.size)


# -- 1. the grid -------------------------------------------------------------------------------

def trip_grid(cell_m: float = 250.0, bbox: tuple[float, float, float, float] = PAPER_BBOX) -> Grid:
    """Square cells of ``cell_m`` metres from the south-west corner of ``bbox``.

    Choice: cells are exactly ``cell_m`` wide (metres per degree of longitude taken at the box's
    middle latitude, an equirectangular projection, within 0.2 % over the 23 km box) and the last
    row and column may reach past the box's north and east edges; points outside the box are
    dropped before they are located. The paper's box is 23.3 km x 14.3 km (§8.1 says about
    9 x 10 km), hence 94 x 58 cells of 250 m and 47 x 29 of 500 m.
    """
    if not (isinstance(cell_m, (int, float)) and math.isfinite(cell_m) and cell_m > 0):
        raise InputError(f"cell size must be a positive number of metres, got {cell_m!r}")
    lat_min, lat_max, lon_min, lon_max = (float(v) for v in bbox)
    if not (lat_min < lat_max and lon_min < lon_max):
        raise InputError(f"bad bounding box {bbox}: expected (lat_min, lat_max, lon_min, lon_max)")
    dlat = cell_m / METRES_PER_DEGREE
    dlon = cell_m / (METRES_PER_DEGREE * math.cos(math.radians((lat_min + lat_max) / 2)))
    rows = max(1, math.ceil((lat_max - lat_min) / dlat - 1e-9))
    cols = max(1, math.ceil((lon_max - lon_min) / dlon - 1e-9))
    return Grid(rows, cols, (lat_min, lat_min + rows * dlat, lon_min, lon_min + cols * dlon))


# -- 2. speed and box --------------------------------------------------------------------------

def bad_trips(trip: np.ndarray, unix: np.ndarray, lat: np.ndarray, lon: np.ndarray, n_trips: int,
              bbox: tuple[float, float, float, float] = PAPER_BBOX,
              max_speed_kmh: float = 150.0) -> tuple[np.ndarray, np.ndarray]:
    """(too fast, outside the box), two boolean arrays of shape (n_trips,), from fixes sorted by
    (trip, time).

    The speed of a pair of consecutive fixes of one trip is the great-circle distance over the
    time between them; two fixes at the same second but different places count as too fast.
    """
    lat_min, lat_max, lon_min, lon_max = bbox
    outside_fix = ~((lat >= lat_min) & (lat <= lat_max) & (lon >= lon_min) & (lon <= lon_max))
    same = trip[1:] == trip[:-1]
    metres = haversine_m(lat[:-1], lon[:-1], lat[1:], lon[1:])
    seconds = np.diff(unix).astype(np.float64)
    if np.isfinite(max_speed_kmh):
        fast_pair = same & (metres * 3.6 > max_speed_kmh * seconds)   # m/s * 3.6 = km/h
    else:                                                   # no limit: inf * 0 s would be NaN
        fast_pair = np.zeros_like(same)
    fast = np.zeros(n_trips, bool)
    fast[trip[1:][fast_pair]] = True
    outside = np.zeros(n_trips, bool)
    outside[trip[outside_fix]] = True
    return fast, outside


# -- 3. weekdays -------------------------------------------------------------------------------

def weekday_trips(start_unix: np.ndarray, timezone: str = TIMEZONE) -> np.ndarray:
    """True for trips whose first fix falls, in local time, on a Monday to Friday that is not a
    US federal holiday (pandas' ``USFederalHolidayCalendar``).

    Choice: a trip belongs to the day it starts on (the paper does not say; trips across
    midnight are few).
    """
    from pandas.tseries.holiday import USFederalHolidayCalendar

    if start_unix.size == 0:
        return np.zeros(0, bool)
    local = pd.DatetimeIndex(pd.to_datetime(start_unix, unit="s", utc=True)).tz_convert(timezone)
    dates = local.tz_localize(None).normalize()
    holidays = USFederalHolidayCalendar().holidays(dates.min(), dates.max())
    return np.asarray((local.day_of_week < 5) & ~dates.isin(holidays))


# -- 4. 60-second aggregation ------------------------------------------------------------------

def aggregate(fixes: Visits, seconds: int = 60) -> Visits:
    """One visit per trip and window of ``seconds``: the most frequent cell of the trip's fixes
    in the window (``fixes.minute`` holds unix seconds here); the result's ``minute`` is the
    window index, unix seconds // ``seconds``.

    Choice: windows are aligned on the clock (whole minutes; the Pacific offset is whole hours)
    rather than on each trip's first fix, and a tie goes to the cell seen first in the window.
    """
    n = len(fixes)
    if n == 0:
        return fixes
    window = fixes.minute // seconds
    new = np.r_[True, (fixes.trip[1:] != fixes.trip[:-1]) | (window[1:] != window[:-1])]
    group = np.cumsum(new) - 1
    order = np.lexsort((np.arange(n), fixes.cell, group))     # by group, cell, then position
    g, c = group[order], fixes.cell[order]
    run = np.flatnonzero(np.r_[True, (g[1:] != g[:-1]) | (c[1:] != c[:-1])])
    count = np.diff(np.r_[run, n])
    first_seen = order[run]                                    # positions are sorted within a run
    best = np.lexsort((first_seen, -count, g[run]))
    best = best[np.r_[True, g[run][best][1:] != g[run][best][:-1]]]
    return Visits(fixes.trip[new], window[new], c[run][best])


# -- 5. interpolation --------------------------------------------------------------------------

def interpolate_gaps(visits: Visits, cols: int, max_gap_minutes: float = 5.0) -> Visits:
    """Fill the minutes missing between two consecutive visits of a trip that are less than
    ``max_gap_minutes`` apart, linearly between the two cells' rows and columns.

    Choice: the gap is the time between the two visits (so "shorter than 5 minutes" fills at
    most 3 missing minutes); the interpolated row and column are rounded half up; a longer gap
    is left as it is (the trip is not split). The cells are on the grid of ``cols`` columns.
    """
    n = len(visits)
    if n == 0:
        return visits
    step = np.diff(visits.minute)
    fill = (visits.trip[1:] == visits.trip[:-1]) & (step > 1) & (step < max_gap_minutes)
    extra = np.r_[np.where(fill, step - 1, 0), 0]
    base = np.repeat(np.arange(n), extra + 1)
    k = np.arange(base.size) - np.repeat(np.cumsum(extra + 1) - (extra + 1), extra + 1)
    nxt = np.minimum(base + 1, n - 1)
    frac = k / np.r_[np.where(fill, step, 1), 1][base].astype(np.float64)
    row, col = np.divmod(visits.cell.astype(np.int64), cols)
    r = np.floor(row[base] + (row[nxt] - row[base]) * frac + 0.5).astype(np.int64)
    c = np.floor(col[base] + (col[nxt] - col[base]) * frac + 0.5).astype(np.int64)
    return Visits(visits.trip[base], visits.minute[base] + k, r * cols + c)


# -- 6. the trip's hour ------------------------------------------------------------------------

def majority_hour(visits: Visits, n_trips: int, timezone: str = TIMEZONE) -> np.ndarray:
    """The local hour (0-23) holding most of each trip's minute visits, -1 for a trip without
    visits; shape (n_trips,).

    Choice: counted over the minute visits after interpolation and before self-loops merge, i.e.
    by time spent ("when the larger part of the taxi trace was present"); a tie goes to the
    hour reached first.
    """
    hour = np.full(n_trips, -1, np.int64)
    if len(visits) == 0:
        return hour
    local = pd.DatetimeIndex(pd.to_datetime(visits.minute * 60, unit="s", utc=True)).tz_convert(timezone)
    h = np.asarray(local.hour, np.int64)
    key = visits.trip * 24 + h
    uniq, first, count = np.unique(key, return_index=True, return_counts=True)
    trip = uniq // 24
    best = np.lexsort((first, -count, trip))
    best = best[np.r_[True, trip[best][1:] != trip[best][:-1]]]
    hour[trip[best]] = uniq[best] % 24
    return hour


# -- 7. self-loops -----------------------------------------------------------------------------

def merge_self_loops(visits: Visits) -> Visits:
    """Consecutive visits of a trip to the same cell become one, at the first one's minute."""
    if len(visits) == 0:
        return visits
    keep = np.r_[True, (visits.trip[1:] != visits.trip[:-1]) | (visits.cell[1:] != visits.cell[:-1])]
    return visits.take(keep)


# -- the whole path ----------------------------------------------------------------------------

def read_trips(path: str | Path, cell_m: float = 250.0, time_shift: float = 0.0, **options) -> TraceSet:
    """The passenger trips of a folder of Cabspotting files (``new_<cab>.txt``) on a grid of
    ``cell_m`` metres, times moved ``time_shift`` hours; ``options`` as :func:`make_trips`."""
    from .io.cabs import read_cabs

    points = shift_times(read_cabs(path, trips=True), time_shift)
    return make_trips(points, cell_m, info={"source": "cabs", "input": Path(path).name}, **options)


#: GeoLife's Beijing box (87 % of the subset's points, SOURCE.md), as (lat_min, lat_max, lon_min, lon_max)
BEIJING_BBOX = (39.7, 40.2, 116.1, 116.7)


def read_geolife_trips(path: str | Path, cell_m: float = 250.0, time_shift: float = 0.0, **options) -> TraceSet:
    """GeoLife's trajectories as trips, the unit PrivTrace and AdaTrace protect: one trace per PLT
    file, through :func:`make_trips`'s steps on square cells of ``cell_m`` metres over Beijing's box
    (``bbox``), in Beijing time (``timezone``). Choices: every day is kept (GeoLife users are not
    cabs on shifts); a trajectory that leaves the box is dropped whole, as the cabs' are, but no
    speed limit applies by default (``max_speed_kmh``): loggers that fix every 1-5 s make one
    jittery fix look faster than 150 km/h in 59 of the subset's 111 trajectories, which would
    drop half of them."""
    from .io.geolife import read_geolife

    points = shift_times(read_geolife(path, trajectories=True), time_shift)
    options = {"bbox": BEIJING_BBOX, "timezone": "Asia/Shanghai", "max_speed_kmh": math.inf, **options}
    return make_trips(points, cell_m, weekdays_only=False, info={"source": "geolife", "input": Path(path).name},
                      **options)


def make_trips(points: pd.DataFrame, cell_m: float = 250.0, *,
               bbox: tuple[float, float, float, float] = PAPER_BBOX, timezone: str = TIMEZONE,
               max_speed_kmh: float = 150.0, max_gap_minutes: float = 5.0, weekdays_only: bool = True,
               info: dict | None = None) -> TraceSet:
    """Trips as paper 004 §8.2 prepares them (module docstring) from a points table whose
    ``user`` is the trip (``read_cabs(trips=True)``) and ``time``, ``lat``, ``lon`` its fixes.

    Returns a TraceSet with one trace per kept trip and ``info['trips']`` counting what every
    step dropped.
    """
    missing = [c for c in ("user", "time", "lat", "lon") if c not in points]
    if missing:
        raise InputError(f"the trip points lack column(s) {', '.join(missing)}; required: user, time, lat, lon")
    if len(points) == 0:
        raise InputError("no fixes to make trips from")
    if not (max_speed_kmh > 0 and max_gap_minutes > 0):
        raise InputError(f"max_speed_kmh and max_gap_minutes must be positive, got {max_speed_kmh!r} and "
                         f"{max_gap_minutes!r}")
    check_timezone(timezone)
    grid = trip_grid(cell_m, bbox)
    trip, ids = pd.factorize(points["user"], sort=False)
    trip = trip.astype(np.int64)
    times = pd.DatetimeIndex(points["time"])
    if times.tz is None:
        raise InputError("the trip points have naive times; expected timezone-aware (UTC) timestamps")
    unix = times.tz_convert("UTC").as_unit("ns").asi8 // 10**9
    lat, lon = points["lat"].to_numpy(np.float64), points["lon"].to_numpy(np.float64)
    order = np.lexsort((unix, trip))
    trip, unix, lat, lon = trip[order], unix[order], lat[order], lon[order]
    n_trips = len(ids)
    steps = {"trips": n_trips, "fixes": int(trip.size)}

    fast, outside = bad_trips(trip, unix, lat, lon, n_trips, bbox, max_speed_kmh)
    start = unix[np.searchsorted(trip, np.arange(n_trips))]     # each trip's first fix (every trip has one)
    weekday = weekday_trips(start, timezone) if weekdays_only else np.ones(n_trips, bool)
    keep_trip = ~fast & ~outside & weekday
    steps.update({"too_fast": int(fast.sum()), "outside_box": int((outside & ~fast).sum()),
                  "weekend_or_holiday": int((~weekday & ~fast & ~outside).sum())})
    keep = keep_trip[trip]
    cell = grid.locate(lat[keep], lon[keep]).astype(np.int64)
    fixes = Visits(trip[keep], unix[keep], cell)

    visits = interpolate_gaps(aggregate(fixes, 60), grid.cols, max_gap_minutes)
    hour = majority_hour(visits, n_trips, timezone)
    visits = merge_self_loops(visits)
    length = np.bincount(visits.trip, minlength=n_trips)
    single = keep_trip & (length < 2)
    steps["single_visit"] = int(single.sum())
    visits = visits.take(length[visits.trip] >= 2)
    if len(visits) == 0:
        raise InputError("no trip is left after preprocessing (paper 004 §8.2): every trip was too fast, left "
                         "the bounding box, fell on a weekend or holiday, or stayed in one cell")
    info = {**(info or {}), "cell_m": float(cell_m), "bbox": list(bbox), "trips": steps}
    return _traceset(visits, ids, hour, grid, timezone, info)


def _traceset(visits: Visits, ids, hour: np.ndarray, grid: Grid, timezone: str, info: dict) -> TraceSet:
    """The TraceSet of the kept trips: one-minute instants, one-hour slots, in ``timezone``."""
    present, row = np.unique(visits.trip, return_inverse=True)
    names = pd.Series(np.asarray(ids, dtype=object)[present]).astype(str)
    users = pd.DataFrame({"user_id": names.to_numpy(dtype=object),
                          "cab": names.str.rsplit("-", n=1).str[0].to_numpy(dtype=object),
                          "hour": hour[present].astype(np.int8)})
    when = pd.DatetimeIndex(pd.to_datetime(visits.minute * 60, unit="s", utc=True))
    axis = TimeAxis.build(when.min().tz_convert(timezone).date(), timezone, "1min", "1h")
    info["trips"]["kept"] = int(present.size)
    return TraceSet.from_events(row, axis.instants(when), visits.cell, users, grid, axis, info)


# -- Table 1 -----------------------------------------------------------------------------------

__all__ = ["PAPER_BBOX", "TIMEZONE", "Visits", "aggregate", "bad_trips", "interpolate_gaps", "majority_hour",
           "make_trips", "merge_self_loops", "read_trips", "trip_grid", "weekday_trips"]
