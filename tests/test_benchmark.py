"""locsynth benchmark (benchmark/runs.py, evaluation/report/leaderboard.py): the plan from the tags, equal sizes,
results.csv's rows, resuming, refusing other settings, the page's honest highlights, and the
cluster's results equal to the serial ones."""

import json
import re
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from helpers import trip_set
from locsynth import InputError
from locsynth.benchmark import runs as bm
from locsynth.cli import app
from locsynth.data.simulate import simulate


@pytest.fixture(scope="module")
def city(tmp_path_factory):
    """A small simulated city, prepared as 'locsynth prepare' writes it."""
    root = tmp_path_factory.mktemp("bench") / "city"
    train, test = simulate(60, seed=0).split(0.5, seed=0)
    train.save(root / "train")
    test.save(root / "test")
    return root


@pytest.fixture(scope="module")
def trips(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench") / "trips"
    trip_set([[0, 1, 2], [1, 2, 3], [3, 2], [0, 3], [2, 1]] * 4, [8, 9, 9, 10, 11] * 4).save(root / "train")
    trip_set([[0, 1], [1, 2, 3], [3, 2, 1]] * 3, [8, 9, 10] * 3).save(root / "test")
    return root


def test_a_reference_store_from_another_version_is_made_afresh(trips, tmp_path, monkeypatch):
    """A store pickled by a version whose classes lived elsewhere (before the package's folders,
    say) cannot be read back: it is ignored, not an error."""
    import pickle
    import sys
    import types

    from locsynth.data.traces import TraceSet

    train, test = TraceSet.load(trips / "train"), TraceSet.load(trips / "test")
    digest = bm.real_sets_digest(train, test)
    gone = types.ModuleType("locsynth.gone")
    gone.Kept = type("Kept", (), {"__module__": "locsynth.gone"})
    monkeypatch.setitem(sys.modules, "locsynth.gone", gone)
    (tmp_path / bm.REFERENCES_FILE).write_bytes(pickle.dumps({"digest": digest, "store": {"x": gone.Kept()}}))
    monkeypatch.delitem(sys.modules, "locsynth.gone")
    monkeypatch.setattr(bm, "_REFERENCES", {})
    assert bm.references(tmp_path, train, test) == ({}, 0, digest)


def test_the_plan_sweeps_epsilon_for_methods_that_take_one_and_lists_what_does_not_fit(city, trips):
    runs, skipped = bm.plan([city, trips], ["tpm", "sgd", "ngram", "colocation"], [0.5, 2], 2)
    keys = {(r.dataset, r.method, r.epsilon) for r in runs}
    assert ("city", "tpm", 0.5) in keys and ("city", "tpm", 2) in keys and ("city", "sgd", None) in keys
    assert ("trips", "ngram", 2) in keys and not any(m == "tpm" and d == "trips" for d, m, _ in keys)
    assert len(runs) == len(keys) * 2
    reasons = {(s["dataset"], s["method"]): s["reason"] for s in skipped}
    assert "not trips" in reasons[("trips", "tpm")] and ("trips", "sgd") in reasons
    assert ("city", "colocation", None) in keys          # the simulated city has a friend graph
    with pytest.raises(InputError, match="no train/ set"):
        bm.plan([city.parent], ["tpm"], [1], 1)
    with pytest.raises(InputError, match="unknown method"):
        bm.plan([city], ["tmp"], [1], 1)


def test_parse_params_reads_values_and_names_the_valid_ones():
    assert bm.parse_params(["ppmtf.iterations=20", "sglt.tool=true", "privtrace.split=0.2,0.5,0.3"]) == \
        {"ppmtf": {"iterations": 20}, "sglt": {"tool": True}, "privtrace": {"split": (0.2, 0.5, 0.3)}}
    with pytest.raises(InputError, match="tool must be true or false, got 'fast'"):
        bm.parse_params(["sglt.tool=fast"])
    with pytest.raises(InputError, match="its parameters: .*iterations"):
        bm.parse_params(["ppmtf.sweeps=20"])
    with pytest.raises(InputError, match="METHOD.NAME=VALUE"):
        bm.parse_params(["iterations=20"])


@pytest.mark.slow
def test_benchmark_writes_results_of_the_reference_size_resumes_and_refuses_other_settings(city, tmp_path,
                                                                                           monkeypatch):
    out = tmp_path / "bench"
    results = bm.run_benchmark([city], out, methods=["tpm", "uniform", "training"], epsilons=[1.0, 4.0],
                               repeats=2, attacks=["mia"])
    test_size = len(pd.read_parquet(city / "test" / "users.parquet"))
    records = [json.loads(p.read_text()) for p in out.glob("runs/**/run.json")]
    assert len(records) == 2 * 2 + 2 + 2
    assert all(r["traces"] == test_size for r in records)
    frame = pd.read_csv(out / "results.csv")
    assert list(frame.columns) == ["dataset", "method", "kind", "epsilon", "swept", "repeat", "metric", "value"]
    assert len(frame) == len(results)
    assert set(frame.loc[frame.method == "tpm", "epsilon"]) == {1.0, 4.0}
    assert {"query_error", "kendall_tau", "tp_tv", "mia_advantage"} <= set(frame.metric)
    assert set(frame.loc[frame.method == "training", "kind"]) == {"baseline"}
    # the same training set against itself: the standard suite's training row is the baseline's
    same = frame[(frame.method == "training") & (frame.metric == "pattern_f1")]
    assert (same.value > 0).all()

    calls = []
    real_run = bm.run_one
    monkeypatch.setattr(bm, "run_one", lambda run, *a: calls.append(run) or real_run(run, *a))
    bm.run_benchmark([city], out, methods=["tpm", "uniform", "training"], epsilons=[1.0, 4.0], repeats=3,
                     attacks=["mia"])
    assert sorted((c.method, c.epsilon, c.repeat) for c in calls) == [("tpm", 1.0, 2), ("tpm", 4.0, 2),
                                                                      ("training", None, 2), ("uniform", None, 2)]
    with pytest.raises(InputError, match="other settings .*size"):
        bm.run_benchmark([city], out, methods=["tpm"], epsilons=[1.0], repeats=1, attacks=["mia"], size=5)
    # one flavour of the standard suite per benchmark: recorded, named on the page, another refused
    assert json.loads((out / "benchmark.json").read_text())["standard_flavour"] == "adatrace"
    assert "the <b>adatrace</b> flavour" in (out / "leaderboard.html").read_text()
    with pytest.raises(InputError, match="other settings .*standard_flavour: 'adatrace'"):
        bm.run_benchmark([city], out, methods=["tpm"], epsilons=[1.0], repeats=1, attacks=["mia"],
                         standard_flavour="corrected")
    with pytest.raises(InputError, match="standard_flavour must be one of adatrace, corrected, ldptrace"):
        bm.run_benchmark([city], tmp_path / "other", methods=["tpm"], standard_flavour="java")


def test_the_leaderboard_marks_no_baseline_best_and_ranks_only_protecting_methods(city, tmp_path):
    out = tmp_path / "bench"
    bm.run_benchmark([city], out, methods=["sgd", "uniform", "training", "krr"], epsilons=[1.0], repeats=1,
                     attacks=["mia"])
    html = (out / "leaderboard.html").read_text()
    baseline_rows = re.findall(r'<tr class="baseline">(.*?)</tr>', html, flags=re.S)
    assert len(baseline_rows) == 2 and not any('class="best"' in row for row in baseline_rows)
    assert all("<td>—</td>" in row for row in baseline_rows)        # no rank
    assert html.count('class="best"') >= 9
    assert "Privacy-utility frontier on city" in html and "Utility against epsilon on city" in html


@pytest.mark.slow
def test_runs_on_a_cluster_equal_the_serial_runs(city, tmp_path):
    from locsynth.core.parallel import executor

    kwargs = dict(methods=["sgd", "uniform"], epsilons=[1.0], repeats=2, attacks=["mia"])
    serial = bm.run_benchmark([city], tmp_path / "serial", **kwargs)
    with executor(2) as client:
        cluster = bm.run_benchmark([city], tmp_path / "cluster", client=client, **kwargs)
    pd.testing.assert_frame_equal(serial, cluster)


def test_the_command_line_runs_and_prints_a_table(city, tmp_path):
    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["benchmark", "--data", str(city), "--methods", "tpm,uniform",
                                      "--epsilon", "1", "--repeats", "1", "--attacks", "mia", "--out", str(out),
                                      "--standard-flavour", "corrected"])
    assert result.exit_code == 0, result.output
    assert "tpm ε=1" in result.output and "results.csv" in result.output and "corrected flavour" in result.output
    file = next((out / "runs").glob("**/metrics.json"))
    metrics = json.loads(file.read_text())
    assert metrics["_meta"]["standard"]["flavour"] == "corrected"
    bad = CliRunner().invoke(app, ["benchmark", "--data", str(city), "--epsilon", "one", "--out", str(out)])
    assert bad.exit_code == 1 and "--epsilon takes numbers" in bad.output
    # a finished run's metrics.json cut short: one line naming it and how to redo that run alone (issue 53)
    text = file.read_text()
    file.write_text(text[: len(text) // 2])
    again = ["benchmark", "--data", str(city), "--methods", "tpm,uniform", "--epsilon", "1", "--repeats", "1",
             "--attacks", "mia", "--out", str(out), "--standard-flavour", "corrected"]
    bad = CliRunner().invoke(app, again)
    lines = [line for line in bad.output.splitlines() if line.strip() and not line.startswith(("plan", "skip"))]
    assert bad.exit_code == 1 and "Traceback" not in bad.output, bad.output
    assert f"error: {file} is damaged" in " ".join(bad.output.split()) and "rerun the same command" in bad.output
    assert lines[-1].startswith("error: ")
    shutil.rmtree(file.parent)
    assert CliRunner().invoke(app, again).exit_code == 0
    assert json.loads(file.read_text())["_meta"]["standard"]["flavour"] == "corrected"


def test_a_second_benchmark_on_one_folder_is_refused_and_a_stale_lock_taken_over(tmp_path):
    """Two benchmarks on one folder used to run every job twice: the folder's lock names the
    process that holds it; a lock whose process is gone, or is not locsynth (pid 1, which the
    earlier lock refused forever), is taken over, and the lock leaves with the benchmark."""
    import os
    import subprocess
    import sys

    from locsynth.benchmark.runs import folder_lock

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from locsynth.benchmark.runs import folder_lock\n"
                               "with folder_lock(Path(sys.argv[1])):\n print('held', flush=True); time.sleep(60)",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(InputError, match=rf"another locsynth process {holder.pid} .* is writing {tmp_path} "
                                             rf"\(a benchmark\).*remove"):
            with folder_lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    for stale in ("999999999", "1"):                                    # no such process; not locsynth
        (tmp_path / ".lock").write_text(stale)
        with folder_lock(tmp_path):
            assert f'"pid": {os.getpid()}' in (tmp_path / ".lock").read_text()
        assert not (tmp_path / ".lock").exists()


