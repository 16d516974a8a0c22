"""PrivTrace (synth/privtrace/): the grid's sizes and neighbours by hand, each query's weight per
trajectory (its sensitivity), interpolated states that touch, and the synthetic set's shape."""

import numpy as np
import pytest

from helpers import traceset
from locsynth import InputError
from locsynth.synth.privtrace import PrivTrace
from locsynth.synth.privtrace import markov
from locsynth.synth.privtrace.grid import (STATES_PER_LOCATION, TwoLevelGrid, capped_splits, level1_size,
                                           level2_sizes)


def test_level_sizes_by_hand():
    assert level1_size(600 * 16) == 4 and level1_size(600 * 17.9) == 4 and level1_size(10) == 1
    assert level1_size(600 * 100 ** 2) == 60                       # at most 60 a side
    # 4 level-1 cells, 1,000 trajectories: split above 0.05 * 1000 / 4 = 12.5; m = ceil(sqrt(d / 200))
    assert level2_sizes(np.array([10.0, 13.0, 800.0, 801.0]), 1000).tolist() == [1, 1, 2, 3]


def test_the_states_are_bounded_by_the_public_space_whatever_the_noise():
    """A tiny epsilon's noisy densities (1e300) asked for 7e148 subcells a side, or 67 million states
    (4 GB); the largest splits are lowered until the states fit 16 per location (issue 53)."""
    assert capped_splits(np.array([1, 2, 5, 3]), 100).tolist() == [1, 2, 5, 3]          # 39 states: as they are
    assert capped_splits(np.array([1, 2, 5, 3]), 20).tolist() == [1, 2, 2, 2]           # M = 3: 1 + 4 + 9 + 9 > 20
    assert capped_splits(np.array([1, 2, 5, 3]), 10).tolist() == [1, 1, 1, 1]           # M = 2 gives 13 > 10
    m = level2_sizes(np.array([1e300, np.inf, 1e12, 5.0]), 10, max_states=16 * 50)
    assert m.tolist() == [16, 16, 16, 1]                                      # 769 states of 800
    assert level1_size(1e300) == 60 and level1_size(-1e300) == 1


def test_a_fit_at_a_tiny_epsilon_stays_within_the_bound():
    from locsynth.testing import check_data

    data = check_data()
    for _ in range(3):                   # the noise's sign decides k and the splits: a few draws
        model = PrivTrace(epsilon=1e-300, size_share=0).fit(data)
        assert model.grid_.n_states <= max(STATES_PER_LOCATION * data.space.n_locations, model.grid_.k ** 2)
        assert model.sample(5, seed=0).n_traces == 5


def grid():
    """k = 2 over a 2 x 2 box; the bottom-left level-1 cell split 2 x 2 (states 0-3), the others
    whole (4: bottom-right, 5: top-left, 6: top-right)."""
    return TwoLevelGrid((0.0, 0.0, 2.0, 2.0), 2, np.array([2, 1, 1, 1]))


def test_states_rectangles_and_neighbours_by_hand():
    g = grid()
    assert g.n_states == 7 and g.offsets.tolist() == [0, 4, 5, 6, 7]
    assert g.state(np.array([0.2, 0.7, 0.2, 0.7, 1.5, 0.5, 1.5]), np.array([0.2, 0.2, 0.7, 0.7, 0.5, 1.5, 1.5])).tolist() \
        == [0, 1, 2, 3, 4, 5, 6]
    rect = g.rectangles()
    assert rect[3].tolist() == [0.5, 0.5, 1.0, 1.0] and rect[4].tolist() == [1.0, 0.0, 2.0, 1.0]
    assert g.state((rect[:, 0] + rect[:, 2]) / 2, (rect[:, 1] + rect[:, 3]) / 2).tolist() == list(range(7))
    indptr, indices = g.neighbours()
    near = {s: set(indices[indptr[s]:indptr[s + 1]].tolist()) for s in range(7)}
    assert near[4] == {1, 3, 5, 6} and near[0] == {1, 2, 3} and near[5] == {2, 3, 4, 6}
    assert all(a in near[b] for a in near for b in near[a])           # symmetric


def test_each_trajectory_weighs_at_most_one_in_every_query():
    rng = np.random.default_rng(0)
    g = grid()
    indptr, indices = g.neighbours()
    posts = np.arange(7)
    post_id, tables = np.arange(7), markov.table_offsets(indptr, posts)
    for _ in range(20):
        n = int(rng.integers(1, 9))
        x, y, offsets = rng.random(n) * 2, rng.random(n) * 2, np.array([0, n])
        assert markov.density(g, x, y, offsets).sum() == pytest.approx(1.0)
        seq, seq_offsets = markov.states(g, x, y, offsets)
        moves, start, end = markov.first_order(seq, seq_offsets, indptr, indices)
        assert moves.sum() + start.sum() + end.sum() <= 1 + 1e-12
        assert markov.second_order(seq, seq_offsets, indptr, indices, post_id, tables).sum() <= 1 + 1e-12


def test_interpolated_states_touch_and_repeats_merge():
    rng = np.random.default_rng(1)
    g = TwoLevelGrid((0.0, 0.0, 10.0, 10.0), 3, np.array([1, 3, 1, 2, 1, 1, 4, 1, 1]))
    indptr, indices = g.neighbours()
    x, y = rng.random(60) * 10, rng.random(60) * 10
    offsets = np.array([0, 10, 35, 60])
    seq, seq_offsets = markov.states(g, x, y, offsets)
    for k in range(3):
        s = seq[seq_offsets[k]:seq_offsets[k + 1]]
        assert s[0] == g.state(x[offsets[k]:offsets[k] + 1], y[offsets[k]:offsets[k] + 1])[0]
        assert s[-1] == g.state(x[offsets[k + 1] - 1:offsets[k + 1]], y[offsets[k + 1] - 1:offsets[k + 1]])[0]
        assert (s[1:] != s[:-1]).all()
        touching = [b in indices[indptr[a]:indptr[a + 1]] for a, b in zip(s[:-1], s[1:])]
        assert np.mean(touching) > 0.95                # only raster corners may skip a touch


def trips():
    """180 trips on a 3 x 4 grid, without hours."""
    from dataclasses import replace

    base = [[0, 1, 2, 6], [1, 2, 3], [4, 5, 6, 7], [0, 4, 8], [3, 7, 11, 10], [8, 9, 10, 11]]
    ts = traceset([list(enumerate(p)) for p in base * 30], rows=3, cols=4)
    return replace(ts, users=ts.users.assign(hour=np.full(180, -1, np.int8)))


def test_fit_and_sample_give_dp_sized_trips_without_time():
    ts = trips()
    model = PrivTrace(epsilon=2.0, max_length=6).fit(ts)
    assert model.ledger_.totals()["person"]["epsilon"] == pytest.approx(2.0)
    assert model.ledger_.totals()["trace"]["epsilon"] == pytest.approx(4.0)        # a kept trace displaced: 2
    out = model.sample(seed=3)
    assert out.n_traces == model.training_["dp_count"]
    assert (out.counts() <= 6).all() and (out.users["hour"] == -1).all()
    same = out.user[1:] == out.user[:-1]
    assert not (same & (out.loc[1:] == out.loc[:-1])).any()
    assert model.sample(50, seed=3).n_traces == 50
    again = model.sample(seed=3)
    assert np.array_equal(again.loc, out.loc)
    summary = model.summary()
    assert summary["states"] >= 1 and summary["split"] == [0.2, 0.4, 0.4]


def test_bad_split_is_refused():
    with pytest.raises(InputError, match="three positive shares"):
        PrivTrace(split=(0.5, 0.5)).fit(trips())


def test_an_empty_trajectory_adds_nothing_to_any_count():
    """Issue #35: an empty trajectory got the weight 1 / (0 + 1), its start and end landing on the
    next trajectory's states (and IndexError when it was last); now every count is the one without it."""
    g = grid()
    x, y = np.array([0.2, 0.7, 1.5, 0.5]), np.array([0.2, 0.2, 0.5, 1.5])
    for offsets_with, offsets_without in (([0, 2, 2, 4], [0, 2, 4]), ([0, 2, 4, 4], [0, 2, 4]), ([0, 0, 2, 4], [0, 2, 4])):
        seq, off = markov.states(g, x, y, np.array(offsets_with))
        seq0, off0 = markov.states(g, x, y, np.array(offsets_without))
        indptr, indices = g.neighbours()
        for a, b in zip(markov.first_order(seq, off, indptr, indices), markov.first_order(seq0, off0, indptr, indices)):
            np.testing.assert_allclose(a, b)
        np.testing.assert_allclose(markov.density(g, x, y, np.array(offsets_with)),
                                   markov.density(g, x, y, np.array(offsets_without)))


def test_without_a_dp_count_the_split_threshold_reads_no_exact_size(monkeypatch):
    """Issue #35: with size_share = 0 the level-2 split threshold 0.05 n / k^2 took the exact number
    of trajectories; it now takes the sum of the noisy level-1 densities (each trajectory adds 1)."""
    from locsynth.synth.privtrace import model as model_module
    from locsynth.testing import check_data

    seen = []

    def spy(density, trajectories, *args, **kwargs):
        seen.append((float(np.sum(density)), float(trajectories)))
        return level2_sizes(density, trajectories, *args, **kwargs)

    monkeypatch.setattr(model_module, "level2_sizes", spy)
    data = check_data()
    PrivTrace(epsilon=1.0, size_share=0).fit(data)
    [(total, n)] = seen
    assert n == pytest.approx(max(total, 0.0)) and n != data.n_traces
    seen.clear()
    fitted = PrivTrace(epsilon=1.0).fit(data)
    assert seen[0][1] == fitted.training_["dp_count"]


def test_the_start_drawn_by_bisection_is_the_one_a_scan_draws():
    """The walks draw their start from the running sum of the start counts by bisection (log time,
    so that sampling does not grow with states x walks): the same index as the plain scan, zeros
    and the last uniform below 1 included, and -1 when nothing has weight."""
    from locsynth.synth.privtrace.model import _draw, _draw_cumulative

    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(1, 40))
        w = rng.random(n) * (rng.random(n) < 0.6) * 10.0 ** rng.integers(-3, 6)
        for u in (rng.random(), 0.0, np.nextafter(1.0, 0.0)):
            assert _draw_cumulative(np.cumsum(w), u) == _draw(w, u)
    assert _draw_cumulative(np.zeros(3), 0.5) == _draw(np.zeros(3), 0.5) == -1
