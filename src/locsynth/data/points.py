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


#: points whose median latitude is south of this lie in Antarctica, where few traces are recorded:
#: with latitude and longitude swapped, New York's (40.7, -74.0) lands there (-74.0, 40.7)
ANTARCTIC = -60.0


def check_not_swapped(lat, lon, names: str, keep: str) -> None:
    """An InputError when the points lie in Antarctica (median latitude south of :data:`ANTARCTIC`)
    and their median point, latitude and longitude swapped, lies in a time zone on land elsewhere:
    ``names`` are the columns read, ``keep`` says how to read them as they are. A stated choice:
    swapped coordinates that land in range pass every other check (the clock of New York's points
    swapped is Antarctica/Syowa's)."""
    lat, lon = np.asarray(lat, np.float64), np.asarray(lon, np.float64)
    if lat.size == 0 or np.median(lat) >= ANTARCTIC or np.abs(lon).max() > 90:
        return
    from .timeaxis import zones_at

    y, x = float(np.median(lat)), float(np.median(lon))
    here, there = (str(zones_at([a], [b])[0]) for a, b in ((y, x), (x, y)))
    if there.startswith(("Antarctica/", "Etc/")) or there == "UTC":
        return
    raise InputError(f"the points lie in Antarctica (median point {y:.4f}, {x:.4f}, time zone {here}); with latitude "
                     f"and longitude swapped they lie in {there}: are {names} swapped? If not, {keep}")


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
    if pd.api.types.infer_dtype(text, skipna=True) in ("datetime", "datetime64"):
        return _datetime_objects(text, where)
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


def _datetime_objects(values: pd.Series, where) -> pd.Series:
    """A column of datetime objects (pandas Timestamps, Python datetimes): aware ones of several
    zones become UTC, naive ones stay naive; the two mixed are an InputError naming the first naive."""
    naive = np.array([v is not None and v.tzinfo is None for v in values])
    if naive.any() and not naive[values.notna().to_numpy()].all():
        i = _first_bad(naive)
        raise InputError(f"time {values.iloc[i]!s} {where(i)} has no time zone while others have one; give every "
                         "time a zone")
    return pd.to_datetime(values, utc=not naive.any(), errors="coerce")


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
    times = times.dt.tz_convert("UTC").reset_index(drop=True)
    check_years(times, lambda i: f"in {source} row {i + 1}")
    return times.astype("datetime64[ns, UTC]")


#: the years any time may fall in: farther off is a slip (1700 for 2017), and a span of more than
#: 292 years is beyond what a time axis of nanoseconds holds
TIME_YEARS = (1900, 2100)
#: the years numeric (unix) times may fall in: location traces were recorded after 1990 (GPS, phones)
#: and before 2100. Outside, the numbers are in another unit (milliseconds read as seconds land
#: in year 40,000; seconds read as milliseconds on a day of January 1970, every fix within hours of
#: the others) or are not unix times
UNIX_YEARS = (1990, 2100)
#: a unit of unix times -> (its ticks per second, its name)
UNIX_UNITS = {"s": (1, "seconds"), "ms": (1_000, "milliseconds"), "us": (1_000_000, "microseconds"),
              "ns": (1_000_000_000, "nanoseconds")}
_SECONDS_PER_YEAR = 365.2425 * 86400


def _unix_year(seconds: float) -> float:
    return 1970 + seconds / _SECONDS_PER_YEAR


def _unix_date(seconds: float) -> str:
    year = _unix_year(seconds)
    if 1700 < year < 2200:
        return f"{pd.Timestamp(seconds, unit='s'):%Y-%m-%d %H:%M}"
    return f"year {year:,.0f}"


def check_unix_range(numbers, unit: str, where, fix: str = "give `time_unit` {unit!r}") -> None:
    """An InputError when numeric times read as unix times in ``unit`` ('s' or 'ms') fall outside
    :data:`UNIX_YEARS`: it names the first such value (``where(i)``: where position ``i`` is, as the
    caller says it), the date it became, the unit the times look like (the one that puts their
    median inside the years) and how to give it (``fix``, formatted with that ``unit``). A span
    that collapses to a few instants is such a case: seconds read as milliseconds all fall in
    January 1970. Values that are not finite numbers are left to the caller."""
    values = pd.to_numeric(pd.Series(np.asarray(numbers).ravel()), errors="coerce").to_numpy(np.float64)
    per, _ = UNIX_UNITS[unit]
    seconds = values / per
    low, high = ((y - 1970) * _SECONDS_PER_YEAR for y in UNIX_YEARS)
    bad = np.isfinite(seconds) & ((seconds < low) | (seconds > high))
    if not bad.any():
        return
    i = _first_bad(bad)
    median = float(np.nanmedian(values[np.isfinite(values)]))
    likely = [u for u, (f, _) in UNIX_UNITS.items() if low <= median / f <= high]
    if likely and likely[0] == unit:
        hint = "most times look right: this one is wrong or in another unit"
    elif not likely:
        hint = "they are not unix times in any unit (s, ms, us, ns): convert them to dates first"
    elif likely[0] in ("s", "ms"):
        hint = f"they look like {UNIX_UNITS[likely[0]][1]}: " + fix.format(unit=likely[0])
    else:
        hint = (f"they look like {UNIX_UNITS[likely[0]][1]}: divide them by {UNIX_UNITS[likely[0]][0] // 1000:,} "
                "and " + fix.format(unit="ms"))
    value = values[i]
    shown = f"{value:.0f}" if value == np.round(value) else f"{value:g}"
    raise InputError(f"time {shown} {where(i)} read as unix {UNIX_UNITS[unit][1]} is {_unix_date(seconds[i])}, "
                     f"outside {UNIX_YEARS[0]}-{UNIX_YEARS[1]}; {hint}")


def check_years(times: pd.Series, where) -> None:
    """An InputError naming the first of the aware ``times`` outside :data:`TIME_YEARS` (``where(i)``:
    where position ``i`` is, as the caller says it)."""
    low, high = (pd.Timestamp(f"{y}-01-01", tz="UTC") for y in TIME_YEARS)
    values = times.to_numpy()
    bad = ((times < low) | (times >= high)).to_numpy() if len(times) else np.zeros(0, bool)
    if bad.any():
        i = _first_bad(bad)
        raise InputError(f"time {pd.Timestamp(values[i]).isoformat()} {where(i)} is in year "
                         f"{pd.Timestamp(values[i]).year}: locsynth reads times from {TIME_YEARS[0]} to "
                         f"{TIME_YEARS[1]} (a year this far off is a slip in the data)")


def unix_seconds_utc(values: pd.Series | np.ndarray, source: str = "the input",
                     fix: str = "this format's times are unix seconds") -> pd.Series:
    """Unix seconds (int or float) as aware UTC timestamps; non-numbers become NaT; times outside
    :data:`UNIX_YEARS` are an InputError (:func:`check_unix_range`, rows of ``source``)."""
    secs = pd.to_numeric(pd.Series(values), errors="coerce")
    check_unix_range(secs, "s", lambda i: f"in {source} row {i + 1}", fix)
    return pd.to_datetime(secs, unit="s", utc=True, errors="coerce")


def shift_times(points: pd.DataFrame, hours: float) -> pd.DataFrame:
    """``points`` with ``hours`` added to every time (a clock correction, e.g. the VLDB'17 files'
    +8 h: :data:`locsynth.data.io.TIME_SHIFTS`); ``hours`` as :func:`locsynth.core.validation.check_time_shift`."""
    hours = check_time_shift(hours)
    if hours == 0:
        return points
    return points.assign(time=points["time"] + pd.to_timedelta(hours, unit="h"))
