import json
from datetime import date

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, TimeAxis, TraceSet
from locsynth.data.discretize import discretize


def small_set() -> TraceSet:
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h", "2h")
    grid = Grid(2, 2, (0.0, 2.0, 0.0, 2.0))
    users = pd.DataFrame({"user_id": ["a", "b", "c"]})
    # given unsorted on purpose
    return TraceSet.from_events([2, 0, 0, 1, 0, 2], [5, 3, 1, 0, 30, 4], [3, 1, 0, 2, 1, 3], users, grid, axis,
                                {"source": "test"})


def test_events_are_sorted_and_sliced():
    ts = small_set()
    assert ts.user.tolist() == [0, 0, 0, 1, 2, 2] and ts.t.tolist() == [1, 3, 30, 0, 4, 5]
    assert ts.offsets.tolist() == [0, 3, 4, 6]
    t, loc = ts.events_of(0)
    assert t.tolist() == [1, 3, 30] and loc.tolist() == [0, 1, 1]
    assert ts.counts().tolist() == [3, 1, 2]


def test_save_load_identical(tmp_path):
    ts = small_set()
    ts.save(tmp_path / "s")
    back = TraceSet.load(tmp_path / "s")
    for name in ("user", "t", "loc"):
        assert np.array_equal(getattr(ts, name), getattr(back, name)) and getattr(back, name).dtype == getattr(ts, name).dtype
    pd.testing.assert_frame_equal(ts.users, back.users)
    assert back.time.meta() == ts.time.meta() and back.space.meta() == ts.space.meta()
    assert np.array_equal(back.space.lat, ts.space.lat) and back.info == ts.info


def test_save_refuses_existing_output(tmp_path):
    small_set().save(tmp_path / "s")
    with pytest.raises(InputError, match="exists; pass `overwrite`"):
        small_set().save(tmp_path / "s")
    small_set().save(tmp_path / "s", overwrite=True)


@pytest.mark.parametrize("damage, match", [
    (lambda d: (d / "events.parquet").unlink(), "events.parquet is missing or damaged"),
    (lambda d: (d / "users.parquet").write_bytes(b"not parquet"), "users.parquet is missing or damaged"),
    (lambda d: (d / "meta.json").write_text("{"), "meta.json is damaged"),
    (lambda d: (d / "meta.json").unlink(), "no meta.json"),
    (lambda d: _edit_meta(d, format_version=99), "format version 99"),
    (lambda d: _edit_meta(d, format="something else"), "does not describe a locsynth TraceSet"),
    (lambda d: _edit_meta(d, counts={"traces": 3, "events": 7}), "counts .* do not match"),
])
def test_damaged_directory_is_a_clear_error(tmp_path, damage, match):
    small_set().save(tmp_path / "s")
    damage(tmp_path / "s")
    with pytest.raises(InputError, match=match):
        TraceSet.load(tmp_path / "s")


def _edit_meta(d, **changes):
    meta = json.loads((d / "meta.json").read_text())
    meta.update(changes)
    (d / "meta.json").write_text(json.dumps(meta))


def test_select_users_and_days():
    ts = small_set()
    sub = ts.select_users([2, 0])
    assert sub.users["user_id"].tolist() == ["c", "a"]
    assert sub.user.tolist() == [0, 0, 1, 1, 1] and sub.t.tolist() == [4, 5, 1, 3, 30]
    day0 = ts.select_days([0])
    assert day0.n_traces == 3 and 30 not in day0.t.tolist()


def test_split_is_seeded_and_disjoint():
    ts = small_set()
    train, test = ts.split(test=0.34, seed=3)
    again = ts.split(test=0.34, seed=3)
    assert set(train.users["user_id"]) | set(test.users["user_id"]) == {"a", "b", "c"}
    assert not set(train.users["user_id"]) & set(test.users["user_id"])
    assert test.users["user_id"].tolist() == again[1].users["user_id"].tolist()
    assert train.n_events + test.n_events == ts.n_events
    with pytest.raises(InputError, match="between 0 and 1"):
        ts.split(test=1.5)
    with pytest.raises(InputError, match="seed must be a whole number >= 0, got -1"):
        ts.split(test=0.34, seed=-1)


def test_csv_export_columns(tmp_path):
    path = small_set().to_csv(tmp_path / "x.csv")
    out = pd.read_csv(path)
    assert out.columns.tolist() == ["user_id", "datetime", "lat", "lon", "location_id"]
    assert out["datetime"].iloc[0] == "2024-01-01T01:00:00+00:00" and out["lat"].iloc[0] == 0.5


def test_from_events_checks_ranges():
    ts = small_set()
    with pytest.raises(InputError, match="unknown location id 9"):
        TraceSet.from_events([0], [0], [9], ts.users, ts.space, ts.time)


def points(times, users=("u",) * 3, lat=(0.5, 1.5, 0.5)):
    return pd.DataFrame({"user": list(users), "time": pd.to_datetime(times, utc=True),
                         "lat": list(lat), "lon": [0.5] * len(lat)})


@pytest.mark.parametrize("policy, expected", [("first", [0, 2]), ("last", [2, 2]), ("keep", [0, 2, 2])])
def test_duplicate_policies(policy, expected):
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h")
    grid = Grid(2, 1, (0.0, 2.0, 0.0, 1.0))
    pts = points(["2024-01-01T10:05Z", "2024-01-01T10:50Z", "2024-01-01T11:00Z"], lat=(0.5, 1.5, 1.5))
    ts = discretize(pts, grid, axis, duplicates=policy)
    assert (ts.loc * 2).tolist() == expected   # loc 0 / 1 -> 0 / 2 for readability
    with pytest.raises(InputError, match="several events in instant 10"):
        discretize(pts, grid, axis, duplicates="error")


def test_discretize_drops_and_counts_points_outside():
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h", window=("08:00", "18:00"))
    grid = Grid(2, 1, (0.0, 2.0, 0.0, 1.0))
    pts = points(["2024-01-01T10:00Z", "2024-01-01T20:00Z", "2024-01-01T11:00Z"], users=("u", "u", "v"),
                 lat=(0.5, 0.5, 5.0))
    ts = discretize(pts, grid, axis)
    assert ts.n_events == 1 and ts.users["user_id"].tolist() == ["u"]
    assert ts.info["dropped"] == {"outside_space": 1, "outside_time": 1, "users_without_events": 1}


def test_numeric_user_ids_sort_naturally():
    axis = TimeAxis.build(date(2024, 1, 1), "UTC", "1h")
    grid = Grid(1, 1, (0.0, 2.0, 0.0, 1.0))
    pts = points(["2024-01-01T10:00Z"] * 3, users=(10, 9, 100), lat=(0.5,) * 3)
    assert discretize(pts, grid, axis).users["user_id"].tolist() == [9, 10, 100]


def test_friends_follow_user_selection_and_round_trip(tmp_path):
    from dataclasses import replace

    ts = replace(small_set(), friends=np.array([[0, 1], [1, 2], [0, 2]]))
    ts.check()
    sub = ts.select_users([2, 1])          # c -> 0, b -> 1: only the edge b-c survives
    assert sub.friends.tolist() == [[0, 1]]
    ts.save(tmp_path / "f")
    assert TraceSet.load(tmp_path / "f").friends.tolist() == [[0, 1], [1, 2], [0, 2]]
    assert ts.summary()["friendships"] == 3


def test_ragged_synthetic_set_with_friends_and_ledger_round_trips(tmp_path):
    """Traces of any length and start, a friend graph and a ledger survive save and load, and the
    transitions are the consecutive-instant pairs within a trace."""
    from locsynth.privacy.ledger import Ledger

    base = small_set()
    ledger = Ledger()
    ledger.record("laplace", 0.5, sensitivity=2, saw="counts")
    users = pd.DataFrame({"user_id": ["x", "y"], "source": np.int32([-1, -1]), "trace_no": np.int32([0, 0])})
    ts = TraceSet.from_events([1, 0, 1, 1, 0], [40, 7, 41, 43, 8], [0, 1, 2, 3, 1], users, base.space, base.time,
                              {"source": "test"}, friends=np.array([[0, 1]]), ledger=ledger)
    assert ts.counts().tolist() == [2, 3] and ts.t.tolist() == [7, 8, 40, 41, 43]
    row, src, dst = ts.transitions()
    assert row.tolist() == [0, 1] and src.tolist() == [1, 0] and dst.tolist() == [1, 2]     # 41 -> 43 is no step
    assert ts.transitions(consecutive_only=False)[0].tolist() == [0, 1, 1]
    ts.save(tmp_path / "s")
    back = TraceSet.load(tmp_path / "s")
    assert back.friends.tolist() == [[0, 1]] and back.ledger.spends == ledger.spends
    assert np.array_equal(back.t, ts.t) and back.fingerprint() == ts.fingerprint()
    assert json.loads((tmp_path / "s" / "meta.json").read_text())["ledger"]["totals"]["user"]["epsilon"] == 0.5
