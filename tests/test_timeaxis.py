from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest

from locsynth import InputError, TimeAxis


def pf_axis():
    return TimeAxis.build(date(2013, 7, 1), "Asia/Tokyo", "20min", "20min", ("09:00", "19:00"))


def test_pf_axis_rounds_down_in_local_time():
    axis = pf_axis()
    assert axis.instants_per_day == 30 and axis.n_slots == 30
    times = pd.to_datetime(["2013-07-01 09:00:53+09:00", "2013-07-01 09:19:59+09:00", "2013-07-01 09:20:00+09:00",
                            "2013-07-01 18:59:59+09:00", "2013-07-01 19:00:00+09:00", "2013-07-01 08:59:00+09:00",
                            "2013-07-02 09:00:00+09:00", "2013-06-30 12:00:00+09:00"], utc=True)
    assert axis.instants(times).tolist() == [0, 0, 1, 29, -1, -1, 30, -1]


def test_two_hour_slots_cycle_over_days():
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h", "2h")
    assert axis.instants_per_day == 24 and axis.n_slots == 12
    assert axis.slot(np.array([0, 1, 2, 23, 24, 25, 47])).tolist() == [0, 0, 1, 11, 0, 0, 11]


def test_start_of_inverts_instants():
    axis = pf_axis()
    t = np.array([0, 1, 29, 30, 31, 59, 3000])
    assert (axis.instants(axis.start_of(t)) == t).all()
    assert axis.origin.isoformat() == "2013-07-01T00:00:00+00:00"   # 9:00 in Tokyo


def test_consecutive_does_not_cross_the_window_gap():
    assert pf_axis().consecutive(np.array([0, 29, 28]), np.array([1, 30, 30])).tolist() == [True, False, False]
    full = TimeAxis.build(date(2024, 1, 1), "UTC", "1h")
    assert full.consecutive(np.array([23]), np.array([24])).tolist() == [True]   # 23:00 -> 00:00 next day


def test_meta_round_trip():
    axis = pf_axis()
    again = TimeAxis.from_meta(axis.meta())
    assert again.meta() == axis.meta() and (again.slot_of == axis.slot_of).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"instant": "7min"}, "does not divide"),
    ({"instant": "1h", "slot": "90min"}, "not a multiple"),
    ({"instant": "soon"}, "not a duration"),
    ({"instant": "1h", "window": ("18:00", "08:00")}, "empty"),
    ({"instant": "1h", "window": ("25:00", "26:00")}, "time of day"),
])
def test_bad_axis_arguments(kwargs, match):
    with pytest.raises(InputError, match=match):
        TimeAxis.build(date(2024, 1, 1), "UTC", **kwargs)


def test_unknown_timezone():
    with pytest.raises(InputError, match="unknown timezone"):
        TimeAxis.build(date(2024, 1, 1), "Mars/Olympus", "1h")
