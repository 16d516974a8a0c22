"""A format's clock correction (io.TIME_SHIFTS) and the shift of a points table (points.shift_times)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from locsynth.core.errors import InputError
from locsynth.data.io import TIME_SHIFTS, describe_time_shift, time_shift
from locsynth.data.points import shift_times


def points():
    return pd.DataFrame({"user": [1, 2], "lat": [40.7, 30.2], "lon": [-74.0, -97.7], "venue": ["a", "b"],
                         "time": pd.to_datetime(["2012-04-03T10:00:08Z", "2010-10-19T15:55:27Z"], utc=True)})


def test_the_vldb17_formats_are_8_hours_early_and_the_others_as_read():
    assert TIME_SHIFTS == {"foursquare-global": 8.0, "gowalla": 8.0}
    assert time_shift("gowalla") == {"hours": 8.0, "default": True}
    assert time_shift("foursquare-global") == {"hours": 8.0, "default": True}
    assert time_shift("foursquare") == {"hours": 0.0, "default": True}
    assert time_shift("gowalla", 0) == {"hours": 0.0, "default": False}
    assert time_shift("csv", "-3.5") == {"hours": -3.5, "default": False}


@pytest.mark.parametrize("hours", [8, -3.5, 0.25, 24, -24])
def test_the_shift_moves_every_time_by_exactly_hours(hours):
    before = points()
    after = shift_times(before, hours)
    assert ((after["time"] - before["time"]) == pd.Timedelta(hours=hours)).all()
    assert after.drop(columns="time").equals(before.drop(columns="time"))
    assert before["time"].iloc[0] == pd.Timestamp("2012-04-03T10:00:08Z")        # the input is left alone


def test_no_shift_is_the_table_as_read():
    before = points()
    assert shift_times(before, 0) is before


@pytest.mark.parametrize("hours", ["abc", "", None, math.nan, math.inf, 25, -24.5, "480", True])
def test_a_bad_shift_is_one_input_error(hours):
    with pytest.raises(InputError, match=r"^`time_shift` must be a number of hours in \[-24, 24\] "
                                         r"\(e\.g\. 8 or -3\.5\), got "):
        shift_times(points(), hours)
    if hours is not None:
        with pytest.raises(InputError, match="`time_shift` must be"):
            time_shift("gowalla", hours)


def test_the_clock_line_says_what_was_done():
    assert describe_time_shift("csv", time_shift("csv")) is None
    assert describe_time_shift("gowalla", time_shift("gowalla")).startswith(
        "times moved +8 h, gowalla's default correction: its files are 8 h early")
    assert describe_time_shift("gowalla", time_shift("gowalla", 0)) == \
        "times as read (--time-shift 0); gowalla's default correction is +8 h (docs/data.md)"
    assert describe_time_shift("csv", time_shift("csv", -3.5)) == "times moved -3.5 h (--time-shift)"
    assert describe_time_shift("gowalla", time_shift("gowalla", 7)) == \
        "times moved +7 h (--time-shift); gowalla's default correction is +8 h"
