"""One suite for every registered method (scikit-learn's test_common, STYLE.md): the protocol,
seeds, save/load, shapes, ledgers and bad input, driven by each method's capability tags. A
method joins this suite by registering."""

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, registry
from locsynth.simulate import simulate
from locsynth.synth import NotFittedError, load_model

#: hyperparameters that keep the slow methods quick here
FAST = {"ppmtf": dict(iterations=4, rho=50), "ppmtf-plus": dict(iterations=4, rho=50), "sglt": dict(clusters=8)}
SYNTHESIZERS = registry.names("synthesizer")
ANONYMIZERS = registry.names("anonymizer")


def make(name, **params):
    return registry.get(name)(**{**FAST.get(name, {}), **params})


@pytest.fixture(scope="module")
def train():
    """40 simulated users with a friend graph and location categories, so that methods needing
    either can run."""
    ts = simulate(80, seed=3).split(0.5, seed=0)[0]
    rng = np.random.default_rng(0)
    edges = np.unique(np.sort(rng.integers(0, ts.n_traces, (60, 2)), axis=1), axis=0)
    g = ts.space
    categories = np.array(["home", "work", "shop", "park"], dtype=object)[np.arange(g.n_locations) % 4]
    space = Grid(g.rows, g.cols, g.bbox, category=categories)
    return replace(ts, friends=edges[edges[:, 0] < edges[:, 1]], space=space)


def traces_kwargs(model):
    import inspect

    return {"traces_per_user": 2} if "traces_per_user" in inspect.signature(model.sample).parameters else {}


@pytest.mark.parametrize("name", SYNTHESIZERS)
def test_synthesizer_protocol(name, train, tmp_path):
    model = make(name)
    assert model.get_params() == {**{k: p.default for k, p in type(model).hyperparameters().items()},
                                  **FAST.get(name, {})}
    with pytest.raises(NotFittedError, match="not fitted"):
        model.sample()
    assert model.fit(train) is model
    tags, per = model.tags, traces_kwargs(model)
    k = per.get("traces_per_user", 1)
    a, b = model.sample(seed=4, **per), model.sample(seed=4, **per)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t) and a.users.equals(b.users)
    # n: as many synthetic users as training users, or for a DP method its DP count, each with k traces
    size = model.training_.get("dp_count", train.n_traces)
    assert a.n_traces == k * size and a.synthetic and a.info["source"] == name
    assert not tags.dp or set(model.training_) <= {"dp_count", "unit", "dp_count_epsilon", "users"}
    assert a.loc.min() >= 0 and a.loc.max() < train.space.n_locations
    source = a.users["source"].to_numpy()
    assert ((source == -1).all() if tags.virtual_users else (np.sort(np.unique(source)) == np.arange(train.n_traces)).all())
    assert set(a.users["trace_no"]) == set(range(k))
    if not tags.ragged and name != "training":
        assert (a.counts() == train.time.instants_per_day).all()
        assert not np.array_equal(a.loc, model.sample(seed=5, **per).loc)
    # the ledger travels with the set; a DP method's spends hold
    assert a.ledger is not None and a.ledger.spends == model.ledger_.spends
    assert not tags.dp or any(s.holds for s in a.ledger.spends)
    few = model.sample(3, seed=4, **per)
    assert few.n_traces == 3 * k
    if tags.virtual_users:
        assert model.sample(2 * train.n_traces, seed=4).n_traces == 2 * train.n_traces
    else:
        assert np.array_equal(few.loc, a.select_users(np.arange(3 * k)).loc)   # the first 3 users' traces
        with pytest.raises(InputError, match="too many"):
            model.sample(train.n_traces + 1)
    # save and load give the same model
    model.save(tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert type(back) is type(model) and back.get_params() == model.get_params()
    assert back.ledger_.spends == model.ledger_.spends and back.training_ == model.training_
    assert np.array_equal(back.sample(seed=4, **per).loc, a.loc)
    with pytest.raises(InputError, match="exists"):
        model.save(tmp_path / "m")


@pytest.mark.parametrize("name", SYNTHESIZERS)
def test_synthesizer_bad_input(name, train):
    model = make(name)
    with pytest.raises(InputError, match="empty"):
        model.fit(train.select_users([]))
    with pytest.raises(InputError, match="needs a TraceSet"):
        model.fit("train.csv")
    model.fit(train)
    for kwargs, message in ((dict(n=0), "n must be at least 1"), (dict(days=0), "days must be at least 1"),
                            (dict(n=2.5), "n must be"), (dict(seed=0, n="x"), "n must be a whole number")):
        if kwargs.get("days") == 0 and name == "training":
            continue                      # the training traces have their own length
        with pytest.raises(InputError, match=message):
            model.sample(**kwargs)
    if model.tags.needs_friends:
        with pytest.raises(InputError, match="friend graph"):
            make(name).fit(replace(train, friends=None))


@pytest.mark.parametrize("name", ANONYMIZERS)
def test_anonymizer_protocol(name, train):
    anonymizer = make(name)
    out = anonymizer.transform(train, seed=1)
    assert out.n_traces == train.n_traces and np.array_equal(out.user, train.user)
    out.check()        # deleted and generalized events (MRLH) are valid codes with their location sets
    assert out.loc.max() < train.space.n_locations and out.info["source"] == name
    # each output trace comes from one input trace (itself, or another one for the cheating shuffle)
    source = out.users["source"].to_numpy()
    assert np.array_equal(np.sort(source), np.arange(train.n_traces))
    assert np.array_equal(out.t, train.select_users(source).t)
    assert repr(anonymizer).startswith(type(anonymizer).__name__ + "(")
    if anonymizer.tags.dp:
        assert out.ledger.spends and all(s.holds for s in out.ledger.spends)
        # DP noise is not seeded: the same seed gives other draws
        assert not np.array_equal(out.loc, anonymizer.transform(train, seed=1).loc)
        # spends add up when anonymized twice
        assert len(anonymizer.transform(out).ledger) == 2 * len(out.ledger)
    with pytest.raises(InputError, match="empty"):
        anonymizer.transform(train.select_users([]))
    with pytest.raises(InputError, match="needs a TraceSet"):
        anonymizer.transform(train.loc)


def test_krr_and_planar_laplace_parameters(train):
    from locsynth.anonymize.obfuscate import KRR, PlanarLaplace

    with pytest.raises(InputError, match="epsilon must be a positive finite number"):
        KRR(epsilon=-1).transform(train)
    with pytest.raises(InputError, match="r must be a positive finite number"):
        PlanarLaplace(r=0).transform(train)
    spend = KRR(epsilon=0.5).transform(train).ledger.spends[0]
    assert spend.epsilon == pytest.approx(0.5) and spend.unit == "event"
    spend = PlanarLaplace(l=2.0, r=0.5).transform(train).ledger.spends[0]
    assert spend.epsilon == pytest.approx(2.0) and spend.sensitivity == 500.0     # l = epsilon r, r in metres


def test_registry_names_lazy_imports_and_missing_extras(monkeypatch):
    with pytest.raises(InputError, match="unknown method 'gan'; expected one of .*ppmtf"):
        registry.get("gan")
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    registry.register("dp-trips", "locsynth.no_such_module", "Nope", "synthesizer", "needs torch",
                      requires=("no_such_dependency_xyz",), extra="dp")
    assert "dp-trips" in registry.names("synthesizer") and not registry.method("dp-trips").available()
    with pytest.raises(InputError, match=r"needs no_such_dependency_xyz.*pip install 'locsynth\[dp\]'"):
        registry.get("dp-trips")
    from typer.testing import CliRunner

    from locsynth.cli import app

    res = CliRunner().invoke(app, ["fit", "dp-trips", "train", "--out", "model"])
    assert res.exit_code == 2 and "pip install 'locsynth[dp]'" in res.output and "Traceback" not in res.output
    code = ("import sys, locsynth.cli, locsynth.synth, locsynth.registry; "
            "print(sorted(m for m in ('numba', 'locsynth.synth.ppmtf', 'opendp', 'torch', 'scipy.stats') "
            "if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
    code = "import sys, locsynth.cli; print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_demo_skips_a_method_whose_dependency_is_missing(monkeypatch, train, tmp_path):
    from locsynth.pipeline import run_demo, skip_reason

    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    registry.register("dp-trips", "locsynth.no_such_module", "Nope", "synthesizer", "needs torch",
                      requires=("no_such_dependency_xyz",), extra="dp")
    assert skip_reason("dp-trips", train) == "needs no_such_dependency_xyz: pip install 'locsynth[dp]'"
    test = simulate(60, seed=9).split(0.5, seed=0)[1]
    train.save(tmp_path / "pair" / "train")
    test.save(tmp_path / "pair" / "test")
    summary = run_demo(tmp_path / "demo", data=tmp_path / "pair", methods=["uniform", "krr", "dp-trips"])
    assert set(summary["methods"]) == {"uniform", "krr"} and "dp-trips" in summary["skipped"]
    table = pd.read_csv(tmp_path / "demo" / "compare.csv", index_col=0)
    assert {"uniform", "krr", "Training"} <= set(table.index) and "Uniform" not in table.index
    assert (tmp_path / "demo" / "krr" / "evaluation" / "report.html").is_file()


def test_demo_of_methods_that_cannot_be_reidentified_plots_membership_inference(train, tmp_path):
    """Virtual users have no re-identification rate, but every method has membership inference:
    the demo's trade-off plot has that panel, and TPM is on it."""
    from locsynth.pipeline import run_demo

    test = simulate(60, seed=9).split(0.5, seed=0)[1]
    train.save(tmp_path / "pair" / "train")
    test.save(tmp_path / "pair" / "test")
    summary = run_demo(tmp_path / "demo", data=tmp_path / "pair", methods=["tpm"])
    assert set(summary["methods"]) == {"tpm"}
    assert (tmp_path / "demo" / "tradeoff.png").read_bytes()[:4] == b"\x89PNG"
    assert "membership-inference panel" in (tmp_path / "demo" / "report.html").read_text()
