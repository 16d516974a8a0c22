"""One differentially private model of when trips happen and how long they take, for every trip
synthesizer (NGRAM, PrivTrace, AdaTrace, DPT, and DPTrip beside its own hours; LDPTrace's users
report the same histograms themselves: synth/ldptrace/times.py).

The field's trip synthesizers model where a trip goes, not when (AdaTrace, PrivTrace, LDPTrace
and DPT synthesize sequences of cells; paper 004 models the hour a trip starts). Without a time
every surface would have to invent one; this model gives each synthetic trip a start date and
hour and its steps durations, from four histograms of the training traces, each trace counting at
most 1 in each:

1. **Dates**: the day of the period each trace's first point falls on (on the set's clock), one
   bin a day the set's public calendar lets a trip start on (``info['calendar']``: the cabs'
   weekdays other than US federal holidays, data/trips.py; every day without one). A date's trips
   are the data's: a holiday, a quiet day, the period's last half day come out as they are.
2. **Hours by day kind**: the hour of that first point, in one row for the period's weekdays and
   one for its weekends (a kind no day of the calendar's period has gets no row). Choice: the date
   carries the week's rhythm (and its holidays), the hour the day's; the day kind lets a Sunday's
   hours differ from a Monday's without dividing the hours' counts by seven.
3. **Speeds by path length**: each trace's speed, the length of its path (between consecutive
   points' locations) over its duration, in 20 bins of km/h that span the set's public bounds
   (:func:`speed_edges`: from its mode's slowest speed to its speed bound, data/modes.py; the cabs'
   :data:`SPEED_EDGES` for the taxi's 1-150 km/h; faster ones clipped into the last bin, slower
   into the first), in the row of its path's length (:data:`LENGTH_EDGES`, public); a trace that
   goes nowhere, or of one point, adds nothing. Choice: the speed given the length because real
   trips are faster the longer they go (highways); a pace, not a duration, because a synthetic
   trip's path is the synthesizer's, not a real one's: at a real trip's speed its steps take as
   long as the data say such distances take, and no step is faster than a real trip could go.
4. **Durations**: each trace's duration, first point to last, in :data:`DURATION_EDGES` (public,
   log-spaced minutes). It bounds a synthetic trip's duration (the cap below): NGRAM's and
   PrivTrace's walks wander further than any real trip, and at real speeds took hours.

The model's structure (its bins) is a function of the period, the calendar, the bounds and the
public edges only: one trip more on a day inside the period changes no bin. The period runs from
the time axis's first day to the last day a training trip starts: the data's, as the time axis's
first day already is (prepare notes it), and the ledger names it as not covered, with what it
reveals (the number of the model's dates, on the card, tells that day).

Privacy: the four histograms pass through Laplace noise (OpenDP's, privacy/laplace.py) in one
vector of L1 sensitivity 4 (one trace adds 1 to each, a trace of one point none to the speeds),
at the epsilon the method gives the model (``time_share`` of its budget): in effect a quarter of it
to each, so dates and hours split the starts' half evenly. Then post-processing only:

- counts under :data:`KEEP_ABOVE` noise scales (4 / epsilon) become 0: an empty date or hour keeps
  noise with probability e^-2 / 2 (7 %), and its expected kept mass is (2 + 1) e^-2 / 2 = 0.20
  scales (privacy/noise.py, ``kept_laplace``): at the default 5 % of epsilon 1, 16 trips a day no
  training trip starts on, whatever the set's size (0.12 % of the 200 cabs' trips for their 7
  empty days of the 23, if the calendar did not exclude them);
- hours fall back toward a uniform guess (every hour of the window, every day of the period's
  calendar alike) as far as noise fills them, and the dates toward the day-kind model (each day of
  a kind its share of that kind's hours, the model before dates were), each weighted by the
  estimated share of noise in it (its expected kept mass against what it kept, privacy/noise.py),
  so that a noisy bin that survives the threshold alone does not take the starts of a small set;
- the duration cap is the upper edge of the run of kept duration bins that holds the most kept
  mass and the longest bins joined to it (a kept bin beyond an empty one is noise's), or of the bin
  where the kept mass reaches 99.5 % if lower (a noisy bin joined to the run's end holds little of
  a large set's mass: one NGRAM fit in three on the 200 cabs kept one, and 4.5 % of its trips took
  over an hour); none when nothing was kept.

Sampling: a date from the dates, an hour from its day kind's row (a row that kept nothing: the
rows' sum), an instant of that hour uniformly (so trips start on no particular minute); where a
method gives each trip's hour (DPTrip, DPT's), the date from that hour's column. A speed uniformly
within a bin of the speeds of the synthetic trip's own path length (the sum of the rows where that
row kept nothing), drawn among the speeds at which its path takes no longer than the cap (at least
its path over the cap where no kept speed is that fast; never above the bound; a walk of more
points than the cap holds instants keeps its first ones, :func:`within_cap`); each step then
takes its length at that speed, rounded to instants, at least one instant and at least what the
set's public speed bound asks for its length (no step of a synthetic trip is faster than the bound;
a model saved before bounds existed has the cabs'). A model saved before dates existed (day kinds
by hour, uniform dates within a kind) samples as it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.validation import check_epsilon
from ..data.chunks import chunks
from ..data.traces import TraceSet
from ..data.trips import calendar_days
from ..privacy.laplace import laplace
from ..privacy.ledger import Ledger
from ..privacy.noise import noise_mass, share, toward_uniform

#: edges of the cabs' speed bins, km/h (public, the taxi's bounds): the last edge is the bound
#: (paper 004's 150 km/h), faster trips are clipped into the last bin, slower than the first edge
#: into the first; other bounds get :func:`speed_edges`' bins
SPEED_EDGES = np.array([1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 23.0, 26.0, 30.0, 35.0, 40.0,
                        50.0, 60.0, 80.0, 100.0, 150.0])
#: the number of speed bins, whatever the bounds
SPEED_BINS = SPEED_EDGES.size - 1
#: edges of the path-length rows of the speeds, metres (public): a trip's speed is drawn given its length
LENGTH_EDGES = np.array([0.0, 1000.0, 2000.0, 3000.0, 5000.0, 8000.0, 12000.0, np.inf])
#: edges of the duration bins, minutes (public): under a minute, then 32 bins a third longer each
#: up to a week; longer trips in the last
DURATION_EDGES = np.r_[0.0, np.geomspace(1.0, 7 * 1440.0, 33)]
#: the cabs' bound (paper 004), km/h: a model saved before bounds existed keeps its steps under it
MAX_SPEED_KMH = float(SPEED_EDGES[-1])
HOURS = 24
#: the day kinds of the hours: weekday 0, weekend 1
KINDS = 2
#: the four histograms' L1 sensitivity together: one trace adds at most 1 to each
SENSITIVITY = 4.0
#: a noisy count is kept when above this many noise scales; an empty bin passes it with probability
#: e^-2 / 2, 7 %
KEEP_ABOVE = 2.0
#: the seeded stream the model's sampling draws from (non-DP randomness)
STREAM = 46
#: what a set timed by the model says of its times (``info['times']``)
TIMED = "a DP model of starts (date and hour), speeds and durations"
#: what the ledger notes of the period (its last day comes from the data), and what it reveals
PERIOD_FROM_DATA = ("the period of the synthetic trips' dates ends on the last day a training trip starts (the "
                    "time model's number of days, on the card, tells that day)")


@dataclass
class TripTimes:
    """The fitted model (module docstring): ``dates``, the weight of each day of the ``period`` (days
    from the time axis's first; 0 for a day the calendar excludes); ``hours``, (``kinds``, 24) weights
    of the hours by day kind (:func:`day_kind`: 2 weekday or weekend, 1 every day alike, 7 the day of
    the week of a model saved before dates); ``speeds``, rows of :data:`LENGTH_EDGES` x the bins of
    ``edges`` (km/h, :func:`speed_edges` of the set's bounds; the last is the bound no step exceeds;
    one row: speeds of all lengths alike, as a model saved before the rows had them); ``cap``, the
    longest a synthetic trip takes, minutes (inf: none); ``noise``, the estimated share of noise in
    the starts (privacy/noise.py; None for a model saved before); ``calendar``, the set's."""

    dates: np.ndarray
    hours: np.ndarray
    speeds: np.ndarray
    kinds: int
    period: int
    edges: np.ndarray = field(default_factory=lambda: SPEED_EDGES.copy())
    noise: float | None = None
    cap: float = np.inf
    calendar: str | None = None

    @property
    def bound(self) -> float:
        """The speed no synthetic step exceeds, km/h (the last edge)."""
        return float(self.edges[-1])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"times_dates": self.dates, "times_hours": self.hours, "times_speeds": self.speeds,
               "times_shape": np.array([self.kinds, self.period], np.int64), "times_edges": self.edges,
               "times_cap": np.array([self.cap])}
        if self.noise is not None:
            out["times_noise"] = np.array([self.noise])
        if self.calendar is not None:
            out["times_calendar"] = np.array([self.calendar])
        return out

    @classmethod
    def from_arrays(cls, arrays: dict, axis=None) -> "TripTimes | None":
        """The model saved by :meth:`arrays` (None without one); a model saved before dates (its
        ``times_starts``, day kinds by hour) as dates spread evenly over each kind's days of the
        period on ``axis``, the law it sampled."""
        if "times_dates" not in arrays and "times_starts" not in arrays:
            return None
        kinds, period = (int(v) for v in arrays["times_shape"])
        speeds = np.atleast_2d(arrays["times_speeds"])
        edges = np.asarray(arrays.get("times_edges", SPEED_EDGES), np.float64)     # saved before: the cabs'
        noise = float(arrays["times_noise"][0]) if "times_noise" in arrays else None
        calendar = str(arrays["times_calendar"][0]) if "times_calendar" in arrays else None
        cap = float(arrays["times_cap"][0]) if "times_cap" in arrays else np.inf
        if "times_dates" in arrays:
            dates, hours = np.asarray(arrays["times_dates"], np.float64), np.asarray(arrays["times_hours"], np.float64)
        else:
            hours = np.asarray(arrays["times_starts"], np.float64)
            if axis is None or hours.size != kinds * HOURS:
                raise InputError("the saved time model's arrays do not match its shape")
            hours = hours.reshape(kinds, HOURS)
            kind = day_kind(_weekdays(axis, period), kinds)
            dates = hours.sum(axis=1)[kind] / np.maximum(np.bincount(kind, minlength=kinds), 1)[kind]
        if dates.shape != (period,) or hours.shape != (kinds, HOURS) or kinds not in (1, 2, 7) or \
                speeds.shape[1] != edges.size - 1 or speeds.shape[0] not in (1, LENGTH_EDGES.size - 1) or \
                (np.diff(edges) <= 0).any() or not cap > 0:
            raise InputError("the saved time model's arrays do not match its shape")
        return cls(dates, hours, speeds, kinds, period, edges, noise, cap, calendar)

    def describe(self, epsilon: float | None = None) -> str:
        days = {1: "every day alike", 2: "weekday or weekend", 7: "day of the week"}[self.kinds]
        spent = f" at epsilon {epsilon:.3g}" if epsilon is not None else ""
        cap = f", durations up to {self.cap:.0f} min" if np.isfinite(self.cap) else ""
        return (f"a DP model of starts (the date, and the hour by {days}) and speeds ({self.edges[0]:g}-{self.bound:g} "
                f"km/h){cap}{spent}, over a period of {self.period} days")


def speed_edges(bounds) -> np.ndarray:
    """The edges of the speed bins for a set's public ``bounds`` (data/modes.py), km/h: the cabs'
    :data:`SPEED_EDGES` for 1-150 km/h (the taxi's and the car's), else :data:`SPEED_BINS` bins
    evenly spaced on a log scale from the slowest speed to the bound (speeds spread over orders of
    magnitude: a ship drifts at 1 km/h and steams at 40)."""
    lo, hi = float(bounds.min_speed_kmh), float(bounds.max_speed_kmh)
    if (lo, hi) == (float(SPEED_EDGES[0]), float(SPEED_EDGES[-1])):
        return SPEED_EDGES.copy()
    return np.geomspace(lo, hi, SPEED_BINS + 1)


def day_kind(weekday: np.ndarray, kinds: int) -> np.ndarray:
    """Monday 0 .. Sunday 6 as a day kind: itself (7 kinds), weekday 0 or weekend 1 (2 kinds), 0 (1 kind)."""
    weekday = np.asarray(weekday, np.int64)
    if kinds == 7:
        return weekday
    return (weekday >= 5).astype(np.int64) if kinds == 2 else np.zeros_like(weekday)


def _hour_of_instant(axis) -> np.ndarray:
    """The local hour of every instant of a day (its start)."""
    seconds = axis.window_start.total_seconds() + np.arange(axis.instants_per_day) * axis.instant.total_seconds()
    return (seconds // 3600).astype(np.int64) % HOURS


def _dates(axis, days: int) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(pd.date_range(axis.start_date, periods=max(days, 1), freq="D"))


def _weekdays(axis, days: int) -> np.ndarray:
    return np.asarray(_dates(axis, days).day_of_week, np.int64)


@dataclass(frozen=True)
class Layout:
    """The model's structure, a function of public things and the period alone: which days of the
    ``period`` the ``calendar`` lets a trip start on (``open``), each day's kind (``kind``, of
    ``kinds``) and which kinds an open day has (``kinds_open``)."""

    period: int
    open: np.ndarray
    kind: np.ndarray
    kinds: int

    @property
    def kinds_open(self) -> np.ndarray:
        return np.bincount(self.kind[self.open], minlength=self.kinds) > 0

    @property
    def days_of_kind(self) -> np.ndarray:
        return np.bincount(self.kind[self.open], minlength=self.kinds).astype(np.float64)


def layout(axis, period: int, calendar: str | None, kinds: int = KINDS) -> Layout:
    """The :class:`Layout` of a model of ``period`` days on ``axis`` under ``calendar``."""
    dates = _dates(axis, period)
    return Layout(int(period), calendar_days(calendar, dates), day_kind(np.asarray(dates.day_of_week), kinds),
                  int(kinds))


def step_lengths(space, loc: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(metres, trace) of every step, two consecutive points of a trace."""
    trace = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    same = trace[1:] == trace[:-1]
    a, b = loc[:-1][same], loc[1:][same]
    return np.asarray(space.distance_m(a, b), np.float64), trace[1:][same]


def path_lengths(space, loc: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each step's metres, its trace, each trace's path in metres)."""
    metres, trace = step_lengths(space, loc, offsets)
    return metres, trace, np.bincount(trace, weights=metres, minlength=offsets.size - 1)


# -- the counting steps: pure functions of a chunk of traces, whose results add up ----------------

def start_days(train: TraceSet) -> np.ndarray:
    """Traces by the day (from the time axis's first) and the hour of their first point, (days, 24)."""
    axis, offsets = train.time, train.offsets
    first = train.t[offsets[:-1][np.diff(offsets) > 0]]
    day, k = np.divmod(first, axis.instants_per_day)
    days = int(day.max()) + 1 if day.size else 0
    return np.bincount(day * HOURS + _hour_of_instant(axis)[k], minlength=days * HOURS).reshape(days, HOURS)


def speed_cells(train: TraceSet, edges: np.ndarray | None = None) -> np.ndarray:
    """Each trace's cell of the speeds, its path length's row x the bins + its speed's bin in
    ``edges`` (the set's bounds' by default, :func:`speed_edges`) (-1: a trace of one point or none,
    or whose points share one location)."""
    edges = speed_edges(train.bounds) if edges is None else edges
    axis, offsets = train.time, train.offsets
    length = np.diff(offsets)
    _, _, path = path_lengths(train.space, train.loc, offsets)
    moving = (length > 1) & (path > 0)
    took = (train.t[offsets[1:][moving] - 1] - train.t[offsets[:-1][moving]]) * axis.instant.total_seconds()
    kmh = 3.6 * path[moving] / np.maximum(took, 1.0)
    out = np.full(offsets.size - 1, -1, np.int64)
    out[moving] = length_row(path[moving]) * (edges.size - 1) + speed_bin(kmh, edges)
    return out


def duration_bins(train: TraceSet) -> np.ndarray:
    """Each trace's bin of :data:`DURATION_EDGES`, first point to last (-1: a trace of no point)."""
    offsets = train.offsets
    full = np.diff(offsets) > 0
    minutes = (train.t[offsets[1:][full] - 1] - train.t[offsets[:-1][full]]) * train.time.instant.total_seconds() / 60
    out = np.full(offsets.size - 1, -1, np.int64)
    out[full] = np.clip(np.searchsorted(DURATION_EDGES, minutes, side="right") - 1, 0, DURATION_EDGES.size - 2)
    return out


def chunk_counts(train: TraceSet, edges: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counting step of :func:`counts` on one chunk of traces (sums over chunks add up): the
    starts by day (:func:`start_days`), the speeds' cells in ``edges`` (:func:`speed_cells`, the
    set's bounds' by default; flattened) and the durations (:func:`duration_bins`)."""
    return (start_days(train), held(speed_cells(train, edges), (LENGTH_EDGES.size - 1) * SPEED_BINS),
            held(duration_bins(train), DURATION_EDGES.size - 1))


def period_of(by_day: np.ndarray) -> int:
    """The period in days from the time axis's first day to the last day a trace starts, from the
    starts by day (:func:`start_days`); 1 without a start."""
    days = np.flatnonzero(np.asarray(by_day).sum(axis=1))
    return int(days[-1]) + 1 if days.size else 1


@dataclass
class Counts:
    """The exact histograms of a training set (what the noise is added to) and its :class:`Layout`:
    ``dates`` (the open days'), ``hours`` (the open kinds' rows), ``speeds`` (rows x bins) and
    ``durations``."""

    layout: Layout
    dates: np.ndarray
    hours: np.ndarray
    speeds: np.ndarray
    durations: np.ndarray

    def vector(self) -> np.ndarray:
        return np.concatenate([self.dates, self.hours.ravel(), self.speeds.ravel(), self.durations])

    def parts(self, vector: np.ndarray) -> "Counts":
        """The same shapes filled from ``vector`` (:meth:`vector`'s order)."""
        sizes = np.cumsum([self.dates.size, self.hours.size, self.speeds.size])
        d, h, s, u = np.split(np.asarray(vector, np.float64), sizes)
        return Counts(self.layout, d, h.reshape(self.hours.shape), s.reshape(self.speeds.shape), u)


def counts(train) -> Counts:
    """The exact histograms of ``train`` (a TraceSet, or chunks of one: data/chunks.py; module
    docstring): each trace adds at most 1 to each."""
    by_day, speeds, durations = chunks(train).total(chunk_counts, speed_edges(train.bounds))
    period = period_of(by_day)
    lay = layout(train.time, period, train.info.get("calendar"))
    by_day = np.vstack([by_day, np.zeros((max(period - by_day.shape[0], 0), HOURS))])[:period]
    hours = np.zeros((lay.kinds, HOURS))
    np.add.at(hours, lay.kind[lay.open], by_day[lay.open])
    return Counts(lay, by_day.sum(axis=1)[lay.open].astype(np.float64), hours[lay.kinds_open],
                  speeds.astype(np.float64).reshape(LENGTH_EDGES.size - 1, SPEED_BINS), durations.astype(np.float64))


def held(values: np.ndarray, d: int) -> np.ndarray:
    """How many traces (or reports) hold each value 0 .. d - 1 (-1, no value, counts nowhere)."""
    v = np.asarray(values, np.int64).ravel()
    return np.bincount(v[v >= 0], minlength=int(d))


def length_row(metres: np.ndarray) -> np.ndarray:
    """The row of :data:`LENGTH_EDGES` of each path length (metres)."""
    return np.clip(np.searchsorted(LENGTH_EDGES, metres, side="right") - 1, 0, LENGTH_EDGES.size - 2)


def speed_bin(kmh: np.ndarray, edges: np.ndarray = SPEED_EDGES) -> np.ndarray:
    """The bin of each speed (km/h) in ``edges``, those outside the edges in the first or last."""
    return np.clip(np.searchsorted(edges, kmh, side="right") - 1, 0, edges.size - 2)


# -- the fit: noise, then post-processing -------------------------------------------------------

def fit_trip_times(train: TraceSet, epsilon: float, ledger: Ledger) -> TripTimes:
    """The model of ``train``'s times at ``epsilon`` (the four histograms in one vector of
    sensitivity 4: a quarter of it to each in effect), recorded in ``ledger`` (module docstring)."""
    eps = check_epsilon(epsilon)
    bounds = train.bounds
    edges = speed_edges(bounds)
    exact = counts(train)
    lay = exact.layout
    noisy = exact.parts(laplace(exact.vector(), eps, SENSITIVITY, ledger=ledger, unit="trace",
                                saw=_saw(exact, lay, train.info.get("calendar"), edges, bounds),
                                assumptions="one trace starts once, on one day at one hour, has one duration and, "
                                            "when it goes somewhere, one speed: it adds 1 to each histogram, 4 in all"))
    ledger.note_uncovered(PERIOD_FROM_DATA)
    scale = SENSITIVITY / eps
    dates, hours, rho = starts_from(_kept(noisy.dates, scale), _kept(noisy.hours, scale), lay, train.time, scale)
    return TripTimes(dates, hours, _kept(noisy.speeds, scale), lay.kinds, lay.period, edges, rho,
                     duration_cap(_kept(noisy.durations, scale)), train.info.get("calendar"))


def _saw(exact: Counts, lay: Layout, calendar: str | None, edges: np.ndarray, bounds) -> str:
    days = f"the {exact.dates.size} days of the period" + (f" its calendar ({calendar}) opens" if calendar else "")
    kinds = " and ".join(name for name, on in zip(("weekdays", "weekends"), lay.kinds_open) if on)
    return (f"the start of every trace: its date (one bin each of {days}) and its hour ({kinds}, "
            f"{exact.hours.size} bins); its speed, its path over its duration ({edges.size - 1} bins of "
            f"{edges[0]:g}-{edges[-1]:g} km/h, clipped at the set's public bounds ({bounds.mode}), in "
            f"{exact.speeds.shape[0]} rows of its path's length); its duration ({exact.durations.size} bins of "
            "minutes)")


def starts_from(dates: np.ndarray, hours: np.ndarray, lay: Layout, axis, scale: float,
                law: str = "laplace") -> tuple[np.ndarray, np.ndarray, float]:
    """The model's dates (every day of the period) and hours (every kind's row) from the kept noisy
    counts of the open days and kinds (``scale``: the noise's, a Laplace scale or a normal's sd with
    ``law="normal"``), each fallen back toward its guess by its estimated share of noise (module
    docstring); and the share of the starts drawn from noise, 1 - (1 - the dates') (1 - the hours')."""
    feasible = np.zeros(HOURS)
    feasible[np.unique(_hour_of_instant(axis))] = 1.0
    full = np.zeros((lay.kinds, HOURS))
    full[lay.kinds_open] = hours
    guess = np.outer(lay.days_of_kind, feasible)
    rho_h = share(noise_mass(full[guess > 0], scale, KEEP_ABOVE * scale, law), full[guess > 0].sum())
    full = toward_uniform(np.where(guess > 0, full, 0.0), guess, rho_h)
    by_day = np.zeros(lay.period)
    by_day[lay.open] = dates
    kind_share = full.sum(axis=1) / np.maximum(lay.days_of_kind, 1.0)
    day_guess = np.where(lay.open, kind_share[lay.kind], 0.0)
    if day_guess.sum() <= 0:
        day_guess = lay.open.astype(np.float64)
    rho_d = share(noise_mass(by_day[lay.open], scale, KEEP_ABOVE * scale, law), by_day.sum())
    return toward_uniform(by_day, day_guess, rho_d), full, 1.0 - (1.0 - rho_d) * (1.0 - rho_h)


#: the share of the kept duration mass below the cap (:func:`duration_cap`)
CAP_QUANTILE = 0.995


def duration_cap(kept: np.ndarray, edges: np.ndarray = DURATION_EDGES, q: float = CAP_QUANTILE) -> float:
    """The longest a synthetic trip takes, minutes, from the kept duration counts in the bins of
    ``edges``: the lower of (a) the upper edge of the run of consecutive kept bins with the most mass
    (a kept bin past an empty one is noise's) and (b) the upper edge of the bin in which the kept
    mass reaches its share ``q`` (a quantile of the kept counts: a noisy bin kept next to the run's
    end, which (a) joins to it, holds a small share of a large set's mass); inf when nothing was kept
    or the bound reaches the last bin. Choice: q = 0.995 (the cabs' real trips: 0.2 % over an hour)."""
    kept = np.asarray(kept, np.float64)
    on = kept > 0
    if not on.any():
        return float("inf")
    start = np.flatnonzero(on & ~np.r_[False, on[:-1]])
    end = np.flatnonzero(on & ~np.r_[on[1:], False])
    mass = np.array([kept[a:b + 1].sum() for a, b in zip(start, end)])
    last = int(end[np.argmax(mass)])
    quantile = int(np.searchsorted(np.cumsum(kept), q * kept.sum() * (1 - 1e-12)))
    last = min(last, quantile)
    return float(edges[last + 1]) if last + 1 < edges.size - 1 else float("inf")


def _kept(noisy: np.ndarray, scale: float) -> np.ndarray:
    """Noisy counts with those under :data:`KEEP_ABOVE` noise scales set to 0 (post-processing): an
    empty bin's noise would otherwise give every bin a share (a day no trip starts on, a night hour,
    a speed no trip goes at)."""
    return np.where(noisy > KEEP_ABOVE * scale, noisy, 0.0)


# -- sampling -----------------------------------------------------------------------------------

def _choose(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from ``weights`` (rows of a 2-d array, one row per ``u``; or one 1-d)."""
    cdf = np.cumsum(weights, axis=-1)
    total = cdf[..., -1:]
    cdf = np.where(total > 0, cdf / np.where(total > 0, total, 1.0), np.linspace(1, weights.shape[-1], weights.shape[-1])
                   / weights.shape[-1])
    if cdf.ndim == 1:
        return np.minimum(np.searchsorted(cdf, u, side="right"), weights.size - 1)
    return np.minimum((cdf < u[:, None]).sum(axis=1), weights.shape[-1] - 1)


def hour_rows(model: TripTimes, axis) -> np.ndarray:
    """Each kind's hour weights on ``axis``'s feasible hours, normalised (a kind that kept nothing: the
    rows' sum; every feasible hour alike when nothing was kept)."""
    feasible = np.zeros(HOURS, bool)
    feasible[np.unique(_hour_of_instant(axis))] = True
    rows = np.where(feasible, np.atleast_2d(model.hours), 0.0)
    overall = rows.sum(axis=0)
    if overall.sum() <= 0:
        overall = feasible.astype(np.float64)
    rows = np.where(rows.sum(axis=1, keepdims=True) > 0, rows, overall)
    return rows / rows.sum(axis=1, keepdims=True)


def sample_starts(model: TripTimes, axis, m: int, rng: np.random.Generator,
                  hours: np.ndarray | None = None) -> np.ndarray:
    """The first instant of ``m`` trips: a date from the model's dates and an hour from its kind's
    row, or (``hours``, a method's own hour of each trip) the date from that hour's column; an
    instant of the hour uniformly."""
    rows = hour_rows(model, axis)
    kind = day_kind(_weekdays(axis, model.period), model.kinds)
    dates = np.asarray(model.dates, np.float64)
    if dates.sum() <= 0:
        dates = np.ones(model.period)
    hour_of = _hour_of_instant(axis)
    if hours is None:
        day = _choose(dates, rng.random(m))
        hour = _choose(rows[kind[day]], rng.random(m))
    else:                                       # the day from the hour's column: P(day) P(hour | its kind)
        feasible = rows.sum(axis=0) > 0
        hour = np.clip(np.asarray(hours, np.int64), 0, HOURS - 1)
        hour = np.where(feasible[hour], hour, np.unique(hour_of)[0])
        day = np.zeros(m, np.int64)
        u = rng.random(m)
        for h in np.unique(hour):
            at = hour == h
            column = dates * rows[kind, h]
            day[at] = _choose(column if column.sum() > 0 else dates, u[at])
    return day * axis.instants_per_day + _uniform_member(hour_of, hour, rng.random(m))


def most_points(model: TripTimes, axis) -> int | None:
    """The most points a synthetic trip keeps: as many as the cap holds instants, and one (each step
    takes an instant at least); None without a cap."""
    if not np.isfinite(model.cap):
        return None
    return int(model.cap * 60 // axis.instant.total_seconds()) + 1


def within_cap(model: TripTimes, axis, loc: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Trips (``loc`` concatenated, ``length`` points each) cut to their first :func:`most_points`
    points: a walk of more steps than the cap holds instants cannot end within it at any speed (0.5 %
    of PrivTrace's on the cabs, whose walks reach 100 points)."""
    most = most_points(model, axis)
    if most is None or length.max(initial=0) <= most:
        return loc, length
    position = np.arange(loc.size) - np.repeat(np.cumsum(length) - length, length)
    return loc[position < max(most, 2)], np.minimum(length, max(most, 2))


def sample_times(model: TripTimes, loc: np.ndarray, length: np.ndarray, space, axis,
                 seed: int = 0, hours: np.ndarray | None = None) -> np.ndarray:
    """Instants for trips of ``length`` points (``loc`` concatenated): a start drawn from the
    model (its date given ``hours``, a method's own hour of each trip, where given), each step at a
    speed drawn from it within the duration cap (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(STREAM,)))
    m = length.size
    start = sample_starts(model, axis, m, rng, hours)
    offsets = np.r_[0, np.cumsum(length)]
    metres, trace, path = path_lengths(space, loc, offsets)
    kmh = capped_speeds(model, path, rng.random(m), rng.random(m))
    return np.repeat(start, length) + _steps_at(kmh / 3.6, metres, trace, length, offsets,
                                                axis.instant.total_seconds(), model.bound)


def capped_speeds(model: TripTimes, path: np.ndarray, u_bin: np.ndarray, u_speed: np.ndarray) -> np.ndarray:
    """Each trip's speed, km/h: a bin of its path length's speeds (:func:`speed_rows`) among those
    that take it no longer than the model's cap, and a speed in that bin at or above its path over the
    cap; its path over the cap where no kept bin is that fast; never above the bound."""
    edges = model.edges
    need = 3.6 * path / (60.0 * model.cap) if np.isfinite(model.cap) else np.zeros(path.size)
    weights = speed_rows(model.speeds, path)
    allowed = np.where(edges[1:][None, :] > need[:, None], weights, 0.0)
    some = allowed.sum(axis=1) > 0
    b = _choose(np.where(some[:, None], allowed, weights), u_bin)
    lo = np.where(some, np.maximum(edges[b], need), edges[b])
    kmh = np.where(some, lo + u_speed * (edges[b + 1] - lo), np.maximum(need, edges[0]))
    return np.minimum(kmh, model.bound)


def speed_rows(speeds: np.ndarray, path: np.ndarray) -> np.ndarray:
    """The speed weights of each trip of ``path`` metres: its length's row, the rows' sum where that
    row kept nothing (or the model has one row), all bins alike where nothing was kept at all."""
    speeds = np.atleast_2d(speeds)
    overall = speeds.sum(axis=0)
    if overall.sum() <= 0:
        overall = np.ones(speeds.shape[1])
    rows = np.vstack([np.where(speeds.sum(axis=1, keepdims=True) > 0, speeds, overall), overall])
    row = length_row(path) if speeds.shape[0] > 1 else np.full(path.size, rows.shape[0] - 1)
    return rows[row]


def _steps_at(speed: np.ndarray, metres: np.ndarray, trace: np.ndarray, length: np.ndarray,
              offsets: np.ndarray, instant_s: float, bound_kmh: float = MAX_SPEED_KMH) -> np.ndarray:
    """Each point's instant from its trip's start when the trip goes at ``speed`` (m/s): its path so
    far at that speed, rounded to instants, each step at least one instant and at least its length
    at the public bound ``bound_kmh``."""
    n = int(offsets[-1])
    later = np.ones(n, bool)
    later[offsets[:-1][length > 0]] = False
    seconds, least = np.zeros(n), np.zeros(n, np.int64)
    seconds[later] = metres / speed[trace]
    least[later] = np.maximum(np.ceil(metres / (bound_kmh / 3.6) / instant_s - 1e-9), 1).astype(np.int64)

    def since_first(v):                  # cumulative within each trip, 0 at its first point
        total = np.cumsum(v)
        return total - np.repeat(np.r_[total, 0][np.minimum(offsets[:-1], n)], length)

    planned = np.rint(since_first(seconds) / instant_s).astype(np.int64)
    floor = since_first(least)
    # each step at least its ``least``: the running maximum of planned - floor within each trip (later
    # trips lifted above earlier ones, so that one pass serves them all), plus floor
    trip = np.repeat(np.arange(length.size), length)
    lift = int(max(planned.max(initial=0), 0)) + int(floor.max(initial=0)) + 2
    return np.maximum.accumulate(planned - floor + trip * lift) - trip * lift + floor


def _uniform_member(group: np.ndarray, wanted: np.ndarray, u: np.ndarray) -> np.ndarray:
    """For each ``wanted`` value, a position of ``group`` holding it, uniformly (``u`` in [0, 1));
    every wanted value must occur in ``group``."""
    order = np.argsort(group, kind="stable")
    first = np.searchsorted(group[order], wanted, side="left")
    size = np.searchsorted(group[order], wanted, side="right") - first
    return order[first + np.minimum((u * size).astype(np.int64), np.maximum(size - 1, 0))]
