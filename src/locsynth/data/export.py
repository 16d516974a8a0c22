"""A TraceSet out to the field's libraries: a pandas frame, GeoPandas' points and lines,
movingpandas' trajectories, trackintel's positionfixes and triplegs, scikit-mobility's columns.

Two rules hold on every one of these surfaces (and on the release's files):

- **Times say what they are.** A set whose method released no time (a trip method at
  ``time_share=0``: NGRAM, PrivTrace, AdaTrace, LDPTrace; DPT and DPTrip then keep only each
  trip's hour: :attr:`TraceSet.has_times` is False) has
  no datetime: ``datetime`` is NaT, ``step`` numbers each trace's points from 0 and, for trips,
  ``hour`` is the trip's hour where the method gives one. Surfaces that cannot hold a trace
  without times (movingpandas, trackintel, scikit-mobility) refuse such a set in one error. Other
  times are aware, on the clock of the set's time zone (``datetime.dt.hour`` is the local hour);
  movingpandas, which wants one clock, gets them naive on that clock.
- **No training id leaves unasked.** A synthetic or anonymized set names each trace ``s0``,
  ``s1``, ... (the set's row, which follows the training users: ``locsynth release`` shuffles and
  pseudonymizes for publication); ``internal=True`` gives the internal view, with the training
  user's id, ``source`` and ``trace_no``.

This module takes a TraceSet (duck-typed: the data model imports it, not the other way round).
The optional libraries come with ``pip install 'locsynth[geo]'``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..core.errors import InputError

#: the extra that installs the libraries these surfaces need
EXTRA = "pip install 'locsynth[geo]'"


def _geopandas(what: str):
    try:
        import geopandas
    except ImportError:
        raise InputError(f"{what} needs geopandas: {EXTRA}") from None
    return geopandas


def _movingpandas():
    try:
        with warnings.catch_warnings():        # it warns at import about an optional smoother
            warnings.simplefilter("ignore", UserWarning)
            import movingpandas
    except ImportError:
        raise InputError(f"to_movingpandas needs movingpandas: {EXTRA}") from None
    return movingpandas


def steps(ts) -> np.ndarray:
    """The position of every event in its trace, from 0."""
    offsets = ts.offsets
    return np.arange(ts.n_events) - np.repeat(offsets[:-1], np.diff(offsets))


def ids(ts, internal: bool = False) -> np.ndarray:
    """Each trace's id as it leaves: a real set's user ids; a synthetic set's ``s0``, ``s1``, ...
    unless ``internal``."""
    if ts.synthetic and not internal:
        return np.array([f"s{i}" for i in range(ts.n_traces)], dtype=object)
    return ts.users["user_id"].to_numpy()


def times(ts) -> pd.Series:
    """Each event's time, aware on the set's clock; NaT throughout for a set without times."""
    if not ts.has_times:
        return pd.Series(pd.NaT, index=pd.RangeIndex(ts.n_events), dtype=f"datetime64[ns, {ts.time.timezone}]")
    return pd.Series(ts.time.start_of(ts.t).tz_convert(ts.time.timezone))


def points(ts, internal: bool = False) -> pd.DataFrame:
    """One row per event: ``user_id``, ``datetime`` (``step`` and ``hour`` for a set without
    times), ``lat``, ``lon``, ``location_id``; ``source`` and ``trace_no`` when ``internal``. A
    deleted or generalized event has no coordinates and its negative code as location_id."""
    known = ts.loc >= 0
    where = np.where(known, ts.loc, 0)
    out = pd.DataFrame({"user_id": ids(ts, internal)[ts.user], "datetime": times(ts).array})
    if not ts.has_times:
        out["step"] = steps(ts)
        if "hour" in ts.users:
            out["hour"] = ts.users["hour"].to_numpy()[ts.user]
    out["lat"] = np.where(known, ts.space.lat[where], np.nan)
    out["lon"] = np.where(known, ts.space.lon[where], np.nan)
    out["location_id"] = ts.loc
    if ts.synthetic and internal:
        out["source"] = ts.users["source"].to_numpy()[ts.user]
        out["trace_no"] = ts.users["trace_no"].to_numpy()[ts.user]
    return out


def csv_points(ts, internal: bool = False) -> pd.DataFrame:
    """:func:`points` as a CSV holds them: times in ISO 8601 with their offset (empty when none)."""
    out = points(ts, internal)
    text = out["datetime"].map(lambda t: "" if pd.isna(t) else t.isoformat())
    return out.assign(datetime=text.astype(object))


def geodataframe(ts, kind: str = "points", internal: bool = False):
    """A GeoDataFrame in WGS 84: ``points`` (:func:`points` with a Point each) or ``trips`` (one row
    a trace: ``user_id``, ``start``, ``end``, ``points``, and a LineString, a Point for a trace of
    one event; ``hour`` for trips)."""
    gpd = _geopandas("to_geodataframe")
    frame = points(ts, internal)
    if kind == "points":
        return gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(frame["lon"], frame["lat"]), crs="EPSG:4326")
    if kind != "trips":
        raise InputError(f"`kind` {kind!r} is not 'points' or 'trips'")
    return gpd.GeoDataFrame(_lines(ts, frame, internal), geometry="geometry", crs="EPSG:4326")


def _lines(ts, frame: pd.DataFrame, internal: bool) -> pd.DataFrame:
    """One row per non-empty trace: its id, first and last time, number of points, hour (trips),
    and its line (a Point for a trace of one event)."""
    import shapely

    ts.require_exact("a line per trace")
    offsets = ts.offsets
    counts = np.diff(offsets)
    rows = np.flatnonzero(counts > 0)
    xy = np.column_stack([frame["lon"].to_numpy(), frame["lat"].to_numpy()])
    many = (counts > 1)[ts.user]                      # events of traces with a line
    geoms = np.empty(rows.size, dtype=object)
    geoms[counts[rows] > 1] = shapely.linestrings(xy[many], indices=np.unique(ts.user[many], return_inverse=True)[1])
    geoms[counts[rows] == 1] = shapely.points(xy[~many])
    stamp = frame["datetime"]
    out = pd.DataFrame({"user_id": ids(ts, internal)[rows],
                        "start": stamp.iloc[offsets[rows]].to_numpy(), "end": stamp.iloc[offsets[rows + 1] - 1].to_numpy(),
                        "points": counts[rows]})
    if "hour" in ts.users:
        out["hour"] = ts.users["hour"].to_numpy()[rows]
    out["geometry"] = geoms
    return out


def _timed(ts, what: str) -> None:
    if not ts.has_times:
        raise InputError(f"{what} needs times, and this set has none: its method releases "
                         f"{'only each trip' + chr(39) + 's hour' if ts.info.get('times') == 'hour' else 'no time'} "
                         "(to_frame gives each point's step instead); fit a method that models time, or give the "
                         "steps times of your own")


def movingpandas(ts, internal: bool = False):
    """A movingpandas ``TrajectoryCollection``, one trajectory a trace (``traj_id``: its id), times
    naive on the set's clock (movingpandas wants one clock: the zone is the set's
    ``time.timezone``); traces of one point, which movingpandas drops, are left out."""
    _timed(ts, "a movingpandas trajectory")
    mpd = _movingpandas()
    gdf = geodataframe(ts, "points", internal)
    gdf = gdf.loc[(np.diff(ts.offsets) > 1)[ts.user]]
    gdf = gdf.assign(t=gdf["datetime"].dt.tz_localize(None)).drop(columns="datetime").rename(
        columns={"user_id": "traj_id"}).set_index("t")
    with warnings.catch_warnings():              # movingpandas' own deprecations under pandas 3, not the caller's
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return mpd.TrajectoryCollection(gdf, traj_id_col="traj_id")


def trackintel(ts, kind: str = "positionfixes", internal: bool = False):
    """trackintel's columns: ``positionfixes`` (``user_id``, ``tracked_at``, geometry ``geom``) or
    ``triplegs`` (``user_id``, ``started_at``, ``finished_at``, a LineString ``geom``), aware times,
    an ``id`` index, in WGS 84."""
    _timed(ts, f"trackintel's {kind}")
    gpd = _geopandas("to_trackintel")
    if kind == "positionfixes":
        frame = points(ts, internal)
        out = pd.DataFrame({"user_id": frame["user_id"], "tracked_at": frame["datetime"]})
        geom = gpd.points_from_xy(frame["lon"], frame["lat"])
    elif kind == "triplegs":
        lines = _lines(ts, points(ts, internal), internal)
        out = pd.DataFrame({"user_id": lines["user_id"], "started_at": lines["start"], "finished_at": lines["end"]})
        geom = lines["geometry"].to_numpy()
    else:
        raise InputError(f"`kind` {kind!r} is not 'positionfixes' or 'triplegs'")
    out.index.name = "id"
    return gpd.GeoDataFrame(out, geometry=gpd.GeoSeries(geom, index=out.index), crs="EPSG:4326").rename_geometry("geom")


def skmob(ts, internal: bool = False) -> pd.DataFrame:
    """scikit-mobility's columns (``uid``, ``tid``, ``datetime``, ``lat``, ``lng``; naive times on the
    set's clock), for a CSV that ``skmob.TrajDataFrame`` reads: scikit-mobility 1.3 needs pandas < 2,
    so it reads the file in an environment of its own."""
    _timed(ts, "scikit-mobility's TrajDataFrame")
    frame = points(ts, internal)
    return pd.DataFrame({"uid": frame["user_id"], "tid": ts.user, "datetime": frame["datetime"].dt.tz_localize(None),
                         "lat": frame["lat"], "lng": frame["lon"]})
