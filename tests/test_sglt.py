"""SGLT (paper 002): similarities against brute force, the decoder against exhaustive search, the
privacy tests on worked cases, the parts' invariants, and the acceptance run on PF."""

import itertools

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from locsynth import InputError
from locsynth.data.simulate import simulate
from locsynth.synth.sglt import SGLT
from locsynth.synth.sglt.generate import semantic_seed, viterbi
from locsynth.synth.sglt.mobility import (aggregate_model, day_traces, fill_missing, period_of,
                                          sorted_profiles, visit_profiles)
from locsynth.synth.sglt.similarity import (best_mapping, geographic_similarity, period_mappings,
                                            semantic_similarity, semantic_value_sorted)


@pytest.fixture(scope="module")
def city():
    return simulate(60, seed=3).split(0.5, seed=0)


@pytest.fixture(scope="module")
def fitted(city):
    return SGLT(clusters=8).fit(city[0])


def _profile(rows):
    """CSR profile (n_users * periods, R) from dense rows."""
    a = np.asarray(rows, float)
    a = a / a.sum(axis=1, keepdims=True)
    p = sp.csr_array(a)
    p.sort_indices()
    return p


# -- eq. (10) -------------------------------------------------------------------------------------
def test_eq10_equals_brute_force_over_all_mappings():
    # two users on 6 locations, 2 periods: u lives at 0 and works at 1, v lives at 3 and works at 4
    R, P = 6, 2
    prof = _profile([[6, 2, 0, 0, 0, 1], [1, 7, 1, 0, 0, 0],        # u: morning, afternoon
                     [0, 0, 0, 5, 1, 2], [0, 1, 0, 0, 6, 0]])       # v
    weight = np.array([[0.6, 0.4], [0.3, 0.7]])
    dense = prof.toarray()
    brute = 0.0
    for tau in range(P):
        a, b = dense[tau], dense[P + tau]
        brute += weight[0, tau] * max(np.minimum(a, b[list(sigma)]).sum()
                                      for sigma in itertools.permutations(range(R)))
    sim, pairs = semantic_similarity(prof, weight, 0, 1, P)
    assert sim == pytest.approx(brute, abs=1e-12)
    # home maps to home and work to work in the morning
    r, r2, _ = pairs[0]
    assert dict(zip(r, r2))[0] == 3
    # asymmetric in the periods' weights only
    back, _ = semantic_similarity(prof, weight, 1, 0, P)
    values, _ = period_mappings(prof, 0, 1, P)
    assert back == pytest.approx(weight[1] @ values)


def test_assignment_value_equals_sorted_pairing_and_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.dirichlet(np.ones(rng.integers(1, 6)))
        b = rng.dirichlet(np.ones(rng.integers(1, 6)))
        value, i, j = best_mapping(a, b)
        n = max(a.size, b.size)
        pa, pb = np.pad(a, (0, n - a.size)), np.pad(b, (0, n - b.size))
        brute = max(np.minimum(pa, pb[list(s)]).sum() for s in itertools.permutations(range(n)))
        srt = semantic_value_sorted(np.sort(pa)[::-1][None], np.ones(1), np.sort(pb)[::-1][None])
        assert value == pytest.approx(brute) == pytest.approx(srt)
        assert len(set(i)) == i.size and len(set(j)) == j.size


def _assert_scipys_mapping(a, b, width):
    """fit's compiled mapping of a to b is scipy's linear_sum_assignment's, pair for pair."""
    from locsynth.synth.sglt.similarity import _assign_buffers, _mapping

    pair = np.empty(width, np.int64)
    value, i, j = best_mapping(a, b)
    got = _mapping(a, b, pair, _assign_buffers(width))
    mapped = np.flatnonzero(pair[:a.size] >= 0)
    assert got == pytest.approx(value, abs=1e-12)
    assert mapped.tolist() == i.tolist() and pair[mapped].tolist() == j.tolist()


def test_compiled_assignment_makes_scipys_choices_on_ties():
    """fit's compiled assignment against scipy's linear_sum_assignment on visit profiles with many
    equal probabilities (counts over few instants), where many mappings are optimal: the same
    mapping, so the location graph and the classes are those of the pair-by-pair reference."""
    rng = np.random.default_rng(4)
    for _ in range(3000):
        na, nb = rng.integers(1, 12, 2)
        a = rng.integers(1, 5, na) / rng.choice([6, 30, 1000])
        b = rng.integers(1, 5, nb) / rng.choice([6, 30, 1000])
        if rng.random() < 0.5:
            a, b = a / a.sum(), b / b.sum()
        _assert_scipys_mapping(a, b, 12)


def test_compiled_assignment_makes_scipys_choices_on_large_supports():
    """The same on supports of the sizes Foursquare users have (up to 150 locations, visit counts
    over a month of hours): long augmenting paths, columns leaving and coming back to the scan
    order many times per row."""
    rng = np.random.default_rng(8)
    for _ in range(60):
        na, nb = rng.integers(20, 151, 2)
        a = rng.geometric(rng.uniform(0.1, 0.6), na).astype(float)
        b = rng.geometric(rng.uniform(0.1, 0.6), nb).astype(float)
        _assert_scipys_mapping(a / a.sum(), b / b.sum(), 150)


def test_geographic_similarity_hamming_closed_form_equals_emd():
    rng = np.random.default_rng(1)
    R = 7
    hamming = 1.0 - np.eye(R)
    for _ in range(20):
        su = np.sort(rng.choice(R, 4, replace=False))
        sv = np.sort(rng.choice(R, 3, replace=False))
        au, av = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(3))
        closed = geographic_similarity((su, au), (sv, av))
        assert closed == pytest.approx(geographic_similarity((su, au), (sv, av), hamming))
    # identical distributions: 1; disjoint supports at the largest distance: 0
    d = np.array([[0, 1.0], [1.0, 0]])
    one = (np.array([0]), np.array([1.0]))
    assert geographic_similarity(one, one, d) == pytest.approx(1.0)
    assert geographic_similarity(one, (np.array([1]), np.array([1.0])), d) == pytest.approx(0.0)


# -- mobility models ------------------------------------------------------------------------------
def test_day_traces_and_fill_keep_observed_events(city):
    train = city[0]
    sparse = train.select_users(np.arange(10))
    keep = np.random.default_rng(0).random(sparse.n_events) < 0.4
    keep[np.searchsorted(sparse.user, np.arange(10))] = True            # every user keeps an event
    thin = type(sparse)(sparse.user[keep], sparse.t[keep], sparse.loc[keep], sparse.users, sparse.space,
                        sparse.time)
    days = day_traces(thin)
    assert days.locs.shape == (10, 24) and days.missing == 240 - keep.sum()
    filled = fill_missing(days, train.space, seed=4)
    observed = days.locs >= 0
    assert (filled.locs >= 0).all() and np.array_equal(filled.locs[observed], days.locs[observed])
    assert np.array_equal(fill_missing(days, train.space, seed=4).locs, filled.locs)
    other = fill_missing(days, train.space, seed=5).locs
    assert not np.array_equal(other, filled.locs) and np.array_equal(other[observed], filled.locs[observed])
    complete = day_traces(train)
    assert fill_missing(complete, train.space) is complete
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert np.array_equal(fill_missing(days, train.space, seed=4).locs, filled.locs)
    finally:
        numba.set_num_threads(before)



def _reference_fill(days, space, seed: int) -> np.ndarray:
    """fill_missing's Gibbs sweeps as its docstring states them, one instant at a time in numpy."""
    from locsynth.metrics.transitions import period_transition_counts
    from locsynth.core.rng import uniform, user_words
    from locsynth.synth.sglt import mobility

    prior, locs = mobility.FILL_PRIOR, days.locs.copy()
    R, T = space.n_locations, locs.shape[1]
    agg = mobility._rows_normalized(period_transition_counts(locs, np.zeros(T, np.int64), R, 1)[0],
                                    mobility.distance_kernel(space))
    words = user_words(seed, 7, 0, int(days.owner.max()) + 1)[:, 0]
    for u in np.unique(days.owner):
        rows = np.flatnonzero(days.owner == u)
        c, visits = np.zeros((R, R)), np.zeros(R)
        for day in locs[rows]:
            np.add.at(visits, day[day >= 0], 1.0)
            both = (day[:-1] >= 0) & (day[1:] >= 0)
            np.add.at(c, (day[:-1][both], day[1:][both]), 1.0)
        n = c.sum(axis=1)
        state = np.array([words[u]], np.uint64)
        for d in rows:
            miss = np.flatnonzero(locs[d] < 0)
            seen = np.flatnonzero(locs[d] >= 0)
            for t in miss:            # the nearest observed location before, else after
                before = seen[seen < t]
                locs[d, t] = locs[d, before[-1]] if before.size else locs[d, seen[seen > t][0]]
            for _ in range(mobility.FILL_SWEEPS):
                for t in miss:
                    if t > 0:
                        a = locs[d, t - 1]
                        p = (c[a] + prior * agg[a]) / (n[a] + prior)
                    else:
                        p = (visits + prior / R) / (visits.sum() + prior)
                    if t + 1 < T:
                        b = locs[d, t + 1]
                        p = p * ((c[:, b] + prior * agg[:, b]) / (n + prior))
                    w = np.cumsum(p)
                    locs[d, t] = min(np.searchsorted(w, uniform(state) * w[-1], side="right"), R - 1)
    return locs


def test_fill_equals_its_plain_sweeps_with_and_without_kept_rows(city, monkeypatch):
    """The compiled filling keeps the rows of each user's chain it needs (ROW_SLOTS of each
    factor); with every row kept and with one, its traces are the plain sweeps' exactly."""
    from locsynth.synth.sglt import mobility

    train = city[0].select_users(np.arange(12))
    keep = np.random.default_rng(1).random(train.n_events) < 0.3
    keep[np.searchsorted(train.user, np.arange(12))] = True
    thin = type(train)(train.user[keep], train.t[keep], train.loc[keep], train.users, train.space, train.time)
    days = day_traces(thin)
    want = _reference_fill(days, train.space, seed=3)
    assert np.array_equal(fill_missing(days, train.space, seed=3).locs, want)
    monkeypatch.setattr(mobility, "ROW_SLOTS", 1)
    assert np.array_equal(fill_missing(days, train.space, seed=3).locs, want)

def test_aggregate_model_is_stochastic_and_averages_users(city):
    train = city[0]
    days = day_traces(train)
    period = period_of(24, 4)
    agg = aggregate_model(days.locs, days.owner, period, train.space, 4, smoothing=0.1)
    assert np.allclose(agg.P.sum(axis=2), 1.0) and (agg.P > 0).all()
    assert np.allclose(agg.pi.sum(axis=1), 1.0)
    pi = agg.stationary()
    assert np.allclose(pi @ agg.P[0], pi, atol=1e-9)
    # without smoothing, a row only one user leaves is that user's row
    plain = aggregate_model(days.locs, days.owner, period_of(24, 1), train.space, 1, smoothing=0.0)
    a, b = days.locs[:, :-1].ravel(), days.locs[:, 1:].ravel()
    own = np.repeat(days.owner, 23)
    for r in np.unique(a):
        users = np.unique(own[a == r])
        if users.size == 1:
            sel = a == r
            expected = np.bincount(b[sel], minlength=train.space.n_locations) / sel.sum()
            assert np.allclose(plain.P[0, r], expected)
            break
    with pytest.raises(InputError, match="smoothing"):
        aggregate_model(days.locs, days.owner, period, train.space, 4, smoothing=2)


def test_visit_profiles_are_distributions(city):
    train = city[0]
    days = day_traces(train)
    prof, weight = visit_profiles(days.locs, days.owner, train.n_traces, period_of(24, 3),
                                  train.space.n_locations, 3)
    assert np.allclose(prof.sum(axis=1), 1.0) and np.allclose(weight.sum(axis=1), 1.0)
    srt = sorted_profiles(prof, train.n_traces, 3)
    assert np.allclose(srt.sum(axis=2), 1.0) and (np.diff(srt, axis=2) <= 0).all()


# -- generation ------------------------------------------------------------------------------------
def _all_paths_best(sets, log_p, log_pi):
    best, arg = -np.inf, None
    for path in itertools.product(*sets):
        s = log_pi[0, path[0]] + sum(log_p[0, a, b] for a, b in zip(path, path[1:]))
        if s > best:
            best, arg = s, path
    return list(arg), best


def test_viterbi_with_par_v_one_returns_the_most_likely_path():
    rng = np.random.default_rng(2)
    R = 6
    for _ in range(20):
        P = rng.dirichlet(np.ones(R), size=R)[None]
        pi = rng.dirichlet(np.ones(R))[None]
        sets = [np.sort(rng.choice(R, rng.integers(1, 4), replace=False)) for _ in range(5)]
        ptr = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(np.int64)
        out = np.empty(5, np.int64)
        ll = viterbi(ptr, np.concatenate(sets).astype(np.int64), np.log(P), np.log(pi), np.zeros(5, np.int64),
                     1.0, np.zeros(1, np.uint64), out)
        path, best = _all_paths_best(sets, np.log(P), np.log(pi))
        assert out.tolist() == path and ll == pytest.approx(best)


def test_semantic_seed_follows_par_l_and_the_classes():
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 2], np.int64)
    order = np.argsort(labels, kind="stable").astype(np.int64)
    mptr = np.searchsorted(labels[order], np.arange(4)).astype(np.int64)
    seed = np.array([0, 0, 3, 3, 6, 6], np.int64)
    R, T = labels.size, seed.size
    ptr, buf = np.empty(T + 1, np.int64), np.empty(T * R, np.int64)
    args = (np.empty(R, np.bool_), np.zeros(R, np.int64), ptr, buf)
    # nothing removed, nothing merged, true location always removed: the class without it
    semantic_seed(seed, labels, mptr, order, 0.0, 0.0, 1.0, False, np.array([5], np.uint64), *args)
    sets = [set(buf[ptr[t]:ptr[t + 1]]) for t in range(T)]
    assert sets == [{1, 2}, {1, 2}, {4, 5}, {4, 5}, {7}, {7}]
    # par_l = 0 keeps it; par_m = 1 merges the neighbouring classes at every change
    semantic_seed(seed, labels, mptr, order, 0.0, 1.0, 0.0, False, np.array([5], np.uint64), *args)
    sets = [set(buf[ptr[t]:ptr[t + 1]]) for t in range(T)]
    assert sets[0] == {0, 1, 2, 3, 4, 5} and sets[2] == set(range(8)) and sets[5] == {3, 4, 5, 6, 7}
    # a class of one location without it falls back to every other location
    lone = np.array([0, 0, 0, 1, 1, 1, 2, 3], np.int64)
    o = np.argsort(lone, kind="stable").astype(np.int64)
    semantic_seed(np.array([7, 7], np.int64), lone, np.searchsorted(lone[o], np.arange(5)).astype(np.int64), o,
                  0.0, 0.0, 1.0, False, np.array([1], np.uint64), np.empty(R, np.bool_), np.zeros(R, np.int64),
                  ptr[:3], buf)
    assert set(buf[ptr[0]:ptr[1]]) == set(range(7))


# -- the privacy tests ------------------------------------------------------------------------------
def test_a_trace_identical_to_its_seed_fails_the_intersection_test(fitted):
    seed_trace = fitted.day_locs_[fitted.day_ptr_[0]]
    scores = fitted.privacy_scores(seed_trace, 0)
    assert scores["intersection"] == 24 and scores["geo_similarity"] == pytest.approx(1.0) and not scores["passed"]
    # a fake that never meets the seed passes the intersection test
    other = np.where(seed_trace == 0, 1, 0)
    assert fitted.privacy_scores(other, 0)["intersection"] == 0


def test_plausible_deniability_counts_alternatives(fitted):
    fake = fitted.day_locs_[fitted.day_ptr_[5]]                 # user 5's own trace, as a fake of user 0
    scores = fitted.privacy_scores(fake, 0)
    srt, w = fitted.sorted_profiles_, fitted.period_weight_
    # brute force: users a != 0 with |sim_S(0, f) - sim_S(a, f)| <= delta_d
    f_prof, f_w = visit_profiles(fake[None], np.array([0]), 1, np.zeros(24, np.int64), fitted.space_.n_locations, 1)
    f_sorted = sorted_profiles(f_prof, 1, 1)
    width = max(srt.shape[2], f_sorted.shape[2])
    pad = lambda a: np.pad(a, ((0, 0), (0, 0), (0, width - a.shape[2])))
    s_all = np.array([semantic_value_sorted(pad(srt)[a], w[a], pad(f_sorted)[0]) for a in range(srt.shape[0])])
    expected = int((np.abs(s_all - s_all[0]) <= fitted.delta_d)[1:].sum())
    assert scores["semantic_similarity"] == pytest.approx(s_all[0])
    assert scores["alternatives"] == min(expected, fitted.k)


def test_every_released_fake_passes_and_the_budget_is_kept(fitted, city):
    fakes = fitted.sample(traces_per_user=3, seed=2)
    assert (fakes.users["intersection"] <= fitted.delta_i).all()
    assert (fakes.users["geo_similarity"] <= fitted.delta_s).all()
    assert (fakes.users["alternatives"] >= fitted.k).all()
    info = fakes.info["fakes"]
    assert info["passed"] == fakes.n_traces and info["tries"] >= fakes.n_traces
    # a test nothing can pass: every seed spends its budget and gives nothing
    strict = SGLT(clusters=8, delta_s=-0.0, k=10 ** 6, max_tries=3).fit(city[0])
    none = strict.sample(4, traces_per_user=2, seed=0)
    assert none.n_traces == 0 and none.info["fakes"]["tries"] == 4 * 2 * 3 and none.info["fakes"]["seeds_short"] == 4
    # without the tests, the first fakes are kept, the seed's locations are avoided with par_l = 1
    loose = SGLT(clusters=8, privacy_test=False).fit(city[0]).sample(traces_per_user=2, seed=0)
    assert loose.n_traces == 2 * fitted.n_users and (loose.users["intersection"] == 0).all()


def test_users_fakes_do_not_depend_on_the_others(fitted):
    a = fitted.sample(traces_per_user=2, seed=3)
    b = fitted.sample(traces_per_user=2, seed=3, users=[4, 2])
    sel = a.select_users(np.flatnonzero(a.users["source"].isin([4, 2])))
    mine = a.select_users(np.flatnonzero(a.users["source"] == 4))
    theirs = b.select_users(np.flatnonzero(b.users["source"] == 4))
    assert sel.n_traces == 4 and np.array_equal(mine.loc, theirs.loc)


def test_bad_parameters_are_refused(city):
    for kwargs, message in ((dict(par_c=1.5), r"par_c must be a number in \[0, 1\]"), (dict(par_v=0.5), "par_v"),
                            (dict(k=0), "k .* at least 1"), (dict(ground="manhattan"), "ground must be one of 'hamming', 'km'"),
                            (dict(edge_weight="x"), "edge_weight must be one of"), (dict(periods=0), "periods"),
                            (dict(clusters=500), "cannot make 500 semantic clusters")):
        with pytest.raises(InputError, match=message):
            SGLT(**kwargs).fit(city[0])


def test_km_ground_and_periods(city):
    model = SGLT(clusters=6, periods=2, ground="km").fit(city[0].select_users(np.arange(12)))
    off = ~np.eye(12, dtype=bool)
    assert (model.geographic_[off] >= 0).all() and (model.geographic_[off] <= 1).all()
    # with km, two users who never meet are still geographically similar (near 1 on a small map)
    assert np.median(model.geographic_[off]) > 0.5
    assert model.sample(traces_per_user=1, seed=0).n_traces <= 12


# -- PF (paper 001 Fig. 7's comparison) -----------------------------------------------------------------
def test_pf_utility_and_privacy(pf_sets):
    """c = 100 classes, 10 fakes per seed, against the 500 test users: SGLT keeps transitions
    (TM-EMD-Y) and populations (TP-TV) and, with par_l = 1, resists re-identification; with
    par_l = 0 and no privacy test (how the PPMTF authors ran the authors' tool, whose location
    graph weighs mapped pairs by their overlap) fakes copy their seeds and are re-identified."""
    from locsynth.evaluation.evaluate import evaluate

    train, test = pf_sets["train"], pf_sets["test"]
    model = SGLT(clusters=100).fit(train)
    fakes = model.sample(traces_per_user=10, seed=1)
    assert fakes.n_traces == 5000 and 0.6 < fakes.info["fakes"]["pass_rate"] < 1
    m = evaluate(train, test, fakes, sglt=False, attacks=("reid",)).metrics
    assert m["tp_tv"]["synthetic"] <= 0.52 and m["tm_emd_y"]["synthetic"] <= 1.2
    assert m["reid_rate"]["synthetic"] <= 0.07
    copied = SGLT(clusters=100, par_l=0.0, privacy_test=False, edge_weight="overlap").fit(train)
    m0 = evaluate(train, test, copied.sample(traces_per_user=10, seed=1), sglt=False, attacks=("reid",)).metrics
    assert m0["reid_rate"]["synthetic"] > 0.5


def test_sglt_tool_outputs_load_as_pf_synthetic(pf_sets, tmp_path):
    """The SGLT tool's files as the PPMTF authors stored them: time_period for time_slot."""
    from locsynth.data.discretize import read_pf_synthetic

    train = pf_sets["train"]
    uid = train.users["user_id"].iloc[3]
    path = tmp_path / "syntraces_SGLT.csv"
    rows = [f"{uid},{k},{s},0,{(7 * s + k) % 400},-" for k in range(2) for s in range(30)]
    path.write_text("user,trace_no,time_period,time_instant,poi_index,category\n" + "\n".join(rows) + "\n")
    ts = read_pf_synthetic(path, train)
    assert ts.n_traces == 2 and (ts.users["source"] == 3).all() and ts.counts().tolist() == [30, 30]
    assert ts.loc[:30].tolist() == [(7 * s) % 400 for s in range(30)]
    path.write_text("user,trace_no,time_instant,poi_index\n0,0,0,5\n")
    with pytest.raises(InputError, match="missing column.*time_slot.*time_period may stand for time_slot"):
        read_pf_synthetic(path, train)


def test_all_pairs_match_the_pairwise_reference(city):
    """fit's batched pairs (geographic similarity as one array operation, edges collected in
    bulk) against semantic_similarity / geographic_similarity called pair by pair."""
    from locsynth.synth.sglt.similarity import location_graph

    train = city[0].select_users(np.arange(15))
    for P, edge_weight in ((1, "similarity"), (3, "overlap")):
        model = SGLT(clusters=4, periods=P, edge_weight=edge_weight).fit(train)
        owner = np.repeat(np.arange(15), np.diff(model.day_ptr_))
        prof, weight = visit_profiles(model.day_locs_, owner, 15, period_of(24, P), train.space.n_locations, P)
        er, er2, ew = [], [], []
        for u in range(15):
            for v in range(15):
                if u == v:
                    continue
                sim, pairs = semantic_similarity(prof, weight, u, v, P)
                assert model.semantic_[u, v] == pytest.approx(sim, abs=1e-6)
                geo = sum(weight[u, tau] * geographic_similarity(
                    (prof.indices[prof.indptr[u * P + tau]:prof.indptr[u * P + tau + 1]],
                     prof.data[prof.indptr[u * P + tau]:prof.indptr[u * P + tau + 1]]),
                    (prof.indices[prof.indptr[v * P + tau]:prof.indptr[v * P + tau + 1]],
                     prof.data[prof.indptr[v * P + tau]:prof.indptr[v * P + tau + 1]])) for tau in range(P))
                assert model.geographic_[u, v] == pytest.approx(geo, abs=1e-6)
                if u > v:
                    continue
                # Fig. 2 for (u, v) and (v, u), sigma_v^u the inverse of sigma_u^v
                back = semantic_similarity(prof, weight, v, u, P)[0]
                for tau, (r, r2, mins) in enumerate(pairs):
                    keep = r != r2
                    er.append(r[keep])
                    er2.append(r2[keep])
                    share = 0.5 * (weight[u, tau] + weight[v, tau]) * (sim + back)
                    ew.append(share * (mins[keep] if edge_weight == "overlap" else np.ones(keep.sum())))
        ref = location_graph(np.concatenate(er), np.concatenate(er2), np.concatenate(ew), train.space.n_locations)
        assert np.allclose(ref.toarray(), model.graph_.toarray(), rtol=1e-9, atol=0)
