"""The time model of trips (synth/trip_times.py): each trace counts once in each histogram,
sampling respects the period, the hours and the public speed bound, a method with it releases
real times (and without it none), and a release's start hours are DP at the model's share."""

from datetime import date

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import Grid, InputError, TimeAxis, TraceSet
from locsynth.privacy.audit import audit
from locsynth.privacy.ledger import Ledger
from locsynth.release.publish import make_release
from locsynth.synth import trip_times as tt

GRID = Grid(8, 8, (37.70, 37.74, -122.45, -122.40))       # cells of about 550 m x 550 m
AXIS = TimeAxis.build(date(2008, 5, 19), "America/Los_Angeles", "1min", "1h")


def trips(rows, days=None) -> TraceSet:
    """Trips from [(first instant, [cells ...], minutes per step)], with their majority hours."""
    user, t, loc = [], [], []
    for i, (start, cells, every) in enumerate(rows):
        user += [i] * len(cells)
        t += [start + every * k for k in range(len(cells))]
        loc += list(cells)
    hour = [int(AXIS.start_of(np.array([r[0]]))[0].tz_convert(AXIS.timezone).hour) for r in rows]
    users = pd.DataFrame({"user_id": [f"t{i}" for i in range(len(rows))], "hour": np.array(hour, np.int8)})
    return TraceSet.from_events(user, t, loc, users, GRID, AXIS)


def city(n=400, seed=0) -> TraceSet:
    """Trips over three weeks, mornings and evenings, two cells a minute's walk apart in rows."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        day = int(rng.integers(0, 21))
        hour = int(rng.choice([8, 9, 17, 18]))
        start = day * 1440 + hour * 60 + int(rng.integers(0, 60))
        r, c = int(rng.integers(0, 8)), int(rng.integers(0, 4))
        rows.append((start, [r * 8 + c + k for k in range(int(rng.integers(2, 5)))], int(rng.integers(1, 4))))
    return trips(rows)


def plain_counts(ts: TraceSet):
    """The two histograms trace by trace, as the module docstring defines them."""
    _, _, kinds, period = tt.counts(ts)
    starts, speeds = np.zeros(kinds * 24), np.zeros((tt.LENGTH_EDGES.size - 1, tt.SPEED_EDGES.size - 1))
    for i in range(ts.n_traces):
        t, loc = ts.events_of(i)
        if t.size == 0:
            continue
        when = ts.time.start_of(t[:1])[0].tz_convert(ts.time.timezone)
        kind = when.day_of_week if kinds == 7 else int(when.day_of_week >= 5)
        starts[kind * 24 + when.hour] += 1
        path = sum(float(ts.space.distance_m(a, b)) for a, b in zip(loc[:-1], loc[1:]))
        if t.size > 1 and path > 0:
            kmh = 3.6 * path / ((t[-1] - t[0]) * 60)
            row = int(np.searchsorted(tt.LENGTH_EDGES, path, side="right")) - 1
            speeds[row, min(max(np.searchsorted(tt.SPEED_EDGES, kmh, side="right") - 1, 0), speeds.shape[1] - 1)] += 1
    return starts, speeds, kinds, period


def test_the_histograms_count_each_trace_once_as_a_plain_loop_does():
    ts = city()
    starts, speeds, kinds, period = tt.counts(ts)
    assert (kinds, period) == (7, 21)
    plain = plain_counts(ts)
    assert np.array_equal(starts, plain[0]) and np.array_equal(speeds, plain[1])
    assert starts.sum() == ts.n_traces and speeds.sum() == ts.n_traces          # every city trip moves
    # one trace more moves each histogram by 1, however long: one point, many steps
    for extra in ([(5 * 1440 + 600, [3], 1)], [(5 * 1440 + 600, list(range(40)), 1)]):
        more = trips([(int(ts.t[ts.offsets[i]]), list(ts.events_of(i)[1]), 1) for i in range(ts.n_traces)] + extra)
        a, b = tt.counts(more)[:2], tt.counts(trips([(int(ts.t[ts.offsets[i]]), list(ts.events_of(i)[1]), 1)
                                                     for i in range(ts.n_traces)]))[:2]
        assert np.abs(a[0] - b[0]).sum() == 1 and np.abs(a[1] - b[1]).sum() <= 1


def test_sampled_trips_start_in_the_period_at_the_models_hours_and_stay_under_the_bound():
    ts = city()
    starts, speeds, kinds, period = tt.counts(ts)
    model = tt.TripTimes(starts, speeds, kinds, period)
    rng = np.random.default_rng(1)
    length = rng.integers(1, 30, 3000)
    loc = rng.integers(0, GRID.n_locations, int(length.sum()))          # wandering: steps of any length
    t = tt.sample_times(model, loc, length, GRID, AXIS, seed=3)
    assert np.array_equal(t, tt.sample_times(model, loc, length, GRID, AXIS, seed=3))   # seeded
    offsets = np.r_[0, np.cumsum(length)]
    first = t[offsets[:-1]]
    assert first.min() >= 0 and (first // 1440).max() < period
    when = pd.DatetimeIndex(AXIS.start_of(first)).tz_convert(AXIS.timezone)
    assert set(when.hour) == {8, 9, 17, 18} and len(set(when.minute)) > 50          # no minute preferred
    same = np.repeat(np.arange(length.size), length)[1:] == np.repeat(np.arange(length.size), length)[:-1]
    step = np.diff(t)[same]
    metres = GRID.distance_m(loc[:-1][same], loc[1:][same])
    assert step.min() >= 1 and (3.6 * metres / (step * 60)).max() <= tt.MAX_SPEED_KMH + 1e-9
    # a method's own hours (DPTrip's) are kept, its day drawn from that hour's column
    hours = rng.choice([8, 18], length.size)
    given = tt.sample_times(model, loc, length, GRID, AXIS, seed=3, hours=hours)
    assert np.array_equal(pd.DatetimeIndex(AXIS.start_of(given[offsets[:-1]])).tz_convert(AXIS.timezone).hour, hours)


def test_steps_take_their_length_at_the_trips_speed():
    metres, trace = np.array([600.0, 0.0, 1200.0, 100.0]), np.array([0, 0, 0, 1])
    length, offsets = np.array([4, 2]), np.array([0, 4, 6])
    t = tt._steps_at(np.array([10.0, 50.0]), metres, trace, length, offsets, 60.0)   # m/s
    assert t.tolist() == [0, 1, 2, 3, 0, 1]       # 60 s, 0 s (one instant at least), 120 s: 180 s in all


def test_a_trips_speed_comes_from_the_row_of_its_path_length():
    speeds = np.zeros((tt.LENGTH_EDGES.size - 1, tt.SPEED_EDGES.size - 1))
    speeds[0, 2] = 5.0                                   # under 1 km: 4-6 km/h
    speeds[3, 16] = 7.0                                  # 3-5 km: 50-60 km/h; the other rows kept nothing
    path = np.array([500.0, 4000.0, 20000.0])
    rows = tt.speed_rows(speeds, path)
    assert np.array_equal(rows[0], speeds[0]) and np.array_equal(rows[1], speeds[3])
    assert np.array_equal(rows[2], speeds.sum(axis=0))  # an empty row: the rows' sum
    # a model saved with one row of speeds (all lengths alike) gives every trip that row
    one = tt.TripTimes.from_arrays({"times_starts": np.ones(48), "times_speeds": speeds.sum(axis=0),
                                    "times_shape": np.array([2, 5])})
    assert one.speeds.shape == (1, speeds.shape[1])
    assert np.array_equal(tt.speed_rows(one.speeds, path), np.tile(speeds.sum(axis=0), (3, 1)))
    # sampled: a short trip walks, a long one drives
    loc = np.r_[0, 1, 0, 7]                              # one step of one cell; one across a row, 3-5 km
    model = tt.TripTimes(np.ones(48), speeds, 2, 5)
    t = tt.sample_times(model, loc, np.array([2, 2]), GRID, AXIS, seed=0)
    short, long_ = GRID.distance_m(np.array([0]), np.array([1]))[0], GRID.distance_m(np.array([0]), np.array([7]))[0]
    assert 3.6 * short / (60 * (t[1] - t[0])) <= 6.0 + 1e-9
    assert 3000 <= long_ <= 5000 and 35.0 <= 3.6 * long_ / (60 * (t[3] - t[2])) <= 80.0          # 50-60 km/h, rounded to minutes


def test_a_method_with_the_model_releases_times_and_one_without_none(tmp_path):
    ts = city()
    model = locsynth.NGRAM(epsilon=20.0, time_share=0.5).fit(ts)
    syn = model.sample(100, seed=2)
    assert syn.has_times and syn.info["times"] == tt.TIMED
    starts = pd.DatetimeIndex(syn.to_frame().groupby("user_id", sort=False)["datetime"].first())
    assert np.isin(starts.hour, [8, 9, 17, 18]).mean() >= 0.95   # the model's hours, but for its noise
    times = [s for s in model.ledger_.spends if "start of every trace" in s.saw]
    assert len(times) == 1 and times[0].sensitivity == 2.0 and times[0].epsilon == pytest.approx(10.0)
    assert tt.PERIOD_FROM_DATA in model.ledger_.uncovered
    model.save(tmp_path / "m")
    again = locsynth.synth.Synthesizer.load(tmp_path / "m")
    assert np.array_equal(again.trip_times_.starts, model.trip_times_.starts)
    assert again.sample(100, seed=2).fingerprint() == syn.fingerprint()
    plain = locsynth.NGRAM(epsilon=20.0, time_share=0).fit(ts).sample(100, seed=2)
    assert not plain.has_times and plain.info["times"] == "none"
    with pytest.raises(InputError, match=r"`time_share` 0.96 leaves nothing of epsilon"):
        locsynth.NGRAM(epsilon=1.0, time_share=0.96).fit(ts)


@pytest.mark.slow
def test_a_releases_start_hours_are_dp_at_the_models_share_and_exact_counts_are_caught(monkeypatch):
    """Neighbouring trip sets, one trip at 3:00 more; the release's share of trips starting at 3:00
    depends on the start histogram alone (its size given: 40 trips), which the model noises at
    time_share x epsilon / 2 = 1 (the speeds take the other half)."""
    base = [(d * 1440 + 8 * 60 + d, [1, 2, 3], 1) for d in range(14)]
    x1 = trips(base + [(3 * 1440 + 3 * 60, [9, 10], 1)])
    x2 = trips(base)

    def at_three(x, i):
        syn = locsynth.NGRAM(epsilon=4.0, time_share=0.5).fit(x).sample(40, seed=i)
        hours = pd.DatetimeIndex(make_release(syn).events.groupby("pseudonym")["datetime"].first()).hour
        return float((hours == 3).mean())

    def outputs(n):
        return {key: np.array([at_three(x, i) for i in range(n)]) for key, x in (("x1", x1), ("x2", x2))}

    honest = outputs(500)
    result = audit(lambda x, k: honest[x][:k], "x1", "x2", 1.0, samples=500, repeats=1, beta=0.01,
                   statistic=lambda y: (np.asarray(y) > 0).astype(float))
    assert result.passed, str(result)
    monkeypatch.setattr(tt, "laplace", lambda values, *args, **kwargs: np.asarray(values, np.float64) * 1e3)
    exact = outputs(100)
    assert not audit(lambda x, k: exact[x][:k], "x1", "x2", 1.0, samples=100, repeats=1, beta=0.01,
                     statistic=lambda y: (np.asarray(y) > 0).astype(float)).passed


def test_the_trip_time_metrics_read_start_hours_durations_and_speeds():
    from locsynth.metrics.trip_times import distributions, trip_times

    ts = trips([(600, [0, 1, 2], 2), (1440 + 1020, [8, 9], 5)])
    v = trip_times(ts)
    assert v["hour"].tolist() == [10, 17] and v["minutes"].tolist() == [4.0, 5.0]
    metres = GRID.distance_m(np.array([0, 1, 8]), np.array([1, 2, 9]))
    assert np.allclose(v["kmh"], 3.6 * metres / np.array([120, 120, 300]))
    d = distributions(ts)
    assert d["start_hour"].sum() == 2 and d["duration"][:2].tolist() == [1, 1] and "fast" not in d
