"""Trips at Porto size (issue 39): the fast paths equal plain reference versions, the reference
work kept across evaluations gives the same results, and the scaled sets keep their trips' shapes."""

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from helpers import traceset
from locsynth.evaluation.evaluate import evaluate
from locsynth.metrics import grid_paths as gp
from locsynth.metrics import standard as st
from locsynth.metrics.trips import frequent_pattern_precision, pattern_supports, top_patterns
from locsynth.data.simulate import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def walks(n_trips, rows, cols, seed, max_len=9):
    """Random trips of adjacent cells on a small grid (many equal supports), with hours."""
    rng = np.random.default_rng(seed)
    trips = []
    for _ in range(n_trips):
        r, c = rng.integers(rows), rng.integers(cols)
        path = []
        for _ in range(rng.integers(1, max_len)):
            path.append(int(r * cols + c))
            r = min(max(r + rng.integers(-1, 2), 0), rows - 1)
            c = min(max(c + rng.integers(-1, 2), 0), cols - 1)
        trips.append(path)
    ts = traceset([list(enumerate(p)) for p in trips], rows=rows, cols=cols)
    return replace(ts, users=ts.users.assign(hour=rng.integers(0, 24, n_trips).astype(np.int8)))


def plain_supports(trips, max_length):
    """Per length: {pattern: number of trips holding it}, one trip at a time."""
    out = [Counter() for _ in range(max_length)]
    for i in range(trips.n_traces):
        cells = trips.loc[trips.offsets[i]:trips.offsets[i + 1]].tolist()
        for n in range(1, max_length + 1):
            out[n - 1].update({tuple(cells[p:p + n]) for p in range(len(cells) - n + 1)})
    return [c for c in out if c]


def plain_top(trips, k, max_length):
    """The k best of every pattern of every length: support, then length, then cells."""
    every = [(-s, len(p), p) for counts in plain_supports(trips, max_length) for p, s in counts.items()]
    return [p for _, _, p in sorted(every)[:k]]


@pytest.mark.parametrize("seed,rows,cols", [(0, 2, 3), (1, 3, 3), (2, 5, 4), (3, 1, 2)])
def test_pattern_supports_and_the_pruned_top_k_equal_counting_every_pattern_trip_by_trip(seed, rows, cols):
    trips = walks(150, rows, cols, seed)
    for max_length in (1, 3, 7):
        plain = plain_supports(trips, max_length)
        cells, supports = pattern_supports(trips, max_length)
        assert len(cells) == len(plain)
        for got, support, want in zip(cells, supports, plain):
            assert [tuple(p) for p in got.tolist()] == sorted(want)          # the cells' order
            assert support.tolist() == [want[tuple(p)] for p in got.tolist()]
        for k in (1, 2, 5, 17, 60, 1000):
            assert top_patterns(trips, k, max_length) == plain_top(trips, k, max_length), (k, max_length)


def test_the_top_k_by_hand_and_the_precision_with_the_real_top_k_given():
    # [0, 1, 2] three times and [3] once: ties go to the shorter pattern, then to the lower cells
    trips = traceset([list(enumerate(p)) for p in ([0, 1, 2],) * 3 + ([3],)], cols=4)
    assert top_patterns(trips, 7, 3) == [(0,), (1,), (2,), (0, 1), (1, 2), (0, 1, 2), (3,)]
    assert top_patterns(trips, 2, 3) == [(0,), (1,)]
    assert frequent_pattern_precision(trips, trips, ks=(3,), max_length=3) == {3: 1.0}
    assert frequent_pattern_precision(trips, trips, ks=(3,), max_length=3, real_top=[(3,), (2,), (9,)]) == {3: 1 / 3}


@pytest.mark.parametrize("flavour", st.FLAVOURS)
def test_the_standard_suite_with_the_real_side_computed_once_equals_the_suite_afresh(flavour):
    train, test = simulate(80, seed=1).split(0.5, seed=0)
    synthetic = simulate(40, seed=2)
    s = st.Settings(flavour=flavour, seed=4)
    fresh = st.standard_metrics(test, synthetic, s)
    real = st.real_side(test, s)
    assert st.standard_metrics(test, synthetic, s, reference=real) == fresh
    assert real[1].memo                                         # the real query answers were kept
    assert st.standard_metrics(test, synthetic, s, reference=real) == fresh       # and reused
    assert st.standard_metrics(test, train, s, reference=real) == st.standard_metrics(test, train, s)


def test_evaluate_with_a_kept_store_equals_evaluate_afresh_on_trips():
    train, test = walks(300, 4, 5, 10), walks(120, 4, 5, 11)
    synthetic = [walks(200, 4, 5, seed) for seed in (12, 13)]
    fresh = [evaluate(train, test, syn, attacks="none").to_dict() for syn in synthetic]
    store = {}
    for syn, want in zip(synthetic + synthetic, fresh + fresh):
        got = evaluate(train, test, syn, attacks="none", references=store).to_dict()
        for d in (got, want):
            d["meta"].pop("seconds", None)
        assert got == want
    assert {("trips", "training", 0, 2000, False), ("standard", "training", st.Settings(seed=0))} <= set(store)


def test_a_scaled_set_holds_moved_or_retimed_copies_of_whole_trips():
    from trips_scale_data import scaled_part

    trips = walks(200, 6, 7, 5)
    big = scaled_part(trips, 3, seed=0)
    assert big.n_traces == 600
    big.check()
    source = np.array([int(u.split("-x")[0]) for u in big.users.user_id])
    assert (big.users.index.to_numpy() == [int(u.split("-x")[1]) for u in big.users.user_id]).all()
    moved = 0
    for i in range(big.n_traces):
        a, b = trips.offsets[source[i]], trips.offsets[source[i] + 1]
        loc, t = big.loc[big.offsets[i]:big.offsets[i + 1]], big.t[big.offsets[i]:big.offsets[i + 1]]
        dr = np.divmod(loc, 7)[0] - np.divmod(trips.loc[a:b], 7)[0]
        dc = np.divmod(loc, 7)[1] - np.divmod(trips.loc[a:b], 7)[1]
        assert (dr == dr[0]).all() and (dc == dc[0]).all() and max(abs(dr[0]), abs(dc[0])) <= 3
        hours = (t - trips.t[a:b]) * big.time.instant.total_seconds() / 3600
        assert (t - trips.t[a:b] == (t - trips.t[a:b])[0]).all()
        if dr[0] == dc[0] == 0:
            assert 1 <= abs(hours[0]) <= 3
            assert big.users.hour[i] == (trips.users.hour[source[i]] + hours[0]) % 24
        else:
            assert hours[0] == 0 and big.users.hour[i] == trips.users.hour[source[i]]
            moved += 1
    assert moved > 450


@pytest.mark.slow
def test_benchmark_results_with_the_dataset_store_equal_those_computed_afresh(tmp_path, monkeypatch):
    from locsynth.benchmark import runs as bm

    root = tmp_path / "trips"
    walks(300, 4, 5, 20).save(root / "train")
    walks(100, 4, 5, 21).save(root / "test")
    # methods without DP noise (OpenDP's is not seeded), so that two runs can be equal
    settings = dict(methods=["training", "uniform"], epsilons=[1.0], attacks=[])

    def results(out, repeats, keep):
        frame = bm.run_benchmark([root], out, repeats=repeats, keep_references=keep, **settings)
        return frame.sort_values(["method", "repeat", "metric"]).reset_index(drop=True)

    monkeypatch.setattr(bm, "_REFERENCES", {})
    afresh = results(tmp_path / "a", 3, False)
    assert not (tmp_path / "a" / "runs" / "trips" / bm.REFERENCES_FILE).exists()
    kept = results(tmp_path / "b", 2, True)
    saved = tmp_path / "b" / "runs" / "trips" / bm.REFERENCES_FILE
    assert saved.is_file()
    # another process (a Dask worker, a resumed benchmark) starts from the saved store
    monkeypatch.setattr(bm, "_REFERENCES", {})
    calls = []
    from locsynth.metrics import groups

    compute = groups.Context.reference
    monkeypatch.setattr(groups.Context, "reference",
                        lambda self, key, fn: compute(self, key, lambda: calls.append(key) or fn()))
    resumed = results(tmp_path / "b", 3, True)
    assert calls == []                                  # nothing recomputed: all read from the file
    assert kept.equals(afresh[afresh.repeat < 2].reset_index(drop=True))
    assert resumed.equals(afresh)


def test_the_closed_cells_search_equals_numpys_searchsorted_on_lines_and_outside():
    from locsynth.metrics.grid_paths import _closed_first_cell

    rng = np.random.default_rng(0)
    lo, hi = -122.5158, -122.35097578163152
    for k in (1, 6, 15):
        inc = (hi - lo) / k
        lines = lo + inc * np.arange(k + 1)
        v = np.concatenate([rng.uniform(lo - 0.05, hi + 0.05, 5000), lines, np.nextafter(lines, np.inf),
                            np.nextafter(lines, -np.inf), lines[:-1] + inc, [np.nan, np.inf, -np.inf]])
        start = lo + inc * np.arange(k, dtype=np.float64)
        end = start + inc
        first = np.searchsorted(end, v, side="left")
        last = np.searchsorted(start, v, side="right") - 1
        got_first, got_found = _closed_first_cell(v, lo, hi, k)
        assert (got_first == np.minimum(first, k - 1)).all() and (got_found == (first <= last)).all()


def plain_states(grid, x, y, offsets):
    """Every sample of every segment held at once, ordered, then merged (PrivTrace's states before
    issue 39)."""
    out, counts = [], []
    for t in range(offsets.size - 1):
        seq = []
        for i in range(offsets[t], offsets[t + 1]):
            px, py = [x[i]], [y[i]]
            if i + 1 < offsets[t + 1]:
                dx, dy = x[i + 1] - x[i], y[i + 1] - y[i]
                steps = int(max(np.ceil(np.hypot(dx, dy) / (0.5 * grid.finest())), 1))
                frac = np.arange(1, steps + 1) / steps
                px, py = np.concatenate([px, x[i] + frac * dx]), np.concatenate([py, y[i] + frac * dy])
            for s in grid.state(np.asarray(px), np.asarray(py)).tolist():
                if not seq or seq[-1] != s:
                    seq.append(s)
        out += seq
        counts.append(len(seq))
    return np.array(out, np.int64), np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def test_privtraces_states_walked_in_one_pass_equal_every_sample_held_and_merged():
    from locsynth.synth.privtrace import markov
    from locsynth.synth.privtrace.grid import TwoLevelGrid

    rng = np.random.default_rng(3)
    grid = TwoLevelGrid((0.0, 0.0, 1000.0, 800.0), 4, rng.integers(1, 4, 16))
    lengths = rng.integers(0, 6, 300)                       # empty trajectories too
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    x, y = rng.uniform(-50, 1050, offsets[-1]), rng.uniform(-50, 850, offsets[-1])
    x[::7] = 250.0                                          # on level-1 lines
    got, want = markov.states(grid, x, y, offsets), plain_states(grid, x, y, offsets)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert got[0].size > 2 * x.size                         # the buffer (2 x the points) had to grow


def plain_edge_position(indptr, indices, a, b):
    """Position of each move a -> b among the CSR edges (-1 where b is not a neighbour of a), by a
    search over every edge."""
    n = indptr.size - 1
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    keys = np.repeat(np.arange(n), np.diff(indptr)) * n + indices
    want = a * n + b
    pos = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    return np.where(keys[pos] == want, pos, -1)


def plain_first_order(seq, offsets, indptr, indices):
    """PrivTrace's first-order counts as whole-array numpy steps (before issue 39's one pass)."""
    from locsynth.synth.privtrace import markov

    n = indptr.size - 1
    length = np.diff(offsets)
    weight = 1.0 / (length + 1.0)
    trace = markov.per_trace(offsets)
    same = trace[1:] == trace[:-1]
    pos = plain_edge_position(indptr, indices, seq[:-1][same], seq[1:][same])
    ok = pos >= 0
    moves = np.bincount(pos[ok], weights=weight[trace[:-1][same]][ok], minlength=indices.size)
    some = length > 0
    start = np.bincount(seq[offsets[:-1][some]], weights=weight[some], minlength=n)
    end = np.bincount(seq[offsets[1:][some] - 1], weights=weight[some], minlength=n)
    return moves, start, end


def plain_second_order(seq, offsets, indptr, indices, post_id, tables):
    """PrivTrace's second-order tables as whole-array numpy steps (before issue 39's one pass)."""
    from locsynth.synth.privtrace import markov

    trace = markov.per_trace(offsets)
    length = np.diff(offsets)
    at = np.flatnonzero(post_id[seq] >= 0)
    g = seq[at]
    degree = indptr[g + 1] - indptr[g]
    first, last = at == offsets[trace[at]], at == offsets[trace[at] + 1] - 1
    prev = np.where(first, degree, plain_edge_position(indptr, indices, g, seq[np.maximum(at - 1, 0)]) - indptr[g])
    nxt = np.where(last, degree,
                   plain_edge_position(indptr, indices, g, seq[np.minimum(at + 1, seq.size - 1)]) - indptr[g])
    ok = (prev >= 0) & (nxt >= 0)
    cell = tables[post_id[g]] + prev * (degree + 1) + nxt
    return np.bincount(cell[ok], weights=1.0 / length[trace[at]][ok], minlength=int(tables[-1]))


def test_privtraces_first_and_second_order_in_one_pass_equal_the_whole_array_versions():
    """Bit for bit, on interpolated states and on sequences with jumps between states that do not
    touch (which count nowhere), with empty trajectories."""
    from locsynth.synth.privtrace import markov
    from locsynth.synth.privtrace.grid import TwoLevelGrid

    rng = np.random.default_rng(4)
    grid = TwoLevelGrid((0.0, 0.0, 1000.0, 800.0), 4, rng.integers(1, 4, 16))
    indptr, indices = grid.neighbours()
    lengths = rng.integers(0, 6, 300)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    x, y = rng.uniform(0, 1000, offsets[-1]), rng.uniform(0, 800, offsets[-1])
    walked = markov.states(grid, x, y, offsets)
    jumps = (rng.integers(0, grid.n_states, offsets[-1]), offsets)
    for seq, off in (walked, jumps):
        for got, want in zip(markov.first_order(seq, off, indptr, indices), plain_first_order(seq, off, indptr, indices)):
            assert np.array_equal(got, want)
        posts = np.flatnonzero(rng.random(grid.n_states) < 0.4)
        post_id = np.full(grid.n_states, -1, np.int64)
        post_id[posts] = np.arange(posts.size)
        tables = markov.table_offsets(indptr, posts)
        assert np.array_equal(markov.second_order(seq, off, indptr, indices, post_id, tables),
                              plain_second_order(seq, off, indptr, indices, post_id, tables))


def test_evaluate_with_a_kept_store_equals_evaluate_afresh_on_daily_traces():
    train, test = simulate(60, seed=5).split(0.5, seed=0)
    synthetic = [simulate(30, seed=s) for s in (6, 7)]
    options = dict(attacks="none", swd_projections=8)
    fresh = [evaluate(train, test, syn, **options).to_dict() for syn in synthetic]
    store = {}
    for syn, want in zip(synthetic + synthetic, fresh + fresh):
        got = evaluate(train, test, syn, references=store, **options).to_dict()
        for d in (got, want):
            d["meta"].pop("seconds", None)
        assert got == want
    assert {("population", 50), ("transitions", 20), ("visit_fractions", 24), ("sglt", "training")} <= set(store)


def test_the_patterns_first_occurrences_and_counts_equal_numpys_unique():
    rng = np.random.default_rng(8)
    for values in (rng.integers(0, 50, 2000), rng.integers(0, 10**12, 500), np.zeros(0, np.int64),
                   np.array([7]), np.array([5, 5, 3, 5, 3, 9])):
        values = np.asarray(values, np.int64)
        want = np.unique(values, return_index=True, return_counts=True)
        got = st._unique_first_counts(values)
        assert [a.tolist() for a in got] == [want[0].tolist(), want[2].tolist(), want[1].tolist()]


def plain_query_answers(x, y, offsets, cx, cy, limit, adatrace, always=None):
    """Circles outer, traces inner, point by point (Query.java's order; the corrected reading's)."""
    out = []
    for q in range(cx.size):
        count = 0
        for k in range(offsets.size - 1):
            a, b = offsets[k], offsets[k + 1]
            if adatrace and b - a < 2:
                continue
            if adatrace and always[k]:
                count += 1
                continue
            for i in range(a, b):
                if adatrace:
                    hit = (cx[q] - x[i]) ** 2 + (cy[q] - y[i]) ** 2 <= limit
                    if not hit and i + 1 < b:
                        dx, dy = x[i + 1] - x[i], y[i + 1] - y[i]
                        u = ((cx[q] - x[i]) * dx + (cy[q] - y[i]) * dy) / (dx * dx + dy * dy)
                        hit = 0 <= u <= 1 and (x[i] + u * dx - cx[q]) ** 2 + (y[i] + u * dy - cy[q]) ** 2 <= limit
                else:
                    dx, dy = x[i] - cx[q], y[i] - cy[q]
                    if i > a:
                        sx, sy = x[i] - x[i - 1], y[i] - y[i - 1]
                        if sx * sx + sy * sy > 0:
                            s = min(max(((cx[q] - x[i - 1]) * sx + (cy[q] - y[i - 1]) * sy) / (sx * sx + sy * sy),
                                        0.0), 1.0)
                            dx, dy = x[i - 1] + s * sx - cx[q], y[i - 1] + s * sy - cy[q]
                    hit = dx * dx + dy * dy <= limit
                if hit:
                    count += 1
                    break
        out.append(count)
    return np.array(out)


def test_range_counts_with_traces_outer_equal_circles_outer():
    rng = np.random.default_rng(9)
    lengths = rng.integers(1, 7, 150)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    x, y = rng.uniform(0, 10, offsets[-1]), rng.uniform(0, 10, offsets[-1])
    x[5], y[5] = x[4], y[4]                                   # a repeated point
    p = st.Points(x, y, offsets)
    cx, cy = rng.uniform(0, 10, 30), rng.uniform(0, 10, 30)
    always = st.repeats_a_point(p)
    assert always.any()
    limit = st.sqrt_threshold(2.5)
    assert st.query_answers(p, cx, cy, 2.5, "adatrace").tolist() == \
        plain_query_answers(x, y, offsets, cx, cy, limit, True, always).tolist()
    assert st.query_answers(p, cx, cy, 2.5, "corrected").tolist() == \
        plain_query_answers(x, y, offsets, cx, cy, 2.5 * 2.5, False).tolist()


def located(n_traces: int, seed: int):
    """Points on 40 locations (two of them at one place), traces of 1-7 points with repeats."""
    rng = np.random.default_rng(seed)
    lx, ly = rng.uniform(0, 10, 40), rng.uniform(0, 10, 40)
    lx[7], ly[7] = lx[3], ly[3]                                # two locations at one point
    lengths = rng.integers(1, 8, n_traces)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    loc = rng.integers(0, 40, offsets[-1])
    loc[5] = loc[4]                                            # a repeated location
    loc[11:13] = (3, 7)                                        # a repeated point from two locations
    return st.Points(lx[loc], ly[loc], offsets, loc, (lx, ly))


@pytest.mark.parametrize("seed", [0, 1])
def test_range_counts_by_location_equal_point_by_point(seed):
    """metrics/location_queries: masks by location and by move, more circles than one 64-bit word
    holds, equal to the plain loops and to the per-point kernels."""
    p = located(300, seed)
    plain = replace(p, loc=None, at=None)
    rng = np.random.default_rng(seed + 10)
    cx, cy = rng.uniform(-2, 12, 150), rng.uniform(-2, 12, 150)
    always = st.repeats_a_point(p)
    assert always.sum() >= 2 and (np.diff(p.offsets) == 1).any()
    for r in (0.3, 2.5, 30.0):
        limit = st.sqrt_threshold(r)
        want = plain_query_answers(p.x, p.y, p.offsets, cx, cy, limit, True, always)
        assert st.query_answers(p, cx, cy, r, "adatrace").tolist() == want.tolist()
        assert st.query_answers(plain, cx, cy, r, "adatrace").tolist() == want.tolist()
        want = plain_query_answers(p.x, p.y, p.offsets, cx, cy, r * r, False)
        assert st.query_answers(p, cx, cy, r, "corrected").tolist() == want.tolist()
        assert st.query_answers(plain, cx, cy, r, "corrected").tolist() == want.tolist()


def test_cells_by_location_equal_cells_point_by_point():
    p = located(200, 2)
    box = (0.5, 0.5, 9.5, 9.5)                                 # some points outside: AdaTrace's fallbacks
    for k in (6, 15):
        assert np.array_equal(st.point_cells(p, gp.adatrace_cells, box, k), gp.adatrace_cells(p.x, p.y, box, k))


def test_a_neighbours_position_by_row_scan_equals_a_search_over_every_edge():
    from locsynth.synth.privtrace import markov
    from locsynth.synth.privtrace.grid import TwoLevelGrid

    grid = TwoLevelGrid((0.0, 0.0, 900.0, 900.0), 3, np.array([1, 2, 1, 3, 1, 1, 2, 1, 1]))
    indptr, indices = grid.neighbours()
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, grid.n_states, (2, 3000))
    expected = plain_edge_position(indptr, indices, a, b)
    got = np.array([markov._position(indptr, indices, i, j) for i, j in zip(a, b)])
    assert (expected >= 0).sum() > 50 and (expected < 0).any()
    assert np.array_equal(np.where(got >= 0, indptr[a] + got, -1), expected)
    # every move a -> b as a trajectory of its own: the unweighted edge counts of them all
    counted = markov.edge_counts(np.column_stack([a, b]).ravel(), np.arange(0, 2 * a.size + 1, 2), indptr, indices)
    assert np.array_equal(counted, np.bincount(expected[expected >= 0], minlength=indices.size))
