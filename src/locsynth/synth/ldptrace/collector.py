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
from scipy.optimize import isotonic_regression

from ...privacy import oue
from ..privtrace.markov import select
from ..trip_times import held
from .user import DIRECTIONS, chosen, domains, length_domain, valid_moves, values

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
    is 5). Both are post-processing of the reports; this one gave 2 to 16 in 31 fits at epsilon 1
    (2 to 17 at 0.5, 3 to 20 at 2; the authors' code 1 to 36 over 15 runs at 0.5, 1, 2). Tried
    and dropped (40 simulated draws each at epsilon 1): the quantile of the Norm-Sub estimates (12 to 36), of the
    running maximum of the unclipped cumulative estimates (3 to 36), of the unimodal fit (4 to 29):
    the tail's noise over 30 bins outweighs the 10 % it has to find. L sets which share of the
    L + 1 slots are moves (user.slots), no longer each report's budget."""
    est = np.maximum(np.asarray(length_estimate, np.float64), 0.0)
    reached = np.flatnonzero(np.cumsum(est) >= quantile * int(reports))
    return int(reached[0]) + 1 if reached.size else int(est.size)


def scaled(estimate: np.ndarray, slots: int, reports: int, users: int) -> np.ndarray:
    """A kind's estimated counts over all ``users``' trajectories from the ``reports`` of the users
    whose slot was of that kind (``slots`` of the L + 1, user.kinds): each such user reports one of
    its kind's slots uniformly, so the estimates are scaled by users x slots / reports (0 when no
    user drew the kind); unbiased given the slots (user.py's module docstring)."""
    est = np.asarray(estimate, np.float64)
    return est * (int(users) * int(slots) / int(reports)) if reports else np.zeros_like(est)


def norm_sub(estimate: np.ndarray, total: float | None = None) -> np.ndarray:
    """Norm-Sub (Wang, Lopuhaä-Zwakenberg, Li, Skoric and Li, "Locally Differentially Private
    Frequency Estimation with Consistency", NDSS 2020): max(estimate - delta, 0) with delta such
    that the result sums to ``total`` (default: the estimates' own sum, which is unbiased).

    Choice (issue 48): setting negative estimates to 0, as the authors' generate_markov_matrix
    does, keeps every value's positive noise, a bias of about 0.4 of a standard deviation on each
    of the 220 moves and 36 ends whatever its count; in the cells few trips cross, that noise
    outweighs the ends and the walks ran long. Subtracting one common delta keeps the estimates'
    total, the noise of the small values goes instead of adding up."""
    est = np.asarray(estimate, np.float64)
    target = float(est.sum() if total is None else total)
    if est.size == 0 or target <= 0:
        return np.zeros_like(est)
    top = np.sort(est)[::-1]
    # the largest k values stay above delta: delta = (sum of the top k - target) / k, for the k
    # whose delta lies between the k-th and the (k + 1)-th value
    k = np.arange(1, top.size + 1)
    delta = (np.cumsum(top) - target) / k
    fits = np.flatnonzero(top - delta > 0)
    d = delta[fits[-1]]
    return np.maximum(est - d, 0.0)


def unimodal(estimate: np.ndarray, modes: int | None = None) -> np.ndarray:
    """The least-squares unimodal fit of ``estimate`` (non-decreasing up to a mode, non-increasing
    after it; every mode among the first ``modes`` values tried, all by default; scipy's isotonic
    regression on each side), negatives set to 0. LDPTrace passes L: the mode of the lengths is
    below their 90 % quantile, and one large noisy bin far in the tail (at epsilon 0.5 an estimate
    sd of 10,700 trips a bin) otherwise drew the fit's mode to it (once in 8 fits, mode 19).

    Choice (issue 48): the length estimates at epsilon / 10 are noisy in every one of the N^2 bins
    (a standard deviation of about 5,400 trips each on the 200 cabs at epsilon 1, against 72,467),
    and setting negatives to 0 turns the tail's noise into mass: the authors' length distribution,
    the clipped estimates, had half its mass misplaced (total variation 0.49 from the true one over
    40 draws at epsilon 1; 0.64 at 0.5, 0.32 at 2), and the walks drew lengths from that long tail.
    Trip lengths in cells rise to a mode and fall (the cabs' 0.26, 0.39, 0.17, 0.07, 0.03, ...);
    the unimodal fit pools the tail's bins before clipping: total variation 0.24 (0.45, 0.16)."""
    est = np.asarray(estimate, np.float64)
    best, fit = np.inf, est
    for mode in range(est.size if modes is None else max(1, min(int(modes), est.size))):
        up = isotonic_regression(est[:mode + 1], increasing=True).x
        down = isotonic_regression(est[mode:], increasing=False).x
        candidate = np.concatenate([up[:-1], np.maximum(up[-1:], down[:1]), down[1:]])
        err = float(((candidate - est) ** 2).sum())
        if err < best:
            best, fit = err, candidate
    return np.maximum(fit, 0.0)


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
    directions (:data:`~user.DIRECTIONS`) and, last, of ending there. Moves off the grid are 0;
    each row is normalized by its sum + 1e-8 (a cell nobody left keeps a row of zeros).

    As the authors' code: every negative estimate set to 0 (moves, ends and the start row). Issue
    48 tried Norm-Sub (:func:`norm_sub`) instead, when each user sent L + 1 padded reports: it cut
    the walks' noise then, but with one sampled report per user it drops the middling moves of the
    cells few trips cross (over the whole grid: the corridor to the airport lost its moves, pattern
    support 0.887 against 0.864 clipped at epsilon 2 on the cabs; per row: 0.875), and emptied the
    start cells few trips start in (the authors' Kendall tau 0.51 to 0.31 at epsilon 1). Clipped,
    every metric of the authors' evaluation is within a standard deviation of their code or ahead
    at epsilon 0.5, 1 and 2 (docs/methods/ldptrace.md)."""
    n2 = int(grid_size) ** 2
    on = inside(grid_size)
    move_estimate = np.asarray(move_estimate, np.float64).reshape(n2, 8)
    end_estimate = np.asarray(end_estimate, np.float64)
    rows = np.concatenate([np.maximum(move_estimate, 0.0) * on, np.maximum(end_estimate, 0.0)[:, None]], axis=1)
    rows /= rows.sum(axis=1, keepdims=True) + ROW_SMOOTHING
    return distribution(start_estimate), rows


def closed(start: np.ndarray, rows: np.ndarray, open: np.ndarray, grid_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The model with the cells a public domain closes (``open`` False) out of reach: no start
    there and no move into one (post-processing); the start row renormalized (uniform over the open
    cells when nothing is left of it). The rows keep their other weights: a walk draws in proportion."""
    n = int(grid_size)
    row, col = np.divmod(np.arange(n * n), n)
    rows = rows.copy()
    for d, (dr, dc) in enumerate(DIRECTIONS):
        r, c = row + dr, col + dc
        inside = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        into = np.zeros(n * n, bool)
        into[inside] = ~open[(r * n + c)[inside]]
        rows[into, d] = 0.0
    start = np.where(open, start, 0.0)
    return (distribution(start) if start.sum() > 0 else distribution(open.astype(np.float64))), rows


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


def estimated(values: np.ndarray, d: int, epsilon: float) -> np.ndarray:
    """OUE's estimates of how many of the reports (one per entry of ``values``, -1 no value) hold
    each value 0 .. d - 1, from the tally drawn in law (privacy/oue.tally); zeros without reports."""
    return estimates(held(values, d), np.asarray(values).size, epsilon)


def estimates(counts: np.ndarray, reports: int, epsilon: float) -> np.ndarray:
    """OUE's estimates from how many of the ``reports`` reports hold each value (``counts``, of the
    reports' domain), through the tally drawn in law (privacy/oue.tally); zeros without reports."""
    if reports == 0:
        return np.zeros(np.asarray(counts).size)
    return oue.estimate(oue.tally(counts, reports, epsilon), reports, epsilon)


def length_counts(cells: np.ndarray, offsets: np.ndarray, grid_size: int) -> np.ndarray:
    """How many trajectories (cell sequences) hold each length value: what round 1's reports are
    drawn from (privacy/oue.tally; the users' values, user.values, counted: nothing here is noised)."""
    return held(values(cells, offsets, grid_size, 1).length, length_domain(grid_size))


def report_counts(states: tuple, own: tuple, grid_size: int, max_len: int) -> tuple[dict, dict]:
    """How many of the trajectories ``own[0]`` (rows of the (cells, offsets) ``states``) report each
    value of each kind in round 2, given their slots ``own[1]`` (:func:`chosen`), and how many
    reports each kind has: the counts the collector's tally is drawn from (privacy/oue.tally)."""
    rows, slot = own
    v = values(*select(*states, rows), grid_size, max_len)
    chosen_values, domain = chosen(v, slot, grid_size), domains(grid_size)
    return ({kind: held(value, domain[kind]) for kind, value in chosen_values.items()},
            {kind: int(value.size) for kind, value in chosen_values.items()})
