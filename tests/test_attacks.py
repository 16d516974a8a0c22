"""Hand-computed attacks on tiny inputs (paper 001 Appendix D)."""

import numpy as np
import pytest
from scipy.stats import beta

from helpers import traceset
from locsynth import InputError
from locsynth.attacks import membership_inference, reidentify
from locsynth.privacy.empirical import clopper_pearson, epsilon_lower_bound

PHI = 1e-8


def knowledge():
    # user 0 walks 0 -> 1 -> 2; user 1 stays at 0 then goes to 2; user 2 mixes
    return traceset([[(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 0), (2, 2)], [(0, 0), (1, 1), (2, 1), (3, 0)]])


def test_bayes_reidentification_names_the_most_likely_user():
    syn = traceset([[(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 0), (2, 2)], [(0, 1), (1, 1)]],
                   synthetic=[(0, 0), (0, 1), (2, 0)])
    res = reidentify(knowledge(), syn)
    # trace 0: user 0 has W(0,1) = W(1,2) = 1, user 2 has W(0,1) = 1, W(1,2) = 0 -> user 0
    # trace 1: only user 1 has 0 -> 0 and 0 -> 2; trace 2: 1 -> 1 only user 2 (W = 1/2)
    assert res.predicted.tolist() == [0, 1, 2]
    assert res.rate == pytest.approx(2 / 3)      # trace 1 was generated from user 0


def test_reidentify_rejects_real_traces_and_unknown_methods():
    with pytest.raises(InputError, match="needs a synthetic TraceSet"):
        reidentify(knowledge(), knowledge())
    with pytest.raises(InputError, match="unknown re-identification method 'map'; expected one of bayes"):
        reidentify(knowledge(), knowledge(), method="map")


def test_membership_llr_by_hand():
    members = traceset([[(0, 0), (1, 1)], [(0, 1), (1, 1)]])
    non_members = traceset([[(0, 0), (1, 0)]])
    syn = traceset([[(0, 0), (1, 1)]], synthetic=[(0, 0)])
    res = membership_inference(members, non_members, syn)
    # transition 0 -> 1: W_0 = 1, W_1 = 0, W_2 = 0 (its row 0 goes to 0).
    # user 0: log 1 - log(max((0 + 0) / 2, phi)) = -log phi
    # user 1: log phi - log((1 + 0) / 2);  user 2: log phi - log((1 + 0) / 2)
    want = [-np.log(PHI), np.log(PHI) - np.log(0.5), np.log(PHI) - np.log(0.5)]
    assert res.scores[0] == pytest.approx(want)
    assert res.is_member.tolist() == [True, True, False]
    # best threshold accepts user 0 only (TPR 1/2, FPR 0) or all three (TPR 1, FPR 1): advantage 1/2
    assert res.advantage == pytest.approx(0.5) and res.accuracy == pytest.approx(2 / 3)


def test_membership_per_trace_number_keeps_one_score_per_set():
    members, non_members = knowledge(), traceset([[(0, 2), (1, 2)]])
    syn = traceset([[(0, 0), (1, 1)], [(0, 2), (1, 2)]], synthetic=[(0, 0), (0, 1)])
    assert membership_inference(members, non_members, syn, per_trace_number=True).scores.shape == (2, 4)
    assert membership_inference(members, non_members, syn).scores.shape == (1, 4)


def test_clopper_pearson_and_epsilon():
    low, high = clopper_pearson(np.array([3]), np.array([10]), 0.95)
    assert low[0] == pytest.approx(beta.ppf(0.025, 3, 8)) and high[0] == pytest.approx(beta.ppf(0.975, 4, 7))
    assert clopper_pearson(np.array([0]), np.array([10]))[0][0] == 0.0
    # a perfect attack on 1000 + 1000 users: TPR >= 0.9963, FPR <= 0.0037 -> eps >= log(0.9963 / 0.0037)
    eps = epsilon_lower_bound([1000], [0], [0], [1000])
    assert eps == pytest.approx(np.log(beta.ppf(0.025, 1000, 1) / beta.ppf(0.975, 1, 1000)))
    assert epsilon_lower_bound([5], [5], [5], [5]) == 0.0          # no signal: no bound


def test_sampled_attacks_are_seeded_and_bracket_the_exact_rate(pf_sets, pf_dir):
    from locsynth.data.discretize import read_pf_synthetic

    train, test = pf_sets["train"], pf_sets["test"]
    syn = read_pf_synthetic(pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv", train)
    from locsynth.attacks.groups import released_as_is

    released = released_as_is(train)                  # the training traces: almost all re-identified
    exact = reidentify(train, released)
    sample = reidentify(train, released, max_traces=200, seed=5)
    assert exact.interval == (exact.rate, exact.rate) and sample.rows.size == 200
    assert sample.interval[0] <= exact.rate <= sample.interval[1]
    assert np.array_equal(sample.rows, reidentify(train, released, max_traces=200, seed=5).rows)
    mia = membership_inference(train, test, syn, max_candidates=300, seed=1)
    assert mia.scores.shape == (1, 300) and mia.is_member.sum() == 150
    full = membership_inference(train, test, syn)
    # a sampled candidate's score is the same number as in the full attack
    assert np.allclose(full.scores[0, mia.candidates], mia.scores[0])
