"""AdaTrace (Gursoy, Liu, Truex, Yu and Wei, "Utility-Aware Synthesis of Differentially Private
and Attack-Resilient Location Traces", ACM CCS 2018), after the authors' Java code
(git-disl/AdaTrace: Main.Synthesize_Trajectories, Cell, Grid, GridTrajectory, TripDistribution,
LengthDistribution; REFERENCE.md). The unit is one trajectory (a trip); neighbouring inputs differ
by one trajectory added or removed. The paper's text was not at hand for this implementation (it is
not among the project's papers): its section numbers below are those the authors' code cites
(§5.1 synthesis, §5.2 attacks), §4 standing for the model the synthesis draws from. The steps, in
the order the data flows:

1. Size: a DP count of the training trajectories (privacy/count.py), ``size_share`` of epsilon,
   sizes the output by default (the authors' code makes exactly as many as it read: not DP).
2. Budget: the rest is split 0.05 / 0.35 / 0.50 / 0.10 between the grid, the Markov mobility
   model, the trip distribution and the route-length distribution (the authors'
   ``budgetDistnWeights``; the paper's §4 names the four budgets, and the code's split is the
   default here).
3. Density-aware grid (§4, synopsis.level2_sizes): a 6 x 6 first level over the public box of the
   space's locations (the authors take the data's own bounding box: not DP); each trajectory's
   interpolated level-1 cell sequence adds 1 / l to each of its l cells (sensitivity 1), Laplace
   noise; level-1 cell i is split into M_i x M_i cells by the adaptive grid's rule the paper
   builds on (Qardaji, Yang and Li, ICDE 2013): M_i = ceil(sqrt(d_i epsilon / c)), finer as
   epsilon grows, with epsilon the whole budget of the four steps (as the authors' ``EpsLeft``)
   and c = 10,000 measured on the 200 cabs (synopsis.ADAPTIVE_CONSTANT). The authors' live line,
   M_i = ceil(5 d_i / (|D| epsilon)) (Cell.java), coarsens as epsilon grows: with level-2 states
   it made AdaTrace at epsilon 2 and 4 worse than at 0.5 (62 states at 0.5, 36 at 2; trip error
   0.036 against 0.074), so it stays in ``variant="code"`` only; their commented line above it
   has the adaptive form, ceil(sqrt(d_i epsilon / 200)). |D|, which the authors read exactly, is
   the DP count of step 1 (or, with size_share = 0, the sum of the noisy densities, to which each
   trajectory adds 1: post-processing). Where the paper and the code part: the code builds its
   Markov model, trips and lengths on the 6 x 6 cells only and uses the level-2 cells (with exact,
   un-noised counts of the trajectories that visit each) only to place points; the paper's
   synopsis is on the cells of the density-aware grid, which is the default here: the states are
   the level-2 cells. ``variant="code"`` takes the authors' level-1 states, their live split line,
   and their placement by level-2 density (step 8), with the level-2 densities noised: the grid's
   budget is halved between level 1 and level 2 (each trajectory adds 1 / l to each of its l
   interpolated level-2 cells, sensitivity 1; a choice, where their code reads exact counts).
4. States (privtrace.markov.states): each trajectory's locations, interpolated so that every move
   goes to a touching cell (the paper's and code's interpolation; Grid.giveInterpolatedRoute),
   consecutive repeats merged.
5. Markov mobility model (§4): first-order moves between touching states, each trajectory of l
   states adding 1 / (l - 1) to each move (sensitivity 1), Laplace noise on every move between
   touching states (the code noises all pairs and then zeroes the non-touching ones, the same
   release); negatives become 0 and each row is normalised (Main.extractMarkovProbs).
6. Trip distribution (§4, TripDistribution): the (start state, end state) count of every pair,
   Laplace noise, negatives 0, rounded (as the code does). The paper's version splits this budget
   between both grid levels and makes them consistent by least squares; the authors' code comment
   says the single-level one was better on two datasets and uses it: so is it here, on the states.
7. Route-length distribution (§4, LengthDistribution): a trajectory's extra length is its number
   of states beyond the shortest route's between its start and end, clipped at ``max_extra``.
   The code fits each pair's extra lengths to a uniform, geometric or Poisson law (the one of
   least EMD to the exact histogram) of a mean from a noisy sum with the pair's exact maximum as
   sensitivity and its exact count: not DP. Here (choices): half the length budget noises the
   pooled histogram of extra lengths (each trajectory one bucket, sensitivity 1), which picks the
   family once (least EMD, synopsis.choose_family); the other half noises each pair's sum of
   clipped extras (sensitivity ``max_extra``; each trajectory in one pair), and a pair's mean is
   that sum over the pair's noisy trip count (step 6, post-processing), shrunk towards the pooled
   mean by 1 / epsilon pseudo-trips.
8. Synthesis (§5.1; Main.generateSyntheticTrajs): a (start, end) pair from the trip
   distribution, a length = the shortest route's states + an extra from the pair's law (at most
   ``max_length`` states), and the states in between by a Markov bridge: state i drawn among the
   touching states b of state i - 1 in proportion to P[a, b] P^(L-1-i)[b, end] (the code
   precomputes P^1 .. P^100; here the columns P^k[:, end] are computed per end state from the
   sparse P, the same numbers). Each state becomes a location of the space inside its cell, drawn
   uniformly (the nearest when none lies inside), as PrivTrace does. In ``variant="code"`` a
   level-1 state first draws one of its level-2 cells by noisy density (Cell.sampleRandomPoint;
   their line 84-85 adds a share of the whole level-1 cell's width to the level-2 cell's corner,
   so that 6.8 % of their points on the cabs leave the box: not copied), then a location in it.
9. Attack resilience (§5.2, defences.py), off by default as in the authors' ``main``: with
   ``defences=True`` the model keeps what the three defences read of the real trajectories, and
   its ledger says that epsilon no longer covers the output.

A public domain (data/domain.py) closes the states that hold none of its locations, as in PrivTrace
(masking: the Markov model loses every move into them, the trip distribution every pair that starts
or ends in one, after the noise; the shortest routes are counted on the open states), and a state's
locations are the allowed ones inside it; in ``variant="code"`` the level-2 cells that hold none get
no weight in placing points.

The paper's AdaTrace releases no time; here the trip methods' time model (synth/trip_times.py,
``time_share`` of epsilon) gives each synthetic trip a start and its steps durations. With
``time_share=0`` its events sit on instants 0, 1, ... (steps, not times) and its ``hour`` is -1.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...metrics.standard import planar
from ...privacy.laplace import laplace
from ...data.chunks import Partitions, chunks
from ...privacy.noise import noise_mass, share
from ...data.traces import TraceSet
from ...core.validation import check_count, check_epsilon, check_flag, check_seed, check_share, one_of
from ..base import FOOTPRINT_SHARE, SIZE_SHARE, TIME_SHARE, Synthesizer, Tags
from ..privtrace import markov
from ..privtrace.grid import TwoLevelGrid, locations_of_states, open_edges, open_states, public_box
from ..privtrace.model import check_split
from . import defences as defence
from . import synopsis

#: the authors' split of epsilon: grid, Markov model, trip distribution, route lengths
SPLIT = (0.05, 0.35, 0.50, 0.10)
#: "paper": level-2 states, the adaptive split; "code": the authors' level-1 states and live split line
VARIANTS = ("paper", "code")
#: what the defences make epsilon no longer cover (the ledger's ``uncovered``)
DEFENCES_UNCOVERED = ("adatrace's attack-resilience defences (CCS 2018 §5.2) read the real training trajectories "
                      "after the noise (the densest cells, the real transition frequencies, the points near the "
                      "sniffed cell, the real starts and ends near outliers) to choose which synthetic trips to keep")


class AdaTrace(Synthesizer):
    """AdaTrace (Gursoy et al., CCS 2018): a DP synopsis of trips on a density-aware grid (a Markov
    model, a trip distribution, route lengths) and trips drawn from it by Markov bridges; the
    module docstring gives the steps, what follows the paper and what the authors' code.

    Parameters
    ----------
    epsilon : float
        Privacy budget per trajectory (add or remove one), the DP count of trajectories included.
    split : tuple of 4 floats
        Shares of the rest for the grid, the Markov model, the trip distribution and the lengths.
    level1 : int
        Cells a side of the first level of the grid (the authors' 6).
    max_length : int
        States per synthetic trajectory at most (the authors precompute 100 steps).
    max_extra : int
        Clip of a trajectory's extra length (states beyond the shortest route), the sensitivity of
        each trip pair's noisy sum of extra lengths, and the largest extra sampled (the authors
        cap at 1.3 x each pair's exact maximum, which is not DP; 10 lies above 99.9 % of the
        200 cabs' trips at 500 m).
    defences : bool
        Apply the three attack-resilience defences of §5.2 when sampling (Bayesian inference,
        partial sniffing, outlier leakage). They read the real trajectories, so the model keeps
        them and epsilon no longer covers the output (the ledger says so).
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
    variant : str
        ``"paper"``: the paper's synopsis on the density-aware grid's level-2 cells, split by the
        adaptive grid's rule, finer as epsilon grows (module docstring, step 3). ``"code"``: the
        authors' code, whose Markov model, trips and lengths are on the 6 x 6 level-1 cells, split
        by their live line into level-2 cells that only place points, by density (noised here, half
        the grid's budget; their code reads exact counts).
    """

    name = "adatrace"
    checks = {"epsilon": check_epsilon, "split": lambda v, name="split": check_split(v, name, 4),
              "level1": check_count, "max_length": check_count, "max_extra": check_count,
              "defences": check_flag, "size_share": check_share, "time_share": check_share, "footprint_share": check_share, "max_traces_per_user": check_count,
              "variant": one_of(*VARIANTS), "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, domain=True)
    several_traces = False
    partitions = True

    def __init__(self, epsilon: float = 1.0, split: tuple = SPLIT, level1: int = synopsis.LEVEL1,
                 max_length: int = 100, max_extra: int = 10, defences: bool = False, size_share: float = SIZE_SHARE, time_share: float = TIME_SHARE,
                 footprint_share: float = FOOTPRINT_SHARE,
                 max_traces_per_user: int = 1, variant: str = "paper", seed: int = 0):
        self.epsilon = epsilon
        self.split = tuple(split)
        self.level1 = level1
        self.max_length = max_length
        self.max_extra = max_extra
        self.defences = defences
        self.size_share = size_share
        self.time_share = time_share
        self.footprint_share = footprint_share
        self.max_traces_per_user = max_traces_per_user
        self.variant = variant
        self.seed = seed

    # -- fit ---------------------------------------------------------------------------------------
    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "AdaTrace":
        eps, split = check_epsilon(self.epsilon), check_split(self.split, "split", 4)
        k, cap = check_count(self.level1, "level1"), check_count(self.max_extra, "max_extra")
        self._remember_frame(train)
        if check_flag(self.defences, "defences") and isinstance(chunks(train), Partitions):
            raise InputError("adatrace's defences read the real trajectories when sampling: fit it on a TraceSet "
                             "in memory, not a partitioned one, or without them")
        train = self._bounded_traces(train, self.max_traces_per_user)
        eps = self._count_units(train.n_traces, eps, self.size_share, "trace")
        eps = self._fit_times(train, check_epsilon(self.epsilon), self.time_share, eps)
        eps = self._fit_footprint(train, check_epsilon(self.epsilon), self.footprint_share, eps)
        n_hat = self.training_.get("dp_count")
        xy = planar(self.space_)
        points = chunks(train).map(markov.points, xy)          # (x, y, offsets): data/chunks.py
        box = public_box(*xy)
        # step 3: level-1 densities of the interpolated cell sequences, then the split
        paper = one_of(*VARIANTS)(self.variant, "variant") == "paper"
        grid_eps = split[0] * eps if paper else split[0] * eps / 2    # the code variant: half for level 2
        coarse = TwoLevelGrid(box, k, np.ones(k * k, np.int64))
        dens = self._noise(points.total(synopsis.cell_density, coarse), grid_eps,
                           "level-1 densities of the interpolated cell sequences, 1 / l per visit")
        size = float(n_hat) if n_hat is not None else max(float(dens.sum()), 1.0)
        sizes = synopsis.level2_sizes(dens, size, eps, "adaptive" if paper else "authors")
        # the states: the level-2 cells (the paper's synopsis) or the level-1 cells (the authors' code)
        self.grid_ = TwoLevelGrid(box, k, sizes if paper else np.ones_like(sizes))
        self.sub_m_, self.sub_weights_, self.fine_ = np.ones(0, np.int64), np.zeros(0), None
        allowed = self._allowed()
        if not paper:   # the authors' level-2 cells place a state's points (step 8)
            self.sub_m_ = sizes
            fine = TwoLevelGrid(box, k, sizes)
            self.sub_weights_ = np.maximum(self._noise(
                points.total(synopsis.cell_density, fine), split[0] * eps / 2,
                "level-2 densities of the interpolated cell sequences, 1 / l per visit (where points go)"), 0.0)
            fine_open = open_states(fine, xy, allowed)
            if fine_open is not None:
                self.sub_weights_ = self.sub_weights_ * fine_open
        # step 4: states; step 5: the Markov model (its counts, the trips' and the lengths' in one pass; a
        # public domain closes the states without its locations)
        seq = points.map(markov.states_of, self.grid_)         # (states, offsets)
        open = open_states(self.grid_, xy, allowed)
        self.indptr_, self.indices_ = open_edges(*self.grid_.neighbours(), open)
        n = self.grid_.n_states
        self.hops_ = synopsis.hops(self.indptr_, self.indices_)
        moves, trip_counts, extra_counts, extra_sums = seq.total(synopsis.synopsis_counts, self.indptr_,
                                                                 self.indices_, self.hops_, cap)
        noisy = self._noise(moves, split[1] * eps,
                            "moves between touching states, 1 / (l - 1) per move of a trajectory of l states")
        self.prob_ = synopsis.row_normalized(np.maximum(noisy, 0.0), self.indptr_)
        # step 6: the trip distribution
        trips = self._noise(trip_counts, split[2] * eps,
                            "(start state, end state) of every trajectory, 1 per trajectory")
        self.trips_ = np.round(np.maximum(trips, 0.0))
        if open is not None:
            self.trips_ = (self.trips_.reshape(n, n) * open[:, None] * open[None, :]).ravel()
        # the share of noise in the trip distribution (rounded: kept from 0.5; the pairs of open states) and the
        # moves (clipped at 0)
        moved = np.maximum(noisy, 0.0)
        pairs = np.ones(self.trips_.size, bool) if open is None else (open[:, None] & open[None, :]).ravel()
        self.noise_parts_ = {"where trips go": share(
            noise_mass(self.trips_[pairs], 1.0 / (split[2] * eps), 0.5) + noise_mass(moved, 1.0 / (split[1] * eps)),
            self.trips_.sum() + moved.sum())}
        # step 7: the route lengths
        half = split[3] * eps / 2
        hist = self._noise(extra_counts.astype(np.float64), half,
                           f"extra lengths (states beyond the shortest route, clipped at {cap}), 1 per trajectory")
        sums = laplace(extra_sums, half, float(cap), ledger=self.ledger_,
                       unit="trace", saw=f"per (start, end) pair the sum of its trajectories' extra lengths, "
                                         f"each clipped at {cap}")
        self.family_, pooled = synopsis.choose_family(hist)
        self.means_ = synopsis.pair_means(sums, self.trips_, pooled, 1.0 / half, cap)
        self.loc_indptr_, self.loc_indices_ = locations_of_states(self.grid_, xy, allowed)
        # step 9: what the defences read of the real trajectories (not covered by epsilon)
        self.real_ = {}
        if check_flag(self.defences, "defences"):
            self.ledger_.note_uncovered(DEFENCES_UNCOVERED)
            self.real_ = defence.real_view(*seq.value, train.loc, train.offsets, self.indptr_, self.indices_)
        return self

    def _noise(self, values: np.ndarray, epsilon: float, saw: str) -> np.ndarray:
        return laplace(values, epsilon, 1.0, ledger=self.ledger_, unit="trace", saw=saw)

    # -- sample ------------------------------------------------------------------------------------
    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trajectories (default: the DP count), each its own virtual user with
        ``hour`` -1, on instants 0, 1, ... (at most ``max_length`` and one day's instants)."""
        m = self._size(n)
        rng = np.random.default_rng(seed)
        cap = min(check_count(self.max_length, "max_length"), days * self.time_.instants_per_day)
        if self.real_:
            loc, length, self.defence_report_ = defence.resilient(self, m, rng, cap)
        else:
            loc, length = self.place(*self.routes(m, rng, cap), rng)
        return self._untimed(loc, length, seed)

    def place(self, states: np.ndarray, offsets: np.ndarray, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
        """Routes of states as locations of the space (step 8): (locations, lengths). The code
        variant first draws each state's level-2 cell by its noisy density, as the authors'
        Cell.sampleRandomPoint does, then a location inside that cell."""
        seed = int(rng.integers(2 ** 32))
        if not self.sub_weights_.size:
            return synopsis.to_locations(states, offsets, self.loc_indptr_, self.loc_indices_, seed,
                                         self.min_cells_, self.indptr_, self.indices_)
        if self.fine_ is None:
            fine, xy, allowed = TwoLevelGrid(self.grid_.box, self.grid_.k, self.sub_m_), planar(self.space_), self._allowed()
            self.fine_ = (fine.offsets, *locations_of_states(fine, xy, allowed),
                          *open_edges(*fine.neighbours(), open_states(fine, xy, allowed)))
        first, loc_indptr, loc_indices, indptr, indices = self.fine_
        cells = synopsis.subcells(states, first, self.sub_weights_, rng)
        return synopsis.to_locations(cells, offsets, loc_indptr, loc_indices, seed, self.min_cells_, indptr, indices)

    def routes(self, m: int, rng: np.random.Generator, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """``m`` routes of states (concatenated, offsets): (start, end) from the trip distribution,
        the shortest route's states plus an extra from the pair's length law, at most ``cap``
        states, and a Markov bridge between (step 8)."""
        n = self.grid_.n_states
        weights = self.trips_ if self.trips_.sum() > 0 else self._any_pair()   # nothing left: any (open) pair
        pair = rng.choice(n * n, size=m, p=weights / weights.sum())
        start, end = pair // n, pair % n
        shortest = synopsis.shortest(self.hops_, start, end)
        extra = synopsis.sample_extras(self.family_, self.means_[pair], check_count(self.max_extra, "max_extra"), rng)
        length = np.maximum(np.minimum(shortest + extra, cap), np.minimum(shortest, cap))
        return synopsis.bridges(self.indptr_, self.indices_, self.prob_, self.hops_, start, end, length,
                                int(rng.integers(2 ** 32)))

    def _any_pair(self) -> np.ndarray:
        """Weights of every (start, end) pair alike, where both states are open (hold a location)."""
        n = self.grid_.n_states
        holds = np.diff(self.indptr_) > 0 if self._allowed() is not None else np.ones(n, bool)
        if not holds.any():
            holds[:] = True
        return (holds[:, None] & holds[None, :]).ravel().astype(np.float64)

    def describe_sample(self, synthetic: TraceSet) -> list[str]:
        report = getattr(self, "defence_report_", None)
        return defence.describe(report) if report else []

    def summary(self) -> dict:
        g = self.grid_
        return {"epsilon": float(self.epsilon), "split": list(check_split(self.split, "split", 4)),
                "level1": int(g.k), "states": int(g.n_states), "split_cells": int((g.m > 1).sum() + (self.sub_m_ > 1).sum()),
                "length_family": synopsis.FAMILIES[self.family_], "defences": bool(self.real_)}

    # -- persistence -------------------------------------------------------------------------------
    _SAVED = ("m", "indptr", "indices", "prob", "trips", "hops", "means", "loc_indptr", "loc_indices")

    def _arrays(self):
        g = self.grid_
        out = {"box": np.asarray(g.box), "k": np.array([g.k]), "family": np.array([self.family_]),
               "m": g.m, "indptr": self.indptr_, "indices": self.indices_, "prob": self.prob_, "trips": self.trips_,
               "hops": self.hops_, "means": self.means_, "loc_indptr": self.loc_indptr_,
               "loc_indices": self.loc_indices_, "sub_m": self.sub_m_, "sub_weights": self.sub_weights_}
        out.update({f"real_{key}": value for key, value in self.real_.items()})
        return out

    def _restore(self, arrays, fitted):
        missing = [key for key in ("box", "k", "family", *self._SAVED) if key not in arrays]
        if missing:
            raise InputError(f"the saved AdaTrace model has no {', '.join(map(repr, missing))}")
        self.grid_ = TwoLevelGrid(tuple(float(v) for v in arrays["box"]), int(arrays["k"][0]), arrays["m"])
        self.family_ = int(arrays["family"][0])
        for key in self._SAVED[1:]:
            setattr(self, key + "_", arrays[key])
        self.real_ = {key[5:]: value for key, value in arrays.items() if key.startswith("real_")}
        # models saved before the code variant placed points by level 2 have none: uniform placement
        self.sub_m_ = arrays.get("sub_m", np.ones(0, np.int64))
        self.sub_weights_ = arrays.get("sub_weights", np.zeros(0))
        self.fine_ = None
        n = self.grid_.n_states
        if (self.trips_.size != n * n or self.hops_.shape != (n, n)
                or self.loc_indices_.max(initial=0) >= self.space_.n_locations):
            raise InputError("the saved AdaTrace arrays do not match its grid or space")
