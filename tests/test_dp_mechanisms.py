"""Every DP mechanism passes a statistical test at its claimed epsilon on neighbouring inputs,
and a mutant with half its noise is caught (privacy/audit.py, DP-Auditorium's histogram tester)."""

import numpy as np
import pytest

from locsynth import Grid, InputError
from locsynth.privacy.audit import audit, histogram_delta
from locsynth.privacy.laplace import discrete_laplace, laplace
from locsynth.privacy.ledger import Ledger
from locsynth.privacy.planar_laplace import planar_laplace_locations
from locsynth.privacy.privelet import (coefficients, generalized_sensitivity, noisy_coefficients, privelet,
                                       reconstruct, weights)
from locsynth.privacy.randomized_response import randomized_response
from locsynth.privacy.hierarchy import Hierarchy

EPS = 1.0
N = 20_000
#: one repeat wrongly rejects a correct mechanism with probability at most BETA (the Clopper-Pearson
#: bounds are exact); the majority of three repeats at 1e-2 gave 3e-4 in three times as long
BETA, REPEATS = 0.001, 1


def check(mechanism, x1, x2, samples=N, **kwargs):
    """The mechanism at EPS passes; the same mechanism at 2 EPS (half the noise) claimed at EPS fails."""
    honest = audit(lambda x, n: mechanism(x, n, EPS), x1, x2, EPS, samples=samples, beta=BETA, repeats=REPEATS,
                   **kwargs)
    mutant = audit(lambda x, n: mechanism(x, n, 2 * EPS), x1, x2, EPS, samples=samples, beta=BETA, repeats=REPEATS,
                   **kwargs)
    print(f"\n  honest {honest}\n  mutant {mutant}")
    assert honest.passed, str(honest)
    assert not mutant.passed, str(mutant)
    return honest, mutant


def test_laplace_on_counts():
    x1, x2 = np.array([5.0, 2.0]), np.array([6.0, 2.0])          # one count differs by the sensitivity 1
    check(lambda x, n, eps: laplace(np.tile(x, (n, 1)), eps, 1.0)[:, 0], x1, x2, bins=np.linspace(1, 10, 37))


def test_discrete_laplace_on_counts():
    x1, x2 = np.array([3, 7]), np.array([3, 8])
    check(lambda x, n, eps: discrete_laplace(np.tile(x, (n, 1)), eps, 1)[:, 1], x1, x2)


def test_k_ary_randomized_response():
    """OpenDP's randomized response draws one value a call: 5,000 samples keep this quick, and the
    mutant's log ratio (2 against 1) is still far outside the bands."""
    check(lambda x, n, eps: randomized_response(np.full(n, x), 3, eps), 0, 1, samples=5000)


def test_planar_laplace_on_a_grid():
    """Cells 4 apart on a 40 x 40 grid of ~50 m cells, epsilon per metre such that their centres
    (200 m apart) are EPS-indistinguishable; the statistic is the privacy loss of the output cell's
    centre under the claimed noise, which keeps all a mutant's loss shows."""
    grid = Grid(40, 40, (35.0, 35.018, 139.0, 139.022))
    a, b = 20 * 40 + 18, 20 * 40 + 22
    d = float(grid.distance_m(a, b))
    per_metre = EPS / d

    def loss(cells):
        return per_metre * (grid.distance_m(b, cells) - grid.distance_m(a, cells))

    check(lambda x, n, eps: planar_laplace_locations(np.full(n, x), grid, per_metre * eps / EPS), a, b,
          statistic=loss, bins=np.linspace(-EPS, EPS, 11)[1:-1])


@pytest.mark.slow
def test_privelet_on_a_hierarchy():
    """The mechanism proper (noisy wavelet coefficients; the reconstruction is post-processing),
    with the privacy loss under the claimed noise as the statistic."""
    h = Hierarchy.from_levels(["a", "a", "b", "b"])
    x1, x2 = np.array([3.0, 1.0, 4.0, 1.0]), np.array([3.0, 1.0, 5.0, 1.0])
    w, lam = weights(h), generalized_sensitivity(h) * 1.0 / EPS
    c1, c2 = coefficients(x1, h), coefficients(x2, h)

    def loss(y):
        return (w / lam * (np.abs(y - c2) - np.abs(y - c1))).sum(axis=1)

    check(lambda x, n, eps: noisy_coefficients(np.tile(x, (n, 1)), h, eps, 1.0), x1, x2, statistic=loss,
          bins=np.linspace(-EPS, EPS, 11)[1:-1])


def test_dp_auditorium_histogram_tester_on_the_discrete_laplace():
    """The (epsilon, delta) tester with its wider tolerance still separates the two."""
    x1, x2 = np.array([3, 7]), np.array([3, 8])
    check(lambda x, n, eps: discrete_laplace(np.tile(x, (n, 1)), eps, 1)[:, 1], x1, x2, method="histogram")


def naive_laplace(x, n, eps=EPS, rng=np.random.default_rng(0)):
    """The textbook inverse-CDF sampler in floating point: x - b sign(u) log(1 - 2|u|)."""
    u = rng.random(n) - 0.5
    return x - np.sign(u) / eps * np.log1p(-2 * np.abs(u))


def off_the_grid(y):
    """0 < y < 1/4 and y not a multiple of 2^-53. Noise added to 1 lands there only through
    1 + n with n in (-1, -3/4), which is exact and so a multiple of 2^-53 (Sterbenz)."""
    y = np.asarray(y)
    return ((y > 0) & (y < 0.25) & (np.floor(y * 2.0 ** 53) != y * 2.0 ** 53)).astype(int)


def test_a_naive_float_laplace_is_distinguished_where_opendp_is_not():
    """Mironov's attack (CCS 2012) as a sampling test: about 10% of the naive sampler's outputs for
    input 0 cannot come from input 1, an infinite privacy loss; OpenDP's outputs lie on the same
    2^-40 grid whatever the input."""
    naive = audit(naive_laplace, 0.0, 1.0, EPS, samples=N, statistic=off_the_grid)
    assert not naive.passed and naive.delta_hat.max() > 5       # a log ratio of at least 5: far past 1
    opendp = audit(lambda x, n: laplace(np.full(n, x), EPS, 1.0), 0.0, 1.0, EPS, samples=N, statistic=off_the_grid)
    assert opendp.passed
    y = laplace(np.zeros(1000), EPS, 1.0)
    assert (y * 2.0 ** 40 == np.round(y * 2.0 ** 40)).all()


def test_privacy_maps_are_recorded_exactly():
    ledger = Ledger()
    laplace(np.zeros(10), 0.5, 2.0, ledger=ledger, saw="ten counts")
    discrete_laplace(np.zeros(10, int), 0.25, 3, ledger=ledger)
    randomized_response(np.zeros(5, int), 1024, 0.1, ledger=ledger)
    privelet(np.zeros((2, 4)), Hierarchy.flat(4), 1.0, 1.0, ledger=ledger)
    got = [s.epsilon for s in ledger.spends]
    assert got[1] == 0.25 and abs(got[2] - 0.1) < 1e-12
    assert all(abs(g - want) < 1e-9 and g <= want * (1 + 1e-12) for g, want in zip(got, [0.5, 0.25, 0.1, 1.0]))
    assert ledger.totals()["user"]["epsilon"] == pytest.approx(1.75, abs=1e-8)
    assert [s.sensitivity for s in ledger.spends] == [2.0, 3.0, None, 1.0]
    assert Ledger.from_dict(ledger.to_dict()).spends == ledger.spends


@pytest.mark.parametrize("call, message", [
    (lambda: laplace([1.0], 0, 1.0), "epsilon must be a positive finite number, got 0"),
    (lambda: laplace([1.0], float("nan"), 1.0), "epsilon must be a positive finite number"),
    (lambda: laplace([1.0], 1.0, -2), "sensitivity must be a positive finite number, got -2"),
    (lambda: laplace([np.inf], 1.0, 1.0), "finite values"),
    (lambda: discrete_laplace([1.5], 1.0, 1), "whole-number counts"),
    (lambda: discrete_laplace([1], 1.0, 0.5), "whole-number sensitivity"),
    (lambda: randomized_response([0, 5], 3, 1.0), r"values must be in 0..2"),
    (lambda: randomized_response([0], 1, 1.0), "k >= 2"),
    (lambda: audit(lambda x, n: np.zeros(n), 0, 1, 1.0, delta=1.5), r"delta must be in \[0, 1\)"),
    (lambda: Ledger().record("laplace", "lots"), "epsilon must be a number"),
])
def test_bad_parameters_are_one_clear_error(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_the_size_count_is_clamped_to_a_public_bound_and_refused_where_its_noise_says_nothing():
    """At epsilon 1e-300 the DP count's noise (scale 1e300) sized 9.2e18 users (array is too big);
    clamped to 1 .. 2^31 - 1 it is post-processing, and a count of scale above 100,000 is refused
    from its public epsilon, before anything is spent (issue 53)."""
    from locsynth.privacy.count import MAX_COUNT, MAX_COUNT_SCALE, check_count_scale, noisy_count

    assert {noisy_count(448, 1e-300) for _ in range(20)} <= {1, MAX_COUNT} and MAX_COUNT == 2 ** 31 - 1
    assert check_count_scale(1 / MAX_COUNT_SCALE, "here") == 1e-5
    ledger = Ledger()
    with pytest.raises(InputError, match=r"^the DP count of the training set's size would get epsilon 5e-08 \(a share "
                                         r"of 1e-06\): its noise, of scale 2e\+07, is beyond 100,000 and says nothing "
                                         r"of the size; raise `epsilon` or `size_share`, or give `size_share` 0"):
        check_count_scale(5e-8, "a share of 1e-06")
    assert not ledger.spends


@pytest.mark.parametrize("h", [Hierarchy.quadtree(3, 5), Hierarchy.from_levels(list("aabbbc"), list("xyxxyz")),
                               Hierarchy.flat(4)], ids=["quadtree", "levels", "flat"])
def test_privelet_transform_and_its_generalized_sensitivity(h):
    """The inverse undoes the transform, and no change of one leaf moves the weighted coefficients
    by more than rho (the claim the noise scale rests on), with equality somewhere."""
    x = np.random.default_rng(1).integers(0, 9, (3, h.n_leaves)).astype(float)
    c = coefficients(x, h)
    assert np.allclose(reconstruct(c, h), x)
    rho, w = generalized_sensitivity(h), weights(h)
    moves = []
    for i in range(h.n_leaves):
        y = x.copy()
        y[:, i] += 1.0
        moves.append((np.abs(coefficients(y, h) - c)[0] * w).sum())
    assert max(moves) == pytest.approx(rho) and min(moves) <= rho + 1e-12
    noisy = privelet(x, h, 1.0, 1.0)
    assert noisy.shape == x.shape and not np.allclose(noisy, x)


def test_hierarchies_of_spaces():
    grid = Grid(4, 4, (0.0, 0.04, 0.0, 0.04))
    h = grid.hierarchy()
    assert h.n_leaves == 16 and h.fanout[h.root] == 4 and generalized_sensitivity(h) == 3
    cats = Grid(1, 3, (0.0, 0.01, 0.0, 0.03), category=np.array(["food", "shop", "food"], dtype=object)).hierarchy()
    assert cats.parent[0] == cats.parent[2] != cats.parent[1] and cats.depth[:3].tolist() == [2, 2, 2]


@pytest.mark.slow
def test_noisy_top_k_of_monotone_counts():
    """OpenDP's noisy top-k (privacy/topk.py), k = 2 of 3, on counts one user raises by 1 (as
    prepare --dp-epsilon's visitors per venue): the ordered pair chosen is the output."""
    from locsynth.privacy.topk import noisy_top_k

    def chosen(x, n, eps):
        pairs = np.array([noisy_top_k(np.asarray(x), 2, eps) for _ in range(n)])
        return pairs[:, 0] * 3 + pairs[:, 1]

    ledger = Ledger()
    noisy_top_k(np.array([3, 3, 0]), 2, EPS, ledger=ledger)
    assert ledger.spends[0].epsilon == pytest.approx(EPS) and ledger.spends[0].mechanism == "noisy-top-k"
    honest = audit(lambda x, n: chosen(x, n, EPS), [3, 3, 0], [4, 3, 0], EPS, samples=4000, repeats=1, beta=BETA)
    mutant = audit(lambda x, n: chosen(x, n, 3 * EPS), [3, 3, 0], [4, 3, 0], EPS, samples=4000, repeats=1,
                   beta=BETA)
    assert honest.passed, str(honest)
    assert not mutant.passed, str(mutant)
    with pytest.raises(InputError, match="selects 1 to 3 candidates"):
        noisy_top_k(np.array([1, 2, 3]), 4, EPS)


@pytest.mark.slow
def test_noisy_top_k_draws_exponential_noise_permute_and_flip_not_gumbel():
    """Issue #35: OpenDP's pure-DP top-k adds exponential noise (report-noisy-max with exponential
    noise is permute-and-flip), not Gumbel noise as the docstrings said. Scores 0 and 1 at scale 1:
    the higher one wins with probability 1 - e^-1 / 2 = 0.816 (permute-and-flip), 1 / (1 + e^-1) =
    0.731 with Gumbel noise."""
    from locsynth.privacy.empirical import clopper_pearson
    from locsynth.privacy.topk import noisy_top_k

    n = 4000
    wins = sum(int(noisy_top_k(np.array([0, 1]), 1, 1.0)[0]) for _ in range(n))
    low, high = clopper_pearson(np.array([wins]), np.array([n]), 0.999)
    assert low[0] < 1 - np.exp(-1) / 2 < high[0]
    assert 1 / (1 + np.exp(-1)) < low[0]


def test_the_dp_footprint_of_visit_weights():
    """A trip of one cell added moves that cell's weight by 1 (each trip's distinct cells share 1):
    whether the footprint keeps that cell passes at EPS, and the footprint at 2 EPS claimed at EPS
    fails (its threshold, 2 noise scales, moves with it)."""
    from locsynth.privacy.footprint import noisy_footprint, visit_weights

    trace, cell = np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1, 2, 2])
    w1 = visit_weights(trace, cell, 3)
    w2 = visit_weights(np.r_[trace, 3], np.r_[cell, 0], 3)
    assert np.allclose(w1, [0.5, 1.5, 1.0]) and np.allclose(w2 - w1, [1, 0, 0])
    check(lambda w, n, eps: noisy_footprint(np.tile(w, (n, 1)), eps)[:, 0].astype(float), w1, w2,
          bins=np.array([-0.5, 0.5, 1.5]))
