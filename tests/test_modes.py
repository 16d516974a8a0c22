"""Public bounds by mode (data/modes.py): the table, how a set carries them, how real trips keep
their bound on the grid, and how every trip method's time model and the report read them."""

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import InputError, registry
from locsynth.data.frames import trips_from_frame
from locsynth.data.modes import MODES, TAXI, Bounds, mode_bounds
from locsynth.data.space import Grid
from locsynth.data.trips import Visits, keep_bound
from locsynth.metrics.trip_times import trip_times
from locsynth.synth import trip_times as tt

from helpers import traceset


# -- the table -------------------------------------------------------------------------------------

def test_the_modes_and_the_cabs_values():
    assert set(MODES) == {"walk", "bike", "car", "bus", "train", "ship", "taxi"}
    assert TAXI == Bounds("taxi", 150.0, 1.0, 15.0, 5.0, 100.0, 250.0, "1min")     # what every set had before
    assert (TAXI.max_speed_kmh, TAXI.min_speed_kmh) == (tt.SPEED_EDGES[-1], tt.SPEED_EDGES[0])
    assert MODES["ship"].max_speed_kmh == 60 and MODES["ship"].instant_seconds == 120


@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_modes_cell_and_instant_let_a_step_to_a_neighbour_keep_the_bound(mode):
    """The diagonal neighbour, sqrt(2) cells, in one instant is within the bound: on the grid a real
    trip that crosses a cell's edge in one instant does not read as faster than its mode."""
    b = MODES[mode]
    assert 3.6 * math.sqrt(2) * b.cell_m / b.instant_seconds <= b.max_speed_kmh


def test_bounds_given_one_by_one_override_the_modes():
    ship = mode_bounds("ship", max_speed_kmh=40, cell_m=None)
    assert (ship.max_speed_kmh, ship.mode, ship.cell_m) == (40.0, "ship, adjusted", 1000.0)
    assert mode_bounds("ship", cell_m=500, instant=60).mode == "ship"             # the grid's and clock's choice
    assert mode_bounds("ship", instant=60).instant == "1min" and mode_bounds(None) == TAXI
    with pytest.raises(InputError, match="unknown mode 'boat'"):
        mode_bounds("boat")
    with pytest.raises(InputError, match="`min_speed_kmh` 70 must be below `max_speed_kmh` 60"):
        mode_bounds("ship", min_speed_kmh=70)
    with pytest.raises(InputError, match="`max_speed_kmh` must be a positive finite number, got -1"):
        mode_bounds("walk", max_speed_kmh=-1)
    with pytest.raises(InputError, match="`instant` 'soon' is not a duration"):
        mode_bounds("walk", instant="soon")
    # saved by an older locsynth, without some fields: the taxi's take their place
    assert Bounds.from_dict({"mode": "ship", "max_speed_kmh": 60}) == replace(TAXI, mode="ship", max_speed_kmh=60.0)
    assert Bounds.from_dict(json.loads(json.dumps(MODES["walk"].to_dict()))) == MODES["walk"]


def test_a_set_without_bounds_reads_as_the_cabs_and_a_trip_set_states_its_own():
    daily = traceset([[(0, 0), (1, 1)]])
    assert daily.bounds == TAXI and "bounds" not in daily.summary()
    trips = replace(daily, users=daily.users.assign(hour=np.int8(0)))          # trips prepared before bounds
    assert trips.summary()["bounds"] == TAXI.to_dict()
    ship = replace(trips, info={"bounds": MODES["ship"].to_dict()})
    assert ship.bounds == MODES["ship"] and ship.summary()["bounds"]["max_speed_kmh"] == 60


# -- real trips keep their bound on the grid --------------------------------------------------------

def plain_keep_bound(trip, minute, cell, space, bound_kmh, window_s):
    """keep_bound visit by visit."""
    out, slowed = list(minute), 0
    for i in range(1, len(trip)):
        if trip[i] != trip[i - 1]:
            continue
        metres = float(space.distance_m(np.array([cell[i - 1]]), np.array([cell[i]]))[0])
        least = max(math.ceil(metres / (bound_kmh / 3.6) / window_s - 1e-9), 1)
        gap = minute[i] - minute[i - 1]                   # the gap as recorded, kept where it is enough
        slowed += gap < least
        out[i] = out[i - 1] + max(gap, least)
    return out, slowed


def test_keep_bound_gives_each_step_the_time_its_length_asks_at_the_bound():
    grid = Grid(1, 10, (0.0, 0.009, 0.0, 0.09))                # cells about 1 km wide
    # trip 0: one cell a window (60 km/h), then three cells in one, then still; trip 1: one window apart
    visits = Visits(np.array([0, 0, 0, 0, 1, 1]), np.array([10, 11, 12, 20, 5, 6]), np.array([0, 1, 4, 5, 9, 8]))
    out, slowed = keep_bound(visits, grid, 60.0, 60.0)
    step = float(grid.distance_m(np.array([0]), np.array([1]))[0])
    assert 990 < step < 1010
    least = max(math.ceil(step / (60 / 3.6) / 60 - 1e-9), 1)             # 1 or 2 windows, by the cell's width
    assert out.minute[:2].tolist() == [10, 10 + least] and out.minute[4] == 5
    assert out.minute[2] - out.minute[1] >= math.ceil(3 * step / 1000 - 1e-9)
    expected, count = plain_keep_bound(visits.trip, visits.minute, visits.cell, grid, 60.0, 60.0)
    assert out.minute.tolist() == expected and slowed == count >= 1
    assert keep_bound(visits, grid, 1000.0, 60.0)[1] == 0                # a fast bound changes nothing


BOX = (47.45, 47.8, -122.45, -122.35)


def ships() -> pd.DataFrame:
    """Ships off Seattle, one fix a minute: three steam north at 30 km/h, two lie at anchor at the
    corner of four 1 km cells of :data:`BOX`, their fixes swinging across it; times in UTC."""
    from locsynth.data.trips import trip_grid

    grid = trip_grid(1000.0, BOX)
    corner_lat = BOX[0] + 22 * (grid.bbox[1] - grid.bbox[0]) / grid.rows
    corner_lon = BOX[2] + 4 * (grid.bbox[3] - grid.bbox[2]) / grid.cols
    rng = np.random.default_rng(0)
    rows = []
    t = pd.date_range("2022-01-03 00:00", periods=40, freq="1min", tz="UTC")
    for k in range(5):
        if k < 3:
            lat = 47.5 + 0.05 * k + np.arange(40) * 0.5 / 111.2           # 500 m a minute
            lon = np.full(40, -122.4)
        else:                                                          # +-200 m around the corner
            lat = corner_lat + (rng.random(40) - 0.5) * 0.0036
            lon = corner_lon + (rng.random(40) - 0.5) * 0.0053
        rows.append(pd.DataFrame({"MMSI": 367000000 + k, "t": t, "LAT": lat, "LON": lon}))
    return pd.concat(rows, ignore_index=True)


def test_a_ships_trips_keep_its_bound_on_the_grid():
    frame, box = ships(), BOX
    ts = trips_from_frame(frame, trip="MMSI", lat="LAT", lon="LON", time="t", mode="ship", bbox=box)
    assert ts.bounds == MODES["ship"] and ts.time.instant == pd.Timedelta("2min")
    assert ts.info["bounds"]["max_speed_kmh"] == 60 and ts.info["clock"] == "UTC"
    kmh = trip_times(ts)["kmh"]
    assert kmh.size and (kmh <= 60 * (1 + 1e-9)).all()
    # on one-minute instants the ships at anchor read as 60 km/h and more, one cell a minute, until slowed
    minute = trips_from_frame(frame, trip="MMSI", lat="LAT", lon="LON", time="t", mode="ship", bbox=box,
                              instant="1min")
    assert minute.info["trips"]["slowed_steps"] > 0 and (trip_times(minute)["kmh"] <= 60 * (1 + 1e-9)).all()


def test_with_a_mode_the_speed_filter_reads_over_an_instant():
    """A walker logged every 2 s with 15 m of jitter: between consecutive fixes that reads as 40 km/h
    and more, over a minute as the walk's 5 km/h."""
    rng = np.random.default_rng(1)
    t = pd.date_range("2012-04-03 08:00", periods=600, freq="2s", tz="UTC")
    lat = 39.90 + np.arange(600) * (5 / 3.6 * 2) / 111_200 + rng.normal(0, 15 / 111_200, 600)
    walk = pd.DataFrame({"user": "ann", "trip": "ann-0", "time": t, "lat": lat, "lon": 116.40})
    kept = trips_from_frame(walk, trip="trip", mode="walk", timezone="Asia/Shanghai")
    assert kept.n_traces == 1 and kept.info["trips"]["too_fast"] == 0
    with pytest.raises(InputError, match=r"1 were too fast \(over 10 km/h between two fixes"):
        trips_from_frame(walk, trip="trip", max_speed_kmh=10, timezone="Asia/Shanghai")    # paper 004's reading


# -- the time model and every trip method read them -------------------------------------------------

def walks(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """People walking in Beijing at 3-6 km/h, a fix a minute, starting between 7 and 19 h local."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        start = pd.Timestamp("2012-04-02 23:00", tz="UTC") + pd.Timedelta(minutes=int(rng.integers(0, 720)))
        steps = int(rng.integers(8, 30))
        v = rng.uniform(3, 6) / 3.6 * 60 / 111_200                     # degrees a minute
        heading = rng.uniform(0, 2 * np.pi)
        lat0, lon0 = 39.90 + rng.uniform(0, 0.03), 116.38 + rng.uniform(0, 0.04)
        i = np.arange(steps)
        rows.append(pd.DataFrame({"trip": f"w{k}", "time": start + pd.to_timedelta(i, unit="min"),
                                  "lat": lat0 + v * i * np.cos(heading), "lon": lon0 + v * i * np.sin(heading) * 1.3}))
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def walked():
    return trips_from_frame(walks(), trip="trip", mode="walk", cell_m=100, timezone="Asia/Shanghai")


def test_the_time_models_speed_bins_span_the_sets_bounds(walked, tmp_path):
    assert np.allclose(tt.speed_edges(walked.bounds), np.geomspace(0.5, 10, 21))
    assert np.array_equal(tt.speed_edges(TAXI), tt.SPEED_EDGES)
    model = locsynth.NGRAM(epsilon=2.0).fit(walked)
    assert np.allclose(model.trip_times_.edges, np.geomspace(0.5, 10, 21)) and model.trip_times_.bound == 10
    assert "0.5-10 km/h" in model.trip_times_.describe()
    spend = [s for s in model.ledger_.spends if "its speed" in s.saw][0]
    assert "20 bins of 0.5-10 km/h, clipped at the set's public bounds (walk)" in spend.saw
    assert model.bounds_ == walked.bounds
    model.save(tmp_path / "m")
    again = locsynth.NGRAM.load(tmp_path / "m")
    assert again.bounds_ == walked.bounds and np.array_equal(again.trip_times_.edges, model.trip_times_.edges)
    assert again.sample(50, seed=1).bounds == walked.bounds


def test_a_model_saved_before_bounds_loads_with_the_cabs(walked, tmp_path):
    model = locsynth.NGRAM(epsilon=2.0).fit(walked)
    model.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    del meta["bounds"]
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with np.load(tmp_path / "m" / "arrays.npz") as data:
        arrays = {k: data[k] for k in data.files if k not in ("times_edges", "times_noise")}
    np.savez(tmp_path / "m" / "arrays.npz", **arrays)
    old = locsynth.NGRAM.load(tmp_path / "m")
    assert old.bounds_ is None and np.array_equal(old.trip_times_.edges, tt.SPEED_EDGES)
    synthetic = old.sample(100, seed=2)
    assert synthetic.bounds == TAXI and "bounds" not in synthetic.info
    assert (trip_times(synthetic)["kmh"] <= 150 * (1 + 1e-9)).all()


#: every trip method with a time model, fast enough here (DPTrip's DP-SGD: tests/test_dptrip.py's slow runs)
TIMED = {"ngram": {}, "privtrace": {}, "adatrace": {}, "dpt": {}, "ldptrace": {"time_share": 0.3}}


@pytest.mark.parametrize("name", sorted(TIMED))
def test_no_synthetic_step_is_faster_than_the_sets_bound(name, walked):
    """A walker's bound is 10 km/h on 100 m cells: a step of one cell in a minute is 6 km/h, two cells
    12, so every method's walks would break it without the floor the bound puts on a step's time."""
    model = registry.get(name)(epsilon=1.0, **TIMED[name]).fit(walked)
    synthetic = model.sample(600, seed=3)
    assert synthetic.has_times and synthetic.bounds == walked.bounds
    kmh = trip_times(synthetic)["kmh"]
    assert kmh.size > 100 and kmh.max() <= 10 * (1 + 1e-9)


def test_a_step_takes_at_least_the_time_its_length_asks_at_the_bound(walked):
    """The floor under the sampled speeds: a model whose speeds all lie in its last bin, a trip of one
    step of 5 km (a jump across the city) on one-minute instants: 30 minutes at 10 km/h, not less."""
    from locsynth.privacy.ledger import Ledger

    model = tt.fit_trip_times(walked, 1e6, Ledger())
    fast = replace(model, speeds=np.where(np.arange(tt.SPEED_BINS) == tt.SPEED_BINS - 1, 1.0, 0.0)[None, :])
    a, b = 0, int(np.argmax(walked.space.distance_m(np.zeros(walked.space.n_locations, int),
                                                     np.arange(walked.space.n_locations))))
    metres = float(walked.space.distance_m(np.array([a]), np.array([b]))[0])
    t = tt.sample_times(fast, np.array([a, b]), np.array([2]), walked.space, walked.time, seed=0)
    assert metres > 3000 and (t[1] - t[0]) * 60 >= metres / (10 / 3.6) - 1e-6
    assert (t[1] - t[0]) <= math.ceil(metres / (model.edges[-2] / 3.6) / 60) + 1        # the last bin's speeds


def test_the_starts_fall_back_toward_uniform_as_far_as_noise_fills_them(monkeypatch):
    from locsynth.privacy.ledger import Ledger

    rng = np.random.default_rng(0)
    hours = np.r_[rng.normal(8, 1, 10_000), rng.normal(18, 1.5, 10_000)].astype(int) % 24
    many = traceset([[(int(h), 0), (int(h) + 1, 1)] for h in hours])
    few = traceset([[(int(h), 0), (int(h) + 1, 1)] for h in rng.choice(hours, 12)])
    shares = []                           # the hours' own noise share: the first fallback of each fit
    honest = tt.toward_uniform

    def spy(kept, uniform, rho):
        shares.append(rho)
        return honest(kept, uniform, rho)

    monkeypatch.setattr(tt, "toward_uniform", spy)
    big = [tt.fit_trip_times(many, 0.5, Ledger()) for _ in range(3)]
    small = []
    for _ in range(10):
        shares.clear()
        small.append((tt.fit_trip_times(few, 0.5, Ledger()), shares[0]))
    # a bin that the data fill above the threshold counts as signal: a few of the small fits keep one
    assert all(m.noise < 0.05 for m in big) and np.mean([m.noise for m, _ in small]) > 0.6
    for m, rho in small:                  # what is left of the hours is mostly the uniform guess
        row = m.hours[0]
        feasible = np.zeros(24)
        feasible[np.unique(tt._hour_of_instant(few.time))] = 1.0
        p, u = row / row.sum(), feasible / feasible.sum()
        assert rho <= m.noise + 1e-12 and np.abs(p - u).sum() <= 2 * (1 - rho) + 1e-9


def test_the_fast_step_metric_reads_the_test_sets_bound():
    from locsynth.evaluation.evaluate import evaluate

    grid = Grid(1, 10, (0.0, 0.009, 0.0, 0.09))                # 1 km cells, one-minute... hourly axis here
    ts = traceset([[(0, 0), (1, 1), (2, 2)], [(5, 3), (6, 5)]], cols=10)
    ts = replace(ts, space=grid, users=ts.users.assign(hour=np.int8(0)))
    # one km an hour and two: 1 and 2 km/h; a bound of 1.5 km/h makes one step of three too fast
    slow = replace(ts, info={"bounds": mode_bounds("walk", max_speed_kmh=1.5, min_speed_kmh=0.1).to_dict()})
    synthetic = replace(slow, users=slow.users.assign(source=np.int32(-1), trace_no=np.int32(0)))
    report = evaluate(slow, slow, synthetic, groups=["trip_times", "realism"])
    assert report.metrics["realism_fast_steps"]["synthetic"] == pytest.approx(1 / 3)
    assert report.meta["speed_bound"] == {"kmh": 1.5, "mode": "walk, adjusted"}
    assert report.meta["realism"]["speed_bound_kmh"] == 1.5
    cabs = evaluate(ts, ts, replace(synthetic, info={}), groups=["trip_times", "realism"])
    assert cabs.metrics["realism_fast_steps"]["synthetic"] == 0 and cabs.meta["speed_bound"]["kmh"] == 150


# -- on real data -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_us_west_coast_ships_keep_60_kmh(data_dir, monkeypatch):
    """The issue's measurement: on 1 km cells in one-minute instants a fifth of the ships' steps read
    60 km/h or more (one cell a minute, or a diagonal), which their fixes do not; with each step
    given the time the bound asks, none is above it."""
    import locsynth.data.trips as trips_module

    frame = pd.read_csv(data_dir / "ais-us-marinecadastre" / "ais_2022-01-03_first99999.csv.gz")
    frame["t"] = pd.to_datetime(frame["BaseDateTime"]).dt.tz_localize("UTC")
    args = dict(trip="MMSI", lat="LAT", lon="LON", time="t", bbox=(30, 49, -126, -116),
                timezone="America/Los_Angeles")
    minute = trips_from_frame(frame, max_speed_kmh=60, cell_m=1000, **args)
    assert minute.n_traces > 200 and minute.info["trips"]["slowed_steps"] > 50
    assert (trip_times(minute)["kmh"] <= 60 * (1 + 1e-9)).all()
    ship = trips_from_frame(frame, mode="ship", **args)
    assert (trip_times(ship)["kmh"] <= 60 * (1 + 1e-9)).all()
    assert ship.info["trips"]["slowed_steps"] < minute.info["trips"]["slowed_steps"] / 4
    monkeypatch.setattr(trips_module, "keep_bound", lambda visits, *a: (visits, 0))
    before = trips_from_frame(frame, max_speed_kmh=60, cell_m=1000, **args)
    kmh = trip_times(before)["kmh"]
    assert (kmh > 60 * (1 + 1e-9)).mean() > 0.05 and (kmh >= 60 * (1 - 1e-9)).mean() > 0.15
