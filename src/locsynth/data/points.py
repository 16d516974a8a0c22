"""The validated points table every reader returns.

Columns: ``user`` (original id), ``time`` (datetime64[ns, UTC]), ``lat``, ``lon`` (degrees), and
optionally ``venue`` (venue id), ``category`` (venue category) and ``split`` ('train' or 'test'
when the source comes split). Rows are numbered from 1 in error messages, counting data rows
(not headers) of the file named.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import InputError
from .timeaxis import check_timezone
from ..core.validation import check_time_shift

REQUIRED = ("user", "time", "lat", "lon")
OPTIONAL = ("venue", "category", "split")


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def show(value) -> str:
    """A value as an error message shows it: strings quoted, numbers plain."""
    return repr(value) if isinstance(value, str) else str(value)


def validate_points(frame: pd.DataFrame, source: str, timezone: str | None = None) -> pd.DataFrame:
    """Check and normalise a points table read from ``source``.

    Parameters
    ----------
    frame : DataFrame
        Rows in file order (row ``i`` of the frame is data row ``i + 1`` of ``source``).
    source : str
        File name used in error messages.
    timezone : str, optional
        Timezone of naive timestamps. Without it a naive timestamp is an error, since the
        instant it means is unknown.

    Returns
    -------
    DataFrame with the columns of this module, times in UTC, a fresh RangeIndex.
    """
    if len(frame) == 0:
        raise InputError(f"{source} has no data rows")
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(f"{source} is missing column(s) {', '.join(missing)}; required: "
                         f"{', '.join(REQUIRED)}; found: {', '.join(map(str, frame.columns))}")
    frame = frame.reset_index(drop=True)
    out = pd.DataFrame({"user": frame["user"].to_numpy()})
    out["time"] = _validate_time(frame["time"], source, timezone)
    for col, lo, hi, label in (("lat", -90.0, 90.0, "latitude"), ("lon", -180.0, 180.0, "longitude")):
        raw = frame[col]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i = _first_bad(bad)
            raise InputError(f"{label} {show(raw.iloc[i])} is not a finite number in {source} row {i + 1}")
        bad = (values < lo) | (values > hi)
        if bad.any():
            i = _first_bad(bad)
            raise InputError(f"{label} {values[i]:g} out of range [{lo:g}, {hi:g}] in {source} row {i + 1}")
        out[col] = values
    if out["user"].isna().any():
        i = _first_bad(out["user"].isna().to_numpy())
        raise InputError(f"missing user id in {source} row {i + 1}")
    for col in OPTIONAL:
        if col in frame.columns:
            out[col] = frame[col].to_numpy()
    if "split" in out and not out["split"].isin(["train", "test"]).all():
        i = _first_bad(~out["split"].isin(["train", "test"]).to_numpy())
        raise InputError(f"split {show(out['split'].iloc[i])} in {source} row {i + 1}; expected 'train' or 'test'")
    return out


#: time formats no guess of pandas finds: Foursquare's and Twitter's (TSMC's ``UTC_time``)
KNOWN_TIME_FORMATS = ("%a %b %d %H:%M:%S %z %Y",)
#: an offset in a date-time string: Z, +0900, -07:00, followed by a space or the end
_OFFSET = r"(?:Z|[+-]\d\d:?\d\d)(?:\s|$)"


def parse_datetimes(text: pd.Series, where) -> pd.Series:
    """Date-time strings as pandas reads them: ISO 8601, the format pandas guesses from the first
    value, :data:`KNOWN_TIME_FORMATS`, then any format (dateutil's, value by value), the first that
    reads them all; NaT where the best of them reads a value not. Several offsets become UTC; times
    with offsets beside times without are an InputError naming the first without (``where(i)``:
    where position ``i`` is, as the caller's messages say it)."""
    from pandas.tseries.api import guess_datetime_format

    text = text.astype(object).where(text.notna(), None)
    first = next((v for v in text if v is not None), "")
    best = None
    for fmt in dict.fromkeys(f for f in ("ISO8601", guess_datetime_format(str(first)), *KNOWN_TIME_FORMATS,
                                         "mixed") if f):
        try:
            times = pd.to_datetime(text, format=fmt, errors="coerce")
        except (ValueError, TypeError):      # several offsets, or offsets beside naive times
            naive = ~text.astype(str).str.contains(_OFFSET, regex=True)
            if naive.any():
                i = _first_bad(naive.to_numpy())
                raise InputError(f"timestamp {show(text.iloc[i])} {where(i)} has no timezone while others have one; "
                                 "give every timestamp an offset") from None
            times = pd.to_datetime(text, format=fmt, errors="coerce", utc=True)
        if times.notna().all():
            return times
        if best is None or times.notna().sum() > best.notna().sum():
            best = times
    return best


def _validate_time(raw: pd.Series, source: str, timezone: str | None) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(raw.dtype):
        times = raw
    else:
        times = parse_datetimes(raw, lambda i: f"in {source} row {i + 1}")
    bad = times.isna().to_numpy()
    if bad.any():
        i = _first_bad(bad)
        raise InputError(f"timestamp {show(raw.iloc[i])} is not a valid date and time in {source} row {i + 1}")
    if getattr(times.dt, "tz", None) is None:
        if timezone is None:
            raise InputError(f"naive timestamp {str(raw.iloc[0])!r} in {source} row 1 has no timezone; "
                             "give `timezone` (e.g. UTC)")
        check_timezone(timezone)
        times = times.dt.tz_localize(timezone, ambiguous="NaT", nonexistent="shift_forward")
        bad = times.isna().to_numpy()
        if bad.any():
            i = _first_bad(bad)
            raise InputError(f"timestamp {show(raw.iloc[i])} in {source} row {i + 1} is ambiguous in {timezone} "
                             "(a daylight-saving change)")
    return times.dt.tz_convert("UTC").astype("datetime64[ns, UTC]").reset_index(drop=True)


def unix_seconds_utc(values: pd.Series | np.ndarray) -> pd.Series:
    """Unix seconds (int or float) as aware UTC timestamps; non-numbers become NaT."""
    secs = pd.to_numeric(pd.Series(values), errors="coerce")
    return pd.to_datetime(secs, unit="s", utc=True, errors="coerce")


def shift_times(points: pd.DataFrame, hours: float) -> pd.DataFrame:
    """``points`` with ``hours`` added to every time (a clock correction, e.g. the VLDB'17 files'
    +8 h: :data:`locsynth.data.io.TIME_SHIFTS`); ``hours`` as :func:`locsynth.core.validation.check_time_shift`."""
    hours = check_time_shift(hours)
    if hours == 0:
        return points
    return points.assign(time=points["time"] + pd.to_timedelta(hours, unit="h"))
