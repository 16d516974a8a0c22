"""The PF Tokyo data as published by the PPMTF authors (paper 001 §4.1)."""

import numpy as np
import pandas as pd
import pytest

from locsynth import InputError, TraceSet
from locsynth.data.discretize import read_pf_synthetic


def test_pf_counts(pf_sets):
    train, test = pf_sets["train"], pf_sets["test"]
    for ts in (train, test):
        assert ts.n_users == 500 and ts.n_events == 15000
        assert (ts.counts() == 30).all()
        assert ts.space.n_locations == 400 and ts.space.kind == "grid"
        assert ts.time.instants_per_day == 30 and ts.time.n_slots == 30
        # one event in each of the 30 instants of the user's day, 9:00 to 18:40 Tokyo time
        assert (np.sort((ts.t % 30).reshape(500, 30), axis=1) == np.arange(30)).all()
    assert train.users["user_id"].tolist() == list(range(500))
    assert test.users["user_id"].tolist() == list(range(500, 1000))


def test_pf_locations_are_the_authors_poi_index(pf_sets, pf_dir):
    raw = pd.read_csv(pf_dir / "traintraces_TK.csv").sort_values(["user_index", "unixtime"], kind="stable")
    assert np.array_equal(pf_sets["train"].loc, raw["poi_index"].to_numpy())


def test_pf_synthetic_traces(pf_sets, pf_dir):
    path = pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv"
    syn = read_pf_synthetic(path, pf_sets["train"])
    assert syn.n_traces == 5000 and syn.n_users == 500 and syn.n_events == 150000
    assert syn.users["trace_no"].max() == 9 and (syn.users["source"] >= 0).all()
    raw = pd.read_csv(path)
    first = raw[(raw.user == 3) & (raw.trace_no == 7)].sort_values("time_slot")
    row = int(np.flatnonzero((syn.users["source"] == 3) & (syn.users["trace_no"] == 7))[0])
    t, loc = syn.events_of(row)
    assert t.tolist() == first["time_slot"].tolist() and loc.tolist() == first["poi_index"].tolist()


def test_pf_synthetic_rejects_unknown_users(pf_sets, tmp_path):
    bad = tmp_path / "syn.csv"
    bad.write_text("user,trace_no,time_slot,time_instant,poi_index\n0,0,0,0,5\n777,0,0,0,5\n")
    with pytest.raises(InputError, match="user 777 .* row 2 is not a user of the training set"):
        read_pf_synthetic(bad, pf_sets["train"])
    bad.write_text("user,trace_no,time_slot,time_instant,poi_index\n0,0,0,0,400\n")
    with pytest.raises(InputError, match="unknown location id 400 .* row 1"):
        read_pf_synthetic(bad, pf_sets["train"])


def test_pf_traces_are_one_nominal_day(pf_sets):
    # each user's 30 events come from different dates; the authors' code reads only the time of day
    for ts in pf_sets.values():
        assert ts.t.max() < 30 and ts.info["folded_days"]
        assert ts.time.consecutive(ts.t[:-1], ts.t[1:])[ts.user[1:] == ts.user[:-1]].all()
