"""Passenger trips of paper 004 §8.2 (data/trips.py) on hand-made fixes with known answers and on the
30-cab folder; the trip metrics of §8.4 (metrics/trips.py) against hand-computed values."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import traceset

from locsynth import InputError
from locsynth.metrics.trips import (frequent_pattern_precision, jensen_shannon, pattern_supports,
                                    source_destination_emd, top_patterns, trip_length_jsd, trip_statistics)
from locsynth.core.geo import haversine_m
from locsynth.data.traces import TraceSet
from locsynth.data.trips import (CABS, PAPER_BBOX, TIMEZONE, Visits, aggregate, bad_trips, interpolate_gaps, majority_hour,
                            make_trips, merge_self_loops, read_trips, trip_grid, weekday_trips)

GRID = trip_grid(250)


def cell(r, c):
    return r * GRID.cols + c


def fix(trip, local, r=None, c=None, lat=None, lon=None):
    """One fix of ``trip`` at local (Pacific) time ``local``, at the centre of cell (r, c)."""
    if r is not None:
        lat, lon = GRID.lat[cell(r, c)], GRID.lon[cell(r, c)]
    return {"user": trip, "time": pd.Timestamp(local, tz=TIMEZONE).tz_convert("UTC"), "lat": lat, "lon": lon}


def unix(local):
    return pd.Timestamp(local, tz=TIMEZONE).value // 10**9


# -- the steps, one by one ---------------------------------------------------------------------------

def test_grid_has_square_cells_over_the_paper_box():
    assert (GRID.rows, GRID.cols) == (94, 58)
    assert (trip_grid(500).rows, trip_grid(500).cols) == (47, 29)
    up = haversine_m(GRID.lat[cell(40, 20)], GRID.lon[cell(40, 20)], GRID.lat[cell(41, 20)], GRID.lon[cell(41, 20)])
    right = haversine_m(GRID.lat[cell(40, 20)], GRID.lon[cell(40, 20)], GRID.lat[cell(40, 21)], GRID.lon[cell(40, 21)])
    assert up == pytest.approx(250, abs=0.5) and right == pytest.approx(250, abs=0.5)
    lat_min, lat_max, lon_min, lon_max = GRID.bbox
    assert (lat_min, lon_min) == (PAPER_BBOX[0], PAPER_BBOX[2])
    assert lat_max >= PAPER_BBOX[1] and lon_max >= PAPER_BBOX[3]
    with pytest.raises(InputError, match="cell size"):
        trip_grid(0)


def test_speed_and_box_drop_whole_trips():
    lat0, lon0 = GRID.lat[cell(40, 20)], GRID.lon[cell(40, 20)]
    north_1km = lat0 + 1000 / 111_195
    trip = np.array([0, 0, 1, 1, 2, 2, 2])
    t = np.array([0, 60, 0, 20, 0, 60, 3600])                 # 1 km in 60 s (60 km/h), in 20 s (180 km/h)
    lat = np.array([lat0, north_1km, lat0, north_1km, lat0, lat0, 37.9])
    lon = np.full(7, lon0)
    fast, outside = bad_trips(trip, t, lat, lon, 3)
    assert fast.tolist() == [False, True, False] and outside.tolist() == [False, False, True]
    assert bad_trips(trip, t, lat, lon, 3, max_speed_kmh=200)[0].tolist() == [False, False, False]


def test_weekends_and_holidays_in_pacific_time():
    starts = np.array([unix("2008-05-27 10:00"), unix("2008-05-17 10:00"), unix("2008-05-26 10:00"),
                       unix("2008-05-23 23:30")])            # Tuesday, Saturday, Memorial Day, Friday night
    assert weekday_trips(starts).tolist() == [True, False, False, True]
    # 2008-05-24 06:30 UTC is still Friday in San Francisco
    assert weekday_trips(np.array([pd.Timestamp("2008-05-24 06:30", tz="UTC").value // 10**9])).tolist() == [True]


def test_sixty_second_windows_keep_the_most_frequent_cell():
    m = unix("2008-05-27 10:00") // 60 * 60
    fixes = Visits(np.array([0, 0, 0, 0, 0, 1]), np.array([m + 5, m + 25, m + 45, m + 70, m + 100, m + 5]),
                   np.array([7, 9, 9, 3, 7, 4]))
    out = aggregate(fixes, 60)
    assert out.trip.tolist() == [0, 0, 1]
    assert (out.minute - m // 60).tolist() == [0, 1, 0]
    assert out.cell.tolist() == [9, 3, 4]                    # 9 twice against 7 once; a tie goes to the first


def test_gaps_under_five_minutes_are_interpolated():
    visits = Visits(np.array([0, 0, 0, 1]), np.array([0, 4, 9, 11]),
                    np.array([cell(40, 20), cell(44, 22), cell(44, 30), cell(10, 10)]))
    out = interpolate_gaps(visits, GRID.cols)
    assert out.minute.tolist() == [0, 1, 2, 3, 4, 9, 11]       # 5 minutes (4 -> 9) is not under 5
    rc = [divmod(int(c), GRID.cols) for c in out.cell]
    # rows 40 + k, columns 20 + 2k / 4 rounded half up: 20.5 -> 21, 21, 21.5 -> 22
    assert rc[:5] == [(40, 20), (41, 21), (42, 21), (43, 22), (44, 22)]
    assert rc[5:] == [(44, 30), (10, 10)] and out.trip.tolist() == [0, 0, 0, 0, 0, 0, 1]


def test_the_majority_hour_counts_minutes_and_ties_go_to_the_first():
    m17 = unix("2008-05-27 17:58") // 60
    m09 = unix("2008-05-27 09:59") // 60
    visits = Visits(np.array([0] * 12 + [1, 1]), np.r_[m17 + np.arange(12), m09, m09 + 1], np.zeros(14, np.int64))
    assert majority_hour(visits, 3).tolist() == [18, 9, -1]    # 2 minutes at 17, 10 at 18; 1 at 9, 1 at 10


def test_self_loops_merge_into_the_first_visit():
    visits = Visits(np.array([0, 0, 0, 0, 0, 1]), np.arange(6), np.array([5, 5, 6, 6, 5, 5]))
    out = merge_self_loops(visits)
    assert out.cell.tolist() == [5, 6, 5, 5] and out.minute.tolist() == [0, 2, 4, 5]


def scenario():
    tue, sat, mem, fri = "2008-05-27", "2008-05-31", "2008-05-26", "2008-05-23"
    rows = [
        fix("abc-00000", f"{tue} 17:58:10", 40, 20), fix("abc-00000", f"{tue} 17:58:40", 40, 20),
        fix("abc-00000", f"{tue} 17:59:05", 40, 21), fix("abc-00000", f"{tue} 17:59:30", 40, 20),
        fix("abc-00000", f"{tue} 17:59:50", 40, 21), fix("abc-00000", f"{tue} 18:00:20", 40, 21),
        fix("abc-00000", f"{tue} 18:03:30", 40, 24), fix("abc-00000", f"{tue} 18:04:10", 41, 24),
        fix("abc-00000", f"{tue} 18:10:00", 45, 24),
        fix("abc-00001", f"{tue} 10:00:00", 40, 20), fix("abc-00001", f"{tue} 10:00:20", 40, 30),   # 450 km/h
        fix("abc-00002", f"{tue} 10:00:00", 40, 20), fix("abc-00002", f"{tue} 10:30:00", lat=37.9, lon=-122.45),
        fix("abc-00003", f"{sat} 10:00:00", 40, 20), fix("abc-00003", f"{sat} 10:01:00", 40, 21),
        fix("abc-00004", f"{mem} 10:00:00", 40, 20), fix("abc-00004", f"{mem} 10:01:00", 40, 21),
        fix("xyz-00000", f"{tue} 09:00:00", 10, 10), fix("xyz-00000", f"{tue} 09:01:00", 10, 10),
        fix("xyz-00001", f"{fri} 23:59:30", 10, 10), fix("xyz-00001", "2008-05-24 00:00:30", 10, 11),
    ]
    return pd.DataFrame(rows).sample(frac=1, random_state=0)      # any order


def test_make_trips_end_to_end_on_known_fixes():
    ts = make_trips(scenario(), 250, **CABS)
    assert ts.info["trips"] == {"trips": 7, "fixes": 21, "duplicate_times": 0, "too_fast": 1, "outside_box": 1,
                                "weekend_or_holiday": 2, "slowed_steps": 0, "single_visit": 1, "kept": 2}
    assert ts.users["user_id"].tolist() == ["abc-00000", "xyz-00001"]
    assert ts.users["cab"].tolist() == ["abc", "xyz"] and ts.users["hour"].tolist() == [18, 23]
    t, loc = ts.events_of(0)
    assert [divmod(int(c), GRID.cols) for c in loc] == [(40, 20), (40, 21), (40, 22), (40, 23), (40, 24), (41, 24),
                                                         (45, 24)]
    local = ts.time.start_of(t).tz_convert(TIMEZONE).strftime("%H:%M").tolist()
    assert local == ["17:58", "17:59", "18:01", "18:02", "18:03", "18:04", "18:10"]
    assert ts.time.instant == pd.Timedelta("1min") and ts.time.n_slots == 24
    assert str(ts.time.start_of(np.array([0]))[0].tz_convert(TIMEZONE).date()) == "2008-05-23"
    assert trip_statistics(ts) == {"trips": 2, "cells": 9, "length_max": 7, "length_mean": 4.5, "length_sd": 2.5,
                                   "length_min": 2}
    assert make_trips(scenario(), 250, **{**CABS, "weekdays_only": False}).info["trips"]["kept"] == 4


def test_bad_input():
    frame = scenario()
    with pytest.raises(InputError, match="lack column.*lat"):
        make_trips(frame.drop(columns="lat"))
    with pytest.raises(InputError, match="no fixes"):
        make_trips(frame.iloc[:0])
    with pytest.raises(InputError, match=r"no trip is left of the 1 made .*: 1 were too fast \(over 150 km/h"):
        make_trips(frame[frame["user"] == "abc-00001"], **CABS)
    with pytest.raises(InputError, match="must be positive"):
        make_trips(frame, max_speed_kmh=0)


def test_the_30_cabs_end_to_end(data_dir):
    path = data_dir / "sf-cabspotting" / "cabs"
    if not path.is_dir():
        pytest.skip("Cabspotting cabs not found")
    ts = read_trips(path, 500)
    stats = trip_statistics(ts)
    assert stats["trips"] > 1000 and 100 < stats["cells"] <= ts.space.n_locations and stats["length_min"] >= 2
    assert 4 < stats["length_mean"] < 15                      # paper 004 Table 1: 7.34 at 500 m (200 cabs)
    steps = ts.info["trips"]
    assert steps["kept"] == ts.n_traces and all(v >= 0 for v in steps.values())
    same = ts.user[1:] == ts.user[:-1]
    assert not (same & (ts.loc[1:] == ts.loc[:-1])).any()      # no self-loop is left
    assert (np.diff(ts.t)[same] > 0).all()
    assert ts.users["hour"].between(0, 23).all()
    first = ts.time.start_of(ts.t[ts.offsets[:-1]]).tz_convert(TIMEZONE)
    assert (first.day_of_week < 5).all() and not (first.strftime("%Y-%m-%d") == "2008-05-26").any()
    lat, lon = ts.space.lat[ts.loc], ts.space.lon[ts.loc]
    assert (lat > PAPER_BBOX[0]).all() and (lat < PAPER_BBOX[1] + 0.005).all() and (lon > PAPER_BBOX[2]).all()


def test_geolife_trajectories_as_trips(data_dir, tmp_path):
    """One trace per PLT file, inside Beijing's box, in Beijing time; prepare's line for the benchmark."""
    from typer.testing import CliRunner

    from locsynth.data.trips import BEIJING_BBOX
    from locsynth.cli import app

    path = data_dir / "geolife" / "trackintel_subset" / "geolife_long_10_MB"
    if not path.is_dir():
        pytest.skip("GeoLife subset not found")
    res = CliRunner().invoke(app, ["prepare", str(path), "--format", "geolife-trips", "--cell-m", "500", "--split",
                                   "test=0.2", "--out", str(tmp_path / "gl")])
    assert res.exit_code == 0, res.output
    train, test = (TraceSet.load(tmp_path / "gl" / part) for part in ("train", "test"))
    steps = train.info["trips"]
    assert steps["trips"] == 111 and steps["too_fast"] == 0 and train.n_traces + test.n_traces == steps["kept"]
    assert train.users["user_id"].str.fullmatch(r"0\d\d-\d{14}").all()       # user folder - file stem
    assert train.time.timezone == "Asia/Shanghai"
    lat = train.space.lat[train.loc]
    assert (lat > BEIJING_BBOX[0]).all() and (lat < BEIJING_BBOX[1] + 0.005).all()


# -- the metrics of §8.4 -----------------------------------------------------------------------------

def with_hours(ts, hours):
    return replace(ts, users=ts.users.assign(hour=np.asarray(hours, np.int8)))


def trips(paths, hours=None, cols=3):
    ts = traceset([[(k, c) for k, c in enumerate(p)] for p in paths], cols=cols)
    return ts if hours is None else with_hours(ts, hours)


def test_jensen_shannon_by_hand():
    p, q = np.array([2, 1]) / 3, np.array([1, 2]) / 3
    expected = 2 / 3 * np.log2(4 / 3) + 1 / 3 * np.log2(2 / 3)        # KL(p || m) = KL(q || m), m = (1/2, 1/2)
    assert jensen_shannon(p, q) == pytest.approx(expected)
    assert jensen_shannon(p, q, distance=True) == pytest.approx(np.sqrt(expected))
    assert jensen_shannon(p, p) == 0 and jensen_shannon([1, 0], [0, 1]) == pytest.approx(1.0)
    from scipy.spatial.distance import jensenshannon

    assert jensen_shannon(p, q, distance=True) == pytest.approx(jensenshannon(p, q, base=2))


def test_trip_length_divergence_per_hour():
    real = trips([[0, 1], [1, 2], [0, 1, 2], [0, 1, 2, 1]], hours=[8, 8, 8, 9])
    synthetic = trips([[0, 1], [0, 1, 2], [2, 1, 0], [0, 1]], hours=[8, 8, 8, 10])
    out = trip_length_jsd(real, synthetic)
    expected = 2 / 3 * np.log2(4 / 3) + 1 / 3 * np.log2(2 / 3)        # lengths (2, 2, 3) against (2, 3, 3)
    assert out["by_hour"][8] == pytest.approx(expected)
    assert np.isnan(out["by_hour"][9]) and np.isnan(out["by_hour"][10]) and np.isnan(out["by_hour"][0])
    # overall: (2, 2, 3, 4) against (2, 3, 3, 2): 1/4 of the mass moves from length 4 to length 3
    p, q = np.array([0.5, 0.25, 0.25]), np.array([0.5, 0.5, 0.0])
    assert out["overall"] == pytest.approx(jensen_shannon(p, q))
    timeless = trip_length_jsd(real, with_hours(synthetic, [-1] * 4))
    assert timeless["by_hour"] is None and timeless["overall"] == pytest.approx(out["overall"])
    with pytest.raises(InputError, match="need an hour"):
        trip_length_jsd(trips([[0, 1]]), synthetic)


def test_frequent_patterns_by_hand():
    real = trips([[0, 1, 2], [0, 1], [1, 2, 1]])
    cells, support = pattern_supports(real, 3)
    as_dict = {tuple(p): int(s) for P, S in zip(cells, support) for p, s in zip(P.tolist(), S)}
    assert as_dict == {(0,): 2, (1,): 3, (2,): 2, (0, 1): 2, (1, 2): 2, (2, 1): 1, (0, 1, 2): 1, (1, 2, 1): 1}
    assert top_patterns(real, 4) == [(1,), (0,), (2,), (0, 1)]         # ties: shorter, then lower cells
    synthetic = trips([[1, 2], [1, 2], [2]])                             # top: (2,) 3, (1,) 2, (1, 2) 2
    assert frequent_pattern_precision(real, synthetic, ks=(2, 4)) == {2: 0.5, 4: 0.5}
    assert frequent_pattern_precision(real, real, ks=(1, 8)) == {1: 1.0, 8: 1.0}


def test_source_destination_emd_in_metres():
    real = trips([[0, 1, 2], [1, 2]], hours=[7, 7])
    synthetic = trips([[0, 2], [0, 1, 2]], hours=[7, 7])
    d01 = float(real.space.distance_m(0, 1))
    out = source_destination_emd(real, synthetic)
    # (0, 2) and (1, 2) against (0, 2) twice: half the mass moves its source from 1 to 0
    assert out["by_hour"][7] == pytest.approx(d01 / 2) and out["overall"] == pytest.approx(d01 / 2)
    assert np.isnan(out["by_hour"][8])
    # one pair against another: the sum of the source and destination distances
    single = source_destination_emd(trips([[0, 2]], hours=[3]), trips([[1, 0]], hours=[3]))
    assert single["by_hour"][3] == pytest.approx(d01 + float(real.space.distance_m(2, 0)))
    # a set without hours is compared whole with every hour of the real trips
    timeless = source_destination_emd(real, with_hours(synthetic, [-1, -1]))
    assert timeless["by_hour"][7] == pytest.approx(d01 / 2) and np.isnan(timeless["by_hour"][0])
    # at most max_trips drawn per set, seeded
    big = trips([[0, 1]] * 50 + [[1, 2]] * 50, hours=[7] * 100)
    a = source_destination_emd(big, synthetic, max_trips=10, seed=1)
    assert a["by_hour"][7] == source_destination_emd(big, synthetic, max_trips=10, seed=1)["by_hour"][7]


# -- from the command line: prepare, NGRAM, evaluate, compare --------------------------------------------

def test_prepare_refuses_what_trips_ignore(tmp_path):
    from locsynth.data.prepare import prepare

    with pytest.raises(InputError, match="`grid`, `slot` do not apply to `format` cab-trips"):
        prepare(tmp_path, "cab-trips", tmp_path / "t", grid=(3, 3), slot="1h")
    with pytest.raises(InputError, match="`mode`, `max_speed_kmh` applies to the trip formats"):
        prepare(tmp_path, "cabs", tmp_path / "t", mode="ship", max_speed_kmh=50)
    with pytest.raises(InputError, match="unknown mode 'boat'"):
        prepare(tmp_path, "cab-trips", tmp_path / "t", mode="boat")
    with pytest.raises(InputError, match="`cell_m` applies to `format` cab-trips, geolife-trips only"):
        prepare(tmp_path, "cabs", tmp_path / "t", cell_m=500)
    with pytest.raises(InputError, match="no such file"):
        prepare(tmp_path / "missing", "cab-trips", tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_the_30_cabs_from_prepare_to_compare(data_dir, tmp_path):
    """``locsynth prepare --format cab-trips``, NGRAM, ``evaluate`` (trip metrics, the attacks skipped with
    their reasons) and ``compare`` (the per-hour curves side by side, no trade-off plot without attacks)."""
    import json

    from typer.testing import CliRunner

    from locsynth.cli import app
    from locsynth.metrics.trips import trip_metrics
    from locsynth.data.traces import TraceSet

    cabs = data_dir / "sf-cabspotting" / "cabs"
    if not cabs.is_dir():
        pytest.skip("Cabspotting cabs not found")

    def run(*args):
        res = CliRunner().invoke(app, [str(a) for a in args])
        assert res.exit_code == 0, res.output
        return res.output

    out = run("prepare", cabs, "--format", "cab-trips", "--cell-m", 500, "--split", "test=0.2", "--out",
              tmp_path / "trips")
    assert "trips (paper 004 Table 1)" in out
    train, test = TraceSet.load(tmp_path / "trips" / "train"), TraceSet.load(tmp_path / "trips" / "test")
    assert (train.space.rows, train.space.cols) == (47, 29) and test.users["hour"].between(0, 23).all()
    assert train.n_traces + test.n_traces == read_trips(cabs, 500).n_traces
    run("fit", "ngram", tmp_path / "trips" / "train", "--out", tmp_path / "model", "--epsilon", 1)
    run("sample", tmp_path / "model", "--out", tmp_path / "syn")
    out = run("evaluate", "--train", tmp_path / "trips" / "train", "--test", tmp_path / "trips" / "test",
              "--synthetic", tmp_path / "syn", "--out", tmp_path / "ev")
    assert "not computed for trips" in out and "reid_rate" in out
    data = json.loads((tmp_path / "ev" / "metrics.json").read_text())
    direct = trip_metrics(test, TraceSet.load(tmp_path / "syn"))
    assert data["trip_length_jsd"]["synthetic"] == pytest.approx(direct["length_jsd"]["overall"])
    assert data["trip_sd_emd_m"]["synthetic"] == pytest.approx(direct["sd_emd"]["overall"])
    assert data["trip_top10_precision"]["synthetic"] == direct["frequent_patterns"][10]
    html = (tmp_path / "ev" / "report.html").read_text()
    assert "paper 004 Figure 3" in html and "paper 004 Figure 4" in html and "Tables 2-3" in html
    run("evaluate", "--train", tmp_path / "trips" / "train", "--test", tmp_path / "trips" / "test",
        "--synthetic", tmp_path / "trips" / "train", "--out", tmp_path / "real", "--attacks", "none")
    run("compare", tmp_path / "ev", tmp_path / "real", "--out", tmp_path / "cmp")
    files = sorted(p.name for p in (tmp_path / "cmp").iterdir() if p.name != ".locsynth")
    # the trade-off of the attacks on trajectories (the first evaluation ran them)
    assert files == ["compare.csv", "compare.html", "tradeoff.png", "trip_length_jsd.png", "trip_sd_emd.png"]


def test_uniform_on_trips_keeps_each_trips_instants_and_draws_uniform_cells(tmp_path):
    """A day's walk per trip would be 1,440 events for a trip of a few: Uniform keeps the trips'
    instants, draws every cell uniformly (all cells about equally often), is seeded, and saves."""
    from helpers import trip_set
    from locsynth.synth import Synthesizer
    from locsynth.synth.baselines import Uniform

    paths = [[0, 1, 2], [1, 2], [2, 1, 0, 1]] * 400
    trips = trip_set(paths, [8, 9, 10] * 400, cols=5)
    model = Uniform().fit(trips)
    syn = model.sample(users=np.arange(1200), seed=3)
    assert syn.n_traces == 1200 and np.array_equal(np.diff(syn.offsets), [3, 2, 4] * 400)
    assert np.array_equal(syn.t, trips.t)
    counts = np.bincount(syn.loc, minlength=5)
    assert counts.min() > 0.8 * syn.n_events / 5 and counts.max() < 1.2 * syn.n_events / 5
    assert np.array_equal(model.sample(users=np.arange(1200), seed=3).loc, syn.loc)
    assert not np.array_equal(model.sample(users=np.arange(1200), seed=4).loc, syn.loc)
    model.save(tmp_path / "u")
    assert np.array_equal(Synthesizer.load(tmp_path / "u").sample(users=np.arange(1200), seed=3).loc, syn.loc)
