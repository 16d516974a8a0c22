"""LDPTrace (Du, Hu, Zhang, Fang, Chen, Zheng and Gao, "LDPTrace: Locally Differentially Private
Trajectory Synthesis", PVLDB 16(8), 2023): trajectory synthesis in the local model, where no
curator sees a raw trajectory. The authors' code is zealscott/LDPTrace (code/main.py, ldp.py,
grid.py, map_func.py; REFERENCE.md). The unit is one trajectory, whose user perturbs it on their
own device: the guarantee is local DP, for any two trajectories of that user, and holds against
the collector as well (privacy/ledger.py, ``local``). The steps, in the order the data flows:

1. Grid (§4.1): N x N cells (``grid_size``, the authors' default ``--grid_num 6``, which their
   README recommends for every dataset from the paper's analysis of N; utils.grid_num's formula
   is not called by their main.py) over the box of the space's locations, which is public (the
   authors' code takes the data's own bounding box, which is not). Each trajectory becomes its
   sequence of cells, interpolated so that consecutive cells touch (their trajectory.py walks a
   shortest grid path between non-adjacent cells; here the segment between two points is
   followed, privtrace/markov.states), repeats merged.
2. Length, round 1 (user.py, collector.py): every user reports their length in cells by OUE at
   epsilon / 10 (``length_share``); the collector estimates the length distribution and takes its
   ``length_quantile`` (0.9) quantile as the maximum length L (the authors' estimate_max_length;
   choice: the quantile of the clipped estimates against the number of reports, where the authors
   divide by the sum of the estimates, which is far noisier: collector.max_length).
3. Mobility, round 2: the trajectory's first min(l, L) cells hold L + 1 values, the start cell,
   L - 1 moves as (cell, one of 8 directions) and the end cell; every user reports ONE of them, of a
   slot drawn uniformly without looking at the data, by OUE at the whole 9 epsilon / 10 (a missing
   move: a report of no value). Choice (user.py, issue 48): the authors' users send min(l, L) + 1
   reports at 9 epsilon / 10 / (L + 1) each, whose number states the length; padding them to L + 1
   hid it but summed L - 1 noisy move reports per user; one sampled report hides it at about
   1 / (L + 1) of the variance.
   Budget: the authors' main.py gives epsilon / 10 to the length and 9 epsilon / 10 to the
   mobility; the project's library holds no text of the paper to check it against, so the code's
   split is the default here (``length_share``).
   Simulation: what the users send is not drawn bit by bit (at the Porto set's 1.7 million users
   some 10^9 bits, 20 minutes of OpenDP's sampling): the collector keeps only each value's bit
   count, and privacy/oue.tally draws those counts in law from how many reports hold each value,
   which is what the sums of user.py's reports would give (its module docstring states the
   sampler's accuracy). user.py remains the protocol one user runs; tests/test_ldptrace.py audits
   both and checks that the two agree in law.
4. Model (collector.py): OUE's unbiased estimates of the start, move and end counts, each kind
   scaled by its slots over its reports, make the first-order Markov matrix with a virtual start
   row and end column, each cell's row normalized over its 8 moves and its end (the authors'
   generate_markov_matrix), negative estimates set to 0 as theirs (collector.mobility says why
   Norm-Sub, tried, is not used there). Choice (issue 48): the length distribution is the
   estimates' unimodal fit (collector.unimodal), not the clipped estimates, whose noisy tail drew
   long walks.
5. Synthesis (the authors' generate_synthetic_database): a start cell from the start row, a length
   l from the estimated length distribution, then up to l - 1 moves, each to a neighbour or to the
   end, the end's probability multiplied by min(1, 0.3 + 0.2 (k - 1)) for a walk of k cells so far
   (their sample_markov_next; a fixed, data-independent damping of early ends); a walk also ends
   where its row has no weight. Each cell becomes a location of the space inside it, drawn
   uniformly (the nearest location when none lies inside), as PrivTrace's do. A walk of one cell
   (or of cells that share their nearest location) gets a second, different location of its cell
   (a location of a cell it touches when the cell has only one; synth/min_cells.py): the authors'
   trajectory_grid2points gives a one-cell trajectory two random points of its cell, and a trip of
   one point has no length, no diameter and no speed (16-35 % of the trips before, issue 48).

A public domain (data/domain.py) closes the cells that hold none of its locations: the collector
sets the moves into them and their starts to 0 (post-processing of its estimates, with knowledge
public to it as to everyone), and a cell's locations are the allowed ones inside it (the authors'
trajectory_grid2points draws a point in the cell; here the draw keeps to the domain). The users'
reports are unchanged (their values range over the whole grid, which keeps the protocol the paper's).

Size. In the local model the collector receives one report per user, so it knows the number of
trajectories exactly, and the local guarantee is stated for any two values of one user's data
(replace-one: a user's presence is seen by the collector in every LDP protocol). The authors
synthesize as many trajectories as there are users; so does this class by default: the number is
public under the relation the ledger states, and a DP count would protect nothing from the
collector (who counts the reports) while spending budget. The release then states the size as the
co-location synthesizer's does (the DP-size rule of the add/remove methods protects a size their
relation hides; this relation hides none).

Times (not in the paper, which synthesizes sequences of cells): the model of when trips start and
how fast they go that every trip method shares (synth/trip_times.py), here reported by the users
themselves (times.py): a public random ``time_share`` of the trajectories reports its start, speed or
duration instead of its mobility, at the same budget. ``time_share=0`` keeps the paper's method: the
synthetic trajectories then sit on instants 0, 1, ... (steps, not times) with ``hour`` -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ...core.errors import InputError
from ...metrics.standard import planar
from ...privacy import oue
from ...data.chunks import chunks, spread
from ...privacy.noise import noise_mass, share
from ...data.traces import TraceSet
from ...core.validation import check_count, check_epsilon, check_seed, check_share, in_range, whole
from ..base import Synthesizer, Tags
from ..privtrace import markov
from ..privtrace.grid import TwoLevelGrid, locations_of_states, open_edges, open_states, public_box
from .. import trip_times
from . import collector, times, user
from ..min_cells import walk_locations

#: the authors' end damping: the end's weight times min(1, END_BASE + END_STEP (k - 1)) for a walk of k cells
END_BASE, END_STEP = 0.3, 0.2
#: the seed's stream for the users' slots (user.slots); times.STREAM draws who reports times
SLOTS = 48
#: share of the trajectories that report their times instead of their mobility (times.py), measured
#: on the 200 cabs at epsilon 1 (docs/methods/ldptrace.md)
TIME_SHARE = 0.5


def mobility_noise(est: dict, counts: dict, slots: dict, users: int, epsilon: float) -> float:
    """The estimated share of noise in round 2's estimates (start cells, moves, end cells; privacy/
    noise.py): OUE's noise on a value no report holds (oue.noise_sd, scaled to all users as the
    estimates are) clipped at 0 in every value of every kind, against the clipped estimates
    (``counts``: the number of reports of each kind, public to the collector)."""
    noise = total = 0.0
    for kind, e in est.items():
        reports = int(counts[kind])
        clipped = np.maximum(e, 0.0)
        if reports:
            noise += noise_mass(clipped, oue.noise_sd(reports, epsilon) * users * slots[kind] / reports, law="normal")
        total += float(clipped.sum())
    return share(noise, total)


class LDPTrace(Synthesizer):
    """LDPTrace: users' local OUE reports on a public grid, a first-order model, walks (module docstring).

    Parameters
    ----------
    epsilon : float
        Local privacy budget per trajectory, against the collector as well: the length report and
        the one mobility report together.
    grid_size : int
        N, cells a side of the grid over the space's box (the authors' default 6).
    length_share : float
        Share of epsilon for the length report (the authors' 0.1); the rest goes to the one
        mobility report (the authors split it over L + 1).
    length_quantile : float
        The quantile of the estimated length distribution taken as the maximum length L (the
        authors' ``--max_len`` 0.9).
    time_share : float
        Share of the trajectories (not of the budget: times.py says why) that report their trip's
        week, weekday, hour, speed or duration (times.GROUPS' shares of them) instead of its mobility,
        at the same budget; 0: no times.
    max_traces_per_user : int
        Trajectories (reports) one user id may contribute, the first ones kept: the per-person
        epsilon is this many times the per-trajectory one (privacy/ledger.py). 1, as ``prepare`` makes them.
    """

    name = "ldptrace"
    checks = {"epsilon": check_epsilon, "grid_size": whole(1), "length_share": user.check_length_share,
              "length_quantile": in_range(0.0, 1.0, open_low=True), "time_share": check_share,
              "max_traces_per_user": check_count,
              "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, domain=True)
    several_traces = False
    partitions = True

    def __init__(self, epsilon: float = 1.0, grid_size: int = 6, length_share: float = 0.1,
                 length_quantile: float = 0.9, time_share: float = TIME_SHARE, max_traces_per_user: int = 1,
                 seed: int = 0):
        self.epsilon = epsilon
        self.grid_size = grid_size
        self.length_share = length_share
        self.length_quantile = length_quantile
        self.time_share = time_share
        self.max_traces_per_user = max_traces_per_user
        self.seed = seed

    # -- fit: the two rounds of reports -----------------------------------------------------------
    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "LDPTrace":
        eps, n = check_epsilon(self.epsilon), int(self.grid_size)
        for report, each in zip(("the length report", "the mobility report"), user.budgets(eps, self.length_share)):
            oue.check_report_epsilon(each, f"`epsilon` {eps:g} gives {report} (`length_share` {self.length_share:g}), "
                                           "whose epsilon")
        self._remember_frame(train)
        train = self._bounded_traces(train, self.max_traces_per_user)
        xy = planar(self.space_)
        self.grid_ = TwoLevelGrid(public_box(*xy), n, np.ones(n * n, np.int64))
        # (cells, offsets) of every chunk (data/chunks.py)
        cells = chunks(train).map(markov.points, xy).map(markov.states_of, self.grid_)
        # the number of reports is public to the collector (module docstring, "Size")
        self.training_ = {"users": int(train.n_traces)}
        users, d_len = int(train.n_traces), user.length_domain(n)
        eps_length, _ = user.budgets(eps, self.length_share)
        ones = oue.tally(cells.total(spread(collector.length_counts), n), users, eps_length)
        oue.record(self.ledger_, eps_length, domain=f"the lengths 1 .. {d_len}",
                   saw=f"each trajectory's length in cells of the {n} x {n} grid, clipped at {d_len}: one report")
        estimate = oue.estimate(ones, users, eps_length)
        self.max_len_ = collector.max_length(estimate, users, float(self.length_quantile))
        self.lengths_ = collector.distribution(collector.unimodal(estimate, self.max_len_))
        share = check_share(self.time_share, "time_share")
        self.trip_times_ = None
        moving = np.arange(users)
        if share > 0 and train.has_times and train.n_events:
            lay = times.layout_of(train)
            groups = times.assign(users, share, int(self.seed), times.domains(lay, train.time))
            moving = groups.pop("mobility")
            if moving.size == 0 or not any(g.size for g in groups.values()):
                raise InputError(f"`time_share` {share:g} of {users} trajectories leaves none to report "
                                 f"{'their mobility' if moving.size == 0 else 'their times'}")
            self.trip_times_ = times.fit_local_times(train, groups, (1 - self.length_share) * eps, int(self.seed), lay)
            self.ledger_.note_uncovered(trip_times.PERIOD_FROM_DATA)
        self._mobility(cells, moving, eps, users)
        self._locations(xy)
        return self

    def _mobility(self, cells, moving: np.ndarray, eps: float, everyone: int) -> None:
        """Round 2: every user who reports their mobility (the trajectories ``moving`` of the chunks
        ``cells`` of (cells, offsets)) draws one of its L + 1 slots (start, L - 1
        moves, end: user.slots, from the seed's stream; the slot depends on no data) and sends that
        slot's value in one OUE report at the whole mobility budget; the tallies per kind
        (privacy/oue.tally), their estimates scaled to all users (collector.scaled), the model.
        The ledger entry covers the other branch too: ``everyone`` less these users report their times."""
        n, L, users = int(self.grid_size), self.max_len_, moving.size
        _, each = user.budgets(eps, self.length_share)
        slot = user.slots(users, L, np.random.default_rng(np.random.SeedSequence(int(self.seed), spawn_key=(SLOTS,))))
        held, reports = cells.total(collector.report_counts, n, L, own=cells.own_rows(moving, slot))
        domain, share = user.domains(n), user.kinds(L)
        est = {kind: collector.scaled(collector.estimates(held[kind], reports[kind], each), share[kind],
                                      reports[kind], users) for kind in held}
        valid = user.valid_moves(n)
        oue.record(self.ledger_, each, domain=f"the {n * n} cells of the {n} x {n} grid and its "
                                              f"{valid.size} moves between touching cells",
                   saw=f"one of each trajectory's L + 1 = {L + 1} values, drawn uniformly without looking at the "
                       f"data: its start cell, one of its {L - 1} moves (a cell and one of 8 directions; no value "
                       f"where it has fewer) or its end cell, of its first L = {L} cells on the {n} x {n} grid: "
                       f"one report" + (
                           "" if users == everyone else
                           f"; or, for {everyone - users} of the {everyone} trajectories drawn before any "
                           f"report (public, from the seed), one report of the same budget in all: the "
                           f"week, the weekday or the hour of its start, its speed by its path's length or its "
                           f"duration (synth/ldptrace/times.py)"))
        self.noise_parts_ = {"where trips go": mobility_noise(est, reports, share, users, each)}
        moves = np.zeros(8 * n * n)
        moves[valid] = est["moves"]
        self.start_, self.rows_ = collector.mobility(est["start"], moves, est["end"], n)
        open = self._open()
        if open is not None:
            self.start_, self.rows_ = collector.closed(self.start_, self.rows_, open, n)

    def _open(self) -> np.ndarray | None:
        """Bool per cell: whether a location the public domain allows lies in it (None without one)."""
        return open_states(self.grid_, planar(self.space_), self._allowed())

    def _locations(self, xy) -> None:
        self.loc_indptr_, self.loc_indices_ = locations_of_states(self.grid_, xy, self._allowed())

    def matrix(self) -> np.ndarray:
        """The fitted first-order model as one (N^2 + 1, N^2 + 1) Markov matrix with the virtual start
        as its last row and the virtual end as its last column (collector.matrix)."""
        self.check_is_fitted()
        return collector.matrix(self.start_, self.rows_, int(self.grid_size))

    # -- sample -----------------------------------------------------------------------------------
    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trajectories (default: as many as the reports received, public in the local
        model), each its own virtual user with ``hour`` -1, on instants 0, 1, ... (at most one day's)."""
        m = self._size(n)
        cap = days * self.time_.instants_per_day
        loc, length = _walks(self.start_, self.rows_, np.cumsum(self.lengths_), np.array(user.DIRECTIONS, np.int64),
                             int(self.grid_size), self.loc_indptr_, self.loc_indices_,
                             int(m), int(cap), END_BASE, END_STEP, int(seed) % (2 ** 32), int(self.min_cells_),
                             *open_edges(*self.grid_.neighbours(), self._open()))
        return self._untimed(loc, length, seed)

    def summary(self) -> dict:
        return {"epsilon": float(self.epsilon), "grid_size": int(self.grid_size), "max_len": int(self.max_len_),
                "reports_per_trajectory": 2}

    def _fitted_scalars(self) -> dict:
        return {"max_len": int(self.max_len_)}

    def _arrays(self):
        g = self.grid_
        return {"box": np.asarray(g.box), "start": self.start_, "rows": self.rows_, "lengths": self.lengths_,
                "loc_indptr": self.loc_indptr_, "loc_indices": self.loc_indices_}

    def _restore(self, arrays, fitted):
        missing = [k for k in ("box", "start", "rows", "lengths", "loc_indptr", "loc_indices") if k not in arrays]
        if missing or "max_len" not in fitted:
            raise InputError(f"the saved LDPTrace model has no {', '.join(map(repr, missing or ['max_len']))}")
        n = int(self.grid_size)
        self.grid_ = TwoLevelGrid(tuple(float(v) for v in arrays["box"]), n, np.ones(n * n, np.int64))
        for key in ("start", "rows", "lengths", "loc_indptr", "loc_indices"):
            setattr(self, key + "_", arrays[key])
        self.max_len_ = int(fitted["max_len"])
        if self.rows_.shape != (n * n, 9) or self.start_.size != n * n or \
                self.loc_indices_.max(initial=0) >= self.space_.n_locations:
            raise InputError("the saved LDPTrace arrays do not match its grid or space")


@njit(cache=True)
def _pick(cdf, u):
    """Index of the first entry of the cumulative ``cdf`` above u x its last (a draw in proportion)."""
    target = u * cdf[-1]
    for i in range(cdf.size):
        if target < cdf[i]:
            return i
    return cdf.size - 1


@njit(cache=True)
def _walk(start_cdf, rows, length_cdf, steps, n, cap, end_base, end_step, out):
    """One synthetic trajectory's cells into ``out``; returns how many (step 5 of the module docstring)."""
    a = _pick(start_cdf, np.random.random())
    length = min(_pick(length_cdf, np.random.random()) + 1, cap)
    out[0] = a
    k = 1
    weights = np.empty(9)
    while k < length:
        r, c = a // n, a % n
        for d in range(8):
            rr, cc = r + steps[d, 0], c + steps[d, 1]
            weights[d] = rows[a, d] if 0 <= rr < n and 0 <= cc < n else 0.0
        weights[8] = rows[a, 8] * min(1.0, end_base + end_step * (k - 1))
        total = weights.sum()
        if total < 1e-5:
            break
        target = np.random.random() * total
        j = 8
        acc = 0.0
        for i in range(9):
            acc += weights[i]
            if target < acc:
                j = i
                break
        if j == 8:
            break
        a = (r + steps[j, 0]) * n + c + steps[j, 1]
        out[k] = a
        k += 1
    return k


@njit(cache=True)
def _walks(start, rows, length_cdf, steps, n, loc_indptr, loc_indices, m, cap, end_base, end_step, seed,
           min_cells, indptr, indices):
    """``m`` walks as locations (concatenated) and their lengths; consecutive repeats of a location
    (two cells whose nearest location is the same) merged; a walk short of two locations (when
    ``cap`` allows two events: the authors' trajectory_grid2points) or of ``min_cells`` (the
    training set's public minimum) is completed as synth/min_cells.py says (``indptr``,
    ``indices``: the cells each touches)."""
    np.random.seed(seed)
    least = max(min_cells, 2 if cap >= 2 else 1)
    start_cdf = np.cumsum(start)
    cells = np.empty(max(cap, 1), np.int64)
    out = np.empty(m * max(cap, least), np.int64)
    length = np.zeros(m, np.int64)
    used = 0
    for q in range(m):
        k = _walk(start_cdf, rows, length_cdf, steps, n, cap, end_base, end_step, cells)
        used, length[q] = walk_locations(out, used, cells[:k], loc_indptr, loc_indices, least, indptr, indices)
    return out[:used], length
