"""``prepare``: raw input -> validated points -> TraceSet(s) on disk (the first steps of DESIGN.md's data path)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import io
from .discretize import discretize, make_space, make_time_axis, read_pf_synthetic
from .domain import as_domain
from ..core.errors import InputError, unknown
from ..privacy.ledger import Ledger
from .points import shift_times
from .space import Grid, POISpace
from .timeaxis import AUTO, local_clock
from ..core.files import atomic_output, check_output
from .traces import TraceSet
from .modes import mode_bounds
from .trips import read_geolife_trips, read_trips

#: formats read straight into TraceSets, beside io's points formats: trips on square cells of
#: ``cell_m`` metres (paper 004 §8.2; GeoLife's trajectories the same way), and the PPMTF authors'
#: synthetic files on another set's frame
TRIP_FORMATS = {"cab-trips": read_trips, "geolife-trips": read_geolife_trips}
TRACE_FORMATS = {"pf-synthetic": read_pf_synthetic}


def formats() -> list[str]:
    """Every format ``prepare`` reads."""
    return sorted([*io.READERS, *TRIP_FORMATS, *TRACE_FORMATS])


#: what the ledger notes when the time axis starts on the data's first date
TIME_FROM_DATA = "the time axis starts on the date of the earliest record in the data"

#: Discretization used when neither the format nor the caller says otherwise: hourly instants in
#: 12 two-hour slots (paper 001 §4.1, Foursquare), the 1000 most visited POIs when the input has
#: venues and a 20 x 20 grid when it does not.
DEFAULTS = {"instant": "1h", "slot": "2h", "window": None, "timezone": "UTC", "pois": 1000, "grid": (20, 20),
            "fold_days": False}


def parse_grid(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InputError(f"`grid` {text!r} is not ROWSxCOLS (e.g. 20x20)") from None
    if rows < 1 or cols < 1:
        raise InputError(f"`grid` {text!r} must have at least 1x1 cells")
    return rows, cols


def parse_bbox(text: str) -> tuple[float, float, float, float]:
    try:
        box = tuple(float(v) for v in text.split(","))
    except ValueError:
        box = ()
    if len(box) != 4:
        raise InputError(f"`bbox` {text!r} is not LAT_MIN,LAT_MAX,LON_MIN,LON_MAX")
    return box  # Grid checks the ranges


def parse_window(text: str) -> tuple[str, str]:
    parts = text.split("-")
    if len(parts) != 2:
        raise InputError(f"`window` {text!r} is not START-END (e.g. 08:00-18:00)")
    return parts[0], parts[1]


def parse_split(text: str) -> float:
    key, _, value = text.partition("=")
    try:
        frac = float(value)
    except ValueError:
        frac = -1.0
    if key.strip() != "test" or not 0 < frac < 1:
        raise InputError(f"`split` {text!r} is not test=FRACTION with 0 < FRACTION < 1 (e.g. test=0.2)")
    return frac


def prepare(input: str | Path, format: str, out: str | Path, *, grid: tuple[int, int] | None = None,
            bbox: tuple[float, float, float, float] | None = None, pois: int | None = None,
            instant: str | None = None, slot: str | None = None, window: tuple[str, str] | None = None,
            timezone: str | None = None, split: float | None = None, like: str | Path | None = None,
            duplicates: str = "first", seed: int = 0, overwrite: bool = False,
            reader_options: dict | None = None, friends: str | Path | None = None,
            fold_days: bool | None = None, cell_m: float | None = None, dp_epsilon: float | None = None,
            start: str | None = None, time_shift: float | None = None,
            candidates: str | Path | None = None, mode: str | None = None,
            max_speed_kmh: float | None = None, min_speed_kmh: float | None = None,
            domain=None, domain_buffer_m: float = 0.0) -> dict[str, TraceSet]:
    """Read, validate, discretize and save; returns the sets written, by name.

    With a split (the data's own, as PF, or ``split`` = test fraction) ``out/train`` and
    ``out/test`` are written; otherwise ``out`` itself is the TraceSet. ``like`` reuses another
    TraceSet's space and time axis. ``friends`` is an undirected edge list of user ids (Gowalla's
    social graph) kept for the users of each set. ``fold_days`` keeps only the instant of the day
    (see :func:`locsynth.data.discretize.discretize`; the PF preset turns it on). A trip format
    (``TRIP_FORMATS``: ``cab-trips``) makes passenger trips on square cells of ``cell_m`` metres
    instead (:func:`prepare_trips`). Output appears only when everything succeeded.

    How the frame was made is part of what a DP release shows (issue #21): the sets' ledger
    records what was chosen from the data and is covered by no epsilon (the most visited POIs, a
    grid over the data's own box, a time axis from the earliest record), and ``dp_epsilon`` with
    ``pois`` chooses the POIs under DP instead (:func:`dp_top_venues`),
    spending ``dp_epsilon`` per user in that ledger, which every model fitted on the sets carries;
    its candidates are public only when nothing in them depends on the training users:
    ``candidates`` (a file the user vouches for) or the cells of ``grid`` over a public ``bbox``;
    a list read beside the data is the data's own, and the ledger notes it as not covered.
    ``start`` (a date) fixes the time axis's first day instead of the data's. ``timezone="auto"``
    puts every point on the local clock of the time zone at its coordinates (for absolute times:
    unix times or timestamps with offsets), so that multi-city data share local slots; the zones
    are counted in the sets' ``info['timezones']``. ``time_shift`` (hours, e.g. 8 or -3.5) is added
    to every time right after reading, before time zones and the time axis; None takes the format's
    correction (:data:`locsynth.data.io.TIME_SHIFTS`: +8 h for the VLDB'17 files), recorded in the sets'
    ``info['time_shift']``. ``domain`` (trip formats: a file GeoPandas reads, a GeoSeries or
    GeoDataFrame of polygons or lines; :func:`locsynth.data.domain.as_domain`, lines widened by
    ``domain_buffer_m`` metres) is public knowledge of where the movement can be: the grid covers its
    box and opens only its cells, and no method emits a location outside them.

    ``mode`` (data/modes.py: walk, bike, car, bus, train, ship, taxi) gives a trip format's public
    bounds, which ``max_speed_kmh``, ``min_speed_kmh``, ``cell_m`` and ``instant`` override: the
    sets carry them (``TraceSet.bounds``), a trip faster than the speed bound between a fix and its
    first fix an instant later is dropped, and the cell and instant are the mode's unless given.
    Without a mode the trip formats keep their presets (the cabs' 150 km/h between consecutive
    fixes; GeoLife with no speed limit) and the taxi's bounds.
    """
    out = Path(out)
    inputs = [input, like, friends, candidates, (reader_options or {}).get("pois_file")]
    check_output(out, overwrite=overwrite, directory=True, inputs=inputs)
    if format not in formats():
        raise unknown("format", format, formats())
    if format in TRACE_FORMATS and time_shift is not None:
        raise InputError(f"`time_shift` does not apply to `format` {format}: its traces take the time axis of `like`")
    shift = io.time_shift(format, time_shift)
    if domain is not None and format not in TRIP_FORMATS:
        raise InputError(f"`domain` applies to the trip formats ({', '.join(TRIP_FORMATS)}), not to {format}")
    if format in TRIP_FORMATS and timezone == AUTO:
        raise InputError(f"`timezone` auto does not apply to `format` {format}: its trips keep one zone "
                         f"(the cabs' America/Los_Angeles by default); give `timezone` NAME")
    _refuse_bounds(format, {"`mode`": mode, "`max_speed_kmh`": max_speed_kmh, "`min_speed_kmh`": min_speed_kmh})
    if format in TRIP_FORMATS:
        _refuse_for_trips(format, {"`grid`": grid, "`pois`": pois, "`slot`": slot,
                                   "`window`": window, "`like`": like, "`friends`": friends, "`fold_days`": fold_days,
                                   "`dp_epsilon`": dp_epsilon, "`start`": start, "`candidates`": candidates,
                                   "`duplicates`": None if duplicates == "first" else duplicates,
                                   **{"--" + k.replace("_", "-"): v for k, v in (reader_options or {}).items()}})
        sets = prepare_trips(input, format, cell_m, bbox=bbox, timezone=timezone, split=split, seed=seed,
                             time_shift=time_shift, mode=mode, max_speed_kmh=max_speed_kmh,
                             min_speed_kmh=min_speed_kmh, instant=instant, domain=domain,
                             domain_buffer_m=domain_buffer_m)
    elif cell_m is not None:
        raise InputError(f"`cell_m` applies to `format` {', '.join(TRIP_FORMATS)} only; use `grid` with {format}")
    elif dp_epsilon is not None and pois is None:
        raise InputError("`dp_epsilon` chooses the `pois` under DP: give `pois` N with it")
    elif candidates is not None and dp_epsilon is None:
        raise InputError("`candidates` lists the venues a DP choice of `pois` picks from: give `dp_epsilon`")
    elif format in TRACE_FORMATS:
        like_set = TraceSet.load(like) if like is not None else None
        if like_set is None:
            raise InputError(f"`format` {format} needs `like` DIR: the TraceSet whose space and time axis it uses")
        sets = {"": TRACE_FORMATS[format](Path(input), like_set)}
    else:
        like_set = TraceSet.load(like) if like is not None else None
        sets = _discretize_points(input, format, grid, bbox, pois, instant, slot, window, timezone,
                                  split, like_set, duplicates, seed, reader_options or {}, fold_days,
                                  dp_epsilon, start, shift=shift, candidates=candidates)
    if friends is not None:
        edges = io.read_friends(friends)
        sets = {name: attach_friends(ts, edges) for name, ts in sets.items()}
    with atomic_output(out, overwrite, directory=True, inputs=inputs) as tmp:
        if list(sets) == [""]:
            sets[""].save(tmp, overwrite=True)
        else:
            for name, ts in sets.items():
                ts.save(tmp / name)
    return sets


def prepare_trips(input: str | Path, format: str = "cab-trips", cell_m: float | None = None, *,
                  bbox: tuple[float, float, float, float] | None = None, timezone: str | None = None,
                  split: float | None = None, seed: int = 0, time_shift: float | None = None,
                  mode: str | None = None, max_speed_kmh: float | None = None, min_speed_kmh: float | None = None,
                  instant: str | None = None, domain=None, domain_buffer_m: float = 0.0) -> dict[str, TraceSet]:
    """Passenger trips (paper 004 §8.2, :func:`locsynth.data.trips.read_trips`) on square cells of
    ``cell_m`` metres (the paper's 250 or 500; 250 by default) over ``bbox`` (the paper's box by
    default), hours and weekdays in ``timezone`` (the cabs' Pacific time by default), times moved
    ``time_shift`` hours first (None: the format's correction, 0 for both trip formats); the public
    bounds of ``mode`` (:func:`locsynth.data.modes.mode_bounds`; the taxi's by default), which the
    other arguments given override, and the grid restricted to a public ``domain`` (:func:`prepare`).

    With ``split`` (the test fraction) the trips are split by trip, seeded: paper 004 protects one
    trip (a passenger), so a trip is the unit held out, and trips of one cab may fall on both sides.
    Returns ``{"": trips}`` or ``{"train": ..., "test": ...}`` (not yet saved).
    """
    if format not in TRIP_FORMATS:
        raise unknown("trip format", format, TRIP_FORMATS)
    path = Path(input)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    bounds = mode_bounds(mode, max_speed_kmh=max_speed_kmh, min_speed_kmh=min_speed_kmh, instant=instant)
    filtered = bounds.max_speed_kmh if mode is not None or max_speed_kmh is not None else None
    options = {"bbox": bbox, "timezone": timezone, "max_speed_kmh": filtered,
               "domain": as_domain(domain, domain_buffer_m)}
    shift = io.time_shift(format, time_shift)
    cell = cell_m if cell_m is not None else (bounds.cell_m if mode is not None else 250.0)
    trips = TRIP_FORMATS[format](path, cell, shift["hours"], bounds=bounds,
                                 speed_window_s=bounds.instant_seconds if mode is not None else 0.0,
                                 **{k: v for k, v in options.items() if v is not None})
    box = "the given box" if bbox else "the format's public box"
    trips = framed_trips(trips, box + (" within the domain's" if domain is not None else ""), format, shift)
    if split is None:
        return {"": trips}
    train, test = trips.split(split, seed=seed)
    return {"train": train, "test": test}


def framed_trips(trips: TraceSet, box: str, format: str = "frame", shift: dict | None = None) -> TraceSet:
    """``trips`` with the ledger and frame :func:`prepare` records: each trip its own unit, the time
    axis from the data and, where the grid's box (``box``, in words) is the data's own, the box too
    (covered by no epsilon); ``shift`` the clock correction applied."""
    ledger = Ledger(traces_per_user=1)          # each trip its own user id
    ledger.note_uncovered(TIME_FROM_DATA)
    from_data = trips.info.get("bbox_from_data", False)
    if from_data:
        ledger.note_uncovered("the grid covers the bounding box of the data")
    shift = shift or {"hours": 0.0, "default": True}
    frame = _with_clock({
        "space": f"a grid of {trips.space.n_locations} cells over {box} "
                 + ("(from the data)" if from_data else "(public)"),
        "time": "from the date of the earliest trip (from the data)"}, format, shift)
    if trips.space.domain is not None:
        frame["domain"] = (f"the {trips.space.n_allowed} of {trips.space.n_locations} cells that "
                           f"{trips.space.domain} covers (public knowledge, as given)")
    return replace(trips, ledger=ledger, info={**trips.info, "frame": frame, "time_shift": shift})


def _refuse_bounds(format: str, bounds: dict) -> None:
    """An InputError naming the bounds given (flag -> value, None when not given) to a format that
    is not trips."""
    given = ", ".join(k for k, v in bounds.items() if v is not None)
    if given and format not in TRIP_FORMATS:
        raise InputError(f"{given} applies to the trip formats ({', '.join(TRIP_FORMATS)}); for trips of another "
                         "source use locsynth.trips_from_frame(frame, mode=...)")


def _refuse_for_trips(format: str, options: dict) -> None:
    """An InputError naming the given options (flag -> value, None when not given) that trips ignore."""
    given = [flag for flag, value in options.items() if value is not None]
    if given:
        raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to `format` {format}: "
                         f"trips come on square cells of "
                         f"`cell_m` metres with their mode's instants (paper 004 §8.2: one minute)")


def attach_friends(ts: TraceSet, edges: pd.DataFrame) -> TraceSet:
    """``ts`` with the edges (columns user_a, user_b: original ids) whose both ends are its users."""
    ids = pd.Index(ts.users["user_id"])
    a = ids.get_indexer(pd.Index(edges["user_a"].to_numpy()))
    b = ids.get_indexer(pd.Index(edges["user_b"].to_numpy()))
    keep = (a >= 0) & (b >= 0) & (a != b)
    pairs = np.unique(np.sort(np.column_stack([a[keep], b[keep]]), axis=1), axis=0)
    return replace(ts, friends=pairs.reshape(-1, 2))


def dp_top_venues(points: pd.DataFrame, n: int, epsilon: float, ledger: Ledger,
                  venues: pd.DataFrame | None = None, *, public: bool = True, source: str = "") -> POISpace:
    """The ``n`` venues most users visited, chosen under DP (privacy/topk.py): each user counts a
    venue at most once, so one user added or removed moves every count by at most 1, all the same
    way. ``venues`` (venue id -> lat, lon) are the candidates with their coordinates, ``public``
    when nothing in the list depends on the training users (a list the user vouches for, a
    public grid's cells). A data-derived list (``public=False``, ``source`` naming it) or none
    (the venues in the data) leaves the candidates outside the guarantee: a venue one person alone
    visited is a candidate only with that person (issue #35), and the ledger says so."""
    from ..privacy.topk import noisy_top_k

    if "venue" not in points:
        raise InputError("`pois` needs a venue column in the input (check-in data); use `grid` for GPS points")
    visits = points[["user", "venue"]].assign(venue=points["venue"].astype(str)).drop_duplicates()
    visitors = visits["venue"].value_counts()
    if venues is not None:
        candidates = np.sort(venues.index.astype(str).to_numpy())
    else:
        candidates = np.sort(visitors.index.to_numpy().astype(str))
    if venues is not None and public:
        said = f"the candidates are {source or 'a public list'}, with its coordinates"
    else:
        said = f"the candidates are {source or 'the venues in the data'}: not public"
        ledger.note_uncovered(
            f"which venues were candidates for the DP choice of locations: {source or 'the venues in the data'}, "
            f"which depends on the training users (a venue one person alone visited is a candidate only with that "
            f"person); give a public list (`candidates` FILE) or choose cells of a public grid (`grid`, `bbox`)")
    if n > candidates.size:
        raise InputError(f"`pois` {n} is more than the {candidates.size} candidate venues")
    scores = visitors.reindex(candidates, fill_value=0).to_numpy(np.int64)
    chosen = noisy_top_k(scores, n, epsilon, ledger=ledger, unit="user",
                         saw=f"how many users visited each venue, to choose the {n} locations",
                         assumptions=f"each user counts a venue at most once (monotonic, sensitivity 1); {said}")
    return POISpace.of_venues(points, candidates[chosen], known=venues)


def grid_candidates(points: pd.DataFrame, grid: tuple[int, int], bbox) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cells of the public ``grid`` over ``bbox`` as candidate venues for :func:`dp_top_venues`:
    (the points with ``venue`` = their cell's code and no category, the cells' codes -> centres).
    Points outside the box are dropped (each on its own: no other point decides)."""
    space = Grid(grid[0], grid[1], bbox)
    cell = space.locate(points["lat"].to_numpy(), points["lon"].to_numpy())
    codes = np.array([f"cell-{c}" for c in range(space.n_locations)], dtype=object)
    inside = points.loc[cell >= 0].drop(columns=["venue", "category"], errors="ignore")
    inside = inside.assign(venue=codes[cell[cell >= 0]])
    return inside, pd.DataFrame({"lat": space.lat, "lon": space.lon}, index=pd.Index(codes, name="venue"))


def _dp_space(points, format, input, pois, grid, bbox, epsilon, ledger, candidates, pois_file):
    """The DP choice of ``pois`` locations (:func:`dp_top_venues`) and how the frame says it was made:
    (points, space, frame). Candidates, in order: ``candidates`` (a file the user vouches for), the
    cells of ``grid`` over the public ``bbox``, else the format's venue list (io.VENUE_LISTS: the
    VLDB'17 lists are the data's own) or the venues in the data, which the ledger notes as not covered."""
    what = f"{pois} POIs chosen by a DP top-k of visitors (epsilon {epsilon:g} per user)"
    if bbox is not None and grid is None:
        lat_min, lat_max, lon_min, lon_max = bbox
        points = points.loc[points["lat"].between(lat_min, lat_max) & points["lon"].between(lon_min, lon_max)]
    if candidates is not None:
        if grid is not None:
            raise InputError("`candidates` and `grid` are two lists of candidates: give one")
        venues = io.read_candidates(candidates)
        if bbox is not None:
            venues = venues.loc[venues["lat"].between(bbox[0], bbox[1]) & venues["lon"].between(bbox[2], bbox[3])]
        points = points.loc[points["venue"].astype(str).isin(venues.index)] if "venue" in points else points
        space = dp_top_venues(points.drop(columns="category", errors="ignore"), pois, epsilon, ledger, venues,
                              source=f"the list {Path(candidates).name} (given as public)")
        return points, space, f"{what} among the venues of {Path(candidates).name} (public, as given)"
    if grid is not None:
        if bbox is None:
            raise InputError("`grid` with `pois` and `dp_epsilon` chooses cells of a public grid: give its box, "
                             "`bbox` LAT_MIN,LAT_MAX,LON_MIN,LON_MAX")
        points, cells = grid_candidates(points, grid, bbox)
        space = dp_top_venues(points, pois, epsilon, ledger, cells,
                              source=f"the cells of a {grid[0]} x {grid[1]} grid over the given box")
        return points, space, (f"{pois} cells of a {grid[0]} x {grid[1]} grid over a given box (public), chosen "
                                f"by a DP top-k of visitors (epsilon {epsilon:g} per user)")
    venues = io.read_venues(format, input, pois_file)
    source = (f"the POI list read beside the data ({io.VENUE_LISTS[format]}: its preprocessing kept the venues "
              f"the data's users visited)" if venues is not None else "")
    space = dp_top_venues(points, pois, epsilon, ledger, venues, public=False, source=source)
    return points, space, what + " among candidates from the data (not covered)"


def _discretize_points(input, format, grid, bbox, pois, instant, slot, window, timezone, split,
                       like_set, duplicates, seed, reader_options, fold_days, dp_epsilon=None,
                       start=None, *, shift: dict, candidates=None) -> dict[str, TraceSet]:
    points = io.read_points(format, input, timezone=None if timezone == AUTO else timezone, **reader_options)
    points = shift_times(points, shift["hours"])
    info = {"source": format, "input": Path(input).name, "time_shift": shift}
    return traces_from_points(points, grid=grid, bbox=bbox, pois=pois, instant=instant, slot=slot, window=window,
                              timezone=timezone, split=split, like=like_set, duplicates=duplicates, seed=seed,
                              fold_days=fold_days, dp_epsilon=dp_epsilon, start=start, candidates=candidates,
                              info=info, format=format, input=input, pois_file=reader_options.get("pois_file"),
                              shift=shift)


def traces_from_points(points: pd.DataFrame, *, grid: tuple[int, int] | None = None,
                       bbox: tuple[float, float, float, float] | None = None, pois: int | None = None,
                       instant: str | None = None, slot: str | None = None, window: tuple[str, str] | None = None,
                       timezone: str | None = None, split: float | None = None, like: TraceSet | None = None,
                       duplicates: str = "first", seed: int = 0, fold_days: bool | None = None,
                       dp_epsilon: float | None = None, start: str | None = None, candidates: str | Path | None = None,
                       info: dict | None = None, format: str = "frame", input: str | Path | None = None,
                       pois_file: str | Path | None = None, shift: dict | None = None) -> dict[str, TraceSet]:
    """A validated points table (:mod:`locsynth.data.points`) as TraceSets, the frame made as
    :func:`prepare` makes it from a file (its options, :data:`DEFAULTS` and ``format``'s preset) and
    recorded in the ledger; ``{"": traces}``, or ``{"train": ..., "test": ...}`` with ``split`` or a
    ``split`` column. ``format``, ``input`` and ``pois_file`` say where the points came from (a
    format's venue list, its clock correction ``shift``)."""
    preset = io.PRESETS.get(format, {})
    auto = timezone == AUTO
    info = dict(info or {})
    like_set = like
    if auto:
        # every point on its own zone's wall clock, as if that clock were UTC (timeaxis.local_clock)
        clock, zones = local_clock(points["time"], points["lat"], points["lon"])
        points = points.assign(time=clock).loc[clock.notna()]
        info["timezones"] = zones
        timezone = "UTC"
    if like_set is not None:
        space, axis = like_set.space, like_set.time
        ledger = like_set.ledger.copy() if like_set.ledger else Ledger()
        frame = {**like_set.info.get("frame", {}), "like": str(like_set.info.get("input", ""))}
    else:
        if grid is None and pois is None:
            grid, pois = preset.get("grid"), preset.get("pois")
            if grid is None and pois is None:
                if "venue" in points:
                    pois = DEFAULTS["pois"]
                else:
                    grid = DEFAULTS["grid"]
        if bbox is None and grid is not None:
            bbox = preset.get("bbox")
        ledger = Ledger(traces_per_user=1)      # discretize makes one trace per user
        if pois is not None and dp_epsilon is not None:
            points, space, frame_space = _dp_space(points, format, input, pois, grid, bbox, dp_epsilon, ledger,
                                                   candidates, pois_file)
        else:
            if candidates is not None:
                raise InputError("`candidates` lists the venues a DP choice of `pois` picks from: give `dp_epsilon`")
            if grid is not None and pois is not None:
                raise InputError("`grid` with `pois` picks the most visited cells of the grid under DP: give "
                                 "`dp_epsilon` (or one of `grid` and `pois`)")
            space = make_space(points, grid=grid, bbox=bbox, pois=pois)
            if pois is not None:
                ledger.note_uncovered(f"the location space (the {pois} most visited POIs) was chosen from the "
                                      f"training data")
                frame_space = f"the {pois} most visited POIs (from the data)"
            elif bbox is None:
                ledger.note_uncovered("the grid covers the bounding box of the data")
                frame_space = f"a {grid[0]} x {grid[1]} grid over the data's bounding box (from the data)"
            else:
                frame_space = f"a {grid[0]} x {grid[1]} grid over a given box (public)"
        opt = lambda key, value: value if value is not None else preset.get(key, DEFAULTS[key])  # noqa: E731
        axis = make_time_axis(points, opt("instant", instant), opt("slot", slot), opt("window", window),
                              opt("timezone", timezone), start)
        if start is None:
            ledger.note_uncovered(TIME_FROM_DATA)
        frame = {"space": frame_space,
                 "time": (f"from {start} (public)" if start else "from the date of the earliest record (from the data)")
                 + ("; each point on the local clock of its time zone (--timezone auto)" if auto else "")}
    info["frame"] = _with_clock(frame, format, shift or {"hours": 0.0, "default": True})
    fold = fold_days if fold_days is not None else preset.get("fold_days", DEFAULTS["fold_days"])
    if "split" in points:
        if split is not None:
            raise InputError(f"`format` {format} comes with its own train/test split; drop `split`")
        return {name: replace(discretize(points.loc[points["split"] == name].drop(columns="split"), space, axis,
                                         duplicates, info, fold), ledger=ledger.copy()) for name in ("train", "test")}
    ts = replace(discretize(points, space, axis, duplicates, info, fold), ledger=ledger)
    if split is None:
        return {"": ts}
    train, test = ts.split(split, seed=seed)
    return {"train": train, "test": test}


def _with_clock(frame: dict, format: str, shift: dict) -> dict:
    """``frame`` with its ``clock`` line saying which clock correction was applied (none: no line)."""
    frame = {k: v for k, v in frame.items() if k != "clock"}
    note = io.describe_time_shift(format, shift)
    return {**frame, "clock": note} if note else frame
