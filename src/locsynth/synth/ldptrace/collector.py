"""LDPTrace's collector (Du et al., PVLDB 2023, §4): it receives the users' perturbed reports
(user.py), never a trajectory, keeps only their bit counts (drawn in law by privacy/oue.tally)
and estimates from them (OUE's unbiased estimate) the length distribution and the maximum length
L (round 1), then the start cells, the moves and the end cells (round 2), which make the
first-order mobility model: a Markov matrix over the N^2 cells with a virtual start row (where
trajectories begin) and a virtual end column (how likely a trajectory ends in each cell).
Everything here is post-processing of LDP reports.
"""

from __future__ import annotations

import numpy as np

from .user import DIRECTIONS, valid_moves

#: the authors' smoothing of a row's sum when normalizing (main.py, generate_markov_matrix)
ROW_SMOOTHING = 1e-8


def max_length(length_estimate: np.ndarray, reports: int, quantile: float = 0.9) -> int:
    """L: the smallest length at which the estimated lengths, negatives set to 0, add up to
    ``quantile`` of the ``reports`` (the number of users, public to the collector); the largest
    length when they never do.

    Choice: the authors' ``estimate_max_length`` compares the cumulative unclipped estimates with
    ``quantile`` times their sum, whose noise is sqrt(d) times one estimate's: on the 200 cabs at
    epsilon = 1 (0.1 on the length, d = 36) that sum had a standard deviation of about 32,000
    against 72,467 reports, and L came out anywhere from 2 to 32 in 8 runs (the true 90 % quantile
    is 5). Both are post-processing of the reports; this one gave 3 to 15 in 12 runs, and L sets
    every mobility report's budget (9 epsilon / 10 / (L + 1)) and how many reports a user sends."""
    est = np.maximum(np.asarray(length_estimate, np.float64), 0.0)
    reached = np.flatnonzero(np.cumsum(est) >= quantile * int(reports))
    return int(reached[0]) + 1 if reached.size else int(est.size)


def distribution(estimate: np.ndarray) -> np.ndarray:
    """Negative estimates set to 0, the rest normalized to sum to 1 (uniform when nothing is left)."""
    est = np.maximum(np.asarray(estimate, np.float64), 0.0)
    total = est.sum()
    return est / total if total > 0 else np.full(est.size, 1.0 / max(est.size, 1))


def inside(grid_size: int) -> np.ndarray:
    """(N^2, 8) bool: whether each direction from each cell stays on the grid (user.valid_moves)."""
    n2 = int(grid_size) ** 2
    out = np.zeros(8 * n2, bool)
    out[valid_moves(grid_size)] = True
    return out.reshape(n2, 8)


def mobility(start_estimate: np.ndarray, move_estimate: np.ndarray, end_estimate: np.ndarray, grid_size: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """The first-order model (the authors' ``generate_markov_matrix``): (start, rows), ``start``
    (N^2,) the virtual start row, ``rows`` (N^2, 9) each cell's probabilities of moving in the 8
    directions (:data:`~user.DIRECTIONS`) and, last, of ending there. Negative estimates and moves
    off the grid become 0; each row is normalized by its sum + 1e-8 (a cell nobody left keeps a row
    of zeros)."""
    n2 = int(grid_size) ** 2
    moves = np.maximum(np.asarray(move_estimate, np.float64).reshape(n2, 8), 0.0) * inside(grid_size)
    rows = np.concatenate([moves, np.maximum(np.asarray(end_estimate, np.float64), 0.0)[:, None]], axis=1)
    rows /= rows.sum(axis=1, keepdims=True) + ROW_SMOOTHING
    return distribution(start_estimate), rows


def matrix(start: np.ndarray, rows: np.ndarray, grid_size: int) -> np.ndarray:
    """The model as one (N^2 + 1, N^2 + 1) Markov matrix, the paper's form: row i < N^2 the cell i's
    moves to its neighbours' columns and its end in the last column; the last row the virtual start."""
    n = int(grid_size)
    n2 = n * n
    out = np.zeros((n2 + 1, n2 + 1))
    row, col = np.divmod(np.arange(n2), n)
    for d, (dr, dc) in enumerate(DIRECTIONS):
        r, c = row + dr, col + dc
        ok = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        out[np.flatnonzero(ok), (r * n + c)[ok]] = rows[ok, d]
    out[:n2, n2] = rows[:, 8]
    out[n2, :n2] = start
    return out
