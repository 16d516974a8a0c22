"""Generic point tables: CSV (plain or compressed) and Parquet, one row per point.

Column names default to scikit-mobility's (``uid``, ``datetime``, ``lat``, ``lng``; ``lon`` is
found too); other names
are given with ``user_col``, ``time_col``, ``lat_col``, ``lon_col``, ``venue_col`` and ``category_col``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ...core.errors import InputError
from ..points import check_not_swapped, validate_points
from ._common import header_columns, read_table, require_file, unix_times

TIME_UNITS = (None, "s", "ms")
LAT_NAMES = ("lat", "latitude")
LON_NAMES = ("lng", "lon", "longitude")
_NUMBER = re.compile(r"\s*[-+]?\d+(\.\d*)?([eE][-+]?\d+)?\s*")
_HINT = ("; name other columns with user_col, time_col, lat_col, lon_col, venue_col, category_col "
         "(`user_col`, `time_col`, `lat_col`, `lon_col`, `venue_col`)")


def read_csv_points(path: str | Path, timezone: str | None = None, user_col: str = "uid",
                    time_col: str = "datetime", lat_col: str | None = None, lon_col: str | None = None,
                    venue_col: str | None = None, category_col: str | None = None,
                    time_unit: str | None = None, sep: str = ",") -> pd.DataFrame:
    """A CSV file with a header row, one point per row (``.gz``, ``.zip``, ... are decompressed).

    Parameters
    ----------
    path : str or Path
        The file.
    timezone : str, optional
        Timezone of naive date-time strings; required when the times have no offset.
    user_col, time_col, lat_col, lon_col, venue_col, category_col : str
        Column names (user ids, venue ids and categories are read as text). Without ``lat_col``
        the first of ``lat``, ``latitude`` in the file is used; without ``lon_col`` the first of
        ``lng``, ``lon``, ``longitude``.
    time_unit : {None, 's', 'ms'}
        None: the times are date-time strings (ISO 8601); 's'/'ms': numeric unix times.
    sep : str
        Field separator.
    """
    found = header_columns(path, sep)
    columns = _columns(user_col, time_col, lat_col, lon_col, venue_col, category_col, found)
    _check_time_unit(time_unit)
    kinds = {"user": "str", "time": "float64" if time_unit else "str", "lat": "float64", "lon": "float64",
             "venue": "str", "category": "str"}
    raw = read_table(path, {col: kinds[key] for key, col in columns.items()}, sep=sep, hint=_HINT)
    return _points(raw, columns, time_unit, str(path), timezone, named=lat_col is not None and lon_col is not None)


def read_parquet_points(path: str | Path, timezone: str | None = None, user_col: str = "uid",
                        time_col: str = "datetime", lat_col: str | None = None, lon_col: str | None = None,
                        venue_col: str | None = None, category_col: str | None = None,
                        time_unit: str | None = None) -> pd.DataFrame:
    """A Parquet file, one point per row; options as :func:`read_csv_points`.

    The time column may be a timestamp column (naive ones need ``timezone``), date-time strings,
    or numbers with ``time_unit`` 's' or 'ms'.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    _check_time_unit(time_unit)
    path = require_file(Path(path))
    try:
        found = pq.read_schema(path).names
        columns = _columns(user_col, time_col, lat_col, lon_col, venue_col, category_col, found)
        missing = [c for c in columns.values() if c not in found]
        if missing:
            raise InputError(f"{path} is missing column(s) {', '.join(missing)}; required: "
                             f"{', '.join(columns.values())}; found: {', '.join(found)}{_HINT}")
        raw = pd.read_parquet(path, columns=list(columns.values()))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path} is not a readable Parquet file: {exc}") from None
    if len(raw) == 0:
        raise InputError(f"{path} has no data rows")
    for key in ("venue", "category"):
        if key in columns:
            raw[columns[key]] = raw[columns[key]].astype("str")
    return _points(raw, columns, time_unit, str(path), timezone, named=lat_col is not None and lon_col is not None)


def _columns(user_col: str, time_col: str, lat_col: str | None, lon_col: str | None,
             venue_col: str | None, category_col: str | None, found: list[str]) -> dict[str, str]:
    """Points-table column -> source column; ``found`` are the file's columns. Two columns of a
    coordinate's names (``lat`` and ``latitude``) are an error unless one is named: which is right
    is not guessed."""
    for given, names, option in ((lat_col, LAT_NAMES, "lat_col"), (lon_col, LON_NAMES, "lon_col")):
        present = [c for c in names if c in found]
        if given is None and len(present) > 1:
            raise InputError(f"the file has {len(present)} columns for {names[-1]}, {' and '.join(map(repr, present))}: "
                             f"name the one to use with `{option}`")
    lat_col = lat_col or next((c for c in LAT_NAMES if c in found), LAT_NAMES[0])
    lon_col = lon_col or next((c for c in LON_NAMES if c in found), LON_NAMES[0])
    columns = {"user": user_col, "time": time_col, "lat": lat_col, "lon": lon_col,
               "venue": venue_col, "category": category_col}
    columns = {key: col for key, col in columns.items() if col is not None}
    if len(set(columns.values())) < len(columns):
        raise InputError(f"one column named for two roles: {columns}")
    return columns


def _check_time_unit(time_unit: str | None) -> None:
    if time_unit not in TIME_UNITS:
        raise InputError(f"time_unit {time_unit!r} is not one of None (date-time strings), 's' or 'ms' "
                         "(numeric unix times)")


def _points(raw: pd.DataFrame, columns: dict[str, str], time_unit: str | None, source: str,
            timezone: str | None, named: bool = False) -> pd.DataFrame:
    frame = pd.DataFrame({key: raw[col] for key, col in columns.items()})
    times = frame["time"]
    if time_unit is not None:
        frame["time"] = unix_times(times, source, columns["time"], time_unit)
    elif pd.api.types.is_numeric_dtype(times.dtype) or _looks_numeric(times):
        raise InputError(f"time column {columns['time']!r} of {source} holds numbers (row 1: {times.iloc[0]!r}); "
                         "give time_unit='s' or 'ms' (`time_unit`) for unix times")
    elif not pd.api.types.is_datetime64_any_dtype(times.dtype):
        frame["time"] = times.astype(object)  # date-time strings, parsed as ISO 8601 by validate_points
    points = validate_points(frame, source, timezone)
    if not named:
        check_not_swapped(points["lat"], points["lon"], f"columns {columns['lat']!r} and {columns['lon']!r} of {source}",
                          "name them with `lat_col` and `lon_col` to keep them as they are")
    return points


def _looks_numeric(values: pd.Series) -> bool:
    first = values.iloc[0]
    return isinstance(first, str) and _NUMBER.fullmatch(first) is not None


__all__ = ["read_csv_points", "read_parquet_points"]
