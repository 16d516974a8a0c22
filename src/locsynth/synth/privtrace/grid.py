"""PrivTrace's adaptive two-level grid (Wang et al., USENIX Security 2023, §4.1) over the public
box of the space's locations, in planar metres (metrics/standard.planar).

Level 1 splits the box into k x k cells; a level-1 cell whose noisy density is large is split
again into m x m subcells. The states of the Markov model are the level-2 cells (a cell not
split is one state). States are numbered level-1 cell by cell (row-major), subcells row-major
inside. Two states are neighbours when their rectangles touch (corners included), read off a
raster at the finest cell size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the authors' constants (DpTrace/PrivTrace discretization/divide.py)
LEVEL1_POINTS = 600.0
LEVEL1_MAX = 60
LEVEL2_DENSITY = 200.0
#: a level-1 cell is split when its noisy density exceeds this share of trajectories per cell
SPLIT_SHARE = 0.05
#: at most this many states per location of the public space: a public bound of ours (the authors'
#: rule has none), met by lowering the largest splits (post-processing of the noisy densities). The
#: rule makes 1 state per location on the 200 cabs at 500 m and 10 at 24 times their trips
#: (docs/scale.md); a tiny epsilon's noise made 67 million states of 1,363 locations (issue 53)
STATES_PER_LOCATION = 16


def level1_size(points: float, level1_points: float = LEVEL1_POINTS, level1_max: int = LEVEL1_MAX) -> int:
    """k = floor(sqrt(points / 600)), between 1 and 60 (the authors' divide.py; the authors' code
    needs k > 1 and uses the exact number of points, here a DP estimate)."""
    return int(np.clip(np.floor(np.sqrt(max(points, 0.0) / level1_points)), 1, level1_max))


def level2_sizes(noisy_density: np.ndarray, trajectories: float, level2_density: float = LEVEL2_DENSITY,
                 max_states: int | None = None) -> np.ndarray:
    """m per level-1 cell: ceil(sqrt(density / 200)) where the noisy density exceeds
    0.05 x trajectories / k^2 (the authors' grid.py), else 1; the states, sum of m^2, at most
    ``max_states`` (:func:`capped_splits`)."""
    density = np.asarray(noisy_density, np.float64)
    split = density > SPLIT_SHARE * max(trajectories, 0.0) / density.size
    # 2^20 a side keeps m^2 summed over 3,600 cells inside int64 (a density of 1e300 asks for 7e148)
    m = np.clip(np.ceil(np.sqrt(np.maximum(density, 0.0) / level2_density)), 1, 2 ** 20).astype(np.int64)
    m = np.where(split, m, 1)
    return m if max_states is None else capped_splits(m, max_states)


def capped_splits(m: np.ndarray, max_states: int) -> np.ndarray:
    """``m`` with its largest sides lowered to one common side M, the largest for which the states
    (sum of min(m, M)^2) stay within ``max_states``; all 1 when even that is too many."""
    m = np.asarray(m, np.int64)
    if int((m ** 2).sum()) <= max_states:
        return m
    lo, hi = 1, int(m.max())
    while lo < hi:                                    # the largest side M that fits
        mid = (lo + hi + 1) // 2
        if int((np.minimum(m, mid) ** 2).sum()) <= max_states:
            lo = mid
        else:
            hi = mid - 1
    return np.minimum(m, lo)


@dataclass(frozen=True)
class TwoLevelGrid:
    """box = (x0, y0, x1, y1) in metres; ``k`` level-1 cells a side; ``m[c]`` subcells a side of
    level-1 cell c (row-major)."""

    box: tuple[float, float, float, float]
    k: int
    m: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        """First state of every level-1 cell (k^2 + 1)."""
        return np.concatenate([[0], np.cumsum(self.m.astype(np.int64) ** 2)])

    @property
    def n_states(self) -> int:
        return int(self.offsets[-1])

    def level1(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(level-1 cell, position in it along x and along y in [0, 1)) of every point; points
        outside the box go to the edge cells."""
        x0, y0, x1, y1 = self.box
        fx = np.clip((np.asarray(x) - x0) / max(x1 - x0, 1e-9) * self.k, 0, self.k - 1e-9)
        fy = np.clip((np.asarray(y) - y0) / max(y1 - y0, 1e-9) * self.k, 0, self.k - 1e-9)
        col, row = fx.astype(np.int64), fy.astype(np.int64)
        return row * self.k + col, fx - col, fy - row

    def state(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The state (level-2 cell) of every point."""
        cell, u, v = self.level1(x, y)
        m = self.m[cell]
        return self.offsets[cell] + (v * m).astype(np.int64) * m + (u * m).astype(np.int64)

    def rectangles(self) -> np.ndarray:
        """(n_states, 4) x0, y0, x1, y1 of every state."""
        x0, y0, x1, y1 = self.box
        w, h = (x1 - x0) / self.k, (y1 - y0) / self.k
        cell = np.repeat(np.arange(self.k * self.k), self.m.astype(np.int64) ** 2)
        m = self.m[cell]
        inner = np.arange(self.n_states) - self.offsets[cell]
        r, c = inner // m, inner % m
        left = x0 + (cell % self.k) * w + c * w / m
        bottom = y0 + (cell // self.k) * h + r * h / m
        return np.stack([left, bottom, left + w / m, bottom + h / m], axis=1)

    def finest(self) -> float:
        """The side of the smallest cell, in metres (the shorter of its two sides)."""
        x0, y0, x1, y1 = self.box
        return min(x1 - x0, y1 - y0) / self.k / int(self.m.max())

    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR (indptr, indices) of every state's neighbours: states whose rectangles touch its own,
        from a raster of side k x max(m) cells whose centres name their states."""
        x0, y0, x1, y1 = self.box
        side = min(self.k * int(self.m.max()), 4096)
        cx = x0 + (np.arange(side) + 0.5) / side * (x1 - x0)
        cy = y0 + (np.arange(side) + 0.5) / side * (y1 - y0)
        gx, gy = np.meshgrid(cx, cy)
        raster = self.state(gx.ravel(), gy.ravel()).reshape(side, side)
        pairs = []
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):     # each touching pair of raster cells once
            a = raster[:side - dr, max(0, -dc):side - max(0, dc)]
            b = raster[dr:, max(0, dc):side - max(0, -dc)]
            differ = a != b
            pairs.append(np.stack([a[differ], b[differ]], axis=1))
        both = np.concatenate(pairs)
        both = np.unique(np.concatenate([both, both[:, ::-1]]), axis=0)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(both[:, 0], minlength=self.n_states))])
        return indptr.astype(np.int64), both[:, 1].astype(np.int64)


def public_box(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float, float]:
    """The box of the space's locations (public), in metres: at least a tenth as high as wide and
    vice versa (a line of locations has no area), padded by a millionth of its side."""
    side = max(float(xs.max() - xs.min()), float(ys.max() - ys.min()), 1.0)
    px, py = (max(side / 10 - float(v.max() - v.min()), 0.0) / 2 + 1e-6 * side for v in (xs, ys))
    return float(xs.min()) - px, float(ys.min()) - py, float(xs.max()) + px, float(ys.max()) + py


def locations_of_states(grid: TwoLevelGrid, xy, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per state, the locations (of planar coordinates ``xy``) inside its cell, or the one nearest
    to its centre when none lies inside: CSR (indptr, indices). With ``allowed`` (bool per location:
    a public domain) only the allowed locations count, so that no state maps outside it."""
    from scipy.spatial import cKDTree

    ids = np.arange(xy[0].size) if allowed is None else np.flatnonzero(allowed)
    x, y = xy[0][ids], xy[1][ids]
    state = grid.state(x, y)
    s = grid.n_states
    order = np.argsort(state, kind="stable")
    counts = np.bincount(state, minlength=s)
    empty = np.flatnonzero(counts == 0)
    rect = grid.rectangles()[empty]
    nearest = cKDTree(np.column_stack([x, y])).query(np.column_stack([(rect[:, 0] + rect[:, 2]) / 2,
                                                                      (rect[:, 1] + rect[:, 3]) / 2]))[1]
    members = np.concatenate([order, nearest])
    owner = np.concatenate([state[order], empty])
    by = np.argsort(owner, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=s))]).astype(np.int64)
    return indptr, ids[members[by]].astype(np.int64)


def open_states(grid: TwoLevelGrid, xy, allowed: np.ndarray | None) -> np.ndarray | None:
    """Bool per state: whether one of the locations it stands for without a domain (those inside
    it, or the nearest to its centre: :func:`locations_of_states`) is allowed (``allowed``, bool per
    location of planar coordinates ``xy``: a public domain); None without a domain. A closed state
    is a cell the public knowledge says no trajectory crosses; a state smaller than the space's
    cells, with no location inside, stays open where its nearest location is allowed."""
    if allowed is None:
        return None
    indptr, indices = locations_of_states(grid, xy)
    return np.add.reduceat(allowed[indices].astype(np.int64), indptr[:-1]) > 0


def open_edges(indptr: np.ndarray, indices: np.ndarray, open: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The CSR neighbour graph (indptr, indices) with only the edges between open states (``open``,
    bool per state; None: every edge): a walk on it never enters a closed state."""
    if open is None:
        return indptr, indices
    row = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    keep = open[row] & open[indices]
    counts = np.bincount(row[keep], minlength=indptr.size - 1)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), indices[keep].astype(np.int64)
