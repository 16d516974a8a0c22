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


# -- the hour-of-day profile ------------------------------------------------------------------------

def test_hour_profile_of_times_on_a_zones_clock():
    from locsynth.data.timeaxis import hour_profile

    times = pd.Series(pd.to_datetime(["2024-01-15T14:00:00Z", "2024-01-15T14:59:59Z",        # 09:xx in New York (EST)
                                      "2024-07-15T13:30:00Z", "2024-07-15T03:00:00Z"]))      # 09:30 (EDT), 23:00
    shares = hour_profile(times, "America/New_York")
    assert shares.shape == (24,) and shares[9] == 0.75 and shares[23] == 0.25 and shares.sum() == 1.0
    assert hour_profile(times)[14] == 0.5                                                  # UTC by default
    assert (hour_profile(times.iloc[:0]) == 0).all()
    with pytest.raises(InputError, match="unknown timezone"):
        hour_profile(times, "Mars/Olympus")


def test_axis_hour_profile_spreads_long_instants_and_leaves_the_window_out():
    two = TimeAxis.build(date(2024, 1, 1), "UTC", "2h")
    shares = two.hour_profile(np.array([0, 1, 1, 13]))          # 00-02, 02-04 twice (once on day 1)
    assert shares[:4].tolist() == [0.125, 0.125, 0.375, 0.375] and shares[4:].sum() == 0
    pf = pf_axis().hour_profile(np.arange(60))                  # two days of PF's 20-minute instants
    assert np.isnan(pf[:9]).all() and np.isnan(pf[19:]).all()
    assert np.allclose(pf[9:19], 0.1)
    assert pf_axis().hour_profile(np.array([0, 1, 2]))[9] == 1.0                # 09:00-10:00


def test_describe_hours_is_one_line_with_peak_and_trough():
    from locsynth.data.timeaxis import describe_hours

    shares = np.full(24, 1.0)
    shares[19], shares[4] = 8.0, 0.0
    line = describe_hours(shares / shares.sum())
    assert line.startswith("|▂▂▂▂▁▂▂▂▂▂▂▂▂▂▂▂▂▂▂█▂▂▂▂| 0-23 h")
    assert line.endswith("peak 19 h (26.7%), trough 04 h (0.0%)")
    line = describe_hours(pf_axis().hour_profile(np.arange(30)))
    assert line.startswith("|         ██████████     |")
    assert describe_hours(np.zeros(24)) == "no events"
