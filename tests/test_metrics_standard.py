"""The standard suite (metrics/standard.py): each metric on hand-made points with hand-computed
values, the fast kernels against plain loops, and sets against themselves on real data."""

import math

import numpy as np
import pytest
from scipy import stats

from helpers import traceset, trip_set
from locsynth.evaluate import evaluate
from locsynth.metrics import standard as st
from locsynth.metrics.standard import Points, Settings


def pts(*traces) -> Points:
    xy = [p for t in traces for p in t]
    return Points(np.array([p[0] for p in xy], float), np.array([p[1] for p in xy], float),
                  np.concatenate([[0], np.cumsum([len(t) for t in traces])]).astype(np.int64))


def test_jsd_by_hand_natural_log_and_bits():
    assert st.jsd([1, 0], [0, 1]) == pytest.approx(math.log(2))
    assert st.jsd([1, 0], [0, 1], base=2) == pytest.approx(1.0)
    # M = (.75, .25): KL(P||M) = .5 ln(2/3) + .5 ln 2, KL(Q||M) = ln(4/3)
    expected = 0.5 * (0.5 * math.log(2 / 3) + 0.5 * math.log(2)) + 0.5 * math.log(4 / 3)
    assert st.jsd([0.5, 0.5], [1, 0]) == pytest.approx(expected)
    assert st.jsd([2, 2], [3, 3]) == 0.0


def test_query_answers_count_points_and_segments_by_hand():
    real = pts([(0, 0), (10, 0)], [(0, 10)])
    # (5, 1) r 1.5: the segment of the first trace passes at distance 1; no point is that close
    # (5, 5): nothing; (0, 9): the point of the second trace at distance 1; (0, 0): the first's point
    cx, cy = np.array([5.0, 5.0, 0.0, 0.0]), np.array([1.0, 5.0, 9.0, 0.0])
    assert st._query_answers(real.x, real.y, real.offsets, cx, cy, 1.5).tolist() == [1, 0, 1, 1]
    assert st._query_answers(real.x, real.y, real.offsets, cx, cy, 0.9).tolist() == [0, 0, 0, 1]
    assert st._query_answers(real.x, real.y, real.offsets, cx, cy, 20.0).tolist() == [2, 2, 2, 2]


def _plain_answers(p: Points, cx, cy, r):
    out = []
    for qx, qy in zip(cx, cy):
        hits = 0
        for k in range(p.n_traces):
            xs, ys = p.x[p.offsets[k]:p.offsets[k + 1]], p.y[p.offsets[k]:p.offsets[k + 1]]
            d = [math.hypot(x - qx, y - qy) for x, y in zip(xs, ys)]
            for i in range(1, len(xs)):
                a, b = np.array([xs[i - 1], ys[i - 1]]), np.array([xs[i], ys[i]])
                s = np.clip(np.dot([qx, qy] - a, b - a) / max(np.dot(b - a, b - a), 1e-300), 0, 1)
                d.append(float(np.linalg.norm(a + s * (b - a) - [qx, qy])))
            hits += min(d) <= r
        out.append(hits)
    return out


def test_query_error_equals_the_formula_on_plain_loops():
    rng = np.random.default_rng(0)
    real = pts(*[[tuple(p) for p in rng.random((rng.integers(1, 6), 2)) * 100] for _ in range(40)])
    syn = pts(*[[tuple(p) for p in rng.random((rng.integers(1, 6), 2)) * 100] for _ in range(20)])
    box = st.bounding_box(real)
    s = Settings(queries=30)
    cx, cy, r = st.queries(box, s)
    a, b = np.array(_plain_answers(real, cx, cy, r)), np.array(_plain_answers(syn, cx, cy, r)) * 2.0
    expected = np.mean(np.abs(b - a) / np.maximum(a, 0.01 * 40))
    assert st.query_error(real, syn, box, s) == pytest.approx(expected)
    assert st.query_error(real, real, box, s) == 0.0


def test_travelled_distance_diameter_and_buckets_by_hand():
    p = pts([(0, 0), (3, 4), (0, 8)], [(1, 1)], [(0, 0), (6, 8)])
    assert st.travelled(p).tolist() == [10.0, 0.0, 10.0]
    assert st.diameters(p.x, p.y, p.offsets).tolist() == [8.0, 0.0, 10.0]
    # real values 0 and 10 in two buckets of width 5; the synthetic 20 falls into the last bucket
    assert st.bucket_jsd(np.array([0.0, 10.0]), np.array([20.0]), 2, np.e) == pytest.approx(
        st.jsd([0.5, 0.5], [0, 1]))
    assert st.bucket_jsd(np.array([0.0, 10.0]), np.array([1.0, 9.0]), 2, np.e) == 0.0


def test_cells_merge_trip_distribution_and_coverage_by_hand():
    p = pts([(0, 0), (1, 1), (9, 1), (9, 9)], [(9, 9), (0, 9)])
    box = (0.0, 0.0, 10.0, 10.0)
    cell = st.cells(p, box, 2)                    # 2 x 2: row * 2 + col
    assert cell.tolist() == [0, 0, 1, 3, 3, 2]
    seq, offsets = st.merged(cell, p.offsets)
    assert seq.tolist() == [0, 1, 3, 3, 2] and offsets.tolist() == [0, 3, 5]
    trips = st.trip_distribution(seq, offsets, 2).reshape(4, 4)
    assert trips[0, 3] == 1 and trips[3, 2] == 1 and trips.sum() == 2
    assert st.coverage(cell, p.trace, 2).tolist() == [1, 1, 1, 2]
    assert st.density(cell, 2).tolist() == [2, 1, 1, 2]
    # outside the box: the nearest edge cell
    assert st.cells(pts([(-5, 50)]), box, 2).tolist() == [2]


def test_patterns_f1_and_support_error_by_hand():
    seq, offsets = st.merged(np.array([0, 0, 1, 2, 1, 2]), np.array([0, 4, 6]))
    counts = st.pattern_counts(seq, offsets, 2, (2, 8))
    code = lambda *c: int(np.polyval(np.array(c) + 1, 5))   # noqa: E731  base k^2 + 1 = 5
    assert counts == {code(0, 1): 1, code(1, 2): 2, code(0, 1, 2): 1}
    real = {1: 10, 2: 5, 3: 4}
    syn = {1: 6, 2: 5, 9: 7}
    f1, err = st.pattern_scores(real, syn, 2)        # real top 2 {1, 2}; synthetic top 2 {9, 1}
    assert f1 == pytest.approx(0.5)
    assert err == pytest.approx((4 / 10 + 0 / 5) / 2)
    assert st.pattern_scores(real, syn, 2, scale=2.0)[1] == pytest.approx((2 / 10 + 5 / 5) / 2)


def test_kendall_tau_a_and_b_by_hand_and_against_scipy():
    a, b = np.array([3.0, 2, 1, 1]), np.array([1.0, 2, 3, 3])
    assert st.kendall_tau(a, b, "a") == pytest.approx(-5 / 6)
    assert st.kendall_tau(a, b, "b") == pytest.approx(-1.0)
    assert st.kendall_tau(a, a, "b") == 1.0 and st.kendall_tau(a, a, "a") == pytest.approx(5 / 6)
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 5, 50).astype(float), rng.integers(0, 5, 50).astype(float)
    assert st.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)


def test_hotspot_ndcg_by_hand():
    real = np.array([10.0, 9, 8, 7, 6, 5, 4, 3, 2, 1])
    assert st.hotspot_ndcg(real, real) == 1.0
    syn = real.copy()
    syn[[0, 1]] = syn[[1, 0]]                        # synthetic ranks the top two the other way
    syn[9] = 100                                     # and puts a cold cell first
    # synthetic top 5: cells 9, 1, 0, 2, 3 -> gains 0, 1/2, 1, 1/3, 1/4
    discount = 1 / np.log2(np.arange(2, 7))
    expected = (np.array([0, 1 / 2, 1, 1 / 3, 1 / 4]) * discount).sum() / (discount / np.arange(1, 6)).sum()
    assert st.hotspot_ndcg(real, syn) == pytest.approx(expected)


def test_suite_on_a_tiny_trip_set_and_against_itself():
    real = trip_set([[0, 1, 2], [1, 2, 3], [3, 2], [0, 3]], [8, 8, 9, 9])
    same = st.standard_metrics(real, real)
    assert same == {"query_error": 0.0, "density_error": 0.0, "trip_error": 0.0, "length_error": 0.0,
                    "diameter_error": 0.0, "pattern_f1": 1.0, "pattern_support_error": 0.0, "kendall_tau": 1.0,
                    "hotspot_error": 0.0}
    other = trip_set([[3, 3], [3, 2, 1, 0]], [8, 9])
    worse = st.standard_metrics(real, other)
    assert worse["trip_error"] > 0 and worse["length_error"] > 0 and worse["pattern_f1"] < 1
    assert all(isinstance(v, float) for v in worse.values())


def test_evaluate_reports_the_suite_and_names_its_choices():
    test = traceset([[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1)], [(0, 0), (1, 0)]])
    report = evaluate(test, test, test, attacks=())
    for key in st.KEYS:
        assert key in report.metrics
    assert report.metrics["kendall_tau"]["synthetic"] == 1.0
    assert report.metrics["query_error"]["training"] == 0.0
    assert report.meta["standard"]["jsd"] == "natural logarithm"
    bits = evaluate(test, test, traceset([[(0, 2)], [(0, 1)]]), attacks=(), standard_jsd_base="2")
    nat = evaluate(test, test, traceset([[(0, 2)], [(0, 1)]]), attacks=())
    assert bits.metrics["trip_error"]["synthetic"] == pytest.approx(nat.metrics["trip_error"]["synthetic"] / math.log(2))
    assert "query_error" not in evaluate(test, test, test, attacks=(), standard=False).metrics


def test_real_sets_against_themselves_score_perfectly(pf_sets):
    train, test = pf_sets["train"], pf_sets["test"]
    same = st.standard_metrics(train, train)
    assert [same[k] for k in st.KEYS] == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    other = st.standard_metrics(test, train)
    assert 0 < other["density_error"] < 0.05 and other["kendall_tau"] > 0.5
