"""LDPTrace's user side (Du et al., PVLDB 2023, §4): what one user's device computes from their own
trajectory and sends, already perturbed, to the collector. Nothing here sees another user.

The grid (public: N x N cells over the box of the space's locations) numbers cell (row, col) as
row N + col. A trajectory is its sequence of cells, interpolated so that consecutive cells touch
and repeats merged (privtrace/markov.states); its length is its number of cells.

Two rounds, each ONE OUE report (privacy/oue.py) of a value the user computes alone:

1. Length: the length l in 1 .. d_len (d_len = N^2 in the authors' code, longer ones clipped to
   it), value l - 1, at ``length_share`` x epsilon (epsilon / 10).
2. Mobility, given the collector's public maximum length L from round 1: the trajectory's first
   min(l, L) cells hold L + 1 values, the start cell (N^2 values), L - 1 moves, each a (cell,
   direction) pair, 8 cell + direction (the direction one of the 8 neighbours, :data:`DIRECTIONS`;
   the paper's adjacency encoding, which shrinks the domain of a move from N^4 pairs to 8 N^2),
   and the end cell (the last of the first min(l, L)); a move the trajectory lacks holds no value.
   The user draws one of these L + 1 slots uniformly (:func:`slots`; its own coin, independent of
   the data, so the slot is sent in the clear) and reports that slot's value by OUE at the whole
   (1 - length_share) epsilon. A move's report has a bit for each move that stays on the grid
   (:func:`valid_moves`: 220 of the 288 at N = 6), not for the pairs of a border cell and a
   direction off the grid, which no user holds: the estimates of the others are the same in law
   (OUE's bits are independent), and the collector sets those to 0 anyway (the authors'
   generate_markov_matrix skips them).

Choice where the authors' code differs (issue 48). Their user sends min(l, L) + 1 reports at
(1 - length_share) epsilon / (L + 1) each, so how many reports arrive says min(l, L) in the clear.
Sending all L + 1 (the moves a shorter trajectory lacks as reports of no value) hides the length,
but the collector then sums L - 1 noisy move reports per user where the authors sum min(l, L) - 1
(2.9 times as many at L = 5 on the cabs), each at a budget split L + 1 ways. One report of a
uniformly drawn slot at the whole budget hides the length the same way and is cheaper: OUE's
variance per report, 4 e^eps / (e^eps - 1)^2, grows as 1 / eps^2 for a small eps, so a count's
variance is about L + 1 times smaller than with L + 1 split reports (the sampling of one attribute
in multi-attribute LDP collection, as in Wang et al., "Collecting and Analyzing Multidimensional
Data with Local Differential Privacy", ICDE 2019; the time reports of times.py split users, not
budgets, for the same reason). The collector scales each kind's estimates by its slots over its reports
(collector.scaled), which keeps them unbiased.

An empty trajectory reports no value in every report (its length too): it is as private as any
other, and the collector's estimates count it nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...privacy import oue
from ...core.validation import check_count, check_epsilon, in_range

#: the check of a share of epsilon that must leave some for the rest: in (0, 1)
check_length_share = in_range(0.0, 1.0, open_low=True, open_high=True)

#: the 8 moves to a touching cell, (row step, column step), in the order of their direction codes
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
#: direction code of (row step + 1, column step + 1); -1 for no move (the cell itself)
_CODE = np.array([[0, 1, 2], [3, -1, 4], [5, 6, 7]], np.int64)


def direction(a, b, grid_size: int) -> np.ndarray:
    """The direction code (0 .. 7, :data:`DIRECTIONS`) of every move from cell ``a`` to cell ``b``;
    -1 where they do not touch (or are the same cell)."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    dr, dc = b // grid_size - a // grid_size, b % grid_size - a % grid_size
    ok = (np.abs(dr) <= 1) & (np.abs(dc) <= 1)
    return np.where(ok, _CODE[np.clip(dr + 1, 0, 2), np.clip(dc + 1, 0, 2)], -1)


def move_code(a, b, grid_size: int) -> np.ndarray:
    """The value a move reports: 8 x cell + direction (0 .. 8 N^2 - 1); -1 for cells that do not touch."""
    d = direction(a, b, grid_size)
    return np.where(d >= 0, 8 * np.asarray(a, np.int64) + d, -1)


def valid_moves(grid_size: int) -> np.ndarray:
    """The move codes (8 x cell + direction) whose direction stays on the grid, in increasing
    order: the values a move's report has bits for (module docstring)."""
    n = int(grid_size)
    row, col = np.divmod(np.arange(n * n), n)
    steps = np.array(DIRECTIONS)
    r, c = row[:, None] + steps[:, 0], col[:, None] + steps[:, 1]
    return np.flatnonzero(((r >= 0) & (r < n) & (c >= 0) & (c < n)).ravel())


def move_slots(moves: np.ndarray, grid_size: int) -> np.ndarray:
    """Each move code's position among :func:`valid_moves` (-1 stays -1: no value)."""
    valid = valid_moves(grid_size)
    m = np.asarray(moves, np.int64)
    return np.where(m >= 0, np.searchsorted(valid, np.maximum(m, 0)), -1)


def length_domain(grid_size: int) -> int:
    """d_len = N^2, the lengths a user can report (the authors' ``estimate_max_length``)."""
    return int(grid_size) ** 2


@dataclass(frozen=True)
class Values:
    """What users report before perturbation, one row per user, -1 for no value: ``length``
    (n,) in 0 .. d_len - 1 (the length minus 1), ``start`` and ``end`` (n,) cells, ``moves``
    (n, L - 1) move codes."""

    length: np.ndarray
    start: np.ndarray
    moves: np.ndarray
    end: np.ndarray


def values(cells: np.ndarray, offsets: np.ndarray, grid_size: int, max_len: int) -> Values:
    """Every user's values (:class:`Values`) from their cell sequences (``cells`` concatenated,
    user u's at ``offsets[u]:offsets[u + 1]``), with the public maximum length ``max_len`` = L."""
    cells, offsets = np.asarray(cells, np.int64), np.asarray(offsets, np.int64)
    n, L = offsets.size - 1, check_count(max_len, "max_len")
    length = np.diff(offsets)
    some = length > 0
    keep = np.minimum(length, L)
    start = np.where(some, cells[np.minimum(offsets[:-1], max(cells.size - 1, 0))] if cells.size else -1, -1)
    end = np.where(some, cells[np.maximum(offsets[:-1] + keep - 1, 0)] if cells.size else -1, -1)
    moves = np.full((n, L - 1), -1, np.int64)
    steps = np.maximum(keep - 1, 0)                       # moves among the first min(l, L) cells
    user = np.repeat(np.arange(n), steps)
    slot = np.arange(user.size) - np.repeat(np.cumsum(steps) - steps, steps)
    at = offsets[:-1][user] + slot
    moves[user, slot] = move_code(cells[at], cells[at + 1], grid_size) if at.size else at
    if (moves[user, slot] < 0).any():
        raise InputError("a trajectory moves between cells that do not touch: interpolate it first")
    d_len = length_domain(grid_size)
    return Values(np.where(some, np.minimum(length, d_len) - 1, -1), start, moves, end)


@dataclass(frozen=True)
class Report:
    """Perturbed reports, one row per user: ``length`` (n, d_len) bool bits, ``slot`` (n,) the
    slot each user drew (:func:`slots`, in the clear), ``mobility`` (n, the widest kind's domain)
    the bits of that slot's value, over :func:`valid_moves` for a move."""

    length: np.ndarray
    slot: np.ndarray
    mobility: np.ndarray


def budgets(epsilon: float, length_share: float = 0.1) -> tuple[float, float]:
    """(epsilon of the length report, epsilon of the one mobility report): the authors' main.py
    gives epsilon / 10 to the length and the rest to the mobility (module docstring: one sampled
    report where theirs splits it over L + 1)."""
    eps, share = check_epsilon(epsilon), check_length_share(length_share, "length_share")
    return share * eps, (1 - share) * eps


def slots(users: int, max_len: int, rng: np.random.Generator) -> np.ndarray:
    """Each user's slot, uniform over 0 .. L: 0 the start, 1 .. L - 1 a move, L the end (the
    user's own coin: it depends on no data, so it is sent in the clear)."""
    return rng.integers(0, check_count(max_len, "max_len") + 1, size=int(users))


def kinds(max_len: int) -> dict[str, int]:
    """How many of the L + 1 slots each kind of value fills: one start, L - 1 moves, one end."""
    L = check_count(max_len, "max_len")
    return {"start": 1, "moves": L - 1, "end": 1}


def chosen(v: Values, slot: np.ndarray, grid_size: int) -> dict[str, np.ndarray]:
    """The value each user reports, grouped by kind: ``start`` and ``end`` cells, ``moves`` as
    positions among :func:`valid_moves` (-1 for no value), each for the users whose slot is of that
    kind, in user order."""
    slot = np.asarray(slot, np.int64)
    L = v.moves.shape[1] + 1
    moving = np.flatnonzero((slot >= 1) & (slot <= L - 1))
    return {"start": v.start[slot == 0], "moves": move_slots(v.moves[moving, slot[moving] - 1], grid_size),
            "end": v.end[slot == L]}


def domains(grid_size: int) -> dict[str, int]:
    """How many values (bits) each kind's report has."""
    return {"start": int(grid_size) ** 2, "moves": valid_moves(grid_size).size, "end": int(grid_size) ** 2}


def perturb_length(length: np.ndarray, grid_size: int, epsilon: float) -> np.ndarray:
    """Round 1: the length values' OUE reports at ``epsilon`` (the length's own budget)."""
    return oue.perturb(length, length_domain(grid_size), epsilon)


def perturb_mobility(v: Values, slot: np.ndarray, grid_size: int, epsilon: float) -> np.ndarray:
    """Round 2: each user's one report of its slot's value at ``epsilon`` (the whole mobility
    budget), as rows of the widest kind's bits, those past its own kind's domain False."""
    d = domains(grid_size)
    out = np.zeros((np.asarray(slot).size, max(d.values())), bool)
    slot = np.asarray(slot, np.int64)
    L = v.moves.shape[1] + 1
    rows = {"start": slot == 0, "moves": (slot >= 1) & (slot <= L - 1), "end": slot == L}
    for kind, value in chosen(v, slot, grid_size).items():
        if value.size:
            out[np.flatnonzero(rows[kind]), :d[kind]] = oue.perturb(value, d[kind], epsilon)
    return out


def reports(cells, offsets, grid_size: int, max_len: int, epsilon: float, length_share: float = 0.1,
            rng: np.random.Generator | None = None) -> Report:
    """Both rounds' reports of many users at once (row u: user u's trajectory,
    ``cells[offsets[u]:offsets[u + 1]]``), each row drawn as :func:`report` draws it, L = ``max_len``
    public by round 2; ``rng`` draws the slots (the users' own coins)."""
    v = values(cells, offsets, grid_size, max_len)
    eps_length, eps_mobility = budgets(epsilon, length_share)
    slot = slots(v.start.size, max_len, rng if rng is not None else np.random.default_rng())
    return Report(perturb_length(v.length, grid_size, eps_length), slot,
                  perturb_mobility(v, slot, grid_size, eps_mobility))


def report(cells, grid_size: int, max_len: int, epsilon: float, length_share: float = 0.1,
           rng: np.random.Generator | None = None) -> Report:
    """What ONE user sends: the perturbed reports of their trajectory ``cells`` (its cell sequence,
    consecutive cells touching) in both rounds, L = ``max_len`` being public by round 2; ``epsilon``
    in all, against the collector too (local DP). Each field has one row; the slot depends on no data."""
    cells = np.asarray(cells, np.int64).ravel()
    return reports(cells, np.array([0, cells.size]), grid_size, max_len, epsilon, length_share, rng)
