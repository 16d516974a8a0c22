"""LDPTrace's model of its trips' times, in the local model (synth/trip_times.py's, reported by the
users themselves): a public random share of the trajectories reports when its trip starts or how
fast it goes, instead of where it goes.

Why a share of the users and not of the budget. In the local model every user's report carries its
own noise, whose variance grows as 1 / epsilon^2 at small epsilon (OUE: 4 e^epsilon / (e^epsilon -
1)^2 per user). Spending a share s of every user's budget on the time would multiply the time's
noise variance by about 1 / s^2; giving the whole budget to a share s of the users multiplies it by
1 / s (Wang et al., USENIX Security 2017, and the sampling-then-reporting of the LDP literature). On
the 200 cabs (72,467 trajectories, epsilon 1) a start histogram at 5 % of every user's budget has a
noise of about 10,800 a bin against 3,000 trips in an hour's bin; from 15 % of the users at the
whole budget, about 220. The mobility model loses the same share of its reports.

The protocol. Before any report, the collector draws which trajectories report what, from the
method's seed, independently of the data (public: how many reports a user sends then says nothing
of their trajectory). Every trajectory reports its length (LDPTrace's round 1, unchanged). Of the
``time_share`` of the trajectories, half report their start and half their speed, each as one OUE
report at the whole of round 2's budget, (1 - length_share) epsilon; the rest report their mobility
as LDPTrace does. Either way a trajectory spends (1 - length_share) epsilon in round 2.

- **start**: weekday or weekend by the hour of the trip's first point (48 values). Choice: always
  two day kinds here, where the central model takes the day of the week over two weeks or more:
  OUE's noise is the same in every bin whatever the domain, so seven days would divide each hour's
  trips by 2.5 under the same noise. The estimate of each day kind's 24 hours is smoothed onto the
  day's first :data:`HARMONICS` harmonics (a least-squares fit, negatives set to 0: post-
  processing); a day kind whose estimated total is under :data:`~locsynth.synth.trip_times.KEEP_ABOVE`
  of its noise's standard deviations is dropped (the weekend of a weekday-only set). The hours then
  fall back toward uniform as the central model's do (synth/trip_times.py), as far as the smoothed
  noise fills them (its expected kept mass, privacy/noise.py, against theirs), and to the uniform
  guess alone where that is half their mass or more: smoothing spreads the noise over every hour,
  so the curve's shape is then the noise's (choice; measured in docs/data.md).
- **speed**: the trip's speed by its path's length on a coarse grid, :data:`ROW_GROUPS` (0-3 km, 3-8
  km, beyond) by pairs of the speed bins of the set's bounds (trip_times.speed_edges; 30 values); the
  estimates through Norm-Sub
  (collector.norm_sub: setting negatives to 0 kept every empty cell's positive noise, a floor
  that slowed the median synthetic step from 30 to 22 km/h on the 200 cabs), each coarse cell
  spread evenly over the fine cells it covers, so that the model samples as the central one.
"""

from __future__ import annotations

import numpy as np

from ...data.traces import TraceSet
from ...privacy import oue
from ...privacy.noise import kept_normal, share, toward_uniform
from .. import trip_times as tt
from ...data.chunks import chunks
from .collector import estimates, norm_sub

#: harmonics of the day kept when smoothing the estimated hours of starts (periods 24, 12, 8 hours)
HARMONICS = 3
#: the coarse row of each of trip_times.LENGTH_EDGES' rows: 0-3 km, 3-8 km, 8 km and beyond
ROW_GROUPS = np.array([0, 0, 0, 1, 1, 2, 2])
#: fine speed bins in one coarse bin
SPEED_PAIR = 2
#: the seeded stream that assigns the trajectories to their reports (public, data-independent)
STREAM = 4646
#: the day kinds of the local start model: weekday or weekend
KINDS = 2
#: the share of noise in the smoothed starts from which the uniform guess alone is kept
NOISE_ALONE = 0.5


def assign(n: int, share: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which of ``n`` trajectories report their start, their speed and their mobility: a random
    ``share`` of them (rounded) for the times, split in two halves, the rest for the mobility."""
    order = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(STREAM,))).permutation(int(n))
    k = int(round(share * n))
    return np.sort(order[:k // 2]), np.sort(order[k // 2:k]), np.sort(order[k:])


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


def smooth_hours(estimate: np.ndarray) -> np.ndarray:
    """The least-squares fit of one day's 24 hourly estimates on a constant and the first
    :data:`HARMONICS` harmonics of the day, negatives set to 0."""
    h = np.arange(tt.HOURS) * 2 * np.pi / tt.HOURS
    basis = np.column_stack([np.ones(tt.HOURS)] + [f(k * h) for k in range(1, HARMONICS + 1) for f in (np.cos, np.sin)])
    return np.maximum(basis @ np.linalg.lstsq(basis, estimate, rcond=None)[0], 0.0)


def noise_sd(reports: int, epsilon: float) -> float:
    """The standard deviation of OUE's estimate of a value no report holds (privacy/oue.py)."""
    q = oue.flip_probability(epsilon)
    return float(np.sqrt(reports * q * (1 - q)) / (oue.P - q))


def fit_local_times(train, starting: np.ndarray, speeding: np.ndarray, epsilon: float) -> tt.TripTimes:
    """The time model from the start reports of the trajectories ``starting`` and the speed reports
    of ``speeding`` (sorted indices into ``train``, a TraceSet or chunks of one: data/chunks.py), each
    one OUE report at ``epsilon`` (module docstring).
    The ledger entry is the caller's: these reports are one branch of LDPTrace's round 2."""
    data = chunks(train)
    _, period = tt.kinds_of(data.total(tt.start_days))
    edges = tt.speed_edges(train.bounds)
    own = list(zip(data.own_rows(starting), data.own_rows(speeding)))
    starts, speeds = data.total(report_counts, period, edges, own=own)
    est = estimates(starts, starting.size, epsilon).reshape(KINDS, tt.HOURS)
    sd = noise_sd(starting.size, epsilon)
    floor = tt.KEEP_ABOVE * sd * np.sqrt(tt.HOURS)
    kept = [day.sum() > floor for day in est]
    hours = np.vstack([smooth_hours(day) if keep else np.zeros(tt.HOURS) for day, keep in zip(est, kept)]).ravel()
    # the smoothed noise of a day's 24 estimates: 1 + 2 HARMONICS of its 24 dimensions, each estimate's sd that
    # share of its own; the mass it keeps, clipped at 0, in the hours of every day kind kept
    smoothed = sd * np.sqrt((1 + 2 * HARMONICS) / tt.HOURS)
    uniform = tt.uniform_starts(KINDS, period, train.time)
    rho = share(sum(kept) * tt.HOURS * kept_normal(smoothed), hours[uniform > 0].sum())
    # smoothing spreads the noise over every hour, so where it is half the mass or more the curve's
    # shape is the noise's (on a few hundred ships, worse than the uniform guess): the guess alone
    rho = 1.0 if rho >= NOISE_ALONE else rho
    coarse = norm_sub(estimates(speeds, speeding.size, epsilon))
    return tt.TripTimes(toward_uniform(hours, uniform, rho), expand_speeds(coarse), KINDS, period, edges, rho)


def report_counts(train: TraceSet, own: tuple, period: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counting step of the time reports on one chunk: how many of its trajectories ``own[0]``
    (rows) report each start bin, and of ``own[1]`` each coarse speed cell in the bins of ``edges``
    (the reports' values: :func:`fit_local_times`)."""
    (starting,), (speeding,) = own
    starts = tt.start_bins(train, KINDS, period)[starting]
    speeds = coarse_speed_cells(tt.speed_cells(train, edges)[speeding])
    return (tt.held(starts, KINDS * tt.HOURS),
            tt.held(speeds, (ROW_GROUPS.max() + 1) * (tt.SPEED_BINS // SPEED_PAIR)))
