"""Reader cabs (San Francisco Cabspotting)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import READERS, read_points
from locsynth.data.io.cabs import read_cabs


@pytest.fixture(scope="module")
def cabs(dataset):
    return dataset("sf-cabspotting/cabs")


def test_all_fixes_one_user_per_cab(cabs):
    points = read_points("cabs", cabs, trips=False)
    assert len(points) == 629_728
    assert points["user"].nunique() == 30
    sizes = points["user"].value_counts()
    assert (sizes.min(), sizes.max()) == (5_454, 27_525)
    assert points["time"].min() == pd.Timestamp("2008-05-17 10:00:05", tz="UTC")
    assert points["time"].max() == pd.Timestamp("2008-06-10 09:07:16", tz="UTC")
    assert points.groupby("user", sort=False)["time"].is_monotonic_increasing.all()


def test_trips(cabs):
    points = read_cabs(cabs)
    assert len(points) == 280_579  # occupied fixes
    # SOURCE.md counts 25,706 occupancy 0->1 transitions; 10 of the 30 cabs start their file
    # occupied, and that first run is a trip too: 25,706 + 10 = 25,716 trips (measured).
    assert points["user"].nunique() == 25_716
    assert points["user"].str[:-6].nunique() == 30
    assert points["user"].iloc[0] == "abboip-00000"
    assert points.groupby("user", sort=False)["time"].is_monotonic_increasing.all()


def test_newest_first_file_is_sorted_and_split_into_trips(write, tmp_path):
    # newest first; in time order the occupancy is 1 1 0 1 0 1 (trip 0 starts at the first fix)
    t0 = 1_211_000_000                          # May 2008
    fixes = [(37.1, 1, 100), (37.2, 1, 110), (37.3, 0, 120), (37.4, 1, 130), (37.5, 0, 140), (37.6, 1, 150)]
    write("c/new_abc.txt", "".join(f"{lat} -122.4 {occ} {t0 + t}\n" for lat, occ, t in reversed(fixes)))
    write("c/new_xyz.txt", f"37.7 -122.4 1 {t0 + 105}\n")
    write("c/_cabs.txt", "not a cab\n")
    points = read_cabs(tmp_path / "c")
    assert points["user"].tolist() == ["abc-00000", "abc-00000", "abc-00001", "abc-00002", "xyz-00000"]
    assert points["lat"].tolist() == [37.1, 37.2, 37.4, 37.6, 37.7]
    assert (points["time"].astype("int64") // 10**9 - t0).tolist() == [100, 110, 130, 150, 105]
    whole = read_cabs(tmp_path / "c" / "new_abc.txt", trips=False)
    assert whole["user"].unique().tolist() == ["abc"]
    assert np.array_equal(whole["lat"], [f[0] for f in fixes])


def test_bad_inputs(write, tmp_path):
    ok = "37.75 -122.39 0 1211033530\n"
    write("c/new_a.txt", ok)
    bad = write("c/new_b.txt", ok + "91.5 -122.39 0 1211033531\n")
    with pytest.raises(InputError, match=r"latitude 91.5 out of range .*new_b\.txt row 2"):
        read_cabs(tmp_path / "c")
    bad.write_text(ok + ok + "37.75 -122.39 2 1211033531\n")
    with pytest.raises(InputError, match=r"occupancy 2 in .*new_b\.txt row 3 is not 0 or 1"):
        read_cabs(tmp_path / "c")
    bad.write_text(ok + "37.75 -122.39 0\n")
    with pytest.raises(InputError, match=r"missing unixtime in .*new_b\.txt row 2"):
        read_cabs(tmp_path / "c")
    bad.write_text(ok + "37.75 -122.39 0 1211033531000\n")       # milliseconds: year 40,346 as seconds
    with pytest.raises(InputError, match=r"time 1211033531000 in .*new_b\.txt row 2 read as unix seconds is year "
                                         r"40,346, outside 1990-2100; most times look right: this one is wrong"):
        read_cabs(tmp_path / "c")
    write("c/new_a.txt", "37.75 -122.39 0 1211033530000\n")
    bad.write_text("37.75 -122.39 0 1211033531000\n")
    with pytest.raises(InputError, match=r"time 1211033530000 in .*new_a\.txt row 1 read as unix seconds is year "
                                         r"40,346, outside 1990-2100; they look like milliseconds: the cab files' "
                                         r"times are unix seconds"):
        read_cabs(tmp_path / "c")
    write("c/new_a.txt", ok)
    bad.write_text("")
    with pytest.raises(InputError, match=r"new_b\.txt is empty"):
        read_cabs(tmp_path / "c")
    with pytest.raises(InputError, match=r"has no cab files matching 'new_\*\.txt'"):
        read_cabs(tmp_path)


def test_registered():
    assert READERS["cabs"] is read_cabs
