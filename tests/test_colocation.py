"""The co-location synthesizer (paper 000) and TPM: worked examples, properties against plain
references, and end-to-end runs on Gowalla with its friend graph."""

from dataclasses import replace
from itertools import product

import networkx as nx
import numpy as np
import pytest
from helpers import traceset

from locsynth import InputError
from locsynth.metrics.colocation import friend_colocations, population_error, transition_error
from locsynth.metrics.colocation import colocation_counts
from locsynth.synth.colocation.counts import category_matrix, row_distributions
from locsynth.core.graphs import erdos_renyi, pair_of_index
from locsynth.synth.colocation.friendship import friendship_probability, noisy_friendship_probability
from locsynth.synth.colocation.generate import complete, place_colocations
from locsynth.synth.colocation.model import CoLocation
from locsynth.metrics.transitions import trimmed_transition_counts
from locsynth.synth.tpm import TPM, stationary, stochastic_rows


def with_friends(ts, edges):
    return replace(ts, friends=np.asarray(edges, np.int32).reshape(-1, 2))


def random_set(rng, n=12, L=3, T=6, density=0.6, p=0.4):
    traces = [[(t, int(rng.integers(L))) for t in range(T) if rng.random() < density] or [(0, 0)] for _ in range(n)]
    edges = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    return with_friends(traceset(traces, cols=L), edges)


def reference_counts(ts, trim):
    """Q by brute force: every cell's friend graph among the first ``trim`` events, matched by networkx."""
    L, ipd = ts.space.n_locations, ts.time.instants_per_day
    friends = set(map(tuple, ts.friends.tolist()))
    present = {}
    for u in range(ts.n_traces):
        t, loc = ts.events_of(u)
        for k in range(len(t) if trim is None else min(trim, len(t))):
            present.setdefault((int(t[k]), int(loc[k])), set()).add(u)
    Q = np.zeros((ipd, L), np.int64)
    for (t, x), users in present.items():
        g = nx.Graph([(a, b) for a in users for b in users if (a, b) in friends])
        Q[t % ipd, x] += len(nx.max_weight_matching(g, maxcardinality=True))
    return Q


def remove_user(ts, w):
    """The neighbour without user w: w keeps its row (n is public) but has no events and no friends."""
    keep = ts.user != w
    friends = ts.friends[(ts.friends != w).all(axis=1)] if ts.friends is not None else None
    out = type(ts)(ts.user[keep], ts.t[keep], ts.loc[keep], ts.users, ts.space, ts.time, ts.info, friends, None)
    return out


# -- co-location counts (§4.3) ------------------------------------------------------------------
def test_fig2_example_counts_two_colocations():
    """Paper 000 Fig. 2: u2 and u3 meet at x1 at t1, u1 and u2 at x2 at t2 (u1-u2 and u2-u3 friends)."""
    ts = with_friends(traceset([[(0, 2), (1, 1), (2, 2), (3, 2)], [(0, 0), (1, 1), (2, 0), (3, 1)],
                                [(0, 0), (1, 2), (2, 1), (3, 0)], [(0, 1), (1, 2), (2, 1), (3, 2)]]),
                      [(0, 1), (1, 2)])
    Q = colocation_counts(ts)
    assert Q.sum() == 2 and Q[0, 0] == 1 and Q[1, 1] == 1


def test_counts_equal_the_brute_force_matching():
    rng = np.random.default_rng(0)
    for trial in range(25):
        ts = random_set(rng)
        for trim in (None, 1, 3):
            assert np.array_equal(colocation_counts(ts, trim), reference_counts(ts, trim)), (trial, trim)


def test_a_group_counts_its_disjoint_pairs():
    """A star of 4 friends around user 0 at one place is 1 co-location; a triangle of friends too;
    two separate pairs are 2."""
    star = with_friends(traceset([[(0, 1)]] * 5), [(0, 1), (0, 2), (0, 3), (0, 4)])
    assert colocation_counts(star).sum() == 1
    triangle = with_friends(traceset([[(0, 1)]] * 3), [(0, 1), (0, 2), (1, 2)])
    assert colocation_counts(triangle).sum() == 1
    pairs = with_friends(traceset([[(0, 1)]] * 4), [(0, 1), (2, 3)])
    assert colocation_counts(pairs).sum() == 2
    assert colocation_counts(replace(pairs, friends=None), pairs="all").sum() == 2


def test_removing_any_user_moves_trimmed_counts_by_at_most_c():
    """The sensitivity claim of counts.py, checked for every user of random sets with stars."""
    rng = np.random.default_rng(1)
    worst = 0
    for _ in range(15):
        ts = random_set(rng, n=10, p=0.5, density=0.8)
        for c in (1, 2, 4):
            Q = colocation_counts(ts, c)
            for w in range(ts.n_traces):
                change = np.abs(Q - colocation_counts(remove_user(ts, w), c)).sum()
                assert change <= c
                worst = max(worst, change)
    assert worst == 4                                            # the bound is reached


def test_counts_need_a_friend_graph_or_all_pairs():
    ts = traceset([[(0, 1)], [(0, 1)]])
    with pytest.raises(InputError, match="friend graph"):
        colocation_counts(ts)
    with pytest.raises(InputError, match="unknown pairs"):
        colocation_counts(ts, pairs="strangers")


def test_row_distributions_shift_by_the_minimum():
    R = row_distributions(np.array([[-2.0, 0.0, 2.0], [1.0, 1.0, 2.0], [0.0, 0.0, 0.0]]))
    assert np.allclose(R.sum(axis=1), 1) and (R >= 0).all()
    assert np.allclose(R[0], [0, 2 / 6, 4 / 6]) and np.allclose(R[1], [0.25, 0.25, 0.5]) and np.allclose(R[2], 1 / 3)


def test_category_matrix_sums_columns():
    labels, Qbar = category_matrix(np.array([[1, 2, 3], [4, 5, 6]]), np.array(["b", "a", "b"]))
    assert list(labels) == ["a", "b"] and np.array_equal(Qbar, [[2, 4], [5, 10]])


# -- friendship probability and graphs (§4.2, §4.4) ----------------------------------------------
def test_fig1_friendship_probability():
    """Fig. 1: 5 users, friendships u1-u3, u1-u5, u2-u3, u4-u5: p = 8 / 20 = 0.4."""
    assert friendship_probability(4, 5) == pytest.approx(0.4)


def test_rewiring_one_user_moves_p_by_at_most_2_over_n():
    n = 6
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    worst = 0.0
    for mask in product([0, 1], repeat=len(pairs)):
        if sum(mask) % 3:                                       # a third of the 2^15 graphs
            continue
        edges = [p for p, m in zip(pairs, mask) if m]
        isolated = [e for e in edges if 0 not in e]
        worst = max(worst, abs(friendship_probability(len(edges), n) - friendship_probability(len(isolated), n)))
    assert worst == pytest.approx(2 / n)


def test_noisy_probability_is_clamped_and_recorded():
    from locsynth.privacy.ledger import Ledger

    ledger = Ledger()
    values = [noisy_friendship_probability(0, 3, 0.05, ledger=ledger) for _ in range(50)]
    assert min(values) == 0.0 and max(values) <= 1.0
    assert ledger.spends[0].sensitivity == pytest.approx(2 / 3) and ledger.spends[0].epsilon == pytest.approx(0.05)


def test_pair_index_and_erdos_renyi():
    n = 7
    a, b = pair_of_index(np.arange(n * (n - 1) // 2), n)
    assert [(x, y) for x, y in zip(a, b)] == [(x, y) for x in range(n) for y in range(x + 1, n)]
    rng = np.random.default_rng(0)
    sizes = [erdos_renyi(200, 0.05, rng).shape[0] for _ in range(20)]
    assert abs(np.mean(sizes) - 0.05 * 200 * 199 / 2) < 3 * np.sqrt(995 * 0.95 / 20)
    edges = erdos_renyi(200, 0.05, rng)
    assert (edges[:, 0] < edges[:, 1]).all() and len(np.unique(edges, axis=0)) == len(edges)
    assert len(erdos_renyi(30, 1.0, rng)) == 435 and len(erdos_renyi(30, 0.0, rng)) == 0


# -- generation (§4.4) ----------------------------------------------------------------------------
def test_placed_colocations_are_consistent():
    rng = np.random.default_rng(2)
    edges = erdos_renyi(50, 0.1, rng)
    rows = row_distributions(rng.random((24, 8)))
    fixed, placed = place_colocations(edges, rows, 50, 24, 300, seed=1)
    assert placed == 300
    together = 0
    for a, b in edges:
        shared = (fixed[a] >= 0) & (fixed[a] == fixed[b])
        together += shared.sum()
    assert together >= 300                                      # every placed event joins a pair of friends
    assert np.array_equal(fixed, place_colocations(edges, rows, 50, 24, 300, seed=1)[0])


def test_viterbi_completion_is_the_best_path_through_fixed_events():
    rng = np.random.default_rng(3)
    L, T = 3, 4
    for _ in range(10):
        P = rng.random((L, L)) ** 3
        P /= P.sum(axis=1, keepdims=True)
        pi = stationary(P)
        fixed = np.full((1, T), -1, np.int32)
        fixed[0, rng.integers(T)] = rng.integers(L)
        out = complete(np.zeros((1, T), np.int64), fixed, P, pi)[0]
        def score(p):
            return np.log(pi[p[0]]) + sum(np.log(P[p[t], p[t + 1]]) for t in range(T - 1))

        allowed = [p for p in product(range(L), repeat=T) if all(f < 0 or f == x for f, x in zip(fixed[0], p))]
        assert tuple(out) in allowed and score(out) == pytest.approx(max(map(score, allowed)))   # ties may differ


# -- TPM -----------------------------------------------------------------------------------------
def test_tpm_trims_each_users_transitions():
    ts = traceset([[(0, 0), (1, 1), (2, 2), (3, 0)], [(0, 2), (1, 2)]])
    assert trimmed_transition_counts(ts, None).sum() == 4
    C = trimmed_transition_counts(ts, 2)
    assert C.sum() == 3 and C[0, 1] == C[1, 2] == C[2, 2] == 1


def test_tpm_chain_is_stochastic_and_its_stationary_distribution_holds():
    rng = np.random.default_rng(4)
    P = stochastic_rows(rng.normal(size=(6, 6)) * 3)
    assert np.allclose(P.sum(axis=1), 1) and (P >= 0).all()
    pi = stationary(P)
    assert np.allclose(pi @ P, pi, atol=1e-9) and pi.sum() == pytest.approx(1)
    assert np.allclose(stationary(np.array([[0.0, 1.0], [1.0, 0.0]])), 0.5, atol=1e-3)   # periodic


def test_tpm_fit_sample_save_load(tmp_path):
    rng = np.random.default_rng(5)
    ts = random_set(rng, n=30, L=4, T=24)
    model = TPM(epsilon=2.0, trim=3).fit(ts)
    count, matrix = model.ledger_.spends
    assert count.mechanism == "discrete-laplace" and count.epsilon == pytest.approx(0.1)
    assert matrix.sensitivity == 3 and matrix.epsilon == pytest.approx(1.9)
    assert model.ledger_.totals()["user"]["epsilon"] == pytest.approx(2.0)
    a = model.sample(5, seed=1)
    assert a.n_traces == 5 and (a.users["source"] == -1).all() and not a.users["user_id"].isin(ts.users["user_id"]).any()
    b = TPM.load(model.save(tmp_path / "m")).sample(5, seed=1)
    assert np.array_equal(a.loc, b.loc)


# -- the synthesizer end to end ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def gowalla(data_dir, tmp_path_factory):
    """Gowalla's 1,000-user slice, its 100 most visited POIs, hours of one folded day (paper 000 §5.1)."""
    from locsynth.data.prepare import prepare

    root = data_dir / "gowalla-vldb17"
    return prepare(root / "Gowalla_3", "gowalla", tmp_path_factory.mktemp("gw") / "set", pois=100, instant="1h",
                   friends=root / "Gowalla_1", fold_days=True, timezone="America/Chicago")[""]


def test_colocation_on_gowalla(gowalla, tmp_path):
    model = CoLocation(theta=200).fit(gowalla)
    spends = model.ledger_.spends
    assert [s.mechanism for s in spends] == ["laplace", "privelet", "laplace"]
    assert sum(s.epsilon for s in spends) == pytest.approx(3.0, rel=1e-6)
    assert model.friendship_error_ < 0.02          # |Lap(2 / 814)| > 0.02 with probability e^-8
    synthetic = model.sample(seed=1)
    assert synthetic.n_traces == gowalla.n_traces and synthetic.friends is not None
    assert synthetic.info["colocations_placed"] == 200
    together = friend_colocations(synthetic, seed=0)
    assert together["friends"] > together["non_friends"]
    assert population_error(gowalla, synthetic)["mae"] < 0.02 and transition_error(gowalla, synthetic)["mae"] < 0.03
    again = CoLocation.load(model.save(tmp_path / "m")).sample(seed=1)
    assert np.array_equal(again.loc, synthetic.loc) and np.array_equal(again.friends, synthetic.friends)


def test_colocation_checks_its_parameters(gowalla):
    for bad, match in [(dict(mechanism="wavelet"), "mechanism must be one of"), (dict(graph="tree"), "graph must be one of"),
                       (dict(theta=-1), "theta"), (dict(trim=0), "trim"), (dict(epsilon1=0), "epsilon1")]:
        with pytest.raises(InputError, match=match):
            CoLocation(**bad).fit(gowalla)
    with pytest.raises(InputError, match="friend graph"):
        CoLocation().fit(replace(gowalla, friends=None))


def test_evaluate_reports_colocations_for_a_set_with_friends(gowalla):
    from locsynth.evaluation.evaluate import evaluate

    train, test = gowalla.split(0.5, seed=0)
    # epsilon1 = 5: at 1, p' (about 0.018 + Lap(0.005)) is clamped to 0, leaving no friends, 1 run in 80
    synthetic = CoLocation(theta=100, epsilon1=5.0).fit(train).sample(seed=1)
    report = evaluate(train, test, synthetic, attacks=("mia",), sglt=False)
    from locsynth.metrics.colocation import population_error, transition_error

    for name, error in (("population", population_error), ("transition", transition_error)):
        for column, other in (("synthetic", synthetic), ("training", train)):
            want = error(test, other)
            assert 0 < want["mse"] <= want["mae"] < 1                   # errors of shares: squares are smaller
            for stat in ("mae", "mse"):
                assert report.metrics[f"coloc_{name}_{stat}"][column] == pytest.approx(want[stat])
        # the other half of the real users predicts the test users better than a uniform guess
        assert report.metrics[f"coloc_{name}_mae"]["training"] < report.metrics[f"coloc_{name}_mae"]["uniform"]
    c = report.meta["colocations"]
    assert c["synthetic"]["friends"] > c["synthetic"]["non_friends"] and c["colocations_placed"] == 100
    html = report.to_html()
    assert "Co-locations (paper 000)" in html and "Population MAE" in html


def test_privelet_category_sums_follow_the_variance_formula_and_lose_to_laplace_on_small_categories():
    """Paper 000's Table 2 shape (4 categories, 12 sub-categories, 100 POIs): Privelet's
    top-level sums have the variance of privelet.top_level_variance (OpenDP's noise, 2000
    draws), which beats Laplace's 2 n_v (c / epsilon)^2 exactly for categories above the
    threshold of the module docstring (28 POIs at rho = 4, F = 4)."""
    from locsynth.privacy.privelet import generalized_sensitivity, privelet, top_level_variance
    from locsynth.privacy.hierarchy import Hierarchy

    per_sub = {"travel": [9, 9, 8, 8, 8], "shop": [8, 8, 8, 8], "arts": [9], "work": [9, 8]}
    cats = np.repeat(list(per_sub), [sum(v) for v in per_sub.values()])
    subs = np.concatenate([np.repeat([f"{c}{i}" for i in range(len(v))], v) for c, v in per_sub.items()])
    h = Hierarchy.from_levels(cats, subs)
    assert h.n_leaves == 100 and generalized_sensitivity(h) == 4
    c, eps, draws = 5, 1.0, 2000
    noisy = privelet(np.zeros((draws, 100)), h, eps, c)
    labels, sums = category_matrix(noisy, cats)
    expected = top_level_variance(h, eps, c)[0]
    # Sample variances of 2000 sums of Laplace draws have a relative sd of about 5 %: the four
    # categories pooled must lie within 10 % (4 sd), each alone within 25 % (5 sd).
    assert np.isclose(sums.var(axis=0).mean(), expected, rtol=0.10)
    assert np.allclose(sums.var(axis=0), expected, rtol=0.25)
    sizes = np.array([(cats == label).sum() for label in labels])
    laplace_variance = 2 * sizes * (c / eps) ** 2
    assert ((expected < laplace_variance) == (sizes > 28)).all()
    assert sorted(sizes) == [9, 17, 32, 42]


def test_completion_by_the_chains_tables_matches_per_user_viterbi():
    """More constrained users than locations take the prefix / bridge / suffix tables; every path
    keeps its fixed events and scores exactly as much as per-user Viterbi's."""
    from locsynth.synth.colocation import generate

    rng = np.random.default_rng(5)
    L, T, n = 6, 7, 40
    P = rng.random((L, L)) ** 4
    P[2] = 0.0                                               # a row of floors: ties are possible
    P[P < 0.05] = 0.0
    P /= np.maximum(P.sum(axis=1, keepdims=True), 1e-300)
    pi = rng.dirichlet(np.ones(L))
    fixed = np.where(rng.random((n, T)) < 0.25, rng.integers(0, L, (n, T)), -1).astype(np.int32)
    fixed[0] = -1
    fixed[1, :] = rng.integers(0, L, T)                      # every instant fixed
    walks = np.zeros((n, T), np.int64)
    fast = complete(walks, fixed, P, pi)                    # 39 rows > L: the tables
    rows = np.flatnonzero((fixed >= 0).any(axis=1))
    assert rows.size > L
    slow = walks.copy()
    log_p, log_first = np.log(np.maximum(P, generate.FLOOR)), np.log(np.maximum(pi, generate.FLOOR))
    generate._viterbi_all(log_p, log_first, fixed, rows, slow)

    def score(p):
        return log_first[p[0]] + log_p[p[:-1], p[1:]].sum()

    assert (fast[0] == 0).all()
    for u in rows:
        assert ((fixed[u] < 0) | (fast[u] == fixed[u])).all()
        assert score(fast[u]) == pytest.approx(score(slow[u]), abs=1e-9)


def test_leaf_rule_then_networkx_gives_maximum_matchings_of_sparse_graphs():
    """Sparse friend graphs at one place (trees, paths, cycles with pendants): matching degree-1
    users first, then networkx on the rest, equals networkx on the whole graph."""
    from locsynth.metrics.colocation import _leaf_matching

    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(2, 40))
        edges = {tuple(sorted(map(int, rng.choice(n, 2, replace=False)))) for _ in range(int(rng.integers(1, 2 * n)))}
        matched, rest = _leaf_matching(sorted(edges))
        if rest:
            matched += len(nx.max_weight_matching(nx.Graph(rest), maxcardinality=True))
        assert matched == len(nx.max_weight_matching(nx.Graph(sorted(edges)), maxcardinality=True)), trial


def test_theta_from_the_noisy_counts_is_bounded_by_one_event_per_user_and_instant():
    """At epsilon2 = 1e-300 the sum of Q' (noise of scale 1e300) asked for some 1e305 co-location
    events, too large an integer for the placing loop; an event takes two users at one instant,
    so n T / 2 is a public bound (issue 53)."""
    from locsynth.testing import check_data

    data = check_data()
    model = CoLocation(epsilon1=1.0, epsilon2=1e-300, epsilon_tpm=1.0, mechanism="laplace").fit(data)
    T = model.time_.instants_per_day
    assert 0 <= model.expected_theta(10, 2) <= 10 * 2 * T // 2
    assert model.sample(10, days=2, seed=0).n_traces == 10
    assert CoLocation(theta=10 ** 9).fit(data).expected_theta(10, 1) == 10 * T // 2
