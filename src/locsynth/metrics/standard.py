"""The field's standard utility suite for trajectory synthesis: the metrics AdaTrace (Gursoy et al.,
CCS 2018, §6) introduced and PrivTrace (Wang et al., USENIX Security 2023, §6.1) and LDPTrace
(Du et al., VLDB 2023, §6) report, with the defaults of the authors' evaluation code
(REFERENCE.md, "The standard trajectory-synthesis metrics").

Every metric reads the traces' coordinates: a location's representative point (Space.lat/lon),
projected to metres on a local equirectangular plane around the space's mean latitude (the
papers work on planar x/y). The grids are laid over the *real* (reference) set's bounding box;
points of another set outside it fall into the nearest edge cell. A trace on a grid is its
sequence of cells with consecutive repeats merged. Each trace of a set is one trajectory;
generalized events (anonymizers' location sets) have no point and are left out.

=====================  ===========================================================  ==============
key                    what the papers call it                                      best
=====================  ===========================================================  ==============
query_error            Query AvRE: 200 circular range-count queries                0
density_error          Density error: JSD of points over the 6 x 6 grid             0
trip_error             Trip error: JSD of (start cell, end cell), 6 x 6 grid         0
length_error           Length error: JSD of travelled distance, 20 buckets          0
diameter_error         Diameter error: JSD of the largest point-to-point distance    0
pattern_f1             Frequent-pattern F1 of the top-100 cell runs (2 to 8 cells)  1
pattern_support_error  Frequent-pattern AvRE of the real top-100 supports          0
kendall_tau            Location coverage Kendall tau, 15 x 15 grid                 1
hotspot_error          1 - NDCG of the real top-5 hotspot cells (LDPTrace)         0
=====================  ===========================================================  ==============

Choices where the papers leave one:

- JSD = (KL(P||M) + KL(Q||M)) / 2 with the natural logarithm, as AdaTrace's code (maximum
  ln 2 = 0.693); ``jsd_base=2`` gives bits (maximum 1).
- Query answers and pattern supports are counts. A synthetic set of another size than the real
  one has its counts scaled by n_real / n_synthetic before the errors (identity at equal size,
  which ``locsynth benchmark`` uses); ``meta['standard']['scaled']`` says the factor.
- Length and diameter buckets: 20 of equal width between the real minimum and maximum (the
  definition; AdaTrace's code forgets the minimum, REFERENCE.md); synthetic values outside fall
  into the edge buckets rather than out of the histogram, so that too long traces cost.
- A trace passes through a cell when one of its points lies in it (no interpolation between
  points). Kendall tau is tau-b, which counts the pairs of cells tied in either set and is 1 for
  equal counts; AdaTrace divides by all n (n - 1) / 2 pairs (tau-a, ``kendall="a"``), which
  stays below 1 for a set against itself whenever two cells have the same count.
- Top-k ties (patterns, hotspots) are broken by the smaller code, so results are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InputError
from ..traces import TraceSet
from .groups import GroupResult, MetricGroup, row
from .trips import jensen_shannon

EARTH_RADIUS_M = 6_371_008.8
#: the keys of the suite, in the order of the table above
KEYS = ("query_error", "density_error", "trip_error", "length_error", "diameter_error", "pattern_f1",
        "pattern_support_error", "kendall_tau", "hotspot_error")
#: the keys for which larger is better
HIGHER_IS_BETTER = ("pattern_f1", "kendall_tau")


@dataclass(frozen=True)
class Settings:
    """The suite's parameters, with AdaTrace's and LDPTrace's defaults (REFERENCE.md)."""

    queries: int = 200
    radius_share: float = 1 / 3
    sanity: float = 0.01
    grid: int = 6
    coverage_grid: int = 15
    buckets: int = 20
    pattern_lengths: tuple[int, int] = (2, 8)
    top_patterns: int = 100
    hotspots: int = 5
    jsd_base: float = np.e
    kendall: str = "b"
    seed: int = 0


@dataclass(frozen=True)
class Points:
    """A set's trajectories as planar points: ``x``, ``y`` (metres) and ``offsets`` (n_traces + 1)."""

    x: np.ndarray
    y: np.ndarray
    offsets: np.ndarray

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


def points(ts: TraceSet, xy: tuple[np.ndarray, np.ndarray] | None = None) -> Points:
    """The trajectories of ``ts`` (one per trace, events in time order), generalized events left out,
    empty traces dropped."""
    x, y = xy if xy is not None else planar(ts.space)
    keep = ts.loc >= 0
    counts = np.bincount(ts.user[keep], minlength=ts.n_traces)
    counts = counts[counts > 0]
    loc = ts.loc[keep]
    return Points(x[loc], y[loc], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))


def bounding_box(p: Points) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of the points."""
    if p.x.size == 0:
        raise InputError("the reference set has no point to lay the grids over")
    return float(p.x.min()), float(p.y.min()), float(p.x.max()), float(p.y.max())


def cells(p: Points, box, k: int) -> np.ndarray:
    """The cell (row * k + col) of every point on the k x k grid over ``box``; outside: the edge."""
    x0, y0, x1, y1 = box
    col = np.floor((p.x - x0) / max(x1 - x0, 1e-9) * k).astype(np.int64)
    row = np.floor((p.y - y0) / max(y1 - y0, 1e-9) * k).astype(np.int64)
    return np.clip(row, 0, k - 1) * k + np.clip(col, 0, k - 1)


def merged(cell: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell sequences with consecutive repeats within a trace merged: (cells, offsets)."""
    first = np.zeros(cell.size, bool)
    first[offsets[:-1]] = True
    keep = first.copy()
    keep[1:] |= cell[1:] != cell[:-1]
    trace = np.cumsum(first) - 1
    counts = np.bincount(trace[keep], minlength=offsets.size - 1)
    return cell[keep], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def jsd(p: np.ndarray, q: np.ndarray, base: float = np.e) -> float:
    """Jensen-Shannon divergence (KL(P||M) + KL(Q||M)) / 2, M = (P + Q) / 2, in log ``base``."""
    return jensen_shannon(p, q, base=base)


# -- query error -----------------------------------------------------------------------------------

@njit(parallel=True, cache=True)
def _query_answers(x, y, offsets, cx, cy, r):
    """For each circle (cx, cy, r): the traces with a point or a segment within r of the centre."""
    n = offsets.size - 1
    out = np.zeros(cx.size, np.int64)
    for q in prange(cx.size):
        r2 = r * r
        count = 0
        for k in range(n):
            a, b = offsets[k], offsets[k + 1]
            for i in range(a, b):
                dx, dy = x[i] - cx[q], y[i] - cy[q]
                if i > a:   # the segment from the previous point: its closest point to the centre
                    sx, sy = x[i] - x[i - 1], y[i] - y[i - 1]
                    length2 = sx * sx + sy * sy
                    if length2 > 0:
                        s = ((cx[q] - x[i - 1]) * sx + (cy[q] - y[i - 1]) * sy) / length2
                        s = min(max(s, 0.0), 1.0)
                        dx, dy = x[i - 1] + s * sx - cx[q], y[i - 1] + s * sy - cy[q]
                if dx * dx + dy * dy <= r2:
                    count += 1
                    break
        out[q] = count
    return out


def queries(box, settings: Settings) -> tuple[np.ndarray, np.ndarray, float]:
    """AdaTrace's range queries: centres uniform in the box (seeded), radius = larger side x share."""
    x0, y0, x1, y1 = box
    rng = np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=(23,)))
    u = rng.random((settings.queries, 2))
    return x0 + u[:, 0] * (x1 - x0), y0 + u[:, 1] * (y1 - y0), max(x1 - x0, y1 - y0) * settings.radius_share


def query_error(real: Points, synthetic: Points, box, settings: Settings = Settings()) -> float:
    """Query AvRE (AdaTrace §6.2): mean over the queries of |syn - real| / max(real, sanity x n_real),
    synthetic answers scaled by n_real / n_syn."""
    cx, cy, r = queries(box, settings)
    a = _query_answers(real.x, real.y, real.offsets, cx, cy, r).astype(np.float64)
    b = _query_answers(synthetic.x, synthetic.y, synthetic.offsets, cx, cy, r) * (real.n_traces / synthetic.n_traces)
    return float((np.abs(b - a) / np.maximum(a, settings.sanity * real.n_traces)).mean())


# -- distributions over a grid -----------------------------------------------------------------------

def density(cell: np.ndarray, k: int) -> np.ndarray:
    """Points per cell of the k x k grid."""
    return np.bincount(cell, minlength=k * k).astype(np.float64)


def trip_distribution(cell: np.ndarray, offsets: np.ndarray, k: int) -> np.ndarray:
    """(start cell, end cell) counts, flattened (k^2 x k^2)."""
    return np.bincount(cell[offsets[:-1]] * k * k + cell[offsets[1:] - 1], minlength=k ** 4).astype(np.float64)


def coverage(cell: np.ndarray, trace: np.ndarray, k: int) -> np.ndarray:
    """Per cell, the number of traces with a point in it."""
    pairs = np.unique(trace.astype(np.int64) * (k * k) + cell)
    return np.bincount(pairs % (k * k), minlength=k * k).astype(np.float64)


def kendall_tau(a: np.ndarray, b: np.ndarray, variant: str = "b") -> float:
    """Kendall's tau between two count vectors: tau-b (ties corrected) or tau-a (AdaTrace's
    (concordant - discordant) / (n (n - 1) / 2))."""
    if variant not in ("a", "b"):
        raise InputError(f"kendall must be 'a' or 'b', got {variant!r}")
    sa, sb = np.sign(a[:, None] - a[None, :]), np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(a.size, 1)
    s = float((sa * sb)[upper].sum())
    if variant == "a":
        return s / (a.size * (a.size - 1) / 2)
    norm = np.sqrt(float(np.abs(sa[upper]).sum()) * float(np.abs(sb[upper]).sum()))
    return s / norm if norm else 0.0


def hotspot_ndcg(real: np.ndarray, synthetic: np.ndarray, k: int = 5) -> float:
    """LDPTrace §6.1's hotspot query: the synthetic top-k cells, each scored 1 / (its rank among the
    real top-k) when it is one of them, discounted by log2(position + 1); normalised by the ideal
    (the real ranking itself)."""
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


# -- travelled distance and diameter ---------------------------------------------------------------

def travelled(p: Points) -> np.ndarray:
    """The sum of segment lengths of every trace."""
    step = np.hypot(np.diff(p.x, prepend=0.0), np.diff(p.y, prepend=0.0))
    step[p.offsets[:-1]] = 0.0
    return np.add.reduceat(step, p.offsets[:-1]) if p.n_traces else np.zeros(0)


@njit(parallel=True, cache=True)
def diameters(x, y, offsets):
    """The largest distance between two points of every trace."""
    n = offsets.size - 1
    out = np.zeros(n)
    for k in prange(n):
        best = 0.0
        for i in range(offsets[k], offsets[k + 1]):
            for j in range(i + 1, offsets[k + 1]):
                d = (x[i] - x[j]) ** 2 + (y[i] - y[j]) ** 2
                best = max(best, d)
        out[k] = np.sqrt(best)
    return out


def bucket_jsd(real: np.ndarray, synthetic: np.ndarray, buckets: int, base: float) -> float:
    """JSD of the two value distributions over ``buckets`` equal buckets between the real min and max."""
    lo, hi = float(real.min()), float(real.max())
    width = (hi - lo) / buckets if hi > lo else 1.0

    def histogram(v):
        return np.bincount(np.clip(((v - lo) / width).astype(np.int64), 0, buckets - 1), minlength=buckets)

    return jsd(histogram(real), histogram(synthetic), base)


# -- frequent patterns -------------------------------------------------------------------------------

def pattern_counts(cell: np.ndarray, offsets: np.ndarray, k: int, lengths=(2, 8)) -> dict[int, int]:
    """Occurrences of every run of ``lengths[0]`` .. ``lengths[1]`` consecutive cells of the merged
    sequences, keyed by a code in base k^2 + 1 (digits cell + 1, so runs of different lengths differ)."""
    base = k * k + 1
    if base ** lengths[1] >= 2 ** 63:
        raise InputError(f"patterns of {lengths[1]} cells on a {k} x {k} grid do not fit 64-bit codes")
    trace = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    codes = []
    code = cell.astype(np.int64) + 1
    for n in range(2, lengths[1] + 1):
        code = code[:-1] * base + (cell[n - 1:] + 1)
        same = trace[:-(n - 1)] == trace[n - 1:]
        if n >= lengths[0]:
            codes.append(code[same])
    values, counts = np.unique(np.concatenate(codes) if codes else np.zeros(0, np.int64), return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


def top_patterns(counts: dict[int, int], k: int) -> list[int]:
    """The k most frequent patterns, ties to the smaller code."""
    return [c for c, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:k]]


def pattern_scores(real: dict, synthetic: dict, k: int, scale: float = 1.0) -> tuple[float, float]:
    """(F1 of the two top-k sets, mean relative support error over the real top-k), synthetic
    supports scaled by ``scale``."""
    a, b = top_patterns(real, k), top_patterns(synthetic, k)
    f1 = 2 * len(set(a) & set(b)) / (len(a) + len(b)) if a or b else 1.0
    err = np.mean([abs(synthetic.get(p, 0) * scale - real[p]) / real[p] for p in a]) if a else 0.0
    return float(f1), float(err)


# -- the suite ------------------------------------------------------------------------------------------

class Prepared:
    """One set ready for the suite: its points, grid cells and per-trace features (computed once)."""

    def __init__(self, ts: TraceSet, box, xy, settings: Settings):
        s = settings
        self.points = p = points(ts, xy)
        if p.n_traces == 0:
            raise InputError("a set without a located event cannot be scored by the standard suite")
        cell = cells(p, box, s.grid)
        self.density = density(cell, s.grid)
        seq, seq_offsets = merged(cell, p.offsets)
        self.trips = trip_distribution(seq, seq_offsets, s.grid)
        self.patterns = pattern_counts(seq, seq_offsets, s.grid, s.pattern_lengths)
        self.coverage = coverage(cells(p, box, s.coverage_grid), p.trace, s.coverage_grid)
        self.lengths = travelled(p)
        self.diameters = diameters(p.x, p.y, p.offsets)


def standard_metrics(real: TraceSet, synthetic: TraceSet, settings: Settings = Settings(), *,
                     prepared: dict | None = None) -> dict[str, float]:
    """The suite's nine values for ``synthetic`` against ``real`` (module docstring).

    ``prepared`` (optional) caches :class:`Prepared` sets by ``id`` across calls.
    """
    xy = planar(real.space)
    cache = prepared if prepared is not None else {}
    box = bounding_box(points(real, xy))

    def prep(ts):
        key = (id(ts), box, settings)
        if key not in cache:
            cache[key] = Prepared(ts, box, xy, settings)
        return cache[key]

    r, s = prep(real), prep(synthetic)
    base, scale = settings.jsd_base, r.points.n_traces / s.points.n_traces
    f1, support = pattern_scores(r.patterns, s.patterns, settings.top_patterns, scale)
    values = {
        "query_error": query_error(r.points, s.points, box, settings),
        "density_error": jsd(r.density, s.density, base),
        "trip_error": jsd(r.trips, s.trips, base),
        "length_error": bucket_jsd(r.lengths, s.lengths, settings.buckets, base),
        "diameter_error": bucket_jsd(r.diameters, s.diameters, settings.buckets, base),
        "pattern_f1": f1,
        "pattern_support_error": support,
        "kendall_tau": kendall_tau(r.coverage, s.coverage, settings.kendall),
        "hotspot_error": 1.0 - hotspot_ndcg(r.density, s.density, settings.hotspots),
    }
    return {key: float(value) for key, value in values.items()}


def jsd_base(name) -> float:
    """'e' (AdaTrace's natural logarithm) or '2' (bits) -> the base."""
    if str(name) not in ("e", "2"):
        raise InputError(f"standard_jsd_base must be 'e' (AdaTrace's natural logarithm) or '2' (bits), got {name!r}")
    return np.e if str(name) == "e" else 2.0


def settings_of(ctx) -> Settings:
    """The suite's settings from ``evaluate``'s options (``standard_jsd_base``, ``seed``)."""
    return Settings(jsd_base=jsd_base(ctx.option("standard_jsd_base", "e")), seed=ctx.option("seed", 0))


def _standard_group(ctx) -> GroupResult:
    """The suite on the synthetic set and on the training set, each against the test set; no uniform
    baseline (module docstring)."""
    settings = settings_of(ctx)
    cache = ctx.cache.setdefault("standard", {})
    synthetic = standard_metrics(ctx.test, ctx.synthetic, settings, prepared=cache)
    training = standard_metrics(ctx.test, ctx.train, settings, prepared=cache)
    n_real = int((ctx.test.counts() > 0).sum())
    meta = {"standard": {
        "scaled": {name: n_real / int((ts.counts() > 0).sum()) for name, ts in
                   (("synthetic", ctx.synthetic), ("training", ctx.train))},
        "jsd": "natural logarithm" if settings.jsd_base == np.e else "base 2",
        "kendall": f"tau-{settings.kendall}"},
        "options": {"standard_jsd_base": "e" if settings.jsd_base == np.e else "2"}}
    return GroupResult({key: row(synthetic[key], training[key], None) for key in KEYS}, {}, meta)


def _skip(ctx) -> str | None:
    if not ctx.option("standard", True):
        return ""
    if not (ctx.synthetic.loc >= 0).any():
        return "the synthetic set has no located event (only generalized ones)"
    return None


GROUP = MetricGroup("standard", KEYS, _standard_group, _skip, step="standard suite (AdaTrace/PrivTrace)")
