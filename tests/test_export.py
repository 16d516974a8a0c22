"""Out to the field's libraries: every trip method's set on every surface shows real times or none
(never an invented datetime), no synthetic set names a training user unless asked, and what goes
out to movingpandas comes back in."""

import warnings

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import InputError, registry
from locsynth.data.frames import trips_from_frame
from locsynth.release.publish import load_release, make_release, release

FAST = {"dptrip": dict(epochs=1)}


def gps(people: int = 40, seed: int = 0) -> pd.DataFrame:
    """People driving around San Francisco: a few trips each, a fix every 30 s, stops between."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(people):
        t = pd.Timestamp("2008-05-19 07:00", tz="America/Los_Angeles") + pd.Timedelta(hours=int(rng.integers(0, 10)))
        lat, lon = 37.70 + rng.random() * 0.08, -122.48 + rng.random() * 0.1
        for _ in range(3):
            dlat, dlon = rng.normal(0, 0.001, 2)
            for _ in range(int(rng.integers(6, 20))):          # driving
                lat, lon, t = lat + dlat, lon + dlon, t + pd.Timedelta("30s")
                rows.append((f"p{p}", t, lat, lon))
            for _ in range(15):                                 # a stop of 7.5 minutes
                t = t + pd.Timedelta("30s")
                rows.append((f"p{p}", t, lat, lon))
            t = t + pd.Timedelta(hours=int(rng.integers(1, 5)))
    return pd.DataFrame(rows, columns=["user_id", "tracked_at", "lat", "lon"])


@pytest.fixture(scope="module")
def trips():
    return trips_from_frame(gps(), cell_m=500)


def trip_methods(train):
    return [n for n in registry.names("synthesizer") if registry.skip_reason(n, train) is None]


@pytest.fixture(scope="module")
def samples(trips):
    out = {}
    for name in trip_methods(trips):
        kind = registry.get(name)
        params = {**FAST.get(name, {}), **({"epsilon": 2.0} if "epsilon" in kind.hyperparameters() else {})}
        out[name] = kind(**params).fit(trips).sample(60, seed=1)
        if "time_share" in kind.hyperparameters():              # the same method without a time model
            out[f"{name} untimed"] = kind(**params, time_share=0).fit(trips).sample(60, seed=1)
    return out


def test_every_trip_method_is_covered(trips, samples):
    assert {"ngram", "privtrace", "adatrace", "dpt", "ldptrace", "training", "uniform"} <= set(samples)
    assert trips.has_times and samples["ngram"].has_times and samples["training"].has_times
    assert samples["ldptrace"].has_times and not samples["ngram untimed"].has_times
    assert not samples["ldptrace untimed"].has_times


def test_no_surface_shows_an_invented_time(samples, tmp_path):
    pytest.importorskip("movingpandas")
    for name, syn in samples.items():
        frame = syn.to_frame()
        csv = pd.read_csv(syn.to_csv(tmp_path / f"{name}.csv"))
        points = syn.to_geodataframe()
        lines = syn.to_geodataframe("trips")
        card = make_release(syn).card
        if syn.has_times:
            when = syn.time.start_of(syn.t).tz_convert(syn.time.timezone)
            assert (frame["datetime"].to_numpy() == when.to_numpy()).all(), name
            assert str(frame["datetime"].dt.tz) == syn.time.timezone == "America/Los_Angeles"
            assert (pd.to_datetime(csv["datetime"], utc=True).to_numpy() == when.tz_convert("UTC").to_numpy()).all()
            assert "step" not in frame and card["has_times"] and "America/Los_Angeles" in card["times"]
            assert (syn.to_skmob()["datetime"].dt.minute != 0).any()          # not all on the hour
            assert lines["start"].notna().all() and (lines["end"] >= lines["start"]).all()
            assert len(syn.to_trackintel()) == syn.n_events and len(syn.to_skmob()) == syn.n_events
            with warnings.catch_warnings():
                warnings.simplefilter("error")                       # movingpandas warns of nothing
                collection = syn.to_movingpandas()
            assert len(collection) == int((np.diff(syn.offsets) > 1).sum())
        else:
            assert frame["datetime"].isna().all() and csv["datetime"].isna().all(), name
            assert (frame["step"].to_numpy() == np.arange(syn.n_events) - np.repeat(syn.offsets[:-1],
                                                                                      np.diff(syn.offsets))).all()
            assert points["datetime"].isna().all() and lines["start"].isna().all()
            assert not card["has_times"] and card["times"].startswith("no times"), name
            for surface in (syn.to_movingpandas, syn.to_trackintel, syn.to_skmob):
                with pytest.raises(InputError, match=r"needs times, and this set has none: its method releases"):
                    surface()


def test_a_release_without_times_reads_back_by_its_steps(samples, tmp_path):
    syn = samples["privtrace untimed"]
    card = release(syn, tmp_path / "r")
    text = (tmp_path / "r" / "RELEASE.md").read_text()
    assert "Times: no times: the method releases where a trip goes, not when" in text
    assert pd.read_csv(tmp_path / "r" / "traces.csv")["datetime"].isna().all() and card["has_times"] is False
    back = load_release(tmp_path / "r")
    assert not back.has_times and back.n_events == syn.n_events
    assert sorted(np.diff(back.offsets)) == sorted(np.diff(syn.offsets))
    from locsynth.release.info import describe

    assert describe(tmp_path / "r")["kind"] == "release"
    parquet = tmp_path / "r" / "traces.parquet"
    parquet.write_bytes(parquet.read_bytes()[:100])                    # cut short: info says so
    with pytest.raises(InputError, match=r"traces\.parquet is damaged"):
        describe(tmp_path / "r")
    parquet.unlink()
    with pytest.raises(InputError, match=r"traces\.parquet is missing: the release is incomplete"):
        describe(tmp_path / "r")


def test_no_training_id_leaves_unasked(trips, samples):
    real = set(trips.users["user_id"])
    for name, syn in samples.items():
        frame = syn.to_frame()
        assert not (set(frame["user_id"]) & real) and "source" not in frame, name
        assert set(syn.to_geodataframe("trips")["user_id"]) <= {f"s{i}" for i in range(syn.n_traces)}
    internal = samples["training"].to_frame(internal=True)
    assert set(internal["user_id"]) <= real and {"source", "trace_no"} <= set(internal)


def test_a_movingpandas_collection_comes_back_as_trips_and_ngram_fits_it(trips):
    pytest.importorskip("movingpandas")
    assert trips.info["clock"] == "America/Los_Angeles"                  # the frame's aware times
    collection = trips.to_movingpandas()
    back = trips_from_frame(collection, cell_m=500)                      # its clock came back with it
    assert back.n_traces == trips.n_traces and back.info["clock"] == "America/Los_Angeles"
    assert back.info["trips_from"] == "the ids of column 'traj_id' (the collection's trajectory id)"
    # the same clock: every trip starts on the minute it started (its cells' centres make a grid of their own)
    assert np.array_equal(np.sort(back.t[back.offsets[:-1]]), np.sort(trips.t[trips.offsets[:-1]]))
    syn = locsynth.NGRAM(epsilon=2.0).fit(back).sample(20, seed=0)
    assert syn.n_traces == 20
    naive = trips.__class__(trips.user, trips.t, trips.loc, trips.users, trips.space, trips.time,
                            {k: v for k, v in trips.info.items() if k != "clock"})
    with pytest.raises(InputError, match=r"holds times without a time zone .*give `timezone`"):
        trips_from_frame(naive.to_movingpandas(), cell_m=500)           # a set of no known clock: naive local
    assert trips_from_frame(naive.to_movingpandas(), cell_m=500, timezone=trips.time.timezone).n_traces == \
        trips.n_traces


def test_an_empty_set_gives_empty_frames_of_the_same_columns(trips):
    """to_movingpandas() of an empty set raised inside pandas (an empty column of objects, no dates)."""
    pytest.importorskip("movingpandas")
    empty = trips.select_users([])
    frame = empty.to_frame()
    assert len(frame) == 0 and list(frame) == list(trips.to_frame())
    assert frame["datetime"].dtype == trips.to_frame()["datetime"].dtype
    assert len(empty.to_movingpandas()) == 0 and len(empty.to_trackintel()) == 0
    assert len(trips.select_users([0]).to_movingpandas()) == int(trips.select_users([0]).n_events > 1)


def test_trackintel_and_geopandas_columns(trips):
    pytest.importorskip("geopandas")
    pfs = trips.to_trackintel()
    assert pfs.geometry.name == "geom" and pfs.index.name == "id" and list(pfs.columns[:2]) == ["user_id", "tracked_at"]
    legs = trips.to_trackintel("triplegs")
    assert list(legs.columns[:3]) == ["user_id", "started_at", "finished_at"] and len(legs) == trips.n_traces
    assert set(legs.geom_type) == {"LineString"} and str(legs.crs) == "EPSG:4326"
    with pytest.raises(InputError, match="'lines' is not 'points' or 'trips'"):
        trips.to_geodataframe("lines")
    skmob = trips.to_skmob()
    assert list(skmob.columns) == ["uid", "tid", "datetime", "lat", "lng"] and skmob["datetime"].dt.tz is None


# -- the movingpandas user's path (issue 54, item 5) ------------------------------------------------

def collection_of_ships():
    """A movingpandas collection as an AIS user makes one: the trajectory id is the MMSI, times UTC."""
    mpd = pytest.importorskip("movingpandas")
    rows = []
    for k in range(6):
        t = pd.date_range("2022-01-03 00:00", periods=20, freq="1min", tz="UTC")
        rows.append(pd.DataFrame({"MMSI": 367000000 + k, "BaseDateTime": t,
                                  "LAT": 47.5 + 0.01 * k + np.arange(20) * 0.004, "LON": -122.4 + 0.002 * k}))
    frame = pd.concat(rows, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mpd.TrajectoryCollection(frame, traj_id_col="MMSI", t="BaseDateTime", x="LON", y="LAT")


def test_a_collections_own_trajectory_id_is_the_trip_and_its_clock_comes_back():
    collection = collection_of_ships()
    ships = trips_from_frame(collection, mode="ship", timezone="America/Los_Angeles")
    assert ships.n_traces == 6 and ships.users["user_id"].tolist() == [str(367000000 + k) for k in range(6)]
    assert ships.info["trips_from"] == "the ids of column 'MMSI' (the collection's trajectory id)"
    assert ships.info["clock"] == "UTC" and ships.time.timezone == "America/Los_Angeles"
    back = ships.to_movingpandas()
    points = back.to_point_gdf(return_orig_tz=True)
    assert str(points.index.tz) == "UTC" and points.index.min() == pd.Timestamp("2022-01-03 00:00", tz="UTC")
    assert str(ships.to_geodataframe()["datetime"].dt.tz) == "UTC"
    assert ships.to_frame()["datetime"].dt.tz.key == "America/Los_Angeles"      # the set's own surfaces keep its clock
    with pytest.raises(InputError, match=r"fit needs a TraceSet, got TrajectoryCollection; make trips of movingpandas "
                                         r"trajectories with locsynth.trips_from_frame\(collection, mode=...\)"):
        locsynth.NGRAM().fit(collection)


def test_to_movingpandas_and_to_geodataframe_take_a_crs(trips):
    pytest.importorskip("movingpandas")
    utm = trips.to_movingpandas(crs="EPSG:32610")
    assert str(utm.trajectories[0].crs) == "EPSG:32610" and not utm.trajectories[0].is_latlon
    assert 5_000 < utm.trajectories[0].get_length() + 5_000            # metres, measured in the plane
    lines = trips.to_geodataframe("trips", crs=32610)
    assert lines.crs.to_epsg() == 32610 and lines.geometry.iloc[0].length > 1        # metres, not degrees
    with pytest.raises(InputError, match="`crs` 'EPSG:nowhere' is not a coordinate reference system"):
        trips.to_geodataframe(crs="EPSG:nowhere")


def test_the_fast_collection_is_movingpandas_own(trips):
    """Built as movingpandas builds the first trajectory, the rest sharing its attributes: the same
    points, ids, times and CRS as movingpandas' constructor gives, and each trajectory its own rows."""
    mpd = pytest.importorskip("movingpandas")
    from locsynth.data.export import geodataframe

    fast = trips.to_movingpandas()
    gdf = geodataframe(trips, "points")
    gdf = gdf.loc[(np.diff(trips.offsets) > 1)[trips.user]]
    gdf = gdf.assign(t=gdf["datetime"]).drop(columns="datetime").rename(columns={"user_id": "traj_id"}).set_index("t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = mpd.TrajectoryCollection(gdf, traj_id_col="traj_id")
    assert len(fast) == len(slow) == trips.n_traces
    for a, b in zip(fast.trajectories, slow.trajectories):
        assert a.id == b.id and a.df_orig_tz == b.df_orig_tz and a.crs == b.crs and a.is_latlon == b.is_latlon
        pd.testing.assert_frame_equal(pd.DataFrame(a.df), pd.DataFrame(b.df), check_dtype=False)
    fast.trajectories[3].df["x"] = 1.0                      # a trajectory's rows are its own
    assert "x" not in fast.trajectories[4].df and "x" not in fast.trajectories[2].df
    pd.testing.assert_frame_equal(pd.DataFrame(fast.to_point_gdf(return_orig_tz=True)).drop(columns="x", errors="ignore"),
                                  pd.DataFrame(slow.to_point_gdf(return_orig_tz=True)), check_dtype=False)


def test_duplicate_timestamps_are_counted_and_said():
    from locsynth.data.trips import describe_drops

    fixes = gps(people=10)
    fixes = fixes.assign(trip_id=fixes["user_id"])                                # each person's day one trip
    twice = pd.concat([fixes, fixes.iloc[::7]], ignore_index=True)             # a fix logged twice
    ts = trips_from_frame(twice, cell_m=500)
    assert ts.info["trips"]["duplicate_times"] == len(fixes.iloc[::7])
    said = describe_drops(ts.info["trips"])
    assert said[0].startswith(f"{len(fixes.iloc[::7])} fixes repeated the time of their trip's previous fix (kept")


def test_progress_bars_show_their_totals(trips, capsys):
    locsynth.PrivTrace(epsilon=1.0).fit(trips, progress=True).sample(30, seed=0, progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    assert f"{trips.n_traces}/{trips.n_traces} [" in err and "traces fitted" in err
    assert "30/30 [" in err and "traces sampled" in err and "it/s" not in err and "0it" not in err


def test_n_given_as_text_says_it_must_be_an_integer(trips):
    model = locsynth.NGRAM(epsilon=1.0).fit(trips)
    with pytest.raises(InputError, match=r"n must be an integer, got '10'"):
        model.sample(n="10")


def test_traces_of_one_point_are_left_out_of_movingpandas_with_a_word(trips):
    pytest.importorskip("movingpandas")
    one = trips.select_users(np.arange(5))
    first = np.r_[True, one.user[1:] != one.user[:-1]]
    singles = one.__class__(one.user[first], one.t[first], one.loc[first], one.users, one.space, one.time, one.info)
    with pytest.raises(InputError, match="none of the 5 traces has them"):
        singles.to_movingpandas()
    mixed = one.__class__(np.r_[singles.user, one.user[one.user >= 3]], np.r_[singles.t, one.t[one.user >= 3]],
                          np.r_[singles.loc, one.loc[one.user >= 3]], one.users, one.space, one.time, one.info)
    mixed = mixed.__class__.from_events(mixed.user, mixed.t, mixed.loc, one.users, one.space, one.time, one.info)
    with pytest.warns(UserWarning, match="3 of the 5 traces have a single point"):
        assert len(mixed.to_movingpandas()) == 2


# -- locsynth export (issue 55, item 4) --------------------------------------------------------------

def test_export_writes_the_public_view_by_default_and_skmob_carries_owner_and_trip(trips, samples, tmp_path):
    """``locsynth export`` of a synthetic set writes what ``to_frame()`` gives (s0, s1, ..., no
    source) unless ``--internal``; ``--format skmob`` writes scikit-mobility's and the DP mobility
    report's columns with naive local times, a trip set's owner as uid and the trip as tid."""
    from typer.testing import CliRunner

    from locsynth.cli import app

    def run(*args):
        return CliRunner().invoke(app, [str(a) for a in args])

    syn = samples["ngram"]
    syn.save(tmp_path / "syn")
    trips.save(tmp_path / "real")
    assert run("export", tmp_path / "syn", "--out", tmp_path / "public.csv").exit_code == 0
    public = pd.read_csv(tmp_path / "public.csv")
    assert public.columns.tolist() == ["user_id", "datetime", "lat", "lon", "location_id"]
    assert public["user_id"].tolist() == syn.to_frame()["user_id"].tolist() and public["user_id"].iloc[0] == "s0"
    res = run("export", tmp_path / "syn", "--out", tmp_path / "internal.csv", "--internal")
    assert res.exit_code == 0 and "internal use" in res.output
    internal = pd.read_csv(tmp_path / "internal.csv")
    assert {"source", "trace_no"} <= set(internal) and internal["user_id"].iloc[0] == "v0"
    assert run("export", tmp_path / "real", "--out", tmp_path / "real.csv", "--format", "skmob").exit_code == 0
    real = pd.read_csv(tmp_path / "real.csv")
    assert real.columns.tolist() == ["uid", "tid", "datetime", "lat", "lng"]
    assert real["uid"].iloc[0] == "p0" and real["tid"].iloc[0] == "p0-00000"
    assert real["tid"].nunique() == trips.n_traces > real["uid"].nunique() == trips.users["person"].nunique()
    local = trips.to_frame()["datetime"].dt.tz_localize(None)
    assert (pd.to_datetime(real["datetime"]) == local).all()                # naive, on the set's clock
    assert run("export", tmp_path / "syn", "--out", tmp_path / "s.csv", "--format", "skmob").exit_code == 0
    assert pd.read_csv(tmp_path / "s.csv")["uid"].iloc[0] == "s0"
    res = run("export", tmp_path / "syn", "--out", tmp_path / "x.csv", "--format", "parquet")
    assert res.exit_code == 1 and "unknown --format 'parquet'" in res.output and not (tmp_path / "x.csv").exists()
    assert run("export", tmp_path / "real", "--out", tmp_path / "naive.csv", "--clock", "naive-local").exit_code == 0
    naive = pd.read_csv(tmp_path / "naive.csv")
    assert naive.columns.tolist() == public.columns.tolist()
    assert (pd.to_datetime(naive["datetime"]) == local).all()               # the points, their clock naive
    res = run("export", tmp_path / "real", "--out", tmp_path / "y.csv", "--format", "skmob", "--clock", "offset")
    assert res.exit_code == 1 and "naive local times only" in res.output and not (tmp_path / "y.csv").exists()
    res = run("export", tmp_path / "real", "--out", tmp_path / "y.csv", "--clock", "utc")
    assert res.exit_code == 1 and "unknown --clock 'utc'" in res.output and not (tmp_path / "y.csv").exists()
