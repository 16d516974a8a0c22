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
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ...core.errors import InputError
from ...core.rng import below, user_words
from ...data.traces import TraceSet
from ...metrics.transitions import keyed_transition_counts
from ...metrics.visits import keyed_visit_counts


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

    @cached_property
    def orders(self) -> dict[str, "RowOrder"]:
        """The cells laid out for the Gibbs passes of B (R^I by i, R^II by i), C (R^I by j) and
        D (R^II by slot); made on first use, as the cells never change during a fit."""
        R1, R2, L = self.transitions, self.visits, self.n_locations
        return {"B1": row_order(R1, R1.i, R1.j, L), "B2": row_order(R2, R2.i, R2.j, L),
                "C": row_order(R1, R1.j, R1.i, L), "D": row_order(R2, R2.j, R2.i, self.n_slots)}


#: cells of one block of users sorted by target row (a block stays in cache while it is summed)
BLOCK_CELLS = 1 << 20
#: users of one block, so that a cell's user fits in uint16 as an offset from the block's first
BLOCK_USERS = 1 << 16


class RowOrder(NamedTuple):
    """The cells of one tensor ordered for the Gibbs pass of a location or slot factor: users in
    ``chunks`` (about equal numbers of cells, by the data's size only, so that sums do not depend
    on the number of threads), each cut into blocks of at most BLOCK_CELLS cells and BLOCK_USERS
    users, whose cells are counting-sorted (stably) by target row. Row ``row`` of block ``b`` is
    ``starts[b, row]:starts[b, row + 1]``; its cells have user ``block_user[b] + user[c]``, other
    index ``other[c]`` and count ``r[c]``. About 5 bytes per cell."""

    chunks: np.ndarray
    block_user: np.ndarray
    starts: np.ndarray
    user: np.ndarray
    other: np.ndarray
    r: np.ndarray


def user_chunks(offsets: np.ndarray) -> np.ndarray:
    """User bounds of 8 to 64 chunks with about equal numbers of cells, by the data's size only."""
    n = int(np.clip(-(-int(offsets[-1]) // (8 * BLOCK_CELLS)), 8, 64))
    bounds = np.searchsorted(offsets, np.linspace(0, offsets[-1], n + 1), side="left")
    bounds[0], bounds[-1] = 0, offsets.size - 1
    return np.unique(bounds).astype(np.int64)


def row_order(cells: Cells, tgt: np.ndarray, oth: np.ndarray, n_rows: int) -> RowOrder:
    """``cells`` laid out by target row ``tgt`` within blocks of users (see RowOrder)."""
    bounds = user_chunks(cells.offsets)
    block_user, chunks = _blocks(bounds, cells.offsets, BLOCK_CELLS, BLOCK_USERS)
    starts = np.empty((block_user.size - 1, n_rows + 1), np.int64)
    user = np.empty(cells.size, np.uint16)
    other, r = np.empty_like(oth), np.empty_like(cells.r)
    _sort_blocks(block_user, cells.offsets, tgt, oth, cells.r, starts, user, other, r)
    return RowOrder(chunks, block_user, starts, user, other, r)


@njit(cache=True)
def _blocks(bounds, off, block_cells, block_users):
    """User bounds of the blocks (n_blocks + 1) and the first block of each chunk (n_chunks + 1)."""
    users = [np.int64(0)]
    chunks = [np.int64(0)]
    for q in range(bounds.size - 1):
        u, end = bounds[q], bounds[q + 1]
        while u < end:
            v = u + 1
            while v < end and off[v + 1] - off[u] <= block_cells and v - u < block_users:
                v += 1
            users.append(v)
            u = v
        chunks.append(len(users) - 1)
    return np.array(users), np.array(chunks)


@njit(parallel=True, cache=True)
def _sort_blocks(block_user, off, tgt, oth, r, starts, user, other, rr):
    n_rows = starts.shape[1] - 1
    for blk in prange(block_user.size - 1):
        u, v = block_user[blk], block_user[blk + 1]
        lo = off[u]
        count = np.zeros(n_rows + 1, np.int64)
        for c in range(lo, off[v]):
            count[tgt[c] + 1] += 1
        fill = np.empty(n_rows, np.int64)
        starts[blk, 0] = lo
        for row in range(n_rows):
            starts[blk, row + 1] = starts[blk, row] + count[row + 1]
            fill[row] = starts[blk, row]
        for n in range(u, v):
            for c in range(off[n], off[n + 1]):
                p = fill[tgt[c]]
                fill[tgt[c]] = p + 1
                user[p], other[p], rr[p] = n - u, oth[c], r[c]


def index_dtype(n: int) -> np.dtype:
    """The narrowest unsigned dtype for indices below ``n``."""
    return np.dtype(np.uint16) if n <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


def select_cells(user: np.ndarray, i: np.ndarray, j: np.ndarray, count: np.ndarray, n_users: int, n_i: int,
                 n_j: int, lam: int, r_max: int, rho: int, seed: int, stream: int) -> Cells:
    """Trimming and zero cells of one tensor (§3.2-3.3), user by user.

    ``(user, i, j, count)`` are the positive cells sorted by (user, i, j). For each user: at most ``lam`` positive cells chosen uniformly at random, counts
    capped at ``r_max``; then ``rho`` distinct cells among its zero cells (all of them when there
    are fewer); every other cell is missing. User n draws from its own stream (locsynth.core.rng), so
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
    transitions = select_cells(*keyed_transition_counts(traces), n_users, n_loc, n_loc, lam, r_max, rho, seed, 0)
    visits = select_cells(*keyed_visit_counts(traces), n_users, n_loc, n_slots, lam, r_max, rho, seed, 1)
    return Tensors(transitions, visits, n_users, n_loc, n_slots)
