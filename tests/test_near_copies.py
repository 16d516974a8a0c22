"""The near-copy check (attacks/near_copies.py): the evidence by hand, its distances against brute
force, and a release hiding jittered training walks flagged where honest releases are not."""

import math

import numpy as np
import pytest

from locsynth.attacks import copies as cp
from locsynth.attacks import near_copies as nc
from locsynth.attacks.trip_geometry import Trajectories, pair_distances

CELL = 500.0
REACH = nc.REACH_CELLS * CELL


def lattice_walks(n: int, rng, size: int = 60, cell: float = CELL, steps: tuple = (3, 10)) -> Trajectories:
    """``n`` walks of ``steps[0]`` to ``steps[1] - 1`` steps north, south, east or west on a ``size`` x
    ``size`` lattice: a population whose trips are mostly unique (tests/test_trip_attacks.py's)."""
    moves = np.array([(1, 0), (-1, 0), (0, 1), (0, -1)])
    paths = []
    for _ in range(n):
        p = [rng.integers(0, size, 2)]
        for _ in range(rng.integers(*steps)):
            p.append(np.clip(p[-1] + moves[rng.integers(4)], 0, size - 1))
        paths.append(np.array(p, float) * cell)
    xy = np.concatenate(paths)
    return Trajectories(xy[:, 0].copy(), xy[:, 1].copy(), np.r_[0, np.cumsum([len(p) for p in paths])].astype(np.int64))


def jittered(t: Trajectories, rows, r: float, rng, snapped: bool) -> Trajectories:
    """The walks ``rows`` of ``t`` with every point moved by r in a random direction (then snapped
    back to the lattice, or not)."""
    part = t.subset(rows)
    angle = rng.uniform(0, 2 * np.pi, part.x.size)
    x, y = part.x + r * np.cos(angle), part.y + r * np.sin(angle)
    if snapped:
        x, y = np.round(x / CELL) * CELL, np.round(y / CELL) * CELL
    return Trajectories(x, y, part.offsets)


@pytest.fixture(scope="module")
def walk_sets():
    # walks long enough that an honest walk is rarely within two cells of a real one
    rng = np.random.default_rng(53)
    train, test = lattice_walks(4000, rng, 100, steps=(8, 16)), lattice_walks(1000, rng, 100, steps=(8, 16))
    honest = [lattice_walks(1000, rng, 100, steps=(8, 16)) for _ in range(6)]
    return train, test, honest


def test_the_evidence_by_hand():
    # distances to (part 0, part 1, hold-out): a near copy of part 0, a tie within h, a hold-out win,
    # nothing within the reach
    d = np.array([[120.0, 500.0, 707.1], [500.0, 500.4, 900.0], [800.0, 1000.0, 300.0], [REACH, REACH, REACH]])
    check = cp.copy_check(d, evidence=nc.nearer)
    assert check.decided == 2 and check.training_wins == 1 and check.hold_out_wins == 1
    # two decided walks, one won by the hold-out: T = 1, E T = 2 / 3, sd = sqrt(2 * 2) / 3
    assert check.z == pytest.approx((1 - 2 / 3) / (2 / 3)) and check.score == pytest.approx(1 - 3 * 1 / 2)


def test_the_distances_read_what_brute_force_reads():
    """Every walk's nearest set, its distance and row, and whether a second set lies within h, as
    all pairs capped at the reach give them; so the check itself is brute force's."""
    rng = np.random.default_rng(1)
    train, test = lattice_walks(300, rng, size=8), lattice_walks(100, rng, size=8)
    synthetic = Trajectories.concat([lattice_walks(80, rng, size=8), train.subset(np.arange(10)),
                                     jittered(train, np.arange(10, 30), 200.0, rng, snapped=False)])
    cal = cp.calibration(len(train), len(test), seed=0)
    got, rows = nc.set_distances(synthetic, train, test, cal, REACH)
    sets = [train.subset(p) for p in cal.parts] + [test.subset(cal.hold_out)]
    pairs = [pair_distances(synthetic, s, np.repeat(np.arange(len(synthetic)), len(s)),
                            np.tile(np.arange(len(s)), len(synthetic))).reshape(len(synthetic), len(s)) for s in sets]
    brute = np.minimum(np.column_stack([p.min(axis=1) for p in pairs]), REACH)   # no repeated walk in synthetic
    brute_rows = np.column_stack([np.where(p.min(axis=1) < REACH, j * cal.size + np.argmin(p, axis=1), -1)
                                  for j, p in enumerate(pairs)])
    first = np.argmin(brute, axis=1)
    assert (np.argmin(got, axis=1) == first).all()
    np.testing.assert_array_equal(got.min(axis=1), brute.min(axis=1))
    two = np.sort(brute, axis=1)
    np.testing.assert_array_equal(nc.nearer(*np.sort(got, axis=1)[:, :2].T), nc.nearer(two[:, 0], two[:, 1]))
    won = np.flatnonzero(got.min(axis=1) < REACH)
    np.testing.assert_array_equal(rows[won, first[won]], brute_rows[won, first[won]])
    assert cp.copy_check(brute, brute_rows, evidence=nc.nearer).p_value == nc.check_release(
        synthetic, train, test, REACH).p_value


def test_honest_releases_are_not_flagged(walk_sets):
    train, test, honest = walk_sets
    p_honest = [nc.check_release(s, train, test, REACH).p_value for s in honest]
    assert min(p_honest) >= 0.01


@pytest.mark.parametrize("snapped", [False, True])
def test_a_release_hiding_jittered_training_walks_is_flagged(walk_sets, snapped):
    train, test, honest = walk_sets
    rng = np.random.default_rng(2)
    rows = rng.choice(len(train), 80, replace=False)                    # 2% of the training walks
    release = Trajectories.concat([honest[0].subset(np.arange(len(honest[0]) - 80)),
                                   jittered(train, rows, 300.0, rng, snapped)])
    check = nc.check_release(release, train, test, REACH)
    assert check.flagged and check.score > 0.2
    assert not nc.check_release(honest[0], train, test, REACH).flagged
    # the copy check compares exact shapes: walks jittered off the lattice are not copies to it
    if not snapped:
        assert not cp.check_release(release, train, test, far=100 * CELL * math.sqrt(2)).flagged
