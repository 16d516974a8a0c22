"""AdaTrace's synopsis (Gursoy, Liu, Truex, Yu and Wei, CCS 2018, §4): the density-aware grid's
split, and the four counts the noise goes on, each giving every trajectory a total weight of at
most its stated sensitivity under adding or removing one trajectory:

- level-1 density (grid): a trajectory adds 1 / l to each of the l level-1 cells of its
  interpolated cell sequence (sum 1; the authors' Main.convertTrajToGridTraj);
- mobility (Markov): a trajectory of l >= 2 states adds 1 / (l - 1) to each of its moves (sum 1;
  Main.extractMarkovProbs); moves between states that do not touch, which the interpolation
  leaves only at raster corners, are not counted;
- trip distribution: a trajectory adds 1 to the pair (its first state, its last state) (sum 1;
  TripDistribution);
- route length: the pooled histogram of extra lengths, 1 per trajectory, and per trip pair the
  sum of extra lengths clipped at ``cap`` (L1 sensitivity ``cap``; module model.py, step 7).

The length's distribution families and the Markov bridge that samples a route of a given length
between two states (Main.generateSyntheticTrajs, findWithMarkov) are here too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..min_cells import walk_locations

from ..privtrace.markov import edge_counts, per_trace, states as interpolated

#: AdaTrace's first level: 6 x 6 cells (Main.Synthesize_Trajectories' ``cellCount``)
LEVEL1 = 6
#: the constant of the authors' split rule (Cell.divideFurther, Cell.java's live line)
SPLIT_CONSTANT = 5.0
#: c of the adaptive grid's rule m = ceil(sqrt(d epsilon / c)) (Qardaji, Yang and Li, ICDE 2013,
#: whose c2 = 5 serves counting queries): measured on the 200 cabs at epsilon 0.5-4 (c from 2,000 to
#: 20,000; docs/methods/adatrace.md). At c2 = 5 every busy cell of the cabs takes the 6 x 6 cap at
#: every epsilon, and the trip distribution's million pairs drown 72,000 trips in noise.
ADAPTIVE_CONSTANT = 10_000.0
#: the split rules: the adaptive grid's (the default: it grows with epsilon) and the authors' live line
SPLIT_RULES = ("adaptive", "authors")
#: noisy densities below this are taken as 0 (Main.convertTrajToGridTraj)
DENSITY_FLOOR = 1e-4
#: a level-1 cell is split into at most this many subcells a side (a guard of ours: the authors'
#: rule grows as epsilon shrinks; 6 x 6 subcells of each of 36 cells make 1,296 states, 1.7 million trip pairs)
MAX_SPLIT = 6
#: the route-length families the authors' LengthDistribution chooses among
FAMILIES = ("uniform", "geometric", "poisson")


def level2_sizes(noisy_density: np.ndarray, trajectories: float, epsilon: float, rule: str = "adaptive"
                 ) -> np.ndarray:
    """Subcells a side of every level-1 cell i, at least 1, at most :data:`MAX_SPLIT` (a noisy
    density d_i below 1e-4 counts as 0, as in the authors' code):

    - ``"adaptive"``: M_i = ceil(sqrt(d_i epsilon / c)), c = :data:`ADAPTIVE_CONSTANT`: the adaptive
      grid the paper builds on (Qardaji, Yang and Li, ICDE 2013, m2 = ceil(sqrt(N' epsilon / c2)),
      the form of the authors' commented line ceil(sqrt(d_i epsilon / 200))), finer as epsilon grows;
    - ``"authors"``: M_i = ceil(5 d_i / (|D| epsilon)), the authors' live line (Cell.divideFurther,
      whose ``EpsLeft`` is the whole epsilon), which coarsens as epsilon grows. ``trajectories``
      stands for |D|, which the authors read exactly: here a DP estimate (model.py, step 3)."""
    d = np.asarray(noisy_density, np.float64)
    d = np.where(d < DENSITY_FLOOR, 0.0, d)
    if rule == "adaptive":
        m = np.ceil(np.sqrt(d * float(epsilon) / ADAPTIVE_CONSTANT))
    else:
        m = np.ceil(SPLIT_CONSTANT * d / (max(float(trajectories), 1.0) * float(epsilon)))
    return np.clip(m, 1, MAX_SPLIT).astype(np.int64)


def cell_density(points: tuple, grid) -> np.ndarray:
    """:func:`density` of the trajectories (x, y, offsets) interpolated on ``grid``'s cells
    (privtrace/markov.states): the counting step of the grid's split."""
    return density(*interpolated(grid, *points), grid.n_states)


def synopsis_counts(states: tuple, indptr: np.ndarray, indices: np.ndarray, hop: np.ndarray, cap: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The counting step of the synopsis on the trajectories' (states, offsets): the moves
    (:func:`moves`), the trip pairs (:func:`trips`), the histogram of extra lengths and, per pair,
    their sum (:func:`extras`, clipped at ``cap``)."""
    seq, offsets = states
    pair, extra = extras(seq, offsets, hop, cap)
    return (moves(seq, offsets, indptr, indices), trips(seq, offsets, hop.shape[0]),
            np.bincount(extra, minlength=cap + 1), np.bincount(pair, weights=extra, minlength=hop.shape[0] ** 2))


def density(seq: np.ndarray, offsets: np.ndarray, n_cells: int) -> np.ndarray:
    """Per cell, the sum over trajectories of 1 / l for each of their l visits (sum 1 each)."""
    length = np.diff(offsets)
    weight = 1.0 / np.maximum(length, 1)[per_trace(offsets)]
    return np.bincount(seq, weights=weight, minlength=n_cells)


def moves(seq: np.ndarray, offsets: np.ndarray, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Moves per CSR edge, each trajectory of l >= 2 states weighting its moves 1 / (l - 1)."""
    return edge_counts(seq, offsets, indptr, indices, 1.0 / np.maximum(np.diff(offsets) - 1, 1))


def endpoints(seq: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first state, last state, number of states) of every non-empty trajectory."""
    length = np.diff(offsets)
    some = length > 0
    return seq[offsets[:-1][some]], seq[offsets[1:][some] - 1], length[some]


def trips(seq: np.ndarray, offsets: np.ndarray, n_states: int) -> np.ndarray:
    """Trajectories per (start, end) pair, flattened start-major (n_states^2)."""
    start, end, _ = endpoints(seq, offsets)
    return np.bincount(start * n_states + end, minlength=n_states * n_states).astype(np.float64)


def hops(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Moves on the shortest route between every two states (touching states: 1), int32."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    n = indptr.size - 1
    graph = csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    d = shortest_path(graph, unweighted=True, directed=False)
    return np.where(np.isfinite(d), d, n).astype(np.int32)


def shortest(hop: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """States on the shortest route from ``start`` to ``end``: hops + 1, and 2 from a state to
    itself (the authors' Grid.findShortestLengthBetween; their one-cell trajectory is [c, c])."""
    return np.where(start == end, 2, hop[start, end] + 1)


def extras(seq: np.ndarray, offsets: np.ndarray, hop: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair, extra length) of every non-empty trajectory: its states beyond the shortest route's
    (the authors' LengthDistribution: size - minCellCount), clipped to 0 .. ``cap``."""
    start, end, length = endpoints(seq, offsets)
    extra = np.clip(length - shortest(hop, start, end), 0, int(cap))
    return start * hop.shape[0] + end, extra.astype(np.int64)


def family_pmf(family: int, mean: float, cap: int) -> np.ndarray:
    """The pmf on 0 .. cap of a family (:data:`FAMILIES`) of this mean, mass above cap moved to cap
    (the authors cap a sampled length rather than truncate the family). Uniform on 0 .. round(2
    mean); geometric with P(k) = p (1 - p)^k, p = 1 / (1 + mean) (the authors' commons-math
    Geometric(1 / mean) has mean 1 / p - 1 = mean - 1: here the mean is kept); Poisson(mean)."""
    from scipy import stats

    k = np.arange(int(cap) + 1)
    mean = max(float(mean), 0.0)
    if FAMILIES[family] == "uniform":
        top = int(round(2 * mean))
        pmf = np.where(k <= top, 1.0 / (top + 1), 0.0)
        pmf[-1] += max(top - int(cap), 0) / (top + 1)
    elif FAMILIES[family] == "geometric":
        pmf = stats.geom.pmf(k + 1, 1.0 / (1.0 + mean))
        pmf[-1] += 1.0 - pmf.sum()
    else:
        pmf = stats.poisson.pmf(k, max(mean, 1e-9))
        pmf[-1] += 1.0 - pmf.sum()
    return np.maximum(pmf, 0.0)


def emd(p: np.ndarray, q: np.ndarray) -> float:
    """Earth mover's distance between two pmfs on 0 .. cap (unit ground distance)."""
    return float(np.abs(np.cumsum(p) - np.cumsum(q)).sum())


def choose_family(histogram: np.ndarray) -> tuple[int, float]:
    """(family, mean) of the pooled extra lengths: the family whose member of the histogram's mean
    is closest in EMD to the histogram (the authors' test, Length Distribution, per trip pair
    against its exact lengths; here once, on the noisy pooled histogram, model.py step 7)."""
    h = np.maximum(np.asarray(histogram, np.float64), 0.0)
    cap = h.size - 1
    if h.sum() <= 0:
        return FAMILIES.index("geometric"), 0.0
    p = h / h.sum()
    mean = float((np.arange(cap + 1) * p).sum())
    scores = [emd(family_pmf(f, mean, cap), p) for f in range(len(FAMILIES))]
    return int(np.argmin(scores)), mean


def pair_means(sums: np.ndarray, counts: np.ndarray, pooled: float, weight: float, cap: int) -> np.ndarray:
    """Each pair's mean extra length, (noisy sum + weight x pooled mean) / (noisy count + weight),
    in 0 .. cap: a pair's noisy sum shrunk towards the pooled mean by ``weight`` pseudo-trips
    (post-processing; the authors divide the noisy sum by the exact count)."""
    means = (np.asarray(sums, np.float64) + weight * pooled) / (np.maximum(counts, 0.0) + weight)
    return np.clip(means, 0.0, float(cap))


def sample_extras(family: int, means: np.ndarray, cap: int, rng: np.random.Generator) -> np.ndarray:
    """One extra length per mean from the family, capped at ``cap`` (LengthDistribution.getLengthSample)."""
    means = np.maximum(np.asarray(means, np.float64), 0.0)
    name = FAMILIES[family]
    if name == "uniform":
        out = np.floor(rng.random(means.size) * (np.round(2 * means) + 1))
    elif name == "geometric":
        out = rng.geometric(1.0 / (1.0 + means)) - 1
    else:
        out = rng.poisson(means)
    return np.minimum(out, cap).astype(np.int64)


@njit(cache=True)
def _bridge_table(indptr, indices, prob, end, steps, table):
    """table[k, b] proportional to P^k[b, end] for k = 0 .. steps (each row scaled to max 1: the
    bridge compares candidates at one k only, and scaling keeps long powers from underflowing)."""
    n = indptr.size - 1
    for b in range(n):
        table[0, b] = 0.0
    table[0, end] = 1.0
    for k in range(1, steps + 1):
        top = 0.0
        for b in range(n):
            acc = 0.0
            for q in range(indptr[b], indptr[b + 1]):
                acc += prob[q] * table[k - 1, indices[q]]
            table[k, b] = acc
            if acc > top:
                top = acc
        if top > 0:
            for b in range(n):
                table[k, b] /= top


@njit(cache=True)
def _bridges(indptr, indices, prob, hop, start, end, length, seed):
    """Every route: state 0 its start, state L - 1 its end, state i (0 < i < L - 1) drawn among the
    touching states b of state i - 1 = a with weight P[a, b] P^(L-1-i)[b, end] (the authors'
    findWithMarkov); when every weight is 0, the touching state nearest to the end (their
    fallback: the first cell of the direct route)."""
    np.random.seed(seed)
    n = indptr.size - 1
    m = start.size
    offsets = np.zeros(m + 1, np.int64)
    for q in range(m):
        offsets[q + 1] = offsets[q] + length[q]
    out = np.empty(offsets[m], np.int64)
    order = np.argsort(end, kind="mergesort")
    top = 1
    for q in range(m):
        top = max(top, length[q])
    table = np.empty((top, n))
    weights = np.empty(max(1, int(np.diff(indptr).max())))
    i = 0
    while i < m:
        e = end[order[i]]
        j = i
        longest = 1
        while j < m and end[order[j]] == e:
            longest = max(longest, length[order[j]])
            j += 1
        _bridge_table(indptr, indices, prob, e, longest - 1, table)
        for t in range(i, j):
            q = order[t]
            base, L = offsets[q], length[q]
            out[base] = start[q]
            if L > 1:
                out[base + L - 1] = e
            for p in range(1, L - 1):
                a = out[base + p - 1]
                r = L - 1 - p
                lo, hi = indptr[a], indptr[a + 1]
                total = 0.0
                for h in range(lo, hi):
                    weights[h - lo] = prob[h] * table[r, indices[h]]
                    total += weights[h - lo]
                pick = -1
                if total > 0:
                    u = np.random.random() * total
                    acc = 0.0
                    for h in range(lo, hi):
                        acc += weights[h - lo]
                        if u < acc:
                            pick = indices[h]
                            break
                    if pick < 0:
                        pick = indices[hi - 1]
                else:
                    best = 1 << 30
                    for h in range(lo, hi):
                        if hop[indices[h], e] < best:
                            best = hop[indices[h], e]
                            pick = indices[h]
                out[base + p] = pick
        i = j
    return out, offsets


def bridges(indptr, indices, prob, hop, start, end, length, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Routes of ``length[q]`` states from ``start[q]`` to ``end[q]`` (concatenated, offsets)."""
    return _bridges(indptr, indices, np.asarray(prob, np.float64), hop, np.asarray(start, np.int64),
                    np.asarray(end, np.int64), np.asarray(length, np.int64), int(seed) % (2 ** 32))


def row_normalized(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each state's outgoing CSR weights divided by their sum (a row of zeros stays zero)."""
    row = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    total = np.bincount(row, weights=values, minlength=indptr.size - 1)
    return np.where(total[row] > 0, values / np.where(total[row] > 0, total[row], 1.0), 0.0)


@njit(cache=True)
def _to_locations(states, offsets, loc_indptr, loc_indices, seed, min_cells, indptr, indices):
    np.random.seed(seed)
    m = offsets.size - 1
    out = np.empty(states.size + m * max(min_cells, 1), np.int64)
    length = np.zeros(m, np.int64)
    used = 0
    for q in range(m):
        used, length[q] = walk_locations(out, used, states[offsets[q]:offsets[q + 1]], loc_indptr, loc_indices,
                                         min_cells, indptr, indices)
    return out[:used], length


def subcells(states: np.ndarray, first: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each level-1 state, one of its level-2 cells (``first[s]`` .. ``first[s + 1]`` - 1), drawn in
    proportion to ``weights`` (uniformly where a cell's weights are all 0): the authors'
    Cell.sampleRandomPoint, which picks a level-2 cell by density before a point inside it."""
    states = np.asarray(states, np.int64)
    lo, hi = first[states], first[states + 1]
    cum = np.concatenate([[0.0], np.cumsum(np.maximum(weights, 0.0))])
    total = cum[hi] - cum[lo]
    u = rng.random(states.size)
    drawn = np.searchsorted(cum, cum[lo] + u * total, side="right") - 1
    uniform = lo + (u * (hi - lo)).astype(np.int64)
    return np.clip(np.where(total > 0, drawn, uniform), lo, hi - 1)


def to_locations(states, offsets, loc_indptr, loc_indices, seed: int, min_cells: int = 1, indptr=None,
                 indices=None) -> tuple[np.ndarray, np.ndarray]:
    """Each state as a location of the space inside its cell, drawn uniformly (the nearest one
    when none lies inside), consecutive repeats merged: (locations, lengths); a route of fewer
    than ``min_cells`` locations completed as synth/min_cells.py says (``indptr``, ``indices``:
    the states each touches)."""
    if indptr is None:
        indptr, indices = np.zeros(loc_indptr.size, np.int64), np.zeros(0, np.int64)
    return _to_locations(states, offsets, loc_indptr, loc_indices, int(seed) % (2 ** 32), int(min_cells),
                         np.asarray(indptr, np.int64), np.asarray(indices, np.int64))
