"""The PWS Cup 2019 file formats (paper 003 §3.4; the organisers' kit).

* ``info_region.csv``: ``reg_id,y_id,x_id,y(center),x(center),hospital``; a rows x cols grid with
  ``reg_id = (y_id - 1) * cols + x_id`` (1-based, y from the south), which is locsynth's
  :class:`~locsynth.data.space.Grid` numbering plus one. Hospital regions become the category
  ``"hospital"`` of the grid's cells (the others ``"other"``).
* ``info_time.csv``: ``ref/org,time_id,day,hour,min``; ``time_id`` 1.. in order of time, every
  day the same instants (Osaka: 20 a day from 8:00 every 30 minutes). Instant ``t`` of locsynth's
  :class:`~locsynth.data.timeaxis.TimeAxis` is ``(day - 1) * instants_per_day + k``.
* traces: ``user_id,time_id,reg_id`` (a pseudonymized file names its first column ``pse_id``);
  ``reg_id`` is a region, ``*`` for a deleted event, or regions separated by spaces for a
  generalized event (stored as a :class:`~locsynth.data.traces.LocationSets` entry).
* ID tables: ``pse_id,user_id``, the organiser's secret table and an attacker's inferred one.

Files are read by column position (the kit's own files disagree on header names: ``time`` or
``time_id``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..data.space import Grid
from ..data.timeaxis import TimeAxis
from ..core.files import atomic_output
from ..data.traces import DELETED, LocationSets, TraceSet, generalized_code

HOSPITAL = "hospital"
#: The contest has no calendar: its days are placed on an arbitrary Monday in Osaka's time zone.
START_DATE = date(2019, 9, 2)
TIMEZONE = "Asia/Tokyo"
DELETED_MARK = "*"


def osaka_time() -> TimeAxis:
    """The contest's axis without an ``info_time.csv``: 20 instants a day, 8:00-18:00 every 30 minutes."""
    return TimeAxis.build(START_DATE, TIMEZONE, "30min", None, ("08:00", "18:00"))


def read_regions(path: str | Path) -> Grid:
    """The contest grid of ``info_region.csv``; hospital regions have category ``"hospital"``."""
    path = Path(path)
    frame = _read(path, 6, "reg_id,y_id,x_id,y(center),x(center),hospital")
    try:
        reg, y, x = (frame.iloc[:, k].astype(np.int64).to_numpy() for k in range(3))
        lat, lon = frame.iloc[:, 3].astype(float).to_numpy(), frame.iloc[:, 4].astype(float).to_numpy()
        hospital = frame.iloc[:, 5].astype(np.int64).to_numpy()
    except ValueError as exc:
        raise InputError(f"{path}: a region row is not numeric ({exc})") from None
    rows, cols = int(y.max()), int(x.max())
    if y.min() < 1 or x.min() < 1 or len(frame) != rows * cols or not np.array_equal(np.sort(reg), np.arange(1, rows * cols + 1)):
        raise InputError(f"{path} does not describe a full grid: {len(frame)} regions for y_id 1..{rows}, x_id 1..{cols}")
    bad = reg != (y - 1) * cols + x
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{path} row {i + 2}: reg_id {reg[i]} is not (y_id - 1) * {cols} + x_id = {(y[i] - 1) * cols + x[i]}")
    if not np.isin(hospital, (0, 1)).all():
        raise InputError(f"{path}: the hospital column must be 0 or 1")
    order = np.argsort(reg)
    lat_c = np.unique(lat[order].reshape(rows, cols)[:, 0])
    lon_c = np.unique(lon[order].reshape(rows, cols)[0])
    dy = (lat_c[-1] - lat_c[0]) / max(rows - 1, 1) if rows > 1 else 1e-3
    dx = (lon_c[-1] - lon_c[0]) / max(cols - 1, 1) if cols > 1 else 1e-3
    bbox = (lat_c[0] - dy / 2, lat_c[-1] + dy / 2, lon_c[0] - dx / 2, lon_c[-1] + dx / 2)
    category = np.where(hospital[order] == 1, HOSPITAL, "other").astype(object)
    grid = Grid(rows, cols, bbox, category=category)
    if not (np.allclose(grid.lat, lat[order], atol=dy / 100) and np.allclose(grid.lon, lon[order], atol=dx / 100)):
        raise InputError(f"{path}: the region centres are not those of an evenly spaced grid")
    return grid


def hospitals(space) -> np.ndarray:
    """Boolean mask of the hospital regions (none when the space has no categories)."""
    if space.category is None:
        return np.zeros(space.n_locations, bool)
    return np.asarray(space.category, dtype=object) == HOSPITAL


def write_regions(grid: Grid, path: str | Path, overwrite: bool = False) -> Path:
    """``info_region.csv`` of a grid (hospitals from its categories)."""
    frame = pd.DataFrame({"reg_id": np.arange(1, grid.n_locations + 1), "y_id": grid.row + 1, "x_id": grid.col + 1,
                          "y(center)": grid.lat, "x(center)": grid.lon, "hospital": hospitals(grid).astype(int)})
    return _write(frame, path, overwrite)


@dataclass(frozen=True)
class TimeTable:
    """``info_time.csv``: the axis and, per time id, its instant and its part (``ref`` or ``org``)."""

    axis: TimeAxis
    instant: np.ndarray  # instant of time id k at index k - 1
    part: np.ndarray

    def instants(self, time_id: np.ndarray, path: Path) -> np.ndarray:
        time_id = np.asarray(time_id, np.int64)
        if time_id.size and (time_id.min() < 1 or time_id.max() > self.instant.size):
            raise InputError(f"{path}: time_id outside 1..{self.instant.size}")
        return self.instant[time_id - 1]

    def time_ids(self, t: np.ndarray) -> np.ndarray:
        lookup = np.full(int(self.instant.max()) + 2, -1, np.int64)
        lookup[self.instant] = np.arange(1, self.instant.size + 1)
        t = np.asarray(t, np.int64)
        ids = lookup[np.clip(t, 0, lookup.size - 1)]
        if (ids < 0).any() or (t >= lookup.size).any():
            raise InputError("an event falls on an instant the time table does not have")
        return ids


def default_times(days: int = 4, reference_days: int = 2) -> TimeTable:
    """The Osaka time table: ``days`` days of 20 instants, the first ``reference_days`` for reference."""
    axis = osaka_time()
    n = days * axis.instants_per_day
    part = np.where(np.arange(n) < reference_days * axis.instants_per_day, "ref", "org")
    return TimeTable(axis, np.arange(n, dtype=np.int64), part)


def write_times(table: TimeTable, path: str | Path, overwrite: bool = False) -> Path:
    """``info_time.csv`` of a time table: ``ref/org,time_id,day,hour,min``, days 1-based."""
    axis = table.axis
    day, k = np.divmod(table.instant, axis.instants_per_day)
    minutes = (axis.window_start.total_seconds() + k * axis.instant.total_seconds()) // 60
    frame = pd.DataFrame({"ref/org": table.part, "time_id": np.arange(1, table.instant.size + 1), "day": day + 1,
                          "hour": (minutes // 60).astype(np.int64), "min": (minutes % 60).astype(np.int64)})
    return _write(frame, path, overwrite)


def read_times(path: str | Path) -> TimeTable:
    path = Path(path)
    frame = _read(path, 5, "ref/org,time_id,day,hour,min")
    try:
        part = frame.iloc[:, 0].astype(str).str.strip().to_numpy()
        tid, day, hour, minute = (frame.iloc[:, k].astype(np.int64).to_numpy() for k in range(1, 5))
    except ValueError as exc:
        raise InputError(f"{path}: a time row is not numeric ({exc})") from None
    if not np.array_equal(np.sort(tid), np.arange(1, tid.size + 1)):
        raise InputError(f"{path}: time_id must be 1..{tid.size} once each")
    order = np.argsort(tid)
    day, clock = day[order], hour[order] * 60 + minute[order]
    clocks = np.unique(clock)
    per_day = clocks.size
    step = np.diff(clocks)
    if per_day > 1 and not (step == step[0]).all():
        raise InputError(f"{path}: the instants of a day are not evenly spaced ({sorted(set(step.tolist()))} minutes)")
    minutes = int(step[0]) if per_day > 1 else 60
    start = int(clocks[0])
    end = start + per_day * minutes
    if end > 24 * 60:
        raise InputError(f"{path}: the day's instants run past midnight")
    axis = TimeAxis.build(START_DATE, TIMEZONE, timedelta(minutes=minutes), None,
                          (f"{start // 60:02d}:{start % 60:02d}", f"{end // 60:02d}:{end % 60:02d}"))
    k = (clock - start) // minutes
    return TimeTable(axis, (day - 1) * per_day + k, part[order])


def read_traces(path: str | Path, space: Grid, times: TimeTable | None = None) -> TraceSet:
    """A contest trace file as a TraceSet on ``space``: users in order of first appearance,
    regions 1-based in the file and 0-based in the set, deleted and generalized events kept."""
    path = Path(path)
    times = times or default_times()
    frame = _read(path, 3, "user_id,time_id,reg_id", dtype=str)
    try:
        user_id = frame.iloc[:, 0].astype(np.int64).to_numpy()
        time_id = frame.iloc[:, 1].astype(np.int64).to_numpy()
    except ValueError as exc:
        raise InputError(f"{path}: user_id and time_id must be whole numbers ({exc})") from None
    loc, locsets = parse_regions(frame.iloc[:, 2].fillna("").astype(str).str.strip().to_numpy(), space.n_locations, path)
    user, ids = pd.factorize(user_id)          # rows in order of first appearance
    users = pd.DataFrame({"user_id": ids})
    t = times.instants(time_id, path)
    ts = TraceSet.from_events(user, t, loc, users, space, times.axis, {"source": "pwscup", "file": path.name},
                              locsets=locsets)
    if pd.DataFrame({"u": ts.user, "t": ts.t}).duplicated().any():
        raise InputError(f"{path}: a user has two events at one time_id")
    return ts


def parse_regions(text: np.ndarray, n_locations: int, path: Path) -> tuple[np.ndarray, LocationSets | None]:
    """``reg_id`` cells -> location codes (0-based, DELETED, or generalized) and the location sets."""
    uniq, inverse = np.unique(text, return_inverse=True)
    codes = np.empty(uniq.size, np.int64)
    sets: list[np.ndarray] = []
    seen: dict[tuple, int] = {}
    for k, cell in enumerate(uniq):
        if cell == DELETED_MARK:
            codes[k] = DELETED
            continue
        try:
            regions = np.array([int(v) for v in cell.split()], np.int64)
        except ValueError:
            regions = np.zeros(0, np.int64)
        if regions.size == 0 or regions.min() < 1 or regions.max() > n_locations:
            row = int(np.flatnonzero(inverse == k)[0]) + 2
            raise InputError(f"{path} row {row}: reg_id {cell!r} is not a region 1..{n_locations}, '*' or regions "
                             "separated by spaces")
        regions = np.unique(regions) - 1
        if regions.size == 1:
            codes[k] = regions[0]
            continue
        key = tuple(regions.tolist())
        if key not in seen:
            seen[key] = len(sets)
            sets.append(regions)
        codes[k] = generalized_code(seen[key])
    return codes[inverse], (LocationSets.from_lists(sets) if sets else None)


def format_regions(traces: TraceSet) -> np.ndarray:
    """The ``reg_id`` cell of every event (1-based regions, ``*``, space-separated sets)."""
    loc = traces.loc.astype(np.int64)
    out = (loc + 1).astype(str).astype(object)
    out[loc == DELETED] = DELETED_MARK
    gen = loc < DELETED
    if gen.any():
        sets = traces.locsets
        text = np.array([" ".join(map(str, sets.members_of(k) + 1)) for k in range(sets.n_sets)], dtype=object)
        out[gen] = text[generalized_code(loc[gen])]
    return out


def write_traces(traces: TraceSet, path: str | Path, times: TimeTable | None = None, *, id_column: str = "user_id",
                 overwrite: bool = False) -> Path:
    """A TraceSet as a contest trace file (user ids from its user table)."""
    times = times or default_times()
    frame = pd.DataFrame({id_column: traces.users["user_id"].to_numpy()[traces.user],
                          "time_id": times.time_ids(traces.t), "reg_id": format_regions(traces)})
    return _write(frame, path, overwrite)


def read_id_table(path: str | Path) -> pd.DataFrame:
    """``pse_id,user_id`` (secret or inferred), as integers."""
    path = Path(path)
    frame = _read(path, 2, "pse_id,user_id")
    try:
        return pd.DataFrame({"pse_id": frame.iloc[:, 0].astype(np.int64), "user_id": frame.iloc[:, 1].astype(np.int64)})
    except ValueError as exc:
        raise InputError(f"{path}: pse_id and user_id must be whole numbers ({exc})") from None


def write_id_table(table: pd.DataFrame, path: str | Path, overwrite: bool = False) -> Path:
    return _write(table[["pse_id", "user_id"]], path, overwrite)


def _read(path: Path, columns: int, expected: str, dtype=None) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        frame = pd.read_csv(path, dtype=dtype, skipinitialspace=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not a readable CSV file: {exc}") from None
    if frame.shape[1] != columns:
        raise InputError(f"{path} has {frame.shape[1]} columns ({', '.join(map(str, frame.columns))}); expected {expected}")
    if len(frame) == 0:
        raise InputError(f"{path} has no data rows")
    return frame


def _write(frame: pd.DataFrame, path: str | Path, overwrite: bool) -> Path:
    path = Path(path)
    with atomic_output(path, overwrite, directory=False) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")
    return path
