"""Hand-computed utility metrics on tiny inputs (paper 001 §4.3)."""

import numpy as np
import ot
import pytest
import scipy.sparse as sp
from scipy.stats import wasserstein_distance

from helpers import traceset
from locsynth.metrics.population import population_by_slot, top_mask, tp_tv
from locsynth.metrics.transitions import planar_km, random_projections, tm_emd, tm_swd, transition_counts, transition_matrix
from locsynth.metrics.visits import uniform_visit_fractions, vf_tv, visit_fraction_counts


def test_population_and_tp_tv_by_hand():
    # slot 0 (00:00-02:00): locations 0, 0, 1, 2 ; slot 1: 1, 1
    ts = traceset([[(0, 0), (1, 0), (2, 1)], [(0, 1), (1, 2), (3, 1)]], slot="2h")
    p = population_by_slot(ts)
    assert p.shape == (12, 3) and np.allclose(p.sum(axis=1), 1)
    assert np.allclose(p[0], [0.5, 0.25, 0.25]) and np.allclose(p[1], [0, 1, 0])
    assert np.allclose(p[2], 1 / 3)             # an empty slot is uniform
    q = p.copy()
    q[0] = [0.25, 0.25, 0.5]                    # TV in slot 0 = 0.5 * (0.25 + 0 + 0.25) = 0.25
    assert tp_tv(p, q) == pytest.approx(0.25 / 12)
    # Top-1 keeps only location 0 in slot 0: |0.5 - 0.25| / 2
    assert tp_tv(p, q, top=1) == pytest.approx(0.125 / 12)


def test_top_mask_breaks_ties_by_lower_id():
    assert top_mask(np.array([[0.2, 0.4, 0.2, 0.2]]), 2).tolist() == [[True, True, False, False]]


def test_transition_matrix_counts_only_consecutive_instants():
    ts = traceset([[(0, 0), (1, 1), (2, 1), (5, 2)]])
    counts = transition_counts(ts).toarray()
    assert counts.tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 0]]     # 1 -> 2 spans a gap: not counted
    m = transition_matrix(ts).toarray()
    assert m.tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 1]]          # empty row 2: self-loop
    assert transition_counts(ts, consecutive_only=False).toarray()[1, 2] == 1


def test_tm_emd_against_scipy_on_a_row_grid():
    ts = traceset([[(0, 0), (1, 2)], [(0, 0), (1, 0)]], rows=1, cols=3)
    ref = transition_matrix(ts)                        # row 0: {0: 0.5, 2: 0.5}; rows 1, 2 self-loops
    syn = sp.csr_array(np.eye(3))
    emd_y, emd_x = tm_emd(ref, syn, ts.space)
    assert emd_y == 0.0                                # a single row of cells: nothing moves in y
    want = wasserstein_distance([0, 1, 2], [0, 1, 2], [0.5, 0, 0.5], [1, 0, 0]) / 3
    assert emd_x == pytest.approx(want) and emd_x == pytest.approx(1.0 / 3)


def test_tm_swd_equals_pot_row_by_row():
    ts = traceset([[(0, 0), (1, 2), (2, 4), (3, 5)], [(0, 3), (1, 1)]], rows=2, cols=3)
    ref = transition_matrix(ts)
    syn = transition_matrix(traceset([[(0, 0), (1, 1), (2, 5)], [(0, 3), (1, 3)]], rows=2, cols=3))
    x = planar_km(ts.space)
    a, b = ref.toarray(), syn.toarray()
    want = np.mean([ot.sliced_wasserstein_distance(x, x, a[i], b[i], n_projections=20, p=1, seed=3)
                    for i in range(6)])
    assert tm_swd(ref, syn, ts.space, n_projections=20, seed=3) == pytest.approx(want, rel=1e-12)
    assert tm_swd(ref, ref, ts.space) == 0.0


@pytest.mark.parametrize("d,k,seed", [(2, 50, 0), (2, 20, 3), (5, 7, 11)])
def test_random_projections_are_pots(d, k, seed):
    assert np.array_equal(random_projections(d, k, seed), ot.sliced.get_random_projections(d, k, seed=seed))


def test_visit_fractions_by_hand():
    # user 0: 5 events, 3 at loc 0 (0.6 -> bin ceil(2.4)-1 = 2 of 4), 2 at loc 1 (0.4 -> bin 1)
    # user 1: 4 events, too few; user 2: 5 events all at loc 2 (fraction 1: skipped)
    ts = traceset([[(0, 0), (1, 0), (2, 0), (3, 1), (4, 1)], [(0, 1)] * 1 + [(1, 1), (2, 1), (3, 1)],
                   [(i, 2) for i in range(5)]])
    h = visit_fraction_counts(ts, bins=4)
    assert h.tolist() == [[0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]]
    syn = np.array([[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0.0]])
    # location 0 equal; location 1: TV 1; location 2 has no reference histogram
    assert vf_tv(h, syn) == pytest.approx(0.5)
    assert vf_tv(h, np.zeros_like(h)) == pytest.approx(1.0)   # absent: all mass in bin 0, unlike both
    assert uniform_visit_fractions(400, 24)[:, 0].all()
