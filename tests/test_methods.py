"""One suite for every registered method (scikit-learn's test_common, STYLE.md): the protocol,
seeds, save/load, shapes, ledgers and bad input, driven by each method's capability tags. A
method joins this suite by registering."""

import subprocess
import sys
import pandas as pd
import pytest

from locsynth import InputError, registry
from locsynth.data.simulate import simulate
from locsynth.testing import check_data, check_method, method_checks

#: hyperparameters that keep the slow methods quick here
FAST = {"ppmtf": dict(iterations=4, rho=50), "ppmtf-plus": dict(iterations=4, rho=50), "sglt": dict(clusters=8),
        "dptrip": dict(epochs=1)}
SYNTHESIZERS = registry.names("synthesizer")
SLOW_CHECKS = ("check_dp_sensitivity", "check_huge_epsilon")
ANONYMIZERS = registry.names("anonymizer")


def make(name, **params):
    return registry.get(name)(**{**FAST.get(name, {}), **params})


@pytest.fixture(scope="module")
def train():
    """40 simulated users with a friend graph and location categories (locsynth.testing.check_data)."""
    return check_data()


def checks(names):
    """(method, check) pairs of locsynth.testing for the registered methods ``names``."""
    out = []
    for name in names:
        m = registry.method(name)
        if m.missing():
            out.append(pytest.param(name, None, marks=pytest.mark.skip(
                reason=f"{name} needs {', '.join(m.missing())}: pip install 'locsynth[{m.extra}]'")))
            continue
        # the DP-sensitivity check is a statistical audit, and at epsilon 1e9 NGRAM releases every
        # n-gram (14 s) and DPTrip trains: the fast loop leaves them out
        out += [pytest.param(name, check, id=f"{name}-{check.__name__}",
                             marks=[pytest.mark.slow] if check.__name__ in SLOW_CHECKS else [])
                for check in method_checks(registry.get(name))]
    return out


@pytest.mark.parametrize("name,check", checks(SYNTHESIZERS + ANONYMIZERS))
def test_every_registered_method_passes_the_common_checks(name, check, train):
    """locsynth.testing's checks (what a third party runs with check_method) on every method."""
    check(registry.get(name), train, FAST.get(name, {}))


def test_check_method_names_the_check_that_fails(train):
    """check_method is public and says which check a broken method fails."""
    from locsynth.synth.baselines import Uniform

    class Broken(Uniform):
        name = "broken"

        def _fit(self, train, *, progress=None, client=None):
            super()._fit(train)
            return None                                # fit must return self

    with pytest.raises(AssertionError, match="Broken fails check_fit_returns_self_and_keeps_parameters"):
        check_method(Broken, data=train)
    assert "check_save_load" not in check_method("krr", data=train)
    assert "check_bad_input" in check_method("uniform", data=train)


def test_a_dp_method_that_ignores_the_seed_fails_even_after_a_second_fit(train):
    """check_sample_is_seeded fits a DP method again when two seeds agree (its noise may leave a
    model with nothing random in it); a sample that ignores the seed still fails."""
    from locsynth.synth.ngram import NGRAM
    from locsynth.testing import check_sample_is_seeded

    class SeedBlind(NGRAM):
        name = "seed-blind"

        def sample(self, n=None, *, seed=None, **kw):
            return super().sample(n, seed=0, **kw)

    with pytest.raises(AssertionError, match="another seed gave the same set"):
        check_sample_is_seeded(SeedBlind, train, {})


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
    assert res.exit_code == 1 and "pip install 'locsynth[dp]'" in res.output and "Traceback" not in res.output
    listed = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"})     # [dp] is text, not rich markup
    assert listed.exit_code == 0 and "pip install 'locsynth[dp]'" in listed.output
    code = ("import sys, locsynth.cli, locsynth.synth, locsynth.synth.registry; "
            "print(sorted(m for m in ('numba', 'locsynth.synth.ppmtf', 'opendp', 'torch', 'scipy.stats') "
            "if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
    code = "import sys, locsynth.cli; print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_every_registered_method_is_exported_by_its_class_name(monkeypatch, tmp_path):
    """``locsynth.synth.SGLT``, ``locsynth.TPM``, ...: built from the registry, so a method
    registered later is exported too, and the class is the one ``registry.get`` returns."""
    import locsynth
    import locsynth.synth

    for name in registry.names():
        m = registry.method(name)
        if m.missing():
            continue
        assert getattr(locsynth.synth, m.cls) is registry.get(name) is getattr(locsynth, m.cls), name
        assert m.cls in locsynth.synth.__all__ and m.cls in locsynth.__all__
    (tmp_path / "toy_method.py").write_text("from locsynth.synth.baselines import Uniform\n\n\n"
                                            "class Toy(Uniform):\n    name = 'toy'\n")
    monkeypatch.syspath_prepend(tmp_path)
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    registry.register("toy", "toy_method", "Toy", "synthesizer", "a third-party method")
    assert locsynth.synth.Toy is locsynth.Toy is registry.get("toy") and locsynth.Toy.name == "toy"
    with pytest.raises(AttributeError, match="has no attribute 'Gan'"):
        locsynth.synth.Gan


def test_demo_skips_a_method_whose_dependency_is_missing(monkeypatch, train, tmp_path):
    from locsynth.benchmark.demo import run_demo
    from locsynth.synth.registry import skip_reason

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
    from locsynth.benchmark.demo import run_demo

    test = simulate(60, seed=9).split(0.5, seed=0)[1]
    train.save(tmp_path / "pair" / "train")
    test.save(tmp_path / "pair" / "test")
    summary = run_demo(tmp_path / "demo", data=tmp_path / "pair", methods=["tpm"])
    assert set(summary["methods"]) == {"tpm"}
    assert (tmp_path / "demo" / "tradeoff.png").read_bytes()[:4] == b"\x89PNG"
    assert "membership-inference panel" in (tmp_path / "demo" / "report.html").read_text()
