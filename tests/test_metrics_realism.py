"""The realism of trips (issue 54, item 4): points off the real map, steps over the set's speed
bound, the median-duration factor and one-point trips, with their references, in evaluate, the
report, metrics.json and the benchmark's leaderboard."""

from dataclasses import replace
from datetime import date

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, TimeAxis, TraceSet
from locsynth.evaluation import suite
from locsynth.metrics import realism
from locsynth.testing import check_metric_group


def trips(paths, starts, cols=10, rows=1, cell_m=500.0):
    """Trips on a rows x cols grid of ``cell_m`` cells (one-minute instants): ``paths`` of cells,
    each with its list of instants (``starts``: first instant, one a minute) or explicit instants."""
    lat0, lon0 = 37.70, -122.45
    dlat = cell_m / 111_195.0
    dlon = dlat / np.cos(np.radians(lat0 + rows * dlat / 2))
    grid = Grid(rows, cols, (lat0, lat0 + rows * dlat, lon0, lon0 + cols * dlon))
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1min", "1h")
    user, t, loc = [], [], []
    for k, (path, start) in enumerate(zip(paths, starts)):
        times = list(start) if isinstance(start, (list, tuple)) else list(start + np.arange(len(path)))
        user += [k] * len(path)
        t += times
        loc += list(path)
    users = pd.DataFrame({"user_id": [f"t{k}" for k in range(len(paths))], "hour": np.zeros(len(paths), np.int8)})
    return TraceSet.from_events(user, t, loc, users, grid, axis, {"cell_m": cell_m})


def test_a_worked_example():
    """Real trips visit cells 0-3 of a 1 x 10 row of 400 m cells; the synthetic set has a point in
    cell 5 (800 m from cell 3: off by one cell, not by 1 km), one in cell 7 (1.6 km: off by both),
    a one-point trip, and two steps of 4 cells (1.6 km) in one minute: 96 km/h, over a bound of 90."""
    real = trips([[0, 1, 2], [1, 2, 3], [3, 2]], [0, 10, 20], cell_m=400.0)
    synthetic = trips([[0, 1, 5], [3, 7], [2], [1, 2]], [0, [10, 11], 30, [40, 45]], cell_m=400.0)
    near = realism.distance_to_real(real)
    assert np.allclose(near[:4], 0) and np.allclose(near[[5, 7]], [800, 1600], rtol=1e-3)
    got = realism.realism(synthetic, near, realism.cell_m(real), bound=90.0)
    assert got["far_cell"] == pytest.approx(2 / 8)            # cells 5 and 7 of the 8 points
    assert got["far_km"] == pytest.approx(1 / 8)               # cell 7 only
    assert got["one_point"] == pytest.approx(1 / 4)
    # steps: 0-1 (24 km/h), 1-5 and 3-7 (96 km/h), 1-2 in 5 minutes (4.8 km/h)
    assert got["fast"] == pytest.approx(2 / 4)
    assert realism.realism(synthetic, near, 400.0, bound=100.0)["fast"] == 0.0
    assert got["median_minutes"] == pytest.approx(2.0)         # durations 2, 1, 5 (trips of two points or more)
    assert realism.realism(real, near, 400.0, 90.0)["median_minutes"] == pytest.approx(2.0)
    assert realism.duration_factor(3.0, 2.0) == pytest.approx(1.5) == realism.duration_factor(2.0, 3.0)


def test_distances_to_the_real_points_match_a_plain_loop():
    rng = np.random.default_rng(1)
    grid_real = trips([rng.integers(0, 60, 5) for _ in range(8)], [10 * k for k in range(8)], cols=12, rows=5)
    near = realism.distance_to_real(grid_real)
    space, visited = grid_real.space, np.unique(grid_real.loc)
    plain = np.array([min(float(space.distance_m(a, b)) for b in visited) for a in range(space.n_locations)])
    assert np.allclose(near, plain, rtol=2e-3, atol=1.0)       # planar against haversine, within 0.2 %


def test_the_group_declares_itself_and_gives_its_references():
    real = trips([[0, 1, 2], [1, 2, 3], [3, 2]] * 4, [0, 10, 20] * 4)
    synthetic = trips([[0, 1, 5], [3, 7], [2], [1, 2]], [0, [10, 11], 30, [40, 45]])
    keys = check_metric_group(suite._built_in("realism"), data=(real, real, synthetic))
    assert keys == sorted(m.key for m in realism.METRICS)
    from locsynth.evaluation.evaluate import evaluate

    report = evaluate(real, real, synthetic, groups=["realism"])
    far = report.metrics["realism_far_cell"]
    assert far == {"synthetic": pytest.approx(0.25), "training": 0.0, "uniform": pytest.approx(0.5)}   # cells 5-9
    assert report.metrics["realism_fast_steps"]["uniform"] is None
    assert report.meta["realism"]["speed_bound_kmh"] == 150.0 and report.meta["realism"]["cell_m"] == 500.0


def test_the_bound_is_the_sets_own_and_a_domain_shrinks_the_uniform_reference():
    real = trips([[0, 1, 2], [1, 2, 3]], [0, 10])

    class Bounds:                                               # what TraceSet.bounds (issue 54, item 1) gives
        max_speed_kmh = 20.0

    class Bounded(TraceSet):
        bounds = Bounds()

    bounded = Bounded(*(getattr(real, f) for f in ("user", "t", "loc", "users", "space", "time", "info")))
    assert realism.speed_bound(bounded) == 20.0 and realism.speed_bound(real) == 150.0
    near = realism.distance_to_real(real)
    assert realism.uniform(real.space, near, 500.0)["far_cell"] == pytest.approx(0.5)   # cells 5-9 of 10
    walled = real.space.restricted(np.arange(10) < 6, "the first six cells")
    assert realism.uniform(walled, near, 500.0)["far_cell"] == pytest.approx(1 / 6)    # cell 5 of 0-5


def test_untimed_sets_have_no_speed_or_duration():
    real = trips([[0, 1, 2], [1, 2, 3]], [0, 10])
    untimed = replace(trips([[0, 1], [2, 3]], [0, 0]), info={"times": "none", "cell_m": 500.0})
    got = realism.realism(untimed, realism.distance_to_real(real), 500.0, 150.0)
    assert got["fast"] is None and got["median_minutes"] is None and got["far_cell"] == 0.0


def test_the_leaderboard_shows_the_realism_columns():
    from locsynth.evaluation.report.leaderboard import dataset_table, summarise

    rows = [{"dataset": "d", "method": m, "kind": "synthesizer", "epsilon": 1.0, "repeat": 0, "metric": k, "value": v}
            for m in ("a", "b") for k, v in (("query_error", 1.0), ("realism_far_km", 0.1),
                                              ("realism_duration_factor", 1.2), ("realism_one_point", 0.0))]
    _, _, _, utility, _ = dataset_table(summarise(pd.DataFrame(rows)))
    assert {"realism_far_km", "realism_duration_factor", "realism_one_point"} <= set(utility)
