"""One differentially private model of when trips happen and how long their steps take, for every
trip synthesizer (NGRAM, PrivTrace, AdaTrace, DPT, and DPTrip beside its own hours; LDPTrace's
users report the same histograms themselves: synth/ldptrace/times.py).

The field's trip synthesizers model where a trip goes, not when (AdaTrace, PrivTrace, LDPTrace
and DPT synthesize sequences of cells; paper 004 models the hour a trip starts). Without a time
every surface would have to invent one; this model gives each synthetic trip a start and its
steps durations, from two histograms of the training traces, each trace counting at most 1 in each:

1. **Starts**: the day and hour of each trace's first point, on the set's clock. The day is the
   day of the week when the period holds every weekday at least twice (two weeks), else weekday
   or weekend. Choice: a finer day (the date) would spread one period's trips over bins of a
   few trips each, all noise at the epsilons used here; a coarser one (the hour alone) would lose
   the week's rhythm the DP mobility report and paper 004 both look at. One trace adds 1 to one
   bin: L1 sensitivity 1.
2. **Speeds by path length**: each trace's speed, the length of its path (between consecutive
   points' locations) over its duration, in 20 bins of km/h that span the set's public bounds
   (:func:`speed_edges`: from its mode's slowest speed to its speed bound, data/modes.py; the cabs'
   :data:`SPEED_EDGES` for the taxi's 1-150 km/h; faster ones clipped into the last bin, slower
   into the first), in the row of its path's length
   (:data:`LENGTH_EDGES`, public). One trace adds 1 to one cell (a trace that goes nowhere, or of
   one point, adds nothing): L1 sensitivity 1. Choice: the speed given the length because real
   trips are faster the longer they go (highways); a speed of all trips alike made short synthetic
   trips too fast and long ones too slow, and durations drifted from the real ones (on the 200
   cabs, exact counts: duration JSD 0.070 against 0.033 for PrivTrace, 0.079 against 0.025 for
   AdaTrace, 0.050 against 0.020 for DPT). Choice: a pace, not a duration,
   because a synthetic trip's path is the synthesizer's, not a real one's (NGRAM's walks wander,
   AdaTrace's steps cross several cells): at a real trip's speed its steps take as long as the
   data say such distances take, a step across several cells longer than a step to the next, and
   no step is faster than a real trip could go. A trip that wanders far then takes long: its
   duration says what its path is.

Both pass through Laplace noise (OpenDP's, privacy/laplace.py) in one vector of L1 sensitivity 2,
at the epsilon the method gives the model (``time_share`` of its budget): each at half of it in
effect; counts under two noise scales become 0 (post-processing: noise alone would otherwise give
a share to every hour and speed). Then the starts fall back toward a uniform guess (all days of the
period alike, every hour of its window alike) as far as noise fills them: the expected mass noise
alone keeps in the start bins (privacy/noise.py), against what they kept, is the weight of the
uniform (post-processing; docs/methods/trips.md measures it), so that a noisy bin that survives
the threshold alone does not take the starts of a small set.

Sampling: a start bin from the first histogram, a date of that day among the period's days, an
instant of that hour uniformly (so trips start on no particular minute); a speed from the second,
uniformly within its bin, from the row of the synthetic
trip's own path length (the sum of the rows where that row kept nothing); each step then takes its length at that speed, rounded to instants, at
least one instant and at least what the set's public speed bound asks for its length (no step of a
synthetic trip is faster than the bound; a model saved before bounds existed has the cabs').
The period is the time axis's first day to the last day a training trip starts: the data's (the
ledger notes it), as the time axis's first day already is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.validation import check_epsilon
from ..data.chunks import chunks
from ..data.traces import TraceSet
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
#: the cabs' bound (paper 004), km/h: a model saved before bounds existed keeps its steps under it
MAX_SPEED_KMH = float(SPEED_EDGES[-1])
HOURS = 24
#: a noisy count is kept when above this many noise scales (1 / epsilon); an empty bin passes it
#: with probability e^-2 / 2, 7 %
KEEP_ABOVE = 2.0
#: the seeded stream the model's sampling draws from (non-DP randomness)
STREAM = 46
#: what a set timed by the model says of its times (``info['times']``)
TIMED = "a DP model of starts (day and hour) and speeds"
#: what the ledger notes of the period (its last day comes from the data)
PERIOD_FROM_DATA = "the period of the synthetic trips' dates ends on the last day a training trip starts"


@dataclass
class TripTimes:
    """The fitted model: the noisy ``starts`` (day kinds x 24 hours) and ``speeds`` (rows of
    :data:`LENGTH_EDGES` x :data:`SPEED_BINS` bins; one row: speeds of all lengths alike, as a
    model saved before the rows had them), the number of day ``kinds`` (7: day of the week, 2: weekday or weekend)
    and the ``period`` in days from the time axis's first day; ``edges`` of the speed bins, km/h
    (:func:`speed_edges` of the set's bounds; the last is the bound no step exceeds) and ``noise``,
    the estimated share of noise in the starts (privacy/noise.py; None for a model saved before)."""

    starts: np.ndarray
    speeds: np.ndarray
    kinds: int
    period: int
    edges: np.ndarray = field(default_factory=lambda: SPEED_EDGES.copy())
    noise: float | None = None

    @property
    def bound(self) -> float:
        """The speed no synthetic step exceeds, km/h (the last edge)."""
        return float(self.edges[-1])

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"times_starts": self.starts, "times_speeds": self.speeds,
               "times_shape": np.array([self.kinds, self.period], np.int64), "times_edges": self.edges}
        if self.noise is not None:
            out["times_noise"] = np.array([self.noise])
        return out

    @classmethod
    def from_arrays(cls, arrays: dict) -> "TripTimes | None":
        if "times_starts" not in arrays:
            return None
        kinds, period = (int(v) for v in arrays["times_shape"])
        speeds = np.atleast_2d(arrays["times_speeds"])
        edges = np.asarray(arrays.get("times_edges", SPEED_EDGES), np.float64)     # saved before: the cabs'
        noise = float(arrays["times_noise"][0]) if "times_noise" in arrays else None
        model = cls(arrays["times_starts"], speeds, kinds, period, edges, noise)
        if model.starts.shape != (kinds * HOURS,) or speeds.shape[1] != edges.size - 1 or \
                speeds.shape[0] not in (1, LENGTH_EDGES.size - 1) or (np.diff(edges) <= 0).any():
            raise InputError("the saved time model's arrays do not match its shape")
        return model

    def describe(self, epsilon: float | None = None) -> str:
        days = "day of the week" if self.kinds == 7 else "weekday or weekend"
        spent = f" at epsilon {epsilon:.3g}" if epsilon is not None else ""
        return (f"a DP model of starts ({days} by hour) and speeds ({self.edges[0]:g}-{self.bound:g} km/h){spent}, "
                f"over a period of {self.period} days")


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
    """Monday 0 .. Sunday 6 as a day kind: itself (7 kinds) or weekday 0, weekend 1 (2 kinds)."""
    weekday = np.asarray(weekday, np.int64)
    return weekday if kinds == 7 else (weekday >= 5).astype(np.int64)


def _hour_of_instant(axis) -> np.ndarray:
    """The local hour of every instant of a day (its start)."""
    seconds = axis.window_start.total_seconds() + np.arange(axis.instants_per_day) * axis.instant.total_seconds()
    return (seconds // 3600).astype(np.int64) % HOURS


def _weekdays(axis, days: int) -> np.ndarray:
    return np.asarray(pd.DatetimeIndex(pd.date_range(axis.start_date, periods=max(days, 1), freq="D")).day_of_week,
                      np.int64)


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


def day_kinds(train: TraceSet) -> tuple[int, int]:
    """The number of day kinds (7 when the period of starts holds two weeks, else 2) and the period
    in days from the time axis's first day to the last day a trace starts."""
    offsets = train.offsets
    first = train.t[offsets[:-1][np.diff(offsets) > 0]]
    period = int(first.max() // train.time.instants_per_day) + 1 if first.size else 1
    return (7 if period >= 14 else 2), period


def start_bins(train: TraceSet, kinds: int, period: int) -> np.ndarray:
    """Each trace's start bin, its day kind x 24 + the hour of its first point (-1: an empty trace)."""
    axis, offsets = train.time, train.offsets
    nonempty = np.diff(offsets) > 0
    day, k = np.divmod(train.t[offsets[:-1][nonempty]], axis.instants_per_day)
    out = np.full(offsets.size - 1, -1, np.int64)
    out[nonempty] = day_kind(_weekdays(axis, period)[day], kinds) * HOURS + _hour_of_instant(axis)[k]
    return out


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


def counts(train) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The exact histograms (starts, speeds by path length), the day kinds and the period of ``train``
    (a TraceSet, or chunks of one: data/chunks.py): what the noise is added to. Each trace adds 1 to
    ``starts`` and, when it goes somewhere, 1 to ``speeds`` (in the bins of the set's public bounds)."""
    by_day, speeds = chunks(train).total(chunk_counts, speed_edges(train.bounds))
    kinds, period = kinds_of(by_day)
    starts = np.zeros((kinds, HOURS))
    np.add.at(starts, day_kind(_weekdays(train.time, period), kinds), by_day[:period])
    return starts.ravel(), speeds.astype(np.float64).reshape(LENGTH_EDGES.size - 1, SPEED_BINS), kinds, period


def chunk_counts(train: TraceSet, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counting step of :func:`counts` on one chunk of traces (sums over chunks add up): the
    starts by day (:func:`start_days`) and the speeds' cells in ``edges`` (:func:`speed_cells`), flattened."""
    return start_days(train), held(speed_cells(train, edges), (LENGTH_EDGES.size - 1) * SPEED_BINS)


def start_days(train: TraceSet) -> np.ndarray:
    """Traces by the day (from the time axis's first) and the hour of their first point, (days, 24)."""
    axis, offsets = train.time, train.offsets
    first = train.t[offsets[:-1][np.diff(offsets) > 0]]
    day, k = np.divmod(first, axis.instants_per_day)
    days = int(day.max()) + 1 if day.size else 0
    return np.bincount(day * HOURS + _hour_of_instant(axis)[k], minlength=days * HOURS).reshape(days, HOURS)


def kinds_of(by_day: np.ndarray) -> tuple[int, int]:
    """:func:`day_kinds` from the starts by day (:func:`start_days`)."""
    days = np.flatnonzero(np.asarray(by_day).sum(axis=1))
    period = int(days[-1]) + 1 if days.size else 1
    return (7 if period >= 14 else 2), period


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


def fit_trip_times(train: TraceSet, epsilon: float, ledger: Ledger) -> TripTimes:
    """The model of ``train``'s times at ``epsilon`` (both histograms in one vector of sensitivity 2:
    half of it to each in effect), recorded in ``ledger``; speeds in the bins of ``train``'s public
    bounds, starts fallen back toward uniform as far as noise fills them (module docstring)."""
    eps = check_epsilon(epsilon)
    bounds = train.bounds
    edges = speed_edges(bounds)
    starts, speeds, kinds, period = counts(train)
    days = "day of the week" if kinds == 7 else "weekday or weekend"
    noisy = laplace(np.concatenate([starts, speeds.ravel()]), eps, 2.0, ledger=ledger, unit="trace",
                    saw=f"the start of every trace ({days} by hour, {starts.size} bins) and its speed, its path over "
                        f"its duration ({speeds.shape[1]} bins of {edges[0]:g}-{edges[-1]:g} km/h, clipped at the "
                        f"set's public bounds ({bounds.mode}), in {speeds.shape[0]} rows of its path's length)",
                    assumptions="one trace starts once and, when it goes somewhere, has one speed: it adds 1 to "
                                "each histogram, 2 in all")
    noisy_starts, noisy_speeds = noisy[:starts.size], noisy[starts.size:].reshape(speeds.shape)
    ledger.note_uncovered(PERIOD_FROM_DATA)
    kept = _kept(noisy_starts, eps / 2)
    uniform = uniform_starts(kinds, period, train.time)
    rho = share(noise_mass(kept[uniform > 0], 2 / eps, KEEP_ABOVE * 2 / eps), kept[uniform > 0].sum())
    return TripTimes(toward_uniform(kept, uniform, rho), _kept(noisy_speeds, eps / 2), kinds, period, edges, rho)


def uniform_starts(kinds: int, period: int, axis) -> np.ndarray:
    """The uniform guess of starts over the start bins (day kinds x 24 hours): every day of the
    period alike (a day kind weighs its days), every hour the axis's window holds alike, 0 where
    no start can fall."""
    days = np.bincount(day_kind(_weekdays(axis, period), kinds), minlength=kinds).astype(np.float64)
    hours = np.zeros(HOURS)
    hours[np.unique(_hour_of_instant(axis))] = 1.0
    return np.outer(days, hours).ravel()


def _kept(noisy: np.ndarray, epsilon: float) -> np.ndarray:
    """Noisy counts with those under :data:`KEEP_ABOVE` noise scales set to 0 (post-processing): an
    empty bin's noise would otherwise give every bin a share (a night hour no trip starts in, a speed
    no trip goes at)."""
    return np.where(noisy > KEEP_ABOVE / epsilon, noisy, 0.0)


def _choose(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from ``weights`` (rows of a 2-d array, one row per ``u``; or one 1-d)."""
    cdf = np.cumsum(weights, axis=-1)
    total = cdf[..., -1:]
    cdf = np.where(total > 0, cdf / np.where(total > 0, total, 1.0), np.linspace(1, weights.shape[-1], weights.shape[-1])
                   / weights.shape[-1])
    if cdf.ndim == 1:
        return np.minimum(np.searchsorted(cdf, u, side="right"), weights.size - 1)
    return np.minimum((cdf < u[:, None]).sum(axis=1), weights.shape[-1] - 1)


def sample_times(model: TripTimes, loc: np.ndarray, length: np.ndarray, space, axis,
                 seed: int = 0, hours: np.ndarray | None = None) -> np.ndarray:
    """Instants for trips of ``length`` points (``loc`` concatenated): a start drawn from the
    model (its day given ``hours``, a method's own hour of each trip, where given), each step at a
    speed drawn from it (module docstring)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(STREAM,)))
    m = length.size
    hour_of = _hour_of_instant(axis)
    kind_of_day = day_kind(_weekdays(axis, model.period), model.kinds)
    feasible = np.zeros(model.kinds * HOURS, bool)
    feasible.reshape(model.kinds, HOURS)[np.unique(kind_of_day)[:, None], np.unique(hour_of)[None, :]] = True
    weights = np.where(feasible, model.starts, 0.0)
    if weights.sum() <= 0:
        weights = feasible.astype(np.float64)
    if hours is None:
        kind, hour = np.divmod(_choose(weights, rng.random(m)), HOURS)
    else:                                       # the day from the hour's column
        hour = np.clip(np.asarray(hours, np.int64), 0, HOURS - 1)
        hour = np.where(feasible.reshape(model.kinds, HOURS).any(axis=0)[hour], hour, np.unique(hour_of)[0])
        columns = weights.reshape(model.kinds, HOURS).T[hour]
        columns[columns.sum(axis=1) <= 0] = feasible.reshape(model.kinds, HOURS).T[hour][columns.sum(axis=1) <= 0]
        kind = _choose(columns, rng.random(m))
    day = _uniform_member(kind_of_day, kind, rng.random(m))
    k = _uniform_member(hour_of, hour, rng.random(m))
    start = day * axis.instants_per_day + k
    offsets = np.r_[0, np.cumsum(length)]
    metres, trace, path = path_lengths(space, loc, offsets)
    b = _choose(speed_rows(model.speeds, path), rng.random(m))
    edges = model.edges
    kmh = edges[b] + rng.random(m) * (edges[b + 1] - edges[b])
    return np.repeat(start, length) + _steps_at(kmh / 3.6, metres, trace, length, offsets,
                                                axis.instant.total_seconds(), model.bound)


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
