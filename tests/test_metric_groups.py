"""Metric groups declare themselves (issue #36): every built-in group passes check_metric_group, and
a toy group in one new module, loaded as a plugin with no edit elsewhere, reaches evaluate's
options, metrics.json, report.html, compare and the benchmark page."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import trip_set
import locsynth
from locsynth import InputError
from locsynth.evaluation import suite
from locsynth.testing import check_metric_group

TOY = '''
"""A toy metric group: the gap in the share of events at locations whose id is a multiple of toy_bins."""
from locsynth.metrics.groups import GroupResult, Metric, MetricGroup, count, register, row


def share(ts, k):
    return float((ts.loc % k == 0).mean())


def compute(ctx):
    k = ctx.option("toy_bins")
    real = share(ctx.test, k)
    return GroupResult({"toy_gap": row(abs(share(ctx.synthetic, k) - real), abs(share(ctx.train, k) - real), None)})


register(MetricGroup("toy", (Metric("toy_gap", "Toy multiple-of-{toy_bins} gap", "gap in the share of events at "
                                    "locations whose id is a multiple of {toy_bins}", range=(0.0, 1.0)),),
                     compute, options=(count("toy_bins", 2, "Toy: the divisor of the location ids."),),
                     fields=lambda options, space: {"toy_bins": options["toy_bins"]}))
'''


def daily(users=60, seed=5):
    from locsynth.data.simulate import simulate
    from locsynth.synth.baselines import Uniform

    train, test = simulate(users, seed=seed).split(0.5, seed=0)
    return train, test, Uniform().fit(train).sample(seed=1)


@pytest.mark.parametrize("name", [n for n in suite.BUILT_IN if n not in ("trips", "trip_times", "realism",
                                                                           "colocations", "clusters")])
def test_every_built_in_group_of_daily_traces_passes_the_check(name):
    group = suite._built_in(name)
    keys = check_metric_group(group, data=daily())
    assert keys and set(keys) <= set(group.keys)


def test_the_trip_colocation_and_cluster_groups_pass_the_check():
    from dataclasses import replace

    from locsynth.synth.ppmtf import PPMTF

    trips = trip_set([[0, 1, 2], [1, 2, 3], [2, 1], [3, 2, 1, 0]] * 5, [8, 9, 8, 10] * 5)
    assert check_metric_group(suite._built_in("trips"), data=(trips, trips, trips))
    timed = locsynth.NGRAM(epsilon=50.0).fit(trips).sample(40, seed=0)
    assert check_metric_group(suite._built_in("trip_times"), data=(trips, trips, timed))
    assert check_metric_group(suite._built_in("realism"), data=(trips, trips, timed))
    train, test, synthetic = daily()
    edges = np.array([[0, 1], [1, 2], [2, 3]], np.int32)
    friends = (replace(train, friends=edges), test, replace(synthetic, friends=edges))
    assert check_metric_group(suite._built_in("colocations"), data=friends)
    factors = PPMTF(iterations=2, rho=20).fit(train).factors_["A"]
    assert check_metric_group(suite._built_in("clusters"), data=(train, test, synthetic),
                              options={"user_factors": factors}) == ["cluster_tv"]


def test_check_metric_group_catches_an_undeclared_key_and_a_figure_that_is_no_png():
    from locsynth.metrics.groups import Figure, GroupResult, Metric, MetricGroup, row

    sloppy = MetricGroup("sloppy", (Metric("a", "A"),), lambda ctx: GroupResult({"a": row(1, 1, 1), "b": row(1, 1, 1)}))
    with pytest.raises(AssertionError, match="does not declare: b"):
        check_metric_group(sloppy, data=daily())
    blank = MetricGroup("blank", (Metric("a", "A"),), lambda ctx: GroupResult({"a": row(1, 1, 1)}),
                        figures=(Figure("nothing", "a caption", "alt", lambda d, m: b""),))
    with pytest.raises(AssertionError, match="not a PNG"):
        check_metric_group(blank, data=daily())
    with pytest.raises(InputError, match="goal must be one of lower, higher"):
        Metric("c", "C", goal="up")


def test_evaluate_validates_options_against_the_declarations():
    from locsynth.evaluation.evaluate import evaluate

    train, test, synthetic = daily(40)
    with pytest.raises(InputError, match="unknown evaluate option.*no_such.*the options are"):
        evaluate(train, test, synthetic, options={"no_such": 1})
    with pytest.raises(InputError, match="vf_bins must be a whole number"):
        evaluate(train, test, synthetic, vf_bins=0)
    with pytest.raises(InputError, match="standard_flavour must be one of adatrace, corrected, ldptrace"):
        evaluate(train, test, synthetic, options={"standard_flavour": "mine"})
    with pytest.raises(InputError, match="unknown metric group"):
        evaluate(train, test, synthetic, groups=["population", "nope"])
    report = evaluate(train, test, synthetic, groups=["population"], options={"top": 10}, attacks="both")
    assert set(report.metrics) == {"tp_tv", "tp_tv_top50"} and report.meta["options"]["top"] == 10
    assert report.meta["options"]["attacks"] == ["reid", "mia", "distance_mia", "copies", "near_copies", "sniffing",
                                                 "bayesian", "outliers"]


def test_a_toy_group_in_one_new_module_reaches_every_surface(tmp_path):
    """Issue #36's acceptance: one new file, nothing edited; LOCSYNTH_PLUGINS names it."""
    from locsynth.data.simulate import simulate

    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "toy_metric.py").write_text(TOY)
    train, test = simulate(40, seed=2).split(0.5, seed=0)
    for name, ts in (("train", train), ("test", test)):
        ts.save(tmp_path / "data" / name)
    env = {**os.environ, "LOCSYNTH_PLUGINS": "toy_metric",
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "plug"), os.environ.get("PYTHONPATH", "")])}

    def run(*args):
        done = subprocess.run([sys.executable, "-m", "locsynth.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert "--toy-bins" in run("evaluate", "--help")
    run("fit", "uniform", "data/train", "--out", "model")
    run("sample", "model", "--out", "syn", "--seed", "1")
    run("evaluate", "--train", "data/train", "--test", "data/test", "--synthetic", "syn", "--out", "ev",
        "--toy-bins", "3", "--attacks", "none")
    metrics = json.loads((tmp_path / "ev" / "metrics.json").read_text())
    assert "toy_gap" in metrics and metrics["_meta"]["options"]["toy_bins"] == 3
    assert "Toy multiple-of-3 gap" in (tmp_path / "ev" / "report.html").read_text()
    run("compare", "ev", "--out", "cmp", "--utility", "toy_gap", "--privacy", "tp_tv")
    assert "toy_gap" in (tmp_path / "cmp" / "compare.csv").read_text()
    assert "Toy multiple-of-" in (tmp_path / "cmp" / "compare.html").read_text()
    run("benchmark", "--data", "data", "--methods", "uniform,training", "--repeats", "1", "--attacks", "none",
        "--out", "bench")
    assert "toy_gap" in (tmp_path / "bench" / "results.csv").read_text()
    assert "Toy multiple-of-2 gap" in (tmp_path / "bench" / "leaderboard.html").read_text()


def test_one_progress_protocol_and_the_earlier_one_argument_form():
    """Issue #36: evaluate (like fit, the contest, the LBS scenario, the demo) calls
    progress(done, total, status); a one-argument callable, the form evaluate took before, gets the
    step's name."""
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.core.progress import reporter

    train, test, synthetic = daily(40)
    calls, steps = [], []
    evaluate(train, test, synthetic, groups=["population", "transitions"], attacks="none",
             progress=lambda done, total, status="": calls.append((done, total, status)))
    assert calls == [(0, 2, "population"), (1, 2, "transitions")]
    evaluate(train, test, synthetic, groups=["population"], attacks="none", progress=steps.append)
    assert steps == ["population"]
    reporter(None)(1, 2, "nothing happens")
