"""The transition-count and visit-count tensors of PPMTF (paper 001 §3.2 and §3.3).

R^I[n, i, j] counts user n's transitions from location i to j between events in consecutive
instants; R^II[n, i, l] counts user n's events at location i in time slot l. Each user keeps at
most ``lam`` positive cells per tensor, chosen at random (trimming), and counts above ``r_max``
become ``r_max``. Then ``rho`` zero cells per user per tensor are chosen once and treated as
observed zeros; every other zero cell is missing. Only observed cells are stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit, prange

from ...errors import InputError
from ...rng import below, user_words
from ...traces import TraceSet


@dataclass(frozen=True)
class Cells:
    """Observed cells of one tensor grouped by user (CSR): the cells of user n are
    ``offsets[n]:offsets[n+1]``, with location ``i``, ``j`` (next location for R^I, slot for
    R^II) and count ``r`` (0 for the chosen zero cells). Compact dtypes (uint16 indices, uint8
    counts) keep the ~480 million cells of an Istanbul-sized fit in about 2.5 GB."""

    offsets: np.ndarray
    i: np.ndarray
    j: np.ndarray
    r: np.ndarray

    @property
    def size(self) -> int:
        return int(self.i.size)

    @cached_property
    def sum_r2(self) -> float:
        """sum of r^2 over the cells."""
        if self.r.dtype == np.uint8:
            counts = np.bincount(self.r, minlength=1)
            return float(counts @ np.arange(counts.size, dtype=np.float64) ** 2)
        return float(np.square(self.r, dtype=np.float64).sum())

    @property
    def user(self) -> np.ndarray:
        """The user of each cell."""
        return np.repeat(np.arange(self.offsets.size - 1, dtype=np.int32), np.diff(self.offsets))


@dataclass(frozen=True)
class Tensors:
    """R^I (``transitions``: users x locations x locations) and R^II (``visits``: users x
    locations x slots), as their observed cells."""

    transitions: Cells
    visits: Cells
    n_users: int
    n_locations: int
    n_slots: int

    @property
    def n_cells(self) -> int:
        return self.transitions.size + self.visits.size


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


def index_dtype(n: int) -> np.dtype:
    """The narrowest unsigned dtype for indices below ``n``."""
    return np.dtype(np.uint16) if n <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


def select_cells(user: np.ndarray, i: np.ndarray, j: np.ndarray, count: np.ndarray, n_users: int, n_i: int,
                 n_j: int, lam: int, r_max: int, rho: int, seed: int, stream: int) -> Cells:
    """Trimming and zero cells of one tensor (§3.2-3.3), user by user.

    ``(user, i, j, count)`` are the positive cells sorted by (user, i, j). For each user: at most ``lam`` positive cells chosen uniformly at random, counts
    capped at ``r_max``; then ``rho`` distinct cells among its zero cells (all of them when there
    are fewer); every other cell is missing. User n draws from its own stream (locsynth.rng), so
    its cells do not depend on the other users.
    """
    if lam < 1 or r_max < 1 or rho < 0:
        raise InputError(f"lambda and r_max must be at least 1 and rho at least 0, got {lam}, {r_max}, {rho}")
    n_cells = n_i * n_j
    pos_off = np.searchsorted(user, np.arange(n_users + 1)).astype(np.int64)
    n_pos = np.diff(pos_off)
    sizes = np.minimum(n_pos, lam) + np.minimum(rho, n_cells - n_pos)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    idx = index_dtype(max(n_i, n_j))
    out_i, out_j = np.empty(offsets[-1], idx), np.empty(offsets[-1], idx)
    out_r = np.empty(offsets[-1], np.uint8 if r_max <= 255 else np.float32)
    keys = user_words(seed, stream, 0, n_users)[:, 0]
    cell = i.astype(np.int64) * n_j + j
    _select(pos_off, cell, count.astype(np.int64), keys, lam, r_max, rho, n_cells, n_j, offsets, out_i, out_j,
            out_r)
    return Cells(offsets, out_i, out_j, out_r)


@njit(parallel=True, cache=True)
def _select(pos_off, cell, count, keys, lam, r_max, rho, n_cells, n_j, offsets, out_i, out_j, out_r):
    for n in prange(pos_off.size - 1):
        state = np.array([keys[n]])
        lo, hi = pos_off[n], pos_off[n + 1]
        p = hi - lo
        w = offsets[n]
        # positive cells: a uniformly random subset of lam (partial Fisher-Yates)
        pick = np.arange(lo, hi)
        k = min(p, lam)
        for q in range(k):
            s = q + below(state, p - q)
            pick[q], pick[s] = pick[s], pick[q]
        for q in range(k):
            out_i[w], out_j[w] = cell[pick[q]] // n_j, cell[pick[q]] % n_j
            out_r[w] = min(count[pick[q]], r_max)
            w += 1
        want = offsets[n + 1] - w
        if want == 0:
            continue
        free = n_cells - p
        if 3 * want >= free:
            # dense: list the zero cells and choose among them
            zeros = np.empty(free, np.int64)
            q, c = 0, 0
            for x in range(n_cells):
                if c < p and cell[lo + c] == x:
                    c += 1
                else:
                    zeros[q] = x
                    q += 1
            for q in range(want):
                s = q + below(state, free - q)
                zeros[q], zeros[s] = zeros[s], zeros[q]
                out_i[w + q], out_j[w + q] = zeros[q] // n_j, zeros[q] % n_j
                out_r[w + q] = 0
        else:
            # sparse: rejection against the positive cells and those already drawn (hash set)
            size = 1
            while size < 4 * want:
                size *= 2
            table = np.full(size, -1, np.int64)
            q = 0
            while q < want:
                x = below(state, n_cells)
                at = np.searchsorted(cell[lo:hi], x)
                if at < p and cell[lo + at] == x:
                    continue
                h = (x * 0x9E3779B1) & (size - 1)
                while table[h] != -1 and table[h] != x:
                    h = (h + 1) & (size - 1)
                if table[h] == x:
                    continue
                table[h] = x
                out_i[w + q], out_j[w + q] = x // n_j, x % n_j
                out_r[w + q] = 0
                q += 1


def build_tensors(traces: TraceSet, lam: int = 100, r_max: int = 10, rho: int = 1000,
                  seed: int = 0) -> Tensors:
    """R^I and R^II of ``traces`` with trimming (lam, r_max) and rho zero cells per user (§3.2-3.3)."""
    if traces.n_traces == 0:
        raise InputError("cannot build tensors of an empty TraceSet")
    n_users, n_loc, n_slots = traces.n_traces, traces.space.n_locations, traces.time.n_slots
    transitions = select_cells(*transition_counts(traces), n_users, n_loc, n_loc, lam, r_max, rho, seed, 0)
    visits = select_cells(*visit_counts(traces), n_users, n_loc, n_slots, lam, r_max, rho, seed, 1)
    return Tensors(transitions, visits, n_users, n_loc, n_slots)
