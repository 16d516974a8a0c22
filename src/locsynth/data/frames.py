"""From the DataFrames of the field's libraries to TraceSets (DESIGN.md: data/frames).

:func:`points_from_frame` reads a pandas or GeoPandas frame of points into the validated points
table (:mod:`locsynth.data.points`): it finds each column by the names the field gives it
(:data:`NAMES`: scikit-mobility's ``uid, lat, lng, datetime``, trackintel's ``user_id,
tracked_at`` and geometry, movingpandas' ``traj_id`` and time index, the Foursquare files'
``userId, venueId, utcTimestamp``, ...), or by the names the caller gives; it reads any time
pandas reads (naive times on the clock of ``timezone``, aware ones as they are) and says what
was wrong in one error naming the column and the row, never an exception from inside pandas.
:func:`from_frame` makes a TraceSet from it with the options of ``locsynth prepare`` (a grid or
the most visited POIs, the box, instants, slots, the daily window, the time zone), its frame
recorded in the ledger as prepare records it. Nothing the caller passed is modified.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..core.errors import InputError
from .points import check_not_swapped, check_unix_range, check_years, parse_datetimes, validate_points
from .timeaxis import AUTO, check_timezone, single_zone
from .traces import TraceSet
from .modes import mode_bounds
from .trips import CABS, GEOLIFE, make_trips, runs, segment

#: each column of the points table -> the names the field gives it, first found first; names are
#: compared without case, spaces, underscores, dashes and dots
NAMES = {
    "user": ("user", "user_id", "uid", "userId", "person_id", "individual_id", "agent_id", "tracker_id",
             "device_id", "cab", "cab_id", "taxi_id", "vehicle_id", "traj_id", "trajectory_id", "trip_id", "tid"),
    "time": ("time", "datetime", "timestamp", "date_time", "utc_time", "utcTimestamp", "tracked_at", "started_at",
             "checkin_time", "t"),
    "lat": ("lat", "latitude", "lat_deg"),
    "lon": ("lon", "lng", "long", "longitude", "lon_deg"),
    "venue": ("venue", "venue_id", "venueId", "poi", "poi_id", "place_id", "location_id"),
    "category": ("category", "venue_category", "venueCategory", "category_name", "poi_catname", "cat_name",
                 "poi_category"),
}
REQUIRED = ("user", "time", "lat", "lon")


def _key(name) -> str:
    return re.sub(r"[\s_\-.]", "", str(name)).lower()


def _show(value) -> str:
    """A value as an error message shows it: numpy's scalars as Python's, strings quoted."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _at(series: pd.Series, i: int) -> str:
    """Where row ``i`` (a position) of ``series`` is, as a pandas user finds it: its index label."""
    return f"index {_show(series.index[i])}"


def _column(column, role: str) -> str:
    return f"column {column!r}" + (f" ({role})" if str(column) != role else "")


def columns(frame: pd.DataFrame, **given: str | None) -> dict[str, str | None]:
    """The column of ``frame`` that plays each role of :data:`NAMES` (None where none does): the
    one ``given`` (role -> column name), else the first of the role's names the frame has."""
    unknown = sorted(set(given) - set(NAMES))
    if unknown:
        raise InputError(f"unknown column role(s) {', '.join(unknown)}; the roles: {', '.join(NAMES)}")
    found: dict[str, object] = {}
    for col in frame.columns:
        found.setdefault(_key(col), col)
    out = {}
    for role, names in NAMES.items():
        name = given.get(role)
        if name is not None:
            if name not in frame.columns:
                raise InputError(f"`{role}` names column {name!r}, which the frame does not have; its columns: "
                                 f"{_listed(frame.columns)}")
            out[role] = name
        else:
            present = list(dict.fromkeys(found[_key(n)] for n in names if _key(n) in found))
            if role in ("lat", "lon") and len(present) > 1:    # a stated choice: synonyms are not guessed between
                raise InputError(f"the frame has {len(present)} columns for {role}, "
                                 f"{' and '.join(map(repr, present))}: name the one to use with `{role}`")
            out[role] = present[0] if present else None
    taken = [c for c in out.values() if c is not None]
    if len(set(map(str, taken))) < len(taken):
        twice = next(c for c in taken if taken.count(c) > 1)
        roles = [r for r, c in out.items() if c == twice]
        raise InputError(f"column {twice!r} was taken for {' and '.join(roles)}: name the right one with "
                         + " or ".join(f"`{r}`" for r in roles))
    return out


def _listed(names) -> str:
    names = [str(n) for n in names]
    return ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")


def _geometry(frame: pd.DataFrame):
    """The frame's point geometry as (lat, lon) Series in degrees (WGS 84), or None."""
    geo = getattr(frame, "geometry", None) if hasattr(frame, "crs") else None
    if geo is None:
        return None
    if frame.crs is not None and not frame.crs.equals("EPSG:4326"):
        geo = geo.to_crs("EPSG:4326")
    kinds = set(geo.geom_type.dropna().unique())
    if kinds - {"Point"}:
        raise InputError(f"the frame's geometry holds {', '.join(sorted(kinds - {'Point'}))}: points are read one "
                         "per row (a line of a trip: explode it into its points first, or give `lat` and `lon`)")
    return pd.Series(geo.y, index=frame.index), pd.Series(geo.x, index=frame.index)


def _check_geometry_agrees(coords, lat: pd.Series, lon: pd.Series, lat_col, lon_col) -> None:
    """A GeoDataFrame's point geometry and the lat/lon columns found by name beside it must say the
    same (to a millionth of a degree, about 0.1 m): a stated choice, since either may be stale (the
    geometry moved with ``to_crs`` or edited, the columns left behind, or the other way round)."""
    y, x = coords
    far = ~(np.isclose(pd.to_numeric(lat, errors="coerce").to_numpy(np.float64), y.to_numpy(np.float64), rtol=0,
                       atol=1e-6)
            & np.isclose(pd.to_numeric(lon, errors="coerce").to_numpy(np.float64), x.to_numpy(np.float64), rtol=0,
                         atol=1e-6))
    if far.any():
        i = int(np.flatnonzero(far)[0])
        raise InputError(f"the frame's geometry and its columns {lat_col!r}, {lon_col!r} differ at {_at(lat, i)} "
                         f"(geometry {y.iloc[i]:.6f}, {x.iloc[i]:.6f}; columns {_show(lat.iloc[i])}, "
                         f"{_show(lon.iloc[i])}): name the columns with `lat` and `lon` to read them, or drop them "
                         "to read the geometry")


def _missing(role: str, frame: pd.DataFrame) -> InputError:
    names = ", ".join(NAMES[role])
    levels = [n for n in frame.index.names if n is not None]
    if any(_key(n) in {_key(m) for m in NAMES[role]} for n in levels):
        return InputError(f"the frame's {role} is in its index ({', '.join(map(repr, levels))}), not a column: call "
                          "frame.reset_index() first")
    extra = " (or a geometry of points, a GeoDataFrame)" if role in ("lat", "lon") else ""
    extra += " (or a DatetimeIndex)" if role == "time" else ""
    return InputError(f"the frame has no {role} column{extra}: name it with `{role}`; the names looked for: "
                      f"{names}; the frame's columns: {_listed(frame.columns)}")


def _coordinates(values: pd.Series, column, role: str, other: pd.Series | None) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "missing" if pd.isna(values.iloc[i]) else f"{_show(values.iloc[i])} is not a number"
        raise InputError(f"{_column(column, role)} at {_at(values, i)}: {what}")
    out = numbers.to_numpy(np.float64)
    limit = 90.0 if role == "lat" else 180.0
    bad = np.abs(out) > limit
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        swapped = ""
        if role == "lat" and other is not None and np.all(np.abs(pd.to_numeric(other, errors="coerce")) <= 90):
            swapped = "; are `lat` and `lon` swapped?"
        raise InputError(f"column {column!r} at {_at(values, i)}: {out[i]:g} is not a "
                         f"{'latitude (-90 to 90)' if role == 'lat' else 'longitude (-180 to 180)'} in degrees"
                         f"{swapped}; a projected frame needs its CRS set (GeoPandas) to be read in degrees")
    return out


def times_utc(values: pd.Series, column, timezone: str | None = None, time_unit: str | None = None) -> pd.Series:
    """``values`` as aware UTC times: datetimes as they are (naive ones on ``timezone``'s clock),
    numbers as unix times in ``time_unit`` ('s' or 'ms'), text as
    :func:`locsynth.data.points.parse_datetimes` reads it."""
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        times = values
    elif pd.api.types.is_numeric_dtype(values.dtype):
        if time_unit not in ("s", "ms"):
            raise InputError(f"{_column(column, 'time')} holds numbers ({_show(values.iloc[0])} at {_at(values, 0)}): "
                             "give `time_unit` 's' or 'ms' for unix times")
        check_unix_range(values, time_unit, lambda i: f"in {_column(column, 'time')} at {_at(values, i)}")
        times = pd.to_datetime(values, unit=time_unit, utc=True, errors="coerce")
    else:
        times = parse_datetimes(values, lambda i: f"in column {column!r} at {_at(values, i)}")
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "missing" if pd.isna(values.iloc[i]) else f"{_show(values.iloc[i])} is not a date and time pandas can read"
        raise InputError(f"{_column(column, 'time')} at {_at(values, i)}: {what}")
    if times.dt.tz is None:
        if timezone is None or timezone == AUTO:
            raise InputError(f"column {column!r} holds times without a time zone ({values.iloc[0]!s} at "
                             f"{_at(values, 0)}): give `timezone`, the zone they were recorded in (e.g. "
                             "'America/New_York'; 'UTC' when they are UTC)")
        times = times.dt.tz_localize(check_timezone(timezone).key, ambiguous="NaT", nonexistent="shift_forward")
        bad = times.isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"column {column!r} at {_at(values, i)}: {values.iloc[i]!s} happens twice in "
                             f"{timezone} (a daylight-saving change); give times with their offsets")
    times = times.dt.tz_convert("UTC")
    check_years(times, lambda i: f"in {_column(column, 'time')} at {_at(values, i)}")
    return pd.Series(times.to_numpy(), index=values.index, dtype="datetime64[ns, UTC]")


def trajectory_id(frame) -> str | None:
    """The column of a movingpandas TrajectoryCollection's (or Trajectory's) own trajectory id, None
    for anything else."""
    if not hasattr(frame, "to_point_gdf"):
        return None
    if hasattr(frame, "get_traj_id_col"):
        name = frame.get_traj_id_col()
        if name is not None:
            return name
    first = next(iter(getattr(frame, "trajectories", [frame])), None)
    return getattr(first, "traj_id_col_name", None)


def as_frame(frame) -> pd.DataFrame:
    """A frame of points: a DataFrame or GeoDataFrame as it is, a movingpandas TrajectoryCollection
    or Trajectory as its points (its trajectory id column and the time index, on the clock the
    collection was made with: movingpandas keeps aware times naive in UTC and gives them back)."""
    if hasattr(frame, "to_point_gdf"):
        import warnings

        with warnings.catch_warnings():        # movingpandas' own deprecations under pandas 3, not the caller's
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            try:
                frame = frame.to_point_gdf(return_orig_tz=True)
            except TypeError:                  # a movingpandas without the option: its naive times
                frame = frame.to_point_gdf()
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"a frame of points is a pandas DataFrame (or a GeoDataFrame, or movingpandas' "
                         f"trajectories), got {type(frame).__name__}")
    return frame


def points_from_frame(frame: pd.DataFrame, *, user: str | None = None, time: str | None = None,
                      lat: str | None = None, lon: str | None = None, venue: str | None = None,
                      category: str | None = None, timezone: str | None = None,
                      time_unit: str | None = None) -> pd.DataFrame:
    """The validated points table of a pandas or GeoPandas ``frame`` of points (one per row).

    Parameters
    ----------
    frame : DataFrame, GeoDataFrame or movingpandas trajectories
        One point per row (a TrajectoryCollection's points); left as it is.
    user, time, lat, lon, venue, category : str, optional
        The column of each role, where the field's names (:data:`NAMES`) do not find it. Without
        ``lat`` and ``lon`` a GeoDataFrame's point geometry gives them (in WGS 84); without
        ``time`` a DatetimeIndex (movingpandas') gives it.
    timezone : str, optional
        The zone naive times were recorded in (an IANA name); aware times keep their own.
    time_unit : {'s', 'ms'}, optional
        The unit of numeric (unix) times.
    """
    frame = as_frame(frame)
    if len(frame) == 0:
        raise InputError("the frame has no rows")
    cols = columns(frame, user=user, time=time, lat=lat, lon=lon, venue=venue, category=category)
    coords = _geometry(frame)
    if coords is not None and cols["lat"] is not None and cols["lon"] is not None:
        if lat is None and lon is None:
            _check_geometry_agrees(coords, frame[cols["lat"]], frame[cols["lon"]], cols["lat"], cols["lon"])
        coords = None                                  # the columns, named or the same as the geometry
    if cols["time"] is None and isinstance(frame.index, pd.DatetimeIndex):
        raw_time, time_col = frame.index.to_series(index=pd.RangeIndex(len(frame))), frame.index.name or "index"
    elif cols["time"] is None:
        raise _missing("time", frame)
    else:
        raw_time, time_col = frame[cols["time"]], cols["time"]
    for role in ("user", "lat", "lon"):
        if cols[role] is None and not (coords is not None and role != "user"):
            raise _missing(role, frame)
    if coords is not None:
        y, x = coords
        lat_values, lon_values = _coordinates(y, "geometry", "lat", x), _coordinates(x, "geometry", "lon", y)
    else:
        lat_values = _coordinates(frame[cols["lat"]], cols["lat"], "lat", frame[cols["lon"]])
        lon_values = _coordinates(frame[cols["lon"]], cols["lon"], "lon", frame[cols["lat"]])
        if lat is None and lon is None:
            check_not_swapped(lat_values, lon_values, f"columns {cols['lat']!r} and {cols['lon']!r}",
                              "name them with `lat` and `lon` to keep them as they are")
    ids = frame[cols["user"]]
    if ids.isna().any():
        i = int(np.flatnonzero(ids.isna().to_numpy())[0])
        raise InputError(f"{_column(cols['user'], 'user')} at {_at(ids, i)}: missing")
    points = pd.DataFrame({"user": ids.to_numpy(),
                           "time": times_utc(raw_time, time_col, timezone, time_unit).to_numpy(),
                           "lat": lat_values, "lon": lon_values})
    for role in ("venue", "category"):
        if cols[role] is not None:
            points[role] = frame[cols[role]].astype(str).to_numpy()
    return validate_points(points, "the frame")


def from_frame(frame: pd.DataFrame, *, user: str | None = None, time: str | None = None, lat: str | None = None,
               lon: str | None = None, venue: str | None = None, category: str | None = None,
               timezone: str | None = None, time_unit: str | None = None, grid: tuple[int, int] | None = None,
               bbox: tuple[float, float, float, float] | None = None, pois: int | None = None,
               instant: str | None = None, slot: str | None = None, window: tuple[str, str] | None = None,
               start: str | None = None, duplicates: str = "first", fold_days: bool = False,
               dp_epsilon: float | None = None, candidates=None) -> TraceSet:
    """A TraceSet of each user's points (check-ins, GPS fixes: one trace a user) from a frame.

    The columns are found as :func:`points_from_frame` finds them. The frame is made as
    ``locsynth prepare`` makes it (:func:`locsynth.data.prepare.traces_from_points`): the ``pois``
    most visited venues when the frame has venues, else a ``grid`` (20 x 20) over ``bbox`` (the
    data's box by default, which the ledger notes); ``instant`` (1h) and ``slot`` (2h) on the clock
    of ``timezone``, which defaults to the zone the points lie in; ``window`` a daily window;
    ``start`` the first day (the earliest record's by default); ``dp_epsilon`` chooses the POIs
    under DP. Split it with ``TraceSet.split``.
    """
    from .prepare import traces_from_points

    points = points_from_frame(frame, user=user, time=time, lat=lat, lon=lon, venue=venue, category=category,
                               timezone=None if timezone == AUTO else timezone, time_unit=time_unit)
    if pois is not None and "venue" not in points:
        raise InputError(f"`pois` keeps the most visited venues, and the frame has no venue column: name it with "
                         f"`venue` (the names looked for: {', '.join(NAMES['venue'])}), or give `grid` for points "
                         "without venues")
    if timezone is None:
        timezone = single_zone(points["lat"], points["lon"], ", or 'auto' for each point's own clock")
    sets = traces_from_points(points, grid=grid, bbox=bbox, pois=pois, instant=instant, slot=slot, window=window,
                              timezone=timezone, duplicates=duplicates, fold_days=fold_days, dp_epsilon=dp_epsilon,
                              start=start, candidates=candidates, info={"source": "frame", "input": "a DataFrame"})
    return sets[""]


#: the names the field gives a trip's id (movingpandas' ``traj_id``, trackintel's ``tripleg_id``, ...)
TRIP_NAMES = ("trip", "trip_id", "traj_id", "trajectory_id", "tripleg_id", "track_id", "tid")
#: the names of a column marking the fixes that belong to a trip (the cabs' occupancy)
MARKED_NAMES = ("occupancy", "occupied")
#: how known data are read and made into trips, by name: :data:`locsynth.data.trips.PRESETS` and the
#: reading they need (the cabs' times are unix seconds; their trips, the runs of occupancy, are found
#: by :data:`MARKED_NAMES`)
TRIP_PRESETS = {"cabs": {"time_unit": "s", **CABS}, "geolife": dict(GEOLIFE)}


def _found(frame: pd.DataFrame, given: str | None, names: tuple[str, ...], role: str):
    if given is not None:
        if given not in frame.columns:
            raise InputError(f"`{role}` names column {given!r}, which the frame does not have; its columns: "
                             f"{_listed(frame.columns)}")
        return given
    keys = {_key(c): c for c in reversed(list(frame.columns))}
    return next((keys[_key(n)] for n in names if _key(n) in keys), None)


def trips_from_frame(frame: pd.DataFrame, *, trip: str | None = None, marked: str | None = None,
                     user: str | None = None, time: str | None = None, lat: str | None = None,
                     lon: str | None = None, timezone: str | None = None, time_unit: str | None = None,
                     preset: str | None = None, mode: str | None = None, cell_m: float | None = None,
                     bbox: tuple[float, float, float, float] | None = None, max_speed_kmh: float | None = None,
                     min_speed_kmh: float | None = None, instant: str | None = None,
                     weekdays_only: bool | None = None, max_gap_minutes: float = 5.0,
                     gap_minutes: float | None = None, stay_m: float | None = None,
                     stay_minutes: float | None = None, domain=None, domain_buffer_m: float = 0.0) -> TraceSet:
    """A TraceSet of trips (one trace a trip) from a frame of GPS fixes, through paper 004 §8.2's
    steps (:func:`locsynth.data.trips.make_trips`).

    The trips are, in this order: the ids of a ``trip`` column (a movingpandas collection's own
    trajectory id; :data:`TRIP_NAMES`: ``traj_id``, ...); the runs of fixes a ``marked`` column
    marks (the cabs' ``occupancy``); else each person's fixes split at stays (``stay_minutes`` or
    more within ``stay_m`` metres) and at gaps longer than ``gap_minutes``
    (:func:`locsynth.data.trips.segment`). ``mode`` (data/modes.py: walk, bike, car, bus, train,
    ship, taxi) gives the set's public bounds, which it carries (``TraceSet.bounds``): the speed
    bound (a trip faster between a fix and its first fix an instant later is dropped, and no step
    of the set or of a synthetic set made from it is faster), the slowest speed, the segmentation
    thresholds, the cell and the instant; each of them given here overrides the mode's. Without a
    mode: the taxi's bounds (trackintel's thresholds, 250 m cells, one-minute instants) and no
    speed filter. The grid's square cells cover ``bbox``, the fixes' own box by default (which the
    ledger notes); days and hours are on ``timezone``'s clock, the fixes' zone by default;
    ``weekdays_only`` drops trips of weekends and holidays. ``preset`` (:data:`TRIP_PRESETS`:
    'cabs', 'geolife') gives known data's settings, which the other arguments override.
    ``info['trips']`` counts what each step dropped and the fixes that repeat a time of their trip
    (:func:`locsynth.data.trips.describe_drops` says it in words). ``domain`` (a GeoSeries or
    GeoDataFrame of polygons or lines, a file GeoPandas reads; lines widened by ``domain_buffer_m``
    metres: :func:`locsynth.data.domain.as_domain`) is public knowledge of where the movement can be:
    the grid covers its box and opens only its cells (:func:`locsynth.data.trips.make_trips`).
    """
    from .domain import as_domain
    from .prepare import framed_trips

    own_trip = trajectory_id(frame)
    given_clock = input_clock(frame, time)
    frame = as_frame(frame)
    area = as_domain(domain, domain_buffer_m)
    if preset is not None and preset not in TRIP_PRESETS:
        raise InputError(f"unknown `preset` {preset!r}; the presets: {', '.join(TRIP_PRESETS)}")
    settings = {**TRIP_PRESETS.get(preset, {})}
    bounds = mode_bounds(mode, max_speed_kmh=max_speed_kmh,
                         min_speed_kmh=min_speed_kmh, gap_minutes=gap_minutes, stay_m=stay_m,
                         stay_minutes=stay_minutes, cell_m=cell_m, instant=instant)
    if mode is not None:                    # the mode's bound drops the trips faster than it
        settings["max_speed_kmh"] = bounds.max_speed_kmh
    given = {"time_unit": time_unit, "bbox": bbox, "timezone": timezone,
             "max_speed_kmh": max_speed_kmh, "weekdays_only": weekdays_only}
    settings.update({k: v for k, v in given.items() if v is not None})
    trip_col = _found(frame, trip if trip is not None else own_trip, TRIP_NAMES, "trip")
    marked_col = _found(frame, marked, MARKED_NAMES, "marked") if trip_col is None else None
    rest = frame if trip_col is None else frame.drop(columns=trip_col)
    person = columns(rest, user=user)["user"]
    if person is None and trip_col is not None:
        rest, person = frame, trip_col               # each trip its own owner
    points = points_from_frame(rest, user=person, time=time, lat=lat, lon=lon,
                               timezone=None if settings.get("timezone") == AUTO else settings.get("timezone"),
                               time_unit=settings.get("time_unit"))
    if trip_col is not None:
        ids = frame[trip_col].astype(str).to_numpy(dtype=object)
        owners = points["user"].astype(str).to_numpy(dtype=object)
        points = points.assign(person=owners, user=ids if person == trip_col else owners + "-" + ids)
        how = (f"the ids of column {trip_col!r}" + (" (the collection's trajectory id)" if trip_col == own_trip and
                                                   trip is None else ""))
    elif marked_col is not None:
        points = runs(points, frame[marked_col].to_numpy() == 1)
        how = f"the runs of fixes column {marked_col!r} marks"
    else:
        points = segment(points, gap_minutes=bounds.gap_minutes, stay_m=bounds.stay_m,
                         stay_minutes=bounds.stay_minutes)
        how = (f"each person's fixes split at stays ({bounds.stay_minutes:g} min within {bounds.stay_m:g} m) and "
               f"gaps over {bounds.gap_minutes:g} min")
    if len(points) == 0:
        raise InputError(f"no trip was found in the frame ({how}): no fix belongs to one")
    options = {k: settings[k] for k in ("bbox", "timezone", "max_speed_kmh", "weekdays_only", "owner")
               if k in settings}
    if settings.get("timezone") == AUTO:
        raise InputError("`timezone` auto does not apply to trips: a set of trips keeps one zone; give its name")
    info = {"source": "frame", "input": "a DataFrame", "trips_from": how}
    if given_clock is not None:
        info["clock"] = given_clock
    trips = make_trips(points, None, max_gap_minutes=max_gap_minutes, info=info, bounds=bounds, domain=area,
                       speed_window_s=bounds.instant_seconds if mode is not None else 0.0, **options)
    box = "the given box" if bbox is not None else (f"the {preset} preset's box" if "bbox" in options else
                                                     "the box of the data")
    return framed_trips(trips, box if area is None else
                        ("the domain's box" + (f" within {box}" if "bbox" in options else "")))


def input_clock(frame, time: str | None = None) -> str | None:
    """The zone of a frame's aware times (``'UTC'``, ``'Europe/Zurich'``), which a set made from it
    gives back (``info['clock']``); None for naive times, numbers or text."""
    if hasattr(frame, "to_point_gdf"):
        tz = getattr(next(iter(getattr(frame, "trajectories", [frame])), None), "df_orig_tz", None)
        return None if tz is None else str(getattr(tz, "key", tz))
    if not isinstance(frame, pd.DataFrame):
        return None
    try:
        col = columns(frame, time=time)["time"]
    except InputError:
        return None
    values = frame.index if col is None else frame[col]
    tz = getattr(getattr(values, "dt", values), "tz", None) if pd.api.types.is_datetime64_any_dtype(values) else None
    return None if tz is None else str(getattr(tz, "key", tz))
