"""Helpers shared by the readers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ..points import check_unix_range, validate_points


def require_file(path: Path) -> Path:
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path} is a folder; this format reads one file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def read_csv_checked(path: str | Path, required: tuple[str, ...], **kwargs) -> pd.DataFrame:
    """Read a CSV; a missing file, no data rows or missing columns are one clear InputError."""
    path = require_file(Path(path))
    try:
        frame = pd.read_csv(path, **kwargs)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path} is not a readable CSV file: {exc}") from None
    if len(frame) == 0:
        raise InputError(f"{path} has no data rows")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(f"{path} is missing column(s) {', '.join(missing)}; required: {', '.join(required)}; "
                         f"found: {', '.join(map(str, frame.columns))}")
    return frame


# --- typed reading, shared by the readers of data/io/ -------------------------------------------------

_INTEGER = ("int64", "int32")
_NUMERIC = (*_INTEGER, "float64")


def read_table(path: str | Path, dtypes: dict[str, str], *, names: tuple[str, ...] | None = None,
               sep: str = ",", skiprows: int = 0, encoding: str | None = None,
               hint: str = "") -> pd.DataFrame:
    """Read the columns ``dtypes`` (name -> 'int64', 'float64' or 'str') of a delimited text file.

    ``names`` are the columns of a headerless file; without them the first line is the header.
    Compression is inferred from the file name (``.gz``, ...). A missing or empty file, missing
    columns, no data rows or a value that does not fit its column is an InputError naming the
    file (and the 1-based data row, column and value); ``hint`` is appended to a missing-column error.
    """
    path = require_file(Path(path))
    if path.stat().st_size == 0:
        raise InputError(f"{path} is empty")
    options = dict(sep=sep, skiprows=skiprows, encoding=encoding, engine="c")
    if names is None:
        columns = _header(path, options)
        missing = [c for c in dtypes if c not in columns]
        if missing:
            raise InputError(f"{path} is missing column(s) {', '.join(missing)}; required: "
                             f"{', '.join(dtypes)}; found: {', '.join(map(str, columns))}{hint}")
        options.update(header=0, usecols=list(dtypes))
    else:
        options.update(header=None, names=list(names), usecols=[c for c in names if c in dtypes])
    try:
        frame = pd.read_csv(path, dtype=dict(dtypes), **options)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not {encoding or 'utf-8'} text: {exc}") from None
    except (pd.errors.ParserError, ValueError, TypeError, OverflowError) as exc:
        raise _explain_read_error(path, dtypes, options, exc) from None
    if len(frame) == 0:
        raise InputError(f"{path} has no data rows")
    return frame


def header_columns(path: str | Path, sep: str = ",", encoding: str | None = None) -> list[str]:
    """Column names in the header line of a delimited text file."""
    return _header(require_file(Path(path)), dict(sep=sep, encoding=encoding, engine="c"))


def _header(path: Path, options: dict) -> list[str]:
    try:
        return [str(c).strip() for c in pd.read_csv(path, nrows=0, **options).columns]
    except pd.errors.EmptyDataError:
        raise InputError(f"{path} is empty") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not {options['encoding'] or 'utf-8'} text: {exc}") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise InputError(f"{path} is not a readable delimited text file: {exc}") from None


def _explain_read_error(path: Path, dtypes: dict[str, str], options: dict, exc: Exception) -> InputError:
    """The first value that does not fit its column, found by re-reading every column as text."""
    try:
        text = pd.read_csv(path, dtype=str, **options)
    except Exception:  # noqa: BLE001 - the file is unreadable as text too: report the first error
        return InputError(f"{path} is not a readable delimited text file: {exc}")
    for col, dtype in dtypes.items():
        if dtype not in _NUMERIC:
            continue
        raw = text[col]
        values = pd.to_numeric(raw, errors="coerce")
        bad = values.isna().to_numpy()
        if dtype in _INTEGER:
            bad = bad | (values.fillna(0) % 1 != 0).to_numpy()
        else:
            bad = bad & raw.notna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "an integer" if dtype in _INTEGER else "a number"
            if pd.isna(raw.iloc[i]):
                return InputError(f"missing {col} in {path} row {i + 1}")
            return InputError(f"{col} {raw.iloc[i]!r} is not {what} in {path} row {i + 1}")
    return InputError(f"{path} is not a readable delimited text file: {exc}")


def check_coordinates(lat: np.ndarray, lon: np.ndarray, source: str) -> None:
    """Raise InputError at the first latitude/longitude that is not finite or out of range."""
    for values, lo, hi, label in ((lat, -90.0, 90.0, "latitude"), (lon, -180.0, 180.0, "longitude")):
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{label} {float(values[i])!r} is not a finite number in {source} row {i + 1}")
        bad = (values < lo) | (values > hi)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{label} {values[i]:g} out of range [{lo:g}, {hi:g}] in {source} row {i + 1}")


def unix_times(values: pd.Series, source: str, column: str, unit: str = "s",
               fix: str = "give `time_unit` {unit!r}") -> pd.Series:
    """Numeric unix times (``unit`` 's' or 'ms') as aware UTC timestamps; a bad value, or times of
    implausible years (:func:`locsynth.data.points.check_unix_range`, ``fix`` saying how to give the
    unit they look like), is an InputError."""
    numbers = pd.to_numeric(values, errors="coerce")
    check_unix_range(numbers, unit, lambda i: f"in {source} row {i + 1}", fix)
    times = pd.to_datetime(numbers, unit=unit, utc=True, errors="coerce")
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = values.iloc[i]
        if pd.isna(value):
            raise InputError(f"missing {column} in {source} row {i + 1}")
        value = value.item() if isinstance(value, np.generic) else value
        raise InputError(f"{column} {value!r} is not a unix time in {unit} in {source} row {i + 1}")
    return times


def file_and_row(lengths: list[int], i: int) -> tuple[int, int]:
    """(file number, 1-based row in that file) of row ``i`` of the concatenation of files of ``lengths``."""
    ends = np.cumsum(lengths)
    k = int(np.searchsorted(ends, i, side="right"))
    return k, i - int(ends[k] - lengths[k]) + 1


def validate_files(frame: pd.DataFrame, sources: list[str], lengths: list[int],
                   timezone: str | None) -> pd.DataFrame:
    """:func:`validate_points` of the concatenated rows of several files (``lengths`` rows each).

    The checks are row by row, so one call on the whole frame passes exactly when every file
    passes; when it fails, the files are validated one by one so the error names file and row.
    """
    if len(sources) == 1:
        return validate_points(frame, sources[0], timezone)
    try:
        return validate_points(frame, "the input files", timezone)
    except InputError:
        start = 0
        for source, n in zip(sources, lengths):
            validate_points(frame.iloc[start:start + n], source, timezone)
            start += n
        raise


def find_one(folder: Path, pattern: str, what: str) -> Path:
    """The single file of ``folder`` matching ``pattern``."""
    found = sorted(p for p in folder.glob(pattern) if p.is_file())
    if len(found) != 1:
        which = "no" if not found else f"{len(found)}"
        raise InputError(f"{folder} has {which} {what} file(s) matching {pattern!r}; expected exactly one"
                         + (f": {', '.join(p.name for p in found)}" if found else ""))
    return found[0]
