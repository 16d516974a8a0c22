"""The standard suite (metrics/standard.py, metrics/grid_paths.py): each metric on hand-made points
with hand-computed values, the fast kernels against plain loops, one hand-made example for each way
AdaTrace's own evaluation (Evaluation.java) differs from locsynth's reading, with the value their
Java gives (the examples were also run through their Java: docs/benchmark.md), and sets against
themselves on real data."""

import math

import numpy as np
import pytest
from scipy import stats

from helpers import traceset, trip_set
from locsynth.core.errors import InputError
from locsynth.evaluation.evaluate import evaluate
from locsynth.metrics import grid_paths as gp
from locsynth.metrics import standard as st
from locsynth.metrics.grid_paths import Paths
from locsynth.metrics.standard import Points, Settings

ADATRACE, CORRECTED, LDPTRACE = Settings(), Settings(flavour="corrected"), Settings(flavour="ldptrace")


def pts(*traces) -> Points:
    xy = [p for t in traces for p in t]
    return Points(np.array([p[0] for p in xy], float), np.array([p[1] for p in xy], float),
                  np.concatenate([[0], np.cumsum([len(t) for t in traces])]).astype(np.int64))


def cell(i: int, j: int, k: int) -> int:
    """Cell (column i, row j) of a k x k grid."""
    return i * k + j


def code(*cells, k: int) -> int:
    return st.pattern_code(*cells, k=k)


def test_jsd_by_hand_natural_log_and_bits():
    assert st.jsd([1, 0], [0, 1]) == pytest.approx(math.log(2))
    assert st.jsd([1, 0], [0, 1], base=2) == pytest.approx(1.0)
    # M = (.75, .25): KL(P||M) = .5 ln(2/3) + .5 ln 2, KL(Q||M) = ln(4/3)
    expected = 0.5 * (0.5 * math.log(2 / 3) + 0.5 * math.log(2)) + 0.5 * math.log(4 / 3)
    assert st.jsd([0.5, 0.5], [1, 0]) == pytest.approx(expected)
    assert st.jsd([2, 2], [3, 3]) == 0.0
    # AdaTrace's calcJSD takes the shares as given: P = (0, 1/3) sums to 1/3, M = (1/4, 5/12)
    expected = 0.5 * (1 / 3 * math.log(4 / 5)) + 0.5 * (0.5 * math.log(2) + 0.5 * math.log(6 / 5))
    assert st.java_jsd([0, 1 / 3], [0.5, 0.5]) == pytest.approx(expected)
    # LDPTrace's: every term smoothed by 1e-8, M = (.5, .5)
    eps = 1e-8
    expected = 0.5 * math.log((1 + eps) / (0.5 + eps)) + 0.5 * math.log((1 + eps) / (0.5 + eps))
    assert st.smoothed_jsd([1, 0], [0, 1]) == pytest.approx(expected)
    assert st.smoothed_jsd([1, 0], [0, 1]) != st.jsd([1, 0], [0, 1])


def test_query_answers_count_points_and_segments_by_hand():
    real = pts([(0, 0), (10, 0)], [(0, 10)])
    # (5, 1) r 1.5: the segment of the first trace passes at distance 1; no point is that close
    # (5, 5): nothing; (0, 9): the point of the second trace at distance 1; (0, 0): the first's point
    cx, cy = np.array([5.0, 5.0, 0.0, 0.0]), np.array([1.0, 5.0, 9.0, 0.0])
    assert st.query_answers(real, cx, cy, 1.5, "corrected").tolist() == [1, 0, 1, 1]
    assert st.query_answers(real, cx, cy, 0.9, "corrected").tolist() == [0, 0, 0, 1]
    assert st.query_answers(real, cx, cy, 20.0, "corrected").tolist() == [2, 2, 2, 2]
    # AdaTrace's Query.java: the same, but the single-point second trace never answers (:48)
    assert st.query_answers(real, cx, cy, 1.5, "adatrace").tolist() == [1, 0, 0, 1]


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
    s = Settings(flavour="corrected", queries=30)
    cx, cy, r = st.queries(box, s)
    assert r == max(box[2] - box[0], box[3] - box[1]) / 3.0
    a, b = np.array(_plain_answers(real, cx, cy, r)), np.array(_plain_answers(syn, cx, cy, r)) * 2.0
    expected = np.mean(np.abs(b - a) / np.maximum(a, 0.01 * 40))
    assert st.query_error(real, syn, box, s) == pytest.approx(expected)
    assert st.query_error(real, real, box, s) == 0.0


def test_the_sqrt_threshold_decides_as_the_square_root_does():
    rng = np.random.default_rng(3)
    for r in rng.random(50) * 10.0 ** rng.integers(-3, 4, 50):
        limit = st.sqrt_threshold(r)
        assert np.sqrt(limit) <= r < np.sqrt(np.nextafter(limit, np.inf))


def test_adatrace_queries_single_points_never_answer_repeated_points_always():
    """Cause 8 (Query.java:48, :57). Radius = 4 / 3 (the real box is 4 x 4). Centre (2, 2): no real
    trace is within 4/3 (both pass at distance 2); of the synthetic, the point at the centre does
    not answer (one point: no segment to loop over) and the two identical points far away do.
    Centre (0, 0): the first real trace; synthetic: the repeated points and the short segment.
    Their value, with these centres: (|1 - 0| / max(0, 0.02) + |2 - 1| / 1) / 2 = 25.5."""
    real = pts([(0, 0), (4, 0)], [(0, 4), (4, 4)])
    syn = pts([(2, 2)], [(4, 4), (4, 4)], [(0, 0), (0, 0.5)])
    cx, cy, r = np.array([2.0, 0.0]), np.array([2.0, 0.0]), 4 / 3
    a, b = st.query_answers(real, cx, cy, r, "adatrace"), st.query_answers(syn, cx, cy, r, "adatrace")
    assert a.tolist() == [0, 1] and b.tolist() == [1, 2]
    assert st.relative_error(a, b, 0.01 * real.n_traces) == 25.5
    # corrected: the single point answers where it lies, the repeated far points do not
    assert st.query_answers(syn, cx, cy, r, "corrected").tolist() == [1, 1]


def test_travelled_distance_diameter_and_buckets_by_hand():
    p = pts([(0, 0), (3, 4), (0, 8)], [(1, 1)], [(0, 0), (6, 8)])
    assert st.travelled(p).tolist() == [10.0, 0.0, 10.0]
    assert st.diameters(p.x, p.y, p.offsets).tolist() == [8.0, 0.0, 10.0]
    # real values 0 and 10 in two buckets of width 5; the synthetic 20 falls into the last bucket
    assert st.bucket_jsd(np.array([0.0, 10.0]), np.array([20.0]), 2, np.e) == pytest.approx(
        st.jsd([0.5, 0.5], [0, 1]))
    assert st.bucket_jsd(np.array([0.0, 10.0]), np.array([1.0, 9.0]), 2, np.e) == 0.0


def test_adatrace_buckets_start_at_zero_drop_values_and_divide_by_all():
    """Cause 6 (Evaluation.java:60-87, 112-139). Real lengths 2, 4, 6 and synthetic 1, 3 in 2 buckets:
    width (6 - 2) / 2 = 2, buckets [0, 2) and [2, 4) from 0: the real 4 and 6 fall in none and are
    dropped, yet the shares divide by all 3 traces: P = (0, 1/3), Q = (1/2, 1/2). Their value:
    0.1816765924527734 (test_jsd_by_hand's calcJSD of these shares)."""
    real = pts([(0, 0), (2, 0)], [(0, 0), (4, 0)], [(0, 0), (6, 0)])
    syn = pts([(0, 0), (1, 0)], [(0, 0), (3, 0)])
    p, q = st.adatrace_bucket_shares(st.travelled(real), st.travelled(syn), 2)
    assert p.tolist() == [0, 1 / 3] and q.tolist() == [0.5, 0.5]
    s = Settings(buckets=2)
    values = st.score_points(real, syn, s)
    assert values["length_error"] == values["diameter_error"] == pytest.approx(0.1816765924527734, abs=1e-15)
    # corrected: buckets [2, 4), [4, 6] from the real minimum, the synthetic 1 and 3 in the first
    corrected = st.score_points(real, syn, Settings(flavour="corrected", buckets=2))
    assert corrected["length_error"] == pytest.approx(st.jsd([1, 2], [2, 0]))
    # LDPTrace: closed buckets [0, 2], [2, 4]: the real 2 counts twice, 4 once, 6 not at all; shares
    # of the counted total
    p, q = st.ldptrace_bucket_shares(st.travelled(real), st.travelled(syn), 2)
    assert p.tolist() == [1 / 3, 2 / 3] and q.tolist() == [0.5, 0.5]


def test_adatrace_reads_raw_degrees_longitude_as_x():
    ts = traceset([[(0, 0), (1, 2)]], rows=2, cols=3)
    x, y = st.degrees(ts.space)
    assert np.array_equal(x, ts.space.lon) and np.array_equal(y, ts.space.lat)
    # the length of the one trace in degrees: from cell 0 (row 0, col 0) to cell 2 (row 0, col 2)
    features = st.features_adatrace(st.points(ts, st.degrees(ts.space)), (0.0, 0.0, 1.0, 1.0), ADATRACE)
    assert features.lengths == pytest.approx([ts.space.lon[2] - ts.space.lon[0]])


def test_corrected_cells_paths_trip_distribution_and_coverage_by_hand():
    p = pts([(0, 0), (1, 1), (9, 1), (9, 9)], [(9, 9), (0, 9)])
    box = (0.0, 0.0, 10.0, 10.0)
    cells = gp.corrected_cells(p.x, p.y, box, 2)          # 2 x 2: column * 2 + row
    assert cells.tolist() == [0, 0, 2, 3, 3, 1]
    paths = gp.corrected_paths(p.x, p.y, p.offsets, box, 2)
    assert paths.cells.tolist() == [0, 2, 3, 3, 1] and paths.offsets.tolist() == [0, 3, 5]
    trips = st.trip_distribution(paths).reshape(4, 4)
    assert trips[0, 3] == 1 and trips[3, 1] == 1 and trips.sum() == 2
    assert st.coverage(paths).tolist() == [1, 1, 1, 2]
    assert st.density(cells, 2).tolist() == [2, 1, 1, 2]
    # outside the box: the nearest edge cell
    assert gp.corrected_cells(np.array([-5.0]), np.array([50.0]), box, 2).tolist() == [1]


def test_interpolation_fills_the_cells_between_non_adjacent_cells():
    """Cause 1 (GridTrajectory.java:68-94, Grid.java:149-196). On a 3 x 3 grid over [0, 3]^2 the real
    trace (0.5, 0.5) -> (2.5, 0.5) jumps from cell (0, 0) to (2, 0): their route adds (1, 0); the
    trace (0, 0) -> (3, 3) goes diagonally through (1, 1). Real coverage a = (2, 0, 0, 1, 1, 0, 1,
    0, 1) in cell order (0,0), (0,1), ..., (2,2); the synthetic (0.5, 0.5) -> (1.5, 0.5) covers
    b = (1, 0, 0, 1, 0, 0, 0, 0, 0). Their tau, pair by pair over the 36 pairs: 6 + 4 + 4 + 2 - 2
    + 2 - 1 + 1 = 16, so 16 / 36 = 4 / 9 (0.4444444444444444 from their Java)."""
    real = pts([(0.5, 0.5), (2.5, 0.5)], [(0, 0), (3, 3)])
    syn = pts([(0.5, 0.5), (1.5, 0.5)])
    box, k = st.bounding_box(real), 3
    paths = gp.adatrace_paths(real.x, real.y, real.offsets, box, k)
    assert paths.cells.tolist() == [cell(0, 0, k), cell(1, 0, k), cell(2, 0, k),
                                    cell(0, 0, k), cell(1, 1, k), cell(2, 2, k)]
    assert st.coverage(paths).tolist() == [2, 0, 0, 1, 1, 0, 1, 0, 1]
    values = st.score_points(real, syn, Settings(grid=3, coverage_grid=3))
    assert values["kendall_tau"] == pytest.approx(4 / 9, abs=1e-15)
    # without the filled cells (1, 0) and (1, 1) the tau would differ
    assert st.kendall_tau(np.array([2, 0, 0, 0, 0, 0, 1, 0, 1]), st.coverage(
        gp.adatrace_paths(syn.x, syn.y, syn.offsets, box, k)), "adatrace") != pytest.approx(4 / 9)
    # corrected: the cells the segments cross; (0, 0) -> (3, 3) passes the corners exactly: diagonal
    corrected = gp.corrected_paths(real.x, real.y, real.offsets, box, k)
    assert corrected.cells.tolist() == paths.cells.tolist()
    # a segment that is not diagonal crosses a line at a time: (0.5, 0.5) -> (2.5, 1.5) crosses
    # x = 1 at y = 0.75, then y = 1 at x = 1.5, then x = 2
    bent = gp.corrected_paths(np.array([0.5, 2.5]), np.array([0.5, 1.5]), np.array([0, 2]), box, k)
    assert bent.cells.tolist() == [cell(0, 0, k), cell(1, 0, k), cell(1, 1, k), cell(2, 1, k)]


def test_points_outside_the_real_box_go_to_the_first_cell():
    """Cause 2 (GridTrajectory.java:23-43). On a 2 x 2 grid over [0, 2]^2, (2.0005, 1) is in no cell,
    but (1.9995, 0.9995) is in (1, 0); (5, 5) is in none either way and goes to (0, 0). The real
    trip (0, 0) -> (2, 2) is (0,0) -> (1,1); the synthetic (0.5, 0.5) -> (5, 5) becomes (0,0) ->
    (0,0): disjoint, their trip error ln 2. Corrected clips (5, 5) into (1, 1): the same trip, 0."""
    box = (0.0, 0.0, 2.0, 2.0)
    found = gp.adatrace_cells(np.array([2.0005, 5.0, 2.0]), np.array([1.0, 5.0, 2.0]), box, 2)
    assert found.tolist() == [cell(1, 0, 2), cell(0, 0, 2), cell(1, 1, 2)]
    real, syn = pts([(0, 0), (2, 2)]), pts([(0.5, 0.5), (5, 5)])
    assert st.score_points(real, syn, Settings(grid=2, coverage_grid=2))["trip_error"] == math.log(2)
    assert st.score_points(real, syn, Settings(flavour="corrected", grid=2, coverage_grid=2))["trip_error"] == 0.0


def test_single_cell_traces_count_the_pattern_c_c():
    """Cause 3 (GridTrajectory.java:63-65). On a 2 x 2 grid over [0, 2]^2, three one-point real traces
    in c = (0, 0) become [c, c]: the real patterns are (c, c) 3 times and (c, d) once, d = (1, 1);
    the synthetic has (c, d) once. Top 2: F1 = 2 P R / (P + R), P = 1, R = 1/2: 2/3; support error
    (|3 - 0| / 3 + |1 - 1| / 1) / 2 = 1/2 (their Java: 0.6666666666666666, 0.5). Corrected keeps
    [c]: the one real pattern is the synthetic's, F1 1 and error 0."""
    real = pts([(0.5, 0.5)], [(0.5, 0.5)], [(0.5, 0.5)], [(0, 0), (2, 2)])
    syn = pts([(0.5, 0.5), (1.5, 1.5)])
    c, d = cell(0, 0, 2), cell(1, 1, 2)
    paths = gp.adatrace_paths(real.x, real.y, real.offsets, st.bounding_box(real), 2)
    table = st.pattern_table(paths)
    assert dict(zip(table.codes.tolist(), table.counts.tolist())) == {code(c, c, k=2): 3, code(c, d, k=2): 1}
    s = Settings(grid=2, coverage_grid=2, top_patterns=2, scale_counts=False)    # their supports: raw counts
    values = st.score_points(real, syn, s)
    assert values["pattern_f1"] == pytest.approx(2 / 3, abs=1e-15) and values["pattern_support_error"] == 0.5
    corrected = st.score_points(real, syn, Settings(flavour="corrected", grid=2, coverage_grid=2, top_patterns=2,
                                                    scale_counts=False))
    assert corrected["pattern_f1"] == 1.0 and corrected["pattern_support_error"] == 0.0


def test_kendall_tau_variants_by_hand_and_against_scipy():
    """Cause 4 (Evaluation.java:477-498). Their tau skips pairs tied in the real counts, counts a
    synthetic tie as discordant when real i > j and as concordant when real i < j, and divides by
    all n (n - 1) / 2 pairs."""
    a, b = np.array([3.0, 2, 1, 1]), np.array([1.0, 2, 3, 3])
    assert st.kendall_tau(a, b, "adatrace") == pytest.approx(-5 / 6)   # 5 discordant, 1 real tie
    assert st.kendall_tau(a, b, "b") == pytest.approx(-1.0)
    # against all-equal synthetic counts: +1 when the real counts rise with the cell, -1 when they fall
    assert st.kendall_tau(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), "adatrace") == 1.0
    assert st.kendall_tau(np.array([3.0, 2, 1]), np.array([5.0, 5, 5]), "adatrace") == -1.0
    assert st.kendall_tau(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), "b") == 0.0
    # LDPTrace: a synthetic tie is always discordant
    assert st.kendall_tau(np.array([1.0, 2, 3]), np.array([5.0, 5, 5]), "ldptrace") == -1.0
    # a set against itself: below 1 as soon as two real counts tie (2 of 3 pairs untied)
    same = np.array([1.0, 1, 2])
    assert st.kendall_tau(same, same, "adatrace") == pytest.approx(2 / 3) and st.kendall_tau(same, same, "b") == 1.0
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 5, 50).astype(float), rng.integers(0, 5, 50).astype(float)
    assert st.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    with pytest.raises(InputError, match="'b', 'adatrace' or 'ldptrace'"):
        st.kendall_tau(x, y, "a")


def test_points_on_grid_lines_are_assigned_deterministically():
    """Cause 5 (Cell.java:28-33). Their cells are closed and the first match wins: on [0, 3] in 3
    cells, x = 1 and 2 lie on lines and go to the lower cell. But the lines are doubles: on [0, 0.3],
    cell 0 ends at 0.3 / 3 = 0.09999999999999999 < 0.1, so x = 0.1 is in cell 1 in their Java (and in
    the adatrace flavour). Corrected puts a point within 1e-9 cell widths of a line in the lower
    cell, so a lattice of points on every line keeps its cells whatever the scale."""
    half = np.full(3, 0.5)
    assert gp.adatrace_cells(np.array([1.0, 2.0, 3.0]), half, (0, 0, 3, 3), 3).tolist() == [
        cell(0, 0, 3), cell(1, 0, 3), cell(2, 0, 3)]
    assert gp.adatrace_cells(np.array([0.1, 0.2]), half[:2] / 10, (0, 0, 0.3, 0.3), 3).tolist() == [
        cell(1, 0, 3), cell(2, 0, 3)]
    assert gp.corrected_cells(np.array([0.1, 0.2]), half[:2] / 10, (0, 0, 0.3, 0.3), 3).tolist() == [
        cell(0, 0, 3), cell(1, 0, 3)]
    lattice = np.arange(16) * 0.5            # on every line of a 15 x 15 grid over [0, 7.5]
    expected = [0, 0, *range(1, 15)]
    for scale in (1.0, 1 + 1e-9, 1 / 3, 37.1, 1e5, 0.0056798):
        x = lattice * scale - 122.5
        columns = gp.corrected_cells(x, x, (x[0], x[0], x[-1], x[-1]), 15) // 15
        assert columns.tolist() == expected, scale


def test_patterns_ties_f1_and_support_error_by_hand():
    """Cause 7: ties at the top-k cutoff. Their Java takes tied patterns in HashMap order (not
    reproducible: Cell has no hashCode of its own); adatrace and corrected take the smaller code,
    ldptrace the first seen, as LDPTrace's stable sort of an insertion-ordered dict."""
    k = 2
    paths = Paths(np.array([3, 2, 1, 0, 1, 0, 1]), np.array([0, 2, 4, 7]), k, np.arange(3))
    table = st.pattern_table(paths)
    # (3, 2) once, seen first; (1, 0) twice; (0, 1) once; (1, 0, 1) once; (0, 1, 0) once, ...
    assert table.support(np.array([code(3, 2, k=k), code(1, 0, k=k), code(0, 1, k=k), code(2, 2, k=k)])).tolist() == [
        1, 2, 1, 0]
    assert table.top(1).tolist() == [code(1, 0, k=k)]
    assert table.top(2, ties="code").tolist() == [code(1, 0, k=k), code(0, 1, k=k)]
    assert table.top(2, ties="first").tolist() == [code(1, 0, k=k), code(3, 2, k=k)]
    real_top, syn_top = np.array([1, 2, 3]), np.array([1, 2])
    assert st.f1(real_top, syn_top) == pytest.approx(0.8)
    assert st.adatrace_f1(real_top, syn_top) == pytest.approx(0.8)      # P = 1, R = 2/3
    assert st.ldptrace_f1(real_top, syn_top, 100) == pytest.approx(0.02)     # P = R = 2 / 100
    # no common pattern: their Java divides 0 by 0 (NaN), LDPTrace's raises; the flavours say 0
    assert st.adatrace_f1(real_top, np.array([9])) == 0.0 and st.ldptrace_f1(real_top, np.array([9]), 100) == 0.0
    real = st.Patterns(np.array([1, 2, 3]), np.array([10, 5, 4]), np.array([0, 1, 2]))
    syn = st.Patterns(np.array([1, 2, 9]), np.array([6, 5, 7]), np.array([0, 1, 2]))
    top = real.top(2)
    assert st.support_error(real, syn, top) == pytest.approx((4 / 10 + 0 / 5) / 2)
    assert st.support_error(real, syn, top, scale=2.0) == pytest.approx((2 / 10 + 5 / 5) / 2)
    assert st.support_error(real, syn, top, divisor=100) == pytest.approx((4 / 10) / 100)


def test_ldptrace_grid_drops_points_outside_its_widened_box():
    box = gp.ldptrace_box((0.0, 0.0, 2.0, 2.0))
    assert box == (-1e-6, -1e-6, 2.000001, 2.000001)
    p = pts([(0.5, 0.5), (9, 9), (1.5, 1.5)], [(9, 9)], [(0.5, 0.5)])
    paths = gp.ldptrace_paths(p.x, p.y, p.offsets, box, 2)
    # the point (9, 9) is left out, the trace of it alone dropped, a one-cell path stays [c]
    assert paths.cells.tolist() == [cell(0, 0, 2), cell(1, 1, 2), cell(0, 0, 2)]
    assert paths.kept.tolist() == [0, 2] and paths.offsets.tolist() == [0, 2, 3]


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
    assert st.ldptrace_hotspot_ndcg(real, syn) == pytest.approx(expected)
    # two real hotspots only: locsynth's ideal has two terms; LDPTrace's always five, and its top
    # five of the synthetic take the empty cells 2, 3, 4 in order of index
    two, same = np.array([5.0, 3, 0, 0, 0, 0]), np.array([5.0, 3, 0, 0, 0, 0])
    assert st.hotspot_ndcg(two, same) == 1.0
    ideal = (discount / np.arange(1, 6)).sum()
    assert st.ldptrace_hotspot_ndcg(two, same) == pytest.approx(ideal / ideal)


def test_suite_on_a_tiny_trip_set_and_against_itself():
    real = trip_set([[0, 1, 2], [1, 2, 3], [3, 2], [0, 3]], [8, 8, 9, 9])
    perfect = {"query_error": 0.0, "density_error": 0.0, "trip_error": 0.0, "length_error": 0.0,
               "diameter_error": 0.0, "pattern_f1": 1.0, "pattern_support_error": 0.0, "kendall_tau": 1.0,
               "hotspot_error": 0.0}
    for flavour in st.FLAVOURS:
        same = st.standard_metrics(real, real, Settings(flavour=flavour))
        kendall = same.pop("kendall_tau")
        if flavour == "ldptrace":
            # LDPTrace's F1 divides by k = 100 whatever the number of patterns (here 18), and its real
            # query answers count points drawn anew in the real paths' cells
            assert same.pop("pattern_f1") == 0.18 and same.pop("query_error") > 0
        assert same == {k: v for k, v in perfect.items() if k in same}, flavour
        if flavour == "corrected":
            assert kendall == 1.0
        else:   # their taus skip the pairs tied in the real counts and still divide by all pairs
            counts = st.FLAVOUR[flavour].features(st.points(real, st.degrees(real.space)),
                                                  st.FLAVOUR[flavour].box(st.bounding_box(
                                                      st.points(real, st.degrees(real.space)))),
                                                  Settings(flavour=flavour)).coverage
            untied = (np.sign(counts[:, None] - counts[None, :])[np.triu_indices(counts.size, 1)] != 0).mean()
            assert kendall == pytest.approx(untied) and kendall < 1
    other = trip_set([[3, 3], [3, 2, 1, 0]], [8, 9])
    worse = st.standard_metrics(real, other)
    assert worse["trip_error"] > 0 and worse["length_error"] > 0 and worse["pattern_f1"] < 1
    assert all(isinstance(v, float) for v in worse.values())


def test_evaluate_reports_the_suite_and_names_its_flavour():
    test = traceset([[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1)], [(0, 0), (1, 0)]])
    report = evaluate(test, test, test, attacks=())
    for key in st.KEYS:
        assert key in report.metrics
    assert report.meta["standard"]["flavour"] == "adatrace"
    assert report.meta["options"]["standard_flavour"] == "adatrace"
    assert report.metrics["query_error"]["training"] == 0.0
    assert report.meta["standard"]["jsd"] == "natural logarithm"
    corrected = evaluate(test, test, test, attacks=(), standard_flavour="corrected")
    assert corrected.metrics["kendall_tau"]["synthetic"] == 1.0
    assert corrected.meta["standard"]["flavour"] == "corrected" and corrected.meta["standard"]["units"] == "metres"
    bits = evaluate(test, test, traceset([[(0, 2)], [(0, 1)]]), attacks=(), standard_jsd_base="2")
    nat = evaluate(test, test, traceset([[(0, 2)], [(0, 1)]]), attacks=())
    assert bits.metrics["trip_error"]["synthetic"] == pytest.approx(nat.metrics["trip_error"]["synthetic"] / math.log(2))
    assert "query_error" not in evaluate(test, test, test, attacks=(), standard=False).metrics
    with pytest.raises(InputError, match="standard_flavour must be one of adatrace, corrected, ldptrace, got 'java'"):
        evaluate(test, test, test, attacks=(), standard_flavour="java")


def test_real_sets_against_themselves_score_perfectly(pf_sets):
    train, test = pf_sets["train"], pf_sets["test"]
    same = st.standard_metrics(train, train, CORRECTED)
    assert [same[k] for k in st.KEYS] == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    adatrace = st.standard_metrics(train, train)
    assert [adatrace[k] for k in st.KEYS if k != "kendall_tau"] == [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert 0.5 < adatrace["kendall_tau"] <= 1.0
    for settings in (ADATRACE, CORRECTED, LDPTRACE):
        other = st.standard_metrics(test, train, settings)
        assert 0 < other["density_error"] < 0.05 and other["kendall_tau"] > 0.5, settings.flavour
