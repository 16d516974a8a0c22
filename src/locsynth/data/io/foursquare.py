"""Foursquare check-ins in three published forms.

- ``foursquare``: the TSMC 2014 NYC/Tokyo release (Yang et al.), raw (``dataset_TSMC2014_*.txt``,
  8 tab-separated columns, no header, latin-1), as CSV with the TSMC column names, or as the
  iPCM/GETNext preprocessing (``NYC_val.csv``, ``NYC_test.csv``, ...).
- ``foursquare-global``: the global-scale check-ins as preprocessed by Liu et al. (PVLDB 2017),
  whose times are 8 h early (``prepare`` corrects them: ``io.TIME_SHIFTS``).
- ``foursquare-mat``: the multiple-aspect-trajectory version of TSMC NYC (weekday and hour only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ..points import validate_points
from . import _vldb17
from ._common import read_table, require_file, validate_files

#: canonical name -> column of the TSMC release, column of the iPCM preprocessing
TSMC_COLUMNS = {
    "user": ("userId", "user_id"),
    "venue": ("venueId", "POI_id"),
    "category_id": ("venueCategoryId", "POI_catid"),
    "category": ("venueCategory", "POI_catname"),
    "lat": ("latitude", "latitude"),
    "lon": ("longitude", "longitude"),
    "offset": ("timezoneOffset", "timezone"),
    "utc": ("utcTimestamp", "UTC_time"),
}
TSMC_NAMES = tuple(v[0] for v in TSMC_COLUMNS.values())
IPCM_NAMES = tuple(v[1] for v in TSMC_COLUMNS.values())
UTC_FORMAT = "%a %b %d %H:%M:%S %z %Y"
_USED = {"user": "int64", "venue": "str", "category": "str", "lat": "float64", "lon": "float64", "utc": "str"}


def read_foursquare(path: str | Path, timezone: str | None = None, encoding: str | None = None) -> pd.DataFrame:
    """TSMC 2014 Foursquare check-ins (a file, or a folder of check-in files).

    Parameters
    ----------
    path : str or Path
        A check-in file, or a folder: every ``*.csv`` whose header has the check-in columns
        (files such as ``poi_info.csv`` are skipped) and every raw TSMC ``*.txt`` in it.
    timezone : str, optional
        Not needed: the times are UTC (``utcTimestamp``/``UTC_time``, ``%a %b %d %H:%M:%S %z %Y``).
    encoding : str, optional
        Text encoding; default latin-1 for the raw ``.txt`` release, utf-8 otherwise.

    Returns
    -------
    Points table with ``venue`` = venue id and ``category`` = category name.
    """
    path = Path(path)
    if path.is_dir():
        files = [(f, kind) for f in sorted(path.iterdir()) if f.is_file() and (kind := _tsmc_kind(f))]
        if not files:
            raise InputError(f"{path} has no Foursquare check-in files: expected *.csv with columns "
                             f"{', '.join(IPCM_NAMES)} (or {', '.join(TSMC_NAMES)}) or a raw TSMC *.txt")
    else:
        require_file(path)
        files = [(path, _tsmc_kind(path) or _closest_kind(path))]
    frames = [_read_tsmc_file(f, kind, encoding) for f, kind in files]
    return validate_files(pd.concat(frames, ignore_index=True), [str(f) for f, _ in files],
                          [len(f) for f in frames], timezone)


def _first_line(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.readline().decode("latin-1").rstrip("\r\n")


def _tsmc_kind(path: Path) -> str | None:
    """'raw' (headerless TSMC .txt), 'tsmc' or 'ipcm' (CSV headers), None for other files."""
    if path.suffix.lower() not in (".txt", ".csv"):
        return None
    line = _first_line(path)
    fields = line.split("\t")
    if len(fields) == len(TSMC_NAMES) and fields[0].strip().isdigit():
        return "raw"
    header = {c.strip() for c in line.split(",")}
    for kind, names in (("ipcm", IPCM_NAMES), ("tsmc", TSMC_NAMES)):
        if header >= set(names):
            return kind
    return None


def _closest_kind(path: Path) -> str:
    header = {c.strip() for c in _first_line(path).split(",")}
    return "tsmc" if len(header & set(TSMC_NAMES)) > len(header & set(IPCM_NAMES)) else "ipcm"


def _read_tsmc_file(path: Path, kind: str, encoding: str | None) -> pd.DataFrame:
    """One check-in file as user, time (aware UTC), lat, lon, venue, category; file order kept."""
    if kind == "raw":
        names = {key: cols[0] for key, cols in TSMC_COLUMNS.items()}
        raw = read_table(path, {names[k]: t for k, t in _USED.items()}, names=TSMC_NAMES, sep="\t",
                         encoding=encoding or "latin-1")
    else:
        names = {key: cols[0 if kind == "tsmc" else 1] for key, cols in TSMC_COLUMNS.items()}
        raw = read_table(path, {names[k]: t for k, t in _USED.items()}, encoding=encoding)
    raw = raw.rename(columns={v: k for k, v in names.items()})
    times = pd.to_datetime(raw["utc"], format=UTC_FORMAT, utc=True, errors="coerce")
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"UTC time {raw['utc'].iloc[i]!r} in {path} row {i + 1} is not like "
                         f"'Tue Apr 03 18:00:09 +0000 2012' ({UTC_FORMAT})")
    return pd.DataFrame({"user": raw["user"], "time": times, "lat": raw["lat"], "lon": raw["lon"],
                         "venue": raw["venue"], "category": raw["category"]})


def read_foursquare_global(path: str | Path, timezone: str | None = None,
                           pois_file: str | Path | None = None) -> pd.DataFrame:
    """Foursquare global-scale check-ins as preprocessed by Liu et al. (PVLDB 2017).

    ``path`` is the folder holding ``*checkins*.txt`` and ``*poi_coos*.txt``, or the check-ins
    file (``user poi unix_time``, tab-separated, no header) with ``pois_file`` = the POI
    coordinates (``poi lat lon``; default: the ``*poi_coos*.txt`` beside it). Times are unix
    seconds, so ``timezone`` is not needed, returned as stated: they are 8 h early (3,186 TSMC
    NYC check-ins come again 8 h earlier to the second, none at another offset; in New York the
    hours read as stated are 0.30 in total variation from TSMC NYC's true local hours, 0.14 moved
    8 h), which ``prepare`` corrects by default (``io.TIME_SHIFTS``, docs/data.md). A check-in
    at a POI without coordinates is an InputError.
    """
    return _vldb17.read_checkins(path, timezone, pois_file)


MAT_COLUMNS = {"tid": "int64", "label": "str", "lat": "float64", "lon": "float64", "day": "str",
               "hour": "int64", "poi": "str", "category": "str"}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: the Monday of the first nominal week
MAT_EPOCH = pd.Timestamp("2012-01-02")


def read_foursquare_mat(path: str | Path, timezone: str | None = "UTC") -> pd.DataFrame:
    """Foursquare NYC multiple-aspect trajectories (``tid,label,lat,lon,day,hour,poi,category,...``).

    The file has no dates, only a weekday name and an hour per check-in, and one trajectory
    (``tid``) per user-week. Each trajectory is placed on its own **nominal** week: the k-th
    trajectory of a user (tids in ascending order, k from 0) falls in the week starting Monday
    2012-01-02 + k weeks, at its weekday and hour. These times are invented, naive times in
    ``timezone`` (default UTC; None also means UTC); only weekday, hour and trajectory order are real.
    user = ``label``, venue = ``poi``, category = ``category``.
    """
    path = Path(path)
    raw = read_table(path, MAT_COLUMNS)
    day = pd.Index(WEEKDAYS).get_indexer(raw["day"].str.strip())
    bad = day < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"day {raw['day'].iloc[i]!r} in {path} row {i + 1} is not a weekday name "
                         f"({', '.join(WEEKDAYS)})")
    bad = ((raw["hour"] < 0) | (raw["hour"] > 23)).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"hour {raw['hour'].iloc[i]} in {path} row {i + 1} is not in 0-23")
    week = raw.groupby("label", sort=False)["tid"].rank(method="dense").to_numpy(np.int64) - 1
    hours = (week * 7 + day) * 24 + raw["hour"].to_numpy(np.int64)
    frame = pd.DataFrame({
        "user": raw["label"],
        "time": MAT_EPOCH + pd.to_timedelta(hours, unit="h"),
        "lat": raw["lat"], "lon": raw["lon"], "venue": raw["poi"], "category": raw["category"],
    })
    return validate_points(frame, str(path), timezone or "UTC")


__all__ = ["read_foursquare", "read_foursquare_global", "read_foursquare_mat"]
