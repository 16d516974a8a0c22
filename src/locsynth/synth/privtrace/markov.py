"""PrivTrace's counts (Wang et al., USENIX Security 2023, §4.2-4.3): the level-1 densities, the
first-order transitions with the virtual start and end states, and the second-order
transitions through the states that need them ("guideposts"). Every query gives each trajectory
a total weight of at most 1, so each has L1 sensitivity 1 under adding or removing one trajectory:

- density: a trajectory adds the share of its points in each level-1 cell (sum 1);
- first order: a trajectory of l states adds 1 / (l + 1) to each of its l - 1 moves, to
  start -> first and to last -> end (sum 1; moves between states that do not touch, which the
  interpolation leaves only at raster corners, are not counted);
- second order: each visit of a guidepost g adds 1 / l to (previous, next) of g's table, the
  previous state being start or a neighbour of g and the next end or a neighbour (sum <= 1).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .grid import TwoLevelGrid


def per_trace(offsets: np.ndarray) -> np.ndarray:
    """The trace of every element of a ragged array."""
    return np.repeat(np.arange(offsets.size - 1), np.diff(offsets))


def select(seq: np.ndarray, offsets: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sequences ``which`` (sorted indices) of ``seq`` cut at ``offsets``, and their offsets."""
    which = np.asarray(which, np.int64)
    length = np.diff(offsets)[which]
    out_offsets = np.r_[0, np.cumsum(length)].astype(np.int64)
    return seq[np.repeat(offsets[:-1][which] - out_offsets[:-1], length) + np.arange(out_offsets[-1])], out_offsets


def points(traces, xy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, offsets): every event's planar coordinates (``xy``, per location) and the traces' offsets."""
    return xy[0][traces.loc], xy[1][traces.loc], traces.offsets


def clipped_points(points: tuple, cap: int) -> int:
    """The number of points of the trajectories (x, y, offsets), each one's clipped at ``cap``."""
    return int(np.minimum(np.diff(points[2]), cap).sum())


def density_of(points: tuple, grid: TwoLevelGrid) -> np.ndarray:
    """:func:`density` of the trajectories (x, y, offsets)."""
    return density(grid, *points)


def states_of(points: tuple, grid: TwoLevelGrid) -> tuple[np.ndarray, np.ndarray]:
    """:func:`states` of the trajectories (x, y, offsets)."""
    return states(grid, *points)


def density(grid: TwoLevelGrid, x: np.ndarray, y: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Level-1 densities: per cell, the sum over trajectories of the share of their points in it
    (an empty trajectory has no point and adds nothing)."""
    cell, _, _ = grid.level1(x, y)
    weight = 1.0 / np.diff(offsets)[per_trace(offsets)]     # every point's trajectory has >= 1 point
    return np.bincount(cell, weights=weight, minlength=grid.k * grid.k)


def states(grid: TwoLevelGrid, x: np.ndarray, y: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every trajectory as its sequence of states, (states, offsets): each segment between two
    consecutive points sampled every half of the finest cell side, so that consecutive states
    touch, and consecutive repeats merged.

    The samples of a segment are x_i + (j / steps) (x_{i+1} - x_i), j = 1 .. steps, taken in order
    and merged as they come, in two compiled passes over the trajectories in parallel (one counts,
    one writes each trajectory's states at its place), each run of samples in one state crossed by
    galloping (see _walk): the samples are never held, which at 1.7 million trips and a 60 x 60
    grid ran out of memory, and the work follows the states crossed, not the samples, whose number
    grows as the grid refines with the data (issue 39; the states crossed grow too, 20 a trip on
    the cabs and 62 at 24 times them)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    offsets = np.asarray(offsets, np.int64)
    steps = _segment_steps(x, y, offsets, 0.5 * grid.finest())
    args = (x, y, steps, offsets, *grid.box, grid.k, grid.m.astype(np.int64), grid.offsets.astype(np.int64))
    out_offsets = np.concatenate([[0], np.cumsum(_states_count(*args))]).astype(np.int64)
    out = np.empty(int(out_offsets[-1]), np.int64)
    _states_write(*args, out_offsets, out)
    return out, out_offsets


@njit(cache=True)
def _segment_steps(x, y, offsets, half_side):
    """Per point, the samples of the segment it starts within its trajectory (0 for a last point)."""
    steps = np.zeros(x.size, np.int64)
    for t in range(offsets.size - 1):
        for i in range(offsets[t], offsets[t + 1] - 1):
            steps[i] = max(np.int64(np.ceil(np.hypot(x[i + 1] - x[i], y[i + 1] - y[i]) / half_side)), 1)
    return steps


@njit(cache=True)
def _state(px, py, x0, y0, x1, y1, k, m, first):
    """TwoLevelGrid.state of one point, with its operations in the same order."""
    fx = min(max((px - x0) / max(x1 - x0, 1e-9) * k, 0.0), k - 1e-9)
    fy = min(max((py - y0) / max(y1 - y0, 1e-9) * k, 0.0), k - 1e-9)
    col, row = np.int64(fx), np.int64(fy)
    cell = row * k + col
    u, v = fx - col, fy - row
    mc = m[cell]
    return first[cell] + np.int64(v * mc) * mc + np.int64(u * mc)


@njit(cache=True)
def _walk(t, x, y, steps, offsets, x0, y0, x1, y1, k, m, first, out, pos):
    """Trajectory t's states, its points and their segments' samples in order with repeats merged,
    written into ``out`` from ``pos`` when ``out`` is not empty; returns how many."""
    write = out.size > 0
    count = 0
    last = -1
    for i in range(offsets[t], offsets[t + 1]):
        s = _state(x[i], y[i], x0, y0, x1, y1, k, m, first)
        if s != last:
            if write:
                out[pos + count] = s
            count += 1
            last = s
        if steps[i] == 0:
            continue
        dxi, dyi = x[i + 1] - x[i], y[i + 1] - y[i]
        # the samples' coordinates are monotone in j, and so is each part of a state (level-1
        # column and row, subcell column and row): two samples in one state have every sample
        # between them in it. So each run of one state is skipped by galloping, not visited.
        j, n_steps = 0, steps[i]
        while j < n_steps:
            s = _sample_state(x[i], y[i], dxi, dyi, j, n_steps, x0, y0, x1, y1, k, m, first)
            if s != last:
                if write:
                    out[pos + count] = s
                count += 1
                last = s
            lo, step = j, 1                    # lo: the last sample known to be in s
            while lo + step < n_steps and \
                    _sample_state(x[i], y[i], dxi, dyi, lo + step, n_steps, x0, y0, x1, y1, k, m, first) == s:
                lo += step
                step *= 2
            hi = min(lo + step, n_steps)       # the first sample known to be elsewhere (or the end)
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if _sample_state(x[i], y[i], dxi, dyi, mid, n_steps, x0, y0, x1, y1, k, m, first) == s:
                    lo = mid
                else:
                    hi = mid
            j = lo + 1
    return count


@njit(cache=True, parallel=True)
def _states_count(x, y, steps, offsets, x0, y0, x1, y1, k, m, first):
    """Every trajectory's number of states (trajectories in parallel)."""
    n = offsets.size - 1
    counts = np.zeros(n, np.int64)
    none = np.zeros(0, np.int64)
    for t in prange(n):
        counts[t] = _walk(t, x, y, steps, offsets, x0, y0, x1, y1, k, m, first, none, 0)
    return counts


@njit(cache=True, parallel=True)
def _states_write(x, y, steps, offsets, x0, y0, x1, y1, k, m, first, out_offsets, out):
    """Every trajectory's states at its place in ``out`` (trajectories in parallel)."""
    for t in prange(offsets.size - 1):
        _walk(t, x, y, steps, offsets, x0, y0, x1, y1, k, m, first, out, out_offsets[t])


@njit(cache=True)
def _sample_state(xi, yi, dxi, dyi, j, n_steps, x0, y0, x1, y1, k, m, first):
    """The state of sample j of a segment: x_i + ((j + 1) / steps) dx."""
    frac = (j + 1) / n_steps
    return _state(xi + frac * dxi, yi + frac * dyi, x0, y0, x1, y1, k, m, first)


def first_order(seq: np.ndarray, offsets: np.ndarray, indptr: np.ndarray, indices: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(moves per CSR edge, start counts, end counts), each trajectory of l >= 1 states weighted
    1 / (l + 1); an empty trajectory has no start, end or move and adds nothing (were it given the
    weight 1 / (0 + 1), its start and end would fall on its neighbours' states, moving the counts
    by 2 in L1 against the sensitivity 1 the noise assumes)."""
    seq, offsets = np.asarray(seq, np.int64), np.asarray(offsets, np.int64)
    length = np.diff(offsets)
    weight = 1.0 / (length + 1.0)
    some = length > 0
    n = indptr.size - 1
    start = np.bincount(seq[offsets[:-1][some]], weights=weight[some], minlength=n)
    end = np.bincount(seq[offsets[1:][some] - 1], weights=weight[some], minlength=n)
    return edge_counts(seq, offsets, indptr, indices, weight), start, end


def edge_counts(seq: np.ndarray, offsets: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                weight: np.ndarray | None = None) -> np.ndarray:
    """Per CSR edge, the moves between consecutive states of the trajectories (``seq[offsets[t]:
    offsets[t + 1]]``), each weighted by its trajectory's ``weight`` (1 without); a move between
    states that do not touch counts nowhere. One compiled pass, the edges found by a scan of
    their row (a state has a few dozen neighbours at most)."""
    offsets = np.asarray(offsets, np.int64)
    w = np.ones(offsets.size - 1) if weight is None else np.asarray(weight, np.float64)
    return _edge_counts(np.asarray(seq, np.int64), offsets, np.asarray(indptr, np.int64),
                        np.asarray(indices, np.int64), w)


@njit(cache=True)
def _edge_counts(seq, offsets, indptr, indices, weight):
    moves = np.zeros(indices.size)
    for t in range(offsets.size - 1):
        for i in range(offsets[t], offsets[t + 1] - 1):
            p = _position(indptr, indices, seq[i], seq[i + 1])
            if p >= 0:
                moves[indptr[seq[i]] + p] += weight[t]
    return moves


def guideposts(moves: np.ndarray, start: np.ndarray, end: np.ndarray, indptr: np.ndarray, epsilon: float,
               ratio: float = 5.0, share: float = 0.02) -> np.ndarray:
    """The states that get second-order tables, from the noisy first-order counts only (the
    authors' sensitive_filter.py): a state whose moves outweigh the noise of its row (more than
    n_states x sqrt(2) / epsilon) and whose two likeliest moves are close (top / second < 5); or
    that carries more than 2 % of all moves, of all starts or of all ends."""
    n = indptr.size - 1
    row = np.repeat(np.arange(n), np.diff(indptr))
    out = np.bincount(row, weights=moves, minlength=n)
    amount = out > n * np.sqrt(2.0) / epsilon
    first = np.zeros(n)
    np.maximum.at(first, row, moves)
    second = np.zeros(n)
    below = moves < first[row]
    np.maximum.at(second, row[below], moves[below])
    ties = np.bincount(row, weights=(moves == first[row]) & (moves > 0), minlength=n) > 1
    second = np.where(ties, first, second)
    close = (second > 0) & (first < ratio * second)
    large = out + end > share * (out.sum() + end.sum())
    return (amount & close) | large | (start > share * start.sum()) | (end > share * end.sum())


def table_offsets(indptr: np.ndarray, posts: np.ndarray) -> np.ndarray:
    """Offsets of the guideposts' tables: (d + 1)^2 cells for a state of d neighbours
    (previous: d neighbours and start; next: d neighbours and end)."""
    degree = np.diff(indptr)[posts]
    return np.concatenate([[0], np.cumsum((degree + 1) ** 2)]).astype(np.int64)


def second_order(seq: np.ndarray, offsets: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                 post_id: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The guideposts' (previous, next) tables, flattened; each visit weighted 1 / l (row
    ``degree`` of a table: from the virtual start; column ``degree``: into the virtual end). One
    compiled pass over the states."""
    return _second_order(np.asarray(seq, np.int64), np.asarray(offsets, np.int64), np.asarray(indptr, np.int64),
                         np.asarray(indices, np.int64), np.asarray(post_id, np.int64), np.asarray(tables, np.int64))


@njit(cache=True)
def _position(indptr, indices, a, b):
    """Position of b among a's neighbours (-1 when it is not one)."""
    for p in range(indptr[a], indptr[a + 1]):
        if indices[p] == b:
            return p - indptr[a]
    return -1


@njit(cache=True)
def _second_order(seq, offsets, indptr, indices, post_id, tables):
    out = np.zeros(tables[-1])
    for t in range(offsets.size - 1):
        lo, hi = offsets[t], offsets[t + 1]
        for i in range(lo, hi):
            g = seq[i]
            if post_id[g] < 0:
                continue
            degree = indptr[g + 1] - indptr[g]
            prev = degree if i == lo else _position(indptr, indices, g, seq[i - 1])
            nxt = degree if i == hi - 1 else _position(indptr, indices, g, seq[i + 1])
            if prev >= 0 and nxt >= 0:             # moves between states that do not touch are not counted
                out[tables[post_id[g]] + prev * (degree + 1) + nxt] += 1.0 / (hi - lo)
    return out
