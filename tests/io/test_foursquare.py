"""Readers foursquare, foursquare-global and foursquare-mat."""

from __future__ import annotations

import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import READERS, read_points
from locsynth.data.io.foursquare import read_foursquare, read_foursquare_global, read_foursquare_mat

IPCM_HEADER = ("user_id,POI_id,POI_catid,POI_catname,latitude,longitude,timezone,UTC_time,"
               "trajectory_id,time_period\n")
IPCM_ROW = "1,4a{i},4bf5,Bar,{lat},{lon},-240,Sat Jul 07 0{i}:12:49 +0000 2012,1_7,0.1\n"


def ipcm(*rows: tuple[str, str]) -> str:
    return IPCM_HEADER + "".join(IPCM_ROW.format(i=i, lat=lat, lon=lon) for i, (lat, lon) in enumerate(rows))


# --- TSMC 2014 / iPCM ---------------------------------------------------------------------------

def test_nyc_folder_reads_val_and_test(dataset):
    folder = dataset("foursquare-nyc-tsmc2014")
    points = read_points("foursquare", folder)
    assert len(points) == 21_406  # 10,462 val + 10,944 test; poi_info.csv skipped
    assert points["user"].nunique() == 962
    assert points["venue"].nunique() == 4_330
    assert str(points["time"].dtype) == "datetime64[ns, UTC]"
    assert points["time"].min() == pd.Timestamp("2012-04-18 23:39:58", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2013-02-16 02:34:31", tz="UTC")
    first = points.iloc[0]  # first row of NYC_test.csv (files are read in name order)
    assert (first["user"], first["venue"], first["category"]) == (1, "3fd66200f964a520c7f11ee3", "Pizza Place")
    assert len(read_foursquare(folder / "NYC_val.csv")) == 10_462


def test_raw_tsmc_txt_latin1_and_tsmc_csv_header(write, tmp_path):
    row = "470\t49bbd6c0f964a520f4531fe3\t4bf58dd8d48988d127951735\tCafé\t40.719810\t-74.002581\t-240\t" \
          "Tue Apr 03 18:00:09 +0000 2012\n"
    write("raw/dataset_TSMC2014_NYC.txt", row * 2, newline="\r\n", encoding="latin-1")
    write("raw/readme.txt", "not data\n")
    points = read_foursquare(tmp_path / "raw")
    assert len(points) == 2
    assert points["category"].iloc[0] == "Café"
    assert points["time"].iloc[0] == pd.Timestamp("2012-04-03 18:00:09", tz="UTC")
    header = "userId,venueId,venueCategoryId,venueCategory,latitude,longitude,timezoneOffset,utcTimestamp\n"
    csv = write("tsmc.csv", header + row.replace("\t", ","))
    assert read_foursquare(csv)["user"].tolist() == [470]


def test_latitude_out_of_range_names_file_and_row(write):
    path = write("checkins.csv", ipcm(("40.7", "-73.9"), ("91.5", "-73.9")))
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*checkins\.csv row 2"):
        read_foursquare(path)


def test_bad_row_in_folder_names_that_file(write, tmp_path):
    write("f/a.csv", ipcm(("40.7", "-73.9")))
    write("f/b.csv", ipcm(("40.7", "-73.9"), ("40.7", "-73.9"), ("40.7", "")))
    with pytest.raises(InputError, match=r"longitude nan is not a finite number in .*b\.csv row 3"):
        read_foursquare(tmp_path / "f")


def test_bad_utc_time(write):
    path = write("checkins.csv", ipcm(("40.7", "-73.9")).replace("Sat Jul 07", "2012-07-07"))
    with pytest.raises(InputError, match=r"UTC time '2012-07-07 .*checkins\.csv row 1"):
        read_foursquare(path)


def test_empty_file_missing_columns_and_empty_folder(write, tmp_path):
    with pytest.raises(InputError, match=r"empty\.csv is empty"):
        read_foursquare(write("empty.csv", ""))
    with pytest.raises(InputError, match=r"header\.csv has no data rows"):
        read_foursquare(write("header.csv", IPCM_HEADER))
    with pytest.raises(InputError, match=r"missing column\(s\) latitude"):
        read_foursquare(write("nolat.csv", ipcm(("40.7", "-73.9")).replace("latitude", "lat")))
    write("folder/poi_info.csv", "poi_id,poi_catid,latitude,longitude\n1,2,40.7,-73.9\n")
    with pytest.raises(InputError, match=r"has no Foursquare check-in files"):
        read_foursquare(tmp_path / "folder")


# --- global-scale (Liu et al.) ------------------------------------------------------------------

def test_global_folder_and_file_with_pois_file(dataset):
    folder = dataset("foursquare-global-us-vldb17")
    points = read_points("foursquare-global", folder)
    assert len(points) == 185_984
    assert points["user"].nunique() == 4_969
    assert points["venue"].nunique() == 8_000
    assert points["time"].min() == pd.Timestamp("2012-04-03 10:00:08", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2013-09-16 15:23:08", tz="UTC")
    same = read_foursquare_global(folder / "Foursquare_checkins.txt",
                                  pois_file=folder / "Foursquare_poi_coos.txt")
    pd.testing.assert_frame_equal(points, same)


def test_global_checkin_without_coordinates(write):
    checkins = write("g/Foursquare_checkins.txt", "0\t0\t1333447208.0\n1\t7\t1333447209.0\n")
    write("g/Foursquare_poi_coos.txt", "0\t40.7\t-73.9\n")
    with pytest.raises(InputError, match=r"POI '7' in .*Foursquare_checkins\.txt row 2 has no coordinates"):
        read_foursquare_global(checkins)


def test_global_bad_values(write, tmp_path):
    write("g/x_poi_coos.txt", "0\t40.7\t-73.9\n1\t91.5\t-73.9\n")
    write("g/x_checkins.txt", "0\t0\t1333447208.0\n")
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*x_poi_coos\.txt row 2"):
        read_foursquare_global(tmp_path / "g")
    pois = write("ok_poi_coos.txt", "0\t40.7\t-73.9\n")
    bad_user = write("u.txt", "0\t0\t1333447208.0\nabc\t0\t1333447208.0\n")
    with pytest.raises(InputError, match=r"user 'abc' is not an integer in .*u\.txt row 2"):
        read_foursquare_global(bad_user, pois_file=pois)
    no_time = write("t.txt", "0\t0\t1333447208.0\n0\t0\n")
    with pytest.raises(InputError, match=r"missing unix time in .*t\.txt row 2"):
        read_foursquare_global(no_time, pois_file=pois)
    with pytest.raises(InputError, match=r"e\.txt is empty"):
        read_foursquare_global(write("e.txt", ""), pois_file=pois)


# --- multiple-aspect trajectories ---------------------------------------------------------------

def test_mat_nominal_weeks(dataset):
    path = dataset("foursquare-nyc-mat") / "foursquare_nyc.csv"
    points = read_points("foursquare-mat", path, timezone=None)
    raw = pd.read_csv(path)
    assert len(points) == 44_809
    assert points["user"].nunique() == 193
    assert points["venue"].nunique() == 11_081
    # weekday and hour are kept; one nominal week per trajectory
    assert (points["time"].dt.day_name().to_numpy() == raw["day"].to_numpy()).all()
    assert (points["time"].dt.hour.to_numpy() == raw["hour"].to_numpy()).all()
    weeks = (points["time"] - pd.Timestamp("2012-01-02", tz="UTC")).dt.days // 7
    assert weeks.groupby(raw["tid"]).nunique().max() == 1
    assert pd.DataFrame({"u": points["user"], "w": weeks}).drop_duplicates().shape[0] == 2_052


MAT_HEADER = "tid,label,lat,lon,day,hour,poi,category,price,rating,weather\n"


def test_mat_week_is_rank_of_tid_and_timezone(write):
    path = write("mat.csv", MAT_HEADER
                 + "9,u1,40.7,-73.9,Sunday,23,5,Food,1,8.0,Clear\n"
                 + "3,u1,40.7,-73.9,Monday,0,6,Food,1,8.0,Clear\n"
                 + "4,u2,40.7,-73.9,Tuesday,7,6,Food,1,8.0,Clear\n")
    points = read_foursquare_mat(path)
    assert points["time"].tolist() == [pd.Timestamp("2012-01-15 23:00", tz="UTC"),
                                       pd.Timestamp("2012-01-02 00:00", tz="UTC"),
                                       pd.Timestamp("2012-01-03 07:00", tz="UTC")]
    local = read_foursquare_mat(path, timezone="America/New_York")
    assert local["time"].iloc[1] == pd.Timestamp("2012-01-02 05:00", tz="UTC")


def test_mat_bad_day_hour_and_columns(write):
    row = "1,u1,40.7,-73.9,{day},{hour},5,Food,1,8.0,Clear\n"
    with pytest.raises(InputError, match=r"day 'Mon' in .*a\.csv row 2 is not a weekday name"):
        read_foursquare_mat(write("a.csv", MAT_HEADER + row.format(day="Monday", hour=1)
                                  + row.format(day="Mon", hour=1)))
    with pytest.raises(InputError, match=r"hour 24 in .*b\.csv row 1 is not in 0-23"):
        read_foursquare_mat(write("b.csv", MAT_HEADER + row.format(day="Monday", hour=24)))
    with pytest.raises(InputError, match=r"missing column\(s\) category"):
        read_foursquare_mat(write("c.csv", "tid,label,lat,lon,day,hour,poi\n1,u1,40.7,-73.9,Monday,1,5\n"))


def test_registered():
    assert READERS["foursquare"] is read_foursquare
    assert READERS["foursquare-global"] is read_foursquare_global
    assert READERS["foursquare-mat"] is read_foursquare_mat


def test_global_set_is_8_hours_early_against_tsmc_nyc(dataset):
    """The TSMC NYC check-ins (true UTC) come again in the VLDB'17 file at the same second and place
    8 h early, and at no other whole-hour offset (io.TIME_SHIFTS, docs/data.md)."""
    tsmc = read_foursquare(dataset("foursquare-nyc-tsmc2014"))
    vldb = read_foursquare_global(dataset("foursquare-global-us-vldb17"))
    vldb = vldb.assign(time=vldb["time"].dt.round("s"))

    def same_second_and_place(hours):
        pairs = tsmc.merge(vldb.assign(time=vldb["time"] + pd.Timedelta(hours=hours)), on="time")
        near = ((pairs["lat_x"] - pairs["lat_y"]).abs() < 0.002) & ((pairs["lon_x"] - pairs["lon_y"]).abs() < 0.002)
        return int(near.sum())

    assert same_second_and_place(8) == 3_186
    assert max(same_second_and_place(h) for h in range(-12, 13) if h != 8) <= 1
    first = vldb.iloc[0]    # the global set's first US check-in: Tue Apr 03 18:00:08 +0000 2012 at 40.748939,-73.99228
    assert (first["lat"], first["lon"]) == (40.748939, -73.99228)
    assert first["time"] + pd.Timedelta(hours=8) == pd.Timestamp("2012-04-03 18:00:08", tz="UTC")
