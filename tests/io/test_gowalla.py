"""Reader gowalla and the Gowalla friendship graph."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import READERS, read_points
from locsynth.data.io.gowalla import read_friends, read_gowalla


def test_gowalla_3_and_2(dataset):
    root = dataset("gowalla-vldb17")
    points = read_points("gowalla", root / "Gowalla_3")
    assert len(points) == 157_251
    assert points["user"].nunique() == 1_000
    assert points["venue"].nunique() == 24_209
    assert points["time"].min() == pd.Timestamp("2009-02-03 21:17:38", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2010-10-22 03:24:05", tz="UTC")
    assert points["user"].value_counts().agg(["min", "median", "max"]).tolist() == [15, 78, 1_624]
    small = read_gowalla(root / "Gowalla_2" / "Gowalla_checkins.txt",
                         pois_file=root / "Gowalla_2" / "Gowalla_poi_coos.txt")
    assert (len(small), small["user"].nunique()) == (19_855, 100)


def test_folder_without_checkins(dataset):
    with pytest.raises(InputError, match=r"Gowalla_1 has no check-ins file\(s\) matching '\*checkins\*\.txt'"):
        read_gowalla(dataset("gowalla-vldb17") / "Gowalla_1")


def test_friends_of_slices(dataset):
    edges = read_friends(dataset("gowalla-vldb17") / "Gowalla_1")
    assert list(edges.columns) == ["user_a", "user_b"]
    assert edges.dtypes.tolist() == [np.dtype("int64")] * 2
    assert len(edges) == 86_985  # the file has no self-loops and no repeated pairs
    assert (edges["user_a"] < edges["user_b"]).all()
    assert ((edges["user_a"] < 1_000) & (edges["user_b"] < 1_000)).sum() == 7_711
    assert ((edges["user_a"] < 100) & (edges["user_b"] < 100)).sum() == 329


def test_friends_normalised(write):
    edges = read_friends(write("Gowalla_social_relations.txt", "5\t2\n2\t5\n3\t3\n1\t9\n9\t1\n"))
    assert edges.to_numpy().tolist() == [[1, 9], [2, 5]]
    with pytest.raises(InputError, match=r"b 'x' is not an integer in .*f\.txt row 2"):
        read_friends(write("f.txt", "1\t2\n1\tx\n"))


def test_bad_inputs(write, tmp_path):
    pois = write("Gowalla_poi_coos.txt", "0\t30.2\t-97.7\n1\t30.3\tnan\n")
    checkins = write("Gowalla_checkins.txt", "0\t0\t1287503727.0\n")
    with pytest.raises(InputError, match=r"longitude nan is not a finite number in .*poi_coos\.txt row 2"):
        read_gowalla(tmp_path)
    pois.write_text("0\t30.2\t-97.7\n")
    checkins.write_text("0\t0\t1287503727.0\n0\t3\t1287503727.0\n")
    with pytest.raises(InputError, match=r"POI '3' in .*Gowalla_checkins\.txt row 2 has no coordinates"):
        read_gowalla(checkins)
    checkins.write_text("")
    with pytest.raises(InputError, match=r"Gowalla_checkins\.txt is empty"):
        read_gowalla(tmp_path)
    pois.write_text("0\t30.2\t-97.7\n0\t31.0\t-97.7\n")
    with pytest.raises(InputError, match=r"POI '0' in .*poi_coos\.txt row 2 already has coordinates"):
        read_gowalla(tmp_path)


def test_registered():
    assert READERS["gowalla"] is read_gowalla


#: user 0's first check-ins in SNAP's loc-gowalla_totalCheckins.txt (UTC ISO strings, newest first), as
#: quoted in many public readmes: time, latitude, longitude
SNAP_USER_0 = [("2010-10-19T23:55:27Z", 30.2359091167, -97.7951395833),
               ("2010-10-18T22:17:43Z", 30.2691029532, -97.7493953705),
               ("2010-10-17T23:42:03Z", 30.2557309927, -97.7633857727),
               ("2010-10-17T19:26:05Z", 30.2634181234, -97.7575966669),
               ("2010-10-16T18:50:42Z", 30.2742918584, -97.7405226231),
               ("2010-10-12T23:58:03Z", 30.261599404, -97.7585805953)]


def test_the_slice_is_8_hours_early_against_snap(dataset):
    """Liu et al.'s user 0 is SNAP's user 0: the same places in the same order, each check-in
    exactly 8 h early (io.TIME_SHIFTS, docs/data.md)."""
    points = read_gowalla(dataset("gowalla-vldb17") / "Gowalla_3")
    first = points.loc[points["user"] == 0].head(len(SNAP_USER_0))
    snap = pd.DataFrame(SNAP_USER_0, columns=["time", "lat", "lon"])
    assert first["lat"].tolist() == snap["lat"].tolist() and first["lon"].tolist() == snap["lon"].tolist()
    late = pd.to_datetime(snap["time"], utc=True).to_numpy() - first["time"].to_numpy()
    assert (late == pd.Timedelta(hours=8)).all()
