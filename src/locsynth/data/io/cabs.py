"""San Francisco Cabspotting taxi traces (CRAWDAD epfl/mobility, traceset cab).

One file ``new_<cab>.txt`` per cab, one GPS fix per line, space-separated, no header:
``latitude longitude occupancy unix_time`` (occupancy 1 = carrying a passenger; UTC seconds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ..points import check_unix_range
from ._common import file_and_row, read_table, require_file, validate_files

CAB_COLUMNS = ("lat", "lon", "occupancy", "unixtime")
CAB_PATTERN = "new_*.txt"


def read_cabs(path: str | Path, timezone: str | None = None, trips: bool = True) -> pd.DataFrame:
    """Cab fixes as points, each cab sorted by time (the original files are newest first).

    Parameters
    ----------
    path : str or Path
        A folder of ``new_<cab>.txt`` files, or one such file.
    timezone : str, optional
        Not needed: the times are unix seconds.
    trips : bool
        True: keep only occupied fixes and make each passenger trip (a maximal run of occupancy 1
        in time order) its own user ``f"{cab}-{k:05d}"``, k = trip number within the cab from 0.
        False: each cab is one user (its name) with all its fixes.
    """
    files = cab_files(Path(path))
    cabs = [_cab_name(f) for f in files]
    raws = [read_table(f, {"lat": "float64", "lon": "float64", "occupancy": "int64", "unixtime": "int64"},
                       names=CAB_COLUMNS, sep=" ") for f in files]
    lengths = [len(r) for r in raws]
    raw = pd.concat(raws, ignore_index=True)
    del raws
    occupancy = raw["occupancy"].to_numpy()
    bad = (occupancy != 0) & (occupancy != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        k, row = file_and_row(lengths, i)
        raise InputError(f"occupancy {occupancy[i]} in {files[k]} row {row} is not 0 or 1")
    cab = np.repeat(np.arange(len(files)), lengths)
    check_unix_range(raw["unixtime"], "s", lambda i: "in {} row {}".format(*_file_row(files, lengths, i)),
                     "the cab files' times are unix seconds")
    times = pd.to_datetime(raw["unixtime"], unit="s", utc=True, errors="coerce")
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        k, row = file_and_row(lengths, i)
        raise InputError(f"unix time {raw['unixtime'].iloc[i]} in {files[k]} row {row} is out of range")
    frame = pd.DataFrame({"user": np.asarray(cabs, dtype=object)[cab], "time": times,
                          "lat": raw["lat"], "lon": raw["lon"]})
    points = validate_files(frame, [str(f) for f in files], lengths, timezone)
    order = np.lexsort((raw["unixtime"].to_numpy(), cab))  # stable: equal times keep file order
    points, cab, occupancy = points.iloc[order].reset_index(drop=True), cab[order], occupancy[order]
    if not trips:
        return points
    return _trips(points, cab, occupancy, cabs)


def _trips(points: pd.DataFrame, cab: np.ndarray, occupancy: np.ndarray, cabs: list[str]) -> pd.DataFrame:
    """Occupied fixes of time-sorted cabs, with user = cab and trip number."""
    first_of_cab = np.r_[True, cab[1:] != cab[:-1]]
    occupied = occupancy == 1
    starts = occupied & (first_of_cab | np.r_[False, ~occupied[:-1]])
    count = np.cumsum(starts)  # trips started so far, all cabs
    before_cab = np.maximum.accumulate(np.where(first_of_cab, count - starts, 0))
    k = (count - before_cab - 1)[occupied]
    out = points.loc[occupied].reset_index(drop=True)
    names = pd.Series(np.asarray(cabs, dtype=object)[cab[occupied]])
    out["user"] = (names + "-" + pd.Series(k).astype(str).str.zfill(5)).to_numpy(dtype=object)
    return out


def _file_row(files: list[Path], lengths: list[int], i: int) -> tuple[Path, int]:
    k, row = file_and_row(lengths, i)
    return files[k], row


def cab_files(path: Path) -> list[Path]:
    """The ``new_<cab>.txt`` files of a folder (sorted), or ``[path]`` for a file."""
    if path.is_dir():
        files = sorted(p for p in path.glob(CAB_PATTERN) if p.is_file())
        if not files:
            raise InputError(f"{path} has no cab files matching {CAB_PATTERN!r}")
        return files
    return [require_file(path)]


def _cab_name(path: Path) -> str:
    stem = path.stem
    return stem[4:] if stem.startswith("new_") and len(stem) > 4 else stem


__all__ = ["read_cabs"]
