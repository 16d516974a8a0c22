"""Reader geolife (PLT trees)."""

from __future__ import annotations

import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import READERS, read_points
from locsynth.data.io.geolife import read_geolife

#: points per user of geolife_long_10_MB, measured (they agree with SOURCE.md)
LONG_10_MB = {"000": 3_634, "001": 19_483, "002": 24_100, "003": 13_601, "004": 4_172, "005": 15_999,
              "006": 12_728, "007": 13_859, "008": 21_757, "009": 13_901, "010": 21_297}
HEADER = "Geolife trajectory\nWGS 84\nAltitude is in Feet\nReserved 3\n0,2,255,My Track,0,0,2,8421376\n0\n"


def plt(*fixes: tuple[str, str, str, str]) -> str:
    return HEADER + "".join(f"{lat},{lon},0,492,39744.12,{day},{clock}\n" for lat, lon, day, clock in fixes)


def test_long_10_mb(dataset):
    root = dataset("geolife/trackintel_subset/geolife_long_10_MB")
    points = read_points("geolife", root)
    assert len(points) == 164_531
    assert points["user"].value_counts().sort_index().to_dict() == LONG_10_MB
    assert str(points["time"].dtype) == "datetime64[ns, UTC]"
    assert points["time"].min() == pd.Timestamp("2007-08-04 03:30:32", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2008-11-13 11:02:26", tz="UTC")
    first = points.iloc[0]
    assert (first["user"], first["lat"], first["lon"]) == ("000", 39.984702, 116.318417)
    assert first["time"] == pd.Timestamp("2008-10-23 02:53:04", tz="UTC")


def test_modes_lf_files_user_folder_and_single_file(dataset):
    root = dataset("geolife/trackintel_subset/geolife_modes")  # LF line ends
    points = read_geolife(root)
    assert len(points) == 4_217
    assert sorted(points["user"].unique()) == ["010", "020", "178"]
    one_user = read_geolife(root / "020")
    assert set(one_user["user"]) == {"020"}
    pd.testing.assert_frame_equal(one_user, points.loc[points["user"] == "020"].reset_index(drop=True))
    one_file = read_geolife(root / "178" / "Trajectory" / "20100312172608.plt")
    assert len(one_file) == (points["user"] == "178").sum()
    assert set(one_file["user"]) == {"178"}


def test_crlf_and_lf_read_alike(write, tmp_path):
    text = plt(("39.98", "116.31", "2008-10-23", "02:53:04"), ("39.99", "116.32", "2008-10-23", "02:53:10"))
    write("crlf/001/Trajectory/a.plt", text, newline="\r\n")
    write("lf/001/Trajectory/a.plt", text)
    crlf, lf = read_geolife(tmp_path / "crlf"), read_geolife(tmp_path / "lf")
    pd.testing.assert_frame_equal(crlf, lf)
    assert crlf["time"].tolist() == [pd.Timestamp("2008-10-23 02:53:04", tz="UTC"),
                                     pd.Timestamp("2008-10-23 02:53:10", tz="UTC")]


def test_bad_latitude_names_file_and_row(write, tmp_path):
    ok = ("39.98", "116.31", "2008-10-23", "02:53:04")
    write("Data/000/Trajectory/a.plt", plt(ok, ok))
    write("Data/001/Trajectory/b.plt", plt(ok, ok, ("91.5", "116.31", "2008-10-23", "02:53:04")))
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*001/Trajectory/b\.plt row 3"):
        read_geolife(tmp_path / "Data")


def test_bad_values(write, tmp_path):
    ok = ("39.98", "116.31", "2008-10-23", "02:53:04")
    write("u/000/Trajectory/a.plt", plt(ok))
    bad = write("u/000/Trajectory/b.plt", plt(ok, ("39.98", "116.31", "2008-10-32", "02:53:04")))
    with pytest.raises(InputError, match=r"'2008-10-32', '02:53:04' in .*b\.plt row 2 are not YYYY-MM-DD"):
        read_geolife(tmp_path / "u")
    bad.write_text(plt(ok, ("39.98", "", "2008-10-23", "02:53:04")))
    with pytest.raises(InputError, match=r"longitude nan is not a finite number in .*b\.plt row 2"):
        read_geolife(tmp_path / "u")
    bad.write_text(plt(ok, ("39.98", "east", "2008-10-23", "02:53:04")))
    with pytest.raises(InputError, match=r"lon 'east' is not a number in .*b\.plt row 2"):
        read_geolife(tmp_path / "u")
    bad.write_text(HEADER)
    with pytest.raises(InputError, match=r"b\.plt has no data rows"):
        read_geolife(tmp_path / "u")
    bad.write_text("")
    with pytest.raises(InputError, match=r"b\.plt is empty"):
        read_geolife(bad)


def test_folder_without_trajectories(tmp_path):
    with pytest.raises(InputError, match=r"has no GeoLife trajectories"):
        read_geolife(tmp_path)


def test_registered():
    assert READERS["geolife"] is read_geolife
