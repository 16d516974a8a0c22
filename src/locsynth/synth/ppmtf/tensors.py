"""The transition-count and visit-count tensors of PPMTF (paper 001 §3.2 and §3.3).

R^I[n, i, j] counts user n's transitions from location i to j between events in consecutive
instants; R^II[n, i, l] counts user n's events at location i in time slot l. Each user keeps at
most ``lam`` positive cells per tensor, chosen at random (trimming), and counts above ``r_max``
become ``r_max``. Then ``rho`` zero cells per user per tensor are chosen once and treated as
observed zeros; every other zero cell is missing. Only observed cells are stored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...traces import TraceSet


@dataclass(frozen=True)
class Cells:
    """Observed cells of one tensor, sorted by user: ``user``, ``i`` (location), ``j`` (next
    location for R^I, slot for R^II) and the count ``r`` (0 for the chosen zero cells)."""

    user: np.ndarray
    i: np.ndarray
    j: np.ndarray
    r: np.ndarray

    @property
    def size(self) -> int:
        return int(self.user.size)


@dataclass(frozen=True)
class Tensors:
    """R^I (``transitions``: users x locations x locations) and R^II (``visits``: users x
    locations x slots), as their observed cells."""

    transitions: Cells
    visits: Cells
    n_users: int
    n_locations: int
    n_slots: int


def transition_counts(traces: TraceSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(user, i, j, count) of R^I before trimming: transitions between consecutive instants."""
    same = (traces.user[1:] == traces.user[:-1]) & traces.time.consecutive(traces.t[:-1], traces.t[1:])
    n_loc = traces.space.n_locations
    key = (traces.user[:-1][same].astype(np.int64) * n_loc + traces.loc[:-1][same]) * n_loc + traces.loc[1:][same]
    return _split_keys(key, n_loc, n_loc)


def visit_counts(traces: TraceSet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(user, i, slot, count) of R^II before trimming."""
    n_loc, n_slots = traces.space.n_locations, traces.time.n_slots
    key = (traces.user.astype(np.int64) * n_loc + traces.loc) * n_slots + traces.time.slot(traces.t)
    return _split_keys(key, n_loc, n_slots)


def _split_keys(key: np.ndarray, n_i: int, n_j: int):
    uniq, count = sorted_unique(key, return_counts=True)
    return uniq // (n_i * n_j), (uniq // n_j) % n_i, uniq % n_j, count


def sorted_unique(values: np.ndarray, return_counts: bool = False):
    """np.unique for integer keys by sorting (numpy 2's hashing unique is several times slower here)."""
    values = np.sort(values)
    first = np.r_[True, values[1:] != values[:-1]] if values.size else np.zeros(0, bool)
    uniq = values[first]
    if not return_counts:
        return uniq
    return uniq, np.diff(np.r_[np.flatnonzero(first), values.size])


def trim(user: np.ndarray, count: np.ndarray, lam: int, r_max: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of the positive cells kept: at most ``lam`` per user, chosen uniformly at random;
    the caller clips the kept counts to ``r_max``."""
    if lam < 1 or r_max < 1:
        raise InputError(f"lambda and r_max must be at least 1, got {lam} and {r_max}")
    priority = rng.random(user.size)
    order = np.lexsort((priority, user))
    rank = np.empty(user.size, np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(user[order])) + 1]
    sizes = np.diff(np.r_[starts, user.size])
    rank[order] = np.arange(user.size) - np.repeat(starts, sizes)
    return np.flatnonzero(rank < lam)


def zero_cells(user: np.ndarray, cell: np.ndarray, n_users: int, n_cells: int, rho: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``rho`` zero cells per user, uniformly among the cells that are not positive (all of them
    when there are fewer). ``cell`` is the flat index (i * n_j + j) of each positive cell.

    Drawn by rejection: a few more candidates than needed per user, duplicates and positive
    cells removed, and the rare user left short drawn again.
    """
    if rho <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    positive = np.bincount(user, minlength=n_users)
    want = np.minimum(rho, n_cells - positive)
    pos_keys = np.sort(user.astype(np.int64) * n_cells + cell)
    need = want.copy()
    have_keys = np.zeros(0, np.int64)
    for _ in range(64):
        users = np.flatnonzero(need > 0)
        if users.size == 0:
            break
        draws = np.ceil(need[users] * 1.25 + 8).astype(np.int64)
        u = np.repeat(users, draws)
        c = rng.integers(0, n_cells, u.size)
        keys = u.astype(np.int64) * n_cells + c
        keys = keys[~_isin_sorted(keys, pos_keys) & ~_isin_sorted(keys, have_keys)]
        keys = sorted_unique(keys)   # by user, then cell; the order within a user is shuffled below
        ku = keys // n_cells
        shuffle = rng.permutation(keys.size)
        keys, ku = keys[shuffle], ku[shuffle]
        order = np.argsort(ku, kind="stable")
        keys, ku = keys[order], ku[order]
        starts = np.r_[0, np.flatnonzero(np.diff(ku)) + 1] if ku.size else np.zeros(0, np.int64)
        rank = np.arange(ku.size) - np.repeat(starts, np.diff(np.r_[starts, ku.size]))
        keep = rank < need[ku]
        new = keys[keep]
        have_keys = np.sort(np.r_[have_keys, new])
        need -= np.bincount(new // n_cells, minlength=n_users)
    else:  # pragma: no cover - would need astronomically bad luck
        raise RuntimeError("zero-cell sampling did not finish")
    return have_keys // n_cells, have_keys % n_cells


def _isin_sorted(values: np.ndarray, sorted_ref: np.ndarray) -> np.ndarray:
    if sorted_ref.size == 0:
        return np.zeros(values.size, bool)
    pos = np.searchsorted(sorted_ref, values)
    pos = np.minimum(pos, sorted_ref.size - 1)
    return sorted_ref[pos] == values


def build_tensors(traces: TraceSet, lam: int = 100, r_max: int = 10, rho: int = 1000,
                  seed: int = 0) -> Tensors:
    """R^I and R^II of ``traces`` with trimming (lam, r_max) and rho zero cells per user (§3.2-3.3)."""
    if traces.n_traces == 0:
        raise InputError("cannot build tensors of an empty TraceSet")
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    n_users, n_loc, n_slots = traces.n_traces, traces.space.n_locations, traces.time.n_slots
    out = []
    for counts, n_j in ((transition_counts(traces), n_loc), (visit_counts(traces), n_slots)):
        user, i, j, count = counts
        keep = trim(user, count, lam, r_max, rng)
        user, i, j = user[keep], i[keep], j[keep]
        r = np.minimum(count[keep], r_max).astype(np.float64)
        zu, zc = zero_cells(user, i * n_j + j, n_users, n_loc * n_j, rho, rng)
        all_user = np.r_[user, zu]
        order = np.lexsort((np.r_[i * n_j + j, zc], all_user))
        out.append(Cells(all_user[order].astype(np.int32), np.r_[i, zc // n_j][order].astype(np.int32),
                         np.r_[j, zc % n_j][order].astype(np.int32), np.r_[r, np.zeros(zu.size)][order]))
    return Tensors(out[0], out[1], n_users, n_loc, n_slots)
