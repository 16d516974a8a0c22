"""`locsynth prepare` on every dataset in ../shared/data: the counts of the SOURCE.md files survive.

Everything is kept (a grid over the data's own box, all events of an instant) so that the
TraceSet's counts are the source's counts.
"""

import json

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
    assert res.exit_code == 2 and "--pois-file does not apply to --format geolife" in res.output


def test_timezone_auto_puts_every_point_on_its_local_clock(tmp_path):
    """--timezone auto (#25): a check-in at 09:00 local time lands in the 09:00 instant in New York
    and in Los Angeles alike, though they are 3 hours apart in UTC; the zones are counted."""
    from locsynth.prepare import prepare

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
    with pytest.raises(InputError, match="--timezone auto does not apply to --format cab-trips"):
        prepare(tmp_path, "cab-trips", tmp_path / "x", timezone="auto")
