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
    collection = trips.to_movingpandas()
    with pytest.raises(InputError, match=r"holds times without a time zone .*give `timezone`"):
        trips_from_frame(collection, cell_m=500)                # movingpandas' times are naive
    back = trips_from_frame(collection, cell_m=500, timezone=trips.time.timezone)
    assert back.n_traces == trips.n_traces
    assert back.info["trips_from"] == "the ids of column 'traj_id'"
    syn = locsynth.NGRAM(epsilon=2.0).fit(back).sample(20, seed=0)
    assert syn.n_traces == 20


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
