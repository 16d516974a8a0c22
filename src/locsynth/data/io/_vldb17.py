"""Check-ins + POI coordinates as preprocessed by Liu et al. (PVLDB 10(10), 2017).

Used by the ``foursquare-global`` and ``gowalla`` formats. ``*_checkins.txt``: ``user_id
poi_id unix_time`` (tab-separated, no header, seconds, possibly written as floats);
``*_poi_coos.txt``: ``poi_id latitude longitude``.

The unix times are said to be UTC but are 8 h early: every check-in compared with its source
(SNAP Gowalla's rows, 3,186 TSMC NYC check-ins) comes 8 h earlier to the second, as if the
sources' UTC clock readings had been converted as UTC+8 local times. The readers return the
times as stated; ``prepare`` adds the 8 h by default (``io.TIME_SHIFTS``, docs/data.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ..points import validate_points
from ._common import check_coordinates, find_one, read_table, require_file, unix_times

CHECKINS_PATTERN = "*checkins*.txt"
POIS_PATTERN = "*poi_coos*.txt"
CHECKIN_COLUMNS = ("user", "poi", "unixtime")
POI_COLUMNS = ("poi", "lat", "lon")


def locate_files(path: Path, pois_file: str | Path | None) -> tuple[Path, Path]:
    """(check-ins file, POI file) from a folder, or from a check-ins file and ``pois_file``.

    A check-ins file without ``pois_file`` uses the one ``*poi_coos*.txt`` next to it.
    """
    path = Path(path)
    if path.is_dir():
        checkins = find_one(path, CHECKINS_PATTERN, "check-ins")
        pois = Path(pois_file) if pois_file is not None else find_one(path, POIS_PATTERN, "POI coordinates")
    else:
        checkins = require_file(path)
        pois = Path(pois_file) if pois_file is not None else find_one(path.parent, POIS_PATTERN,
                                                                       "POI coordinates")
    return checkins, require_file(pois)


def read_poi_coordinates(path: Path) -> pd.DataFrame:
    """POI id (str) -> lat, lon; bad coordinates or a repeated id are InputErrors naming the row."""
    raw = read_table(path, {"poi": "str", "lat": "float64", "lon": "float64"}, names=POI_COLUMNS, sep="\t")
    check_coordinates(raw["lat"].to_numpy(), raw["lon"].to_numpy(), str(path))
    repeated = raw["poi"].duplicated().to_numpy()
    if repeated.any():
        i = int(np.flatnonzero(repeated)[0])
        raise InputError(f"POI {raw['poi'].iloc[i]!r} in {path} row {i + 1} already has coordinates "
                         "in an earlier row")
    return raw.set_index("poi")


def read_checkins(path: str | Path, timezone: str | None = None,
                  pois_file: str | Path | None = None) -> pd.DataFrame:
    """Check-ins joined with their POI's coordinates; venue = POI id, user = user id (int)."""
    checkins, pois = locate_files(Path(path), pois_file)
    coords = read_poi_coordinates(pois)
    raw = read_table(checkins, {"user": "int64", "poi": "str", "unixtime": "float64"},
                     names=CHECKIN_COLUMNS, sep="\t")
    where = coords.index.get_indexer(raw["poi"])
    unknown = where < 0
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"POI {raw['poi'].iloc[i]!r} in {checkins} row {i + 1} has no coordinates in {pois}")
    frame = pd.DataFrame({
        "user": raw["user"].to_numpy(),
        "time": unix_times(raw["unixtime"], str(checkins), "unix time", fix="this format's times are unix seconds"),
        "lat": coords["lat"].to_numpy()[where],
        "lon": coords["lon"].to_numpy()[where],
        "venue": raw["poi"].to_numpy(),
    })
    return validate_points(frame, str(checkins), timezone)
