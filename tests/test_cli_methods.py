"""The method commands end to end: fit / sample / pdtest / anonymize / release / evaluate / info /
methods / demo, hyperparameters from signatures, releases that name nobody, and the ledger."""

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from locsynth import InputError, TraceSet
from locsynth.cli import app
from locsynth.data.simulate import simulate
from locsynth.synth import PPMTF, SGD, Uniform, load_model

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def ok(*args):
    res = run(*args)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("city")
    city = simulate(100, seed=3)
    train, test = city.split(0.5, seed=0)
    train.save(d / "train")
    test.save(d / "test")
    return d


def test_fit_takes_hyperparameters_from_the_signature(pair, tmp_path):
    ok("fit", "ppmtf", pair / "train", "--out", tmp_path / "m", "--alpha", "150", "--iterations", "2",
       "--rho=50", "--lambda", "80", "--param", "rank=4", "--seed", "3")
    params = json.loads((tmp_path / "m" / "model.json").read_text())["params"]
    assert (params["alpha"], params["iterations"], params["rho"], params["lam"], params["rank"], params["seed"]) == \
        (150.0, 2, 50, 80, 4, 3)
    res = run("fit", "ppmtf", pair / "train", "--out", tmp_path / "x", "--alpah", "1")
    assert res.exit_code == 1 and "ppmtf has no hyperparameter --alpah; its hyperparameters: --alpha" in res.output
    res = run("fit", "ppmtf", pair / "train", "--out", tmp_path / "x", "--rank", "many")
    assert res.exit_code == 1 and "--rank must be an integer, got 'many' (ppmtf)" in res.output
    res = run("fit", "gan", pair / "train", "--out", tmp_path / "x")
    assert res.exit_code == 1 and "unknown method 'gan'" in res.output
    res = run("fit", "krr", pair / "train", "--out", tmp_path / "x")
    assert res.exit_code == 1 and "anonymizer" in res.output
    res = run("fit", "sgd", pair / "train", "--out", tmp_path / "x", "--checkpoint", tmp_path / "ck")
    assert res.exit_code == 1 and "sgd has no hyperparameter --checkpoint; its hyperparameters: --xi" in res.output
    assert not (tmp_path / "x").exists()
    ok("fit", "sgd", pair / "train", "--out", tmp_path / "sgd", "--xi", "2")
    assert load_model(tmp_path / "sgd").xi == 2


def test_sample_has_one_path_and_refuses_options_a_method_lacks(pair, tmp_path):
    ok("fit", "ppmtf", pair / "train", "--out", tmp_path / "m", "--iterations", "2", "--rho", "50")
    ok("sample", tmp_path / "m", "--out", tmp_path / "s", "--traces-per-user", "3", "--users", "5")
    syn = TraceSet.load(tmp_path / "s")
    assert syn.n_traces == 15 and sorted(set(syn.users["source"])) == [0, 1, 2, 3, 4]
    res = run("sample", tmp_path / "m", "--out", tmp_path / "x", "--home-regions")
    assert res.exit_code == 1 and "ppmtf has no sample option --home-regions; its sample options: --instants" \
        in res.output
    res = run("sample", tmp_path / "m", "--out", tmp_path / "x", "--users", "51")
    assert res.exit_code == 1 and "too many" in res.output
    ok("fit", "uniform", pair / "train", "--out", tmp_path / "u")
    res = run("sample", tmp_path / "u", "--out", tmp_path / "x", "--instants", "5")
    assert res.exit_code == 1 and "uniform has no sample option --instants; its sample options: none" in res.output
    res = run("sample", tmp_path / "u", "--out", tmp_path / "x", "--workers", "2")
    assert res.exit_code == 1 and "--workers and --scheduler do not apply to uniform" in res.output
    ok("fit", "ppmtf-plus", pair / "train", "--out", tmp_path / "p", "--iterations", "2", "--rho", "50")
    ok("sample", tmp_path / "p", "--out", tmp_path / "v", "--users", "120", "--home-regions")
    virtual = TraceSet.load(tmp_path / "v")
    assert virtual.n_traces == 120 and (virtual.users["source"] == -1).all() and "home" in virtual.users
    assert not (tmp_path / "x").exists()


def test_release_keeps_passing_traces_names_nobody_and_evaluates_with_its_key(pair, tmp_path):
    ok("fit", "ppmtf", pair / "train", "--out", tmp_path / "m", "--iterations", "3", "--rho", "50")
    ok("sample", tmp_path / "m", "--out", tmp_path / "s", "--traces-per-user", "4", "--seed", "1")
    ok("pdtest", tmp_path / "m", tmp_path / "s", "--out", tmp_path / "pd", "--k", "2")
    ok("release", tmp_path / "s", "--out", tmp_path / "rel", "--pdtest", tmp_path / "pd", "--key", tmp_path / "key.csv")
    syn = TraceSet.load(tmp_path / "s")
    passed = pd.read_csv(tmp_path / "pd" / "pdtest.csv")["passed"].to_numpy()
    assert 0 < passed.sum() < passed.size
    released = pd.read_csv(tmp_path / "rel" / "traces.csv")
    assert released.columns.tolist() == ["pseudonym", "datetime", "lat", "lon", "location_id"]
    assert released["pseudonym"].nunique() == passed.sum()
    assert sorted(released["pseudonym"].unique()) == list(range(1, passed.sum() + 1))
    text = "\n".join(p.read_text() for p in (tmp_path / "rel").iterdir() if p.suffix in (".csv", ".json", ".md"))
    for word in ("source", "trace_no", "loglik", "user_id"):
        assert word not in text, word
    card = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert card["pd_test"]["k"] == 2 and card["traces"] == passed.sum() and card["ledger"]["spends"]
    assert card["training"]["users"] == 50
    # the key links each pseudonym to its source, and the passing traces are exactly the released ones
    key = pd.read_csv(tmp_path / "key.csv")
    kept = syn.users[passed]
    assert sorted(zip(key["source"], key["trace_no"])) == sorted(zip(kept["source"], kept["trace_no"]))
    # evaluation of the release with its key = evaluation of the synthetic set restricted to those traces
    ok("evaluate", "--train", pair / "train", "--test", pair / "test", "--synthetic", tmp_path / "rel",
       "--key", tmp_path / "key.csv", "--out", tmp_path / "ev-rel")
    syn.select_users(np.flatnonzero(passed)).save(tmp_path / "kept")
    ok("evaluate", "--train", pair / "train", "--test", pair / "test", "--synthetic", tmp_path / "kept",
       "--out", tmp_path / "ev-kept")
    a, b = (json.loads((tmp_path / d / "metrics.json").read_text()) for d in ("ev-rel", "ev-kept"))
    assert a["reid_rate"] == b["reid_rate"] and a["mia_advantage"] == b["mia_advantage"] and a["tp_tv"] == b["tp_tv"]
    # a PD result of another set, a key inside the release, a key without a release are refused
    ok("sample", tmp_path / "m", "--out", tmp_path / "s2", "--seed", "2")
    res = run("release", tmp_path / "s2", "--out", tmp_path / "r2", "--pdtest", tmp_path / "pd")
    assert res.exit_code == 1 and "run on another synthetic set" in res.output
    res = run("release", tmp_path / "s", "--out", tmp_path / "r3", "--key", tmp_path / "r3" / "key.csv")
    assert res.exit_code == 1 and "inside the release" in res.output
    res = run("evaluate", "--train", pair / "train", "--test", pair / "test", "--synthetic", tmp_path / "s",
              "--key", tmp_path / "key.csv", "--out", tmp_path / "ev3")
    assert res.exit_code == 1 and "--key goes with a release" in res.output
    res = run("release", pair / "train", "--out", tmp_path / "r4")
    assert res.exit_code == 1 and "no source column" in res.output
    assert not any((tmp_path / d).exists() for d in ("r2", "r3", "r4", "ev3"))
    # the card carries what the attacks learned, when an evaluation is given
    ok("evaluate", "--train", pair / "train", "--test", pair / "test", "--synthetic", tmp_path / "s",
       "--out", tmp_path / "ev-s")
    ok("release", tmp_path / "s", "--out", tmp_path / "r5", "--pdtest", tmp_path / "pd", "--evaluation", tmp_path / "ev-s")
    card = json.loads((tmp_path / "r5" / "release.json").read_text())
    assert card["attacks"]["reid_rate"] is not None and "this synthetic set" in card["attacks"]["evaluated"]
    assert "What an attacker was measured to learn" in (tmp_path / "r5" / "RELEASE.md").read_text()


def test_info_shows_the_ledger_of_a_model_a_synthetic_set_and_a_release(pair, tmp_path):
    ok("fit", "ppmtf", pair / "train", "--out", tmp_path / "m", "--iterations", "2", "--rho", "50")
    ok("sample", tmp_path / "m", "--out", tmp_path / "s")
    ok("release", tmp_path / "s", "--out", tmp_path / "r")
    for path, kind in ((tmp_path / "m", "model"), (tmp_path / "s", "traceset"), (tmp_path / "r", "release")):
        res = ok("info", path)
        assert "privacy: per user: no differential-privacy guarantee; posterior-sampling would give epsilon" in \
            " ".join(res.output.split())
        facts = json.loads(ok("info", path, "--json").stdout)
        assert facts["kind"] == kind and facts["ledger"]["spends"][0]["holds"] is False
    res = ok("info", pair / "train")
    assert "privacy: no privacy ledger (real data)" in res.output
    ok("anonymize", "krr", pair / "train", "--out", tmp_path / "k", "--epsilon", "2")
    facts = json.loads(ok("info", tmp_path / "k", "--json").stdout)
    assert facts["ledger"]["totals"]["event"]["epsilon"] == pytest.approx(2.0)
    res = run("anonymize", "krr", pair / "train", "--out", tmp_path / "k2", "--epsilon", "-1")
    assert res.exit_code == 1 and "epsilon must be a positive finite number" in res.output


@pytest.mark.parametrize("columns", ["60", "200"])
def test_methods_lists_every_method_and_its_hyperparameters(columns, monkeypatch):
    """Whatever the terminal's width, every method's name is whole (#22)."""
    from locsynth.cli import common as cli_common

    monkeypatch.setenv("COLUMNS", columns)
    cli_common._console.cache_clear()
    try:
        res = ok("methods")
        for name in ("ppmtf", "ppmtf-plus", "sgd", "uniform", "training", "krr", "planar-laplace"):
            assert name in res.output
        res = ok("methods", "ppmtf")
        assert "--alpha" in res.output and "200.0" in res.output and "--checkpoint" in res.output
    finally:
        cli_common._console.cache_clear()


@pytest.mark.parametrize("columns", [80, 120])
def test_methods_is_one_line_a_method_at_any_width(columns, monkeypatch):
    """At 80 columns the list gave its installed column 23 characters for 'yes' and wrapped each
    description over 5-7 lines (issue 53): now one line a method, grouped by kind, the description
    cut to the width with an ellipsis; a method whose extra is missing says 'no' and how to install it."""
    from locsynth.cli import common as cli_common
    from locsynth.synth import registry

    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    registry.register("dp-trips", "locsynth.no_such_module", "Nope", "synthesizer", "DP trips that need torch",
                      requires=("no_such_dependency_xyz",), extra="dp")
    cli_common._console.cache_clear()
    try:
        lines = ok("methods").output.splitlines()
    finally:
        cli_common._console.cache_clear()
    assert max(len(line.rstrip()) for line in lines) <= columns
    for name in registry.names():
        rows = [line for line in lines if line.startswith(" ") and line.split()[:1] == [name]]   # table rows
        assert len(rows) == 1, (name, rows)
        assert rows[0].split()[1] == ("no" if name == "dp-trips" else "yes")
    adatrace = next(line for line in lines if line.startswith(" adatrace "))
    assert adatrace.index("density-aware grid") < 35 and adatrace.rstrip().endswith("…")   # 108 characters cut
    headings = [line.strip() for line in lines if line.strip() in ("synthesizers", "anonymizers")]
    assert headings == ["synthesizers", "anonymizers"]
    assert "dp-trips is not installed: pip install 'locsynth[dp]'" in lines


def test_load_refuses_other_directories(pair, tmp_path):
    with pytest.raises(InputError, match="no model.json"):
        load_model(tmp_path)
    Uniform().fit(TraceSet.load(pair / "train")).save(tmp_path / "u")
    with pytest.raises(InputError, match="holds a Uniform, not a PPMTF"):
        PPMTF.load(tmp_path / "u")


def test_sgd_copies_the_first_events(pair):
    train = TraceSet.load(pair / "train")
    syn = SGD(xi=3).fit(train).sample(seed=1)
    for n in range(5):
        t, loc = train.events_of(n)
        t_s, loc_s = syn.events_of(n)
        first = t < 3
        assert np.array_equal(loc_s[t[first]], loc[first])


@pytest.mark.slow
def test_demo_runs_every_method_on_a_prepared_pair(pair, tmp_path):
    res = ok("demo", "--data", pair, "--out", tmp_path / "demo", "--iterations", "3")
    for name in ("ppmtf", "ppmtf-plus", "sgd", "uniform", "training", "krr", "planar-laplace"):
        assert name in res.output and (tmp_path / "demo" / name / "evaluation" / "metrics.json").is_file()
    html = (tmp_path / "demo" / "report.html").read_text()
    assert "ppmtf/evaluation/report.html" in html and "epsilon = 1 per event" in html
    summary = json.loads((tmp_path / "demo" / "demo.json").read_text())
    assert summary["methods"]["ppmtf"]["pd_pass_rate"] is not None
    # MRLH's deleted and generalized events are scored by the contest, not by evaluate
    assert "contest" in summary["skipped"]["mrlh"]
    # DPTrip is made for trips (and needs the dp extra): the city's daily traces are not its input
    assert set(summary["skipped"]) <= {"mrlh", "dptrip"} and "dptrip" not in summary["methods"]
