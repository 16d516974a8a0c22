"""The DP paths of the co-location synthesizer and TPM, end to end (training traces -> trimmed
counts -> noise), audited on neighbouring training sets chosen to make trimming's knock-on effect
as large as possible; mutants that ignore trimming, or trim as paper 000's Fig. 5 reads it, are
caught (privacy/audit.py, the ratio test)."""

from dataclasses import replace
from datetime import date

import numpy as np
import pytest
from helpers import traceset
from test_colocation import remove_user

from locsynth import TimeAxis
from locsynth.privacy.audit import audit
from locsynth.privacy.laplace import laplace
from locsynth.privacy.privelet import coefficients, generalized_sensitivity, noisy_coefficients, weights
from locsynth.privacy.hierarchy import Hierarchy
from locsynth.metrics.colocation import colocation_counts
from locsynth.synth.colocation.friendship import noisy_friendship_probability
from locsynth.metrics.transitions import trimmed_transition_counts

#: one repeat at BETA = 1e-3 wrongly rejects a correct path with probability at most 1e-3 (three repeats
#: at 1e-2 took three times as long for 3e-4)
EPS, C, N, BETA, REPEATS = 1.0, 2, 20_000, 0.001, 1
BINS = np.linspace(-EPS, EPS, 11)[1:-1]


def star():
    """Two instants a day (12 h), three locations, four days. User 0 meets friends 1-4 (who are
    not friends with each other) at four places; friends 1 and 2 also meet friend 5 later, twice.
    Removing user 0 changes C = 2 cells under the reading of counts.py, 4 without trimming, and 8
    under Fig. 5's reading (stop after c co-locations), where friends 1 and 2 each read one more
    co-location with 5 in place of the one with 0, and friends 3 and 4 lose theirs."""
    traces = [[(0, 0), (1, 1), (2, 2), (3, 0)], [(0, 0), (4, 1), (6, 1)], [(1, 1), (5, 1), (7, 2)], [(2, 2)],
              [(3, 0)], [(4, 1), (5, 1), (6, 1), (7, 2)]]
    ts = traceset(traces, cols=3)
    ts = replace(ts, time=TimeAxis.build(date(2024, 1, 1), "UTC", "12h"),
                 friends=np.array([[0, 1], [0, 2], [0, 3], [0, 4], [1, 5], [2, 5]], np.int32))
    return ts, remove_user(ts, 0)


def fig5_counts(ts, trim):
    """Paper 000 Fig. 5 read literally: each user's co-location events (a friend present) in time
    order, the first ``trim`` of each counted once per user."""
    present = {}
    for u in range(ts.n_traces):
        for t, x in zip(*ts.events_of(u)):
            present.setdefault((int(t), int(x)), set()).add(u)
    friends = set(map(tuple, ts.friends.tolist())) | set(map(tuple, ts.friends[:, ::-1].tolist()))
    Q = np.zeros((ts.time.instants_per_day, ts.space.n_locations))
    for u in range(ts.n_traces):
        read = 0
        for t, x in zip(*ts.events_of(u)):
            if read < trim and any((u, v) in friends for v in present[(int(t), int(x))]):
                Q[int(t) % ts.time.instants_per_day, int(x)] += 1
                read += 1
    return Q


def laplace_path(counts_of):
    """The whole path for Lap(C / EPS) and the privacy-loss statistic under that claim."""
    def mechanism(ts, n):
        q = counts_of(ts).ravel().astype(float)
        return laplace(np.tile(q, (n, 1)), EPS, C)
    return mechanism


def loss_statistic(q1, q2, scale):
    return lambda y: (np.abs(y - q2) - np.abs(y - q1)).sum(axis=1) / scale


def run(counts_of, x1, x2):
    q1, q2 = counts_of(x1).ravel(), counts_of(x2).ravel()
    return audit(laplace_path(counts_of), x1, x2, EPS, samples=N, beta=BETA, repeats=REPEATS, bins=BINS,
                 statistic=loss_statistic(q1, q2, C / EPS))


@pytest.mark.slow
def test_colocation_counts_with_laplace_hold_epsilon_on_the_star():
    x1, x2 = star()
    q = colocation_counts(x1, C)
    assert np.abs(q - colocation_counts(x2, C)).sum() == C              # the worst case is reached
    result = run(lambda ts: colocation_counts(ts, C), x1, x2)
    assert result.passed, str(result)


@pytest.mark.slow
def test_a_mutant_without_trimming_is_caught():
    x1, x2 = star()
    assert np.abs(colocation_counts(x1) - colocation_counts(x2)).sum() == 4
    result = run(lambda ts: colocation_counts(ts, None), x1, x2)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_fig5s_reading_has_a_knock_on_effect_and_fails():
    x1, x2 = star()
    change = np.abs(fig5_counts(x1, C) - fig5_counts(x2, C)).sum()
    assert change == 8                                                  # friends of user 0 read more
    result = run(lambda ts: fig5_counts(ts, C), x1, x2)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_colocation_counts_with_privelet_hold_epsilon_on_the_star():
    """The mechanism proper (noisy wavelet coefficients of the trimmed counts; reconstruction is
    post-processing) over root > category > location, trimming at c = 1 (removing user 0 changes
    one cell) against the untrimmed mutant (four cells) and against noise without the generalized
    sensitivity rho (Lap(c / (epsilon W)), the reading that gives paper 000's Figure 8 its gap)."""
    x1, x2 = star()
    c = 1
    h = Hierarchy.from_levels(np.array(["a", "a", "a"]))
    lam = generalized_sensitivity(h) * c / EPS
    w = np.tile(weights(h), x1.time.instants_per_day)

    def audited(trim, noise_epsilon=EPS):
        c1, c2 = (coefficients(colocation_counts(x, trim), h).ravel() for x in (x1, x2))

        def noisy(ts, n):
            Q = colocation_counts(ts, trim).astype(float)
            return noisy_coefficients(np.tile(Q, (n, 1, 1)), h, noise_epsilon, c).reshape(n, -1)

        return audit(noisy, x1, x2, EPS, samples=N, beta=BETA, repeats=REPEATS, bins=BINS,
                     statistic=lambda y: (w / lam * (np.abs(y - c2) - np.abs(y - c1))).sum(axis=1))

    honest, mutant = audited(c), audited(None)
    assert honest.passed, str(honest)
    assert not mutant.passed, str(mutant)
    assert generalized_sensitivity(h) == 2
    without_rho = audited(c, EPS * generalized_sensitivity(h))
    assert not without_rho.passed, str(without_rho)


@pytest.mark.slow
def test_tpm_path_holds_epsilon_and_its_untrimmed_mutant_is_caught():
    """Neighbours differ in a user with 5 transitions; C = 2 are read."""
    base = [[(0, 0), (1, 1)], [(0, 2), (1, 2)]]
    x1 = traceset(base + [[(0, 0), (1, 1), (2, 2), (3, 0), (4, 1), (5, 2)]], cols=3)
    x2 = traceset(base, cols=3)

    def path(trim):
        return lambda ts: trimmed_transition_counts(ts, trim)

    honest = run(path(C), x1, x2)
    assert honest.passed, str(honest)
    assert not run(path(None), x1, x2).passed


@pytest.mark.parametrize("half_noise", [False, True])
def test_friendship_probability_is_node_dp(half_noise):
    """n = 8 public; neighbours: user 0 friends with all 7 others, or with none (p moves by 2/n).
    The statistic is the released value itself (clamped to [0, 1]), in bins."""
    n, full = 8, 7 + 6                                                  # star of 0 plus a path 1-..-7
    eps = 2 * EPS if half_noise else EPS
    result = audit(lambda m, k: noisy_friendship_probability(m, n, eps, size=k),
                   full, full - 7, EPS, samples=N, beta=BETA, repeats=REPEATS, bins=np.linspace(0.05, 0.6, 12))
    assert result.passed != half_noise, str(result)
