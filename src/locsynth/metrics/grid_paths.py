"""Trajectories on a grid: the cell of every point and every trace's path of cells, read in the three
ways of the standard suite's flavours (metrics/standard.py).

A k x k grid is laid over a box (x0, y0, x1, y1). Cells are numbered ``i * k + j`` with ``i`` the
column (x) and ``j`` the row (y), the order of AdaTrace's ``Grid.getCells`` (Grid.java:59-67) and
LDPTrace's ``grid_index_map_func`` (map_func.py:6-12). A :class:`Paths` holds, per trace, its
sequence of cells (``cells``, a slice per trace given by ``offsets``).

- ``adatrace``: AdaTrace's Java (GridTrajectory.java:9-95, Grid.java, Cell.java), bit for bit: each
  cell is closed, ``[minX + inc * i, (minX + inc * i) + inc]`` in doubles, and a point goes to the
  first cell that holds it, so a point on a grid line belongs to the lower cell whenever the two
  cells' doubles both hold it; a point in no cell is tried again at (x - 0.001, y - 0.001), then
  goes to cell `[0][0]`; repeats are merged; a one-cell trace becomes [c, c]; cells that do not
  touch are joined by the diagonal-first route (Grid.java:149-196).
- ``ldptrace``: LDPTrace's Python (grid.py, trajectory.py:9-55): the box widened by 1e-6 on every
  side, the same closed first-match cells, points in no cell left out (a trace left without
  points is dropped, where their code fails), repeats merged, the same route, no [c, c].
- ``corrected``: locsynth's reading. A point's grid coordinate ``t = (x - x0) / (x1 - x0) * k``
  is clipped to [0, k] (a point outside the box goes to the nearest edge cell) and its cell is
  ``ceil(t - 1e-9) - 1``: a point on a line, or within 1e-9 cell widths of it, is in the lower
  cell, so rounding noise in the box does not move it. A trace's path is the sequence of cells
  its straight segments cross (both axes' lines crossed at once go diagonally), repeats merged,
  a one-cell trace stays [c]: the cells a trajectory passes through, whatever its sampling rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: grid coordinates closer to a line than this many cell widths lie on it (corrected flavour)
LINE_TOLERANCE = 1e-9
#: AdaTrace's retry for a point in no cell (GridTrajectory.java:27-28), in the input's units
ADATRACE_RETRY = 0.001
#: LDPTrace widens the box by this on every side (grid.py, GridMap.__init__)
LDPTRACE_MARGIN = 1e-6


@dataclass(frozen=True)
class Paths:
    """Every trace's path of cells on a k x k grid: ``cells[offsets[t]:offsets[t + 1]]`` for trace t.
    ``kept``: the index of each path's trace in the set (all of them but in the ldptrace reading)."""

    cells: np.ndarray
    offsets: np.ndarray
    k: int
    kept: np.ndarray

    @property
    def n_paths(self) -> int:
        return self.offsets.size - 1

    @property
    def trace(self) -> np.ndarray:
        """The path of every cell."""
        return np.repeat(np.arange(self.n_paths), np.diff(self.offsets))


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


# -- adatrace: AdaTrace's Java, bit for bit ---------------------------------------------------------

def _closed_first_cell(v: np.ndarray, lo: float, hi: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Along one axis: the first of the k closed cells ``[lo + inc * i, (lo + inc * i) + inc]``,
    ``inc = (hi - lo) / k`` (Grid.java:16-21, Cell.java:18-33), that holds each value, and whether
    one does. The cells' doubles are computed as the Java computes them, so a value on a line
    goes where their first match puts it."""
    inc = (hi - lo) / float(k)
    start = lo + inc * np.arange(k, dtype=np.float64)
    end = start + inc
    first, found = _first_last(np.ascontiguousarray(v, np.float64), start, end)
    return first, found


@njit(cache=True)
def _first_last(v, start, end):
    """Per value: min(the first cell whose end >= v, k - 1) and whether that cell's start <= v too
    (numpy's ``searchsorted(end, v, "left") <= searchsorted(start, v, "right") - 1``, one binary
    search each, in one pass: 13 million points took 2 s through two searchsorted calls)."""
    k = start.size
    first = np.empty(v.size, np.int64)
    found = np.empty(v.size, np.bool_)
    for n in range(v.size):
        x = v[n]
        if x != x:                                   # NaN sorts last, as in numpy
            first[n], found[n] = k - 1, False
            continue
        a, b = 0, k                                  # the first i with end[i] >= x
        while a < b:
            m = (a + b) >> 1
            if end[m] < x:
                a = m + 1
            else:
                b = m
        f = a
        a, b = 0, k                                  # the first i with start[i] > x
        while a < b:
            m = (a + b) >> 1
            if start[m] <= x:
                a = m + 1
            else:
                b = m
        first[n] = min(f, k - 1)
        found[n] = f <= a - 1
    return first, found


def adatrace_cells(x: np.ndarray, y: np.ndarray, box, k: int) -> np.ndarray:
    """The cell of every point as GridTrajectory.java:12-43 finds it: the first closed cell (i
    outer, j inner) that holds the point; else the first that holds (x - 0.001, y - 0.001); else
    cell `[0][0]` (their fix for synthetic points outside the box, where other suites clip)."""
    x0, y0, x1, y1 = box
    i, found_x = _closed_first_cell(x, x0, x1, k)
    j, found_y = _closed_first_cell(y, y0, y1, k)
    cell = i * k + j
    miss = np.flatnonzero(~(found_x & found_y))
    if miss.size:
        i, found_x = _closed_first_cell(x[miss] - ADATRACE_RETRY, x0, x1, k)
        j, found_y = _closed_first_cell(y[miss] - ADATRACE_RETRY, y0, y1, k)
        cell[miss] = np.where(found_x & found_y, i * k + j, 0)
    return cell


@njit(cache=True)
def _routes(cell, offsets, k, double_single, out):
    """GridTrajectory.java:45-94 on every trace's point cells in one pass: repeats merged, a
    one-cell path doubled when ``double_single`` (:63-65), cells that do not touch joined by
    Grid.java:149-196's route (a step along both axes while both differ; the start cell, never the
    end; LDPTrace's grid.py find_shortest_path is the same). Writes into ``out`` when it is not
    empty; returns each path's length."""
    n = offsets.size - 1
    lengths = np.zeros(n, np.int64)
    write = out.size > 0
    pos = 0
    for trace in range(n):
        start = pos
        last = cell[offsets[trace]]
        for p in range(offsets[trace] + 1, offsets[trace + 1]):
            if cell[p] == last:
                continue
            i, j = last // k, last % k
            di, dj = cell[p] // k - i, cell[p] % k - j
            for t in range(max(abs(di), abs(dj))):
                if write:
                    out[pos] = (i + np.sign(di) * min(t, abs(di))) * k + j + np.sign(dj) * min(t, abs(dj))
                pos += 1
            last = cell[p]
        if pos == start and double_single:        # one cell: [c, c]
            if write:
                out[pos] = last
            pos += 1
        if write:
            out[pos] = last
        pos += 1
        lengths[trace] = pos - start
    return lengths


def adatrace_paths(x: np.ndarray, y: np.ndarray, offsets: np.ndarray, box, k: int) -> Paths:
    """``new GridTrajectory(t, grid, true)`` for every trace (GridTrajectory.java:9-95): the cells,
    repeats merged (the loop and the last-cell test there merge exactly the consecutive repeats),
    a one-cell path doubled, the diagonal-first routes."""
    return routes(adatrace_cells(x, y, box, k), offsets, k, True)


def routes(cell: np.ndarray, offsets: np.ndarray, k: int, double_single: bool) -> Paths:
    """The paths of :func:`_routes` from the cell of every point (two passes: lengths, then cells)."""
    path_offsets = _offsets(_routes(cell, offsets, k, double_single, np.zeros(0, np.int64)))
    cells = np.zeros(int(path_offsets[-1]), np.int64)
    _routes(cell, offsets, k, double_single, cells)
    return Paths(cells, path_offsets, k, np.arange(offsets.size - 1))


# -- ldptrace: LDPTrace's Python ---------------------------------------------------------------------

def ldptrace_box(box) -> tuple[float, float, float, float]:
    """The data's box widened by 1e-6 on every side (grid.py, GridMap.__init__)."""
    x0, y0, x1, y1 = box
    return x0 - LDPTRACE_MARGIN, y0 - LDPTRACE_MARGIN, x1 + LDPTRACE_MARGIN, y1 + LDPTRACE_MARGIN


def ldptrace_cells(x: np.ndarray, y: np.ndarray, box, k: int) -> np.ndarray:
    """The cell of every point as trajectory.py:20-31 finds it on the (already widened) box: the
    first closed cell that holds it, -1 where none does (the point is left out)."""
    x0, y0, x1, y1 = box
    i, found_x = _closed_first_cell(x, x0, x1, k)
    j, found_y = _closed_first_cell(y, y0, y1, k)
    return np.where(found_x & found_y, i * k + j, -1)


def ldptrace_paths(x: np.ndarray, y: np.ndarray, offsets: np.ndarray, box, k: int) -> Paths:
    """``trajectory_point2grid(t, grid_map, interp=True)`` for every trace (trajectory.py:9-55):
    points in no cell left out, repeats merged, the diagonal-first routes; a trace with no point
    in the grid is dropped (their code stops with an IndexError)."""
    cell = ldptrace_cells(x, y, box, k)
    inside = cell >= 0
    counts = np.bincount(np.repeat(np.arange(offsets.size - 1), np.diff(offsets))[inside],
                         minlength=offsets.size - 1)
    kept = np.flatnonzero(counts)
    paths = routes(cell[inside], _offsets(counts[kept]), k, False)
    return Paths(paths.cells, paths.offsets, k, kept)


def ldptrace_cell_bounds(box, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x min, x max, y min, y max) of every cell, as grid.py's ``Grid`` holds them."""
    x0, y0, x1, y1 = box
    step_x, step_y = (x1 - x0) / k, (y1 - y0) / k
    xs = x0 + step_x * np.arange(k, dtype=np.float64)
    ys = y0 + step_y * np.arange(k, dtype=np.float64)
    i, j = np.divmod(np.arange(k * k), k)
    return xs[i], xs[i] + step_x, ys[j], ys[j] + step_y


# -- corrected: locsynth's reading -----------------------------------------------------------------------

def grid_coordinates(v: np.ndarray, lo: float, hi: float, k: int) -> np.ndarray:
    """Positions along one axis in cell widths from ``lo``, clipped to [0, k]."""
    return np.clip((v - lo) / max(hi - lo, 1e-300) * k, 0.0, float(k))


def cell_of_coordinate(t: np.ndarray, k: int) -> np.ndarray:
    """The cell of grid coordinates: a coordinate on a line (within LINE_TOLERANCE) is in the lower
    cell, 0 in the first."""
    return np.clip(np.ceil(t - LINE_TOLERANCE).astype(np.int64) - 1, 0, k - 1)


def corrected_cells(x: np.ndarray, y: np.ndarray, box, k: int) -> np.ndarray:
    """The cell of every point: the nearest edge cell outside the box, the lower cell on a line."""
    x0, y0, x1, y1 = box
    return (cell_of_coordinate(grid_coordinates(x, x0, x1, k), k) * k
            + cell_of_coordinate(grid_coordinates(y, y0, y1, k), k))


@njit(cache=True, error_model="numpy")
def _crossed_cells(tx, ty, col, row, offsets, k, out):
    """Walk every segment from cell to cell through the lines it crosses, in the order it crosses
    them (both at once within LINE_TOLERANCE: a diagonal step). Writes the paths into ``out`` when
    it is not empty, and returns each trace's path length."""
    n = offsets.size - 1
    lengths = np.zeros(n, np.int64)
    write = out.size > 0
    pos = 0
    for trace in range(n):
        a, b = offsets[trace], offsets[trace + 1]
        start = pos
        c, r = col[a], row[a]
        if write:
            out[pos] = c * k + r
        pos += 1
        for p in range(a + 1, b):
            sx, sy = np.sign(col[p] - c), np.sign(row[p] - r)
            dtx, dty = tx[p] - tx[p - 1], ty[p] - ty[p - 1]
            while c != col[p] or r != row[p]:
                if c == col[p]:
                    r += sy
                elif r == row[p]:
                    c += sx
                else:
                    # the next vertical and horizontal lines crossed, as shares of the segment
                    ax = ((c + 1 if sx > 0 else c) - tx[p - 1]) / dtx
                    ay = ((r + 1 if sy > 0 else r) - ty[p - 1]) / dty
                    if abs(ax - ay) <= 1e-9:       # through a corner
                        c, r = c + sx, r + sy
                    elif ax < ay:
                        c += sx
                    else:
                        r += sy
                if write:
                    out[pos] = c * k + r
                pos += 1
        lengths[trace] = pos - start
    return lengths


def corrected_paths(x: np.ndarray, y: np.ndarray, offsets: np.ndarray, box, k: int) -> Paths:
    """Every trace's path: the cells its straight segments cross, in order (module docstring)."""
    x0, y0, x1, y1 = box
    tx, ty = grid_coordinates(x, x0, x1, k), grid_coordinates(y, y0, y1, k)
    col, row = cell_of_coordinate(tx, k), cell_of_coordinate(ty, k)
    lengths = _crossed_cells(tx, ty, col, row, offsets, k, np.zeros(0, np.int64))
    path_offsets = _offsets(lengths)
    cells = np.zeros(int(path_offsets[-1]), np.int64)
    _crossed_cells(tx, ty, col, row, offsets, k, cells)
    return Paths(cells, path_offsets, k, np.arange(offsets.size - 1))
