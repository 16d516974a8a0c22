"""The trajectory index (attacks/trip_index.py): its bounds never exceed the distances, the bounded
recursion is exact below its bound, and the tree search finds what brute force finds, with many
ties (walks on a lattice of cells, as the cabs' trips are) and without."""

import numpy as np
import pytest

from locsynth.attacks import trip_index as ti
from locsynth.attacks.trip_geometry import Trajectories, nearest, pair_distances


def lattice_walks(n: int, rng, size: int = 8, cell: float = 500.0, longest: int = 7) -> Trajectories:
    """``n`` walks of 1 to ``longest`` points on a small lattice: many share starts, ends, boxes
    and distances."""
    paths = [rng.integers(0, size, size=(rng.integers(1, longest + 1), 2)) * cell for _ in range(n)]
    xy = np.concatenate(paths).astype(float)
    return Trajectories(xy[:, 0].copy(), xy[:, 1].copy(), np.r_[0, np.cumsum([len(p) for p in paths])].astype(np.int64))


def all_pairs(targets, pool, kind):
    left, right = np.repeat(np.arange(len(targets)), len(pool)), np.tile(np.arange(len(pool)), len(targets))
    return pair_distances(targets, pool, left, right, kind).reshape(len(targets), len(pool))


@pytest.mark.parametrize("kind", ["frechet", "dtw"])
def test_the_lower_bounds_never_exceed_the_distance(kind):
    rng = np.random.default_rng(1)
    a, b = lattice_walks(60, rng), lattice_walks(50, rng)
    fa, fb = ti.features(a.x, a.y, a.offsets), ti.features(b.x, b.y, b.offsets)
    d = all_pairs(a, b, kind)
    for i in range(len(a)):
        for j in range(len(b)):
            long = kind == "dtw" and (a.lengths[i] > 1 or b.lengths[j] > 1)
            assert ti.pair_bound(fa, i, fb, j, long) <= d[i, j]
            # a node holding only b's trajectory j bounds no more than the pair does
            assert ti.node_bound(fa, i, fb[j], fb[j]) <= ti.pair_bound(fa, i, fb, j, False)


@pytest.mark.parametrize("kind", ["frechet", "dtw"])
def test_the_bounded_recursion_is_exact_up_to_its_bound_and_inf_beyond(kind):
    rng = np.random.default_rng(2)
    a, b = lattice_walks(40, rng), lattice_walks(40, rng)
    left, right = np.repeat(np.arange(40), 40), np.tile(np.arange(40), 40)
    exact = pair_distances(a, b, left, right, kind)
    bounds = np.quantile(exact, 0.3) + rng.choice([-1.0, 0.0, 1.0], exact.size)
    bounds[::7] = exact[::7]                                          # exactly at the bound: kept
    got = pair_distances(a, b, left, right, kind, bounds)
    np.testing.assert_array_equal(got, np.where(exact <= bounds, exact, np.inf))


@pytest.mark.parametrize("kind", ["frechet", "dtw"])
@pytest.mark.parametrize("leaf", [1, 3, 16])
def test_the_tree_search_is_brute_force(kind, leaf):
    """Distances bit for bit; with ``smallest`` the smallest row at the distance, without it a row
    at the distance; ``exclude`` and a per-target ``within`` as brute force reads them."""
    rng = np.random.default_rng(3 + leaf)
    pool, targets = lattice_walks(400, rng), lattice_walks(120, rng)
    d = all_pairs(targets, pool, kind)
    exclude = np.where(rng.random(len(targets)) < 0.3, rng.integers(0, len(pool), len(targets)), -1)
    d[np.arange(len(targets))[exclude >= 0], exclude[exclude >= 0]] = np.inf
    within = np.where(rng.random(len(targets)) < 0.5, np.inf, rng.choice([0.0, 500.0, 707.0, 1000.0], len(targets)))
    want = d.min(axis=1)
    want = np.where(want <= within, want, np.inf)
    for smallest in (True, False):
        best, row = nearest(targets, pool, kind, leaf=leaf, exclude=exclude, within=within, smallest=smallest)
        np.testing.assert_array_equal(best, want)
        found = np.isfinite(want)
        assert (row[~found] == -1).all()
        assert (d[np.flatnonzero(found), row[found]] == want[found]).all()
        if smallest:
            assert (row[found] == np.argmax(d[found] == want[found, None], axis=1)).all()


def test_repeated_targets_and_pool_walks_get_brute_forces_answers():
    rng = np.random.default_rng(4)
    pool = lattice_walks(60, rng, size=4, longest=3)
    pool = pool.subset(rng.integers(0, 60, 500))                        # each walk about 8 times
    targets = lattice_walks(40, rng, size=4, longest=4)
    targets = targets.subset(rng.integers(0, 40, 200))
    d = all_pairs(targets, pool, "frechet")
    best, row = nearest(targets, pool, within=np.full(len(targets), 600.0))
    want = np.where(d.min(axis=1) <= 600.0, d.min(axis=1), np.inf)
    np.testing.assert_array_equal(best, want)
    found = np.isfinite(want)
    assert (row[found] == np.argmax(d[found] == want[found, None], axis=1)).all()


def test_a_target_the_pool_holds_starts_at_zero_unless_that_row_is_excluded():
    """Targets found verbatim in the pool (hashed first) are at 0 with the smallest such row; with
    their own row excluded, at 0 again only where another row holds the same points."""
    rng = np.random.default_rng(5)
    pool = lattice_walks(300, rng, size=5, longest=3)
    own = rng.choice(len(pool), 60, replace=False)
    targets = pool.subset(own)
    d = all_pairs(targets, pool, "frechet")
    for exclude in (None, own):
        e = d.copy()
        if exclude is not None:
            e[np.arange(len(own)), own] = np.inf
        best, row = nearest(targets, pool, exclude=exclude)
        np.testing.assert_array_equal(best, e.min(axis=1))
        np.testing.assert_array_equal(row, np.argmin(e, axis=1))
