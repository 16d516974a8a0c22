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
  GeoPandas and movingpandas get them on the clock the data came on where the set knows it
  (``info['clock']``: a frame of UTC times comes back in UTC), else movingpandas, which wants one
  clock, gets them naive on the set's.
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


def geodataframe(ts, kind: str = "points", internal: bool = False, crs=None):
    """A GeoDataFrame in WGS 84, or in ``crs`` (anything GeoPandas' ``to_crs`` takes): ``points``
    (:func:`points` with a Point each) or ``trips`` (one row a trace: ``user_id``, ``start``,
    ``end``, ``points``, and a LineString, a Point for a trace of one event; ``hour`` for trips).
    Times are on the clock the set's data came on (:func:`given_clock`)."""
    gpd = _geopandas("to_geodataframe")
    frame = points(ts, internal)
    clock = given_clock(ts)
    if clock is not None and ts.has_times:
        frame["datetime"] = frame["datetime"].dt.tz_convert(clock)
    if kind == "points":
        out = gpd.GeoDataFrame(frame, geometry=gpd.points_from_xy(frame["lon"], frame["lat"]), crs="EPSG:4326")
    elif kind == "trips":
        out = gpd.GeoDataFrame(_lines(ts, frame, internal), geometry="geometry", crs="EPSG:4326")
    else:
        raise InputError(f"`kind` {kind!r} is not 'points' or 'trips'")
    return out if crs is None else _projected(out, crs)


def given_clock(ts) -> str | None:
    """The zone of the aware times the set's data came in (``info['clock']``: a frame of UTC times
    gives 'UTC'), which the surfaces that take a clock give back; None: the set's own clock."""
    clock = ts.info.get("clock")
    return str(clock) if clock else None


def _projected(gdf, crs):
    try:
        return gdf.to_crs(crs)
    except Exception as exc:                   # pyproj's CRSError and its kin: one line naming it
        raise InputError(f"`crs` {crs!r} is not a coordinate reference system GeoPandas knows: {exc}") from None


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


def movingpandas(ts, internal: bool = False, crs=None):
    """A movingpandas ``TrajectoryCollection``, one trajectory a trace (``traj_id``: its id), in WGS
    84 or ``crs``. Times are on the clock the set's data came on where it is known (a frame of UTC
    times: ``to_point_gdf(return_orig_tz=True)`` gives UTC back), else naive on the set's clock
    (movingpandas wants one clock: the zone is the set's ``time.timezone``); traces of one point,
    which movingpandas drops, are left out, as are a point's repeats of its trace's instant.

    The trajectories are built as movingpandas builds the first (its constructor checks it), the
    rest sharing its attributes with their own id and rows: the constructor's per-trajectory copies
    and checks cost 2 ms each (19 s for 10,000 trips), the rows are sorted and checked here once."""
    _timed(ts, "a movingpandas trajectory")
    mpd = _movingpandas()
    clock = given_clock(ts)
    gdf = geodataframe(ts, "points", internal, crs)
    keep = np.ones(ts.n_events, bool)
    keep[1:] = ~((ts.user[1:] == ts.user[:-1]) & (ts.t[1:] == ts.t[:-1]))     # movingpandas keeps the first
    distinct = np.bincount(ts.user[keep], minlength=ts.n_traces)
    keep &= (distinct > 1)[ts.user]
    single = int((distinct < 2).sum())
    if single == ts.n_traces > 0:                    # an empty set gives an empty collection
        raise InputError(f"movingpandas needs two points at two times a trajectory, and none of the {ts.n_traces} "
                         "traces has them (to_frame or to_geodataframe show single points)")
    if single:
        warnings.warn(f"{single} of the {ts.n_traces} traces have a single point (or time) and are left out: a "
                      "movingpandas trajectory needs two", UserWarning, stacklevel=3)
    gdf = gdf.loc[keep]
    when = gdf["datetime"]
    gdf = gdf.assign(t=when if clock is not None else when.dt.tz_localize(None)).drop(columns="datetime")
    gdf = gdf.rename(columns={"user_id": "traj_id"}).set_index("t")
    row = ts.user[keep]
    bounds = np.flatnonzero(np.r_[True, row[1:] != row[:-1], True])
    with warnings.catch_warnings():              # movingpandas' own deprecations under pandas 3, not the caller's,
        warnings.simplefilter("ignore", DeprecationWarning)       # and its note that it keeps aware times naive
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)
        if bounds.size < 3:
            return mpd.TrajectoryCollection(gdf, traj_id_col="traj_id")
        return mpd.TrajectoryCollection(_trajectories(mpd, gdf, bounds))


def _trajectories(mpd, gdf, bounds: np.ndarray) -> list:
    """One movingpandas Trajectory per run ``bounds[k]:bounds[k + 1]`` of ``gdf``'s rows (sorted by
    time within each, two rows or more, no repeated time): the first made by its constructor, the
    others sharing its attributes with their own rows and id."""
    first = mpd.Trajectory(gdf.iloc[bounds[0]:bounds[1]], gdf["traj_id"].iat[0], traj_id_col="traj_id")
    shared = {k: v for k, v in vars(first).items() if k not in ("df", "id")}
    tz = first.df_orig_tz
    plain = gdf.tz_localize(None) if tz is not None else gdf     # movingpandas keeps aware times naive, as wall time
    ids = plain["traj_id"].to_numpy()
    rows = _row_slicer(plain)
    out = [first]
    for a, b in zip(bounds[1:-1], bounds[2:]):
        traj = object.__new__(mpd.Trajectory)
        traj.__dict__.update(shared)
        traj.id, traj.df = ids[a], rows(a, b)
        out.append(traj)
    return out


def _row_slicer(gdf):
    """``(a, b) -> gdf.iloc[a:b]``, through the frame's block manager where pandas and GeoPandas
    allow it (GeoPandas' constructor compares the columns with 'geometry' on every slice: most of
    the cost), else through ``iloc``."""
    mgr, name, cls = getattr(gdf, "_mgr", None), gdf.geometry.name, type(gdf)
    if mgr is None or not hasattr(mgr, "get_slice") or not hasattr(cls, "_from_mgr"):
        return lambda a, b: gdf.iloc[a:b]

    def rows(a, b):
        part = mgr.get_slice(slice(int(a), int(b)), axis=1)
        out = cls._from_mgr(part, part.axes)
        out._geometry_column_name = name
        return out
    return rows


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


#: the user-table columns that name a trip's owner (data/trips.py: a cab, a person)
OWNERS = ("cab", "person")


def skmob(ts, internal: bool = False) -> pd.DataFrame:
    """scikit-mobility's columns (``uid``, ``tid``, ``datetime``, ``lat``, ``lng``; naive times on the
    set's clock), for a CSV that ``skmob.TrajDataFrame`` and the DP mobility report read: scikit-mobility
    1.3 needs pandas < 2 and the report pins pandas 2.1, so each reads the file in an environment of its
    own. A set of trips with owners (the cabs' cab, a person) has the owner as ``uid`` and the trip's id
    as ``tid``; any other set each trace's id as ``uid`` and its row as ``tid``."""
    _timed(ts, "scikit-mobility's TrajDataFrame")
    frame = points(ts, internal)
    owner = next((c for c in OWNERS if c in ts.users), None)
    if owner is None:
        uid, tid = frame["user_id"], ts.user
    else:
        uid, tid = ts.users[owner].to_numpy()[ts.user], frame["user_id"]
    return pd.DataFrame({"uid": uid, "tid": tid, "datetime": frame["datetime"].dt.tz_localize(None),
                         "lat": frame["lat"], "lng": frame["lon"]})


#: what ``locsynth export --format`` writes (:func:`csv_frame`)
FORMATS = ("points", "skmob")
#: how ``locsynth export --clock`` writes times: ISO 8601 with their offset, or the local wall clock
#: without one (what the DP mobility report's and scikit-mobility's temporal analyses read: the
#: report silently drops every one of them on times with an offset)
CLOCKS = ("offset", "naive-local")


def csv_frame(ts, fmt: str = "points", internal: bool = False, clock: str | None = None) -> pd.DataFrame:
    """The frame ``locsynth export`` writes: ``points`` (:func:`csv_points`) or ``skmob``
    (:func:`skmob`), times on ``clock`` (:data:`CLOCKS`; by default the format's own: points with
    their offset, skmob naive and local, the only clock it reads)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}; the formats: {', '.join(FORMATS)}")
    clock = clock or ("offset" if fmt == "points" else "naive-local")
    if clock not in CLOCKS:
        raise InputError(f"unknown clock {clock!r}; the clocks: {', '.join(CLOCKS)}")
    if fmt == "skmob" and clock != "naive-local":
        raise InputError("the skmob format holds naive local times only (scikit-mobility and the DP mobility "
                         "report read no offset): leave out --clock or give naive-local")
    if fmt == "points" and clock == "offset":
        return csv_points(ts, internal)
    out = skmob(ts, internal) if fmt == "skmob" else naive_points(ts, internal)
    return out.assign(datetime=out["datetime"].dt.strftime("%Y-%m-%d %H:%M:%S"))


def naive_points(ts, internal: bool = False) -> pd.DataFrame:
    """:func:`points` with naive local times (the set's clock, its offset dropped)."""
    _timed(ts, "a naive local clock")
    frame = points(ts, internal)
    return frame.assign(datetime=frame["datetime"].dt.tz_localize(None))
