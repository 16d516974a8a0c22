"""AdaTrace's attack-resilience defences (Gursoy et al., CCS 2018, §5.2; the authors'
Main.generateAttackResilientTrajectories), with the paper's and code's defaults. Each reads the
real trajectories after the noise, which no epsilon covers (the model's ledger says so):

1. Bayesian inference: the sensitive zone is the 10th densest state (visits of the real
   trajectories); the adversary's prior is the trip distribution and the real trajectories'
   transition frequencies; the posterior is the same two over the synthetic trips through the
   zone. When either Jensen-Shannon divergence (natural logarithm) exceeds vartheta = 0.1, those
   trips are drawn again, up to :data:`ROUNDS` times (the authors' loop has no bound).
2. Partial sniffing: the sniff region is the 12th densest state. For every real trajectory through
   it, the synthetic trip whose first run of points in the region is closest by DTW to the real
   one's; it fails when it shares at least 5 points (locations) with the real trajectory, or
   passes through the sensitive zone. Failing trips are replaced by trips through neither cell.
3. Outlier leakage: a trip's start scores the mean distance to the 50 nearest synthetic starts
   (itself included, as the authors' k-d tree query); the 200 highest are outliers. An outlier
   whose nearest real start is within 0.1 x the box diagonal must have kappa = 100 real starts
   within beta = 0.05 x the diagonal beyond that distance (plausible deniability), else it is
   removed; then the same for ends. Removed trips are replaced by trips through neither cell.
   The diagonal is the public box's (the authors': the real data's box). The authors' end
   outliers query the k-d tree of ends at each trip's start (a slip); here at its end. Their
   further length and rare-location outliers (steps v-viii of their code, beyond the three
   attacks the paper's §5.2 names) are not reproduced.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...metrics.standard import planar
from ..privtrace.markov import edge_counts, per_trace
from . import synopsis

#: the authors' parameters (Main.generateAttackResilientTrajectories)
SENSITIVE_RANK, SNIFF_RANK = 10, 12
VARTHETA = 0.1
SHARED_POINTS = 5
NEIGHBOURS, OUTLIERS = 50, 200
CLOSEST, KAPPA, BETA = 0.1, 100, 0.05
#: rounds of redrawing before the Bayesian defence or a replacement gives up (ours)
ROUNDS = 20


def real_view(seq, seq_offsets, loc, offsets, indptr, indices) -> dict[str, np.ndarray]:
    """What the defences read of the real trajectories: their states and locations (ragged), the
    visits of every state and the frequency of every move (per CSR edge)."""
    n = indptr.size - 1
    moves = edge_counts(seq, seq_offsets, indptr, indices)
    return {"seq": np.asarray(seq, np.int64), "seq_offsets": np.asarray(seq_offsets, np.int64),
            "loc": np.asarray(loc, np.int64), "offsets": np.asarray(offsets, np.int64),
            "visits": np.bincount(seq, minlength=n).astype(np.int64), "moves": moves}


def nth_densest(visits: np.ndarray, rank: int) -> int:
    """The state of the ``rank``-th most visits (the last when there are fewer states)."""
    order = np.argsort(-np.asarray(visits), kind="stable")
    return int(order[min(rank, order.size) - 1])


def jsd(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence of two distributions (normalised here), natural logarithm."""
    p = np.asarray(p, np.float64) / max(float(np.sum(p)), 1e-300)
    q = np.asarray(q, np.float64) / max(float(np.sum(q)), 1e-300)
    m = (p + q) / 2
    kl = lambda a: float(np.sum(a[a > 0] * np.log(a[a > 0] / m[a > 0])))  # noqa: E731
    return (kl(p) + kl(q)) / 2


class Trips:
    """Synthetic trips as ragged arrays of states and of locations, with a kept mask."""

    def __init__(self, states, soff, locs, loff):
        self.states, self.soff, self.locs, self.loff = states, soff, locs, loff

    @property
    def size(self) -> int:
        return self.soff.size - 1

    def through(self, state: int) -> np.ndarray:
        """Whether each trip passes through ``state``."""
        hit = np.zeros(self.size, bool)
        hit[per_trace(self.soff)[self.states == state]] = True
        return hit

    def select(self, keep: np.ndarray) -> "Trips":
        keep = np.asarray(keep, bool)
        return Trips(*_rows(self.states, self.soff, keep), *_rows(self.locs, self.loff, keep))

    def plus(self, other: "Trips") -> "Trips":
        return Trips(np.concatenate([self.states, other.states]),
                     np.concatenate([self.soff, self.soff[-1] + other.soff[1:]]),
                     np.concatenate([self.locs, other.locs]),
                     np.concatenate([self.loff, self.loff[-1] + other.loff[1:]]))


def _rows(values, offsets, keep):
    lengths = np.diff(offsets)[keep]
    mask = np.repeat(keep, np.diff(offsets))
    return values[mask], np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def draw(model, count: int, rng: np.random.Generator, cap: int) -> Trips:
    """``count`` fresh trips of the model (states and locations)."""
    states, soff = model.routes(count, rng, cap)
    locs, lengths = model.place(states, soff, rng)
    return Trips(states, soff, locs, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


def draw_avoiding(model, count: int, rng, cap: int, cells: tuple[int, ...]) -> tuple[Trips, int]:
    """``count`` fresh trips through none of ``cells`` (fewer if :data:`ROUNDS` batches do not
    find enough), and how many are missing."""
    out = draw(model, 0, rng, cap)
    for _ in range(ROUNDS):
        need = count - out.size
        if need <= 0:
            break
        batch = draw(model, 2 * need, rng, cap)
        ok = np.ones(batch.size, bool)
        for c in cells:
            ok &= ~batch.through(c)
        ok &= np.cumsum(ok) <= need
        out = out.plus(batch.select(ok))
    return out, max(count - out.size, 0)


def bayesian(model, trips: Trips, zone: int, rng, cap: int) -> tuple[Trips, dict]:
    """Defence 1: redraw the trips through the sensitive zone until the posterior trip and Markov
    distributions of those trips are within vartheta of the prior (JSD)."""
    real = model.real_
    n = model.grid_.n_states
    for rounds in range(ROUNDS + 1):
        hit = trips.through(zone)
        if not hit.any():
            return trips, {"rounds": rounds, "passed": True}
        sub = trips.select(hit)
        start, end, _ = synopsis.endpoints(sub.states, sub.soff)
        trip_post = np.bincount(start * n + end, minlength=n * n)
        moves_post = edge_counts(sub.states, sub.soff, model.indptr_, model.indices_)
        if jsd(model.trips_, trip_post) <= VARTHETA and jsd(real["moves"], moves_post) <= VARTHETA:
            return trips, {"rounds": rounds, "passed": True}
        if rounds == ROUNDS:
            break
        trips = trips.select(~hit).plus(draw(model, int(hit.sum()), rng, cap))
    return trips, {"rounds": ROUNDS, "passed": False}


@njit(cache=True)
def _dtw(ax, ay, bx, by):
    n, m = ax.size, bx.size
    d = np.full((n + 1, m + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = np.hypot(ax[i - 1] - bx[j - 1], ay[i - 1] - by[j - 1])
            d[i, j] = c + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return d[n, m]


@njit(cache=True)
def _first_run(locs, lo, hi, loc_state, region):
    """(start, stop) of the first run of a trip's locations in ``region`` ((0, 0) when none)."""
    for i in range(lo, hi):
        if loc_state[locs[i]] == region:
            j = i
            while j < hi and loc_state[locs[j]] == region:
                j += 1
            return i, j
    return 0, 0


@njit(cache=True)
def _closest(real_locs, real_off, real_ids, syn_locs, syn_off, syn_ids, loc_state, region, x, y):
    """For each real trip (``real_ids``), the synthetic trip (of ``syn_ids``) whose first run in the
    region is closest by DTW to the real one's (-1 when none)."""
    out = np.full(real_ids.size, -1, np.int64)
    for a in range(real_ids.size):
        r = real_ids[a]
        i0, i1 = _first_run(real_locs, real_off[r], real_off[r + 1], loc_state, region)
        if i1 == i0:
            continue
        rx, ry = x[real_locs[i0:i1]], y[real_locs[i0:i1]]
        best = np.inf
        for b in range(syn_ids.size):
            s = syn_ids[b]
            j0, j1 = _first_run(syn_locs, syn_off[s], syn_off[s + 1], loc_state, region)
            if j1 == j0:
                continue
            dist = _dtw(rx, ry, x[syn_locs[j0:j1]], y[syn_locs[j0:j1]])
            if dist < best:
                best = dist
                out[a] = s
    return out


def sniffing(model, trips: Trips, zone: int, region: int, rng, cap: int) -> tuple[Trips, dict]:
    """Defence 2 (module docstring): replace the synthetic trips closest to a sniffed real one that
    share >= 5 of its points or pass the sensitive zone, by trips through neither cell."""
    real = model.real_
    x, y = planar(model.space_)
    loc_state = model.grid_.state(x, y)
    real_ids = np.flatnonzero(Trips(real["seq"], real["seq_offsets"], real["loc"], real["offsets"]).through(region))
    syn_ids = np.flatnonzero(np.bincount(per_trace(trips.loff)[loc_state[trips.locs] == region],
                                         minlength=trips.size) > 0)
    match = _closest(real["loc"], real["offsets"], real_ids, trips.locs, trips.loff, syn_ids, loc_state, region, x, y)
    through_zone = trips.through(zone)
    fail = np.zeros(trips.size, bool)
    for r, s in zip(real_ids, match):
        if s < 0:
            continue
        mine = real["loc"][real["offsets"][r]:real["offsets"][r + 1]]
        shared = np.isin(mine, trips.locs[trips.loff[s]:trips.loff[s + 1]]).sum()
        fail[s] |= shared >= SHARED_POINTS or through_zone[s]
    fresh, missing = draw_avoiding(model, int(fail.sum()), rng, cap, (zone, region))
    return trips.select(~fail).plus(fresh), {"sniffed": int(real_ids.size), "replaced": int(fail.sum()),
                                             "missing": missing}


def _outliers(points: np.ndarray, real: np.ndarray, diagonal: float) -> np.ndarray:
    """Which of the (up to 200) highest-scoring points fail plausible deniability (module docstring)."""
    from scipy.spatial import cKDTree

    fail = np.zeros(len(points), bool)
    if len(points) == 0 or len(real) == 0:
        return fail
    k = min(NEIGHBOURS, len(points))
    dist = cKDTree(points).query(points, k=k)[0].reshape(len(points), k)
    score = dist.mean(axis=1)
    top = np.argsort(-score, kind="stable")[:OUTLIERS]
    tree = cKDTree(real)
    nearest = tree.query(points[top])[0]
    near = nearest <= CLOSEST * diagonal
    counts = tree.query_ball_point(points[top][near], nearest[near] + BETA * diagonal, return_length=True)
    fail[top[near][np.asarray(counts) < KAPPA]] = True
    return fail


def outliers(model, trips: Trips, zone: int, region: int, rng, cap: int) -> tuple[Trips, dict]:
    """Defence 3 (module docstring): start outliers, then end outliers, removed and replaced by trips
    through neither the sensitive zone nor the sniff region."""
    real = model.real_
    x, y = planar(model.space_)
    x0, y0, x1, y1 = model.grid_.box
    diagonal = float(np.hypot(x1 - x0, y1 - y0))
    some = np.diff(real["offsets"]) > 0
    removed = {}
    for name, real_at in (("starts", real["offsets"][:-1][some]), ("ends", real["offsets"][1:][some] - 1)):
        syn_at = trips.loff[:-1] if name == "starts" else trips.loff[1:] - 1
        syn = np.column_stack([x[trips.locs[syn_at]], y[trips.locs[syn_at]]])
        ref = np.column_stack([x[real["loc"][real_at]], y[real["loc"][real_at]]])
        fail = _outliers(syn, ref, diagonal)
        removed[name] = int(fail.sum())
        trips = trips.select(~fail)
    fresh, missing = draw_avoiding(model, sum(removed.values()), rng, cap, (zone, region))
    return trips.plus(fresh), {**{f"{k}_removed": v for k, v in removed.items()}, "missing": missing}


def resilient(model, m: int, rng: np.random.Generator, cap: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """``m`` trips through the three defences in the authors' order: (locations, lengths, report)."""
    zone, region = nth_densest(model.real_["visits"], SENSITIVE_RANK), nth_densest(model.real_["visits"], SNIFF_RANK)
    trips = draw(model, m, rng, cap)
    trips, bayes = bayesian(model, trips, zone, rng, cap)
    trips, sniff = sniffing(model, trips, zone, region, rng, cap)
    trips, out = outliers(model, trips, zone, region, rng, cap)
    report = {"sensitive_zone": zone, "sniff_region": region, "bayesian": bayes, "sniffing": sniff, "outliers": out}
    return trips.locs, np.diff(trips.loff), report


def describe(report: dict) -> list[str]:
    """Lines for ``locsynth sample``: what each defence did."""
    b, s, o = report["bayesian"], report["sniffing"], report["outliers"]
    lines = [f"defences (CCS 2018 §5.2): sensitive zone = state {report['sensitive_zone']}, sniff region = state "
             f"{report['sniff_region']}",
             f"  Bayesian inference: {'passed' if b['passed'] else 'not passed'} after {b['rounds']} redraw(s) "
             f"(JSD <= {VARTHETA})",
             f"  partial sniffing: {s['replaced']} synthetic trips replaced",
             f"  outlier leakage: {o['starts_removed']} start and {o['ends_removed']} end outliers replaced"]
    if s["missing"] or o["missing"]:
        lines.append(f"  {s['missing'] + o['missing']} replacements avoiding both cells could not be drawn")
    return lines
