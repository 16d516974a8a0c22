"""One suite for every synthesizer (STYLE.md): the protocol, seeds, save/load, output shape."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from locsynth import InputError
from locsynth.cli import app
from locsynth.simulate import simulate
from locsynth.synth import PPMTF, PPMTFPlus, SGD, Training, Uniform, load_model
from locsynth.synth.base import NotFittedError

FAST = {"ppmtf": dict(iterations=4, rho=50), "ppmtf-plus": dict(iterations=4, rho=50)}
KINDS = [PPMTF, PPMTFPlus, SGD, Uniform, Training]


@pytest.fixture(scope="module")
def city():
    return simulate(80, seed=3).split(0.5, seed=0)[0]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_protocol(kind, city, tmp_path):
    model = kind(**FAST.get(kind.name, {}))
    with pytest.raises(NotFittedError, match="not fitted"):
        model.sample()
    assert model.fit(city) is model
    a = model.sample(traces_per_user=2, seed=4)
    b = model.sample(traces_per_user=2, seed=4)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t)
    assert a.synthetic and a.n_traces == 2 * city.n_traces
    assert a.loc.min() >= 0 and a.loc.max() < city.space.n_locations
    if kind is not Training:
        assert (a.counts() == city.time.instants_per_day).all()
        assert not np.array_equal(a.loc, model.sample(traces_per_user=2, seed=5).loc)
    model.save(tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert type(back) is kind and back.get_params() == model.get_params()
    assert np.array_equal(back.sample(traces_per_user=2, seed=4).loc, a.loc)
    with pytest.raises(InputError, match="exists"):
        model.save(tmp_path / "m")


def test_load_refuses_other_directories(tmp_path, city):
    with pytest.raises(InputError, match="no model.json"):
        load_model(tmp_path)
    Uniform().fit(city).save(tmp_path / "u")
    with pytest.raises(InputError, match="holds a Uniform, not a PPMTF"):
        PPMTF.load(tmp_path / "u")


def test_sgd_copies_the_first_events(city):
    syn = SGD(xi=3).fit(city).sample(seed=1)
    for n in range(5):
        t, loc = city.events_of(n)
        t_s, loc_s = syn.events_of(n)
        first = t < 3
        assert np.array_equal(loc_s[t[first]], loc[first])


runner = CliRunner()


def test_cli_fit_sample_pdtest_demo(city, tmp_path):
    city.save(tmp_path / "train")
    res = runner.invoke(app, ["fit", "ppmtf", str(tmp_path / "train"), "--out", str(tmp_path / "m"),
                              "--iterations", "3", "--rho", "50"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["sample", str(tmp_path / "m"), "--out", str(tmp_path / "s"), "--traces-per-user", "3"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["pdtest", str(tmp_path / "m"), str(tmp_path / "s"), "--k", "2", "--out",
                              str(tmp_path / "pd")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "pd" / "pdtest.json").read_text())
    assert 0 <= summary["pass_rate"] <= 1 and summary["traces"] == 3 * city.n_traces
    res = runner.invoke(app, ["fit", "gan", str(tmp_path / "train"), "--out", str(tmp_path / "g")])
    assert res.exit_code == 2 and "unknown method 'gan'" in res.output
    res = runner.invoke(app, ["sample", str(tmp_path / "m"), "--out", str(tmp_path / "s2"), "--users", "5"])
    assert res.exit_code == 2 and "ppmtf-plus only" in res.output
    # the demo on a prepared pair
    test = simulate(80, seed=4).split(0.5, seed=0)[1]
    city.save(tmp_path / "pair" / "train")
    test.save(tmp_path / "pair" / "test")
    res = runner.invoke(app, ["demo", "--data", str(tmp_path / "pair"), "--out", str(tmp_path / "demo"),
                              "--iterations", "3"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "demo" / "report.html").is_file() and "PPMTF" in res.output
