"""Bayesian inference on a sensitive zone (AdaTrace, Gursoy et al., CCS 2018, §3 and §5.2, attack 1;
the authors' Main.evaluateBayesianAttack runs it as a defence).

The adversary's prior is the trip (start cell, end cell) distribution and the transition (move)
distribution of the reference (test) set; the posterior is the same distributions over the
synthetic trajectories that pass through a sensitive zone. The zone is one cell of a uniform
g x g grid over the public space, the 10th densest by reference trajectories through it (the
paper's default; g = 6 as sniffing.py says why). A transition is a move between two different
cells of a trajectory's cell sequence (consecutive repeats merged, as AdaTrace's grid
trajectories are). The paper's measure is the Jensen-Shannon divergence (natural log, as their
Evaluation.calcJSD) between prior and posterior, with the defence's threshold vartheta = 0.1:
``bayes_trip_jsd`` and ``bayes_markov_jsd``.

Prior against posterior moves for any release whose trips through the zone differ from all trips,
and a random set's do most (its trips go anywhere): that divergence says how far the posterior
moved, not whether it moved towards the truth. The headline, ``bayes_gain``, asks how much closer
the release brings the adversary to the truth about the people who went through the zone (the
training trajectories through it, whose privacy the attack is about):

    gain = mean over {trip, transition} of JSD(prior, truth) - JSD(posterior, truth).

The training set released as is gains the most (its posterior is the truth); a release that
teaches nothing gains 0 or less (it misleads). This is the paper's question, what the zone's
visitors reveal, and not membership: a release that generalises well gains as well, and
differential privacy does not bound it (it is a statistic of many people); the paper's defence
does, by regenerating the trips through the zone until both divergences are below vartheta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.groups import Figure, GroupResult, Metric, MetricGroup, count, row
from ..metrics.standard import jsd
from ..data.traces import ranges
from .sniffing import GRID
from .trip_geometry import (Trajectories, applies, grid_cells, nth_densest, public_box, real_sets,
                            released, trips_through)

#: the paper's vartheta: a defence fails when either divergence exceeds it
THRESHOLD = 0.1


@dataclass(frozen=True)
class Bayesian:
    gain: float | None
    trip_jsd: float | None
    markov_jsd: float | None
    zone: int
    posterior_trips: int


@dataclass(frozen=True)
class Zone:
    """The zone, the prior, and the truth: the training trajectories through the zone."""

    zone: int
    prior: tuple[np.ndarray, np.ndarray]
    truth: tuple[np.ndarray, np.ndarray]
    visitors: int


def distributions(t: Trajectories, cells: np.ndarray, n_cells: int, rows=None) -> tuple[np.ndarray, np.ndarray]:
    """(trip, transition) counts of the trajectories ``rows`` of ``t`` (all when None)."""
    offsets = t.offsets
    if rows is not None:
        rows = np.asarray(rows, np.int64)
        lengths = offsets[rows + 1] - offsets[rows]
        cells, offsets = cells[ranges(offsets[rows], lengths)], np.r_[0, np.cumsum(lengths)].astype(np.int64)
    n = offsets.size - 1
    if n == 0:
        return np.zeros(n_cells * n_cells), np.zeros(n_cells * n_cells)
    trip = np.bincount(cells[offsets[:-1]] * n_cells + cells[offsets[1:] - 1], minlength=n_cells * n_cells)
    owner = np.repeat(np.arange(n), np.diff(offsets))
    move = (owner[1:] == owner[:-1]) & (cells[1:] != cells[:-1])
    markov = np.bincount(cells[:-1][move] * n_cells + cells[1:][move], minlength=n_cells * n_cells)
    return trip.astype(np.float64), markov.astype(np.float64)


def through(cells: np.ndarray, offsets: np.ndarray, zone: int) -> np.ndarray:
    """The rows of the trajectories with a point in ``zone``."""
    owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    return np.unique(owner[cells == zone])


def choose_zone(train: Trajectories, test: Trajectories, box, grid: int = 6, rank: int = 10) -> Zone:
    """The zone, the prior (the test set's distributions) and the truth (the training trajectories
    through the zone)."""
    g2 = grid * grid
    test_cells, train_cells = grid_cells(test.x, test.y, box, grid), grid_cells(train.x, train.y, box, grid)
    zone = nth_densest(trips_through(test_cells, test.offsets, g2), rank)
    visitors = through(train_cells, train.offsets, zone)
    return Zone(zone, distributions(test, test_cells, g2), distributions(train, train_cells, g2, visitors),
                int(visitors.size))


def bayesian(zone: Zone, synthetic: Trajectories, box, grid: int = 6) -> Bayesian:
    """The attack against ``synthetic`` (module docstring); without a synthetic trajectory through
    the zone the adversary learns nothing: gain 0, no divergence."""
    g2 = grid * grid
    cells = grid_cells(synthetic.x, synthetic.y, box, grid)
    rows = through(cells, synthetic.offsets, zone.zone)
    if rows.size == 0:
        return Bayesian(0.0 if zone.visitors else None, None, None, zone.zone, 0)
    post = distributions(synthetic, cells, g2, rows)
    divergence = [jsd(p, q) if p.sum() and q.sum() else None for p, q in zip(zone.prior, post)]
    gains = [jsd(p, t) - jsd(q, t) for p, q, t in zip(zone.prior, post, zone.truth) if p.sum() and q.sum() and t.sum()]
    return Bayesian(float(np.mean(gains)) if gains else None, divergence[0], divergence[1], zone.zone, int(rows.size))


# -- the metric group ---------------------------------------------------------------------------------------

def _compute(ctx) -> GroupResult:
    box = public_box(ctx.test.space)
    grid, rank = ctx.option("attack_grid", 6), ctx.option("bayes_rank", 10)
    zone = ctx.reference(("bayesian", grid, rank), lambda: choose_zone(*real_sets(ctx), box, grid, rank))
    result = bayesian(zone, released(ctx), box, grid)
    base = ctx.reference(("bayesian", grid, rank, "training"), lambda: bayesian(zone, real_sets(ctx)[0], box, grid))
    metrics = {"bayes_gain": row(result.gain, base.gain, 0.0),
               "bayes_trip_jsd": row(result.trip_jsd, base.trip_jsd, None),
               "bayes_markov_jsd": row(result.markov_jsd, base.markov_jsd, None)}
    details = {"zone": zone.zone, "visitors": zone.visitors, "posterior_trips": result.posterior_trips,
               "synthetic": {"trip": result.trip_jsd, "markov": result.markov_jsd},
               "training": {"trip": base.trip_jsd, "markov": base.markov_jsd}, "threshold": THRESHOLD}
    return GroupResult(metrics, {"bayesian": details})


def _figure(details: dict, meta: dict) -> bytes:
    from ..metrics.figures import threshold_bars_png

    d = details["bayesian"]
    return threshold_bars_png({name: d[name] for name in ("synthetic", "training")},
                              {"trip": "trip (start, end)", "markov": "transitions"}, d["threshold"],
                              "JSD(prior, posterior)")


GROUP = MetricGroup(
    "bayesian",
    (Metric("bayes_gain", "Bayesian zone gain", "Bayesian inference on a sensitive zone (AdaTrace): how much closer "
            "the synthetic trips through the zone bring the adversary's prior to the training trips through it, in "
            "Jensen-Shannon divergence (0: nothing learnt; below 0: misled)", goal="lower", range=(None, None),
            short="Bayes"),
     Metric("bayes_trip_jsd", "Bayesian: JSD(prior, posterior), trips", "AdaTrace's measure: divergence of the "
            "posterior (start, end) distribution of the synthetic trips through the zone from the prior; the "
            "paper's defence requires it below 0.1", featured=False),
     Metric("bayes_markov_jsd", "Bayesian: JSD(prior, posterior), transitions", "the same for the transition "
            "distribution", featured=False)),
    _compute, applies("bayesian"), step="Bayesian inference on a sensitive zone", kind="attack",
    options=(GRID, count("bayes_rank", 10, "Bayesian attack: the sensitive zone is the n-th densest grid cell "
                         "(AdaTrace: 10).")),
    figures=(Figure("Bayesian inference on a sensitive zone",
                    lambda d, m: (f"Jensen-Shannon divergence between the adversary's prior (the test trips) and the "
                                  f"posterior (the released trips through the sensitive zone, cell "
                                  f"{d['bayesian']['zone']}), for the synthetic set and the training set released "
                                  f"as is. The dashed line is the paper's threshold 0.1: AdaTrace's defence "
                                  f"regenerates trips until both bars are below it. A large divergence says the "
                                  f"posterior moved, not that it moved towards the truth: the gain (table) says "
                                  f"that."),
                    "bars of the prior-posterior divergences with the threshold", _figure,
                    lambda d, m: "bayesian" in d and d["bayesian"]["synthetic"]["trip"] is not None),))
