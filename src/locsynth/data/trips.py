"""Trips on a grid from GPS fixes, as paper 004 §8.1-8.2 prepares the San Francisco cabs'.

A trip is the unit a trip synthesizer protects: one trace is one trip. Its fixes come with a trip
id, as a run of fixes marked as one (the cabs' occupancy: a passenger), or from a person's fixes
split at stays and gaps (:func:`segment`, trackintel's staypoints and triplegs). :func:`make_trips`
then takes them through the steps below, each one function, in the order the data flows; its
options default to any city's (the data's own box and time zone, every day, no speed limit), and
:data:`PRESETS` hold paper 004's for the cabs (:data:`CABS`, which ``prepare --format cab-trips``
applies) and GeoLife's. What every step dropped is counted in ``info['trips']``
(:func:`describe_drops` says it in words).

1. :func:`trip_grid`: square cells of ``cell_m`` metres (the paper's 250 or 500) over the box:
   the data's own by default, the paper's (37.6017N, 122.5158W) - (37.8112N, 122.3527W) for the
   cabs (§8.1).
2. :func:`bad_trips`: a trip faster than ``max_speed_kmh`` between two consecutive GPS fixes (no
   limit by default; the cabs' 150 km/h), or with a fix outside the box, is dropped whole (§8.2:
   "All traces are dropped with velocity larger than 150 km/h (calculated between two GPS
   points) or being out of the bounding box").
3. :func:`weekday_trips`: with ``weekdays_only`` (the cabs'), trips that start on a Saturday, a
   Sunday or a US federal holiday, on the time zone's clock, are dropped (§8.2: "weekdays only";
   2008-05-26, Memorial Day, is the holiday inside the cabs' 2008-05-17 .. 2008-06-10).
4. :func:`aggregate`: one visit per 60 s, the trip's most frequent cell among its fixes in that
   minute (§8.2, transformation (1)); per instant of the set's mode where it has another
   (data/modes.py: a ship's 2 minutes).
5. :func:`interpolate_gaps`: minutes missing between two visits less than 5 minutes apart are
   filled by linear interpolation (§8.2, transformation (2)).
6. :func:`majority_hour`: the hour of the day in which the larger part of the trip lies (§8.2:
   a trip from 17:58 to 18:10 gets hour 18), stored per trip in the user table (``hour``).
7. :func:`merge_self_loops`: consecutive visits to the same cell collapse into the first one.
8. :func:`keep_bound`: each step takes at least the instants its length asks at the set's speed
   bound (its mode's, data/modes.py), later visits moved later where it took fewer (not in §8.2:
   a cell's edge crossed within one instant otherwise reads as a step of a whole cell).
9. trips left with a single visit are dropped.

The output is a TraceSet whose traces are the trips (ragged), on the grid, with 60-second
instants (the mode's) on the time zone's clock (slots of one hour), and user-table columns
``user_id`` (the trip, ``cab-00012``), its owner (``person``, or ``cab`` for the cabs) and
``hour``; ``info['bounds']`` holds the set's public bounds.
:func:`locsynth.metrics.trips.trip_statistics` gives the columns of Table 1.

Where §8.2 leaves a choice open, the choice is written beside the code (search "Choice:").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numba import njit

from ..core.errors import InputError
from .points import shift_times
from ..core.geo import EARTH_RADIUS_M, haversine_m
from .modes import TAXI, Bounds
from .space import Grid, check_grid_size
from .timeaxis import TimeAxis, check_timezone, single_zone
from .traces import TraceSet

#: (lat_min, lat_max, lon_min, lon_max) of paper 004 §8.1
PAPER_BBOX = (37.6017, 37.8112, -122.5158, -122.3527)
TIMEZONE = "America/Los_Angeles"
#: the fewest cells a trip keeps (paper 004 §8.2 drops trips that never leave their cell): a public rule,
#: stated in the set's ``info['min_cells']`` so that synthesizers respect it
MIN_CELLS = 2
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
    rows, cols, dlat, dlon = _cells(cell_m, bbox)
    check_grid_size(rows, cols, f"the grid of `cell_m` = {cell_m:g} m cells over the box ({rows:,} x {cols:,})")
    lat_min, lon_min = float(bbox[0]), float(bbox[2])
    return Grid(rows, cols, (lat_min, lat_min + rows * dlat, lon_min, lon_min + cols * dlon))


def _cells(cell_m: float, bbox) -> tuple[int, int, float, float]:
    """(rows, cols, cell height and width in degrees) of :func:`trip_grid`, without making it."""
    if not (isinstance(cell_m, (int, float)) and math.isfinite(cell_m) and cell_m > 0):
        raise InputError(f"cell size must be a positive number of metres, got {cell_m!r}")
    lat_min, lat_max, lon_min, lon_max = (float(v) for v in bbox)
    if not (lat_min < lat_max and lon_min < lon_max):
        raise InputError(f"bad bounding box {bbox}: expected (lat_min, lat_max, lon_min, lon_max)")
    dlat = cell_m / METRES_PER_DEGREE
    dlon = cell_m / (METRES_PER_DEGREE * math.cos(math.radians((lat_min + lat_max) / 2)))
    rows = max(1, math.ceil((lat_max - lat_min) / dlat - 1e-9))
    cols = max(1, math.ceil((lon_max - lon_min) / dlon - 1e-9))
    rows += lat_min + rows * dlat < lat_max          # a box of whole cells, rounded below its edge: one more
    cols += lon_min + cols * dlon < lon_max
    return rows, cols, dlat, dlon


# -- 2. speed and box --------------------------------------------------------------------------

def bad_trips(trip: np.ndarray, unix: np.ndarray, lat: np.ndarray, lon: np.ndarray, n_trips: int,
              bbox: tuple[float, float, float, float] = PAPER_BBOX,
              max_speed_kmh: float = 150.0, window_s: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(too fast, outside the box), two boolean arrays of shape (n_trips,), from fixes sorted by
    (trip, time).

    The speed of a pair of consecutive fixes of one trip is the great-circle distance over the
    time between them; two fixes at the same second but different places count as too fast. With
    ``window_s`` > 0 each fix is paired instead with its trip's first fix ``window_s`` or more
    later (choice: a logger that fixes every second or two makes metres of jitter read as tens
    of km/h between consecutive fixes, and would drop half of GeoLife's walks and bikes; over an
    instant the jitter averages out while a jump of kilometres still reads as one).
    """
    lat_min, lat_max, lon_min, lon_max = bbox
    outside_fix = ~((lat >= lat_min) & (lat <= lat_max) & (lon >= lon_min) & (lon <= lon_max))
    first = np.arange(trip.size)
    if window_s > 0 and trip.size:
        key = trip.astype(np.float64) * 1e12 + (unix - unix.min()).astype(np.float64)
        later = np.searchsorted(key, key + float(window_s), side="left")
        ok = later < trip.size
        first, later = first[ok], later[ok]
        ok = trip[later] == trip[first]
        first, later = first[ok], later[ok]
    else:
        same = np.flatnonzero(trip[1:] == trip[:-1])
        first, later = same, same + 1
    metres = haversine_m(lat[first], lon[first], lat[later], lon[later])
    seconds = (unix[later] - unix[first]).astype(np.float64)
    if np.isfinite(max_speed_kmh):
        fast_pair = metres * 3.6 > max_speed_kmh * seconds   # m/s * 3.6 = km/h
    else:                                                   # no limit: inf * 0 s would be NaN
        fast_pair = np.zeros(first.size, bool)
    fast = np.zeros(n_trips, bool)
    fast[trip[first][fast_pair]] = True
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
    if start_unix.size == 0:
        return np.zeros(0, bool)
    local = pd.DatetimeIndex(pd.to_datetime(start_unix, unit="s", utc=True)).tz_convert(timezone)
    return workdays(local.tz_localize(None).normalize())


#: ``info['calendar']`` of a set made with ``weekdays_only``: its trips start only on :func:`workdays`
WEEKDAYS = "weekdays"


def workdays(dates: pd.DatetimeIndex) -> np.ndarray:
    """True for the (naive, local) ``dates`` that are a Monday to Friday and not a US federal
    holiday (pandas' ``USFederalHolidayCalendar``): the days :func:`weekday_trips` keeps."""
    from pandas.tseries.holiday import USFederalHolidayCalendar

    dates = pd.DatetimeIndex(dates)
    if dates.size == 0:
        return np.zeros(0, bool)
    holidays = USFederalHolidayCalendar().holidays(dates.min(), dates.max())
    return np.asarray((dates.day_of_week < 5) & ~dates.isin(holidays))


def calendar_days(calendar: str | None, dates: pd.DatetimeIndex) -> np.ndarray:
    """Which of ``dates`` a set's public ``calendar`` (``info['calendar']``) lets a trip start on:
    :func:`workdays` for :data:`WEEKDAYS`, every one without a calendar."""
    if calendar is None:
        return np.ones(len(dates), bool)
    if calendar != WEEKDAYS:
        raise InputError(f"unknown calendar {calendar!r} in the set's info; the calendars: {WEEKDAYS!r}")
    return workdays(dates)


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

def interpolate_gaps(visits: Visits, cols: int, max_gap_minutes: float = 5.0, window_s: float = 60.0) -> Visits:
    """Fill the windows (minutes) missing between two consecutive visits of a trip that are less
    than ``max_gap_minutes`` apart, linearly between the two cells' rows and columns; ``minute``
    counts windows of ``window_s`` seconds.

    Choice: the gap is the time between the two visits (so "shorter than 5 minutes" fills at
    most 3 missing minutes); the interpolated row and column are rounded half up; a longer gap
    is left as it is (the trip is not split). The cells are on the grid of ``cols`` columns.
    """
    n = len(visits)
    if n == 0:
        return visits
    step = np.diff(visits.minute)
    fill = (visits.trip[1:] == visits.trip[:-1]) & (step > 1) & (step * window_s < max_gap_minutes * 60.0)
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

def majority_hour(visits: Visits, n_trips: int, timezone: str = TIMEZONE, window_s: float = 60.0) -> np.ndarray:
    """The local hour (0-23) holding most of each trip's visits (``minute`` counts windows of
    ``window_s`` seconds), -1 for a trip without visits; shape (n_trips,).

    Choice: counted over the minute visits after interpolation and before self-loops merge, i.e.
    by time spent ("when the larger part of the taxi trace was present"); a tie goes to the
    hour reached first.
    """
    hour = np.full(n_trips, -1, np.int64)
    if len(visits) == 0:
        return hour
    local = pd.DatetimeIndex(pd.to_datetime(visits.minute * int(window_s), unit="s", utc=True)).tz_convert(timezone)
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


# -- 8. the bound ---------------------------------------------------------------------------------

def keep_bound(visits: Visits, space, max_speed_kmh: float, window_s: float = 60.0) -> tuple[Visits, int]:
    """Each step of a trip takes at least the windows its length (between the cells' centres) asks
    at ``max_speed_kmh``, and at least one: where it took fewer, it and the trip's later visits are
    moved later (their gaps kept). Returns the visits and the number of steps slowed.

    Why: on a grid a step is read from cell centre to cell centre, so a trip that crosses a cell's
    edge in one window reads as one cell per window whatever it did (a ship at anchor on the edge of
    two 1 km cells, in one-minute windows: 60 km/h). The set's bound is public, and a real trip
    kept within it is one the speed metric and the time model can read (data/modes.py).
    """
    n = len(visits)
    if n < 2:
        return visits, 0
    same = visits.trip[1:] == visits.trip[:-1]
    metres = np.asarray(space.distance_m(visits.cell[:-1], visits.cell[1:]), np.float64)
    least = np.maximum(np.ceil(metres / (max_speed_kmh / 3.6) / window_s - 1e-9), 1).astype(np.int64)
    gap = np.diff(visits.minute)
    slowed = same & (gap < least)
    if not slowed.any():
        return visits, 0
    total = np.r_[0, np.cumsum(np.where(same, np.maximum(gap, least), 0))]
    first = np.flatnonzero(np.r_[True, ~same])
    owner = np.repeat(first, np.diff(np.r_[first, n]))         # each visit's trip's first visit
    minute = visits.minute[owner] + total - total[owner]
    return Visits(visits.trip, minute, visits.cell), int(slowed.sum())


# -- trips from a person's fixes ------------------------------------------------------------------

#: the most cells a grid over the fixes' own box may have: a few far-away fixes (a flight, GPS noise)
#: would make a continent's grid; a box of one's own is then asked for
MAX_CELLS = 1_000_000
#: trackintel's defaults (generate_staypoints, sliding; generate_triplegs): a stay is 5 minutes or
#: more within 100 m of its first fix, and fixes more than 15 minutes apart are not one trip
STAY_M, STAY_MINUTES, GAP_MINUTES = 100.0, 5.0, 15.0


@njit(cache=True)
def _stays(person, unix, lat, lon, gap_s, stay_m, stay_s):   # pragma: no cover (compiled)
    """Each fix's stay (0, 1, ...) or -1, by the sliding window of Li et al. (2008) as trackintel
    runs it: from an anchor fix, the fixes within ``stay_m`` of it (same person, no gap) are a stay
    when they last ``stay_s`` or more; the next anchor is the first fix beyond them."""
    n = unix.size
    stay = np.full(n, -1, np.int64)
    k = 0
    i = 0
    r = 6371008.8
    while i < n:
        p1, l1 = math.radians(lat[i]), math.radians(lon[i])
        j = i + 1
        while j < n and person[j] == person[i] and unix[j] - unix[j - 1] <= gap_s:
            p2, l2 = math.radians(lat[j]), math.radians(lon[j])
            h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin((l2 - l1) / 2) ** 2
            if 2 * r * math.asin(math.sqrt(min(1.0, h))) > stay_m:
                break
            j += 1
        if unix[j - 1] - unix[i] >= stay_s:
            stay[i:j] = k
            k += 1
        i = j
    return stay


@njit(cache=True)
def _legs(person, unix, stay, gap_s):   # pragma: no cover (compiled)
    """(fix, trip) pairs: each run of fixes outside stays, with the last fix of the stay before it
    and the first of the stay after it (where no gap parts them), is a trip; a fix shared by two
    trips (a stay of one fix between them) appears twice."""
    n = stay.size
    fix = np.empty(3 * n, np.int64)
    trip = np.empty(3 * n, np.int64)
    m, t, moving = 0, -1, False
    for p in range(n):
        new = p == 0 or person[p] != person[p - 1] or unix[p] - unix[p - 1] > gap_s
        if new:
            moving = False
        if stay[p] < 0:
            if not moving:
                t += 1
                moving = True
                if not new and stay[p - 1] >= 0:
                    fix[m], trip[m] = p - 1, t
                    m += 1
            fix[m], trip[m] = p, t
            m += 1
        else:
            if moving:
                fix[m], trip[m] = p, t
                m += 1
            moving = False
    return fix[:m], trip[:m]


def segment(points: pd.DataFrame, *, gap_minutes: float = GAP_MINUTES, stay_m: float = STAY_M,
            stay_minutes: float = STAY_MINUTES) -> pd.DataFrame:
    """A person's fixes (``user``: the person) as trips: split at stays (``stay_minutes`` or more
    within ``stay_m`` metres: staypoints by the sliding window, trackintel's defaults) and at gaps
    longer than ``gap_minutes``, each trip from the last fix of one stay to the first of the next
    (trackintel's triplegs). Returns the trips' fixes with ``user`` = ``f"{person}-{k:05d}"`` (k the
    person's trip number) and ``person``."""
    for name, value in (("gap_minutes", gap_minutes), ("stay_m", stay_m), ("stay_minutes", stay_minutes)):
        if not (isinstance(value, (int, float)) and value > 0):
            raise InputError(f"`{name}` must be a positive number, got {value!r}")
    code, persons = pd.factorize(points["user"], sort=True)
    unix = pd.DatetimeIndex(points["time"]).as_unit("ns").asi8 // 10**9
    order = np.lexsort((unix, code))
    lat, lon = points["lat"].to_numpy(np.float64)[order], points["lon"].to_numpy(np.float64)[order]
    code, unix = code[order].astype(np.int64), unix[order]
    stay = _stays(code, unix, lat, lon, gap_minutes * 60.0, float(stay_m), stay_minutes * 60.0)
    fix, trip = _legs(code, unix, stay, gap_minutes * 60.0)
    owner = code[fix]
    first = np.r_[True, owner[1:] != owner[:-1]]                 # trips numbered within each person
    start = np.r_[True, trip[1:] != trip[:-1]]
    number = np.cumsum(start) - 1
    number -= np.maximum.accumulate(np.where(first, number, 0))
    out = points.iloc[order[fix]].reset_index(drop=True)
    who = pd.Series(np.asarray(persons, dtype=object)[owner]).astype(str)
    out["person"] = who.to_numpy(dtype=object)
    out["user"] = (who + "-" + pd.Series(number).astype(str).str.zfill(5)).to_numpy(dtype=object)
    return out


def runs(points: pd.DataFrame, marked) -> pd.DataFrame:
    """The marked fixes of each person (``user``) in time order, each maximal run of them a trip
    (the cabs' occupancy: a passenger aboard), named and owned as :func:`segment` names them."""
    code, persons = pd.factorize(points["user"], sort=True)
    unix = pd.DatetimeIndex(points["time"]).as_unit("ns").asi8
    order = np.lexsort((unix, code))
    code, flag = code[order], np.asarray(marked, bool)[order]
    first = np.r_[True, code[1:] != code[:-1]]
    starts = flag & (first | np.r_[False, ~flag[:-1]])
    count = np.cumsum(starts)
    number = (count - np.maximum.accumulate(np.where(first, count - starts, 0)) - 1)[flag]
    out = points.iloc[order[flag]].reset_index(drop=True)
    who = pd.Series(np.asarray(persons, dtype=object)[code[flag]]).astype(str)
    out["person"] = who.to_numpy(dtype=object)
    out["user"] = (who + "-" + pd.Series(number).astype(str).str.zfill(5)).to_numpy(dtype=object)
    return out


# -- a public domain ---------------------------------------------------------------------------

def domain_box(own: tuple[float, float, float, float],
               bbox: tuple[float, float, float, float] | None) -> tuple[float, float, float, float]:
    """The box of a grid restricted to a public domain: the domain's ``own``, within ``bbox`` when
    given (an InputError when the two do not meet)."""
    if bbox is None:
        return own
    lat_min, lat_max = max(own[0], bbox[0]), min(own[1], bbox[1])
    lon_min, lon_max = max(own[2], bbox[2]), min(own[3], bbox[3])
    if not (lat_min < lat_max and lon_min < lon_max):
        raise InputError("the domain ({:.4f}-{:.4f} N, {:.4f}-{:.4f} E) and ".format(*own)
                         + "the box ({:.4f}-{:.4f} N, {:.4f}-{:.4f} E) do not meet".format(*bbox))
    return lat_min, lat_max, lon_min, lon_max


def off_domain(grid: Grid, trip: np.ndarray, lat: np.ndarray, lon: np.ndarray, kept: np.ndarray,
               n_trips: int) -> np.ndarray:
    """Bool of shape (n_trips,): the ``kept`` trips with a fix in a cell ``grid``'s domain leaves out
    (fixes sorted by trip; the kept trips' fixes all lie in the box)."""
    mine = kept[trip]
    cell = grid.locate(lat[mine], lon[mine])
    out = np.zeros(n_trips, bool)
    out[trip[mine][grid.outside(cell)]] = True
    return out


# -- the whole path ----------------------------------------------------------------------------

#: paper 004's settings for the San Francisco cabs (§8.1-8.2): its box, Pacific time, 150 km/h,
#: weekdays only; each trip's owner is its cab
CABS = {"bbox": PAPER_BBOX, "timezone": TIMEZONE, "max_speed_kmh": 150.0, "weekdays_only": True, "owner": "cab"}
#: GeoLife's Beijing box (87 % of the subset's points, SOURCE.md), as (lat_min, lat_max, lon_min, lon_max)
BEIJING_BBOX = (39.7, 40.2, 116.1, 116.7)
#: GeoLife's (see :func:`read_geolife_trips`): Beijing's box and time, every day, no speed limit
GEOLIFE = {"bbox": BEIJING_BBOX, "timezone": "Asia/Shanghai", "max_speed_kmh": math.inf, "weekdays_only": False}
#: the settings of known data, by name (``preset`` of :func:`locsynth.data.frames.trips_from_frame`)
PRESETS = {"cabs": CABS, "geolife": GEOLIFE}


def read_trips(path: str | Path, cell_m: float = 250.0, time_shift: float = 0.0, **options) -> TraceSet:
    """The passenger trips of a folder of Cabspotting files (``new_<cab>.txt``) on a grid of
    ``cell_m`` metres, times moved ``time_shift`` hours, with paper 004's settings (:data:`CABS`);
    ``options`` as :func:`make_trips`."""
    from .io.cabs import read_cabs

    points = shift_times(read_cabs(path, trips=True), time_shift)
    return make_trips(points, cell_m, info={"source": "cabs", "input": Path(path).name}, **{**CABS, **options})


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
    return make_trips(points, cell_m, info={"source": "geolife", "input": Path(path).name}, **{**GEOLIFE, **options})


def make_trips(points: pd.DataFrame, cell_m: float | None = None, *,
               bbox: tuple[float, float, float, float] | None = None, timezone: str | None = None,
               max_speed_kmh: float = math.inf, max_gap_minutes: float = 5.0, weekdays_only: bool = False,
               owner: str = "person", info: dict | None = None, bounds: Bounds | None = None,
               speed_window_s: float = 0.0, domain=None) -> TraceSet:
    """Trips as paper 004 §8.2 prepares them (module docstring) from a points table whose ``user``
    is the trip (``f"{owner}-{k}"``, as ``read_cabs(trips=True)`` and :func:`segment` name them) and
    ``time``, ``lat``, ``lon`` its fixes; ``bbox`` defaults to the fixes' own box, ``timezone`` to
    the one zone they lie in (:data:`CABS` holds the cabs' settings).

    ``bounds`` (data/modes.py; the taxi's by default) are the set's public bounds, which it carries
    in ``info['bounds']``: their instant is the windows of step 4 and the time axis's instant, their
    ``max_speed_kmh`` the least time of a step (:func:`keep_bound`); ``cell_m`` (the bounds' by
    default) is the grid's cell and becomes theirs. ``max_speed_kmh`` drops trips faster between
    two fixes (none by default), consecutive ones as paper 004 reads it, or each fix and its trip's
    first fix ``speed_window_s`` later (:func:`bad_trips`; a mode's instant, data/frames.py).

    ``domain`` (a :class:`locsynth.data.domain.Domain`: public knowledge of where the movement can
    be) shrinks the box to the domain's (within ``bbox`` when given) and opens only the cells it
    covers (:meth:`locsynth.data.space.Grid.restricted`). A trip with a fix in another cell is
    dropped whole, as one that leaves the box; a minute that :func:`interpolate_gaps` would fill
    in such a cell stays unfilled (choice: the straight line between two fixes is a guess, and the
    domain says it is a wrong one there).

    Returns a TraceSet with one trace per kept trip and ``info['trips']`` counting what every
    step dropped (:func:`describe_drops`); an InputError saying the same when no trip is left.
    """
    bounds = (bounds or TAXI).with_(cell_m=cell_m)
    cell_m, window_s = bounds.cell_m, bounds.instant_seconds
    missing = [c for c in ("user", "time", "lat", "lon") if c not in points]
    if missing:
        raise InputError(f"the trip points lack column(s) {', '.join(missing)}; required: user, time, lat, lon")
    if len(points) == 0:
        raise InputError("no fixes to make trips from")
    if not (max_speed_kmh > 0 and max_gap_minutes > 0):
        raise InputError(f"max_speed_kmh and max_gap_minutes must be positive, got {max_speed_kmh!r} and "
                         f"{max_gap_minutes!r}")
    lat, lon = points["lat"].to_numpy(np.float64), points["lon"].to_numpy(np.float64)
    timezone = single_zone(lat, lon) if timezone is None else timezone
    check_timezone(timezone)
    grid, bbox, from_data = _trip_space(lat, lon, cell_m, bbox, domain)
    trip, ids = pd.factorize(points["user"], sort=False)
    trip = trip.astype(np.int64)
    times = pd.DatetimeIndex(points["time"])
    if times.tz is None:
        raise InputError("the trip points have naive times; expected timezone-aware (UTC) timestamps")
    unix = times.tz_convert("UTC").as_unit("ns").asi8 // 10**9
    order = np.lexsort((unix, trip))
    trip, unix, lat, lon = trip[order], unix[order], lat[order], lon[order]
    n_trips = len(ids)
    repeated = (trip[1:] == trip[:-1]) & (unix[1:] == unix[:-1])     # a fix at its trip's previous second
    steps = {"trips": n_trips, "fixes": int(trip.size), "duplicate_times": int(repeated.sum())}

    fast, outside = bad_trips(trip, unix, lat, lon, n_trips, bbox, max_speed_kmh, speed_window_s)
    start = unix[np.searchsorted(trip, np.arange(n_trips))]     # each trip's first fix (every trip has one)
    weekday = weekday_trips(start, timezone) if weekdays_only else np.ones(n_trips, bool)
    keep_trip = ~fast & ~outside & weekday
    steps.update({"too_fast": int(fast.sum()), "outside_box": int((outside & ~fast).sum()),
                  "weekend_or_holiday": int((~weekday & ~fast & ~outside).sum())})
    if domain is not None:
        left = off_domain(grid, trip, lat, lon, keep_trip, n_trips)
        steps["outside_domain"] = int(left.sum())
        keep_trip &= ~left
    keep = keep_trip[trip]
    cell = grid.locate(lat[keep], lon[keep]).astype(np.int64)
    fixes = Visits(trip[keep], unix[keep], cell)

    visits = interpolate_gaps(aggregate(fixes, int(window_s)), grid.cols, max_gap_minutes, window_s)
    if domain is not None:              # a filled minute in a cell the domain leaves out stays unfilled
        visits = visits.take(~grid.outside(visits.cell))
    hour = majority_hour(visits, n_trips, timezone, window_s)
    visits, steps["slowed_steps"] = keep_bound(merge_self_loops(visits), grid, bounds.max_speed_kmh, window_s)
    length = np.bincount(visits.trip, minlength=n_trips)
    single = keep_trip & (length < MIN_CELLS)
    steps["single_visit"] = int(single.sum())
    visits = visits.take(length[visits.trip] >= MIN_CELLS)
    settings = {"bbox": bbox, "max_speed_kmh": max_speed_kmh, "weekdays_only": weekdays_only,
                "timezone": timezone, "box_from_data": from_data,
                "domain": None if domain is None else domain.description}
    if len(visits) == 0:
        raise InputError(f"no trip is left of the {n_trips} made (paper 004 §8.2's steps): "
                         + "; ".join(describe_drops({**steps, "kept": 0}, settings)))
    info = {**(info or {}), "cell_m": float(cell_m), "bbox": list(bbox), "trips": steps, "min_cells": MIN_CELLS,
            "bounds": bounds.to_dict()}
    if from_data:
        info["bbox_from_data"] = True
    if weekdays_only:                       # public: the days a trip of the set may start on
        info["calendar"] = WEEKDAYS
    owners = None
    if "person" in points:                  # each trip's owner as given, not read off its name
        owners = points["person"].groupby(points["user"], sort=False).first().reindex(ids).to_numpy()
    return _traceset(visits, ids, hour, grid, timezone, info, owner, owners, bounds.instant)


def _trip_space(lat: np.ndarray, lon: np.ndarray, cell_m: float, bbox, domain) -> tuple[Grid, tuple, bool]:
    """(grid, box, whether the box is the fixes' own) of :func:`make_trips`: cells of ``cell_m``
    over ``bbox`` (the domain's box within it, the fixes' own box without either), restricted to
    the domain's cells; an InputError when it would need more than :data:`MAX_CELLS`."""
    if domain is not None:
        bbox = domain_box(domain.bbox, bbox)
    from_data = bbox is None
    if from_data:                       # a box of one point's width still has cells
        bbox = (float(lat.min()), max(float(lat.max()), float(lat.min()) + 1e-6), float(lon.min()),
                max(float(lon.max()), float(lon.min()) + 1e-6))
    rows, cols, _, _ = _cells(cell_m, bbox)
    if domain is not None and rows * cols > MAX_CELLS:
        raise InputError("the domain's box ({:.4f}-{:.4f} N, {:.4f}-{:.4f} E) needs ".format(*bbox)
                         + f"{rows * cols:,} cells of {cell_m:g} m: give `bbox`, the area to keep, or a larger `cell_m`")
    if from_data and rows * cols > MAX_CELLS:
        lo, hi = np.quantile(lat, [0.05, 0.95]), np.quantile(lon, [0.05, 0.95])
        raise InputError("the fixes' own box ({:.4f}-{:.4f} N, {:.4f}-{:.4f} E) needs ".format(*bbox)
                         + f"{rows * cols:,} cells of {cell_m:g} m: give `bbox`, the area to keep (90 % of the "
                         f"fixes lie in ({lo[0]:.4f}, {lo[1]:.4f}, {hi[0]:.4f}, {hi[1]:.4f})), or a larger `cell_m`")
    grid = trip_grid(cell_m, bbox)
    if domain is not None:
        grid = grid.restricted(domain.cells(grid), domain.description)
    return grid, bbox, from_data


def describe_drops(steps: dict, settings: dict | None = None) -> list[str]:
    """What each step of :func:`make_trips` dropped (``info['trips']``), in words, one per step that
    dropped any, and what was kept; ``settings`` (box, speed, days) names the setting behind each."""
    settings = settings or {}
    box = settings.get("bbox")
    box_text = "" if box is None else (" ({:.4f}-{:.4f} N, {:.4f}-{:.4f} E".format(*box)
                                       + (", the data's own)" if settings.get("box_from_data") else
                                          "; `bbox` sets it)"))
    speed = settings.get("max_speed_kmh")
    speed_text = f" (over {speed:g} km/h between two fixes; `max_speed_kmh` sets it)" if speed is not None else ""
    domain = settings.get("domain")
    said = {"too_fast": f"were too fast{speed_text}",
            "outside_box": f"left the bounding box{box_text}",
            "outside_domain": "had a fix outside the domain" + (f" ({domain})" if domain else ""),
            "weekend_or_holiday": "started on a weekend or a US federal holiday",
            "single_visit": "never left one cell"}
    lines = [f"{steps[k]} {text}" for k, text in said.items() if steps.get(k)]
    if steps.get("duplicate_times"):
        lines.insert(0, f"{steps['duplicate_times']} fixes repeated the time of their trip's previous fix (kept: "
                        "each instant's cell is the most frequent of its fixes; a trip whose repeated fixes lie "
                        "apart counts as too fast where a speed limit applies)")
    if steps.get("slowed_steps"):
        lines.append(f"{steps['slowed_steps']} steps were given the time their length asks at the set's speed bound "
                     "(a cell's edge crossed within one instant)")
    return lines + [f"{steps.get('kept', 0)} of {steps['trips']} trips kept"]


def _traceset(visits: Visits, ids, hour: np.ndarray, grid: Grid, timezone: str, info: dict,
              owner: str = "person", owners: np.ndarray | None = None, instant: str = "1min") -> TraceSet:
    """The TraceSet of the kept trips: ``instant`` instants (the windows of ``visits.minute``),
    one-hour slots, in ``timezone``; each trip's ``owner`` is ``owners[trip]``, or the part of its
    name before the last dash."""
    present, row = np.unique(visits.trip, return_inverse=True)
    names = pd.Series(np.asarray(ids, dtype=object)[present]).astype(str)
    who = (names.str.rsplit("-", n=1).str[0] if owners is None else pd.Series(owners[present]).astype(str))
    users = pd.DataFrame({"user_id": names.to_numpy(dtype=object), owner: who.to_numpy(dtype=object),
                          "hour": hour[present].astype(np.int8)})
    when = pd.DatetimeIndex(pd.to_datetime(visits.minute * int(pd.Timedelta(instant).total_seconds()), unit="s",
                                           utc=True))
    axis = TimeAxis.build(when.min().tz_convert(timezone).date(), timezone, instant, "1h")
    info["trips"]["kept"] = int(present.size)
    return TraceSet.from_events(row, axis.instants(when), visits.cell, users, grid, axis, info)


# -- Table 1 -----------------------------------------------------------------------------------

__all__ = ["CABS", "GEOLIFE", "PAPER_BBOX", "PRESETS", "TIMEZONE", "Visits", "aggregate", "bad_trips",
           "describe_drops", "interpolate_gaps", "majority_hour", "make_trips", "merge_self_loops", "read_trips",
           "runs", "segment", "trip_grid", "weekday_trips"]
