"""`locsynth prepare` on every dataset in ../shared/data: the counts of the SOURCE.md files survive.

Everything is kept (a grid over the data's own box, all events of an instant) so that the
TraceSet's counts are the source's counts.
"""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from locsynth import InputError
from locsynth.cli import app

runner = CliRunner()

CASES = [
    # folder or file, format, extra options, users, events
    ("foursquare-nyc-tsmc2014", "foursquare", [], 962, 21_406),
    ("foursquare-global-us-vldb17", "foursquare-global", [], 4_969, 185_984),
    ("foursquare-nyc-mat/foursquare_nyc.csv", "foursquare-mat", [], 193, 44_809),
    ("gowalla-vldb17/Gowalla_3", "gowalla", [], 1_000, 157_251),
    ("geolife/trackintel_subset/geolife_long_10_MB", "geolife", [], 11, 164_531),
    ("sf-cabspotting/cabs", "cabs", [], 25_716, 280_579),
    ("geolife/skmob_geolife_sample.txt.gz", "csv", ["--timezone", "UTC"], 2, 217_653),
    ("sf-cabspotting/skmob_sample_cabs.csv", "csv", ["--user-col", "driver", "--time-col", "timestamp",
                                                     "--time-unit", "s"], 1, 9_999),
]


@pytest.mark.parametrize("path, fmt, extra, users, events", CASES, ids=[c[1] + ":" + c[0] for c in CASES])
def test_prepare_keeps_every_point(data_dir, tmp_path, path, fmt, extra, users, events):
    out = tmp_path / "out"
    res = runner.invoke(app, ["prepare", str(data_dir / path), "--format", fmt, "--out", str(out),
                              "--grid", "8x8", "--duplicates", "keep", *extra])
    assert res.exit_code == 0, res.output
    info = json.loads(runner.invoke(app, ["info", str(out), "--json"]).stdout)
    assert (info["users"], info["events"], info["locations"]) == (users, events, 64)


def test_prepare_foursquare_pois_with_split(data_dir, tmp_path):
    out = tmp_path / "nyc"
    res = runner.invoke(app, ["prepare", str(data_dir / "foursquare-nyc-tsmc2014"), "--format", "foursquare",
                              "--pois", "1000", "--timezone", "America/New_York", "--split", "test=0.2",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    train = json.loads(runner.invoke(app, ["info", str(out / "train"), "--json"]).stdout)
    test = json.loads(runner.invoke(app, ["info", str(out / "test"), "--json"]).stdout)
    assert train["locations"] == 1000 and train["instants"] == 24 and train["slots"] == 12
    assert train["users"] + test["users"] <= 962 and test["users"] == pytest.approx(0.2 * (train["users"] + test["users"]), abs=1)


def test_prepare_gowalla_with_friends(data_dir, tmp_path):
    out = tmp_path / "gw"
    res = runner.invoke(app, ["prepare", str(data_dir / "gowalla-vldb17" / "Gowalla_2"), "--format", "gowalla",
                              "--grid", "10x10", "--friends",
                              str(data_dir / "gowalla-vldb17" / "Gowalla_1" / "Gowalla_social_relations.txt"),
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    info = json.loads(runner.invoke(app, ["info", str(out), "--json"]).stdout)
    assert info["users"] == 100 and info["friendships"] == 329     # edges with both ends among users 0-99


def test_option_of_another_format_is_refused(data_dir, tmp_path):
    res = runner.invoke(app, ["prepare", str(data_dir / "geolife" / "trackintel_subset" / "geolife_modes"),
                              "--format", "geolife", "--pois-file", "x.txt", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "--pois-file does not apply to --format geolife" in res.output


def test_timezone_auto_puts_every_point_on_its_local_clock(tmp_path):
    """--timezone auto (#25): a check-in at 09:00 local time lands in the 09:00 instant in New York
    and in Los Angeles alike, though they are 3 hours apart in UTC; the zones are counted."""
    from locsynth.data.prepare import prepare

    csv = tmp_path / "two_cities.csv"
    csv.write_text("uid,datetime,lat,lng\n"
                   "1,2024-01-15T14:00:00Z,40.7580,-73.9855\n"      # 09:00 in New York (UTC-5)
                   "2,2024-01-15T17:00:00Z,34.0522,-118.2437\n"     # 09:00 in Los Angeles (UTC-8)
                   "2,2024-01-15T23:30:00Z,34.0522,-118.2437\n")    # 15:30 in Los Angeles
    ts = prepare(csv, "csv", tmp_path / "auto", grid=(2, 2), bbox=(30, 45, -125, -70), timezone="auto")[""]
    hours = ts.time.start_of(ts.t).hour
    assert sorted(hours.tolist()) == [9, 9, 15]
    assert ts.info["timezones"] == {"America/Los_Angeles": 2, "America/New_York": 1}
    utc = prepare(csv, "csv", tmp_path / "utc", grid=(2, 2), bbox=(30, 45, -125, -70))[""]
    assert sorted(utc.time.start_of(utc.t).hour.tolist()) == [14, 17, 23]
    with pytest.raises(InputError, match="`timezone` auto does not apply to `format` cab-trips"):
        prepare(tmp_path, "cab-trips", tmp_path / "x", timezone="auto")


# -- --time-shift (issue 35): a clock correction right after reading ---------------------------------

def hours_of(ts):
    return ts.time.start_of(ts.t).strftime("%H:%M").tolist()


def test_time_shift_moves_every_point_before_time_zones_and_the_axis(tmp_path):
    from locsynth.data.prepare import prepare

    csv = tmp_path / "p.csv"
    csv.write_text("uid,datetime,lat,lng\n1,2024-01-15T10:00:00Z,40.7580,-73.9855\n"
                   "1,2024-01-15T10:30:00Z,40.7580,-73.9855\n"
                   "2,2024-03-10T06:30:00Z,40.7580,-73.9855\n")   # 01:30 EST, 30 min before New York's clocks go forward
    options = {"grid": (1, 1), "instant": "30min"}
    raw = prepare(csv, "csv", tmp_path / "raw", **options)[""]
    assert hours_of(raw) == ["10:00", "10:30", "06:30"]
    assert raw.info["time_shift"] == {"hours": 0.0, "default": True} and "clock" not in raw.info["frame"]
    moved = prepare(csv, "csv", tmp_path / "moved", time_shift=-3.5, **options)[""]
    assert hours_of(moved) == ["06:30", "07:00", "03:00"]
    assert moved.info["time_shift"] == {"hours": -3.5, "default": False}
    assert moved.info["frame"]["clock"] == "times moved -3.5 h (--time-shift)"
    local = prepare(csv, "csv", tmp_path / "local", time_shift=1, timezone="auto", **options)[""]
    assert hours_of(local) == ["06:00", "06:30", "03:30"]    # 07:30Z is 03:30 EDT: shifted first, then zoned


def write_vldb17(folder, rows):
    folder.mkdir()
    (folder / "Gowalla_poi_coos.txt").write_text("0\t30.2359091167\t-97.7951395833\n1\t30.2691029532\t-97.7493953705\n")
    (folder / "Gowalla_checkins.txt").write_text("".join(f"0\t{poi}\t{unix}\n" for poi, unix in rows))
    return folder


def test_gowalla_takes_its_8_hours_by_default_and_0_reads_the_times_as_stated(tmp_path):
    from locsynth.data.io import read_gowalla
    from locsynth.data.prepare import prepare

    folder = write_vldb17(tmp_path / "g", [(0, "1287503727.0"), (1, "1287411463.0")])   # SNAP: 23:55:27Z, 22:17:43Z
    options = {"grid": (1, 1), "instant": "1min"}
    fixed = prepare(folder, "gowalla", tmp_path / "fixed", **options)[""]
    assert hours_of(fixed) == ["22:17", "23:55"]
    assert fixed.info["time_shift"] == {"hours": 8.0, "default": True}
    assert fixed.info["frame"]["clock"].startswith("times moved +8 h, gowalla's default correction")
    stated = prepare(folder, "gowalla", tmp_path / "stated", time_shift=0, **options)[""]
    assert hours_of(stated) == sorted(read_gowalla(folder)["time"].dt.strftime("%H:%M")) == ["14:17", "15:55"]
    assert stated.info["time_shift"] == {"hours": 0.0, "default": False}
    assert stated.info["frame"]["clock"] == ("times as read (--time-shift 0); gowalla's default correction is "
                                             "+8 h (docs/data.md)")
    again = prepare(folder, "gowalla", tmp_path / "again", like=tmp_path / "stated", time_shift=0)[""]
    assert "clock" in again.info["frame"] and again.info["time_shift"]["hours"] == 0.0
    with pytest.raises(InputError, match=r"^`time_shift` must be a number of hours in \[-24, 24\]"):
        prepare(folder, "gowalla", tmp_path / "bad", time_shift="8h")
    assert not (tmp_path / "bad").exists()


def test_trips_take_the_shift_and_synthetic_traces_refuse_it(tmp_path):
    from locsynth.data.prepare import prepare

    cabs = tmp_path / "cabs"
    cabs.mkdir()
    start = pd.Timestamp("2008-05-27 18:00", tz="America/Los_Angeles").value // 10**9   # a Tuesday
    fixes = [f"{37.70 + 0.003 * i:.4f} -122.4300 1 {start + 30 * i}" for i in range(10)]
    (cabs / "new_abc.txt").write_text("\n".join(reversed(fixes)) + "\n")            # newest first
    plain = prepare(cabs, "cab-trips", tmp_path / "plain")[""]
    moved = prepare(cabs, "cab-trips", tmp_path / "moved", time_shift=-3.5)[""]
    assert plain.info["time_shift"] == {"hours": 0.0, "default": True}
    assert moved.info["time_shift"] == {"hours": -3.5, "default": False}
    assert (plain.time.start_of(plain.t) - moved.time.start_of(moved.t) == pd.Timedelta(hours=3.5)).all()
    assert moved.info["frame"]["clock"] == "times moved -3.5 h (--time-shift)"
    with pytest.raises(InputError, match="`time_shift` does not apply to `format` pf-synthetic"):
        prepare(tmp_path, "pf-synthetic", tmp_path / "syn", time_shift=1)


#: the five boroughs' box (lat min, lat max, lon min, lon max)
NEW_YORK = (40.49, 40.92, -74.27, -73.68)


def test_vldb17_foursquare_new_york_keeps_new_york_hours(data_dir, tmp_path):
    """Issue 35's acceptance line: prepared with the format's correction, the Foursquare US set's
    New York check-ins have the hours of the TSMC NYC set (true local times from each row's own
    UTC offset) within 0.15 total variation; read as stated they are 0.30 off."""
    from locsynth.data.prepare import prepare
    from locsynth.data.timeaxis import hour_profile
    from locsynth.data.traces import TraceSet

    tsmc = pd.concat([pd.read_csv(data_dir / "foursquare-nyc-tsmc2014" / f, usecols=["timezone", "UTC_time"])
                      for f in ("NYC_val.csv", "NYC_test.csv")])
    utc = pd.to_datetime(tsmc["UTC_time"], format="%a %b %d %H:%M:%S %z %Y", utc=True)
    truth = hour_profile(utc + pd.to_timedelta(tsmc["timezone"], unit="min"))

    def new_york_hours(ts):
        lat, lon = ts.space.lat[ts.loc], ts.space.lon[ts.loc]
        inside = (lat >= NEW_YORK[0]) & (lat <= NEW_YORK[1]) & (lon >= NEW_YORK[2]) & (lon <= NEW_YORK[3])
        return ts.time.hour_profile(ts.t[inside])

    source = data_dir / "foursquare-global-us-vldb17"
    res = runner.invoke(app, ["prepare", str(source), "--format", "foursquare-global", "--timezone", "auto",
                              "--pois", "8000", "--out", str(tmp_path / "us")])
    assert res.exit_code == 0, res.output
    assert "clock: times moved +8 h, foursquare-global's default correction" in res.output
    assert "hour of day (each point's local time): |" in res.output
    fixed = TraceSet.load(tmp_path / "us")
    assert fixed.info["time_shift"] == {"hours": 8.0, "default": True}
    assert 0.5 * abs(new_york_hours(fixed) - truth).sum() < 0.15
    stated = prepare(source, "foursquare-global", tmp_path / "stated", timezone="auto", pois=8000, time_shift=0)[""]
    assert 0.5 * abs(new_york_hours(stated) - truth).sum() > 0.25
