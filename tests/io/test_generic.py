"""Readers csv and parquet."""

from __future__ import annotations

import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import READERS, read_points
from locsynth.data.io.generic import read_csv_points, read_parquet_points

SKMOB = "lat,lng,datetime,uid\n"


def test_skmob_geolife_sample(dataset):
    path = dataset("geolife") / "skmob_geolife_sample.txt.gz"
    points = read_points("csv", path, timezone="UTC")
    assert len(points) == 217_653
    assert points["user"].value_counts().to_dict() == {"005": 109_046, "001": 108_607}
    assert points["time"].min() == pd.Timestamp("2008-10-23 05:53:05", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2009-03-19 05:46:37", tz="UTC")
    with pytest.raises(InputError, match=r"naive.*`timezone`"):
        read_points("csv", path)


def test_skmob_sample_cabs_unix_seconds(dataset):
    path = dataset("sf-cabspotting") / "skmob_sample_cabs.csv"
    points = read_csv_points(path, user_col="driver", time_col="timestamp", time_unit="s")  # lon found as 'lon'
    assert len(points) == 9_999
    assert points["user"].unique().tolist() == ["egteir"]
    assert points["time"].min() == pd.Timestamp("2008-05-24 11:31:11", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2008-06-04 08:25:54", tz="UTC")
    with pytest.raises(InputError, match=r"holds numbers .* time_unit='s' or 'ms'"):
        read_csv_points(path, user_col="driver", time_col="timestamp")


def test_named_columns_venue_category_and_ms(write):
    path = write("p.csv", "who,t,y,x,place,kind\n007,1212567954000,37.7,-122.4,0042,bar\n")
    points = read_csv_points(path, user_col="who", time_col="t", lat_col="y", lon_col="x",
                             venue_col="place", category_col="kind", time_unit="ms")
    row = points.iloc[0]
    assert (row["user"], row["venue"], row["category"]) == ("007", "0042", "bar")
    assert row["time"] == pd.Timestamp(1212567954, unit="s", tz="UTC")


def test_timezone_and_offsets(write):
    path = write("p.csv", SKMOB + "39.9,116.3,2008-10-23 08:00:00,1\n")
    points = read_csv_points(path, timezone="Asia/Shanghai")
    assert points["time"].iloc[0] == pd.Timestamp("2008-10-23 00:00", tz="UTC")
    aware = read_csv_points(write("q.csv", SKMOB + "39.9,116.3,2008-10-23T08:00:00+08:00,1\n"))
    assert aware["time"].iloc[0] == pd.Timestamp("2008-10-23 00:00", tz="UTC")


def test_bad_csv_inputs(write):
    row = "39.9,116.3,2008-10-23 08:00:00,1\n"
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*a\.csv row 2"):
        read_csv_points(write("a.csv", SKMOB + row + row.replace("39.9", "91.5")), timezone="UTC")
    with pytest.raises(InputError, match=r"longitude nan is not a finite number in .*b\.csv row 1"):
        read_csv_points(write("b.csv", SKMOB + row.replace("116.3", "")), timezone="UTC")
    with pytest.raises(InputError, match=r"lng 'east' is not a number in .*c\.csv row 1"):
        read_csv_points(write("c.csv", SKMOB + row.replace("116.3", "east")), timezone="UTC")
    with pytest.raises(InputError, match=r"naive timestamp .* in .*d\.csv row 1 has no timezone; give `timezone`"):
        read_csv_points(write("d.csv", SKMOB + row))
    with pytest.raises(InputError, match=r"e\.csv is empty"):
        read_csv_points(write("e.csv", ""))
    with pytest.raises(InputError, match=r"f\.csv has no data rows"):
        read_csv_points(write("f.csv", SKMOB))
    with pytest.raises(InputError, match=r"missing column\(s\) uid.*user_col"):
        read_csv_points(write("g.csv", "lat,lng,datetime,user\n" + row))
    with pytest.raises(InputError, match=r"timestamp 'soon' is not a valid date and time in .*h\.csv row 2"):
        read_csv_points(write("h.csv", SKMOB + row + row.replace("2008-10-23 08:00:00", "soon")),
                        timezone="UTC")
    with pytest.raises(InputError, match=r"time_unit 'h'"):
        read_csv_points(write("i.csv", SKMOB + row), time_unit="h")
    with pytest.raises(InputError, match=r"is a folder; this format reads one file"):
        read_csv_points(write("j.csv", row).parent)


def test_unix_times_in_the_wrong_unit_are_refused_naming_the_unit(write):
    """Milliseconds read as seconds, and seconds as milliseconds, give dates outside 1990-2100: one
    error naming the unit the times look like (issue 53)."""
    def table(name, ticks):
        return write(name, SKMOB + "".join(f"39.9,116.3,{(1224748800 + 60 * k) * ticks},1\n" for k in range(5)))

    seconds, millis = table("s.csv", 1), table("ms.csv", 1000)
    assert read_csv_points(seconds, time_unit="s")["time"].equals(read_csv_points(millis, time_unit="ms")["time"])
    with pytest.raises(InputError, match=r"time 1224748800000 in .*ms\.csv row 1 read as unix seconds is year "
                                         r"40,781, outside 1990-2100; they look like milliseconds: give `time_unit` 'ms'"):
        read_csv_points(millis, time_unit="s")
    with pytest.raises(InputError, match=r"time 1224748800 in .*s\.csv row 1 read as unix milliseconds is 1970-01-15 "
                                         r"04:12, outside 1990-2100; they look like seconds: give `time_unit` 's'"):
        read_csv_points(seconds, time_unit="ms")


def test_two_columns_of_a_coordinate_and_swapped_ones(write):
    """Which of lat and latitude is right is not guessed; New York with latitude and longitude
    swapped lies in Antarctica (clock Antarctica/Syowa) and is refused unless the columns are named."""
    both = write("both.csv", "uid,datetime,lat,latitude,lng\n1,2012-04-03T12:00:00Z,40.7,40.8,-74.0\n")
    with pytest.raises(InputError, match=r"the file has 2 columns for latitude, 'lat' and 'latitude': name the one "
                                         r"to use with `lat_col`"):
        read_csv_points(both)
    assert read_csv_points(both, lat_col="latitude")["lat"].tolist() == [40.8]
    swapped = write("swapped.csv", "uid,datetime,lat,lng\n1,2012-04-03T12:00:00Z,-74.0,40.7\n")
    with pytest.raises(InputError, match=r"Antarctica .*swapped they lie in America/New_York: are columns 'lat' and "
                                         r"'lng' of .*swapped\.csv swapped\? If not, name them with `lat_col` and "
                                         r"`lon_col`"):
        read_csv_points(swapped)
    assert read_csv_points(swapped, lat_col="lat", lon_col="lng")["lat"].tolist() == [-74.0]


def test_parquet(tmp_path):
    frame = pd.DataFrame({"uid": ["a", "b"], "lat": [39.9, 40.0], "lng": [116.3, 116.4],
                          "datetime": pd.to_datetime(["2008-10-23 08:00", "2008-10-23 09:00"]),
                          "secs": [1224748800, 1224752400], "venue": [5, 6]})
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    with pytest.raises(InputError, match=r"naive timestamp .*p\.parquet row 1"):
        read_parquet_points(path)
    points = read_points("parquet", path, timezone="UTC", venue_col="venue")
    assert points["time"].tolist() == [pd.Timestamp("2008-10-23 08:00", tz="UTC"),
                                       pd.Timestamp("2008-10-23 09:00", tz="UTC")]
    assert points["venue"].tolist() == ["5", "6"]
    unix = read_parquet_points(path, time_col="secs", time_unit="s")
    pd.testing.assert_series_equal(unix["time"], points["time"])
    with pytest.raises(InputError, match=r"holds numbers"):
        read_parquet_points(path, time_col="secs")
    frame.assign(lat=[39.9, 91.5]).to_parquet(path)
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*p\.parquet row 2"):
        read_parquet_points(path, timezone="UTC")
    with pytest.raises(InputError, match=r"missing column\(s\) who"):
        read_parquet_points(path, user_col="who")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InputError, match=r"not a readable Parquet file"):
        read_parquet_points(tmp_path / "bad.parquet")


def test_registry():
    assert READERS["csv"] is read_csv_points
    assert READERS["parquet"] is read_parquet_points
    assert set(READERS) == {"pf", "foursquare", "foursquare-global", "foursquare-mat", "gowalla", "geolife",
                            "cabs", "csv", "parquet"}
    from locsynth.data.prepare import formats

    assert set(formats()) == set(READERS) | {"cab-trips", "geolife-trips", "pf-synthetic"}
