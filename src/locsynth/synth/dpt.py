"""DPT: differentially private trajectory synthesis on hierarchical reference systems (He,
Cormode, Machanavajjhala, Procopiuc and Srivastava, PVLDB 8(11), 2015). The unit is one
trajectory (a trace); neighbouring inputs differ by one trajectory added or removed.

No authors' code is known, and the paper's full text was not at hand when this was written: its
abstract names the three parts built here -- (i) trajectories discretised on hierarchical
reference systems at several resolutions, to capture movements at differing speeds, (ii) an
adaptive, private choice of a small set of reference systems and DP prefix-tree counts on them,
(iii) sampling -- and where the paper's exact constants or rules are not known the choice made is
marked "Choice" below and on the docs page (docs/methods/dpt.md). The steps, as the data flows:

1. Size: a DP count of the training trajectories (privacy/count.py), ``size_share`` of epsilon,
   sizes the output by default (the DP-size rule of every DP method here). The rest, epsilon_r,
   is split: ``select_share`` for the choice of reference systems (step 4), ``hour_share`` for
   the trips' hours (step 7, when the set has an ``hour`` column), the remainder for the trees.
2. Hierarchical reference systems (HRS; §3): ``levels`` grids of square cells over the public
   box of the space's locations (planar metres), level 0 the coarsest; each cell of level l
   splits into ``branching`` x ``branching`` cells of level l + 1; the finest side is
   ``finest`` metres (0: the median distance between neighbouring locations of the space, so
   that on a grid space the finest level is its own grid). The anchor points are the cells'
   centres; two anchors are neighbours when their cells touch (8-neighbourhood). Choice: square
   grids (the issue's "grids at several resolutions"), 4 levels, branching 2.
3. Discretisation (:func:`discretise`): a trajectory's points become cells of a level, and
   between two consecutive cells more than one apart the straight line of the cell lattice is
   inserted (cell k of m: the start plus round(k d / m) in each coordinate), so that every move
   goes to a neighbouring anchor; consecutive repeats are merged. A move is one of 8 directions;
   the "no move" direction codes the end of the trajectory (:data:`END`).
4. Model selection for each trajectory (§3, "movements at differing speeds";
   :func:`choose_levels`): the finest level at which at least half of its recorded steps stay in
   the cell or go to a neighbouring one (a fast trajectory goes to a coarse level, a slow one to a
   fine level); the finest for a trajectory of fewer than two points. Each trajectory goes to one
   level, so the levels' trees see disjoint data: parallel composition, every tree may spend the
   whole tree budget. Choice (the adaptive selection of a small set of reference systems): the
   number of trajectories per level gets Laplace(1 / epsilon_sel) noise (sensitivity 1: a
   trajectory is in one level); a level is kept when its noisy count reaches the noise scale of
   its tree's counts, l_max (order + 1) / epsilon_tree (fewer trajectories would be modelled by
   noise alone); at least the level of the largest noisy count is kept. The trajectories of a
   dropped level go to the nearest kept level (the finer on a tie); the noisy counts, added up the
   same way, weigh the levels in sampling (post-processing).
5. Prefix trees (§4; :func:`grow`): per kept level, the prefix tree of a Markov model of order
   ``order`` over the level's anchors, built as the exploration trees of variable-length n-grams
   (Chen, Acs and Castelluccia, CCS 2012, which DPT builds on; synth/ngram.py): a node is a gram
   of k <= order consecutive cells, its histogram counts the moves that follow the gram's
   occurrences (8 directions and the end), the root's the cells (unigrams). Each sequence is
   truncated to its first ``l_max`` cells, so that it holds at most l_max grams of any one length:
   the sensitivity of every depth of the tree (CCS 2012 §4). The order + 1 depths share the tree
   budget equally (choice; NGRAM spreads it adaptively): Laplace(l_max (order + 1) /
   epsilon_tree) on every bin (privacy/laplace.py, OpenDP), the trees of all kept levels noised
   together, depth by depth. A node's histogram has 9 bins, not one per anchor: a move can only
   go to a neighbour, which the interpolation of step 3 guarantees and which is public.
6. Pruning (§4): a bin is released when its noisy count exceeds theta = scale ln(B / 2), B its
   histogram's bins (9; the level's cells at the root): the threshold of CCS 2012 §4.3.3, which
   lets one empty bin of B through on average (choice: the paper's own threshold was not at
   hand). Only released gram bins become nodes of the next depth. Consistency (CCS 2012 §4.3,
   as NGRAM's; post-processing): in a node's histogram the unreleased bins share equally what the
   node's own count (its released bin in its parent's histogram) leaves after the released ones;
   bins that would leave the grid are 0 (public). The root keeps its released cells only.
7. Sampling across resolutions (:func:`walk`): each synthetic trip's level is drawn in proportion
   to the kept levels' noisy counts, its first cell in proportion to c(x) - sum_y c(y -> x) (the
   occurrences of x not preceded by a move, as synth/ngram.start_counts), then each move from the
   histogram of the longest suffix of the trip so far (at most ``order`` cells) that is a node
   with a released count (variable-order back-off), until the end symbol or l_max cells. Each
   cell becomes a location of the input's space inside it, drawn uniformly (the nearest location
   to its centre when none lies inside), as PrivTrace maps its cells back; consecutive repeats are
   merged. The hour of each trip (trip sets have one; DPT has no time of day, so this is an
   addition here) is drawn from a DP histogram of the training trips' hours (25 bins: -1 and
   0-23, sensitivity 1), from its bins 0-23 (a trip set's hours are all in 0-23 or all -1): all
   -1 when the -1 bin is the largest (post-processing); its events sit on consecutive instants
   from the start of that hour. A set without an ``hour`` column gets hour -1 and no spend. Not reproduced: the paper's
   direction-weighted sampling (its exact weighting was not at hand).

A public domain (data/domain.py) closes, at every level, the cells that hold none of its locations:
DPT's own rule for moves off the grid (step 6: invalid bins are 0, public) then covers moves into a
closed cell, the root's histogram ranges over the open cells only (fewer bins: a lower threshold),
and a cell's locations are the allowed ones inside it. Choice: masking, as the grid's edge is masked,
rather than snapping a walk's cells to the domain afterwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..core.errors import InputError
from ..privacy.ledger import Ledger
from ..metrics.standard import planar
from ..privacy.laplace import laplace
from ..data.chunks import Whole, chunks
from ..privacy.noise import noise_mass, share
from ..data.traces import TraceSet
from ..core.validation import check_count, check_epsilon, check_seed, check_share, in_range
from .base import FOOTPRINT_SHARE, SIZE_SHARE, TIME_SHARE, Synthesizer, Tags
from .ngram import GramIndex
from .privtrace import markov
from .privtrace.markov import per_trace
from .privtrace.model import _draw

#: direction code (dr + 1) * 3 + (dc + 1) of a move; (0, 0), which merged repeats never make, is the end
END = 4
BINS = 9
DR = np.array([-1, -1, -1, 0, 0, 0, 1, 1, 1], np.int64)
DC = np.array([-1, 0, 1, -1, 0, 1, -1, 0, 1], np.int64)
#: hours of the hour histogram: -1 (a trip without hour) and 0-23
HOURS = 25
#: cells of the finest level at most (a finer grid than this is refused: its arrays would not fit)
MAX_CELLS = 1 << 22
#: OpenDP's privacy map gives back epsilon up to float rounding
_SLACK = 1e-9


# -- 2. hierarchical reference systems ---------------------------------------------------------

@dataclass(frozen=True)
class ReferenceSystems:
    """``levels`` square grids over ``box`` = (x0, y0, x1, y1) in metres; level 0 the coarsest,
    each level's side ``branching`` times the next finer one's, the finest ``finest`` metres.
    Cells are numbered globally: level l's cell (row, col) is ``offsets[l] + row * cols + col``."""

    box: tuple[float, float, float, float]
    finest: float
    levels: int
    branching: int

    @classmethod
    def over(cls, space, finest: float = 0.0, levels: int = 4, branching: int = 2) -> "ReferenceSystems":
        """Over the public box of ``space``'s locations, padded by half a finest cell; ``finest`` 0:
        the median distance from each location to its nearest other one."""
        from scipy.spatial import cKDTree

        xs, ys = planar(space)
        if not finest:
            pts = np.unique(np.column_stack([xs, ys]), axis=0)
            finest = float(np.median(cKDTree(pts).query(pts, k=2)[0][:, 1])) if len(pts) > 1 else 1.0
        finest = max(float(finest), 1e-6)
        pad = finest / 2
        box = (float(xs.min()) - pad, float(ys.min()) - pad, float(xs.max()) + pad, float(ys.max()) + pad)
        rs = cls(box, finest, int(levels), int(branching))
        rows, cols = rs.shape(rs.levels - 1)
        if rows * cols > MAX_CELLS:
            raise InputError(f"finest = {finest:g} m makes {rows} x {cols} cells over the space's "
                             f"{box[2] - box[0]:.0f} x {box[3] - box[1]:.0f} m box (at most {MAX_CELLS:,}): "
                             f"give a larger one")
        return rs

    def side(self, level: int) -> float:
        return self.finest * float(self.branching) ** (self.levels - 1 - level)

    def shape(self, level: int) -> tuple[int, int]:
        """(rows, cols) of a level: the finest covers the box to within half a cell (points beyond go
        to the edge cells), and each coarser level covers the next finer one, ``branching`` cells
        a side per cell."""
        x0, y0, x1, y1 = self.box
        rows, cols = (max(int(math.floor(d / self.finest + 0.5)), 1) for d in (y1 - y0, x1 - x0))
        k = self.branching ** (self.levels - 1 - level)
        return -(-rows // k), -(-cols // k)

    @property
    def offsets(self) -> np.ndarray:
        """First global cell of every level, and the number of cells (levels + 1)."""
        sizes = [r * c for r, c in (self.shape(lv) for lv in range(self.levels))]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def rowcol(self, level: int, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (row, col) of every point at ``level``; points outside the box go to the edge cells."""
        rows, cols = self.shape(level)
        s = self.side(level)
        r = np.clip(np.floor((np.asarray(y, np.float64) - self.box[1]) / s), 0, rows - 1).astype(np.int64)
        c = np.clip(np.floor((np.asarray(x, np.float64) - self.box[0]) / s), 0, cols - 1).astype(np.int64)
        return r, c

    def cell_level(self) -> np.ndarray:
        """The level of every global cell."""
        return np.repeat(np.arange(self.levels), np.diff(self.offsets))

    def cell_cols(self) -> np.ndarray:
        """The number of columns of every global cell's level (a move's step in cell numbers)."""
        return np.repeat([self.shape(lv)[1] for lv in range(self.levels)], np.diff(self.offsets)).astype(np.int64)

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """The anchor points: every global cell's centre."""
        xs, ys = [], []
        for lv in range(self.levels):
            rows, cols = self.shape(lv)
            s = self.side(lv)
            r, c = np.divmod(np.arange(rows * cols), cols)
            xs.append(self.box[0] + (c + 0.5) * s)
            ys.append(self.box[1] + (r + 0.5) * s)
        return np.concatenate(xs), np.concatenate(ys)

    def valid_moves(self, open: np.ndarray | None = None) -> np.ndarray:
        """(n_cells, 9) bool: the moves that stay in the cell's grid, and the end (always); with
        ``open`` (bool per global cell: a public domain's), only the moves into an open cell."""
        level = self.cell_level()
        local = np.arange(self.offsets[-1]) - self.offsets[level]
        rows = np.array([self.shape(lv)[0] for lv in range(self.levels)])[level]
        cols = self.cell_cols()
        r, c = np.divmod(local, cols)
        rr, cc = r[:, None] + DR[None, :], c[:, None] + DC[None, :]
        valid = (rr >= 0) & (rr < rows[:, None]) & (cc >= 0) & (cc < cols[:, None])
        if open is not None:
            target = np.where(valid, self.offsets[level][:, None] + rr * cols[:, None] + cc, 0)
            valid &= open[target]
            valid[:, END] = True
        return valid


# -- 3. discretisation -------------------------------------------------------------------------

def discretise(rs: ReferenceSystems, level: int, x: np.ndarray, y: np.ndarray, offsets: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Every trajectory as global cells of ``level`` (cells, offsets): consecutive cells more than
    one apart joined by the lattice line (the start plus floor(k d / m + 1/2), k = 1 .. m - 1, m the
    larger of the row and column distances), so that consecutive cells are neighbours; repeats
    merged (module docstring, step 3)."""
    offsets = np.asarray(offsets, np.int64)
    r, c = rs.rowcol(level, x, y)
    cols = rs.shape(level)[1]
    trace = per_trace(offsets)
    inside = np.flatnonzero(trace[1:] == trace[:-1])             # segment i -> i + 1 within a trajectory
    dr, dc = r[inside + 1] - r[inside], c[inside + 1] - c[inside]
    m = np.maximum(np.abs(dr), np.abs(dc))
    extra = np.maximum(m - 1, 0)
    seg = np.repeat(np.arange(inside.size), extra)
    k = np.arange(seg.size) - np.repeat(np.cumsum(extra) - extra, extra) + 1
    frac = k / np.maximum(m[seg], 1)
    ir = r[inside][seg] + np.floor(frac * dr[seg] + 0.5).astype(np.int64)
    ic = c[inside][seg] + np.floor(frac * dc[seg] + 0.5).astype(np.int64)
    cell = np.concatenate([r * cols + c, ir * cols + ic]) + rs.offsets[level]
    owner = np.concatenate([trace, trace[inside][seg]])
    key = np.concatenate([np.arange(r.size, dtype=np.float64), inside[seg] + frac * 0.999])
    order = np.argsort(key, kind="stable")
    cell, owner = cell[order], owner[order]
    keep = np.ones(cell.size, bool)
    keep[1:] = (cell[1:] != cell[:-1]) | (owner[1:] != owner[:-1])
    counts = np.bincount(owner[keep], minlength=offsets.size - 1)
    return cell[keep], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


# -- 4. model selection ------------------------------------------------------------------------

def choose_levels(rs: ReferenceSystems, x: np.ndarray, y: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each trajectory's level: the finest at which at least half of its steps stay or go to a
    neighbouring cell; the finest for fewer than two points (module docstring, step 4)."""
    offsets = np.asarray(offsets, np.int64)
    n = offsets.size - 1
    trace = per_trace(offsets)
    inside = np.flatnonzero(trace[1:] == trace[:-1])
    owner = trace[inside]
    steps = np.bincount(owner, minlength=n)
    chosen = np.zeros(n, np.int64)
    for level in range(rs.levels):                 # coarse to fine: a finer level that fits wins
        r, c = rs.rowcol(level, x, y)
        near = np.maximum(np.abs(r[inside + 1] - r[inside]), np.abs(c[inside + 1] - c[inside])) <= 1
        fits = 2 * np.bincount(owner[near], minlength=n) >= steps
        chosen = np.where(fits, level, chosen)
    return chosen


def with_levels(points: tuple, rs: ReferenceSystems) -> tuple:
    """(x, y, offsets) of trajectories with each one's level (:func:`choose_levels`)."""
    return (*points, choose_levels(rs, *points))


def level_counts(points: tuple, levels: int) -> np.ndarray:
    """Trajectories per level (of (x, y, offsets, level)): the counting step of the selection."""
    return np.bincount(points[3], minlength=levels)


def hour_counts(traces: TraceSet) -> np.ndarray:
    """Trips per hour (-1, 0 .. 23) of the user table's ``hour``: the counting step of step 7's histogram."""
    return np.bincount(np.clip(traces.users["hour"].to_numpy().astype(np.int64), -1, 23) + 1, minlength=HOURS)


def sequences(points: tuple, rs: ReferenceSystems, target: np.ndarray, l_max: int) -> GramIndex:
    """Every trajectory of (x, y, offsets, level) discretised at the kept level its level goes to
    (``target``; global cells, in trajectory order), truncated to ``l_max``."""
    x, y, offsets, level = points
    level = target[level]
    trace = per_trace(offsets)
    lengths = np.zeros(offsets.size - 1, np.int64)
    parts = []
    for lv in np.unique(level):
        rows = np.flatnonzero(level == lv)
        events = level[trace] == lv
        c, o = discretise(rs, int(lv), x[events], y[events], np.concatenate([[0], np.cumsum(np.diff(offsets)[rows])]))
        lengths[rows] = np.diff(o)
        parts.append((rows, c, o))
    start = np.cumsum(lengths) - lengths
    cells = np.zeros(int(lengths.sum()), np.int64)
    for rows, c, o in parts:
        cells[np.repeat(start[rows], np.diff(o)) + np.arange(c.size) - np.repeat(o[:-1], np.diff(o))] = c
    return GramIndex.from_flat(cells, lengths, int(rs.offsets[-1]), l_max)


def prefix_counts(points, rs: ReferenceSystems, target: np.ndarray, l_max: int) -> "PrefixWalk | ChunkWalk":
    """The prefix trees' counting steps on the chunks ``points`` of (x, y, offsets, level): in memory
    for one chunk (a TraceSet), by chunks for a partitioned set (data/chunks.py)."""
    seqs = points.map(sequences, rs, target, l_max)
    return PrefixWalk(seqs.value, rs) if isinstance(seqs, Whole) else ChunkWalk(seqs, rs, l_max)


def kept_levels(noisy: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(kept, target): the levels whose noisy count reaches ``threshold`` (at least the largest),
    and for every level the kept one its trajectories go to: the nearest, the finer on a tie."""
    noisy = np.asarray(noisy, np.float64)
    kept = noisy >= threshold
    if not kept.any():
        kept[int(np.argmax(noisy))] = True
    ids = np.flatnonzero(kept)
    levels = np.arange(noisy.size)
    distance = np.abs(levels[:, None] - ids[None, :]) * 2 - (ids[None, :] > levels[:, None])
    return kept, ids[np.argmin(distance, axis=1)]


# -- 5.-6. prefix trees --------------------------------------------------------------------------

@dataclass(frozen=True)
class PrefixTrees:
    """The released prefix trees of all kept levels (global cells).

    Attributes
    ----------
    root : ndarray of shape (n_cells,)
        Released unigram counts (0: pruned, or a level not kept).
    first : ndarray of shape (n_cells,), int64
        The node of the one-cell gram of every cell, -1 when it was not expanded.
    hist : ndarray of shape (n_nodes, 9)
        Released counts of the moves after each node's gram (column END: the end).
    child : ndarray of shape (n_nodes, 9), int64
        The node of the gram extended by a move, -1 when not expanded.
    cell, depth : ndarray of shape (n_nodes,), int64
        The last cell and the number of cells of each node's gram.
    noisy_root, noisy_hist : ndarray
        The noisy values before pruning (what is DP).
    opendp_epsilon : float
        The sum over depths of OpenDP's maps.
    """

    root: np.ndarray
    first: np.ndarray
    hist: np.ndarray
    child: np.ndarray
    cell: np.ndarray
    depth: np.ndarray
    noisy_root: np.ndarray
    noisy_hist: np.ndarray
    opendp_epsilon: float

    @property
    def n_nodes(self) -> int:
        return int(self.cell.size)


def threshold(scale: float, bins: np.ndarray) -> np.ndarray:
    """theta = scale ln(B / 2), at least 0 (CCS 2012 §4.3.3; module docstring, step 6)."""
    return np.maximum(scale * np.log(np.asarray(bins, np.float64) / 2), 0.0)


def move_of(rs: ReferenceSystems, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The direction code of each move a -> b between neighbouring global cells of one level."""
    base, cols = rs.offsets[rs.cell_level()], rs.cell_cols()
    ra, ca = np.divmod(a - base[a], cols[a])
    rb, cb = np.divmod(b - base[b], cols[b])
    return (rb - ra + 1) * 3 + (cb - ca + 1)


def _noised(true: np.ndarray, epsilon: float, l_max: int) -> tuple[np.ndarray, float]:
    """``true`` plus Laplace(l_max / epsilon) through OpenDP, and the epsilon of OpenDP's map."""
    scratch = Ledger()
    noisy = laplace(true, epsilon, float(l_max), ledger=scratch)
    spent = scratch.spends[0].epsilon
    if spent > epsilon * (1 + _SLACK):
        raise RuntimeError(f"OpenDP reports epsilon {spent} for counts budgeted {epsilon}")
    return noisy, spent


def grow(index: GramIndex, rs: ReferenceSystems, kept_cells: np.ndarray, order: int, epsilon: float,
         l_max: int, open: np.ndarray | None = None) -> PrefixTrees:
    """The noisy, pruned prefix trees of the sequences in ``index`` (global cells, truncated to
    ``l_max``), over the cells ``kept_cells`` (bool per global cell), grams of up to ``order``
    cells with histograms: order + 1 depths of epsilon / (order + 1) each (steps 5-6). ``open``
    (bool per global cell: a public domain's cells) leaves the others out of the root's histogram
    and makes every move into one invalid, as a move off the grid is."""
    walk = index if isinstance(index, (PrefixWalk, ChunkWalk)) else PrefixWalk(index, rs)
    if walk.l_max is None or walk.l_max > l_max:
        raise InputError(f"the sequences must be truncated to l_max = {l_max} cells before the noise is "
                         f"calibrated to it (they were truncated to {walk.l_max})")
    eps_d = check_epsilon(epsilon) / (order + 1)
    scale = l_max / eps_d
    n_cells = int(rs.offsets[-1])
    cols, valid = rs.cell_cols(), rs.valid_moves(open)
    universe = np.ones(n_cells, bool) if open is None else open
    level_cells = np.bincount(rs.cell_level(), weights=universe, minlength=rs.levels)[rs.cell_level()]
    # depth 0: the root's histogram of cells (the kept levels' open cells only: which are kept is DP)
    ids = np.flatnonzero(kept_cells & universe)
    true = walk.root(n_cells).astype(np.float64)[ids]
    noisy0, spent = _noised(true, eps_d, l_max)
    root = np.zeros(n_cells)
    noisy_root = np.zeros(n_cells)
    noisy_root[ids] = noisy0
    released = noisy0 > threshold(scale, level_cells[ids])
    root[ids[released]] = noisy0[released]
    first = np.full(n_cells, -1, np.int64)
    cells = ids[released] if order >= 1 else np.zeros(0, np.int64)
    first[cells] = np.arange(cells.size)
    walk.start(first)
    hists, noisy_all, childs, cell_all, depth_all = [], [], [], [cells], [np.ones(cells.size, np.int64)]
    count = root[cells]                          # each node's released count in its parent's histogram
    lo, hi, depth = 0, cells.size, 1
    theta = float(threshold(scale, np.array([BINS]))[0])
    while hi > lo:
        noisy, e = _noised(walk.moves(lo, hi).astype(np.float64), eps_d, l_max)
        spent += e
        noisy = noisy.reshape(hi - lo, BINS)
        here = np.concatenate(cell_all)[lo:hi]
        out = (noisy > theta) & valid[here]
        hists.append(consistent(noisy, out, valid[here], count))
        noisy_all.append(noisy)
        child = np.full((hi - lo, BINS), -1, np.int64)
        if depth < order:
            grow_it = out.copy()
            grow_it[:, END] = False
            v, b = np.nonzero(grow_it)
            child[v, b] = hi + np.arange(v.size)
            cell_all.append(here[v] + DR[b] * cols[here[v]] + DC[b])
            depth_all.append(np.full(v.size, depth + 1, np.int64))
            count = noisy[v, b]
            walk.advance(child, lo)
            lo, hi = hi, hi + v.size
        else:
            lo = hi
        childs.append(child)
        depth += 1
    empty = np.zeros((0, BINS))
    return PrefixTrees(root, first, np.concatenate(hists) if hists else empty,
                       np.concatenate(childs) if childs else empty.astype(np.int64),
                       np.concatenate(cell_all), np.concatenate(depth_all), noisy_root,
                       np.concatenate(noisy_all) if noisy_all else empty, spent)


class PrefixWalk:
    """The prefix trees' counting steps on sequences in memory (a GramIndex of global cells): the
    root's cells (:meth:`root`), then, from the one-cell nodes ``first`` on (:meth:`start`), the
    moves after each depth's nodes (:meth:`moves`), every start position walked one depth further
    down the released children (:meth:`advance`) once."""

    def __init__(self, index: GramIndex, rs: ReferenceSystems):
        self.index, self.rs, self.l_max, self.depth = index, rs, index.l_max, 1
        sym = index.symbols
        self.seq, self.pos = np.nonzero(np.arange(sym.shape[1])[None, :] < index.lengths[:, None])

    def root(self, n_cells: int) -> np.ndarray:
        return np.bincount(self.index.symbols[self.seq, self.pos], minlength=n_cells)

    def start(self, first: np.ndarray) -> None:
        node = first[self.index.symbols[self.seq, self.pos]]
        at = node >= 0
        self.seq, self.pos, self.node = self.seq[at], self.pos[at], node[at]

    def locate(self) -> None:
        """Each position's move after its node's gram (END where the sequence ends)."""
        sym = self.index.symbols
        follow = sym[self.seq, self.pos + self.depth].astype(np.int64)
        prev = sym[self.seq, self.pos + self.depth - 1].astype(np.int64)
        self.end = follow >= self.index.n_symbols
        self.move = np.where(self.end, END, move_of(self.rs, prev, np.where(self.end, prev, follow)))

    def moves(self, lo: int, hi: int) -> np.ndarray:
        """The moves after the nodes ``lo`` .. ``hi`` - 1 of this depth, (hi - lo) x 9 flattened."""
        self.locate()
        return np.bincount((self.node - lo) * BINS + self.move, minlength=(hi - lo) * BINS)

    def advance(self, child: np.ndarray, lo: int) -> None:
        """Every position one depth further, to its node's released child (``child`` of the nodes
        from ``lo``), the others dropped."""
        nxt = np.where(self.end, -1, child[self.node - lo, self.move])
        at = nxt >= 0
        self.seq, self.pos, self.node = self.seq[at], self.pos[at], nxt[at]
        self.depth += 1


class ChunkWalk:
    """The same counting steps on chunks of sequences (data/chunks.py: a partitioned set's), one
    pass a depth: every chunk walks its positions down the depths so far (:func:`chunk_moves`)."""

    def __init__(self, sequences, rs: ReferenceSystems, l_max: int):
        self.sequences, self.rs, self.l_max, self.steps = sequences, rs, l_max, []

    def root(self, n_cells: int) -> np.ndarray:
        return self.sequences.total(chunk_root, n_cells)

    def start(self, first: np.ndarray) -> None:
        self.first = first

    def moves(self, lo: int, hi: int) -> np.ndarray:
        return self.sequences.total(chunk_moves, self.rs, self.first, tuple(self.steps), lo, hi)

    def advance(self, child: np.ndarray, lo: int) -> None:
        self.steps.append((child, lo))


def chunk_root(index: GramIndex, n_cells: int) -> np.ndarray:
    """One chunk's cells (:meth:`PrefixWalk.root`)."""
    return PrefixWalk(index, None).root(n_cells)


def chunk_moves(index: GramIndex, rs: ReferenceSystems, first: np.ndarray, steps: tuple, lo: int, hi: int
                ) -> np.ndarray:
    """One chunk's moves after the nodes ``lo`` .. ``hi`` - 1, its positions walked from ``first``
    down the depths ``steps`` ((child, lo) of each, :class:`ChunkWalk`)."""
    walk = PrefixWalk(index, rs)
    walk.start(first)
    for child, at in steps:
        walk.locate()
        walk.advance(child, at)
    return walk.moves(lo, hi)


def tree_noise(trees: PrefixTrees, rs: ReferenceSystems, kept_cells: np.ndarray, order: int, epsilon: float,
               l_max: int, open: np.ndarray | None = None) -> float:
    """The estimated share of noise in the released prefix trees (privacy/noise.py): the mass
    Laplace(l_max (order + 1) / epsilon) alone leaves above the threshold in every root cell of the
    kept levels (their ``open`` cells) and every valid bin of every node, against the released mass
    (:func:`grow`'s bins and thresholds); 1 when the root released nothing."""
    scale = l_max * (order + 1) / check_epsilon(epsilon)
    if trees.root.sum() <= 0:
        return 1.0
    universe = np.ones(rs.cell_level().size, bool) if open is None else open
    level_cells = np.bincount(rs.cell_level(), weights=universe, minlength=rs.levels)[rs.cell_level()]
    ids = kept_cells & universe
    noise = noise_mass(trees.root[ids], scale, threshold(scale, level_cells[ids]))
    theta = float(threshold(scale, np.array([BINS]))[0])
    rows = trees.noisy_hist.shape[0]
    valid = rs.valid_moves(open)[trees.cell[:rows]] if rows else np.zeros((0, BINS), bool)
    released = np.where(trees.noisy_hist > theta, trees.noisy_hist, 0.0)[valid]
    noise += noise_mass(released, scale, theta)
    return share(noise, trees.root.sum() + released.sum())


def consistent(noisy: np.ndarray, released: np.ndarray, valid: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Histograms (rows) made consistent with their nodes' counts (CCS 2012 §4.3, as NGRAM's for
    a root Markov parent; post-processing): released bins keep their noisy counts, the other
    valid bins share equally what the node's count leaves, invalid bins are 0 (step 6)."""
    kept = np.where(released, noisy, 0.0)
    others = valid & ~released
    left = np.maximum(count - kept.sum(axis=1), 0.0)
    share = np.divide(left, others.sum(axis=1), out=np.zeros_like(left), where=others.any(axis=1))
    return np.where(others, share[:, None], kept)


def start_weights(trees: PrefixTrees, cols: np.ndarray) -> np.ndarray:
    """c(x) - sum_y c(y -> x) over the one-cell nodes y, at least 0: the occurrences of x not
    preceded by a move (step 7)."""
    incoming = np.zeros(trees.root.size)
    ones = np.flatnonzero(trees.depth == 1)
    hist = trees.hist[ones].copy()
    hist[:, END] = 0.0
    v, b = np.nonzero(hist > 0)
    a = trees.cell[ones][v]
    np.add.at(incoming, a + DR[b] * cols[a] + DC[b], hist[v, b])
    return np.maximum(trees.root - incoming, 0.0)


# -- 7. sampling ---------------------------------------------------------------------------------

@njit(cache=True)
def _context(first, child, buf, moves, k, order, hist):
    """The node of the longest suffix of buf[:k] (at most ``order`` cells) with a released count."""
    m = min(order, k)
    while m >= 1:
        v = first[buf[k - m]]
        j = k - m + 1
        while v >= 0 and j < k:
            v = child[v, moves[j]]
            j += 1
        if v >= 0 and hist[v].sum() > 0:
            return v
        m -= 1
    return -1


@njit(cache=True)
def _place(out, i, used, loc_indptr, loc_indices, cell, u):
    """Append a location of ``cell`` (drawn with ``u``) to walk ``i`` unless it repeats the one
    before (two cells can share a nearest location); returns the walk's locations."""
    lo, hi = loc_indptr[cell], loc_indptr[cell + 1]
    loc = loc_indices[lo + min(int(u * (hi - lo)), hi - lo - 1)]
    if used == 0 or out[i, used - 1] != loc:
        out[i, used] = loc
        used += 1
    return used


@njit(cache=True)
def _any_move(a, moves_ok, u):
    """A move from cell ``a`` to a touching cell of its level (``moves_ok``: ReferenceSystems.valid_moves),
    uniformly (``u``); -1 for none."""
    valid = np.empty(BINS - 1, np.int64)
    n = 0
    for b in range(BINS):
        if b != END and moves_ok[a, b]:
            valid[n] = b
            n += 1
    return valid[min(int(u * n), n - 1)] if n else -1


@njit(cache=True)
def _walks(start_cdf, first, child, hist, cols, moves_ok, order, l_max, min_cells, loc_indptr, loc_indices,
           uniforms, picks, out, length):
    """Walks of the prefix trees' model as locations (step 7). Until a walk holds ``min_cells``
    locations (the training set's public minimum) it cannot end: the end weighs 0 and, where the
    context has no move or none weighs anything, it moves to a touching cell uniformly
    (conditioning the walk on the rule rather than dropping short walks)."""
    n = uniforms.shape[0]
    buf = np.empty(l_max, np.int64)
    moves = np.zeros(l_max, np.int64)
    weights = np.empty(BINS)
    for i in range(n):
        buf[0] = min(np.searchsorted(start_cdf, uniforms[i, 0] * start_cdf[-1], side="right"), start_cdf.size - 1)
        used = _place(out, i, 0, loc_indptr, loc_indices, buf[0], picks[i, 0])
        k = 1
        while k < l_max:
            early = used < min_cells
            v = _context(first, child, buf, moves, k, order, hist)
            a = buf[k - 1]
            b = -1
            if v >= 0:
                weights[:] = hist[v]
                if early:
                    weights[END] = 0.0
                b = _draw(weights, uniforms[i, k])
            if b < 0 and early:
                b = _any_move(a, moves_ok, uniforms[i, k])
            if b < 0 or b == END:
                break
            buf[k] = a + (b // 3 - 1) * cols[a] + (b % 3 - 1)
            moves[k] = b
            used = _place(out, i, used, loc_indptr, loc_indices, buf[k], picks[i, k])
            k += 1
        length[i] = used


def walk(starts: np.ndarray, first: np.ndarray, child: np.ndarray, hist: np.ndarray, rs: "ReferenceSystems",
         order: int, l_max: int, n: int, seed: int, loc_indptr: np.ndarray, loc_indices: np.ndarray,
         min_cells: int = 1, open: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(locations, lengths): ``n`` walks of up to l_max cells as locations of the space inside them
    (repeats merged), at least ``min_cells`` where l_max allows, concatenated, seeded (step 7);
    ``open``: the cells a public domain leaves open (:func:`open_cells`)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(17,)))
    uniforms, picks = rng.random((n, l_max)), rng.random((n, l_max))
    out = np.zeros((n, l_max), np.int64)
    length = np.zeros(n, np.int64)
    weights = starts if starts.sum() > 0 else (np.ones_like(starts) if open is None else open.astype(np.float64))
    _walks(np.cumsum(weights), first, child.astype(np.int64), hist, rs.cell_cols(), rs.valid_moves(open), int(order),
           int(l_max), int(min_cells), loc_indptr, loc_indices, uniforms, picks, out, length)
    return out[np.arange(l_max)[None, :] < length[:, None]], length


def _owners(rs: ReferenceSystems, xy, ids: np.ndarray) -> np.ndarray:
    """The global cell of every location ``ids`` at every level, level by level."""
    parts = []
    for level in range(rs.levels):
        r, c = rs.rowcol(level, xy[0][ids], xy[1][ids])
        parts.append(rs.offsets[level] + r * rs.shape(level)[1] + c)
    return np.concatenate(parts)


def open_cells(rs: ReferenceSystems, xy, allowed: np.ndarray | None) -> np.ndarray | None:
    """Bool per global cell: whether one of the locations it stands for without a domain (those in
    it, or the nearest to its centre: :func:`cell_locations`) is one a public domain allows
    (``allowed``); None without a domain."""
    if allowed is None:
        return None
    indptr, indices = cell_locations(rs, xy)
    return np.add.reduceat(allowed[indices].astype(np.int64), indptr[:-1]) > 0


def cell_locations(rs: ReferenceSystems, xy, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per global cell, the space's locations inside it (CSR indptr, indices), or the one nearest
    to its centre when none lies inside; with ``allowed`` (a public domain), its locations only."""
    from scipy.spatial import cKDTree

    ids = np.arange(xy[0].size) if allowed is None else np.flatnonzero(allowed)
    owner, members = _owners(rs, xy, ids), np.tile(np.arange(ids.size), rs.levels)
    empty = np.setdiff1d(np.arange(rs.offsets[-1]), owner)
    cx, cy = rs.centres()
    nearest = cKDTree(np.column_stack([xy[0][ids], xy[1][ids]])).query(np.column_stack([cx[empty], cy[empty]]))[1]
    owner, members = np.concatenate([owner, empty]), np.concatenate([members, nearest])
    by = np.argsort(owner, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=int(rs.offsets[-1])))])
    return indptr.astype(np.int64), ids[members[by]].astype(np.int64)


# -- the synthesizer -----------------------------------------------------------------------------

class DPT(Synthesizer):
    """DPT: DP prefix trees on hierarchical reference systems (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget per trajectory (add or remove one), the DP count of trajectories included.
    levels : int
        Reference systems (grids) in the hierarchy, the coarsest first (choice: 4).
    branching : int
        Cells a side each cell of a level splits into at the next finer level (choice: 2).
    finest : float
        Side of the finest cells in metres; 0: the median distance between neighbouring locations
        of the space (its own grid on a grid space).
    order : int
        Markov order h of the prefix trees: grams of up to h cells get a histogram of next moves
        (h + 1 noisy depths with the root; choice: 2).
    l_max : int
        Cells kept per trajectory (the sensitivity of each depth), and the longest synthetic trip
        in cells (CCS 2012's l_max, 20, as NGRAM).
    select_share : float
        Share of the budget left after the size count spent on the noisy number of trajectories per
        reference system (their selection and their weights in sampling).
    hour_share : float
        Share of the budget left after the size count spent on the histogram of the trips' hours
        (only when the training set has an ``hour`` column).
    size_share : float
        Share of epsilon spent on the DP count of training trajectories (0: none; sample needs n).
    time_share : float
        Share of epsilon spent on the model of the trips' times (synth/trip_times.py: starts by day
        and hour, speeds); 0 releases trips without times.
    footprint_share : float
        Share of epsilon spent, where the set has no public domain, on a DP footprint (the blocks of
        cells enough trips visit: privacy/footprint.py) that the model then keeps to as to a domain;
        spent only when the DP count of trips can fill every block (the cabs' size, not a few hundred
        trips: docs/data.md); 0: never.
    max_traces_per_user : int
        Trajectories one user id may contribute (the first ones are kept): the ledger's per-person
        epsilon is this many times the per-trajectory one (privacy/ledger.py). 1, as ``prepare`` makes them.
    """

    name = "dpt"
    checks = {"epsilon": check_epsilon, "levels": check_count, "branching": check_count,
              "finest": in_range(0.0), "order": check_count, "l_max": check_count, "select_share": check_share,
              "hour_share": check_share, "size_share": check_share, "time_share": check_share, "footprint_share": check_share, "max_traces_per_user": check_count,
              "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, domain=True)
    several_traces = False
    partitions = True

    def __init__(self, epsilon: float = 1.0, levels: int = 4, branching: int = 2, finest: float = 0.0,
                 order: int = 2, l_max: int = 20, select_share: float = 0.1, hour_share: float = 0.05,
                 size_share: float = SIZE_SHARE, time_share: float = TIME_SHARE,
                 footprint_share: float = FOOTPRINT_SHARE, max_traces_per_user: int = 1, seed: int = 0):
        self.epsilon = epsilon
        self.levels = levels
        self.branching = branching
        self.finest = finest
        self.order = order
        self.l_max = l_max
        self.select_share = select_share
        self.hour_share = hour_share
        self.size_share = size_share
        self.time_share = time_share
        self.footprint_share = footprint_share
        self.max_traces_per_user = max_traces_per_user
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "DPT":
        eps = check_epsilon(self.epsilon)
        order, l_max = check_count(self.order, "order"), check_count(self.l_max, "l_max")
        self._remember_frame(train)
        if self.select_share + (self.hour_share if "hour" in train.users and not self.time_share else 0.0) >= 1:
            raise InputError(f"select_share + hour_share must leave a budget for the trees, got "
                             f"{self.select_share} + {self.hour_share}")
        train = self._bounded_traces(train, self.max_traces_per_user)
        eps = self._count_units(train.n_traces, eps, self.size_share, "trace")
        eps = self._fit_times(train, check_epsilon(self.epsilon), self.time_share, eps)
        eps = self._fit_footprint(train, check_epsilon(self.epsilon), self.footprint_share, eps)
        hours = "hour" in train.users and self.trip_times_ is None     # the time model gives hours otherwise
        eps_sel, eps_hour = self.select_share * eps, (self.hour_share * eps if hours else 0.0)
        eps_tree = eps - eps_sel - eps_hour
        self.rs_ = ReferenceSystems.over(self.space_, float(self.finest), check_count(self.levels, "levels"),
                                         check_count(self.branching, "branching"))
        # (x, y, offsets, each trajectory's level) of every chunk (data/chunks.py)
        points = chunks(train).map(markov.points, planar(self.space_)).map(with_levels, self.rs_)
        noisy = laplace(points.total(level_counts, self.rs_.levels).astype(np.float64), eps_sel, 1.0,
                        ledger=self.ledger_, unit="trace",
                        saw="trajectories per reference system (each in the one its model selection picks)",
                        assumptions="a trajectory is in one reference system")
        kept, target = kept_levels(noisy, l_max * (order + 1) / eps_tree)
        self.level_weights_ = np.bincount(target, weights=np.maximum(noisy, 0.0), minlength=self.rs_.levels)
        if self.level_weights_.sum() <= 0:
            self.level_weights_ = kept.astype(np.float64)
        kept_cells = kept[self.rs_.cell_level()]
        xy = planar(self.space_)
        open = open_cells(self.rs_, xy, self._allowed())
        trees = grow(prefix_counts(points, self.rs_, target, l_max), self.rs_, kept_cells, order, eps_tree, l_max,
                     open)
        self.ledger_.record(
            "laplace", max(eps_tree, trees.opendp_epsilon), 0.0, float(l_max), "trace",
            saw=f"prefix-tree counts (grams of up to {order} cells and the move after) of the trajectories on "
                f"{int(kept.sum())} reference system(s), each truncated to {l_max} cells ({trees.n_nodes} nodes)",
            assumptions="a trajectory is in one reference system's tree (parallel composition) and adds at most "
                        "l_max grams of each length; the order + 1 depths share epsilon; pruning, back-off and "
                        "sampling are post-processing")
        self._keep(trees, kept_cells if open is None else kept_cells & open)
        self.noise_parts_ = {"where trips go": tree_noise(trees, self.rs_, kept_cells, order, eps_tree, l_max, open)}
        self.hours_ = self._hours(train, eps_hour) if hours else np.zeros(0)
        self.loc_indptr_, self.loc_indices_ = cell_locations(self.rs_, xy, self._allowed())
        return self

    def _keep(self, trees: PrefixTrees, kept_cells: np.ndarray) -> None:
        self.root_, self.first_, self.hist_, self.child_ = trees.root, trees.first, trees.hist, trees.child
        self.node_cell_, self.node_depth_ = trees.cell, trees.depth
        starts = start_weights(trees, self.rs_.cell_cols())
        if starts.sum() <= 0:             # nothing released at all: any cell of a kept level
            starts = kept_cells.astype(np.float64)
        # each level's starts scaled to its weight: drawing a cell draws its level first (step 7)
        level = self.rs_.cell_level()
        total = np.bincount(level, weights=starts, minlength=self.rs_.levels)
        w = np.where(total > 0, self.level_weights_, 0.0)
        w = w if w.sum() > 0 else (total > 0).astype(np.float64)
        # the share within its level first: at a tiny epsilon starts and weights near 1e300 overflowed
        self.starts_ = np.divide(starts, total[level], out=np.zeros_like(starts), where=total[level] > 0) * w[level]

    def _hours(self, train: TraceSet, epsilon: float) -> np.ndarray:
        """The noisy histogram of the trips' hours (-1, 0 .. 23), negatives 0 (step 7)."""
        noisy = laplace(chunks(train).total(hour_counts).astype(np.float64), epsilon, 1.0, ledger=self.ledger_,
                        unit="trace", saw="the histogram of the trips' hours", assumptions="a trip has one hour")
        return np.maximum(noisy, 0.0)

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trips (default: the DP count), each its own virtual user with its hour,
        on consecutive instants from the start of that hour."""
        m = self._size(n)
        l_max = min(check_count(self.l_max, "l_max"), days * self.time_.instants_per_day)
        loc, length = walk(self.starts_, self.first_, self.child_, self.hist_, self.rs_, check_count(self.order, "order"),
                           l_max, m, seed, self.loc_indptr_, self.loc_indices_, self.min_cells_,
                           open_cells(self.rs_, planar(self.space_), self._allowed()))
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(18,)))
        if getattr(self, "trip_times_", None) is not None:
            return self._untimed(loc, length, seed)
        hour = np.full(m, -1)
        if self.hours_[1:].sum() > 0 and np.argmax(self.hours_) > 0:   # a set with time (not mostly -1)
            hour = rng.choice(HOURS - 1, size=m, p=self.hours_[1:] / self.hours_[1:].sum())
        start = self._hour_start(hour, length, days)
        user = np.repeat(np.arange(m, dtype=np.int32), length)
        t = np.repeat(start, length) + np.arange(loc.size) - np.repeat(np.cumsum(length) - length, length)
        return self._synthetic(user, t, loc, np.full(m, -1), np.zeros(m, np.int32),
                               extra={"hour": hour.astype(np.int8)},
                               info={"times": "hour" if (hour >= 0).any() else "none"},
                               user_id=np.array([f"v{q}" for q in range(m)], dtype=object), presorted=True)

    def _hour_start(self, hour: np.ndarray, length: np.ndarray, days: int) -> np.ndarray:
        """The first instant of each trip: the start of its hour on the time axis (0 for hour -1),
        moved earlier where the trip would leave the axis's ``days`` days."""
        axis = self.time_
        step = axis.instant.total_seconds()
        start = np.floor((hour * 3600.0 - axis.window_start.total_seconds()) / step).astype(np.int64)
        start = np.where(hour < 0, 0, start)
        return np.clip(start, 0, np.maximum(days * axis.instants_per_day - length, 0))

    def next_moves(self, cells) -> np.ndarray:
        """The probabilities of the 9 moves (column END: the end) after the trip ``cells`` (global
        cells, consecutive ones neighbours), from the longest released suffix as sampling uses it;
        all 0 where no suffix has a released count (the walk ends there)."""
        self.check_is_fitted()
        cells = np.asarray(cells, np.int64).ravel()
        if not cells.size:
            raise InputError("next_moves needs at least one cell")
        moves = np.zeros(cells.size, np.int64)
        moves[1:] = move_of(self.rs_, cells[:-1], cells[1:])
        v = _context(self.first_, self.child_.astype(np.int64), cells, moves, cells.size, int(self.order), self.hist_)
        return np.zeros(BINS) if v < 0 else self.hist_[v] / self.hist_[v].sum()

    def summary(self) -> dict:
        depth = np.bincount(self.node_depth_) if hasattr(self, "node_depth_") else []
        return {"epsilon": float(self.epsilon), "levels": int(self.levels), "order": int(self.order),
                "finest_m": float(self.rs_.finest) if hasattr(self, "rs_") else None,
                "level_weights": [float(v) for v in getattr(self, "level_weights_", [])],
                "nodes_per_depth": [int(c) for c in depth[1:]]}

    _SAVED = ("level_weights", "root", "first", "hist", "child", "node_cell", "node_depth", "starts", "hours",
              "loc_indptr", "loc_indices")

    def _arrays(self):
        rs = self.rs_
        return {"box": np.asarray(rs.box), "grid": np.array([rs.finest, rs.levels, rs.branching]),
                **{key: getattr(self, key + "_") for key in self._SAVED}}

    def _restore(self, arrays, fitted):
        missing = [k for k in ("box", "grid") + self._SAVED if k not in arrays]
        if missing:
            raise InputError(f"the saved DPT model has no {', '.join(map(repr, missing))}")
        finest, levels, branching = arrays["grid"]
        self.rs_ = ReferenceSystems(tuple(float(v) for v in arrays["box"]), float(finest), int(levels), int(branching))
        for key in self._SAVED:
            setattr(self, key + "_", arrays[key])
        if self.starts_.size != self.rs_.offsets[-1] or self.loc_indices_.max(initial=0) >= self.space_.n_locations:
            raise InputError("the saved DPT arrays do not match its reference systems or space")
