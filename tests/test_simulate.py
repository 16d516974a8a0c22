"""The synthetic city: reproducibility, chunking, shape of the traces, and the model's promises."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, TraceSet
from locsynth.data.simulate import (TOKYO_BBOX, USER_BLOCK, explore_probability, make_space, simulate,
                               simulate_to_dir, simulated_friends, synthetic_pois, user_keys)


@pytest.fixture(scope="module")
def city() -> TraceSet:
    """One day of 3000 users on the default 20 x 20 grid."""
    return simulate(3000, seed=3)


def assert_same(a: TraceSet, b: TraceSet) -> None:
    np.testing.assert_array_equal(a.user, b.user)
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.loc, b.loc)
    assert a.users.equals(b.users)
    assert a.info == b.info
    assert a.space.meta() == b.space.meta()
    assert a.time.meta() == b.time.meta()


# -- randomness and chunking ------------------------------------------------------------------
def test_same_seed_same_traces():
    assert_same(simulate(200, days=2, seed=5, checkin_rate=0.3), simulate(200, days=2, seed=5, checkin_rate=0.3))


def test_different_seed_different_traces():
    a, b = simulate(200, seed=1), simulate(200, seed=2)
    assert (a.loc != b.loc).mean() > 0.5


def test_a_user_does_not_depend_on_how_many_were_simulated():
    small, large = simulate(30, days=2, seed=4), simulate(90, days=2, seed=4).select_users(np.arange(30))
    np.testing.assert_array_equal(small.loc, large.loc)
    np.testing.assert_array_equal(small.t, large.t)
    assert small.users.equals(large.users)


def test_user_keys_do_not_depend_on_the_range():
    whole = user_keys(9, 0, 2 * USER_BLOCK)
    np.testing.assert_array_equal(user_keys(9, USER_BLOCK - 5, USER_BLOCK + 5), whole[USER_BLOCK - 5:USER_BLOCK + 5])
    assert np.unique(whole).size == whole.size


@pytest.mark.parametrize("checkin_rate", [None, 0.3])
def test_chunking_does_not_change_the_output(tmp_path, checkin_rate, monkeypatch):
    kw = dict(days=2, seed=11, checkin_rate=checkin_rate)
    memory = simulate(60, **kw)
    with monkeypatch.context() as m:                      # in memory, 3 users (144 instants) a chunk
        m.setattr("locsynth.data.simulate.MAX_CHUNK_EVENTS", 150)
        assert_same(simulate(60, **kw), memory)
    small = TraceSet.load(simulate_to_dir(tmp_path / "7", 60, chunk_users=7, **kw))
    large = TraceSet.load(simulate_to_dir(tmp_path / "1000", 60, chunk_users=1000, **kw))
    assert_same(small, memory)
    assert_same(large, memory)


def test_simulate_to_dir_reports_progress_and_refuses_to_overwrite(tmp_path):
    calls = []
    out = simulate_to_dir(tmp_path / "city", 25, chunk_users=10, progress=lambda *args: calls.append(args))
    assert calls == [(10, 25), (20, 25), (25, 25)]
    with pytest.raises(InputError, match="exists"):
        simulate_to_dir(out, 5)
    assert TraceSet.load(simulate_to_dir(out, 5, overwrite=True)).n_traces == 5


# -- shape of the output ------------------------------------------------------------------------
def test_one_event_per_instant_sorted(city):
    ts = simulate(50, days=3, seed=0)
    ts.check()
    assert ts.n_events == 50 * 3 * 24
    assert np.all(ts.counts() == 72)
    np.testing.assert_array_equal(ts.t, np.tile(np.arange(72), 50))
    assert ts.users["user_id"].tolist() == list(range(50))
    assert ts.time.n_slots == 12 and ts.time.start_date == date(2024, 1, 1)


def test_info_says_simulated(city):
    assert city.info["simulated"] is True
    assert city.info["source"] == "simulate"
    assert city.info["model"] == "EPR with home/work routines"
    assert city.info["parameters"]["rho"] == 0.6 and city.info["parameters"]["gamma"] == 0.21
    assert city.summary()["simulated"] is True
    assert city.space.kind == "grid" and city.space.bbox == TOKYO_BBOX


def test_sparsity_thins_each_user_differently():
    dense = simulate(400, days=7, seed=2)
    sparse = simulate(400, days=7, seed=2, checkin_rate=0.1)
    counts = sparse.counts()
    assert counts.min() >= 1
    assert 0.05 < sparse.n_events / dense.n_events < 0.15
    assert np.percentile(counts, 90) > 4 * np.percentile(counts, 10)
    assert counts.max() > 40
    # a sparse set is a subsample of the dense one
    key = lambda ts: ts.user.astype(np.int64) * 10_000 + ts.t  # noqa: E731
    idx = np.searchsorted(key(dense), key(sparse))
    np.testing.assert_array_equal(dense.loc[idx], sparse.loc)


def test_other_time_axes_and_pois():
    ts = simulate(40, days=1, instant="20min", slot="2h", timezone="Asia/Tokyo", pois=300, seed=1)
    assert ts.n_events == 40 * 72 and ts.time.n_slots == 12
    assert ts.space.kind == "pois" and ts.space.n_locations == 300
    assert set(ts.space.category[ts.users["home"]]) == {"home-area"}
    assert set(ts.space.category[ts.users["work"]]) == {"office"}
    assert set(synthetic_pois(500, seed=0).category) == {"home-area", "office", "shop", "food", "park"}
    assert_same(ts, simulate(40, days=1, instant="20min", slot="2h", timezone="Asia/Tokyo",
                             space=make_space(pois=300, seed=1), seed=1))
    assert make_space(grid=(8, 5)).meta() == {"kind": "grid", "rows": 8, "cols": 5, "bbox": list(TOKYO_BBOX)}
    with pytest.raises(InputError, match="not both"):
        make_space(grid=(2, 2), pois=3)


# -- the model --------------------------------------------------------------------------------------
def test_nights_are_spent_at_home(city):
    night = city.t % 24 < 6
    home = city.users["home"].to_numpy()[city.user]
    assert (city.loc[night] == home[night]).mean() >= 0.7


def test_weekday_working_hours_are_mostly_at_work():
    ts = simulate(500, days=7, seed=0)  # Monday .. Sunday
    work = ts.users["work"].to_numpy()[ts.user]
    hour, day = ts.t % 24, ts.t // 24
    office = (hour >= 11) & (hour < 15)
    assert (ts.loc == work)[office & (day == 0)].mean() > 0.7
    assert (ts.loc == work)[office & (day == 5)].mean() < 0.2


def test_population_is_not_uniform(city):
    counts = np.sort(np.bincount(city.loc, minlength=city.space.n_locations))[::-1]
    assert counts[: counts.size // 10].sum() > 0.3 * counts.sum()


def test_exploration_probability_decreases_with_visited_locations():
    p = np.array([explore_probability(s) for s in (1, 2, 10, 100)])
    assert p[0] == pytest.approx(0.6)
    assert np.all(np.diff(p) < 0)
    assert p[2] == pytest.approx(0.6 * 10 ** -0.21)


def test_visited_locations_grow_sublinearly():
    ts = simulate(200, days=56, space=Grid(50, 50, TOKYO_BBOX), seed=0)
    weeks = np.arange(1, 9)
    distinct = np.zeros((ts.n_traces, weeks.size))
    for i in range(ts.n_traces):
        t, loc = ts.events_of(i)
        first_seen = np.unique(loc, return_index=True)[1]
        distinct[i] = np.searchsorted(np.sort(t[first_seen]), weeks * 7 * 24)
    mean = distinct.mean(axis=0)
    new = np.diff(mean)
    assert np.all(new > 0)
    assert new[-1] < 0.85 * new[0]
    slope = np.polyfit(np.log(weeks), np.log(mean), 1)[0]
    assert 0.3 < slope < 0.95


# -- bad arguments ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(n_users=0), r"number of users \(`users`\) must be at least 1"),
    (dict(n_users=2.5), r"number of users \(`users`\) must be an integer"),
    (dict(days=0), r"days \(`days`\) must be at least 1"),
    (dict(checkin_rate=0.0), r"check-in rate \(`checkin_rate`\) must be in \(0, 1\]"),
    (dict(checkin_rate=1.5), r"check-in rate \(`checkin_rate`\) must be in \(0, 1\]"),
    (dict(pois=0), "pois must be at least 1"),
    (dict(seed=-1), "seed must be a non-negative integer"),
    (dict(pois=10, space=Grid(2, 2, TOKYO_BBOX)), "either space or pois"),
    (dict(instant="7h"), "does not divide"),
    (dict(timezone="Mars/Base"), "unknown timezone"),
])
def test_bad_arguments(kwargs, match):
    kwargs = {"n_users": 5, **kwargs}
    with pytest.raises(InputError, match=match):
        simulate(**kwargs)


def test_bad_chunk_size(tmp_path):
    with pytest.raises(InputError, match="chunk_users must be at least 1"):
        simulate_to_dir(tmp_path / "x", 5, chunk_users=0)
    assert not (tmp_path / "x").exists()


def test_friends_of_a_crowded_place_are_drawn_without_listing_its_pairs():
    """30,000 users sharing a work place have 450M pairs (7 GB as a list); each is a friendship
    with probability 2 / (g - 1), so about g edges, a mean degree near 2 per place."""
    g = 30_000
    users = pd.DataFrame({"home": np.arange(g) // 3, "work": np.zeros(g, np.int64)})
    edges = simulated_friends(users, seed=5)
    work = edges[(edges[:, 0] // 3) != (edges[:, 1] // 3)]          # pairs that can only come from work
    assert abs(len(work) - g) < 5 * np.sqrt(g)
    assert (edges[:, 0] < edges[:, 1]).all() and len(np.unique(edges, axis=0)) == len(edges)
    # homes of 3: p = min(1, 2 / 2) = 1, every pair of housemates is a friendship
    assert len(edges) - len(work) == g
    assert np.array_equal(simulated_friends(users, seed=5), edges)
