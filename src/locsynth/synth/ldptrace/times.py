"""LDPTrace's model of its trips' times, in the local model (synth/trip_times.py's, reported by the
users themselves): a public random share of the trajectories reports when its trip starts, how
fast it goes or how long it takes, instead of where it goes.

Why a share of the users and not of the budget. In the local model every user's report carries its
own noise, whose variance grows as 1 / epsilon^2 at small epsilon (OUE: 4 e^epsilon / (e^epsilon -
1)^2 per user). Spending a share s of every user's budget on the time would multiply the time's
noise variance by about 1 / s^2; giving the whole budget to a share s of the users multiplies it by
1 / s (Wang et al., USENIX Security 2017, and the sampling-then-reporting of the LDP literature).
The mobility model loses the same share of its reports.

The protocol. Before any report, the collector draws which trajectories report what, from the
method's seed, independently of the data (public: how many reports a user sends then says nothing
of their trajectory). Every trajectory reports its length (LDPTrace's round 1, unchanged). Of the
``time_share`` of the trajectories, :data:`GROUPS` says which share reports which one value, each
as one report at the whole of round 2's budget, (1 - length_share) epsilon: by OUE, or by k-ary
randomized response where a domain is small enough for it to estimate with less variance (fewer
than 3 e^epsilon + 2 values, Wang et al. 2017 §5: the weekday and the duration at epsilon 1); the
rest report their mobility as LDPTrace does. Either way a trajectory spends (1 - length_share)
epsilon in round 2. The values (their domains public: the period's days the set's calendar opens,
trip_times.layout):

- **week**: the week (Monday to Sunday) of the period it starts in, among those that hold an open
  day;
- **weekday**: the day of the week it starts on, among those the open days have. Choice: a date is
  its week's share times its weekday's (the quasi-independence of the two, below), not a report of
  the date itself: a share of a few values is estimated with far less noise than one of many (OUE's
  sd is the same in every value, so a weekday summed from its 3-4 dates carries 3-4 times their
  variance), and on the cabs 1,800 date reports left a date's share off by 5 points where the
  weekday's is off by 1.3; what the product misses is a day unlike its week and its weekday (the
  cabs' last Monday, half a day: collection ended at noon);
- **hour**: the hour of its first point, every day alike (one day kind: OUE's noise is the same in
  every value whatever the domain, so two kinds would double the noise of the hours; the dates
  carry the week);
- **speed**: its speed by its path's length on a coarse grid, :data:`ROW_GROUPS` (0-3 km, 3-8 km,
  beyond) by pairs of the speed bins of the set's bounds (trip_times.speed_edges; 30 values);
- **duration**: its duration in :data:`DURATION_EDGES` (6 values), for the cap on a synthetic trip's.

The collector's model (post-processing of OUE's unbiased estimates, each value's noise a normal of
known sd, privacy/oue.noise_sd):

- the weekdays' shares under :data:`~locsynth.synth.trip_times.KEEP_ABOVE` of their sd set to 0 (a
  weekend no trip starts on), the weeks' negatives set to 0 (:func:`local_dates` says why), each
  fallen back toward its values' numbers of open days as far as noise fills them; each open day the
  product of its weekday's and its week's factors that gives both margins (iterative proportional
  fitting);
- the hours: the least-squares fit of exp(a constant and the day's first :data:`HARMONICS` (two)
  harmonics) to the 24 estimates, positive everywhere (no hour is emptied, where a linear fit's
  negatives set to 0 emptied some), fallen back toward uniform as the central model's do, as far as
  the smoothed noise fills them (its expected kept mass, privacy/noise.py, against theirs), and to
  the uniform guess alone where that is half their mass or more (choice; measured in docs/data.md);
- the speeds through Norm-Sub (collector.norm_sub: setting negatives to 0 kept every empty cell's
  positive noise, a floor that slowed the median synthetic step from 30 to 22 km/h on the 200
  cabs), each coarse cell spread evenly over the fine cells it covers, so that the model samples as
  the central one;
- the duration cap: trip_times.duration_cap of the duration estimates under KEEP_ABOVE sds set to 0.

What the noise allows (docs/dates.md has the figures measured on the 200 cabs): at epsilon 0.9 an
OUE estimate of a value has an sd of 2.15 sqrt(n) for n reports, a k-RR one over 5 values 1.6
sqrt(n), over 4 values 1.45 sqrt(n). Of the cabs' 72,467 trajectories at the default shares (half of
them, 36,000, report times; 43 % of those, 15,600, the weekday: its share of starts is the one the
acceptance bounds to 3 points; 12 %, 4,300, the week) a weekday's share is off by about 1.3 points, a
week's by 2.2; the central model's dates (synth/trip_times.py) by a tenth of a point.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from ...data.traces import TraceSet
from ...privacy import oue
from ...privacy import randomized_response as rr
from ...privacy.noise import kept_normal, noise_mass, share, toward_uniform
from .. import trip_times as tt
from ...data.chunks import chunks
from .collector import norm_sub

#: harmonics of the day kept when smoothing the estimated hours of starts (periods 24 and 12 hours).
#: Choice: of 3,000 draws of the 200 cabs' hour reports at the default shares (9,058 at epsilon 0.9),
#: 3 harmonics read a start-hour JSD of 0.0152 on average and over 0.05 in 0.7 % of them (the third
#: harmonic fits noise into spikes: the worst 0.11), 2 harmonics 0.0134 and 0.1 % (worst 0.086); a
#: quarter of the reports 0.052 against 0.042; likewise on a sharp commuter day (two peaks of sd 1 h
#: and a fifth flat: 0.0175 against 0.0102). With 4 or 16 times the reports the third harmonic's
#: shape is worth its noise (cabs 0.0056 against 0.0072, 0.0029 against 0.0053; commuter 0.0101
#: against 0.0137), where both are far under 0.05; choosing by Mallows' Cp did worse than either at
#: the default (0.0185)
HARMONICS = 2
#: the coarse row of each of trip_times.LENGTH_EDGES' rows: 0-3 km, 3-8 km, 8 km and beyond
ROW_GROUPS = np.array([0, 0, 0, 1, 1, 2, 2])
#: fine speed bins in one coarse bin
SPEED_PAIR = 2
#: the duration bins of the duration reports, minutes (public)
DURATION_EDGES = np.array([0.0, 15.0, 30.0, 60.0, 120.0, 240.0, np.inf])
#: the seeded stream that assigns the trajectories to their reports (public, data-independent)
STREAM = 4646
#: the day kinds of the local hours: every day alike
KINDS = 1
#: the share of noise in the smoothed starts from which the uniform guess alone is kept
NOISE_ALONE = 0.5
#: what the time reporters report, and which share of them reports each (public; measured on the
#: 200 cabs at epsilon 1, docs/dates.md)
GROUPS = (("week", 0.12), ("weekday", 0.43), ("hour", 0.25), ("speed", 0.14), ("duration", 0.06))


def assign(n: int, share: float, seed: int, sizes: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Which of ``n`` trajectories report what: a random ``share`` of them (rounded) for the times,
    cut into :data:`GROUPS` by their shares, the rest for the ``mobility``; sorted indices. A group
    whose domain (``sizes``, :func:`domains`: public) has one value gets none, its share spread over the
    others in proportion (a period of one week has no week to report, one of a day no weekday either)."""
    order = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(STREAM,))).permutation(int(n))
    k = int(round(share * n))
    shares = np.array([s if sizes is None or sizes.get(name, 2) > 1 else 0.0 for name, s in GROUPS])
    cuts = np.rint(np.cumsum(np.r_[0.0, shares / shares.sum()]) * k).astype(np.int64)
    out = {name: np.sort(order[a:b]) for (name, _), a, b in zip(GROUPS, cuts[:-1], cuts[1:])}
    out["mobility"] = np.sort(order[k:])
    return out


def layout_of(train) -> tt.Layout:
    """The local time model's :class:`~locsynth.synth.trip_times.Layout`: the period of ``train`` (a
    TraceSet or chunks of one; data-derived, named on the ledger), its calendar, one day kind."""
    period = tt.period_of(chunks(train).total(tt.start_days))
    return tt.layout(train.time, period, train.info.get("calendar"), KINDS)


def coarse_speed_cells(fine: np.ndarray) -> np.ndarray:
    """trip_times.speed_cells' values on the coarse grid (-1 stays -1)."""
    bins = tt.SPEED_BINS
    row, b = np.divmod(np.maximum(fine, 0), bins)
    return np.where(fine >= 0, ROW_GROUPS[row] * (bins // SPEED_PAIR) + b // SPEED_PAIR, -1)


def expand_speeds(coarse: np.ndarray) -> np.ndarray:
    """A coarse speed histogram spread evenly over the fine one (LENGTH_EDGES rows x SPEED_BINS bins)."""
    bins = tt.SPEED_BINS
    grid = np.asarray(coarse, np.float64).reshape(ROW_GROUPS.max() + 1, bins // SPEED_PAIR)
    return np.repeat(grid, SPEED_PAIR, axis=1)[ROW_GROUPS] / SPEED_PAIR


def _basis() -> np.ndarray:
    h = np.arange(tt.HOURS) * 2 * np.pi / tt.HOURS
    return np.column_stack([np.ones(tt.HOURS)] + [f(k * h) for k in range(1, HARMONICS + 1) for f in (np.cos, np.sin)])


def smooth_hours(estimate: np.ndarray) -> np.ndarray:
    """The least-squares fit of exp(a constant and the first :data:`HARMONICS` harmonics of the day)
    to one day's 24 hourly estimates: positive in every hour (0 everywhere when the estimates hold
    no mass)."""
    est = np.asarray(estimate, np.float64)
    level = np.maximum(est, 0.0).mean()
    if level <= 0:
        return np.zeros(tt.HOURS)
    basis = _basis()
    start = np.linalg.lstsq(basis, np.log(np.maximum(est, level / 10)), rcond=None)[0]

    def residual(beta):
        return np.exp(basis @ beta) - est

    def jacobian(beta):
        return np.exp(basis @ beta)[:, None] * basis

    return np.exp(basis @ least_squares(residual, start, jac=jacobian, method="lm").x)


def report_values(train: TraceSet, lay: tt.Layout, edges: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every trajectory's value of each report of :data:`GROUPS` (-1: none), on the
    :class:`~locsynth.synth.trip_times.Layout` ``lay`` (public; :func:`domains`), speeds in the bins
    of ``edges`` (the set's bounds' by default)."""
    axis, offsets = train.time, train.offsets
    n = offsets.size - 1
    full = np.diff(offsets) > 0
    day, hour, minutes = np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.full(n, -1.0)
    first, last = train.t[offsets[:-1][full]], train.t[offsets[1:][full] - 1]
    d, k = np.divmod(first, axis.instants_per_day)
    day[full], hour[full] = np.where(d < lay.period, d, -1), tt._hour_of_instant(axis)[k]
    minutes[full] = (last - first) * axis.instant.total_seconds() / 60
    weekday, week = (np.where(day >= 0, cells[np.maximum(day, 0)], -1) for cells in day_cells(lay, axis))
    duration = np.where(minutes >= 0, np.searchsorted(DURATION_EDGES, minutes, side="right") - 1, -1)
    speed = coarse_speed_cells(tt.speed_cells(train, edges))
    return {"week": week, "weekday": weekday, "hour": hour, "speed": speed, "duration": duration}


def open_weekdays(lay: tt.Layout, axis) -> np.ndarray:
    """The days of the week (Monday 0) the open days of the period have, in order."""
    return np.unique(tt._weekdays(axis, lay.period)[lay.open])


def fit_local_times(train, groups: dict[str, np.ndarray], epsilon: float, seed: int = 0,
                    lay: tt.Layout | None = None) -> tt.TripTimes:
    """The time model from the reports of the trajectories of each group (``groups``, from
    :func:`assign`: sorted indices into ``train``, a TraceSet or chunks of one: data/chunks.py), each
    one report at ``epsilon`` (module docstring), on the layout ``lay`` (:func:`layout_of`'s by
    default). The ledger entry is the caller's: these reports are one branch of LDPTrace's round 2."""
    data = chunks(train)
    lay = layout_of(train) if lay is None else lay
    sizes = domains(lay, train.time)
    names = list(sizes)
    rows = zip(*(data.own_rows(np.asarray(groups.get(name, ()), np.int64)) for name in names))
    own = [({name: r[0] for name, r in zip(names, chunk)}, c) for c, chunk in enumerate(rows)]
    counts = data.total(report_counts, lay, epsilon, seed, tt.speed_edges(train.bounds), own=own)
    est, sd, reports = {}, {}, {}
    for name, d in sizes.items():
        reports[name] = int(np.asarray(groups.get(name, ())).size)
        est[name], sd[name] = estimates(counts[name], reports[name], d, epsilon)
    dates, rho_d = local_dates(est, sd, reports, lay, train.time)
    hours, rho_h = local_hours(est["hour"], sd["hour"], lay, train.time)
    coarse = norm_sub(est["speed"])
    kept = np.where(est["duration"] > tt.KEEP_ABOVE * sd["duration"], est["duration"], 0.0)
    return tt.TripTimes(dates, hours, expand_speeds(coarse), KINDS, lay.period, tt.speed_edges(train.bounds),
                        1.0 - (1.0 - rho_d) * (1.0 - rho_h), tt.duration_cap(kept, DURATION_EDGES),
                        train.info.get("calendar"))


def domains(lay: tt.Layout, axis) -> dict[str, int]:
    """How many values each report of :data:`GROUPS` ranges over (public: the layout's)."""
    return {"week": int(open_weeks(lay, axis).size), "weekday": int(open_weekdays(lay, axis).size), "hour": tt.HOURS,
            "speed": (ROW_GROUPS.max() + 1) * (tt.SPEED_BINS // SPEED_PAIR), "duration": DURATION_EDGES.size - 1}


def report_counts(train: TraceSet, own: tuple, lay: tt.Layout, epsilon: float, seed: int = 0,
                  edges: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The counting step of the time reports on one chunk of trajectories (sums over chunks add up):
    for each group, of its trajectories ``own[0][name]`` (rows of the chunk, the chunk ``own[1]``), how
    many hold each value where the report is OUE (the collector's tally is drawn in law from the sums,
    :func:`estimates`), or how many reports name each value where it is k-RR (:func:`sent_counts`:
    each report randomized where its trajectory is, as its user would)."""
    mine, chunk = own
    values = report_values(train, lay, edges)
    return {name: sent_counts(values[name][np.asarray(mine.get(name, ()), np.int64)], d, epsilon, seed, chunk)
            for name, d in domains(lay, train.time).items()}


def protocol(d: int, epsilon: float) -> str:
    """The report's protocol for ``d`` values: 'none' (one value: a report says nothing), 'krr' where
    k-ary randomized response estimates with less variance (randomized_response.beats_unary), else 'oue'."""
    return "none" if d < 2 else ("krr" if rr.beats_unary(d, epsilon) else "oue")


def sent_counts(values: np.ndarray, d: int, epsilon: float, seed: int = 0, chunk: int = 0) -> np.ndarray:
    """How many of the reports of ``values`` (in 0 .. d - 1, -1 no value) the collector counts for each
    value: OUE's reports as the values they hold (their bits are drawn in law from the sums); k-RR's as
    they are sent, each drawn by OpenDP where its trajectory is (a report of no value as one of a value
    drawn from the seed's stream, a stream of its own for each ``chunk`` after the first: public
    randomness, so a partitioned set's stand-ins are not one file's)."""
    values = np.asarray(values, np.int64)
    if protocol(d, epsilon) != "krr" or values.size == 0:
        return tt.held(values, d)
    none = values < 0
    if none.any():
        values = values.copy()
        key = (STREAM, 1) if chunk == 0 else (STREAM, 1, int(chunk))
        values[none] = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=key)).integers(
            0, d, int(none.sum()))
    return np.bincount(rr.randomized_response(values, d, epsilon), minlength=d)


def estimates(counts: np.ndarray, reports: int, d: int, epsilon: float) -> tuple[np.ndarray, float]:
    """The collector's unbiased estimates of how many of ``reports`` reports hold each value, from the
    summed :func:`sent_counts`, and the sd of their noise at a value no report holds: OUE's tally
    drawn in law (privacy/oue.py), or k-RR's counts inverted (privacy/randomized_response.py)."""
    kind = protocol(d, epsilon)
    if kind == "none" or reports == 0:
        return np.full(int(d), float(reports)) if d == 1 else np.zeros(int(d)), 0.0
    if kind == "krr":
        return rr.estimate(counts, reports, d, epsilon), rr.noise_sd(reports, d, epsilon)
    return oue.estimate(oue.tally(counts, reports, epsilon), reports, epsilon), oue.noise_sd(reports, epsilon)


def local_dates(est: dict, sd: dict, reports: dict, lay: tt.Layout, axis) -> tuple[np.ndarray, float]:
    """Each day's weight (the period's) and the share of noise in them: the weekday and week reports'
    shares (:func:`margin`), each open day their quasi-independent product (:func:`quasi_independent`)."""
    day_weekday, day_week = (cells[lay.open] for cells in day_cells(lay, axis))
    shares, rho = [], []
    # the weeks' threshold 0 (negatives 0): the period's first and last weeks hold its first and last
    # trips, and a tail week's share is often under two sds (the cabs' last, 3.2 % against 2 sds of
    # 4.4 %: thresholded, its Monday's 3 % went to other days); a week with no trip inside the period
    # (a gap in collection) keeps its noise's positive part, 0.4 sd in expectation
    for name, which, above in (("weekday", day_weekday, tt.KEEP_ABOVE), ("week", day_week, 0.0)):
        s, r = margin(est[name], sd[name], reports[name], np.bincount(which).astype(np.float64), above)
        shares.append(s)
        rho.append(r)
    dates = np.zeros(lay.period)
    dates[lay.open] = quasi_independent(shares[0], shares[1], day_weekday, day_week)
    return dates, 1.0 - (1.0 - rho[0]) * (1.0 - rho[1])


def day_cells(lay: tt.Layout, axis) -> tuple[np.ndarray, np.ndarray]:
    """Every day of the period's weekday among :func:`open_weekdays` and its week among
    :func:`open_weeks` (-1 on a day the calendar closes): the values of a report of the day."""
    weekday = np.searchsorted(open_weekdays(lay, axis), tt._weekdays(axis, lay.period))
    week = np.searchsorted(open_weeks(lay, axis), weeks_of(lay, axis))
    return np.where(lay.open, weekday, -1), np.where(lay.open, week, -1)


def weeks_of(lay: tt.Layout, axis) -> np.ndarray:
    """Each day of the period's week (Monday to Sunday), 0 the week of its first day."""
    return (np.arange(lay.period) + tt._weekdays(axis, 1)[0]) // 7


def open_weeks(lay: tt.Layout, axis) -> np.ndarray:
    """The weeks of the period (:func:`weeks_of`) that hold an open day, in order."""
    return np.unique(weeks_of(lay, axis)[lay.open])


def margin(estimate: np.ndarray, sd: float, reports: int, days_of: np.ndarray,
           above: float = tt.KEEP_ABOVE) -> tuple[np.ndarray, float]:
    """One margin's shares (the weekdays' or the weeks') and their share of noise, from its reports'
    estimates: under ``above`` sds 0 (a weekend no trip starts on), fallen back toward each value's
    number of open days as far as noise fills them (its expected kept mass, privacy/noise.py)."""
    if days_of.size == 1:                   # one value: all of them (its reports say nothing)
        return np.ones(1), 0.0
    if reports == 0:
        return days_of / days_of.sum(), 1.0
    kept = np.where(estimate > above * sd, estimate, 0.0)
    rho = share(noise_mass(kept, sd, above * sd, "normal"), kept.sum())
    shares = toward_uniform(kept, days_of, rho)
    return (shares / shares.sum() if shares.sum() > 0 else days_of / days_of.sum()), rho


def quasi_independent(rows: np.ndarray, cols: np.ndarray, row: np.ndarray, col: np.ndarray,
                      iterations: int = 200, tol: float = 1e-12) -> np.ndarray:
    """The weights of the cells (``row[i]``, ``col[i]``) (the open days: a day the calendar closes is
    no cell) whose margins are the shares ``rows`` and ``cols``, each cell a product a_row b_col: the
    maximum-likelihood fit of the quasi-independence model by iterative proportional fitting (Bishop,
    Fienberg and Holland, Discrete Multivariate Analysis, 1975, §5.2). A margin of 0 empties its cells;
    summing to 1."""
    if row.size == 0:                       # no open day
        return np.zeros(0)
    x = np.ones(row.size)
    for _ in range(iterations):
        before = x
        x = x * _ratio(rows, np.bincount(row, x, rows.size))[row]
        x = x * _ratio(cols, np.bincount(col, x, cols.size))[col]
        if np.abs(x - before).max() <= tol:
            break
    return x / x.sum() if x.sum() > 0 else np.full(row.size, 1.0 / row.size)


def _ratio(target: np.ndarray, now: np.ndarray) -> np.ndarray:
    return np.divide(target, now, out=np.zeros_like(now), where=now > 0)


def local_hours(estimate: np.ndarray, sd: float, lay: tt.Layout, axis) -> tuple[np.ndarray, float]:
    """The hours (one kind's row) and their share of noise from the hour reports' estimates (module
    docstring)."""
    hours = smooth_hours(estimate)
    feasible = np.zeros(tt.HOURS)
    feasible[np.unique(tt._hour_of_instant(axis))] = 1.0
    # the smoothed noise of 24 estimates: 1 + 2 HARMONICS of its 24 dimensions, each estimate's sd that
    # share of its own; the mass it keeps, clipped at 0
    smoothed = sd * np.sqrt((1 + 2 * HARMONICS) / tt.HOURS)
    rho = share(tt.HOURS * kept_normal(smoothed), (hours * feasible).sum())
    # smoothing spreads the noise over every hour, so where it is half the mass or more the curve's
    # shape is the noise's (on a few hundred ships, worse than the uniform guess): the guess alone
    rho = 1.0 if rho >= NOISE_ALONE else rho
    return toward_uniform(hours * feasible, feasible, rho)[None, :], rho
