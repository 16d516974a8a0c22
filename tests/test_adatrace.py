"""AdaTrace (synth/adatrace/): each step by hand (the grid's split, touching interpolated states, each
query's weight per trajectory, the length families, bridges that sum to one and end where they
must), the ledger's budget split with and without the defences, and an end-to-end audit of its
release that passes at its epsilon and catches a weakened copy."""

import numpy as np
import pytest

from helpers import trip_set
from locsynth import InputError
from locsynth.synth.adatrace import AdaTrace
from locsynth.synth.adatrace import defences, synopsis
from locsynth.synth.adatrace.model import DEFENCES_UNCOVERED
from locsynth.synth.privtrace import markov
from locsynth.synth.privtrace.grid import TwoLevelGrid
from locsynth.testing import check_data, check_dp_sensitivity
from test_release_dp import _forbidden, _leaks, audited, claimed, runs, size, sized, at_location, without_last

__all__ = ["sized"]         # the fixture of test_release_dp, used here


def test_split_sizes_by_hand():
    # the authors' live line, M_i = ceil(5 d_i / (|D| epsilon)): |D| = 1000, epsilon = 1; below 1e-4 is 0; at most 6
    d = np.array([0.0, 5e-5, 150.0, 200.0, 201.0, 999.0, -3.0])
    assert synopsis.level2_sizes(d, 1000, 1.0, "authors").tolist() == [1, 1, 1, 1, 2, 5, 1]
    # the code's rule: finer as epsilon falls
    assert synopsis.level2_sizes(np.array([200.0]), 1000, 0.5, "authors").tolist() == [2]
    assert synopsis.level2_sizes(np.array([1000.0]), 1000, 0.1, "authors").tolist() == [synopsis.MAX_SPLIT]
    # the adaptive grid's, the default: M_i = ceil(sqrt(d_i epsilon / 10,000)), finer as epsilon grows
    d = np.array([0.0, 5e-5, 10_000.0, 10_001.0, 40_000.0, 90_000.0, -3.0])
    assert synopsis.level2_sizes(d, 1000, 1.0).tolist() == [1, 1, 1, 2, 2, 3, 1]
    assert synopsis.level2_sizes(np.array([40_000.0]), 1000, 4.0).tolist() == [4]
    assert synopsis.level2_sizes(np.array([40_000.0]), 1000, 0.25).tolist() == [1]
    sizes = [synopsis.level2_sizes(np.array([30_000.0]), 1000, e)[0] for e in (0.5, 1, 2, 4, 8)]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


def grid():
    """k = 2 over a 2 x 2 box, the bottom-left cell split 2 x 2 (states 0-3), the others whole
    (4: bottom-right, 5: top-left, 6: top-right)."""
    return TwoLevelGrid((0.0, 0.0, 2.0, 2.0), 2, np.array([2, 1, 1, 1]))


def test_interpolated_states_touch_and_every_query_weighs_one_per_trajectory():
    rng = np.random.default_rng(0)
    g = grid()
    indptr, indices = g.neighbours()
    for _ in range(30):
        n = int(rng.integers(1, 9))
        x, y, offsets = rng.random(n) * 2, rng.random(n) * 2, np.array([0, n])
        seq, off = markov.states(g, x, y, offsets)
        touching = [b in indices[indptr[a]:indptr[a + 1]] for a, b in zip(seq[:-1], seq[1:])]
        assert np.mean(touching) >= 0.5 if touching else True
        assert synopsis.density(seq, off, g.n_states).sum() == pytest.approx(1.0)
        assert synopsis.moves(seq, off, indptr, indices).sum() <= 1 + 1e-12
        assert synopsis.trips(seq, off, g.n_states).sum() == 1
    # by hand: 0 -> 1 -> 4 -> 6 (touching all the way): three moves of 1 / 3, trip (0, 6)
    seq, off = np.array([0, 1, 4, 6]), np.array([0, 4])
    moves = synopsis.moves(seq, off, indptr, indices)
    assert moves.sum() == pytest.approx(1.0) and np.allclose(moves[moves > 0], 1 / 3)
    assert synopsis.trips(seq, off, 7)[0 * 7 + 6] == 1
    # an empty trajectory adds nothing anywhere
    seq2, off2 = np.array([0, 1, 4, 6]), np.array([0, 0, 4])
    assert np.allclose(synopsis.moves(seq2, off2, indptr, indices), moves)
    assert np.allclose(synopsis.density(seq2, off2, 7), synopsis.density(seq, off, 7))


def test_shortest_routes_and_extra_lengths_by_hand():
    g = grid()
    indptr, indices = g.neighbours()
    hop = synopsis.hops(indptr, indices)
    assert hop[0, 6] == 2 and hop[0, 3] == 1 and hop[5, 4] == 1 and hop[2, 2] == 0
    start, end = np.array([0, 2, 0]), np.array([6, 2, 3])
    assert synopsis.shortest(hop, start, end).tolist() == [3, 2, 2]      # a state to itself: [c, c]
    seq, off = np.array([0, 1, 4, 6, 2, 0, 2, 5]), np.array([0, 4, 5, 8])      # 0-1-4-6, 2, 0-2-5
    pair, extra = synopsis.extras(seq, off, hop, cap=5)
    assert pair.tolist() == [0 * 7 + 6, 2 * 7 + 2, 0 * 7 + 5] and extra.tolist() == [1, 0, 0]
    assert synopsis.extras(seq, off, hop, cap=0)[1].tolist() == [0, 0, 0]


def test_length_families_and_their_choice():
    for family in range(3):
        for mean in (0.0, 0.7, 3.0, 30.0):
            pmf = synopsis.family_pmf(family, mean, 10)
            assert pmf.shape == (11,) and pmf.sum() == pytest.approx(1.0) and (pmf >= 0).all()
    # a geometric histogram is told from a Poisson one of the same mean, and back
    geo, poi = synopsis.family_pmf(1, 2.0, 20) * 1e4, synopsis.family_pmf(2, 2.0, 20) * 1e4
    assert synopsis.choose_family(geo) == (1, pytest.approx(2.0, abs=1e-2))
    assert synopsis.choose_family(poi)[0] == 2
    assert synopsis.choose_family(np.full(9, 100.0))[0] == 0
    # a pair's mean: its noisy sum shrunk towards the pooled mean by `weight` pseudo-trips
    assert synopsis.pair_means(np.array([30.0, -50.0]), np.array([10.0, 0.0]), 2.0, 10.0, 20).tolist() == [2.5, 0.0]
    rng = np.random.default_rng(0)
    for family in range(3):
        draws = synopsis.sample_extras(family, np.full(20000, 2.0), 20, rng)
        assert draws.min() >= 0 and draws.max() <= 20 and draws.mean() == pytest.approx(2.0, abs=0.1)


def test_the_bridge_sums_to_one_and_reaches_the_end_at_the_sampled_length():
    g = grid()
    indptr, indices = g.neighbours()
    hop = synopsis.hops(indptr, indices)
    prob = synopsis.row_normalized(np.random.default_rng(1).random(indices.size), indptr)
    rows = np.repeat(np.arange(7), np.diff(indptr))
    assert np.allclose(np.bincount(rows, weights=prob), 1.0)
    # P^k[:, end] from the sparse P is the dense matrix power's column, scaled to max 1
    dense = np.zeros((7, 7))
    dense[rows, indices] = prob
    table = np.empty((6, 7))
    synopsis._bridge_table(indptr, indices, prob, 6, 5, table)
    for k in range(6):
        column = np.linalg.matrix_power(dense, k)[:, 6]
        assert np.allclose(table[k], column / column.max())
    # the bridge's step weights P[a, b] P^r[b, end] normalise to a distribution over a's neighbours
    a, r = 0, 3
    w = prob[indptr[a]:indptr[a + 1]] * table[r, indices[indptr[a]:indptr[a + 1]]]
    assert (w / w.sum()).sum() == pytest.approx(1.0)
    # routes: the start, the end at the sampled length, touching states in between
    start, end = np.array([0, 0, 2, 5, 3]), np.array([6, 6, 2, 4, 3])
    length = np.array([3, 7, 2, 5, 4])
    states, off = synopsis.bridges(indptr, indices, prob, hop, start, end, length, seed=3)
    assert np.diff(off).tolist() == length.tolist()
    for q in range(5):
        s = states[off[q]:off[q + 1]]
        assert s[0] == start[q] and s[-1] == end[q]
        assert all(b in indices[indptr[a]:indptr[a + 1]] for a, b in zip(s[:-1], s[1:]) if a != b)
    # empirically: the bridge's first step from 0 towards 6 in 3 states is P[0,b] P[b,6] normalised
    many = 4000
    states, off = synopsis.bridges(indptr, indices, prob, hop, np.zeros(many, np.int64), np.full(many, 6),
                                   np.full(many, 3), seed=4)
    second = states[off[:-1] + 1]
    expect = dense[0] * dense[:, 6]
    expect /= expect.sum()
    assert np.abs(np.bincount(second, minlength=7) / many - expect).max() < 0.03


def trips(n: int = 6):
    return trip_set([[0, 1, 2], [1, 2], [2, 1, 0], [0, 1], [1, 0], [0, 2, 1]] * (n // 6), [-1] * n, cols=3)


def test_fit_and_sample_spend_the_authors_split_and_give_dp_sized_trips():
    data = check_data()
    model = AdaTrace(epsilon=2.0, level1=3, time_share=0).fit(data)
    spends = model.ledger_.spends
    assert [s.mechanism for s in spends] == ["discrete-laplace"] + ["laplace"] * 5
    rest = 2.0 * 0.95
    assert [s.epsilon for s in spends] == pytest.approx([0.1, 0.05 * rest, 0.35 * rest, 0.5 * rest, 0.05 * rest,
                                                         0.05 * rest], rel=1e-6)
    assert spends[-1].sensitivity == model.max_extra and all(s.unit == "trace" for s in spends)
    # per person 2; per trace twice that: the bound of one trace per user is enforced by dropping
    assert model.ledger_.totals()["person"]["epsilon"] == pytest.approx(2.0) and not model.ledger_.uncovered
    assert model.ledger_.totals()["trace"]["epsilon"] == pytest.approx(4.0)
    out = model.sample(seed=3)
    assert out.n_traces == model.training_["dp_count"] and (out.users["hour"] == -1).all()
    assert (out.counts() <= model.max_length).all()
    same = out.user[1:] == out.user[:-1]
    assert not (same & (out.loc[1:] == out.loc[:-1])).any()
    assert np.array_equal(model.sample(seed=3).loc, out.loc) and model.sample(40, seed=1).n_traces == 40
    assert model.summary()["split"] == [0.05, 0.35, 0.5, 0.1]


def test_bad_split_is_refused():
    with pytest.raises(InputError, match="four positive shares"):
        AdaTrace(split=(0.5, 0.5)).fit(trips())


def test_the_grid_is_over_the_public_box_not_the_data():
    data = check_data()
    from locsynth.metrics.standard import planar

    x, y = planar(data.space)
    inner = data.select_users(np.arange(10))
    a, b = AdaTrace(level1=3).fit(data), AdaTrace(level1=3).fit(inner)
    assert a.grid_.box == b.grid_.box
    assert a.grid_.box[0] <= x.min() and a.grid_.box[2] >= x.max()


def test_the_counts_hold_their_sensitivity_on_neighbouring_inputs():
    check_dp_sensitivity(AdaTrace, check_data(), {"level1": 3})


def test_defences_name_what_epsilon_no_longer_covers_and_act(tmp_path):
    data = check_data()
    model = AdaTrace(level1=3, defences=True, time_share=0).fit(data)
    assert model.ledger_.uncovered == [DEFENCES_UNCOVERED]
    assert any("epsilon covers only the steps above" in line and "defences" in line
               for line in model.ledger_.describe())
    out = model.sample(seed=1)
    assert out.ledger.uncovered == model.ledger_.uncovered
    lines = model.describe_sample(out)
    assert lines[0].startswith("defences (CCS 2018 §5.2)") and len(lines) >= 4
    assert out.n_traces == model.training_["dp_count"]
    # the model keeps the real trajectories it reads; it saves and loads them
    model.save(tmp_path / "m")
    back = AdaTrace.load(tmp_path / "m")
    assert back.real_.keys() == model.real_.keys() and np.array_equal(back.real_["loc"], model.real_["loc"])
    # off by default: nothing uncovered, nothing real kept
    plain = AdaTrace(level1=3, time_share=0).fit(data)
    assert plain.real_ == {} and plain.ledger_.uncovered == [] and plain.describe_sample(plain.sample(seed=1)) == []


def test_defence_pieces_by_hand():
    assert defences.nth_densest(np.array([5, 9, 1, 7]), 2) == 3 and defences.nth_densest(np.array([5, 9]), 10) == 0
    assert defences.jsd([1, 0], [1, 0]) == 0.0 and defences.jsd([1, 0], [0, 1]) == pytest.approx(np.log(2))
    # an isolated start with few real starts near it fails plausible deniability; one in a crowd passes
    rng = np.random.default_rng(0)
    crowd = rng.normal(0, 1, (500, 2))
    syn = np.vstack([rng.normal(0, 1, (300, 2)), [[6.0, 6.0]]])
    real = np.vstack([crowd, [[6.2, 6.0]]])
    fail = defences._outliers(syn, real, diagonal=100.0)
    assert fail[-1] and fail.sum() == 1


@pytest.mark.slow
def test_release_holds_its_epsilon_and_an_exact_size_and_a_quiet_count_are_caught():
    x1 = trips()            # 6 trips on a 1 x 3 grid; level1 = 2 keeps the noise-driven split small
    x2 = without_last(x1)
    eps, relation = claimed(AdaTrace(epsilon=1.0, level1=2).fit(x1).sample(seed=0), "person")
    assert relation == "add-remove" and eps == pytest.approx(1.0)
    # AdaTrace's own spends: the time model's (the same for every trip method) are audited in test_trip_times.py
    honest = runs(lambda x, i: AdaTrace(epsilon=1.0, level1=2, time_share=0).fit(x).sample(seed=i), x1, x2, 160,
                  [size, at_location(0)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    exact = runs(lambda x, i: AdaTrace(epsilon=1.0, level1=2, size_share=0, time_share=0).fit(x).sample(
        x.n_traces, seed=i),
                 x1, x2, 60, [size])
    assert not audited(exact, 0, eps).passed
    # a mutant whose size count draws a hundredth of the noise it should (a count-epsilon of 5, where the
    # release claims 1 in all: 20 x less noise would only spend the whole 1 on the count, which passes)
    class Loud(AdaTrace):
        def _count_units(self, count, epsilon, share, unit):
            super()._count_units(count, 100 * epsilon, share, unit)
            return (1 - share) * epsilon

    loud = runs(lambda x, i: Loud(epsilon=1.0, level1=2, time_share=0).fit(x).sample(seed=i), x1, x2, 100, [size])
    assert not audited(loud, 0, eps).passed


def test_no_file_of_its_release_states_an_exact_training_size(sized, tmp_path):
    """test_release_dp's scan (issue #35) on AdaTrace's release with its evaluation."""
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.release.publish import release

    train, test = sized
    synthetic = AdaTrace(level1=3).fit(train).sample(seed=1)
    card = release(synthetic, tmp_path / "r", evaluation=evaluate(train, test, synthetic, sglt=False))
    assert card["attacks"]["withheld"] and "reid_rate" not in card["attacks"]
    counts, ratios = _forbidden(train, test)
    released = {card["traces"], card["events"], card["training"].get("dp_count")}
    assert _leaks(tmp_path / "r", counts - released, ratios) == []


def test_the_code_variant_has_the_authors_level1_states():
    """variant='code': the Markov model, trips and lengths on the level-1 cells (the authors' code),
    whatever the split; the paper's default splits the busy cells and keeps their level-2 states."""
    from locsynth.testing import check_data

    data = check_data()
    code = AdaTrace(epsilon=1.0, level1=3, variant="code").fit(data)
    assert code.grid_.n_states == 9 and (code.grid_.m == 1).all() and code.summary()["states"] == 9
    assert code.prob_.size == code.indptr_[-1] and code.trips_.size == 81
    assert code.sample(50, seed=1).n_traces == 50
    with pytest.raises(InputError, match="variant must be one of 'paper', 'code'"):
        AdaTrace(variant="java").fit(data)


def test_subcells_are_drawn_in_proportion_to_their_weights():
    """synopsis.subcells: level-1 state 0 owns cells 0..3 (weights 1, 0, 3, 0), state 1 owns cell 4,
    state 2 owns cells 5..6 with weights all 0 (uniform)."""
    first = np.array([0, 4, 5, 7])
    weights = np.array([1.0, 0.0, 3.0, 0.0, 2.0, 0.0, 0.0])
    states = np.repeat([0, 1, 2], 20000)
    got = synopsis.subcells(states, first, weights, np.random.default_rng(0))
    share = np.bincount(got[:20000], minlength=4) / 20000
    assert share[1] == share[3] == 0 and share[0] == pytest.approx(0.25, abs=0.01)
    assert (got[20000:40000] == 4).all()
    assert np.bincount(got[40000:] - 5, minlength=2) / 20000 == pytest.approx([0.5, 0.5], abs=0.015)


def test_the_code_variant_places_points_by_its_noisy_level2_densities(tmp_path):
    """As the authors' Cell.sampleRandomPoint: a state's point falls in one of its level-2 cells
    drawn by density (here the noisy densities of interpolated level-2 sequences, half the grid
    budget), then on a location inside it; saved and loaded, it places them the same way."""
    from locsynth.metrics.standard import planar

    data = check_data()
    code = AdaTrace(epsilon=1.0, level1=3, variant="code", time_share=0).fit(data)
    grid_spends = [s for s in code.ledger_.spends if "densities" in s.saw]
    assert [s.epsilon for s in grid_spends] == pytest.approx([0.05 * 0.95 / 2] * 2)
    split = np.flatnonzero(code.sub_m_ > 1)
    assert split.size and code.summary()["split_cells"] == split.size
    fine = TwoLevelGrid(code.grid_.box, 3, code.sub_m_)
    # a split state whose noisy densities kept something (the noise zeroes a state's now and then:
    # its level-2 cells are then drawn uniformly)
    weights = [code.sub_weights_[fine.offsets[s]:fine.offsets[s + 1]] for s in split]
    s = int(split[int(np.argmax([w.sum() for w in weights]))])
    states, offsets = np.full(30000, s), np.arange(30001)
    loc, _ = code.place(states, offsets, np.random.default_rng(2))
    where = fine.state(*planar(data.space))[loc] - fine.offsets[s]
    w = np.maximum(code.sub_weights_[fine.offsets[s]:fine.offsets[s + 1]], 0.0)
    expected = w / w.sum() if w.sum() > 0 else np.full(w.size, 1 / w.size)
    assert np.bincount(where, minlength=w.size) / loc.size == pytest.approx(expected, abs=0.015)
    code.save(tmp_path / "m")
    again = AdaTrace.load(tmp_path / "m")
    assert np.array_equal(again.sample(60, seed=4).loc, code.sample(60, seed=4).loc)
    check_dp_sensitivity(AdaTrace, data, {"level1": 3, "variant": "code"})

