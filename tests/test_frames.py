"""From a DataFrame to a TraceSet: the field's column names found, any time pandas reads, the
frame made as prepare makes it, and each naive mistake one error naming the fix."""

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import InputError
from locsynth.data.discretize import discretize, make_space, make_time_axis
from locsynth.data.frames import columns, from_frame, points_from_frame
from locsynth.data.points import validate_points


def checkins(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Check-ins in scikit-mobility's columns around Manhattan, ISO times in UTC."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2012-04-03T12:00:00Z")
    return pd.DataFrame({
        "uid": rng.integers(0, 20, n),
        "datetime": (start + pd.to_timedelta(rng.integers(0, 14 * 24 * 3600, n), unit="s")).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "lat": 40.70 + rng.random(n) * 0.1, "lng": -74.01 + rng.random(n) * 0.1,
        "venue_id": rng.integers(0, 40, n).astype(str),
    })


def test_the_fields_names_are_found_and_the_frame_is_made_as_prepare_makes_it():
    df = checkins()
    kept = df.copy()
    ts = from_frame(df, grid=(6, 6), timezone="UTC")
    assert df.equals(kept)                                   # nothing the caller passed is modified
    points = validate_points(pd.DataFrame({"user": df.uid, "time": df.datetime, "lat": df.lat, "lon": df.lng,
                                           "venue": df.venue_id}), "x")
    expected = discretize(points, make_space(points, grid=(6, 6)), make_time_axis(points, "1h", "2h", None, "UTC"))
    assert ts.fingerprint() == expected.fingerprint()
    assert "the grid covers the bounding box of the data" in " ".join(ts.ledger.describe())
    assert columns(df) == {"user": "uid", "time": "datetime", "lat": "lat", "lon": "lng", "venue": "venue_id",
                           "category": None}


def test_venues_give_pois_and_the_zone_comes_from_the_coordinates():
    ts = locsynth.from_frame(checkins())
    assert ts.space.kind == "pois" and ts.space.n_locations == 40 and ts.time.timezone == "America/New_York"


def test_times_in_any_format_pandas_reads_and_naive_ones_on_the_given_clock():
    df = checkins(50)
    utc = points_from_frame(df)["time"]
    tsmc = df.assign(datetime=pd.to_datetime(df.datetime).dt.strftime("%a %b %d %H:%M:%S +0000 %Y"))
    assert points_from_frame(tsmc)["time"].equals(utc)       # Foursquare's (TSMC's) format
    local = df.assign(datetime=pd.to_datetime(df.datetime).dt.tz_convert("America/New_York").dt.tz_localize(None))
    assert points_from_frame(local, timezone="America/New_York")["time"].equals(utc)
    text = local.assign(datetime=local.datetime.dt.strftime("%m/%d/%Y %H:%M:%S"))
    assert points_from_frame(text, timezone="America/New_York")["time"].equals(utc)
    offsets = df.assign(datetime=pd.to_datetime(df.datetime).map(
        lambda t: t.tz_convert("Asia/Tokyo" if t.second % 2 else "Europe/Paris").isoformat()))
    assert points_from_frame(offsets)["time"].equals(utc)    # several offsets, one instant each
    unix = df.assign(datetime=(pd.to_datetime(df.datetime) - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s"))
    assert points_from_frame(unix, time_unit="s")["time"].equals(utc)
    indexed = df.set_index(pd.DatetimeIndex(pd.to_datetime(df.datetime), name="t")).drop(columns="datetime")
    assert points_from_frame(indexed)["time"].equals(utc)    # movingpandas' time index


@pytest.mark.parametrize("change, message", [
    (lambda d: d.rename(columns={"uid": "who"}), r"no user column: name it with `user`.*uid.*the frame's columns: who"),
    (lambda d: d.rename(columns={"lng": "x"}), r"no lon column \(or a geometry.*name it with `lon`"),
    (lambda d: d.assign(datetime=pd.to_datetime(d.datetime).dt.strftime("%Y-%m-%d %H:%M")),
     r"times without a time zone .*give `timezone`"),
    (lambda d: d.assign(datetime=d.datetime.where(d.index != 7, "soon")),
     r"column 'datetime' \(time\) at index 7: 'soon' is not a date and time"),
    (lambda d: d.assign(datetime=(pd.to_datetime(d.datetime) - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s")),
     r"holds numbers .*give `time_unit` 's' or 'ms'"),
    (lambda d: d.assign(lat=d.lng + 213.7, lng=d.lat - 5),         # Tokyo's coordinates, swapped
     r"column 'lat' at index 0: 13\d.\d+ is not a latitude.*swapped"),
    (lambda d: d.assign(lat=d.lat.astype(object).where(d.index != 3, "n/a")),
     r"column 'lat' \(lat\) at index 3: 'n/a' is not a number"),
    (lambda d: d.assign(uid=d.uid.astype(object).where(d.index != 5, None)), r"column 'uid' \(user\) at index 5: missing"),
    (lambda d: d.assign(datetime=d.datetime.where(d.index != 2, "2012-04-03 12:00")),
     r"timestamp '2012-04-03 12:00' in column 'datetime' at index 2 has no timezone while others have one"),
])
def test_each_naive_mistake_is_one_error_naming_the_fix(change, message):
    with pytest.raises(InputError, match=message):
        from_frame(change(checkins(30)), grid=(4, 4))


def test_pois_without_venues_a_wrong_name_and_two_zones_name_the_fix():
    df = checkins(30).drop(columns="venue_id")
    with pytest.raises(InputError, match=r"`pois` keeps the most visited venues.*name it with `venue`.*or give `grid`"):
        from_frame(df, pois=10)
    with pytest.raises(InputError, match=r"`time` names column 'when', which the frame does not have"):
        from_frame(df, time="when")
    far = df.assign(lat=np.where(df.index % 2, 35.68, df.lat), lng=np.where(df.index % 2, 139.76, df.lng))
    with pytest.raises(InputError, match=r"2 time zones \(.*America/New_York.*Asia/Tokyo.*\): give `timezone`"):
        from_frame(far)


def test_a_frame_passed_to_fit_says_how_to_make_a_traceset():
    with pytest.raises(InputError, match=r"fit needs a TraceSet, got DataFrame; make one .* locsynth.from_frame"):
        locsynth.TPM().fit(checkins(10))
    with pytest.raises(InputError, match=r"transform needs a TraceSet, got str; load a TraceSet folder"):
        locsynth.KRR().transform("train.csv")


def test_a_geodataframe_gives_its_points_in_degrees():
    gpd = pytest.importorskip("geopandas")
    df = checkins(40)
    gdf = gpd.GeoDataFrame(df.drop(columns=["lat", "lng"]), geometry=gpd.points_from_xy(df.lng, df.lat),
                           crs="EPSG:4326")
    expected = points_from_frame(df)
    assert np.allclose(points_from_frame(gdf.to_crs("EPSG:3857"))[["lat", "lon"]], expected[["lat", "lon"]])


def test_tsmc_check_ins_as_they_are_on_disk(data_dir):
    df = pd.read_csv(data_dir / "foursquare-nyc-tsmc2014" / "NYC_val.csv")
    ts = locsynth.from_frame(df)
    assert ts.time.timezone == "America/New_York" and ts.space.kind == "pois"
    assert columns(df)["time"] == "UTC_time" and columns(df)["venue"] == "POI_id"
    assert ts.n_users == df.user_id.nunique() - ts.info["dropped"]["users_without_events"]
    hours = ts.time.hour_profile(ts.t)
    assert np.nanargmin(hours) in range(2, 7)                # check-ins bottom out before dawn, local time
