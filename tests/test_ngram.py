"""NGRAM (Chen, Acs and Castelluccia, CCS 2012; synth/ngram.py): truncation, the exploration tree
in the noise-free limit, consistency, the adaptive budget, generation, and an end-to-end DP
audit of the noisy tree on neighbouring trip sets with a mutant that forgets truncation."""

from dataclasses import replace

import numpy as np
import pytest
from helpers import traceset

from locsynth import InputError
from locsynth.privacy.audit import audit
from locsynth.synth.ngram import (NGRAM, GramIndex, enforce_consistency, explore, gram_counts, levels_needed,
                                  start_counts, threshold, walk)

END = 6                                     # the end symbol of a 6-cell alphabet


def chains(n_long=30, n_short=20):
    """Two routes whose every gram has one continuation: 0 1 2 3 and 4 5."""
    return [[0, 1, 2, 3]] * n_long + [[4, 5]] * n_short


def true_histogram(index, gram):
    """Counts of gram.x for x in 0..L (the reference counter of synth/ngram.py)."""
    counts = gram_counts(index, len(gram) + 1)
    return np.array([counts.get(gram + (x,), 0) for x in range(index.n_symbols + 1)], float)


def test_truncation_keeps_the_first_l_max_symbols_and_appends_the_end():
    index = GramIndex.from_sequences([[0, 1, 2, 3, 4], [5]], 6, 3)
    assert index.lengths.tolist() == [3, 1]
    assert index.symbols.tolist() == [[0, 1, 2, END], [5, END, -1, -1]]
    assert gram_counts(index, 1) == {(0,): 1, (1,): 1, (2,): 1, (5,): 1}            # no unigram &
    assert gram_counts(index, 2) == {(0, 1): 1, (1, 2): 1, (2, END): 1, (5, END): 1}
    with pytest.raises(InputError, match="symbols must be in 0..5"):
        GramIndex.from_sequences([[6]], 6, 3)


def test_noise_free_limit_reproduces_the_n_gram_counts_and_the_sequences():
    index = GramIndex.from_sequences(chains(), 6, 20)
    tree = explore(index, 1e9, n_max=5, l_max=20)
    for v, gram in enumerate(tree.grams()):
        assert np.allclose(tree.counts[v], true_histogram(index, gram), atol=1e-5), gram
    # every gram of the data up to n_max = 5 symbols is in the tree, at full depth
    grams = set(tree.grams())
    assert {(0, 1, 2, 3), (4, 5)} <= grams and tree.level.max() == 4
    assert np.allclose(start_counts(tree), [30, 0, 0, 0, 20, 0], atol=1e-5)
    loc, length = walk(tree.counts, tree.next_node, start_counts(tree), 2000, 20, seed=3)
    sequences = np.split(loc, np.cumsum(length)[:-1])
    kinds = [tuple(s.tolist()) for s in sequences]
    assert set(kinds) == {(0, 1, 2, 3), (4, 5)}
    assert abs(kinds.count((0, 1, 2, 3)) / 2000 - 0.6) < 0.05                     # 30 of 50 trips


def test_noisy_tree_is_consistent_and_spends_epsilon_along_every_path():
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, 5, rng.integers(1, 9)).tolist() for _ in range(400)]
    index = GramIndex.from_sequences(seqs, 5, 6)
    tree = explore(index, 2.0, n_max=4, l_max=6)
    assert tree.level.max() >= 1 and (tree.counts >= 0).all()
    inner = np.flatnonzero(tree.parent >= 0)
    parent_count = tree.counts[tree.parent[inner], tree.symbol[inner]]
    assert np.allclose(tree.counts[inner].sum(axis=1), parent_count)               # children sum to parent
    path = tree.path_epsilon()
    assert (path <= 2.0 * (1 + 1e-12)).all() and tree.opendp_epsilon == pytest.approx(2.0, rel=1e-9)
    last = tree.levels_left == 1
    assert np.allclose(path[last], 2.0)                                             # the last level takes the rest
    assert np.allclose(tree.epsilon[tree.parent < 0], 2.0 / 4)                      # the root: epsilon / n_max
    # a node's Markov parent is a proper suffix of its gram
    grams = tree.grams()
    for v in inner:
        m = grams[tree.markov[v]]
        assert len(m) < len(grams[v]) and grams[v][len(grams[v]) - len(m):] == m


def test_consistency_fills_unreleased_bins_by_hand():
    noisy = np.array([[5.0, 1.0, 3.0, -2.0]] * 2 + [[5.0, -1.0, 3.0, 2.0]])
    released = np.array([[True, False, True, False]] * 2 + [[True] * 4])
    markov = np.array([[2.0, 4.0, 2.0, 2.0]] * 3)
    out = enforce_consistency(noisy, released, np.array([10.0, 10.0, 5.0]), markov, np.array([False, True, False]))
    # Markov parent below the root: 8 released, filled 8 * (4, 2) / 4 = (8, 4), scaled by 10 / 20
    assert np.allclose(out[0], [2.5, 4.0, 1.5, 2.0])
    # the root as Markov parent: the 2 the parent count leaves, shared equally
    assert np.allclose(out[1], [5.0, 1.0, 3.0, 1.0])
    # every bin released: negatives to 0, scaled to the parent count 5
    assert np.allclose(out[2], [2.5, 0.0, 1.5, 1.0])


def test_threshold_and_adaptive_levels_by_hand():
    assert threshold(np.array([0.5]), 20, 200)[0] == pytest.approx(40 * np.log(100))
    assert threshold(np.array([1.0]), 20, 2)[0] == 0.0
    # log_0.5(10 / 100) = 3.32 -> 4, capped by the 3 levels left; log_0.1(0.1) = 1
    h = levels_needed(np.array([10.0, 10.0, 10.0, 10.0]), np.array([100.0, 100.0, 100.0, 100.0]),
                      np.array([0.5, 0.1, 1.0, 0.0]), np.array([3, 3, 3, 3]))
    assert h.tolist() == [3, 1, 3, 3]


def test_start_counts_subtract_what_follows_another_cell():
    index = GramIndex.from_sequences([[0, 1, 2]] * 4 + [[1, 2]] * 2, 3, 20)
    tree = explore(index, 1e9, n_max=3, l_max=20)
    assert np.allclose(start_counts(tree), [4, 2, 0], atol=1e-5)


def test_fit_and_sample_trips(tmp_path):
    ts = traceset([[(k, c) for k, c in enumerate(s)] for s in chains()], cols=6)
    model = NGRAM(epsilon=1e9, l_max=3, time_share=0, footprint_share=0).fit(ts)
    count, spend = model.ledger_.spends
    assert (count.mechanism, count.unit, count.sensitivity) == ("discrete-laplace", "trace", 1.0)
    assert (spend.mechanism, spend.unit, spend.sensitivity) == ("laplace", "trace", 3.0)
    syn = model.sample(500, seed=2)
    assert syn.n_traces == 500 and (syn.counts() <= 3).all() and (syn.users["hour"] == -1).all()
    assert (syn.users["source"] == -1).all()
    assert np.array_equal(syn.loc, model.sample(500, seed=2).loc)
    assert not np.array_equal(syn.loc, model.sample(500, seed=3).loc)
    t, loc = syn.events_of(0)
    assert t.tolist() == list(range(t.size))
    truncated = {tuple(syn.events_of(i)[1].tolist()) for i in range(syn.n_traces)}
    assert truncated == {(0, 1, 2), (4, 5)}                                        # l_max = 3 cuts 0 1 2 3
    model.save(tmp_path / "m")
    assert np.array_equal(NGRAM.load(tmp_path / "m").sample(500, seed=2).loc, syn.loc)


def test_bad_input():
    ts = traceset([[(0, 0), (1, 1)]], cols=3)
    for params, message in ((dict(epsilon=0), "epsilon must be a positive"),
                            (dict(n_max=0), "n_max must be at least 1"), (dict(l_max=2.5), "l_max must be")):
        with pytest.raises(InputError, match=message):
            NGRAM(**params).fit(ts)
    untruncated = GramIndex.from_sequences([[0, 1, 2]], 3, None)
    with pytest.raises(InputError, match="truncated to l_max = 2"):
        explore(untruncated, 1.0, 2, 2)


def test_on_the_30_cabs_the_most_frequent_patterns_survive(data_dir):
    """Paper 004 Table 3: NGRAM finds 90% of the top-10 patterns of SF-TAXI-500 at epsilon = 1."""
    from locsynth.metrics.trips import frequent_pattern_precision
    from locsynth.data.trips import read_trips

    path = data_dir / "sf-cabspotting" / "cabs"
    if not path.is_dir():
        pytest.skip("Cabspotting cabs not found")
    trips = read_trips(path, 500)
    model = NGRAM(epsilon=1.0).fit(trips)
    assert model.ledger_.totals()["person"]["epsilon"] == pytest.approx(1.0)
    syn = model.sample(seed=0)
    assert syn.n_traces == model.training_["dp_count"] and syn.counts().max() <= 20
    assert abs(syn.n_traces - trips.n_traces) < 400          # a DP count of scale 20
    assert frequent_pattern_precision(trips, syn, ks=(10,))[10] >= 0.6


# -- the DP audit ----------------------------------------------------------------------------------

EPS, N_MAX, L_MAX, N, BETA, REPEATS = 1.0, 2, 2, 10_000, 0.001, 1
BINS = np.linspace(-EPS, EPS, 11)[1:-1]
BASE = [[0, 1]] * 15 + [[1, 0]] * 15
LONG = [0, 1, 0, 1, 0, 1]


def loss_statistic(x1, x2):
    """The privacy loss ln p1(y) / p2(y) of each replica's transcript y (every noisy histogram),
    from the true histograms of its nodes' grams under both inputs; adaptive choices (which nodes,
    which budgets) are functions of earlier outputs, so the loss is the sum over nodes."""
    memo = {}

    def hist(index, gram):
        key = (id(index), gram)
        if key not in memo:
            memo[key] = true_histogram(index, gram)
        return memo[key]

    def statistic(tree):
        grams = tree.grams()
        x1s = np.array([hist(x1, g) for g in grams])
        x2s = np.array([hist(x2, g) for g in grams])
        scale = L_MAX / tree.epsilon
        per_node = (np.abs(tree.noisy - x2s) - np.abs(tree.noisy - x1s)).sum(axis=1) / scale
        return np.bincount(tree.replica, weights=per_node, minlength=tree.replicas)

    return statistic


def run_audit(x1, x2):
    return audit(lambda index, n: explore(index, EPS, N_MAX, L_MAX, replicas=n), x1, x2, EPS, samples=N, beta=BETA,
                 repeats=REPEATS, bins=BINS, statistic=loss_statistic(x1, x2))


@pytest.mark.slow
def test_noisy_tree_holds_epsilon_and_a_mutant_without_truncation_is_caught():
    """Neighbours differ in one trip of six cells; l_max = 2 keeps two. Truncated, the trip moves
    each level's counts by l_max = 2 (the worst case); untruncated, by 6."""
    x1, x2 = GramIndex.from_sequences(BASE + [LONG], 3, L_MAX), GramIndex.from_sequences(BASE, 3, L_MAX)
    for depth in (0, 1):
        moved = sum(abs(a - b) for a, b in _level_diff(x1, x2, depth + 1))
        assert moved == L_MAX
    honest = run_audit(x1, x2)
    assert honest.passed, str(honest)
    m1 = replace(GramIndex.from_sequences(BASE + [LONG], 3, None), l_max=L_MAX)
    m2 = replace(GramIndex.from_sequences(BASE, 3, None), l_max=L_MAX)
    assert sum(abs(a - b) for a, b in _level_diff(m1, m2, 1)) == 6
    mutant = run_audit(m1, m2)
    assert not mutant.passed, str(mutant)


def _level_diff(x1, x2, n):
    c1, c2 = gram_counts(x1, n), gram_counts(x2, n)
    return [(c1.get(g, 0), c2.get(g, 0)) for g in set(c1) | set(c2)]


def dense_walks(counts, next_node, starts, n, l_max, seed, min_len):
    """The walks as the dense rows of running sums give them (synth/ngram.py step 6), a plain loop:
    the reference of the sparse rows' sampler."""
    uniforms = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(13,))).random((n, l_max))
    cdf = np.cumsum(np.floor(counts), axis=1)
    end = cdf.shape[1] - 1
    start_cdf = np.cumsum(starts if starts.sum() > 0 else np.ones_like(starts))

    def draw_except(row, x, u):
        before = row[x - 1] if x > 0 else 0.0
        own = row[x] - before
        total = row[end - 1] - own
        if total <= 0:
            return -1
        target = u * total + (own if u * total >= before else 0.0)
        return min(int(np.searchsorted(row[:end], target, side="right")), end - 1)

    walks = []
    for i in range(n):
        seq = [min(int(np.searchsorted(start_cdf, uniforms[i, 0] * start_cdf[-1], side="right")), end - 1)]
        v = next_node[0, seq[0]]
        while len(seq) < l_max:
            k, row = len(seq), cdf[v]
            if k < min_len:
                y = draw_except(row, seq[-1], uniforms[i, k])
                y = draw_except(cdf[0], seq[-1], uniforms[i, k]) if y < 0 else y
                if y < 0 and end > 1:                  # the root holds no other symbol: any other
                    y = min(int(uniforms[i, k] * (end - 1)), end - 2)
                    y += y >= seq[-1]
                if y < 0:
                    break
            else:
                y = min(int(np.searchsorted(row, uniforms[i, k] * row[-1], side="right")), end) if row[-1] > 0 else end
                if y == end:
                    break
            seq.append(y)
            v = next_node[v, y]
        walks.append(seq)
    return walks


@pytest.mark.parametrize("min_len", [1, 3])
def test_walks_on_the_sparse_rows_are_the_walks_on_the_dense_ones(min_len):
    """A tree of many nodes, most of each row below 1 after flooring: every walk equal to the plain
    loop over the dense running sums."""
    rng = np.random.default_rng(4)
    seqs = []
    for _ in range(20000):                   # each symbol followed by one of the next two
        seq = [int(rng.integers(0, 20))]
        for _ in range(int(rng.integers(1, 10))):
            seq.append((seq[-1] + int(rng.integers(1, 3))) % 20)
        seqs.append(seq)
    tree = explore(GramIndex.from_sequences(seqs, 20, 10), 5.0, n_max=4, l_max=10)
    assert tree.n_nodes > 100 and tree.level.max() == 3 and (np.floor(tree.counts) == 0).mean() > 0.5
    loc, length = walk(tree.counts, tree.next_node, start_counts(tree), 400, 10, seed=9, min_len=min_len)
    got = [s.tolist() for s in np.split(loc, np.cumsum(length)[:-1])]
    assert got == dense_walks(tree.counts, tree.next_node, start_counts(tree), 400, 10, 9, min_len)


def test_a_walk_leaves_its_first_cell_when_the_root_released_one():
    """On a few hundred trips one noisy cell alone may pass the root's threshold: every walk then
    starts there, and the public minimum of two cells sends it to another symbol, uniformly, instead
    of stopping at one point (issue 54)."""
    from locsynth.synth.ngram import walk

    L = 6
    counts = np.zeros((1, L + 1))
    counts[0, 2] = 40.0                                      # the root released cell 2 alone
    next_node = np.zeros((1, L + 1), np.int64)
    loc, length = walk(counts, next_node, counts[0, :-1].copy(), 500, 5, seed=0, min_len=2)
    assert (length >= 2).all()
    starts = np.r_[0, np.cumsum(length)[:-1]]
    assert (loc[starts] == 2).all() and (loc[starts + 1] != 2).all()
    assert set(loc[starts + 1].tolist()) == {0, 1, 3, 4, 5}
    assert np.array_equal(walk(counts, next_node, counts[0, :-1].copy(), 500, 5, seed=0, min_len=2)[0], loc)
