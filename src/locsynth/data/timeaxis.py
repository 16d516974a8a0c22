"""Time instants and time slots (paper 001 §2.1: the sets T and L).

Time is cut into *instants* of fixed length by rounding down, counted in local wall-clock time of
one timezone, optionally only inside a daily window (PF keeps 9:00-19:00). Instant ``t`` is
``day * instants_per_day + k``: day ``day`` after the origin's local date, the ``k``-th instant
of that day's window. A *slot* is a set of instants; here slots cycle over the day (e.g. 2-hour
slots, paper 001 §2.1), so every instant of the day carries a slot index.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from ..core.errors import InputError

DAY = timedelta(days=1)


def parse_duration(text: str | timedelta, what: str) -> timedelta:
    """'20min', '1h', '2h', '30s', '1d' -> timedelta; names ``what`` in the error."""
    if isinstance(text, timedelta):
        value = text
    else:
        try:
            value = pd.Timedelta(str(text).strip()).to_pytimedelta()
        except ValueError:
            raise InputError(f"{what} {text!r} is not a duration; expected e.g. '20min', '1h', '2h'") from None
    if value <= timedelta(0):
        raise InputError(f"{what} must be positive, got {text!r}")
    return value


def parse_clock(text: str | time, what: str) -> timedelta:
    """'09:00' -> time since midnight; '24:00' is allowed as the end of a day."""
    if isinstance(text, time):
        return timedelta(hours=text.hour, minutes=text.minute, seconds=text.second)
    parts = str(text).strip().split(":")
    try:
        h, m = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        raise InputError(f"{what} {text!r} is not a time of day; expected HH:MM") from None
    if not (0 <= h <= 24 and 0 <= m < 60) or (h == 24 and m):
        raise InputError(f"{what} {text!r} is not a time of day; expected HH:MM between 00:00 and 24:00")
    return timedelta(hours=h, minutes=m)


def check_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(f"unknown timezone {name!r}; expected an IANA name such as 'Asia/Tokyo' or 'UTC'") from None


#: ``--timezone auto``: every point on the clock of the time zone at its coordinates
AUTO = "auto"


def zones_at(lat, lon, digits: int = 4) -> np.ndarray:
    """The IANA time zone at each point (timezonefinder's offline boundaries, one look-up per point
    rounded to ``digits`` decimals, about 11 m); 'UTC' for a point in no zone (at sea)."""
    from timezonefinder import TimezoneFinder

    key = pd.DataFrame({"lat": np.round(np.asarray(lat, np.float64), digits),
                        "lon": np.round(np.asarray(lon, np.float64), digits)})
    codes, uniq = pd.factorize(pd.MultiIndex.from_frame(key))
    finder = TimezoneFinder()
    names = np.array([finder.timezone_at(lat=a, lng=b) or "UTC" for a, b in uniq], dtype=object)
    return names[codes]


def single_zone(lat, lon, choices: str = "") -> str:
    """The one time zone the points lie in (:func:`zones_at`); an InputError naming the zones and
    their shares when they are several (``choices``: what else the caller may give)."""
    zones = pd.Series(zones_at(lat, lon)).value_counts()
    if len(zones) > 1:
        shares = ", ".join(f"{z} {n / zones.sum():.0%}" for z, n in zones.head(4).items())
        raise InputError(f"the points lie in {len(zones)} time zones ({shares}): give `timezone`, the zone whose "
                         f"days and hours to use{choices}")
    return str(zones.index[0])


def local_clock(times: pd.Series, lat, lon, digits: int = 4) -> tuple[pd.Series, dict[str, int]]:
    """Each absolute time on the wall clock of the time zone at its point (timezonefinder's offline
    boundaries, one look-up per point rounded to ``digits`` decimals, about 11 m), returned as if
    that clock were UTC: a 09:00 check-in in New York and one in Los Angeles both become 09:00, so
    multi-city data share local slots. Also returns the points counted per zone; a point in no
    zone (at sea) keeps UTC, counted as 'UTC'."""
    zone = zones_at(lat, lon, digits)
    out = pd.Series(pd.NaT, index=times.index, dtype="datetime64[ns, UTC]")
    counts = {}
    for name in pd.unique(zone):
        rows = zone == name
        local = times[rows].dt.tz_convert(name).dt.tz_localize(None)
        out[rows] = local.dt.tz_localize("UTC", ambiguous="NaT", nonexistent="shift_forward")
        counts[str(name)] = int(rows.sum())
    return out, dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def hour_profile(times: pd.Series | pd.DatetimeIndex, timezone: str = "UTC") -> np.ndarray:
    """Share of the aware ``times`` in each hour of the day 0-23 on ``timezone``'s clock, ndarray
    of shape (24,) (zeros when there are none). A shifted clock shows at a glance: check-ins peak
    in the evening and bottom out before dawn in every city (docs/data.md)."""
    hours = pd.DatetimeIndex(times).tz_convert(check_timezone(timezone).key).hour.to_numpy()
    return _shares(np.bincount(hours, minlength=24).astype(np.float64))


def describe_hours(shares: np.ndarray) -> str:
    """A 24-hour profile (:func:`hour_profile`, NaN for hours no instant covers) as one line: a
    sparkline from hour 0 to 23, the peak and the trough."""
    shares = np.asarray(shares, np.float64)
    seen = np.isfinite(shares)
    if not seen.any() or np.nansum(shares) == 0:
        return "no events"
    top = np.nanmax(shares)
    line = "".join(" " if not ok else SPARKS[min(int(v / top * len(SPARKS)), len(SPARKS) - 1)]
                   for v, ok in zip(shares, seen))
    peak, trough = int(np.nanargmax(shares)), int(np.nanargmin(shares))
    return (f"|{line}| 0-23 h, peak {peak:02d} h ({shares[peak]:.1%}), "
            f"trough {trough:02d} h ({shares[trough]:.1%})")


#: eighths of a block, for :func:`describe_hours`
SPARKS = "▁▂▃▄▅▆▇█"


def _shares(counts: np.ndarray) -> np.ndarray:
    total = np.nansum(counts)
    return counts / total if total > 0 else np.where(np.isfinite(counts), 0.0, np.nan)


@dataclass(frozen=True, eq=False)
class TimeAxis:
    """Instants and cyclic daily slots.

    Attributes
    ----------
    start_date : datetime.date
        Local date of day 0.
    timezone : str
        IANA timezone in which days, windows and rounding are counted.
    instant : timedelta
        Length of one instant (it must divide the window).
    window_start, window_end : timedelta
        Daily window as offsets from local midnight (00:00-24:00 when there is none).
    slot_of : ndarray of shape (instants_per_day,)
        Slot index of each instant of the day (paper 001: omega(t)).
    slot_length : timedelta
        Length of a slot (a multiple of the instant).
    """

    start_date: date
    timezone: str
    instant: timedelta
    window_start: timedelta
    window_end: timedelta
    slot_length: timedelta

    @classmethod
    def build(cls, start_date: date, timezone: str = "UTC", instant: str | timedelta = "1h",
              slot: str | timedelta | None = None, window: tuple[str, str] | None = None) -> "TimeAxis":
        """Validate and build an axis; ``slot`` defaults to one instant per slot."""
        check_timezone(timezone)
        inst = parse_duration(instant, "instant length")
        ws, we = (timedelta(0), DAY) if window is None else (parse_clock(window[0], "window start"),
                                                              parse_clock(window[1], "window end"))
        if we <= ws:
            raise InputError(f"daily window {window} is empty; the end must come after the start")
        if (we - ws) % inst:
            raise InputError(f"instant length {inst} does not divide the daily window {window or '00:00-24:00'}")
        sl = inst if slot is None else parse_duration(slot, "slot length")
        if sl % inst:
            raise InputError(f"slot length {sl} is not a multiple of the instant length {inst}")
        return cls(start_date, timezone, inst, ws, we, sl)

    # -- derived quantities -------------------------------------------------------------------
    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def instants_per_day(self) -> int:
        return (self.window_end - self.window_start) // self.instant

    @property
    def slot_of(self) -> np.ndarray:
        k = np.arange(self.instants_per_day)
        return (k // (self.slot_length // self.instant)).astype(np.int32)

    @property
    def n_slots(self) -> int:
        return int(self.slot_of[-1]) + 1

    @property
    def windowed(self) -> bool:
        return (self.window_start, self.window_end) != (timedelta(0), DAY)

    @property
    def origin(self) -> datetime:
        """Start of instant 0 as an aware UTC datetime."""
        return self.start_of(np.zeros(1, np.int64))[0].to_pydatetime()

    def slot(self, t: np.ndarray) -> np.ndarray:
        """Slot index of instants ``t`` (omega in paper 001 §3.5)."""
        return self.slot_of[np.asarray(t) % self.instants_per_day]

    def day(self, t: np.ndarray) -> np.ndarray:
        return np.asarray(t) // self.instants_per_day

    def consecutive(self, t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
        """True where ``t2`` is the instant right after ``t1`` in time (not across a window gap)."""
        t1, t2 = np.asarray(t1), np.asarray(t2)
        nxt = t2 == t1 + 1
        if self.windowed:
            nxt &= self.day(t1) == self.day(t2)
        return nxt

    # -- conversion ---------------------------------------------------------------------------
    def instants(self, times: pd.Series | pd.DatetimeIndex) -> np.ndarray:
        """Instant index of aware timestamps, rounding down; -1 outside the daily window or
        before the start date."""
        local = pd.DatetimeIndex(times).tz_convert(self.timezone)
        midnight = local.normalize()
        days = ((midnight.tz_localize(None) - pd.Timestamp(self.start_date)) // pd.Timedelta(days=1)).to_numpy()
        offset = (local.tz_localize(None) - midnight.tz_localize(None)).to_numpy() - np.timedelta64(self.window_start)
        k = offset // np.timedelta64(self.instant)
        ok = (offset >= np.timedelta64(0, "ns")) & (k < self.instants_per_day) & (days >= 0)
        return np.where(ok, days.astype(np.int64) * self.instants_per_day + k.astype(np.int64), -1)

    def hour_profile(self, t: np.ndarray) -> np.ndarray:
        """Share of instants ``t`` in each wall-clock hour 0-23 of the axis's clock, ndarray of
        shape (24,); an instant spreads evenly over the hours it spans, and an hour no instant
        covers (outside the daily window) is NaN. With ``--timezone auto`` (axis in UTC, each point
        on its own zone's clock) these are local hours."""
        per_instant = np.bincount(np.asarray(t, np.int64) % self.instants_per_day,
                                  minlength=self.instants_per_day).astype(np.float64)
        length = self.instant.total_seconds()
        start = self.window_start.total_seconds() + np.arange(self.instants_per_day) * length
        hour = np.arange(24) * 3600.0
        overlap = np.clip(np.minimum(start[:, None] + length, hour + 3600) - np.maximum(start[:, None], hour), 0, None)
        counts = per_instant @ (overlap / length)
        return _shares(np.where(overlap.sum(axis=0) > 0, counts, np.nan))

    def start_of(self, t: np.ndarray) -> pd.DatetimeIndex:
        """Aware UTC start of each instant (wall-clock local time, resolved with the timezone)."""
        t = np.asarray(t, np.int64)
        day, k = np.divmod(t, self.instants_per_day)
        local = (pd.Timestamp(self.start_date) + pd.to_timedelta(day, unit="D")
                 + pd.Timedelta(self.window_start) + pd.to_timedelta(k * (self.instant // timedelta(seconds=1)), unit="s"))
        return pd.DatetimeIndex(local).tz_localize(self.timezone, ambiguous="NaT",
                                                   nonexistent="shift_forward").tz_convert("UTC")

    # -- persistence --------------------------------------------------------------------------
    def meta(self) -> dict:
        return {
            "start_date": self.start_date.isoformat(),
            "timezone": self.timezone,
            "instant_seconds": self.instant // timedelta(seconds=1),
            "window": [self.window_start // timedelta(seconds=1), self.window_end // timedelta(seconds=1)],
            "slot_seconds": self.slot_length // timedelta(seconds=1),
            "instants_per_day": self.instants_per_day,
            "slots": self.n_slots,
            "origin": self.origin.isoformat(),
        }

    @classmethod
    def from_meta(cls, meta: dict) -> "TimeAxis":
        try:
            return cls(date.fromisoformat(meta["start_date"]), meta["timezone"],
                       timedelta(seconds=meta["instant_seconds"]),
                       timedelta(seconds=meta["window"][0]), timedelta(seconds=meta["window"][1]),
                       timedelta(seconds=meta["slot_seconds"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"meta.json has a damaged time axis ({exc!r})") from None

    def describe(self) -> str:
        w = ""
        if self.windowed:
            w = f", {_clock(self.window_start)}-{_clock(self.window_end)}"
        return (f"{self.instants_per_day} instants of {_dur(self.instant)} per day{w} ({self.timezone}), "
                f"{self.n_slots} slots of {_dur(self.slot_length)}")


def _clock(d: timedelta) -> str:
    m = d // timedelta(minutes=1)
    return f"{m // 60:02d}:{m % 60:02d}"


def _dur(d: timedelta) -> str:
    s = int(d.total_seconds())
    if s % 3600 == 0:
        return f"{s // 3600} h"
    if s % 60 == 0:
        return f"{s // 60} min"
    return f"{s} s"
