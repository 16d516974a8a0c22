"""The evaluation against the PPMTF authors' published PF scores (utilpriv_PPMTF_TK.csv, alpha = 200), and
of sets of trips by paper 004 §8.4's metrics."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from helpers import trip_set

from locsynth import InputError
from locsynth.evaluation.evaluate import evaluate
from locsynth.evaluation.suite import _built_in as group
from locsynth.evaluation.report.labels import STANDARD, TRIPS
from locsynth.data.discretize import read_pf_synthetic
from locsynth.metrics.trips import frequent_pattern_precision, source_destination_emd, trip_length_jsd


@pytest.fixture(scope="module")
def pf_report(pf_sets, pf_dir):
    syn = read_pf_synthetic(pf_dir / "PPMTF_TK_alp200_mnt100_mnv100" / "syntraces_Itr100.csv", pf_sets["train"])
    return evaluate(pf_sets["train"], pf_sets["test"], syn, mia_per_trace_number=True)


@pytest.fixture(scope="module")
def published(pf_dir):
    row = pd.read_csv(pf_dir / "utilpriv_PPMTF_TK.csv", skipinitialspace=True).iloc[0]
    return row


@pytest.mark.parametrize("key, column, tol", [
    ("tp_tv", "TP-TV", 1e-9), ("tm_emd_y", "TM-EMD-Y", 1e-9), ("tm_emd_x", "TM-EMD-X", 1e-9),
    # ties at rank 50: the authors' numpy quicksort order is version dependent; ours is stable
    ("tp_tv_top50", "TP-TV-Top50", 1e-3),
])
def test_utility_reproduces_the_published_row(pf_report, published, key, column, tol):
    m = pf_report.metrics[key]
    assert m["synthetic"] == pytest.approx(published[f"{column}_syn"], abs=tol)
    assert m["training"] == pytest.approx(published[f"{column}_tra"], abs=tol)
    assert m["uniform"] == pytest.approx(published[f"{column}_uni"], abs=tol)


def test_privacy_reproduces_the_published_row(pf_report, published):
    assert pf_report.metrics["reid_rate"]["synthetic"] == pytest.approx(published["reid_rate"], abs=1e-12)
    # the authors scan 1000 thresholds and count transitions across trace boundaries; we scan all
    assert pf_report.metrics["mia_advantage"]["synthetic"] == pytest.approx(published["MIA_adv"], abs=0.005)
    assert pf_report.metrics["mia_accuracy"]["synthetic"] == pytest.approx(published["MIA_acc"], abs=0.0025)
    # releasing the training traces themselves is almost fully re-identifiable
    assert pf_report.metrics["reid_rate"]["training"] > 0.9


def test_metrics_json_keys(pf_report, tmp_path):
    pf_report.to_json(tmp_path / "metrics.json")
    data = json.loads((tmp_path / "metrics.json").read_text())
    for key in ("tp_tv", "tp_tv_top50", "tm_emd_x", "tm_emd_y", "tm_swd", "vf_tv", "reid_rate",
                "mia_advantage", "mia_accuracy"):
        assert set(data[key]) == {"synthetic", "training", "uniform"}
    assert data["_meta"]["trace_numbers"] == 10


def test_incompatible_sets_are_refused(pf_sets):
    from helpers import traceset

    with pytest.raises(InputError, match="prepare it with `like`"):
        evaluate(pf_sets["train"], pf_sets["test"], traceset([[(0, 0)]], synthetic=[(0, 0)]))
    with pytest.raises(InputError, match="unknown attack"):
        evaluate(pf_sets["train"], pf_sets["test"], pf_sets["train"], attacks=["guess"])


# -- sets of trips (paper 004 §8.4) ----------------------------------------------------------------
TEST = ([[0, 1, 2], [1, 2], [0, 1], [3, 2, 1, 0], [1, 2, 3]], [8, 8, 9, 9, 10])
TRAIN = ([[0, 1], [1, 2, 1], [0, 1, 2], [2, 1], [1, 2, 3]], [8, 9, 9, 10, 10])
SYNTHETIC = ([[0, 1, 2], [0, 1, 2, 3], [1, 2], [2, 3]], [8, 9, 9, 12])


def test_a_frame_or_none_for_a_set_is_one_error_saying_how_to_make_one():
    train = trip_set(*TRAIN)
    with pytest.raises(InputError, match=r"^evaluate \(its synthetic set\) needs a TraceSet, got DataFrame; make one "
                                         r"of a frame of points with locsynth.from_frame\(frame\)"):
        evaluate(train, train, train.to_frame())
    with pytest.raises(InputError, match=r"^evaluate \(its synthetic set\) needs a TraceSet, got None$"):
        evaluate(train, train, None)
    with pytest.raises(InputError, match=r"^evaluate \(its test set\) needs a TraceSet, got str; load a TraceSet"):
        evaluate(train, "test", train)


def test_evaluate_on_trips_gives_the_trip_metrics_of_metrics_trips():
    train, test, syn = trip_set(*TRAIN), trip_set(*TEST), trip_set(*SYNTHETIC)
    report = evaluate(train, test, syn, seed=3)            # default attacks: those of users skipped, with reasons
    attacks = [key for name in ("distance_mia", "copies", "near_copies", "sniffing", "bayesian", "outliers")
               for key in group(name).keys]
    times = list(group("trip_times").keys)               # trips with hours and instants have times
    realism = list(group("realism").keys)
    assert list(report.metrics) == list(TRIPS) + times + list(STANDARD) + realism + attacks
    for name, other in (("synthetic", syn), ("training", train)):
        jsd, emd = trip_length_jsd(test, other), source_destination_emd(test, other, seed=3)
        top = frequent_pattern_precision(test, other)
        m = {k: v[name] for k, v in report.metrics.items()}
        assert m["trip_length_jsd"] == jsd["overall"] and m["trip_sd_emd_m"] == emd["overall"]
        assert m["trip_length_jsd_hourly"] == pytest.approx(np.nanmean(jsd["by_hour"]))
        assert m["trip_sd_emd_hourly_m"] == pytest.approx(np.nanmean(emd["by_hour"]))
        assert {k: m[f"trip_top{k}_precision"] for k in (10, 20, 50, 100)} == top
        curves = report.meta["trips"]
        for key, direct in (("length_jsd", jsd["by_hour"]), ("sd_emd_m", emd["by_hour"])):
            got = np.array([np.nan if v is None else v for v in curves[key][name]["by_hour"]])
            np.testing.assert_array_equal(got, direct)
    mapped = ["realism_far_cell", "realism_far_km"]                  # a uniform draw's points off the map
    assert all(row["uniform"] is None for key, row in report.metrics.items() if key not in attacks + times + mapped)
    assert all(0 <= report.metrics[key]["uniform"] <= 1 for key in mapped)
    assert report.metrics["trip_start_hour_jsd"]["uniform"] > 0          # all hours alike, against real hours
    skipped = {entry["group"]: entry for entry in report.meta["skipped"]}
    assert set(skipped) == {"population", "transitions", "visit_fractions", "sglt", "reid", "mia"}
    assert "tp_tv" in skipped["population"]["metrics"] and "paper 004 reports no attack" in skipped["mia"]["reason"]
    assert report.meta["trips"]["statistics"]["synthetic"]["trips"] == 4
    assert set(evaluate(train, test, syn, attacks=(), sglt=False).meta["skipped"][-1]["metrics"]) == {"vf_tv"}


def test_identical_trips_score_perfectly():
    test = trip_set(*TEST)
    m = evaluate(trip_set(*TRAIN), test, test, attacks=()).metrics
    for key in ("trip_length_jsd", "trip_length_jsd_hourly", "trip_sd_emd_m", "trip_sd_emd_hourly_m"):
        assert m[key]["synthetic"] == pytest.approx(0.0, abs=1e-9)
    assert all(m[f"trip_top{k}_precision"]["synthetic"] == 1.0 for k in (10, 20, 50, 100))


def test_trips_without_hours_and_the_js_distance(tmp_path):
    """NGRAM's trips have hour -1: one length divergence (no hourly mean), the EMD against each hour."""
    syn = trip_set(SYNTHETIC[0], [-1] * 4)
    report = evaluate(trip_set(*TRAIN), trip_set(*TEST), syn, attacks=())
    assert report.metrics["trip_length_jsd_hourly"]["synthetic"] is None
    assert report.metrics["trip_sd_emd_hourly_m"]["synthetic"] is not None
    assert report.meta["trips"]["length_jsd"]["synthetic"]["by_hour"] is None
    assert not report.meta["trips"]["synthetic_has_hours"]
    data = json.loads(report.to_json(tmp_path / "metrics.json"), parse_constant=lambda c: pytest.fail(c))
    assert data["_meta"]["kind"] == "trips"
    distance = evaluate(trip_set(*TRAIN), trip_set(*TEST), syn, attacks=(), jsd_distance=True)
    assert distance.metrics["trip_length_jsd"]["synthetic"] == pytest.approx(
        math.sqrt(report.metrics["trip_length_jsd"]["synthetic"]))
    assert distance.meta["trips"]["jsd"] == "distance"


def test_a_registered_metric_group_plugs_into_evaluate():
    """A new suite joins evaluate by registering a group (metrics/groups.py); a group that does not
    apply is listed with its reason, or left out silently."""
    from locsynth.metrics.groups import GroupResult, MetricGroup, register, row, unregister
    from locsynth.data.simulate import simulate

    city = simulate(40, seed=3)
    train, test = city.split(0.5, seed=0)
    synthetic = simulate(train.n_traces, seed=4)
    synthetic = synthetic.select_users(np.arange(train.n_traces))
    synthetic = type(synthetic)(synthetic.user, synthetic.t, synthetic.loc,
                                synthetic.users.assign(source=np.arange(train.n_traces, dtype=np.int32),
                                                       trace_no=np.int32(0)),
                                synthetic.space, synthetic.time, synthetic.info)
    events = MetricGroup("events", ("event_ratio",), lambda ctx: GroupResult(
        {"event_ratio": row(ctx.synthetic.n_events / ctx.test.n_events, ctx.train.n_events / ctx.test.n_events, None)},
        meta={"options": {"events": True}}))
    never = MetricGroup("never", ("never_*",), lambda ctx: GroupResult(), skip=lambda ctx: "not for this data")
    register(events)
    register(never)
    try:
        report = evaluate(train, test, synthetic, attacks=(), sglt=False)
    finally:
        unregister("events")
        unregister("never")
    assert report.metrics["event_ratio"]["synthetic"] == pytest.approx(synthetic.n_events / test.n_events)
    assert report.meta["options"]["events"] is True and "events" in report.meta["seconds"]
    assert report.meta["skipped"] == [{"group": "never", "metrics": ["never_*"], "reason": "not for this data"}]
    assert "tp_tv" in report.metrics and "event_ratio" not in evaluate(train, test, synthetic, attacks=(),
                                                                         sglt=False).metrics
