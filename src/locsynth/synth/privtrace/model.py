"""PrivTrace (Wang, Zhang, Yu, Wang, Li, Sun, Sun, Chen, "PrivTrace: Differentially Private
Trajectory Synthesis by Adaptive Markov Models", USENIX Security 2023), the DP method the field
compares against. The unit is one trajectory (a trace); neighbouring inputs differ by one
trajectory added or removed. The steps, in the order the data flows:

1. Size: a DP count of the training trajectories (privacy/count.py), ``size_share`` of epsilon,
   sizes the output by default (the authors' code makes as many as the input has: not DP).
2. Budget: the rest is split 0.2 / 0.4 / 0.4 (the authors' default ``epsilon_partition``;
   their comment suggests 0.2 / 0.52 / 0.28) between the grid, the first-order counts and the
   second-order counts.
3. Grid (§4.1, grid.py): level 1 has k = floor(sqrt(points / 600)) cells a side, at most 60.
   Choice: the number of points is a DP sum of the trajectories' point counts, each clipped at
   ``max_length`` (a quarter of the grid's share), where the authors' code reads the exact
   number. The level-1 densities (markov.density, sensitivity 1) get the other three quarters;
   a cell denser than 0.05 x trajectories / k^2 is split into ceil(sqrt(density / 200))^2.
   Choice: at most 16 states per location of the public space in all (grid.STATES_PER_LOCATION,
   the largest splits lowered first), a public bound the authors' rule lacks: a tiny epsilon's
   noisy densities asked for 67 million states. It post-processes the noisy densities (DP kept).
4. States (markov.states): each trajectory's points, its locations' coordinates, interpolated
   so that consecutive states touch, consecutive repeats merged.
5. First order (§4.2, markov.first_order): moves between touching states, from the virtual start
   and into the virtual end, Laplace(1 / epsilon) on every one (privacy/laplace.py, OpenDP).
   Choice: negative counts become 0 (the authors' "queue minus" spreads them over the row; both
   are post-processing).
6. Second order (§4.3, markov.guideposts, second_order): the states whose noisy first-order
   counts show they matter (the authors' filter) get (previous, next) tables, Laplace(1 /
   epsilon) on every cell; negatives become 0.
7. Generation (§4.4): a walk from a start state drawn from the noisy start counts; at a
   guidepost reached from a neighbour the next state comes from its second-order row, elsewhere
   from the first-order row; the walk ends when it draws the end state or reaches
   ``max_length`` states (the authors' generator stops at 100); the end state's weight is
   multiplied by 0.8, and by 0.5 more while the walk is in its first level-1 cell, as the
   authors' generator does. Each state becomes a location of
   the training space inside its cell, drawn uniformly (the nearest location when none lies
   inside). Simplified where the paper calibrates: the authors' start-end calibration (a
   gravity-like optimisation of the trip distribution) and their length heuristics (end
   probabilities damped near the start, lingering walks dropped) are not reproduced; the trip
   distribution is the one the noisy start and end counts and the Markov chain imply.

A public domain (data/domain.py: where trips can be, by knowledge given apart from the data) closes
the states that hold none of its locations: the neighbour graph loses every edge into them and
their start and end counts become 0, after the noise (post-processing), and a state's locations are
the allowed ones inside it. Choice: masking, not snapping; the walk is the model's own, and a state
the domain closes is one no trajectory crosses, whose noisy counts are noise alone (snapping their
visits to the nearest allowed location would pile the noise's mass onto the domain's edge).

The paper's PrivTrace releases no time; here the trip methods' time model (synth/trip_times.py,
``time_share`` of epsilon) gives each synthetic trajectory a start and its steps durations. With
``time_share=0`` its events sit on instants 0, 1, ... (steps, not times) and its ``hour`` is -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...core.errors import InputError
from ...metrics.standard import planar
from ...privacy.laplace import laplace
from ...data.chunks import chunks, spread
from ...privacy.noise import noise_mass, share
from ...data.traces import TraceSet
from ...core.validation import check_count, check_epsilon
from ..base import FOOTPRINT_SHARE, SIZE_SHARE, TIME_SHARE, Synthesizer, Tags
from . import markov
from ..min_cells import walk_locations
from .grid import (STATES_PER_LOCATION, TwoLevelGrid, level1_size, level2_sizes, locations_of_states, open_edges,
                   open_states, public_box)
from ...core.validation import check_seed, check_share

#: the authors' default split of epsilon: grid, first order, second order
SPLIT = (0.2, 0.4, 0.4)
#: the authors' generator (trajectory_generator.py) weighs the end state by 0.8 at every step,
#: and by 0.5 more while the walk has not left its first level-1 cell (fixed, data-independent)
END_WEIGHT, END_WEIGHT_FIRST_CELL = 0.8, 0.5


def check_split(value, name: str = "split", parts: int = 3) -> tuple[float, ...]:
    """``parts`` positive shares of epsilon that sum to 1 (PrivTrace's three: grid, first order,
    second order)."""
    try:
        split = tuple(float(v) for v in np.asarray(value, np.float64).ravel())
    except (TypeError, ValueError):
        split = ()
    if len(split) != parts or any(not (0 < v <= 1) for v in split) or abs(sum(split) - 1) > 1e-9:
        words = {3: "three", 4: "four"}.get(parts, str(parts))
        raise InputError(f"{name} must be {words} positive shares of epsilon that sum to 1, got {value!r}")
    return split


class PrivTrace(Synthesizer):
    """PrivTrace (Wang et al., USENIX Security 2023): DP first- and second-order Markov models on a
    two-level grid, with guideposts choosing between them, and walks from the model; the module
    docstring gives the steps.

    Parameters
    ----------
    epsilon : float
        Privacy budget per trajectory (add or remove one), the DP count of trajectories included.
    split : tuple of 3 floats
        Shares of the rest for the grid, the first-order and the second-order counts.
    max_length : int
        States per synthetic trajectory at most, and the clip of each trajectory's point count in
        the DP sum that sizes the grid.
    size_share : float
        Share of epsilon spent on the DP count of training trajectories (0: none; sample needs n).
    time_share : float
        Share of epsilon spent on the model of the trips' times (synth/trip_times.py: starts by day
        and hour, step durations by length); 0 releases trips without times.
    footprint_share : float
        Share of epsilon spent, where the set has no public domain, on a DP footprint (the blocks of
        cells enough trips visit: privacy/footprint.py) that the model then keeps to as to a domain;
        spent only when the DP count of trips can fill every block (the cabs' size, not a few hundred
        trips: docs/data.md); 0: never.
    max_traces_per_user : int
        Trajectories one user id may contribute (the first ones are kept): the ledger's per-person
        epsilon is this many times the per-trajectory one (privacy/ledger.py). 1, as ``prepare`` makes them.
    """

    name = "privtrace"
    checks = {"epsilon": check_epsilon, "split": lambda v, name="split": check_split(v, name),
              "max_length": check_count, "size_share": check_share, "time_share": check_share, "footprint_share": check_share, "max_traces_per_user": check_count,
              "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, domain=True)
    several_traces = False
    partitions = True

    def __init__(self, epsilon: float = 1.0, split: tuple = SPLIT, max_length: int = 100,
                 size_share: float = SIZE_SHARE, time_share: float = TIME_SHARE,
                 footprint_share: float = FOOTPRINT_SHARE, max_traces_per_user: int = 1, seed: int = 0):
        self.epsilon = epsilon
        self.split = tuple(split)
        self.max_length = max_length
        self.size_share = size_share
        self.time_share = time_share
        self.footprint_share = footprint_share
        self.max_traces_per_user = max_traces_per_user
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "PrivTrace":
        eps, split, cap = check_epsilon(self.epsilon), self._split(), check_count(self.max_length, "max_length")
        self._remember_frame(train)
        train = self._bounded_traces(train, self.max_traces_per_user)
        eps = self._count_units(train.n_traces, eps, self.size_share, "trace")
        eps = self._fit_times(train, check_epsilon(self.epsilon), self.time_share, eps)
        eps = self._fit_footprint(train, check_epsilon(self.epsilon), self.footprint_share, eps)
        n_hat = self.training_.get("dp_count")
        xy = planar(self.space_)
        points = chunks(train).map(markov.points, xy)          # (x, y, offsets): data/chunks.py
        self.grid_ = self._grid(points, n_hat, split[0] * eps, cap)
        seq = points.map(markov.states_of, self.grid_)         # (states, offsets)
        # a public domain closes the states that hold none of its locations: no move into them, no
        # start or end there (their counts would be noise alone; masking them is post-processing)
        open = open_states(self.grid_, xy, self._allowed())
        self.indptr_, self.indices_ = open_edges(*self.grid_.neighbours(), open)
        moves, start, end = seq.total(spread(markov.first_order), self.indptr_, self.indices_)
        noisy = np.maximum(self._noise(np.concatenate([moves, start, end]), split[1] * eps,
                                       "first-order moves with start and end, 1 / (l + 1) per state of a trajectory"), 0)
        s = self.grid_.n_states
        # the share of noise in the first-order counts (privacy/noise.py): Laplace clipped at 0 in every entry
        self.noise_parts_["where trips go"] = share(noise_mass(noisy, 1.0 / (split[1] * eps)), noisy.sum())
        self.moves_, self.start_, self.end_ = noisy[:moves.size], noisy[moves.size:moves.size + s], noisy[-s:]
        if open is not None:
            self.start_, self.end_ = self.start_ * open, self.end_ * open
        if self.start_.sum() <= 0:           # nothing left of the start counts: start anywhere (open)
            self.start_ = np.ones(s) if open is None else open.astype(np.float64)
        posts = np.flatnonzero(markov.guideposts(self.moves_, self.start_, self.end_, self.indptr_, split[1] * eps))
        self.post_id_ = np.full(s, -1, np.int64)
        self.post_id_[posts] = np.arange(posts.size)
        self.tables_ = markov.table_offsets(self.indptr_, posts)
        counts = seq.total(spread(markov.second_order), self.indptr_, self.indices_, self.post_id_, self.tables_)
        self.second_ = np.maximum(self._noise(counts, split[2] * eps, "second-order moves through the guideposts, "
                                              "1 / l per visit"), 0) if counts.size else counts
        self._locations_of_states(xy)
        return self

    def _split(self) -> tuple[float, float, float]:
        return check_split(self.split)

    def _noise(self, values: np.ndarray, epsilon: float, saw: str) -> np.ndarray:
        return laplace(values, epsilon, 1.0, ledger=self.ledger_, unit="trace", saw=saw)

    def _grid(self, points, n_hat: float | None, epsilon: float, cap: int) -> TwoLevelGrid:
        """The two-level grid over the space's box (step 3), from the chunks of (x, y, offsets)
        ``points``. ``n_hat``, the trajectories in the
        split threshold, is the DP count; without one (``size_share`` = 0) the sum of the noisy
        level-1 densities, to which every trajectory adds 1 (post-processing: the authors' code
        reads the exact number, which no spend covers)."""
        box = public_box(*planar(self.space_))
        n_points = float(points.total(markov.clipped_points, cap))
        n_points = laplace(np.array([n_points]), epsilon / 4, float(cap), ledger=self.ledger_, unit="trace",
                           saw=f"the number of points, each trajectory's clipped at {cap}")[0]
        # the share of noise in that count (privacy/noise.py: its expected |noise|, the Laplace scale), which sizes the grid
        self.noise_parts_ = {"the grid's size": share(float(cap) / (epsilon / 4), max(n_points, 0.0))}
        k = level1_size(n_points)
        coarse = TwoLevelGrid(box, k, np.ones(k * k, np.int64))
        dens = self._noise(points.total(markov.density_of, coarse), 3 * epsilon / 4,
                           "level-1 densities, each trajectory's points sharing 1")
        return TwoLevelGrid(box, k, level2_sizes(dens, max(float(dens.sum()), 0.0) if n_hat is None else n_hat,
                                                 max_states=STATES_PER_LOCATION * self.space_.n_locations))

    def _locations_of_states(self, xy) -> None:
        """Per state, the locations inside its cell (CSR), or the nearest one to its centre (those
        a public domain allows)."""
        self.loc_indptr_, self.loc_indices_ = locations_of_states(self.grid_, xy, self._allowed())

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trajectories (default: the DP count), each its own virtual user with
        ``hour`` -1, on instants 0, 1, ... (at most ``max_length`` and one day's instants)."""
        m = self._size(n)
        cap = min(check_count(self.max_length, "max_length"), days * self.time_.instants_per_day)
        level1 = np.repeat(np.arange(self.grid_.k ** 2), self.grid_.m.astype(np.int64) ** 2)
        loc, length = walks(self.indptr_, self.indices_, self.moves_, self.start_, self.end_, self.post_id_,
                            self.tables_, self.second_, level1, self.loc_indptr_, self.loc_indices_, m, cap, seed,
                            self.min_cells_)
        return self._untimed(loc, length, seed)

    def summary(self) -> dict:
        g = self.grid_
        return {"epsilon": float(self.epsilon), "split": list(self._split()), "level1": int(g.k),
                "states": int(g.n_states), "split_cells": int((g.m > 1).sum()),
                "guideposts": int((self.post_id_ >= 0).sum())}

    def _arrays(self):
        g = self.grid_
        return {"box": np.asarray(g.box), "k": np.array([g.k]), "m": g.m, "indptr": self.indptr_,
                "indices": self.indices_, "moves": self.moves_, "start": self.start_, "end": self.end_,
                "post_id": self.post_id_, "tables": self.tables_, "second": self.second_,
                "loc_indptr": self.loc_indptr_, "loc_indices": self.loc_indices_}

    def _restore(self, arrays, fitted):
        missing = [k for k in ("box", "k", "m", "indptr", "indices", "moves", "start", "end", "post_id", "tables",
                               "second", "loc_indptr", "loc_indices") if k not in arrays]
        if missing:
            raise InputError(f"the saved PrivTrace model has no {', '.join(map(repr, missing))}")
        self.grid_ = TwoLevelGrid(tuple(float(v) for v in arrays["box"]), int(arrays["k"][0]), arrays["m"])
        for key in ("indptr", "indices", "moves", "start", "end", "post_id", "tables", "second", "loc_indptr",
                    "loc_indices"):
            setattr(self, key + "_", arrays[key])
        if self.start_.size != self.grid_.n_states or self.loc_indices_.max(initial=0) >= self.space_.n_locations:
            raise InputError("the saved PrivTrace arrays do not match its grid or space")


@njit(cache=True)
def _draw(weights, u):
    """Index drawn in proportion to ``weights`` (all >= 0) with uniform ``u``; -1 when they sum to 0."""
    total = weights.sum()
    if total <= 0:
        return -1
    target = u * total
    acc = 0.0
    for i in range(weights.size):
        acc += weights[i]
        if target < acc:
            return i
    return weights.size - 1


@njit(cache=True)
def _draw_cumulative(cdf, u):
    """What ``_draw(weights, u)`` returns, from ``cdf = np.cumsum(weights)`` by bisection: the first
    index whose running sum exceeds u x the total (the same sums, so the same index), in log time."""
    total = cdf[-1] if cdf.size else 0.0
    if total <= 0:
        return -1
    return min(np.searchsorted(cdf, u * total, side="right"), cdf.size - 1)


@njit(cache=True)
def _walk(indptr, indices, moves, start_cdf, end, post_id, tables, second, level1, cap, out, buf):
    """One walk into ``out``; returns its number of states (step 7). ``start_cdf`` is the running
    sum of the start counts: a start drawn by bisection, not by a scan of every state, which made
    sampling grow with the states times the walks."""
    a = _draw_cumulative(start_cdf, np.random.random())
    if a < 0:
        return 0
    prev_pos = -1                    # position of the previous state among a's neighbours; -1: start
    length = 0
    while True:
        out[length] = a
        length += 1
        if length >= cap:
            return length
        lo, hi = indptr[a], indptr[a + 1]
        d = hi - lo
        weights = buf[:d + 1]              # a view: no allocation a step
        used = False
        g = post_id[a]
        if g >= 0:
            row = d if prev_pos < 0 else prev_pos
            base = tables[g] + row * (d + 1)
            for j in range(d + 1):
                weights[j] = second[base + j]
            used = weights.sum() > 0
        if not used:
            for j in range(d):
                weights[j] = moves[lo + j]
            weights[d] = end[a]
        weights[d] *= END_WEIGHT * (END_WEIGHT_FIRST_CELL if level1[a] == level1[out[0]] else 1.0)
        j = _draw(weights, np.random.random())
        if j < 0 or j == d:
            return length
        b = indices[lo + j]
        prev_pos = -1
        for q in range(indptr[b], indptr[b + 1]):
            if indices[q] == a:
                prev_pos = q - indptr[b]
                break
        a = b


@njit(cache=True)
def _walks(indptr, indices, moves, start, end, post_id, tables, second, level1, loc_indptr, loc_indices, n, cap,
           seed, min_cells):
    np.random.seed(seed)
    states = np.empty(n * max(cap, min_cells), np.int64)
    length = np.zeros(n, np.int64)
    buf = np.empty(cap, np.int64)
    weights = np.empty(np.diff(indptr).max() + 1 if indptr.size > 1 else 1)
    used = 0
    start_cdf = np.cumsum(start)
    for k in range(n):
        m = _walk(indptr, indices, moves, start_cdf, end, post_id, tables, second, level1, cap, buf, weights)
        used, length[k] = walk_locations(states, used, buf[:m], loc_indptr, loc_indices, min_cells, indptr,
                                         indices)
    return states[:used], length


def walks(indptr, indices, moves, start, end, post_id, tables, second, level1, loc_indptr, loc_indices, n: int,
          cap: int, seed: int, min_cells: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """n synthetic trajectories as locations (concatenated) and their lengths, each of at least
    ``min_cells`` locations (synth/min_cells.py); a walk that ends at once (no start count at all)
    is an empty trace."""
    return _walks(indptr, indices, moves, start, end, post_id, tables, second, level1, loc_indptr, loc_indices,
                  int(n), int(cap), int(seed) % (2 ** 32), int(min_cells))
