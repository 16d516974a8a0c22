"""SGLT utility features (paper 002 §VIII.C): hand-computed values, properties, brute force, PF."""

from dataclasses import replace
from math import log

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment

from helpers import traceset
from locsynth import InputError
from locsynth.data.discretize import read_pf_synthetic
from locsynth.metrics.visits import visit_counts
from locsynth.metrics.sglt import (aggregate_transitions, aggregate_visits, kl_smoothed, mobility_similarity,
                                   seed_semantic_similarity, semantic_profiles, semantic_qq_correlation,
                                   sglt_features, time_allocation_kl, time_allocation_paired_kl, top_location_counts,
                                   top_n_coverage, visits_kl,
                                   visits_relative_error)

KEYS = ["visits_kl", "visits_kl_rank", "visits_relative_error", "top50_visits_kl", "top50_visits_relative_error",
        "top10_coverage", "top20_coverage", "top30_coverage", "top40_coverage", "top50_coverage",
        "time_allocation_kl_1", "time_allocation_kl_2", "time_allocation_kl_3",
        "time_allocation_paired_kl_1", "time_allocation_paired_kl_2", "time_allocation_paired_kl_3",
        "mobility_visit_similarity", "mobility_transition_similarity",
        "seed_semantic_similarity", "semantic_qq_correlation"]


def reference():
    # 1 x 3 grid, hourly instants, 2 h slots; counts per location 3, 2, 1
    return traceset([[(0, 0), (1, 0), (2, 0), (3, 1)], [(0, 1), (1, 2)]], slot="2h")


def synthetic(traces=None, trace_no=0):
    """Traces generated from the two reference users; counts per location 1, 3, 2."""
    traces = traces or [[(0, 0), (1, 1), (2, 1), (3, 1)], [(0, 2), (1, 2)]]
    return traceset(traces, slot="2h", synthetic=[(i, trace_no) for i in range(len(traces))])


def as_synthetic(ts, copies=1):
    """``ts`` released ``copies`` times as trace numbers 0, 1, ... of a synthetic set."""
    users = ts.users.assign(source=np.arange(ts.n_traces, dtype=np.int32), trace_no=np.int32(0))
    out = replace(ts, users=users)
    if copies == 1:
        return out
    n = ts.n_traces
    users = pd.concat([users.assign(trace_no=np.int32(k)) for k in range(copies)], ignore_index=True)
    return replace(ts, user=np.concatenate([ts.user + k * n for k in range(copies)]),
                   t=np.tile(ts.t, copies), loc=np.tile(ts.loc, copies), users=users)


def random_set(n_users=12, n_events=20, rows=3, cols=4, seed=0, synthetic=False):
    rng = np.random.default_rng(seed)
    traces = []
    for _ in range(n_users):
        t = np.sort(rng.choice(24, size=rng.integers(1, n_events), replace=False))
        # a few favourite locations per user, so that allocations differ
        fav = rng.choice(rows * cols, size=3, replace=False)
        loc = np.where(rng.random(t.size) < 0.7, rng.choice(fav, size=t.size), rng.integers(0, rows * cols, t.size))
        traces.append(list(zip(t.tolist(), loc.tolist())))
    syn = [(i, 0) for i in range(n_users)] if synthetic else None
    return traceset(traces, rows=rows, cols=cols, slot="2h", synthetic=syn)


# -- (a), (b) ---------------------------------------------------------------------------------------
def test_visits_kl_by_hand():
    p, q = np.array([3, 2, 1]) / 6, np.array([1, 3, 2]) / 6
    assert visits_kl(reference(), synthetic()) == pytest.approx(float(np.sum(p * np.log(p / q))))
    # rank alignment compares the sorted curves: (3, 2, 1) against (3, 2, 1)
    assert visits_kl(reference(), synthetic(), align="rank") == pytest.approx(0.0)
    # top-1 keeps location 0 only: one cell on each side, KL 0
    assert visits_kl(reference(), synthetic(), top=1) == pytest.approx(0.0)
    want = 0.6 * log(0.6 / 0.25) + 0.4 * log(0.4 / 0.75)         # top 2: (3, 2) vs (1, 3)
    assert visits_kl(reference(), synthetic(), top=2) == pytest.approx(want)


def test_visits_kl_sets_zero_counts_to_a_tenth():
    syn = synthetic([[(0, 0), (1, 0), (2, 0), (3, 1)], [(0, 0), (1, 1)]])  # counts 4, 2, 0
    p = np.array([3, 2, 1]) / 6
    q = np.array([4, 2, 0.1]) / 6.1                                          # footnote 5
    assert visits_kl(reference(), syn) == pytest.approx(float(np.sum(p * np.log(p / q))))
    assert kl_smoothed(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(
        (1 / 1.1) * log(1 / 0.1) + (0.1 / 1.1) * log(0.1 / 1))


def test_visits_relative_error_by_hand():
    # |3-1|/3 + |2-3|/2 + |1-2|/max(1, 0.006), averaged over the 3 locations
    assert visits_relative_error(reference(), synthetic()) == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    # the floor 0.001 N: with floor 0.5, N = 6, the denominators are max(3, 3), max(2, 3), max(1, 3)
    assert visits_relative_error(reference(), synthetic(), floor=0.5) == pytest.approx((2 / 3 + 1 / 3 + 1 / 3) / 3)


def test_synthetic_counts_are_put_on_the_reference_total():
    # the same synthetic traces twice (trace numbers 0 and 1) or pooled at double weight: same values
    two = as_synthetic(synthetic(), copies=2)
    assert len(two.by_trace_number()) == 2
    assert visits_kl(reference(), two) == pytest.approx(visits_kl(reference(), synthetic()))
    pooled = replace(two, users=two.users.assign(trace_no=np.int32(0)))
    assert visits_kl(reference(), pooled) == pytest.approx(visits_kl(reference(), synthetic()))
    assert visits_relative_error(reference(), pooled) == pytest.approx(visits_relative_error(reference(), synthetic()))


# -- (c) ----------------------------------------------------------------------------------------------
def test_top_n_coverage_by_hand():
    # reference top: 0, 1, 2 ; synthetic top: 1, 2, 0
    cov = top_n_coverage(reference(), synthetic(), n=(1, 2, 3, 10))
    assert cov == {1: 0.0, 2: 0.5, 3: 1.0, 10: 1.0}         # only 3 locations are visited: top-10 has 3
    # relative to a baseline whose top 2 is {0, 2}: coverage 1/2 -> min(0.5 / 0.5, 1) = 1
    base = traceset([[(0, 0), (1, 0), (2, 2), (3, 2), (4, 0)]], slot="2h")
    assert top_n_coverage(reference(), synthetic(), n=(2,), baseline=base) == {2: 1.0}
    assert np.isnan(top_n_coverage(reference(), synthetic(), n=(1,), baseline=synthetic())[1])


def test_top_n_ignores_unvisited_locations_and_breaks_ties_by_id():
    ref = traceset([[(0, 1), (1, 2)]], slot="2h")            # 1 and 2 tied: top-1 is location 1
    syn = synthetic([[(0, 1)]])
    assert top_n_coverage(ref, syn, n=(1, 2)) == {1: 1.0, 2: 0.5}


# -- (d) ----------------------------------------------------------------------------------------------
def test_top_location_counts():
    assert top_location_counts(reference()).tolist() == [[3, 1, 0], [1, 1, 0]]
    assert top_location_counts(synthetic(), top=2).tolist() == [[3, 1], [2, 0]]


def test_time_allocation_kl_histogram_by_hand():
    # bins = 2: bin 0 = no k-th location, 1 = (0, 1/2], 2 = (1/2, 1]
    # rank 1: reference fractions 3/4, 1/2 -> [0, 1, 1]; synthetic 3/4, 1 -> [0, 0, 2]
    # rank 2: reference 1/4, 1/2 -> [0, 2, 0]; synthetic 1/4, none -> [1, 1, 0]
    d = time_allocation_kl(reference(), synthetic(), top=2, bins=2)
    assert d[1] == pytest.approx(kl_smoothed(np.array([0, 1, 1.0]), np.array([0, 0, 2.0])))
    assert d[2] == pytest.approx(kl_smoothed(np.array([0, 2, 0.0]), np.array([1, 1, 0.0])))
    p, q = np.array([0.1, 1, 1]) / 2.1, np.array([0.1, 0.1, 2]) / 2.2
    assert d[1] == pytest.approx(float(np.sum(p * np.log(p / q))))


def test_time_allocation_paired_kl_by_hand():
    d = time_allocation_paired_kl(reference(), synthetic())
    # rank 1: reference (3/4, 1/2) -> (0.6, 0.4); synthetic (3/4, 1) -> (3/7, 4/7)
    assert d[1] == pytest.approx(0.6 * log(0.6 * 7 / 3) + 0.4 * log(0.4 * 7 / 4))
    # rank 2: reference (1/4, 1/2) -> (1/3, 2/3); synthetic (1/4, 0.1/2) -> (5/6, 1/6)
    assert d[2] == pytest.approx(1 / 3 * log((1 / 3) / (5 / 6)) + 2 / 3 * log((2 / 3) / (1 / 6)))
    # rank 3: nobody has a third location: (0.1/4, 0.1/2) on both sides
    assert d[3] == pytest.approx(0.0)


def test_paired_features_need_the_same_users():
    other = traceset([[(0, 0)], [(0, 1)], [(0, 2)]], slot="2h")
    other = replace(other, users=other.users.assign(user_id=[10, 11, 12]))
    assert all(np.isnan(v) for v in time_allocation_paired_kl(other, synthetic()).values())
    assert np.isnan(seed_semantic_similarity(other, synthetic()))
    dup = replace(reference(), users=reference().users.assign(user_id=[0, 0]))
    with pytest.raises(InputError, match="same user_id"):
        time_allocation_paired_kl(dup, synthetic())


# -- (e) ----------------------------------------------------------------------------------------------
def test_mobility_similarity_by_hand():
    # one period: pi-bar = mean of (3/4, 1/4, 0), (0, 1/2, 1/2) = (3/8, 3/8, 1/4); synthetic (1/8, 3/8, 1/2)
    assert np.allclose(aggregate_visits(reference(), periods=1), [[3 / 8, 3 / 8, 1 / 4]])
    # p-bar: reference 0 -> (2/3, 1/3, 0), 1 -> (0, 0, 1), weights 1/2, 1/2;
    #        synthetic 0 -> (0, 1, 0), 1 -> (0, 1, 0), 2 -> (0, 0, 1)
    pbar, w = aggregate_transitions(reference(), periods=1)
    assert np.allclose(pbar.toarray(), [[2 / 3, 1 / 3, 0], [0, 0, 1], [0, 0, 0]]) and np.allclose(w, [0.5, 0.5, 0])
    sim = mobility_similarity(reference(), synthetic(), periods=1)
    assert sim["visits"] == pytest.approx(1 / 8 + 3 / 8 + 1 / 4)
    assert sim["transitions"] == pytest.approx(0.5 * 1 / 3 + 0.5 * 0)


def test_aggregate_transitions_average_users_not_counts():
    # user 0 stays at 0 three times, user 1 goes 0 -> 1 once: pooled counts give (3/4, 1/4),
    # the paper's average of the users' models (1/2, 1/2); the 3 -> 5 gap is not a transition
    ts = traceset([[(0, 0), (1, 0), (2, 0), (3, 0)], [(0, 0), (1, 1), (3, 2), (5, 0)]], slot="2h")
    pbar, w = aggregate_transitions(ts, periods=1)
    assert np.allclose(pbar.toarray()[0], [0.5, 0.5, 0]) and np.allclose(w, [1, 0, 0])
    # periods: hours 0-5 are slots 0-2, period 0 of 4; (0, 0) -> (0, 0) states stay in row 0
    pbar4, w4 = aggregate_transitions(ts, periods=4)
    assert pbar4.shape == (4 * 4 * 3, 3) and np.allclose(pbar4.toarray()[0], [0.5, 0.5, 0])


def loop_aggregate_transitions(ts, periods):
    """Straightforward per-user dictionaries, for comparison."""
    p = min(periods, ts.time.n_slots)
    per_user = []
    for u in range(ts.n_traces):
        t, loc = ts.events_of(u)
        tau = ts.time.slot(t) * p // ts.time.n_slots
        counts = {}
        for a in range(len(t) - 1):
            if ts.time.consecutive(t[a:a + 1], t[a + 1:a + 2])[0]:
                s = (tau[a] * p + tau[a + 1]) * ts.space.n_locations + loc[a]
                counts.setdefault(s, {}).setdefault(loc[a + 1], 0)
                counts[s][loc[a + 1]] += 1
        if counts:
            per_user.append(counts)
    n_states, n_loc = p * p * ts.space.n_locations, ts.space.n_locations
    pbar, z, w = np.zeros((n_states, n_loc)), np.zeros(n_states), np.zeros(n_states)
    for counts in per_user:
        total = sum(sum(c.values()) for c in counts.values())
        for s, c in counts.items():
            z[s] += 1
            w[s] += sum(c.values()) / total / len(per_user)
            for r, k in c.items():
                pbar[s, r] += k / sum(c.values())
    return pbar / np.maximum(z, 1)[:, None], w


@pytest.mark.parametrize("periods", [1, 4])
def test_aggregate_transitions_match_a_loop(periods):
    ts = random_set(seed=3)
    pbar, w = aggregate_transitions(ts, periods)
    want_p, want_w = loop_aggregate_transitions(ts, periods)
    assert np.allclose(pbar.toarray(), want_p) and np.allclose(w, want_w) and w.sum() == pytest.approx(1)


# -- (f) ----------------------------------------------------------------------------------------------
def test_seed_semantic_similarity_by_hand():
    # one period: sorted profiles (3/4, 1/4) vs (3/4, 1/4) -> 1 ; (1/2, 1/2) vs (1) -> 1/2
    assert seed_semantic_similarity(reference(), synthetic(), periods=1) == pytest.approx(0.75)


def brute_semantic(ref, syn, u, v, periods):
    """Eq. (10) with the Hungarian algorithm over location permutations, period by period."""
    p = min(periods, ref.time.n_slots)
    def dist(ts, i):
        t, loc = ts.events_of(i)
        tau = ts.time.slot(t) * p // ts.time.n_slots
        m = np.zeros((p, ts.space.n_locations))
        np.add.at(m, (tau, loc), 1)
        return m
    a, b = dist(ref, u), dist(syn, v)
    pr = a.sum(axis=1) / a.sum()
    a = a / np.maximum(a.sum(axis=1, keepdims=True), 1)
    b = b / np.maximum(b.sum(axis=1, keepdims=True), 1)
    total = 0.0
    for tau in range(p):
        gain = np.minimum(a[tau][:, None], b[tau][None, :])
        r, c = linear_sum_assignment(gain, maximize=True)
        total += pr[tau] * gain[r, c].sum()
    return total


@pytest.mark.parametrize("periods", [1, 4])
def test_semantic_similarity_matches_the_hungarian_algorithm(periods):
    ref, syn = random_set(seed=1), random_set(seed=2, synthetic=True)
    want = np.mean([brute_semantic(ref, syn, u, u, periods) for u in range(ref.n_traces)])
    assert seed_semantic_similarity(ref, syn, periods=periods) == pytest.approx(want)
    prof, pp = semantic_profiles(ref, periods)
    assert np.allclose(prof.sum(axis=1), (pp > 0).sum(axis=1)) and np.allclose(pp.sum(axis=1), 1)


def test_semantic_qq_correlation():
    ref = random_set(n_users=15, seed=4)
    assert semantic_qq_correlation(ref, as_synthetic(ref)) == pytest.approx(1.0)
    r = semantic_qq_correlation(ref, random_set(n_users=15, seed=5, synthetic=True))
    assert -1 <= r <= 1
    # every trace with one event per period: all similarities are 1, the Q-Q plot is a point
    flat = traceset([[(0, 0)], [(0, 1)], [(0, 2)]], slot="2h")
    assert np.isnan(semantic_qq_correlation(flat, as_synthetic(flat)))


# -- properties -------------------------------------------------------------------------------------
def test_identical_sets_are_perfect():
    ref = random_set(seed=7)
    f = sglt_features(ref, as_synthetic(ref, copies=3))
    assert list(f) == KEYS
    for k in KEYS:
        if "coverage" in k or "similarity" in k or "correlation" in k:
            assert f[k] == pytest.approx(1.0), k
        else:
            assert f[k] == pytest.approx(0.0, abs=1e-12), k


@pytest.mark.parametrize("seed", range(5))
def test_divergences_are_non_negative_and_bounded(seed):
    ref, syn = random_set(seed=seed), random_set(seed=seed + 10, synthetic=True)
    f = sglt_features(ref, syn)
    assert list(f) == KEYS
    for k in KEYS:
        if "kl" in k or "error" in k:
            assert f[k] >= 0, k
        elif "correlation" not in k:
            assert 0 <= f[k] <= 1, k


def test_different_spaces_are_refused():
    other = traceset([[(0, 0)]], rows=2, cols=3, slot="2h", synthetic=[(0, 0)])
    with pytest.raises(InputError, match="6 grid locations but the reference set has 3 grid"):
        visits_kl(reference(), other)
    with pytest.raises(InputError, match="align must be"):
        visits_kl(reference(), synthetic(), align="id")


# -- real data ---------------------------------------------------------------------------------------
def test_pf_features(pf_sets, pf_dir):
    train, test = pf_sets["train"], pf_sets["test"]
    syn = read_pf_synthetic(pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv", train)
    rng = np.random.default_rng(0)
    uniform = replace(test, loc=rng.integers(0, test.space.n_locations, test.n_events).astype(np.int32))
    f_syn, f_train, f_uni = (sglt_features(test, s) for s in (syn, train, uniform))
    assert list(f_syn) == KEYS
    # the paper's ordering (Table II, Fig. 11): real data closest, synthetic next, uniform last
    for k in ("visits_kl", "visits_relative_error", "top50_visits_relative_error"):
        assert f_train[k] < f_syn[k] < f_uni[k], k
    assert f_train["top50_coverage"] > f_syn["top50_coverage"] > f_uni["top50_coverage"]
    assert f_syn["mobility_visit_similarity"] > f_uni["mobility_visit_similarity"]
    assert f_syn["mobility_transition_similarity"] > f_uni["mobility_transition_similarity"]
    # test users are not the training users: nothing to pair
    assert np.isnan(f_syn["seed_semantic_similarity"]) and np.isnan(f_syn["time_allocation_paired_kl_1"])
    # against the training set each synthetic trace meets its seed
    assert 0 < seed_semantic_similarity(train, syn) < 1
    assert np.isfinite(list(time_allocation_paired_kl(train, syn).values())).all()
    assert visit_counts(syn).sum() == syn.n_events
