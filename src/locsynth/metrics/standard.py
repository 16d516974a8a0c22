"""The field's standard utility suite for trajectory synthesis: the metrics AdaTrace (Gursoy et al.,
CCS 2018, §6) introduced and PrivTrace (Wang et al., USENIX Security 2023, §6.1) and LDPTrace
(Du et al., VLDB 2023, §6) report, in three *flavours* (REFERENCE.md, "The standard
trajectory-synthesis metrics"; docs/benchmark.md lists every difference):

- ``adatrace`` (the default, for tables beside the papers'): what the AdaTrace authors' own
  evaluation (git-disl/AdaTrace ``Evaluation.java`` with ``Experiments.java``'s defaults) computes
  on the same points, its slips included. It reads the points as their Java does: the raw
  coordinates, x = longitude and y = latitude in degrees (Point.java:4-5), Euclidean distances in
  degrees; their grid cells (grid_paths.py), interpolation, Kendall tau, buckets and query test.
  Checked against their Java on the cabs and on random sets: equal to 2e-15, but where patterns
  tie at the top-100 cutoff and their HashMap picks among them (docs/benchmark.md). Density and
  hotspot errors are not in their code (PrivTrace's and LDPTrace's): computed on the same grid
  with the ``corrected`` formulas.
- ``corrected``: locsynth's reading of the same definitions with their code's slips fixed:
  planar metres (equirectangular around the mean latitude), points on a grid line in the lower
  cell whatever the rounding, points outside the box in the nearest edge cell, a trace's path the
  cells its segments cross, tau-b, buckets between the real minimum and maximum.
- ``ldptrace``: what the LDPTrace authors' evaluation (zealscott/LDPTrace ``main.py``,
  ``experiment.py``, ``utils.py``) computes: one 6 x 6 grid for every metric, Jensen-Shannon with
  1e-8 smoothing, square queries counting points, hotspot NDCG on the paths' cells. Checked
  against their Python functions to 8e-16 (the query error in distribution).

Every flavour reads the traces' coordinates (a location's representative point, Space.lat/lon);
the grids are laid over the *real* (reference) set's bounding box; each trace of a set is one
trajectory; generalized events (anonymizers' location sets) have no point and are left out.

=====================  ===========================================================  ==============
key                    what the papers call it                                      best
=====================  ===========================================================  ==============
query_error            Query AvRE: 200 range-count queries                          0
density_error          Density error: JSD of points over the 6 x 6 grid             0
trip_error             Trip error: JSD of (start cell, end cell), 6 x 6 grid         0
length_error           Length error: JSD of travelled distance, 20 buckets          0
diameter_error         Diameter error: JSD of the largest point-to-point distance    0
pattern_f1             Frequent-pattern F1 of the top-100 cell runs (2 to 8 cells)  1
pattern_support_error  Frequent-pattern AvRE of the real top-100 supports          0
kendall_tau            Location coverage Kendall tau, 15 x 15 grid                 1
hotspot_error          1 - NDCG of the real top-5 hotspot cells (LDPTrace)         0
=====================  ===========================================================  ==============

Choices common to the flavours:

- JSD = (KL(P||M) + KL(Q||M)) / 2 with the natural logarithm, as both authors' codes (maximum
  ln 2 = 0.693); ``jsd_base=2`` gives bits (maximum 1).
- Query answers and pattern supports are counts. A synthetic set of another size than the real
  one has its counts scaled by n_real / n_synthetic before the errors (``scale_counts``; the
  identity at equal size, the papers' and ``locsynth benchmark``'s setting, where every flavour
  equals its authors' code); ``meta['standard']['scaled']`` says the factor.
- Top-k ties (patterns, hotspots) are broken by the smaller cell code (their Java takes the tied
  patterns in HashMap order, which follows identity hash codes and is not reproducible;
  LDPTrace's Python by first occurrence, which the ``ldptrace`` flavour follows).
- Where their code divides 0 by 0 (AdaTrace's pattern F1 with no common pattern,
  Evaluation.java:535-537) or stops (LDPTrace's), the F1 is 0.
- Their query centres come from an unseeded random generator; ours are seeded (``seed``), so the
  query error equals theirs in distribution, and for the same centres exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np
from numba import njit, prange

from ..core.errors import InputError, did_you_mean
from ..data.traces import TraceSet
from . import grid_paths as gp
from . import location_queries
from .grid_paths import Paths
from .groups import GroupResult, Metric, MetricGroup, Option, flag, row
from .trips import jensen_shannon

EARTH_RADIUS_M = 6_371_008.8
#: the flavours, the default first
FLAVOURS = ("adatrace", "corrected", "ldptrace")
#: Java's Double.MIN_VALUE, AdaTrace's start for the largest length (Evaluation.java:43, 95)
JAVA_MIN_VALUE = 5e-324
#: LDPTrace's smoothing of the Jensen-Shannon divergence (utils.py, kl_divergence)
LDPTRACE_SMOOTHING = 1e-8


def check_flavour(name) -> str:
    """``name`` if it is a flavour, else one clear InputError naming the valid ones."""
    if name not in FLAVOURS:
        raise InputError(f"standard_flavour must be one of {', '.join(FLAVOURS)}, got {name!r}{did_you_mean(name, FLAVOURS)}")
    return name


@dataclass(frozen=True)
class Settings:
    """The suite's parameters, with the authors' defaults (Experiments.java, LDPTrace's parse.py).

    ``flavour`` picks how the values are computed (module docstring). ``coverage_grid`` is the
    Kendall tau's grid; the ldptrace flavour, as LDPTrace, uses ``grid`` for every metric.
    ``radius_divisor``: circle radius = the larger side of the box / it (AdaTrace's Query.java:
    3 for taxis and unnamed data); ``square_factor``: LDPTrace's square side = sqrt(box area /
    it).
    """

    flavour: str = "adatrace"
    queries: int = 200
    radius_divisor: float = 3.0
    square_factor: float = 9.0
    sanity: float = 0.01
    grid: int = 6
    coverage_grid: int = 15
    buckets: int = 20
    pattern_lengths: tuple[int, int] = (2, 8)
    top_patterns: int = 100
    hotspots: int = 5
    jsd_base: float = np.e
    scale_counts: bool = True
    seed: int = 0

    def __post_init__(self):
        check_flavour(self.flavour)


@dataclass(frozen=True)
class Points:
    """A set's trajectories as planar points: ``x``, ``y`` and ``offsets`` (n_traces + 1); where
    they are a space's locations, also every point's location ``loc`` and the locations'
    coordinates ``at`` (what is a function of a point's coordinates is then computed once a
    location)."""

    x: np.ndarray
    y: np.ndarray
    offsets: np.ndarray
    loc: np.ndarray | None = field(default=None, repr=False, compare=False)
    at: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    @property
    def n_traces(self) -> int:
        return self.offsets.size - 1

    @property
    def trace(self) -> np.ndarray:
        """The trace of every point."""
        return np.repeat(np.arange(self.n_traces), np.diff(self.offsets))


def planar(space) -> tuple[np.ndarray, np.ndarray]:
    """The locations' points in metres: equirectangular around the mean latitude."""
    lat, lon = np.radians(np.asarray(space.lat, np.float64)), np.radians(np.asarray(space.lon, np.float64))
    return EARTH_RADIUS_M * lon * np.cos(lat.mean() if lat.size else 0.0), EARTH_RADIUS_M * lat


def degrees(space) -> tuple[np.ndarray, np.ndarray]:
    """The locations' raw coordinates as both authors' codes read them: x = longitude, y = latitude
    (AdaTrace's Point.java:4-5), in degrees."""
    return np.asarray(space.lon, np.float64), np.asarray(space.lat, np.float64)


def points(ts: TraceSet, xy: tuple[np.ndarray, np.ndarray] | None = None) -> Points:
    """The trajectories of ``ts`` (one per trace, events in time order), generalized events left out,
    empty traces dropped."""
    x, y = xy if xy is not None else planar(ts.space)
    keep = ts.loc >= 0
    counts = np.bincount(ts.user[keep], minlength=ts.n_traces)
    counts = counts[counts > 0]
    loc = ts.loc[keep]
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return Points(x[loc], y[loc], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), loc, (x, y))


def locations(p: Points) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Every point's location and the locations' coordinates: the space's (:func:`points`), or, for
    points given by their coordinates alone, their distinct coordinate pairs."""
    if p.loc is not None:
        return p.loc, p.at
    xy, loc = np.unique(np.column_stack([p.x, p.y]), axis=0, return_inverse=True)
    return loc.ravel(), (xy[:, 0].copy(), xy[:, 1].copy())


def bounding_box(p: Points) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of the points (Main.java, getDataBoundaries)."""
    if p.x.size == 0:
        raise InputError("the reference set has no point to lay the grids over")
    return float(p.x.min()), float(p.y.min()), float(p.x.max()), float(p.y.max())


# -- Jensen-Shannon ----------------------------------------------------------------------------------

def jsd(p: np.ndarray, q: np.ndarray, base: float = np.e) -> float:
    """Jensen-Shannon divergence (KL(P||M) + KL(Q||M)) / 2, M = (P + Q) / 2, in log ``base``, of
    two count or probability vectors (each normalised)."""
    return jensen_shannon(p, q, base=base)


def java_jsd(p: np.ndarray, q: np.ndarray, base: float = np.e) -> float:
    """AdaTrace's calcJSD (Evaluation.java:502-522) of the shares as given, not renormalised: a
    share vector that sums to less than 1 (values out of the buckets) stays so."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = (p + q) / 2.0

    def kl(a):
        nz = a != 0.0
        return float((np.log(a[nz] / m[nz]) * a[nz]).sum())

    return (0.5 * kl(p) + 0.5 * kl(q)) / np.log(base)


def smoothed_jsd(p: np.ndarray, q: np.ndarray, base: float = np.e) -> float:
    """LDPTrace's ``jensen_shannon_distance`` (utils.py): KL terms log((a + 1e-8) / (m + 1e-8)) a,
    of the probability vectors as given."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    m = (p + q) / 2

    def kl(a):
        return float((np.log((a + LDPTRACE_SMOOTHING) / (m + LDPTRACE_SMOOTHING)) * a).sum())

    return (0.5 * kl(p) + 0.5 * kl(q)) / np.log(base)


def shares(counts: np.ndarray) -> np.ndarray:
    """Counts divided by their sum (AdaTrace's TripDistribution, LDPTrace's main.py)."""
    counts = np.asarray(counts, np.float64)
    return counts / counts.sum()


# -- query error -----------------------------------------------------------------------------------

def queries(box, settings: Settings) -> tuple[np.ndarray, np.ndarray, float]:
    """AdaTrace's circles (Query.java:17-45): centres uniform in the box (seeded here, unseeded
    there), radius = the larger side of the box / ``radius_divisor``."""
    x0, y0, x1, y1 = box
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(23,)))
    u = rng.random((settings.queries, 2))
    return u[:, 0] * (x1 - x0) + x0, u[:, 1] * (y1 - y0) + y0, max(x1 - x0, y1 - y0) / settings.radius_divisor


def sqrt_threshold(r: float) -> float:
    """The largest double d with sqrt(d) <= r: ``d <= threshold`` decides ``Math.sqrt(d) <= r``
    exactly as the Java does (sqrt is correctly rounded and monotone), without a square root."""
    d = np.float64(r) * np.float64(r)
    while np.sqrt(d) > r:
        d = np.nextafter(d, -np.inf)
    while np.sqrt(np.nextafter(d, np.inf)) <= r:
        d = np.nextafter(d, np.inf)
    return float(d)


def repeats_a_point(p: Points) -> np.ndarray:
    """Per trace: whether two consecutive points are the same (then Query.java:57 answers every
    query for it)."""
    same = np.zeros(p.x.size, bool)
    same[1:] = (p.x[1:] == p.x[:-1]) & (p.y[1:] == p.y[:-1])
    same[p.offsets[:-1]] = False
    return np.add.reduceat(same, p.offsets[:-1]) > 0 if p.n_traces else np.zeros(0, bool)


def query_answers(p: Points, cx: np.ndarray, cy: np.ndarray, r: float, flavour: str) -> np.ndarray:
    """The number of traces answering each circle: AdaTrace's Query.java (adatrace) or every trace
    with a point or a segment within r (corrected)."""
    adatrace = flavour == "adatrace"
    if not p.n_traces:
        return np.zeros(cx.size, np.int64)
    always = repeats_a_point(p) if adatrace else np.zeros(p.n_traces, bool)
    loc, (lx, ly) = locations(p)
    return location_queries.answers(loc, lx, ly, p.offsets, always, cx, cy,
                                    sqrt_threshold(r) if adatrace else r * r, adatrace)


def relative_error(real: np.ndarray, synthetic: np.ndarray, floor: float) -> float:
    """Mean over the queries of |syn - real| / max(real, floor) (Evaluation.java:157-184)."""
    return float((np.abs(synthetic - real) / np.maximum(real, floor)).mean())


def _memo(memo: dict | None, key, compute: Callable[[], object]):
    """``compute()`` once per ``key`` in ``memo`` (a real set's :attr:`Features.memo`), or every time
    without one."""
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def query_error(real: Points, synthetic: Points, box, settings: Settings = Settings(), *,
                memo: dict | None = None) -> float:
    """Query AvRE (AdaTrace §6.2) with the circles of :func:`queries`: mean over the queries of
    |syn - real| / max(real, sanity x n_real), synthetic answers scaled by n_real / n_syn. A trace
    answers as AdaTrace's Query.java decides (adatrace flavour) or when a point or a segment comes
    within the radius (corrected). ``memo``: where the real answers are kept (they do not depend on
    the synthetic set)."""
    cx, cy, r = queries(box, settings)
    a = _memo(memo, ("query_answers", box, settings),
              lambda: query_answers(real, cx, cy, r, settings.flavour).astype(np.float64))
    b = query_answers(synthetic, cx, cy, r, settings.flavour) * _scale(real, synthetic, settings)
    return relative_error(a, b, settings.sanity * real.n_traces)


def squares(box, settings: Settings) -> tuple[np.ndarray, ...]:
    """LDPTrace's square queries (experiment.py, SquareQuery): centres uniform in the (widened)
    box, side sqrt(box area / square_factor); (left, right, bottom, top) of each."""
    x0, y0, x1, y1 = box
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(26,)))
    u = rng.random((settings.queries, 2))
    cx, cy = u[:, 0] * (x1 - x0) + x0, u[:, 1] * (y1 - y0) + y0
    half = np.sqrt((x1 - x0) * (y1 - y0) / settings.square_factor) / 2
    return cx - half, cx + half, cy - half, cy + half


@njit(parallel=True, cache=True)
def _points_in_squares(x, y, left, right, bottom, top):
    """For each closed square: the points inside (experiment.py, SquareQuery.point_query)."""
    out = np.zeros(left.size, np.int64)
    for q in prange(left.size):
        count = 0
        for i in range(x.size):
            count += left[q] <= x[i] <= right[q] and bottom[q] <= y[i] <= top[q]
        out[q] = count
    return out


def resampled_points(paths: Paths, box, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """LDPTrace's ``convert_grid_to_raw`` of the real paths (main.py, trajectory.py:58-61): a uniform
    point in every cell of every path, two in a one-cell path; what their real query answers count."""
    x_lo, x_hi, y_lo, y_hi = gp.ldptrace_cell_bounds(box, paths.k)
    lengths = np.diff(paths.offsets)
    cells = np.repeat(paths.cells, np.repeat(np.where(lengths == 1, 2, 1), lengths))
    u = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(27,))).random((cells.size, 2))
    return x_lo[cells] + u[:, 0] * (x_hi[cells] - x_lo[cells]), y_lo[cells] + u[:, 1] * (y_hi[cells] - y_lo[cells])


def ldptrace_query_error(real_paths: Paths, synthetic: Points, box, settings: Settings, scale: float, *,
                         memo: dict | None = None) -> float:
    """LDPTrace's point query AvRE (experiment.py, calculate_point_query): points in squares; the
    real answers count points resampled in the real paths' cells (main.py: orig_sampled), the
    synthetic ones its own points; sanity bound 1 % of the resampled real points. ``memo``: where
    the real answers are kept."""
    sq = squares(box, settings)

    def real_answers():
        x, y = resampled_points(real_paths, box, settings.seed)
        return _points_in_squares(x, y, *sq).astype(np.float64), x.size

    a, n_points = _memo(memo, ("square_answers", box, settings), real_answers)
    b = _points_in_squares(synthetic.x, synthetic.y, *sq) * scale
    return relative_error(a, b, settings.sanity * n_points)


# -- distributions over a grid -----------------------------------------------------------------------

def density(cell: np.ndarray, k: int) -> np.ndarray:
    """Points (or path cells) per cell of the k x k grid."""
    return np.bincount(cell, minlength=k * k).astype(np.float64)


def trip_distribution(paths: Paths) -> np.ndarray:
    """(start cell, end cell) counts of the paths, flattened (k^2 x k^2)."""
    k2 = paths.k * paths.k
    start, end = paths.cells[paths.offsets[:-1]], paths.cells[paths.offsets[1:] - 1]
    return np.bincount(start * k2 + end, minlength=k2 * k2).astype(np.float64)


@njit(cache=True)
def _coverage(cells, offsets, n_cells):
    counts = np.zeros(n_cells)
    seen = np.full(n_cells, -1)
    for trace in range(offsets.size - 1):
        for c in cells[offsets[trace]:offsets[trace + 1]]:
            if seen[c] != trace:
                seen[c] = trace
                counts[c] += 1
    return counts


def coverage(paths: Paths) -> np.ndarray:
    """Per cell, the number of paths through it (Evaluation.java:458-474, passesThrough)."""
    return _coverage(paths.cells, paths.offsets, paths.k * paths.k)


def kendall_tau(a: np.ndarray, b: np.ndarray, variant: str = "b") -> float:
    """Kendall's tau between the real counts ``a`` and the synthetic ``b`` over all pairs i < j.

    - ``"b"``: tau-b, ties in either set corrected for (1 for equal counts).
    - ``"adatrace"``: Evaluation.java:477-498: pairs tied in ``a`` are skipped; a pair tied in
      ``b`` counts as discordant when a_i > a_j and as concordant when a_i < a_j; the sum is divided
      by all n (n - 1) / 2 pairs (a set against itself scores below 1 whenever two cells tie).
    - ``"ldptrace"``: experiment.py, calculate_coverage_kendall_tau: pairs tied in ``a`` skipped, a
      pair tied in ``b`` discordant, divided by n (n - 1) / 2.
    """
    if variant not in ("b", "adatrace", "ldptrace"):
        raise InputError(f"kendall must be 'b', 'adatrace' or 'ldptrace', got {variant!r}")
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    sa, sb = np.sign(a[:, None] - a[None, :]), np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(a.size, 1)
    sa, sb = sa[upper], sb[upper]
    pairs = a.size * (a.size - 1) / 2
    if variant == "adatrace":
        return float((sa * np.where(sb > 0, 1.0, -1.0)).sum() / pairs)
    if variant == "ldptrace":
        return float(np.where(sb == sa, 1.0, -1.0)[sa != 0].sum() / pairs)
    norm = np.sqrt(float(np.abs(sa).sum()) * float(np.abs(sb).sum()))
    return float((sa * sb).sum()) / norm if norm else 0.0


def hotspot_ndcg(real: np.ndarray, synthetic: np.ndarray, k: int = 5) -> float:
    """LDPTrace §6.1's hotspot query: the synthetic top-k cells, each scored 1 / (its rank among the
    real top-k) when it is one of them, discounted by log2(position + 1); normalised by the ideal
    (the real ranking itself). Only cells with a positive count are hotspots."""
    top_real = list(_top(real, k))
    gains = np.array([1.0 / (top_real.index(c) + 1) if c in top_real else 0.0 for c in _top(synthetic, k)])
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    m = len(top_real)   # fewer than k real hotspots: the ideal ranking has m of them
    ideal = float((discount[:m] / np.arange(1, m + 1)).sum())
    if not ideal:
        return 1.0
    return float((np.pad(gains, (0, k - gains.size)) * discount).sum() / ideal)


def _top(counts: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest counts, ties to the smaller index (only positive counts)."""
    order = np.lexsort((np.arange(counts.size), -counts))
    return order[:k][counts[order[:k]] > 0]


def ldptrace_hotspot_ndcg(real: np.ndarray, synthetic: np.ndarray, k: int = 5) -> float:
    """LDPTrace's calculate_hotspot_ndcg (experiment.py): as :func:`hotspot_ndcg`, but the top k
    are any k cells (empty ones too), ties to the smaller index (a stable sort), and the ideal
    always sums k terms."""
    top_real = list(np.argsort(-np.asarray(real, np.float64), kind="stable")[:k])
    top_syn = np.argsort(-np.asarray(synthetic, np.float64), kind="stable")[:k]
    gains = np.array([1.0 / (top_real.index(c) + 1) if c in top_real else 0.0 for c in top_syn])
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    return float((gains * discount[:gains.size]).sum() / (discount / np.arange(1, k + 1)).sum())


# -- travelled distance and diameter ---------------------------------------------------------------

@njit(cache=True)
def _travelled(x, y, offsets):
    out = np.zeros(offsets.size - 1)
    for k in range(offsets.size - 1):
        total = 0.0
        for i in range(offsets[k], offsets[k + 1] - 1):
            total += np.sqrt((y[i] - y[i + 1]) * (y[i] - y[i + 1]) + (x[i] - x[i + 1]) * (x[i] - x[i + 1]))
        out[k] = total
    return out


def travelled(p: Points) -> np.ndarray:
    """The sum of segment lengths of every trace, added in order (Trajectory.java:100-108)."""
    return _travelled(p.x, p.y, p.offsets)


@njit(parallel=True, cache=True)
def diameters(x, y, offsets):
    """The largest distance between two points of every trace (Trajectory.java:86-98)."""
    n = offsets.size - 1
    out = np.zeros(n)
    for k in prange(n):
        best = 0.0
        for i in range(offsets[k], offsets[k + 1]):
            for j in range(i + 1, offsets[k + 1]):
                d = (y[i] - y[j]) * (y[i] - y[j]) + (x[i] - x[j]) * (x[i] - x[j])
                best = max(best, d)
        out[k] = np.sqrt(best)
    return out


def bucket_jsd(real: np.ndarray, synthetic: np.ndarray, buckets: int, base: float) -> float:
    """JSD of the two value distributions over ``buckets`` equal buckets between the real min and
    max; synthetic values outside fall into the edge buckets, so that too long traces cost."""
    lo, hi = float(real.min()), float(real.max())
    width = (hi - lo) / buckets if hi > lo else 1.0

    def histogram(v):
        return np.bincount(np.clip(((v - lo) / width).astype(np.int64), 0, buckets - 1), minlength=buckets)

    return jsd(histogram(real), histogram(synthetic), base)


def adatrace_bucket_shares(real: np.ndarray, synthetic: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """AdaTrace's buckets (Evaluation.java:41-87 diameters, 93-139 lengths): width = (real max -
    real min) / buckets, bucket i = [i w, (i + 1) w) from 0, not from the minimum; values in no
    bucket (every real value above max - min among them) are dropped, but the shares still divide
    by all traces; the largest starts at Double.MIN_VALUE."""
    lo, hi = float(real.min()), max(float(real.max()), JAVA_MIN_VALUE)
    edges = np.arange(buckets + 1, dtype=np.float64) * ((hi - lo) / buckets)

    def share(v):
        i = np.searchsorted(edges, v, side="right") - 1     # edges[i] <= v < edges[i + 1]
        return np.bincount(i[(i >= 0) & (i < buckets)], minlength=buckets) / float(v.size)

    return share(real), share(synthetic)


def ldptrace_bucket_shares(real: np.ndarray, synthetic: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """LDPTrace's buckets (experiment.py, calculate_diameter_error / calculate_length_error): width
    = (real max - real min) / buckets, bucket i = [i w, i w + w] from 0 and closed, so a value on
    an inner edge counts in both buckets; values in none are dropped; shares divide by the counted
    total (NaN when nothing is counted)."""
    width = (float(real.max()) - float(real.min())) / buckets
    start = np.arange(buckets, dtype=np.float64) * width
    end = start + width

    def share(v):
        counts = ((v[None, :] >= start[:, None]) & (v[None, :] <= end[:, None])).sum(axis=1).astype(np.float64)
        return counts / counts.sum() if counts.sum() else np.full(buckets, np.nan)

    return share(real), share(synthetic)


# -- frequent patterns -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Patterns:
    """Every run of consecutive cells of a set's paths, with its number of occurrences.

    codes : sorted int64 codes in base k^2 + 1 (digits cell + 1, so runs of different lengths differ).
    counts : occurrences of each.
    first : the rank of each one's first occurrence in LDPTrace's order of insertion (by length,
        then trace, then position: experiment.py, mine_patterns).
    """

    codes: np.ndarray
    counts: np.ndarray
    first: np.ndarray

    def support(self, codes: np.ndarray) -> np.ndarray:
        """The occurrences of ``codes`` (0 for a pattern not found)."""
        codes = np.asarray(codes, np.int64)
        if not self.codes.size:
            return np.zeros(codes.size, np.int64)
        at = np.minimum(np.searchsorted(self.codes, codes), self.codes.size - 1)
        return np.where(self.codes[at] == codes, self.counts[at], 0)

    def top(self, k: int, ties: str = "code") -> np.ndarray:
        """The k most frequent codes, ties to the smaller code or (``ties="first"``) the first seen."""
        order = np.lexsort((self.codes if ties == "code" else self.first, -self.counts))
        return self.codes[order[:k]]


def pattern_table(paths: Paths, lengths=(2, 8)) -> Patterns:
    """Occurrences of every run of ``lengths[0]`` .. ``lengths[1]`` consecutive cells of the paths
    (Evaluation.java:186-204, minePatterns)."""
    k, cell = paths.k, paths.cells.astype(np.int64)
    base = k * k + 1
    if base ** lengths[1] >= 2 ** 63:
        raise InputError(f"patterns of {lengths[1]} cells on a {k} x {k} grid do not fit 64-bit codes")
    trace = paths.trace
    codes = []
    code = cell + 1
    for n in range(2, lengths[1] + 1):
        code = code[:-1] * base + (cell[n - 1:] + 1)
        if n >= lengths[0]:
            codes.append(code[trace[:-(n - 1)] == trace[n - 1:]])
    everything = np.concatenate(codes) if codes else np.zeros(0, np.int64)
    return Patterns(*_unique_first_counts(everything))


def _unique_first_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_counts=True)`` as (unique, counts, first):
    numbered by a hash table in order of appearance (pandas' factorize), so that each one's first
    occurrence is where the running maximum of the numbers grows, and only the distinct values are
    sorted (a sort of every run of 2-8 cells took 8 s a set at 870,000 trips, issue 39)."""
    import pandas as pd

    if not values.size:
        return values.astype(np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    ids, uniq = pd.factorize(values, sort=False)
    top = np.maximum.accumulate(ids)
    grows = np.empty(ids.size, bool)
    grows[0] = True
    grows[1:] = top[1:] > top[:-1]
    first = np.flatnonzero(grows)                      # the first occurrence of number 0, 1, 2, ...
    counts = np.bincount(ids, minlength=uniq.size)
    order = np.argsort(uniq, kind="stable")
    return np.asarray(uniq, np.int64)[order], counts[order].astype(np.int64), first[order].astype(np.int64)


def pattern_code(*cells: int, k: int) -> int:
    """The code of the pattern ``cells`` on a k x k grid (:class:`Patterns`)."""
    code = 0
    for c in cells:
        code = code * (k * k + 1) + c + 1
    return code


def common(a: np.ndarray, b: np.ndarray) -> int:
    """The number of patterns of ``b`` that are in ``a``."""
    return int(np.isin(b, a).sum())


def f1(real_top: np.ndarray, synthetic_top: np.ndarray) -> float:
    """F1 of two top-k sets: 2 |A & B| / (|A| + |B|)."""
    total = real_top.size + synthetic_top.size
    return 2 * common(real_top, synthetic_top) / total if total else 1.0


def adatrace_f1(real_top: np.ndarray, synthetic_top: np.ndarray) -> float:
    """AdaTrace's calcF1 (Evaluation.java:524-538): precision c / |B|, recall c / |A|, 2 P R / (P + R);
    0 where theirs divides 0 by 0 (no common pattern)."""
    hits = float(common(real_top, synthetic_top))
    if not hits:
        return 0.0
    precision, recall = hits / synthetic_top.size, hits / real_top.size
    return (2 * precision * recall) / (precision + recall)


def ldptrace_f1(real_top: np.ndarray, synthetic_top: np.ndarray, k: int) -> float:
    """LDPTrace's calculate_pattern_f1_error (experiment.py): precision = recall = c / k with k fixed
    (100) even when a set has fewer patterns; 0 where theirs divides by zero."""
    hits = common(real_top, synthetic_top)
    precision = recall = hits / k
    return 2 * precision * recall / (precision + recall) if hits else 0.0


def support_error(real: Patterns, synthetic: Patterns, real_top: np.ndarray, scale: float = 1.0,
                  divisor: int | None = None) -> float:
    """Sum over the real top patterns of |syn support x scale - real support| / real support,
    divided by their number (Evaluation.java, patternMiningSupport) or by ``divisor`` (LDPTrace's
    calculate_pattern_support divides by k = 100 whatever their number)."""
    if not real_top.size:
        return 0.0
    a, b = real.support(real_top).astype(np.float64), synthetic.support(real_top) * scale
    return float((np.abs(a - b) / a).sum() / (divisor or real_top.size))


# -- the flavours ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Features:
    """One set read by one flavour, computed once: its points, its paths on the pattern grid and on
    the coverage grid, its density, trip distribution, coverage, lengths, diameters, patterns."""

    points: Points
    paths: Paths
    density: np.ndarray
    trips: np.ndarray
    coverage: np.ndarray
    lengths: np.ndarray
    diameters: np.ndarray
    patterns: Patterns
    #: what is computed from this set alone when it is the real one (its query answers), kept
    memo: dict = field(default_factory=dict, compare=False, repr=False)


def _features(p: Points, paths: Paths, coverage_paths: Paths, cell_density: np.ndarray, s: Settings) -> Features:
    return Features(p, paths, cell_density, trip_distribution(paths), coverage(coverage_paths), travelled(p),
                    diameters(p.x, p.y, p.offsets), pattern_table(paths, s.pattern_lengths))


def point_cells(p: Points, cells: Callable, box, k: int) -> np.ndarray:
    """``cells(x, y, box, k)`` of every point, computed once a used location and read by each point
    (a cell is a function of the coordinates)."""
    loc, (lx, ly) = locations(p)
    used = np.flatnonzero(np.bincount(loc, minlength=lx.size))
    at = np.zeros(lx.size, np.int64)
    at[used] = cells(lx[used], ly[used], box, k)
    return at[loc]


def features_adatrace(p: Points, box, s: Settings) -> Features:
    """AdaTrace's reading (grid_paths.adatrace_paths); density over its cells of the points."""
    grid = point_cells(p, gp.adatrace_cells, box, s.grid)
    coverage_grid = point_cells(p, gp.adatrace_cells, box, s.coverage_grid)
    return _features(p, gp.routes(grid, p.offsets, s.grid, True),
                     gp.routes(coverage_grid, p.offsets, s.coverage_grid, True), density(grid, s.grid), s)


def features_corrected(p: Points, box, s: Settings) -> Features:
    """locsynth's reading (grid_paths.corrected_paths); density over its cells of the points."""
    return _features(p, gp.corrected_paths(p.x, p.y, p.offsets, box, s.grid),
                     gp.corrected_paths(p.x, p.y, p.offsets, box, s.coverage_grid),
                     density(gp.corrected_cells(p.x, p.y, box, s.grid), s.grid), s)


def features_ldptrace(p: Points, box, s: Settings) -> Features:
    """LDPTrace's reading (grid_paths.ldptrace_paths) on one grid; density over the paths' cells
    (main.py, get_real_density)."""
    paths = gp.ldptrace_paths(p.x, p.y, p.offsets, box, s.grid)
    return _features(p, paths, paths, density(paths.cells, s.grid), s)


def _scale(real: Points, synthetic: Points, s: Settings) -> float:
    return real.n_traces / synthetic.n_traces if s.scale_counts else 1.0


def scores_adatrace(r: Features, f: Features, box, s: Settings) -> dict[str, float]:
    """The suite as AdaTrace's Evaluation.java computes it (module docstring)."""
    real_top, syn_top = r.patterns.top(s.top_patterns), f.patterns.top(s.top_patterns)
    base = s.jsd_base
    return {
        "query_error": query_error(r.points, f.points, box, s, memo=r.memo),
        "density_error": jsd(r.density, f.density, base),
        "trip_error": java_jsd(shares(r.trips), shares(f.trips), base),
        "length_error": java_jsd(*adatrace_bucket_shares(r.lengths, f.lengths, s.buckets), base),
        "diameter_error": java_jsd(*adatrace_bucket_shares(r.diameters, f.diameters, s.buckets), base),
        "pattern_f1": adatrace_f1(real_top, syn_top),
        "pattern_support_error": support_error(r.patterns, f.patterns, real_top, _scale(r.points, f.points, s)),
        "kendall_tau": kendall_tau(r.coverage, f.coverage, "adatrace"),
        "hotspot_error": 1.0 - hotspot_ndcg(r.density, f.density, s.hotspots),
    }


def scores_corrected(r: Features, f: Features, box, s: Settings) -> dict[str, float]:
    """The suite as locsynth reads the definitions (module docstring)."""
    real_top, syn_top = r.patterns.top(s.top_patterns), f.patterns.top(s.top_patterns)
    base = s.jsd_base
    return {
        "query_error": query_error(r.points, f.points, box, s, memo=r.memo),
        "density_error": jsd(r.density, f.density, base),
        "trip_error": jsd(r.trips, f.trips, base),
        "length_error": bucket_jsd(r.lengths, f.lengths, s.buckets, base),
        "diameter_error": bucket_jsd(r.diameters, f.diameters, s.buckets, base),
        "pattern_f1": f1(real_top, syn_top),
        "pattern_support_error": support_error(r.patterns, f.patterns, real_top, _scale(r.points, f.points, s)),
        "kendall_tau": kendall_tau(r.coverage, f.coverage, "b"),
        "hotspot_error": 1.0 - hotspot_ndcg(r.density, f.density, s.hotspots),
    }


def scores_ldptrace(r: Features, f: Features, box, s: Settings) -> dict[str, float]:
    """The suite as LDPTrace's main.py computes it (module docstring)."""
    k = s.top_patterns
    real_top, syn_top = r.patterns.top(k, ties="first"), f.patterns.top(k, ties="first")
    base, scale = s.jsd_base, _scale(r.points, f.points, s)
    return {
        "query_error": ldptrace_query_error(r.paths, f.points, box, s, scale, memo=r.memo),
        "density_error": smoothed_jsd(shares(r.density), shares(f.density), base),
        "trip_error": smoothed_jsd(shares(r.trips), shares(f.trips), base),
        "length_error": smoothed_jsd(*ldptrace_bucket_shares(r.lengths, f.lengths, s.buckets), base),
        "diameter_error": smoothed_jsd(*ldptrace_bucket_shares(r.diameters, f.diameters, s.buckets), base),
        "pattern_f1": ldptrace_f1(real_top, syn_top, k),
        "pattern_support_error": support_error(r.patterns, f.patterns, real_top, scale, divisor=k),
        "kendall_tau": kendall_tau(r.coverage, f.coverage, "ldptrace"),
        "hotspot_error": 1.0 - ldptrace_hotspot_ndcg(r.density, f.density, s.hotspots),
    }


class Flavour(NamedTuple):
    """How one flavour reads a set and scores a pair (module docstring)."""

    coordinates: Callable        # space -> (x, y)
    box: Callable                # the real points' box -> the grids' box
    features: Callable           # (Points, box, Settings) -> Features
    scores: Callable             # (Features, Features, box, Settings) -> dict
    units: str
    description: str


def data_box(box):
    """The grids' box: the real points' own (Evaluation.java, Main.getDataBoundaries)."""
    return box


FLAVOUR = {
    "adatrace": Flavour(degrees, data_box, features_adatrace, scores_adatrace,
                        "degrees (x = longitude, y = latitude), as AdaTrace's Java reads them",
                        "AdaTrace's Evaluation.java reproduced, its slips included"),
    "corrected": Flavour(planar, data_box, features_corrected, scores_corrected, "metres",
                         "AdaTrace's definitions with their code's slips fixed"),
    "ldptrace": Flavour(degrees, gp.ldptrace_box, features_ldptrace, scores_ldptrace,
                        "degrees (x = longitude, y = latitude), as LDPTrace's Python reads them",
                        "LDPTrace's experiment.py reproduced"),
}


# -- the suite ------------------------------------------------------------------------------------------

def score_points(real: Points, synthetic: Points, settings: Settings = Settings()) -> dict[str, float]:
    """The suite's nine values for two sets of points already in the flavour's units (the grids over
    ``real``'s box): what :func:`standard_metrics` computes once the traces are points."""
    flavour = FLAVOUR[settings.flavour]
    box = flavour.box(bounding_box(real))
    values = flavour.scores(flavour.features(real, box, settings), flavour.features(synthetic, box, settings),
                            box, settings)
    return {key: float(values[key]) for key in KEYS}


def real_side(real: TraceSet, settings: Settings = Settings()) -> tuple[tuple, Features]:
    """The grids' box and the real set's :class:`Features`: what :func:`standard_metrics` computes
    from the real set alone, for ``reference=`` (the real query answers join its memo on first use)."""
    flavour = FLAVOUR[settings.flavour]
    p = points(real, flavour.coordinates(real.space))
    box = flavour.box(bounding_box(p))
    if p.n_traces == 0:
        raise InputError("a set without a located event cannot be scored by the standard suite")
    return box, flavour.features(p, box, settings)


def standard_metrics(real: TraceSet, synthetic: TraceSet, settings: Settings = Settings(), *,
                     prepared: dict | None = None, reference: tuple | None = None) -> dict[str, float]:
    """The suite's nine values for ``synthetic`` against ``real`` in ``settings.flavour`` (module
    docstring).

    ``prepared`` (optional) caches each set's :class:`Features` by ``id`` across calls;
    ``reference``: :func:`real_side` of ``real`` in these settings, when already computed.
    """
    flavour = FLAVOUR[settings.flavour]
    xy = flavour.coordinates(real.space)
    cache = prepared if prepared is not None else {}
    if reference is not None:
        box, real_features = reference
    else:
        box = flavour.box(bounding_box(points(real, xy)))

    def features(ts):
        key = (id(ts), box, settings)
        if key not in cache:
            p = points(ts, xy)
            if p.n_traces == 0:
                raise InputError("a set without a located event cannot be scored by the standard suite")
            cache[key] = flavour.features(p, box, settings)
        return cache[key]

    values = flavour.scores(real_features if reference is not None else features(real), features(synthetic),
                            box, settings)
    return {key: float(values[key]) for key in KEYS}


def jsd_base(name) -> float:
    """'e' (the authors' natural logarithm) or '2' (bits) -> the base."""
    if str(name) not in ("e", "2"):
        raise InputError(f"standard_jsd_base must be 'e' (the authors' natural logarithm) or '2' (bits), got {name!r}")
    return np.e if str(name) == "e" else 2.0


def settings_of(ctx) -> Settings:
    """The suite's settings from ``evaluate``'s options (``standard_flavour``, ``standard_jsd_base``,
    ``seed``)."""
    return Settings(flavour=check_flavour(ctx.option("standard_flavour", FLAVOURS[0])),
                    jsd_base=jsd_base(ctx.option("standard_jsd_base", "e")), seed=ctx.option("seed", 0))


def _standard_group(ctx) -> GroupResult:
    """The suite on the synthetic set and on the training set, each against the test set; no uniform
    baseline (module docstring)."""
    settings = settings_of(ctx)
    cache = ctx.cache.setdefault("standard", {})
    # the test set's features and query answers and the training column do not depend on the
    # synthetic set: once per evaluation, or once per benchmark dataset (Context.reference)
    real = ctx.reference(("standard", "real", settings), lambda: real_side(ctx.test, settings))
    synthetic = standard_metrics(ctx.test, ctx.synthetic, settings, prepared=cache, reference=real)
    training = ctx.reference(("standard", "training", settings),
                             lambda: standard_metrics(ctx.test, ctx.train, settings, prepared=cache, reference=real))
    n_real = int((ctx.test.counts() > 0).sum())
    scaled = {name: n_real / int((ts.counts() > 0).sum()) for name, ts in
              (("synthetic", ctx.synthetic), ("training", ctx.train))}
    return group_result(synthetic, training, settings, scaled)


def group_result(synthetic: dict, training: dict, settings: Settings, scaled: dict) -> GroupResult:
    """The group's rows and what the report says of them, from the suite's values on the synthetic
    and the training set (``scaled``: the real set's located traces over each one's)."""
    flavour = FLAVOUR[settings.flavour]
    meta = {"standard": {
        "flavour": settings.flavour,
        "flavour_description": flavour.description,
        "units": flavour.units,
        "scaled": scaled,
        "jsd": "natural logarithm" if settings.jsd_base == np.e else "base 2",
        "kendall": {"adatrace": "AdaTrace's (Evaluation.java:477-498)", "corrected": "tau-b",
                    "ldptrace": "LDPTrace's (experiment.py)"}[settings.flavour]},
        "options": {"standard_flavour": settings.flavour,
                    "standard_jsd_base": "e" if settings.jsd_base == np.e else "2"}}
    return GroupResult({key: row(synthetic[key], training[key], None) for key in KEYS}, {}, meta)


def _skip(ctx) -> str | None:
    if not ctx.option("standard", True):
        return ""
    if not (ctx.synthetic.loc >= 0).any():
        return "the synthetic set has no located event (only generalized ones)"
    return None


#: what the metrics' descriptions say of each flavour; None: a report made before the flavours
#: (locsynth's earlier reading, with tau-b)
_FLAVOURED = {
    None: {"query": "circles: traces within a radius of a random centre", "counted": "traces", "kendall": "tau-b",
           "coverage": "15 x 15"},
    "adatrace": {"query": "circles: traces within a radius of a random centre, as AdaTrace's Query.java decides",
                 "counted": "traces", "kendall": "AdaTrace's formula", "coverage": "15 x 15"},
    "corrected": {"query": "circles: traces within a radius of a random centre", "counted": "traces",
                  "kendall": "tau-b", "coverage": "15 x 15"},
    "ldptrace": {"query": "squares: points inside", "counted": "points", "kendall": "LDPTrace's formula",
                 "coverage": "6 x 6"},
}

#: the suite's metrics (module docstring's table), named as the papers name them
METRICS = (
    Metric("query_error", "Query error", "average relative error of 200 range-count queries ({query}), sanity "
           "bound 1% of the real {counted}", short="query"),
    Metric("density_error", "Density error", "Jensen-Shannon divergence of the points' distribution over a 6 x 6 "
           "grid", range=(0.0, np.log(2)), short="density"),
    Metric("trip_error", "Trip error", "Jensen-Shannon divergence of the (start cell, end cell) distribution on a "
           "6 x 6 grid", range=(0.0, np.log(2)), short="trip"),
    Metric("length_error", "Length error", "Jensen-Shannon divergence of travelled distances in 20 equal buckets",
           range=(0.0, np.log(2)), short="length"),
    Metric("diameter_error", "Diameter error", "Jensen-Shannon divergence of trace diameters (largest distance "
           "between two points) in 20 equal buckets", range=(0.0, np.log(2)), short="diam."),
    Metric("pattern_f1", "Frequent pattern F1", "F1 of the top-100 runs of 2 to 8 cells on a 6 x 6 grid; higher is "
           "better", goal="higher", range=(0.0, 1.0), short="FP F1"),
    Metric("pattern_support_error", "Pattern support error", "mean relative error of the supports of the real "
           "top-100 patterns", short="FP err"),
    Metric("kendall_tau", "Location coverage (Kendall tau)", "Kendall tau ({kendall}) between the numbers of "
           "traces through each cell of a {coverage} grid; higher is better", goal="higher", range=(-1.0, 1.0),
           short="tau"),
    Metric("hotspot_error", "Hotspot error", "1 - NDCG of the synthetic ranking of the real top-5 cells (LDPTrace)",
           range=(0.0, 1.0), short="hotspot"),
)
#: the keys of the suite, in the order of the table above
KEYS = tuple(m.key for m in METRICS)

GROUP = MetricGroup(
    "standard", METRICS, _standard_group, _skip, step="standard suite (AdaTrace/PrivTrace/LDPTrace)",
    options=(flag("standard", True, "Compute the field's standard suite (AdaTrace's, PrivTrace's, LDPTrace's metrics)."),
             Option("standard_flavour", FLAVOURS[0], "The standard suite's flavour: adatrace (AdaTrace's "
                    "Evaluation.java, its slips included; for tables beside the papers'), corrected (each slip "
                    "fixed) or ldptrace (LDPTrace's evaluation); docs/benchmark.md.", check_flavour, FLAVOURS),
             Option("standard_jsd_base", "e", "The standard suite's Jensen-Shannon divergences: natural logarithm "
                    "(e, as the authors' codes) or bits (2).", lambda v: "e" if jsd_base(v) == np.e else "2",
                    ("e", "2"))),
    fields=lambda options, space: _FLAVOURED.get(options.get("standard_flavour"), _FLAVOURED[None]))
