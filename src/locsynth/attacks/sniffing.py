"""Trajectory reconstruction from a sniffed part (AdaTrace, Gursoy et al., CCS 2018, §3 and §5.2,
"partial sniffing"; the authors' Main.generateAttackResilientTrajectories runs it as a defence).

The adversary observes the part of a real trajectory inside a sniff region: its first run of
consecutive points in the region (Trajectory.getSniffedPoints). The region is one cell of a uniform
g x g grid over the public space, the 12th densest by the trajectories of the reference (test) set
that pass through it (the paper's default; AdaTrace lays its own adaptive grid, which needs the
real data, so here the grid is uniform and public: g = 6, the first level of AdaTrace's grid). The
attack links the sniffed part to the synthetic trajectory whose own first run in the region is
closest by DTW (as their code; ties among equally close ones broken by a seeded draw, where their
Java takes the first in list order) and counts what that synthetic trajectory reveals of the
rest of the real one: the real points outside the sniffed run that lie within ``radius`` metres of
a point of the synthetic trajectory (their calcIntersectionCount counts points within 0.001 degree,
about 100 m, and counts the sniffed points too: here the sniffed part is what the adversary already
has, so only the rest counts). A real trajectory is reconstructed when at least ``min_shared``
(the paper's 5) of its points are revealed.

Members (training trajectories through the region) against non-members (test trajectories through
it), seeded samples of equal size: the shares of each reconstructed, and their difference, the
advantage a release gives an adversary about the trajectories it was trained on.

Where the paper's text and the authors' code differ: their getNthDensestCell takes the N-th entry
of Evaluation.sortByValue, which sorts ascending (Main.java names its result
``ascendingCellDensities``), so their "10th densest" and "12th densest" cells are the 10th and 12th
sparsest; the paper's densest is the default here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..metrics.groups import GroupResult, Metric, MetricGroup, Option, count, limit, row
from ..data.traces import ranges
from ..core.validation import in_range
from .trip_geometry import (Trajectories, applies, balanced, grid_cells, nearest_each, nth_densest, public_box,
                            real_sets, released, trips_through)


@dataclass(frozen=True)
class Sniffing:
    members: float | None
    non_members: float | None
    targets: int
    region: int
    revealed_members: np.ndarray
    revealed_non_members: np.ndarray

    @property
    def advantage(self) -> float | None:
        return None if self.members is None else self.members - self.non_members


@njit(cache=True)
def _first_runs(cells, offsets, region):
    """Per trajectory, [start, stop) of its first run of points in ``region`` (-1, -1 without)."""
    n = offsets.size - 1
    out = np.full((n, 2), -1, np.int64)
    for i in range(n):
        j = offsets[i]
        while j < offsets[i + 1] and cells[j] != region:
            j += 1
        if j < offsets[i + 1]:
            k = j
            while k < offsets[i + 1] and cells[k] == region:
                k += 1
            out[i, 0], out[i, 1] = j, k
    return out


def sniffed(t: Trajectories, cells: np.ndarray, region: int) -> tuple[np.ndarray, Trajectories, np.ndarray]:
    """The rows of ``t`` that pass through ``region``, their sniffed parts, and every row's run."""
    runs = _first_runs(cells, t.offsets, region)
    rows = np.flatnonzero(runs[:, 0] >= 0)
    lengths = runs[rows, 1] - runs[rows, 0]
    idx = ranges(runs[rows, 0], lengths)
    return rows, Trajectories(t.x[idx], t.y[idx], np.r_[0, np.cumsum(lengths)].astype(np.int64)), runs


@njit(cache=True)
def _revealed(rx, ry, roff, runs, sx, sy, soff, match, radius):
    """For each real trajectory i, how many of its points outside its sniffed run lie within
    ``radius`` of a point of synthetic trajectory match[i]."""
    n = match.size
    out = np.zeros(n, np.int64)
    r2 = radius * radius
    for i in range(n):
        j = match[i]
        if j < 0:
            continue
        for p in range(roff[i], roff[i + 1]):
            if runs[i, 0] <= p < runs[i, 1]:
                continue
            for q in range(soff[j], soff[j + 1]):
                dx, dy = rx[p] - sx[q], ry[p] - sy[q]
                if dx * dx + dy * dy <= r2:
                    out[i] += 1
                    break
    return out


@dataclass(frozen=True)
class SniffTargets:
    """The region and the sampled real trajectories through it: members then non-members, with
    their sniffed parts and runs."""

    region: int
    members: Trajectories
    non_members: Trajectories
    member_runs: np.ndarray
    non_member_runs: np.ndarray
    member_parts: Trajectories
    non_member_parts: Trajectories


def choose_targets(train: Trajectories, test: Trajectories, box, grid: int = 6, rank: int = 12,
                   targets: int | None = 1000, seed: int = 0) -> SniffTargets:
    """The sniff region and equal seeded samples of members and non-members through it."""
    g2 = grid * grid
    test_cells = grid_cells(test.x, test.y, box, grid)
    region = nth_densest(trips_through(test_cells, test.offsets, g2), rank)
    through = [np.flatnonzero(_first_runs(cells, t.offsets, region)[:, 0] >= 0)
               for t, cells in ((train, grid_cells(train.x, train.y, box, grid)), (test, test_cells))]
    picks = balanced(through[0].size, through[1].size, targets, np.random.SeedSequence(seed, spawn_key=(37, 2)))
    out = []
    for t, rows, pick in zip((train, test), through, picks):
        chosen = t.subset(rows[pick])
        _, part, runs = sniffed(chosen, grid_cells(chosen.x, chosen.y, box, grid), region)
        out.append((chosen, runs, part))
    (mem, mem_runs, mem_part), (non, non_runs, non_part) = out
    return SniffTargets(region, mem, non, mem_runs, non_runs, mem_part, non_part)


def sniffing(targets: SniffTargets, synthetic: Trajectories, box, grid: int = 6, radius: float = 100.0,
             min_shared: int = 5, seed: int = 0) -> Sniffing:
    """The attack against ``synthetic`` (module docstring)."""
    cells = grid_cells(synthetic.x, synthetic.y, box, grid)
    syn_rows, syn_parts, _ = sniffed(synthetic, cells, targets.region)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(37, 3)))
    revealed = []
    found = nearest_each((targets.member_parts, targets.non_member_parts), syn_parts, "dtw", ties=True)
    for real, runs, (_, _, tied) in ((targets.members, targets.member_runs, found[0]),
                                     (targets.non_members, targets.non_member_runs, found[1])):
        match = np.array([syn_rows[t[rng.integers(t.size)]] if t.size else -1 for t in tied], np.int64)
        revealed.append(_revealed(real.x, real.y, real.offsets, runs, synthetic.x, synthetic.y, synthetic.offsets,
                                  match, float(radius)))
    n = len(targets.members)
    if n == 0:
        return Sniffing(None, None, 0, targets.region, revealed[0], revealed[1])
    return Sniffing(float((revealed[0] >= min_shared).mean()), float((revealed[1] >= min_shared).mean()), n,
                    targets.region, revealed[0], revealed[1])


# -- the metric group ---------------------------------------------------------------------------------------

#: the grid of the sniff region and the sensitive zone (bayesian.py): g x g cells over the public space
GRID = count("attack_grid", 6, "Sniffing and Bayesian attacks: the g x g grid over the public space whose cells are "
             "the sniff region and the sensitive zone (6: the first level of AdaTrace's grid).", minimum=2)


def _compute(ctx) -> GroupResult:
    box = public_box(ctx.test.space)
    o = {k: ctx.option(k) for k in ("attack_grid", "sniff_rank", "sniff_targets", "sniff_radius_m", "sniff_min_shared")}
    seed = ctx.option("seed", 0)
    key = ("sniffing", *o.values(), seed)
    targets = ctx.reference(key + ("targets",), lambda: choose_targets(
        *real_sets(ctx), box, o["attack_grid"], o["sniff_rank"], o["sniff_targets"], seed))

    def attack(release):
        return sniffing(targets, release, box, o["attack_grid"], o["sniff_radius_m"], o["sniff_min_shared"], seed)

    result, base = attack(released(ctx)), ctx.reference(key + ("training",), lambda: attack(real_sets(ctx)[0]))
    metrics = {"sniff_advantage": row(result.advantage, base.advantage, 0.0),
               "sniff_members": row(result.members, base.members, None),
               "sniff_non_members": row(result.non_members, base.non_members, None)}
    details = {"region": result.region, "targets": result.targets, "members": result.members,
               "non_members": result.non_members}
    return GroupResult(metrics, {"sniffing": details},
                       {"attack_samples": {"sniffing": {"members": result.targets, "non_members": result.targets}}})


GROUP = MetricGroup(
    "sniffing",
    (Metric("sniff_advantage", "Sniffing advantage", "partial sniffing (AdaTrace): share of sniffed training "
            "trajectories the closest synthetic one reconstructs (>= {sniff_min_shared} further points within "
            "{sniff_radius_m:g} m) minus the share of sniffed test trajectories (0: the release tells members apart "
            "no better than unseen ones)", range=(-1.0, 1.0), short="sniff"),
     Metric("sniff_members", "Sniffing: members reconstructed", "share of the training trajectories through the "
            "sniff region (the {sniff_rank}th densest of {attack_grid} x {attack_grid} cells) that the release "
            "reconstructs", range=(0.0, 1.0), featured=False),
     Metric("sniff_non_members", "Sniffing: non-members reconstructed", "the same share for test trajectories, "
            "which the synthesizer never saw", range=(0.0, 1.0), featured=False)),
    _compute, applies("sniffing"), step="partial sniffing", kind="attack",
    options=(GRID,
             count("sniff_rank", 12, "Sniffing: the sniff region is the n-th densest grid cell (AdaTrace: 12)."),
             limit("sniff_targets", 1000, "Sniffing: members and as many non-members through the region drawn as "
                   "targets (none: every one)."),
             Option("sniff_radius_m", 100.0, "Sniffing: a real point is revealed when a point of the matched "
                    "synthetic trajectory lies within this many metres (AdaTrace: 0.001 degree).",
                    lambda v: in_range(0.0)(v, "sniff_radius_m")),
             count("sniff_min_shared", 5, "Sniffing: a trajectory is reconstructed when this many of its points "
                   "outside the region are revealed (AdaTrace: 5).")),
    fields=lambda options, space_kind: options)
