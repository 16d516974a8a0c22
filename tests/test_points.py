import numpy as np
import pandas as pd
import pytest

from locsynth import InputError
from locsynth.data.points import validate_points


def frame(**over):
    base = {"user": [1, 1], "time": ["2024-01-01T10:00:00+00:00", "2024-01-01T11:00:00+00:00"],
            "lat": [35.0, 35.1], "lon": [139.0, 139.1]}
    base.update(over)
    return pd.DataFrame(base)


def test_valid_points_are_normalised_to_utc():
    out = validate_points(frame(time=["2024-01-01T19:00:00+09:00", "2024-01-01T20:00:00+09:00"]), "p.csv")
    assert str(out["time"].dt.tz) == "UTC" and out["time"].iloc[0] == pd.Timestamp("2024-01-01T10:00Z")


@pytest.mark.parametrize("over, match", [
    ({"lat": [35.0, 91.5]}, r"latitude 91.5 out of range \[-90, 90\] in p.csv row 2"),
    ({"lon": [181.0, 0.0]}, r"longitude 181 out of range \[-180, 180\] in p.csv row 1"),
    ({"lat": [np.nan, 1.0]}, r"latitude nan is not a finite number in p.csv row 1"),
    ({"lon": [0.0, "east"]}, r"longitude 'east' is not a finite number in p.csv row 2"),
    ({"time": ["2024-01-01 10:00", "2024-01-01 11:00"]}, r"naive timestamp .* `timezone`"),
    ({"time": ["2024-01-01T10:00Z", "yesterday"]}, r"timestamp 'yesterday' is not a valid date .* row 2"),
])
def test_bad_values_name_file_row_and_value(over, match):
    with pytest.raises(InputError, match=match):
        validate_points(frame(**over), "p.csv")


def test_naive_timestamps_with_a_timezone():
    out = validate_points(frame(time=["2024-01-01 19:00", "2024-01-01 20:00"]), "p.csv", timezone="Asia/Tokyo")
    assert out["time"].iloc[0] == pd.Timestamp("2024-01-01T10:00Z")


def test_empty_and_missing_columns():
    with pytest.raises(InputError, match="no data rows"):
        validate_points(frame().iloc[:0], "p.csv")
    with pytest.raises(InputError, match=r"missing column\(s\) lon; required: user, time, lat, lon; found: user, time, lat"):
        validate_points(frame().drop(columns="lon"), "p.csv")


def test_mixed_offsets_are_brought_to_utc_and_mixed_naive_is_an_error():
    out = validate_points(frame(time=["2024-01-01T10:00:00+09:00", "2024-01-01T10:00:00-05:00"]), "p.csv")
    assert out["time"].tolist() == [pd.Timestamp("2024-01-01T01:00Z"), pd.Timestamp("2024-01-01T15:00Z")]
    with pytest.raises(InputError, match=r"'2024-01-01 11:00' in p.csv row 2 has no timezone while others"):
        validate_points(frame(time=["2024-01-01T10:00:00+09:00", "2024-01-01 11:00"]), "p.csv")
