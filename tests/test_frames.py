"""From a DataFrame to a TraceSet: the field's column names found, any time pandas reads, the
frame made as prepare makes it, and each naive mistake one error naming the fix."""

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import InputError
from locsynth.data.discretize import discretize, make_space, make_time_axis
from locsynth.data.frames import columns, from_frame, points_from_frame, trips_from_frame
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
     r"column 'lat' at index 3: 'n/a' is not a number"),
    (lambda d: d.assign(uid=d.uid.astype(object).where(d.index != 5, None)), r"column 'uid' \(user\) at index 5: missing"),
    (lambda d: d.assign(datetime=d.datetime.where(d.index != 2, "2012-04-03 12:00")),
     r"timestamp '2012-04-03 12:00' in column 'datetime' at index 2 has no timezone while others have one"),
    (lambda d: d.assign(datetime=d.datetime.where(d.index != 4, "1700-04-03T12:00:00Z")),   # a slip of the year
     r"time 1700-04-03T12:00:00\+00:00 in column 'datetime' \(time\) at index 4 is in year 1700: locsynth reads "
     r"times from 1900 to 2100"),
    (lambda d: d.assign(datetime=[pd.Timestamp(t).tz_localize(None) if i == 1 else pd.Timestamp(t)
                                  for i, t in enumerate(d.datetime)]),
     r"time 2012-04-.* in column 'datetime' at index 1 has no time zone while others have one; give every time a zone"),
    (lambda d: d.set_index(["uid", "datetime"]), r"the frame's time is in its index \('uid', 'datetime'\), not a "
                                                 r"column: call frame.reset_index\(\) first"),
    (lambda d: d.assign(latitude=d.lat + 0.01), r"the frame has 2 columns for lat, 'lat' and 'latitude': name the "
                                                r"one to use with `lat`"),
    (lambda d: d.assign(lat=d.lng, lng=d.lat),                    # New York's coordinates, swapped: Antarctica
     r"the points lie in Antarctica \(median point -73.9\d+, 40.7\d+, time zone Antarctica/Syowa\); with latitude and "
     r"longitude swapped they lie in America/New_York: are columns 'lat' and 'lng' swapped\? If not, name them with "
     r"`lat` and `lon`"),
])
def test_each_naive_mistake_is_one_error_naming_the_fix(change, message):
    with pytest.raises(InputError, match=message):
        from_frame(change(checkins(30)), grid=(4, 4))


def unix(df: pd.DataFrame, per_second: int = 1) -> pd.DataFrame:
    """``df`` with its times as unix numbers, ``per_second`` ticks a second (1: seconds, 1000: ms)."""
    seconds = (pd.to_datetime(df.datetime) - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s")
    return df.assign(datetime=seconds * per_second)


@pytest.mark.parametrize("ticks, unit, message", [
    (1000, "s", r"time 133\d{10} in column 'datetime' \(time\) at index 0 read as unix seconds is year 44,2\d\d, "
                r"outside 1990-2100; they look like milliseconds: give `time_unit` 'ms'"),
    (1, "ms", r"time 133\d{7} in column 'datetime' \(time\) at index 0 read as unix milliseconds is 1970-01-16 "
              r"\d\d:\d\d, outside 1990-2100; they look like seconds: give `time_unit` 's'"),
    (10 ** 6, "ms", r"read as unix milliseconds is year 44,2\d\d, outside 1990-2100; they look like microseconds: "
                    r"divide them by 1,000 and give `time_unit` 'ms'"),
])
def test_numeric_times_in_the_wrong_unit_name_the_unit_they_look_like(ticks, unit, message):
    """Milliseconds read as seconds wrapped to 1970-72 and seconds read as milliseconds collapsed to
    one day of 1970 (issue 53): both are one error, from a frame of points or of GPS fixes."""
    df = unix(checkins(30), ticks)
    with pytest.raises(InputError, match=message):
        from_frame(df, grid=(4, 4), time_unit=unit)
    with pytest.raises(InputError, match=message):
        trips_from_frame(df.rename(columns={"uid": "trip"}), time_unit=unit)
    assert points_from_frame(unix(checkins(30)), time_unit="s")["time"].equals(points_from_frame(checkins(30))["time"])


def test_times_that_are_not_unix_times_and_the_cabs_preset_in_milliseconds():
    relative = unix(checkins(30)).assign(datetime=lambda d: d.datetime - d.datetime.min())
    with pytest.raises(InputError, match=r"read as unix seconds is 1970-01-\d\d .*they are not unix times in any unit "
                                         r"\(s, ms, us, ns\): convert them to dates first"):
        points_from_frame(relative, time_unit="s")
    cabs = unix(checkins(30), 1000).rename(columns={"uid": "cab"}).assign(occupancy=1)
    with pytest.raises(InputError, match=r"read as unix seconds is year 44,\d+.*give `time_unit` 'ms'"):
        trips_from_frame(cabs, preset="cabs")


def test_timestamps_of_several_zones_are_read_as_the_instants_they_are():
    df = checkins(30)
    zoned = df.assign(datetime=[pd.Timestamp(t).tz_convert("Asia/Tokyo" if i % 2 else "America/New_York")
                                for i, t in enumerate(df.datetime)])
    assert zoned.datetime.dtype == object
    assert points_from_frame(zoned)["time"].equals(points_from_frame(df)["time"])


def test_two_names_of_a_coordinate_and_swapped_ones_are_read_when_named():
    df = checkins(30)
    both = df.assign(latitude=df.lat + 0.01)
    assert np.allclose(points_from_frame(both, lat="latitude")["lat"], df.lat + 0.01)
    swapped = df.assign(lat=df.lng, lng=df.lat)
    assert np.allclose(points_from_frame(swapped, lat="lat", lon="lng")["lat"], df.lng)
    south = df.assign(lat=-69.0 + df.lat - 40.7, lng=39.58 + df.lng + 74.0)    # Syowa Station: swapped it is at sea
    assert from_frame(south, grid=(4, 4)).time.timezone == "Antarctica/Syowa"


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


def test_a_geodataframes_stale_columns_are_refused_unless_named():
    """A GeoDataFrame with lat/lon columns beside its geometry: the same points are read; columns
    left behind when the geometry moved are an error, and read when named (issue 53)."""
    gpd = pytest.importorskip("geopandas")
    df = checkins(40)
    gdf = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df.lng, df.lat), crs="EPSG:4326")
    assert points_from_frame(gdf).equals(points_from_frame(df))
    moved = gdf.set_geometry(gpd.points_from_xy(df.lng + 0.01, df.lat))
    with pytest.raises(InputError, match=r"the frame's geometry and its columns 'lat', 'lng' differ at index 0 "
                                         r"\(geometry 40.\d+, -73.\d+; columns 40.\d+, -73.\d+\): name the columns "
                                         r"with `lat` and `lon` to read them, or drop them to read the geometry"):
        points_from_frame(moved)
    assert np.allclose(points_from_frame(moved, lat="lat", lon="lng")["lon"], df.lng)
    assert np.allclose(points_from_frame(moved.drop(columns=["lat", "lng"]))["lon"], df.lng + 0.01)


def test_tsmc_check_ins_as_they_are_on_disk(data_dir):
    df = pd.read_csv(data_dir / "foursquare-nyc-tsmc2014" / "NYC_val.csv")
    ts = locsynth.from_frame(df)
    assert ts.time.timezone == "America/New_York" and ts.space.kind == "pois"
    assert columns(df)["time"] == "UTC_time" and columns(df)["venue"] == "POI_id"
    assert ts.n_users == df.user_id.nunique() - ts.info["dropped"]["users_without_events"]
    hours = ts.time.hour_profile(ts.t)
    assert np.nanargmin(hours) in range(2, 7)                # check-ins bottom out before dawn, local time


# -- trips ------------------------------------------------------------------------------------------
from locsynth.data.trips import CABS, describe_drops, segment  # noqa: E402
from locsynth.core.geo import haversine_m  # noqa: E402


def fixes(person, start, steps, lat, lon, dlat=0.0, dlon=0.0, every="30s"):
    """``steps`` fixes of ``person`` from ``start``, every ``every``, moving by (dlat, dlon) a fix."""
    t = pd.date_range(start, periods=steps, freq=every, tz="UTC")
    return pd.DataFrame({"user": person, "time": t, "lat": lat + dlat * np.arange(steps),
                         "lon": lon + dlon * np.arange(steps)})


def day(person="ann", lat=40.70, lon=-74.00):
    """At home 10 min, to work in 10 min (about 2 km), at work 10 min, then, after a gap of an hour,
    a walk of 10 min that ends nowhere in particular."""
    return pd.concat([
        fixes(person, "2012-04-03 08:00", 20, lat, lon),
        fixes(person, "2012-04-03 08:10", 20, lat + 0.0009, lon, dlat=0.0009),
        fixes(person, "2012-04-03 08:20", 20, lat + 0.0189, lon),
        fixes(person, "2012-04-03 09:40", 20, lat + 0.0189, lon + 0.001, dlon=0.001),
    ], ignore_index=True)


def plain_segment(points, gap_s=900, stay_m=100, stay_s=300):
    """Li et al.'s sliding window and trackintel's triplegs, fix by fix, as a reference."""
    out = []
    for person, p in points.sort_values(["user", "time"], kind="stable").groupby("user", sort=True):
        unix = (p.time - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s")
        lat, lon, unix = p.lat.to_numpy(), p.lon.to_numpy(), unix.to_numpy()
        stay, i = [-1] * len(p), 0
        while i < len(p):
            j = i + 1
            while j < len(p) and unix[j] - unix[j - 1] <= gap_s and haversine_m(lat[i], lon[i], lat[j], lon[j]) <= stay_m:
                j += 1
            if unix[j - 1] - unix[i] >= stay_s:
                stay[i:j] = [1] * (j - i)
            i = j
        trips, current = [], None
        for k in range(len(p)):
            if k == 0 or unix[k] - unix[k - 1] > gap_s:
                current = None
            if stay[k] < 0:
                if current is None:
                    current = [k - 1] if k > 0 and unix[k] - unix[k - 1] <= gap_s and stay[k - 1] >= 0 else []
                    trips.append(current)
                current.append(k)
            else:
                if current is not None:
                    current.append(k)
                current = None
        out += [[(person, n, int(unix[k])) for k in trip] for n, trip in enumerate(trips)]
    return out


def test_segmenting_at_stays_and_gaps_equals_the_plain_sliding_window():
    rng = np.random.default_rng(3)
    walks = pd.concat([day("ann"), day("bob", 40.75, -73.95)], ignore_index=True)
    noisy = walks.assign(lat=walks.lat + rng.normal(0, 0.0002, len(walks)),
                         time=walks.time + pd.to_timedelta(rng.integers(0, 20, len(walks)), unit="s"))
    for points in (walks, noisy, noisy.sample(frac=1, random_state=0)):
        got = segment(points)
        unix = (got.time - pd.Timestamp(0, tz="UTC")) // pd.Timedelta("1s")
        pairs = list(zip(got.person, got.user.str.rsplit("-", n=1).str[1].astype(int), unix))
        expected = [fix for trip in plain_segment(points) for fix in trip]
        assert pairs == expected
    trips = segment(walks)
    assert trips.groupby("user").size().tolist() == [22, 20] * 2     # home->work with both stays' ends; the walk


def test_trips_from_a_persons_fixes_a_trip_column_and_marked_runs():
    walks = pd.concat([day("ann"), day("bob", 40.75, -73.95)], ignore_index=True)
    ts = locsynth.trips_from_frame(walks)
    assert ts.n_traces == 4 and ts.users.person.tolist() == ["ann", "ann", "bob", "bob"]
    assert ts.time.timezone == "America/New_York" and ts.info["bbox_from_data"]
    assert "the grid covers the bounding box of the data" in " ".join(ts.ledger.describe())
    assert describe_drops(ts.info["trips"]) == ["4 of 4 trips kept"]
    ids = walks.assign(traj_id=np.where(walks.time.dt.hour < 9, "a", "b")).rename(columns={"user": "uid"})
    by_id = trips_from_frame(ids)
    assert by_id.users.user_id.tolist() == ["ann-a", "ann-b", "bob-a", "bob-b"]
    marked = walks.assign(occupancy=(walks.time.dt.minute % 20 < 10).astype(int))   # home, work + walk
    runs = trips_from_frame(marked)
    assert runs.users.user_id.tolist() == ["ann-00001", "bob-00001"]
    assert describe_drops(runs.info["trips"]) == ["2 never left one cell", "2 of 4 trips kept"]


def test_what_each_filter_dropped_is_said_and_no_trip_left_names_the_setting():
    walks = pd.concat([day("ann"), day("bob", 40.75, -73.95)], ignore_index=True)
    with pytest.raises(InputError, match=r"no trip is left of the 4 made .*4 left the bounding box \(37.6017-37.8112 N.*"
                                         r"`bbox` sets it\)"):
        trips_from_frame(walks, preset="cabs", time_unit=None)
    fast = trips_from_frame(walks, max_speed_kmh=11)           # to work at 12 km/h, the walk at 10
    said = describe_drops(fast.info["trips"])
    # a cell of 250 m in a minute reads as 15 km/h: the walk's steps take the time the bound of 11 asks
    assert said[0] == "2 were too fast" and said[-1] == "2 of 4 trips kept"
    assert said[1].startswith(f"{fast.info['trips']['slowed_steps']} steps were given the time") and \
        fast.info["trips"]["slowed_steps"] > 0
    assert fast.bounds.max_speed_kmh == 11 and fast.bounds.mode == "taxi, adjusted"
    far = pd.concat([walks, fixes("cy", "2012-04-03 08:00", 3, 35.68, 139.76, dlat=0.01)], ignore_index=True)
    with pytest.raises(InputError, match=r"2 time zones"):
        trips_from_frame(far)
    with pytest.raises(InputError, match=r"needs [\d,]+ cells of 50 m: give `bbox`.*90 % of the fixes lie in"):
        trips_from_frame(far, timezone="UTC", cell_m=50)
    with pytest.raises(InputError, match=r"unknown `preset` 'taxi'"):
        trips_from_frame(walks, preset="taxi")


def test_cab_points_read_by_hand_make_the_cab_trips_of_prepare(data_dir):
    """The 30 cabs' files read with pandas, as a user would, give prepare's cab trips exactly."""
    from pathlib import Path

    from locsynth.data.trips import read_trips

    folder = data_dir / "sf-cabspotting" / "cabs"
    df = pd.concat(pd.read_csv(f, sep=" ", names=["lat", "lon", "occupancy", "time"]).assign(cab=f.stem[4:])
                   for f in sorted(Path(folder).glob("new_*.txt")))
    trips, expected = locsynth.trips_from_frame(df, preset="cabs"), read_trips(folder)
    assert trips.fingerprint() == expected.fingerprint() and trips.users.equals(expected.users)
    assert trips.space.meta() == expected.space.meta() and trips.time.describe() == expected.time.describe()


def test_geolife_and_tsmc_trips_with_the_general_maker(data_dir):
    from locsynth.data.io import read_geolife

    points = read_geolife(data_dir / "geolife" / "trackintel_subset" / "geolife_long_10_MB")
    with pytest.raises(InputError, match=r"needs [\d,]+ cells of 500 m: give `bbox`"):
        trips_from_frame(points, cell_m=500)
    geolife = trips_from_frame(points, cell_m=500, bbox=(39.7, 40.2, 116.1, 116.7))
    drops = describe_drops(geolife.info["trips"])
    assert geolife.time.timezone == "Asia/Shanghai" and geolife.n_traces > 200
    assert any("left the bounding box" in d for d in drops) and drops[-1].endswith("trips kept")
    tsmc = pd.read_csv(data_dir / "foursquare-nyc-tsmc2014" / "NYC_val.csv")
    own = trips_from_frame(tsmc, cell_m=500)                      # its trajectory_id: a user's day
    assert own.info["trips_from"] == "the ids of column 'trajectory_id'" and own.n_traces > 1000
    cut = trips_from_frame(tsmc.drop(columns="trajectory_id"), cell_m=500, gap_minutes=240)
    assert cut.info["trips_from"].startswith("each person's fixes split") and cut.n_traces > 1000
