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
    """The four histograms trace by trace, as the module docstring defines them (no calendar)."""
    c = tt.counts(ts)
    dates, hours = np.zeros(c.layout.period), np.zeros((2, 24))
    speeds = np.zeros((tt.LENGTH_EDGES.size - 1, tt.SPEED_EDGES.size - 1))
    durations = np.zeros(tt.DURATION_EDGES.size - 1)
    for i in range(ts.n_traces):
        t, loc = ts.events_of(i)
        if t.size == 0:
            continue
        when = ts.time.start_of(t[:1])[0].tz_convert(ts.time.timezone)
        dates[(when.date() - AXIS.start_date).days] += 1
        hours[int(when.day_of_week >= 5), when.hour] += 1
        minutes = (t[-1] - t[0]) * 1.0
        durations[min(int(np.searchsorted(tt.DURATION_EDGES, minutes, side="right")) - 1, durations.size - 1)] += 1
        path = sum(float(ts.space.distance_m(a, b)) for a, b in zip(loc[:-1], loc[1:]))
        if t.size > 1 and path > 0:
            kmh = 3.6 * path / ((t[-1] - t[0]) * 60)
            row = int(np.searchsorted(tt.LENGTH_EDGES, path, side="right")) - 1
            speeds[row, min(max(np.searchsorted(tt.SPEED_EDGES, kmh, side="right") - 1, 0), speeds.shape[1] - 1)] += 1
    return dates, hours, speeds, durations


def again(ts: TraceSet, extra=()) -> TraceSet:
    """``ts``'s trips as they are, and ``extra`` ones (as :func:`trips` takes them), with their hours."""
    more = trips(list(extra)) if extra else None
    user = np.r_[ts.user, more.user + ts.n_traces] if more else ts.user
    t, loc = (np.r_[ts.t, more.t], np.r_[ts.loc, more.loc]) if more else (ts.t, ts.loc)
    users = pd.concat([ts.users, more.users], ignore_index=True) if more else ts.users
    users = users.assign(user_id=[f"t{i}" for i in range(len(users))])
    return TraceSet.from_events(user, t, loc, users, GRID, AXIS, info=dict(ts.info))


def test_the_histograms_count_each_trace_once_as_a_plain_loop_does():
    ts = city()
    c = tt.counts(ts)
    assert c.layout.period == 21 and c.layout.open.all() and c.hours.shape == (2, 24)
    dates, hours, speeds, durations = plain_counts(ts)
    assert np.array_equal(c.dates, dates) and np.array_equal(c.hours, hours)
    assert np.array_equal(c.speeds, speeds) and np.array_equal(c.durations, durations)
    assert c.dates.sum() == c.hours.sum() == c.durations.sum() == c.speeds.sum() == ts.n_traces   # every trip moves
    # one trace more moves each histogram by 1 at most, however long: one point, many steps
    base = tt.counts(again(ts))
    for extra in ([(5 * 1440 + 600, [3], 1)], [(5 * 1440 + 600, list(range(40)), 1)]):
        more = tt.counts(again(ts, extra))
        moved = [np.abs(getattr(more, k) - getattr(base, k)).sum() for k in ("dates", "hours", "speeds", "durations")]
        assert moved[0] == moved[1] == moved[3] == 1 and moved[2] <= 1
        assert np.abs(more.vector() - base.vector()).sum() <= tt.SENSITIVITY


def test_a_calendar_opens_only_its_days_and_the_structure_is_the_periods_alone():
    """The cabs' calendar (weekdays other than US federal holidays, data/trips.py) opens 16 of the 23
    days from Monday 19 May 2008 (weekends and Memorial Day closed); the weekend row of the hours
    goes; one trip more on a day inside the period changes no bin."""
    from dataclasses import replace

    from locsynth.data.trips import WEEKDAYS

    lay = tt.layout(AXIS, 23, WEEKDAYS)
    closed = pd.date_range("2008-05-19", periods=23)[~lay.open]
    assert lay.open.sum() == 16 and set(closed.strftime("%m-%d")) == {
        "05-24", "05-25", "05-26", "05-31", "06-01", "06-07", "06-08"}
    assert lay.kinds_open.tolist() == [True, False]
    ts = replace(city(), info={"calendar": WEEKDAYS})
    c = tt.counts(ts)
    weekday_trips = sum(1 for i in range(ts.n_traces) if tt.layout(AXIS, 21, WEEKDAYS).open[ts.events_of(i)[0][0] // 1440])
    assert c.dates.size == 14 and c.hours.shape == (1, 24) and c.dates.sum() == c.hours.sum() == weekday_trips
    more = tt.counts(again(ts, [(3 * 1440 + 600, [3, 4], 1)]))
    assert more.vector().shape == c.vector().shape and np.abs(more.vector() - c.vector()).sum() <= tt.SENSITIVITY


def model_of(ts: TraceSet) -> tt.TripTimes:
    """The model with exact counts (no noise, nothing thresholded)."""
    c = tt.counts(ts)
    dates, hours, _ = tt.starts_from(c.dates, c.hours, c.layout, ts.time, 1e-9)
    return tt.TripTimes(dates, hours, c.speeds, 2, c.layout.period)


def test_sampled_trips_start_on_the_models_dates_and_hours_and_stay_under_the_bound():
    ts = city()
    model = model_of(ts)
    rng = np.random.default_rng(1)
    length = rng.integers(1, 30, 3000)
    loc = rng.integers(0, GRID.n_locations, int(length.sum()))          # wandering: steps of any length
    t = tt.sample_times(model, loc, length, GRID, AXIS, seed=3)
    assert np.array_equal(t, tt.sample_times(model, loc, length, GRID, AXIS, seed=3))   # seeded
    offsets = np.r_[0, np.cumsum(length)]
    first = t[offsets[:-1]]
    assert first.min() >= 0 and (first // 1440).max() < model.period
    when = pd.DatetimeIndex(AXIS.start_of(first)).tz_convert(AXIS.timezone)
    assert set(when.hour) == {8, 9, 17, 18} and len(set(when.minute)) > 50          # no minute preferred
    # the dates as the data have them: each day's share of the starts within sampling error
    real = np.bincount(ts.t[ts.offsets[:-1]] // 1440, minlength=21) / ts.n_traces
    assert np.abs(np.bincount(first // 1440, minlength=21) / length.size - real).max() < 0.02
    same = np.repeat(np.arange(length.size), length)[1:] == np.repeat(np.arange(length.size), length)[:-1]
    step = np.diff(t)[same]
    metres = GRID.distance_m(loc[:-1][same], loc[1:][same])
    assert step.min() >= 1 and (3.6 * metres / (step * 60)).max() <= tt.MAX_SPEED_KMH + 1e-9
    # a method's own hours (DPTrip's) are kept, its date drawn from that hour's column
    hours = rng.choice([8, 18], length.size)
    given = tt.sample_times(model, loc, length, GRID, AXIS, seed=3, hours=hours)
    assert np.array_equal(pd.DatetimeIndex(AXIS.start_of(given[offsets[:-1]])).tz_convert(AXIS.timezone).hour, hours)
    # a day without trips gets none: day 4 emptied
    quiet = tt.TripTimes(np.where(np.arange(21) == 4, 0.0, model.dates), model.hours, model.speeds, 2, 21)
    assert not (tt.sample_times(quiet, loc, length, GRID, AXIS, seed=3)[offsets[:-1]] // 1440 == 4).any()


def test_the_cap_bounds_a_trips_duration_by_a_faster_speed_of_its_row():
    speeds = np.zeros((tt.LENGTH_EDGES.size - 1, tt.SPEED_EDGES.size - 1))
    speeds[6, [2, 17]] = [10.0, 1.0]                     # beyond 12 km: mostly 4-6 km/h, a few at 60-80
    model = tt.TripTimes(np.ones(3), np.ones((2, 24)), speeds, 2, 3, cap=60.0)
    path = np.full(2000, 30_000.0)                       # 30 km: 5-7.5 hours at 4-6 km/h
    kmh = tt.capped_speeds(model, path, np.random.default_rng(0).random(2000), np.random.default_rng(1).random(2000))
    assert (kmh >= 60.0).all() and (kmh <= 80.0).all()   # the row's bin fast enough for an hour
    free = tt.capped_speeds(tt.TripTimes(np.ones(3), np.ones((2, 24)), speeds, 2, 3), path,
                            np.random.default_rng(0).random(2000), np.random.default_rng(1).random(2000))
    assert (free < 6.0).mean() > 0.8                    # without a cap the row's speeds as they are
    # none of the row's speeds is fast enough: the path over the cap, never above the bound
    slow = tt.TripTimes(np.ones(3), np.ones((2, 24)), np.where(np.arange(20) == 2, speeds, 0.0), 2, 3, cap=60.0)
    assert np.allclose(tt.capped_speeds(slow, np.array([40_000.0, 400_000.0]), np.zeros(2), np.zeros(2)), [40.0, 150.0])
    # sampled: every trip of 30 km ends within the hour (each step's minute rounded)
    loc = np.tile([0, 63], 40)
    t = tt.sample_times(model, loc, np.full(40, 2), GRID, AXIS, seed=1)
    assert (t[1::2] - t[::2]).max() <= 60 + 1 and GRID.distance_m(np.array([0]), np.array([63]))[0] > 5000   # 66 min at 5 km/h


def test_the_duration_cap_is_the_top_of_the_heaviest_run_of_kept_bins_or_the_995_quantile_if_lower():
    kept = np.zeros(tt.DURATION_EDGES.size - 1)
    kept[[3, 4, 5, 6]] = [10.0, 50.0, 30.0, 5.0]
    kept[20] = 9.0                                       # past an empty bin: noise's
    assert tt.duration_cap(kept) == pytest.approx(tt.DURATION_EDGES[7])
    kept[[8, 9]] = [200.0, 1.0]                          # a heavier run further on is the data's
    assert tt.duration_cap(kept) == pytest.approx(tt.DURATION_EDGES[10])
    assert tt.duration_cap(np.zeros(5)) == np.inf
    kept[:] = 0.0
    kept[[3, 4, 5]] = [1000.0, 3.0, 2.0]                 # noise joined to the run's end: under 0.5 % of the mass
    assert tt.duration_cap(kept) == pytest.approx(tt.DURATION_EDGES[4])
    kept[[3, 4, 5]] = [1000.0, 30.0, 2.0]                # 3 % of it: the 99.5 % quantile is in bin 4
    assert tt.duration_cap(kept) == pytest.approx(tt.DURATION_EDGES[5])
    assert tt.duration_cap(np.r_[0.0, 0.0, 3.0], np.array([0.0, 15.0, 30.0, np.inf])) == np.inf   # the last bin's


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
                                    "times_shape": np.array([2, 5])}, AXIS)
    assert one.speeds.shape == (1, speeds.shape[1])
    assert np.array_equal(tt.speed_rows(one.speeds, path), np.tile(speeds.sum(axis=0), (3, 1)))
    # sampled: a short trip walks, a long one drives
    loc = np.r_[0, 1, 0, 7]                              # one step of one cell; one across a row, 3-5 km
    model = tt.TripTimes(np.ones(5), np.ones((2, 24)), speeds, 2, 5)
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
    # the model's chance of a start in the data's hours: all of it but about the share its noise estimate
    # gives the uniform guess (measured 1.0-1.2 times that: the weekend row, a fifth of the starts, holds
    # more noise than the whole; three times it is the bound: at twice it a full run failed once, 0.9672
    # against 0.9674, OpenDP's noise being unseeded); the 100 starts drawn from it within 4 binomial sds
    times_ = model.trip_times_
    rows = tt.hour_rows(times_, ts.time)[:, [8, 9, 17, 18]].sum(axis=1)
    kind = tt.day_kind(tt._weekdays(ts.time, times_.period), times_.kinds)
    p = float((times_.dates * rows[kind]).sum() / times_.dates.sum())
    assert p >= 1 - 3 * times_.noise and times_.noise < 0.1
    assert abs(np.isin(starts.hour, [8, 9, 17, 18]).mean() - p) <= 4 * np.sqrt(p * (1 - p) / 100) + 0.01
    times = [s for s in model.ledger_.spends if "start of every trace" in s.saw]
    assert len(times) == 1 and times[0].sensitivity == 4.0 and times[0].epsilon == pytest.approx(10.0)
    assert "its date (one bin each of the 21 days of the period)" in times[0].saw
    assert tt.PERIOD_FROM_DATA in model.ledger_.uncovered
    model.save(tmp_path / "m")
    loaded = locsynth.synth.Synthesizer.load(tmp_path / "m")
    assert np.array_equal(loaded.trip_times_.dates, model.trip_times_.dates)
    assert loaded.trip_times_.cap == model.trip_times_.cap
    assert loaded.sample(100, seed=2).fingerprint() == syn.fingerprint()
    plain = locsynth.NGRAM(epsilon=20.0, time_share=0).fit(ts).sample(100, seed=2)
    assert not plain.has_times and plain.info["times"] == "none"
    with pytest.raises(InputError, match=r"`time_share` 0.96 leaves nothing of epsilon"):
        locsynth.NGRAM(epsilon=1.0, time_share=0.96).fit(ts)


@pytest.mark.slow
def test_a_releases_start_hours_are_dp_at_the_models_share_and_exact_counts_are_caught(monkeypatch):
    """Neighbouring trip sets, one trip at 3:00 more; the release's share of trips starting at 3:00
    depends on the hours and the dates alone (its size given: 40 trips), which the model noises at
    time_share x epsilon / 4 = 0.5 each (the speeds and the durations take the other half): 1 in all."""
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


def dated(extra_day: int | None = None, per_day: int = 100) -> TraceSet:
    """``per_day`` trips at 8:00 on each of 14 days, and one more on ``extra_day``."""
    rows = [(d * 1440 + 480 + k % 60, [1, 2], 1) for d in range(14) for k in range(per_day)]
    return trips(rows + ([(extra_day * 1440 + 480, [1, 2], 1)] if extra_day is not None else []))


@pytest.mark.slow
def test_the_dates_are_dp_at_a_quarter_of_the_models_epsilon_and_a_weakened_model_is_caught(monkeypatch):
    """Neighbouring sets, one trip more on day 3 (inside the period: the structure is the same); the
    fitted model's weight of day 3 depends on the dates and, through the fallback's guess, the hours:
    each noised at a quarter of the model's epsilon 2, 1 in all. The weight against day 3's exact count
    in the larger set passes the ratio test at 1; a model that adds a quarter of the noise (its
    sensitivity stated as 1 instead of 4) fails it."""
    x = {"x1": dated(3), "x2": dated()}
    assert tt.counts(x["x1"]).vector().shape == tt.counts(x["x2"]).vector().shape

    def outputs(k):
        return {key: np.array([float(tt.fit_trip_times(ts, 2.0, Ledger()).dates[3] > 101.0) for _ in range(k)])
                for key, ts in x.items()}

    honest = outputs(1500)
    assert audit(lambda key, k: honest[key][:k], "x1", "x2", 1.0, samples=1500, repeats=1, beta=0.01).passed
    monkeypatch.setattr(tt, "SENSITIVITY", 1.0)
    weak = outputs(1500)
    assert not audit(lambda key, k: weak[key][:k], "x1", "x2", 1.0, samples=1500, repeats=1, beta=0.01).passed


def card_tokens(ts: TraceSet, seed: int) -> list[str]:
    """The release card (RELEASE.md) of an AdaTrace fit of ``ts`` with its time model, cut into
    numbers and the text between them."""
    import re

    from locsynth.release.publish import card_markdown

    # no footprint: whether one is fitted reads the DP count of trips (post-processing), and at these
    # 280 trips about 1 fit in 100 counted past its threshold and added a spend line (a CI run failed on it)
    syn = locsynth.AdaTrace(epsilon=2.0, time_share=0.3, footprint_share=0.0, seed=seed).fit(ts).sample(50, seed=seed)
    return re.split(r"(\d+(?:\.\d+)?)", card_markdown(make_release(syn).card))


def test_one_trip_more_inside_the_period_changes_the_models_structure_and_card_only_by_noise():
    """Two training sets that differ in one trip on day 13 (the outside audit's: it switched the old
    model from 2 day kinds to 7, 48 bins to 168, and its card said so): the models have the same
    structure, and the cards the same text and numbers but for the figures that differ from fit to fit
    of one set (noisy ones: a DP count, the noise's share, the cap). A trip after the period's last day
    changes the period, which the card names as not covered, with what it reveals."""
    base = dated(per_day=20)
    inside, later = dated(13, per_day=20), dated(None, per_day=20)
    later = again(later, [(16 * 1440 + 480, [1, 2], 1)])
    models = {name: tt.fit_trip_times(ts, 1.0, Ledger()) for name, ts in
              (("base", base), ("inside", inside), ("later", later))}
    shapes = {name: (m.dates.shape, m.hours.shape, m.speeds.shape, m.kinds, m.period) for name, m in models.items()}
    assert shapes["base"] == shapes["inside"] != shapes["later"]
    fits = [card_tokens(base, seed) for seed in range(4)]
    assert len({len(f) for f in fits}) == 1
    noisy = {i for i in range(len(fits[0])) if len({f[i] for f in fits}) > 1}
    assert noisy and all(any(ch.isdigit() for ch in fits[0][i]) for i in noisy)     # only numbers vary
    # the release's events, a draw of its sampling (99 instead of 100 in 1 of 6 seeds, so often the same
    # in the 4 fits above, and then the one-trip-more fit failed on it): named here rather than found
    noisy |= {i for i in range(len(fits[0]) - 1) if fits[0][i + 1].startswith(" events")}
    other = card_tokens(inside, 0)
    assert len(other) == len(fits[0]) and [i for i, (a, b) in enumerate(zip(fits[0], other))
                                            if a != b and i not in noisy] == []
    moved = card_tokens(later, 0)
    assert "".join(moved).count(tt.PERIOD_FROM_DATA) == 1 and "".join(fits[0]).count(tt.PERIOD_FROM_DATA) == 1
    changed = {b for i, (a, b) in enumerate(zip(fits[0], moved)) if a != b and i not in noisy}
    assert changed == {"17"}, changed                     # the period's days (14 -> 17), nothing else


def test_the_trip_time_metrics_read_start_hours_durations_and_speeds():
    from locsynth.metrics.trip_times import distributions, trip_times

    ts = trips([(600, [0, 1, 2], 2), (1440 + 1020, [8, 9], 5)])
    v = trip_times(ts)
    assert v["hour"].tolist() == [10, 17] and v["minutes"].tolist() == [4.0, 5.0]
    metres = GRID.distance_m(np.array([0, 1, 8]), np.array([1, 2, 9]))
    assert np.allclose(v["kmh"], 3.6 * metres / np.array([120, 120, 300]))
    d = distributions(ts)
    assert d["start_hour"].sum() == 2 and d["duration"][:2].tolist() == [1, 1] and "fast" not in d
