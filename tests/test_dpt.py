"""DPT (synth/dpt.py): each step by hand -- the reference systems and the discretisation at two
resolutions, the model selection per trajectory, the choice of levels, the prefix-tree counts
of a tiny set and their pruning, the transition probabilities -- then fit and sample, and the
end-to-end audit of a release (slow) with the exact-size mutant caught."""

from dataclasses import replace

import numpy as np
import pytest

from helpers import traceset, trip_set
from locsynth import InputError
from locsynth.synth import dpt as dpt_module
from locsynth.synth.dpt import DPT, END, ReferenceSystems, choose_levels, discretise, grow, kept_levels
from locsynth.synth.ngram import GramIndex

#: (dr, dc) of a direction code
STEP = {(dr + 1) * 3 + (dc + 1): (dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)}


def hrs():
    """A 4 x 4 m box: level 1 (finest) 4 x 4 cells of 1 m (global 4 .. 19), level 0 2 x 2 of 2 m (0 .. 3)."""
    return ReferenceSystems((0.0, 0.0, 4.0, 4.0), 1.0, 2, 2)


def test_reference_systems_by_hand():
    rs = hrs()
    assert rs.shape(0) == (2, 2) and rs.shape(1) == (4, 4) and rs.offsets.tolist() == [0, 4, 20]
    assert rs.side(0) == 2.0 and rs.side(1) == 1.0
    assert rs.cell_level().tolist() == [0] * 4 + [1] * 16
    cx, cy = rs.centres()
    assert (cx[3], cy[3]) == (3.0, 3.0) and (cx[4], cy[4]) == (0.5, 0.5) and (cx[19], cy[19]) == (3.5, 3.5)
    valid = rs.valid_moves()
    assert valid[4].tolist() == [False, False, False, False, True, True, False, True, True]   # bottom-left
    assert valid[9].all()                                                                     # an inner cell


def test_the_finest_level_of_a_grid_space_is_its_own_grid():
    ts = traceset([[(0, 0)]], rows=3, cols=5)
    rs = ReferenceSystems.over(ts.space, levels=3, branching=2)
    assert rs.shape(2) == (3, 5) and rs.shape(1) == (2, 3) and rs.shape(0) == (1, 2)
    xy = dpt_module.planar(ts.space)
    r, c = rs.rowcol(2, *xy)
    assert (r * 5 + c).tolist() == list(range(15))                  # one location per finest cell


def test_a_finest_side_too_small_for_the_space_is_refused():
    ts = traceset([[(0, 0)]], rows=3, cols=5)
    with pytest.raises(InputError, match="finest = 0.01 m makes"):
        DPT(finest=0.01).fit(ts)


def test_discretisation_at_two_resolutions_by_hand():
    rs = hrs()
    x = np.array([0.5, 3.5, 3.5, 0.5, 2.5, 0.6, 0.7])
    y = np.array([0.5, 0.5, 2.5, 0.5, 1.5, 0.6, 0.7])
    offsets = np.array([0, 3, 5, 7])
    # finest: (0,0) -> (0,3) fills (0,1), (0,2); (0,3) -> (2,3) fills (1,3); a diagonal-and-a-half
    # (0,0) -> (1,2) fills floor(0.5 + 0.5) = 1, floor(1 + 0.5) = 1: (1,1); the last trip stays in one cell
    cells, off = discretise(rs, 1, x, y, offsets)
    assert off.tolist() == [0, 6, 9, 10]
    assert cells.tolist() == [4 + 0, 4 + 1, 4 + 2, 4 + 3, 4 + 7, 4 + 11, 4 + 0, 4 + 5, 4 + 6, 4 + 0]
    cells, off = discretise(rs, 0, x, y, offsets)
    assert cells.tolist() == [0, 1, 3, 0, 1, 0] and off.tolist() == [0, 3, 5, 6]


def test_discretised_moves_go_to_neighbours():
    rng = np.random.default_rng(0)
    rs = ReferenceSystems((0.0, 0.0, 100.0, 60.0), 3.0, 3, 2)
    x, y = rng.random(300) * 100, rng.random(300) * 60
    offsets = np.array([0, 1, 40, 41, 200, 300])
    for level in range(3):
        cells, off = discretise(rs, level, x, y, offsets)
        r, c = np.divmod(cells - rs.offsets[level], rs.shape(level)[1])
        for k in range(5):
            sl = slice(off[k], off[k + 1])
            assert off[k + 1] > off[k]
            assert (np.maximum(np.abs(np.diff(r[sl])), np.abs(np.diff(c[sl]))) == 1).all()
            first, last = offsets[k], offsets[k + 1] - 1
            assert cells[off[k]] == discretise(rs, level, x[[first]], y[[first]], np.array([0, 1]))[0][0]
            assert cells[off[k + 1] - 1] == discretise(rs, level, x[[last]], y[[last]], np.array([0, 1]))[0][0]


def test_each_trajectory_goes_to_the_finest_level_its_steps_fit():
    rs = hrs()
    slow = ([0.5, 1.5, 2.5, 3.5], [0.5] * 4)                      # one fine cell a step: level 1
    fast = ([0.5, 2.5, 0.5, 2.5], [0.5, 0.5, 2.5, 2.5])            # two fine cells a step (one coarse): 0
    mixed = ([0.5, 1.5, 3.5], [0.5, 0.5, 0.5])                     # half its steps fit the fine level: 1
    x = np.concatenate([slow[0], fast[0], mixed[0], [3.0]])
    y = np.concatenate([slow[1], fast[1], mixed[1], [3.0]])
    assert choose_levels(rs, x, y, np.array([0, 4, 8, 11, 12])).tolist() == [1, 0, 1, 1]


def test_levels_kept_and_where_the_others_go_by_hand():
    kept, target = kept_levels(np.array([5.0, 100.0, 2.0, 50.0]), 10.0)
    assert kept.tolist() == [False, True, False, True] and target.tolist() == [1, 1, 3, 3]   # a tie: the finer
    kept, target = kept_levels(np.array([-3.0, 4.0, 1.0]), 10.0)
    assert kept.tolist() == [False, True, False] and target.tolist() == [1, 1, 1]


def line():
    """One row of 3 cells of 1 m (levels = 1): global cells 0, 1, 2; a move right is code 5, left 3."""
    return ReferenceSystems((0.0, 0.0, 3.0, 1.0), 1.0, 1, 2)


SEQS = [[0, 1, 2], [1, 2], [2, 1, 0], [0, 1]]


def exact_noise(monkeypatch):
    """Laplace noise replaced by none, so that the tree's counts are the true ones."""
    monkeypatch.setattr(dpt_module, "_noised", lambda true, epsilon, l_max: (np.asarray(true, float), epsilon))


def tree(epsilon: float, order: int = 2):
    return grow(GramIndex.from_sequences(SEQS, 3, 3), line(), np.ones(3, bool), order, epsilon, 3)


def gram_hist(t, gram):
    """The histogram of the node of ``gram`` (cells), as a {code: count} of its non-zero bins."""
    v = t.first[gram[0]]
    for a, b in zip(gram[:-1], gram[1:]):
        v = t.child[v, 5 if b > a else 3]
    return {int(k): float(t.hist[v, k]) for k in np.flatnonzero(t.hist[v])}


def test_prefix_tree_counts_of_a_tiny_set_by_hand(monkeypatch):
    exact_noise(monkeypatch)
    t = tree(1e6)                                                # thresholds ~0: every count released
    assert t.root.tolist() == [2 + 1, 4, 2 + 1]                   # unigrams
    assert t.n_nodes == 3 + 4 and t.depth.tolist() == [1, 1, 1, 2, 2, 2, 2]
    # after 0: right twice, end once; after 1: right twice, left once, end once; after 2: end twice, left once
    assert gram_hist(t, [0]) == {5: 2.0, END: 1.0}
    assert gram_hist(t, [1]) == {5: 2.0, 3: 1.0, END: 1.0}
    assert gram_hist(t, [2]) == {END: 2.0, 3: 1.0}
    assert gram_hist(t, [0, 1]) == {5: 1.0, END: 1.0} and gram_hist(t, [1, 2]) == {END: 2.0}
    assert gram_hist(t, [2, 1]) == {3: 1.0} and gram_hist(t, [1, 0]) == {END: 1.0}
    assert (t.child[3:] == -1).all()                              # order 2: grams of at most 2 cells
    # moves off the row are never counted (public zeros)
    assert t.hist[:, [0, 1, 2, 6, 7, 8]].sum() == 0


def test_pruning_by_the_noisy_count_threshold(monkeypatch):
    exact_noise(monkeypatch)
    # epsilon 9, order 2, l_max 3: scale 3 x 3 / 9 = 1; theta = ln(9 / 2) = 1.5 in a node, ln(3 / 2) at the root
    assert dpt_module.threshold(1.0, np.array([9, 3, 2])) == pytest.approx([np.log(4.5), np.log(1.5), 0.0])
    t = tree(9.0)
    assert t.root.tolist() == [3, 4, 3]
    # released: right twice after 0 and after 1, the end twice after 2; the counts of 1 are pruned,
    # and the unreleased moves that stay on the row share what the node's count leaves (consistency)
    assert gram_hist(t, [0]) == {5: 2.0, END: 3 - 2.0}
    assert gram_hist(t, [1]) == {5: 2.0, 3: (4 - 2) / 2, END: (4 - 2) / 2}
    assert gram_hist(t, [2]) == {END: 2.0, 3: 3 - 2.0}
    # only released moves grow nodes: (0, 1) and (1, 2); (0, 1) releases nothing and spreads its 2
    assert t.n_nodes == 5 and t.child[t.first[0], END] == -1 and t.child[t.first[2], 3] == -1
    assert gram_hist(t, [0, 1]) == pytest.approx({3: 2 / 3, 5: 2 / 3, END: 2 / 3})
    assert gram_hist(t, [1, 2]) == {END: 2.0}


def test_consistency_shares_what_a_node_count_leaves():
    noisy = np.array([[5.0, -2.0, 1.0, 0.5], [3.0, 4.0, 9.0, 0.0]])
    released = np.array([[True, False, False, False], [True, True, True, False]])
    valid = np.array([[True, True, False, True], [True, True, True, True]])
    out = dpt_module.consistent(noisy, released, valid, np.array([9.0, 10.0]))
    assert out.tolist() == [[5.0, 2.0, 0.0, 2.0], [3.0, 4.0, 9.0, 0.0]]      # nothing left in row 2


def test_the_tree_refuses_sequences_longer_than_its_sensitivity():
    with pytest.raises(InputError, match="truncated to l_max = 3"):
        grow(GramIndex.from_sequences(SEQS, 3, 4), line(), np.ones(3, bool), 2, 1.0, 3)


def trips(n: int = 30, hours=True):
    """Trips back and forth on a 1 x 4 grid, with hours 7 and 8 (or none)."""
    base = [[0, 1, 2, 3], [3, 2, 1], [1, 2, 3], [2, 1, 0], [0, 1, 2]]
    ts = trip_set(base * n, ([7, 8, 7, 8, 7] * n) if hours else [-1] * (5 * n), cols=4)
    return ts if hours else replace(ts, users=ts.users.drop(columns="hour"))


def test_transition_probabilities_sum_to_one_and_back_off():
    model = DPT(epsilon=50.0).fit(trips(60))
    rs = model.rs_
    fine = int(rs.offsets[-2])                                   # the finest level's first cell
    for gram in ([fine], [fine + 1], [fine, fine + 1], [fine + 1, fine + 2], [fine + 3, fine + 2, fine + 1]):
        p = model.next_moves(gram)
        assert p.sum() == pytest.approx(1.0) and (p >= 0).all()
        r, c = divmod(gram[-1] - fine, rs.shape(rs.levels - 1)[1])
        for code in np.flatnonzero(p):
            dr, dc = STEP[int(code)]
            assert 0 <= r + dr < rs.shape(rs.levels - 1)[0] and 0 <= c + dc < 4
    # at the right end of the row only a move left or the end can follow
    p = model.next_moves([fine + 2, fine + 3])
    assert set(np.flatnonzero(p)) <= {3, END} and p[END] > 0.5
    # a context of three cells backs off to its last two (order 2)
    assert np.allclose(model.next_moves([fine + 3, fine + 2, fine + 1]), model.next_moves([fine + 2, fine + 1]))


def test_fit_and_sample_give_dp_sized_trips_with_hours():
    ts = trips()
    model = DPT(epsilon=40.0, time_share=0, footprint_share=0).fit(ts)
    totals = model.ledger_.totals()["person"]
    assert totals["epsilon"] == pytest.approx(40.0) and totals["relation"] == "add-remove" and totals["spends"] == 4
    assert model.ledger_.totals()["trace"]["epsilon"] == pytest.approx(80.0)       # a kept trace displaced: 2
    out = model.sample(seed=3)
    assert out.n_traces == model.training_["dp_count"]
    assert (out.counts() >= 1).all() and (out.counts() <= model.l_max).all()
    assert set(out.users["hour"].unique()) <= set(range(24)) and (out.users["hour"].isin([7, 8])).mean() > 0.8
    # each trip's events sit on consecutive instants from the start of its hour (hour-long instants here)
    first = out.offsets[:-1]
    hour = out.users["hour"].to_numpy()
    assert (out.t[first] == np.minimum(hour, 24 - out.counts())).all()
    same = out.user[1:] == out.user[:-1]
    assert not (same & (out.loc[1:] == out.loc[:-1])).any()
    assert np.array_equal(model.sample(seed=3).loc, out.loc) and model.sample(40, seed=3).n_traces == 40


def test_a_set_without_hours_spends_nothing_on_them_and_one_of_hours_minus_one_gets_none():
    model = DPT(epsilon=1.0, time_share=0, footprint_share=0).fit(trips(hours=False))
    assert model.ledger_.totals()["trace"]["spends"] == 3
    assert (model.sample(seed=0).users["hour"] == -1).all()
    # a trip set without time (NGRAM's output) has the column, all -1: its histogram's largest bin is -1
    untimed = DPT(epsilon=40.0, time_share=0, footprint_share=0).fit(trip_set([[0, 1, 2], [2, 1], [1, 2, 3]] * 50, [-1] * 150, cols=4))
    assert untimed.ledger_.totals()["trace"]["spends"] == 4 and (untimed.sample(seed=0).users["hour"] == -1).all()


def test_the_shares_must_leave_budget_for_the_trees():
    with pytest.raises(InputError, match="select_share \\+ hour_share"):
        DPT(select_share=0.6, hour_share=0.5, time_share=0).fit(trips())


def test_its_counts_move_within_their_sensitivity_on_neighbours():
    """Each vector handed to OpenDP (size, level counts, trees, hours) moves by at most its stated
    sensitivity when a person is removed or added (locsynth.testing.check_dp_sensitivity)."""
    from locsynth.testing import check_dp_sensitivity

    # without hours: the check's neighbours are rebuilt with the user table's ids only (the common
    # checks of tests/test_methods.py run it on their daily traces too)
    check_dp_sensitivity(DPT, trips(8, hours=False), {})


def test_a_tree_noised_as_if_a_trajectory_added_one_gram_per_depth_is_caught():
    """A mutant that states sensitivity 1 for the trees (forgetting the l_max grams of a
    trajectory) is caught by the sensitivity check."""
    from locsynth.testing import check_dp_sensitivity

    class OneGram(DPT):
        name = "dpt-one-gram"

        def _fit(self, train, **kw):
            real = dpt_module._noised
            dpt_module._noised = lambda true, epsilon, l_max: real(true, epsilon, 1)
            try:
                return super()._fit(train, **kw)
            finally:
                dpt_module._noised = real

    with pytest.raises(AssertionError, match="moved by [2-9]"):
        check_dp_sensitivity(OneGram, trips(8, hours=False), {})


def test_a_bound_on_traces_per_user_is_enforced_and_one_not_enforced_is_caught():
    """As NGRAM and PrivTrace (tests/test_release_dp.py): fit keeps a user's first
    max_traces_per_user trajectories; a mutant that records the bound but keeps every trajectory
    moves its DP count by 3 for a person of 3 trajectories."""
    from locsynth.testing import check_dp_sensitivity

    class Unbounded(DPT):
        def _bounded_traces(self, train, k):
            self.ledger_.bound_traces(k)
            return train

    data = trips(8, hours=False)
    with pytest.raises(AssertionError, match="three traces added: vector 0 .*moved by 3 in L1"):
        check_dp_sensitivity(Unbounded, data, {})
    model = DPT(max_traces_per_user=3).fit(data)
    assert model.ledger_.totals()["person"]["epsilon"] == pytest.approx(1.5 * model.ledger_.totals()["trace"]["epsilon"])
    check_dp_sensitivity(DPT, data, {"max_traces_per_user": 3})


# -- end to end: the release audit (tests/test_release_dp.py's pattern) -----------------------------

@pytest.mark.slow
def test_dpt_release_holds_its_epsilon_and_the_exact_size_is_caught():
    from test_release_dp import at_location, audited, claimed, runs, size, without_last

    x1 = trip_set([[0, 1, 2], [1, 2], [2, 1, 0], [0, 1], [1, 0], [0, 2, 1]], [9, 9, 10, 9, 10, 9], cols=3)
    x2 = without_last(x1)
    eps, relation = claimed(DPT(epsilon=1.0).fit(x1).sample(seed=0), "person")
    assert relation == "add-remove" and eps == pytest.approx(1.0)
    honest = runs(lambda x, i: DPT(epsilon=1.0).fit(x).sample(seed=i), x1, x2, 160, [size, at_location(0)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    exact = runs(lambda x, i: DPT(epsilon=1.0, size_share=0).fit(x).sample(x.n_traces, seed=i), x1, x2, 60, [size])
    assert not audited(exact, 0, eps).passed


@pytest.mark.slow
def test_no_file_of_a_dpt_release_states_an_exact_training_size(tmp_path):
    """tests/test_release_dp.py's scan of every file of a release, for DPT."""
    from test_release_dp import _forbidden, _leaks
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.release.publish import release
    from locsynth.data.simulate import TOKYO_BBOX, simulate
    from locsynth.data.space import Grid

    train, test = simulate(97, space=Grid(5, 5, TOKYO_BBOX), checkin_rate=0.4, seed=11).split(0.27, seed=0)
    synthetic = DPT().fit(train).sample(seed=1)
    card = release(synthetic, tmp_path / "r", evaluation=evaluate(train, test, synthetic, sglt=False))
    counts, ratios = _forbidden(train, test)
    released = {card["traces"], card["events"], card["training"].get("dp_count")}
    assert _leaks(tmp_path / "r", counts - released, ratios) == []
