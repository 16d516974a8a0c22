"""A guard on small data (privacy/noise.py): how much of a DP release is noise, estimated from its
noisy counts and public quantities; the warning at fit; the estimate on the model, the card and the
report."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import locsynth
from locsynth import InputError, SmallDataWarning, registry
from locsynth.data.frames import trips_from_frame
from locsynth.privacy.noise import describe_noise, kept_laplace, kept_normal, noise_mass, share, toward_uniform


# -- the estimate ----------------------------------------------------------------------------------

def test_the_mass_noise_alone_keeps_matches_draws():
    rng = np.random.default_rng(0)
    x = rng.laplace(0, 3.0, 2_000_000)
    for theta in (0.0, 0.5, 6.0):
        assert kept_laplace(3.0, theta) == pytest.approx(np.where(x > theta, x, 0).mean(), rel=0.01)
    z = rng.normal(0, 2.0, 2_000_000)
    assert kept_normal(2.0) == pytest.approx(np.maximum(z, 0).mean(), rel=0.01)
    assert kept_laplace(np.array([1.0, 2.0]), 0.0).tolist() == [0.5, 1.0]


def test_the_noise_mass_of_a_release_is_estimated_from_the_cells_it_zeroed():
    """1,000 cells, 900 of them empty, a threshold of two scales: the expectation estimated from the
    released values alone is within 10 % of the mass noise really put into the empty cells, over
    many draws, and two standard deviations above it holds that mass in 97 % of the draws or more;
    nearly all empty, it nears all cells' expected noise, and a full release has about none."""
    rng = np.random.default_rng(1)
    counts = np.r_[np.zeros(900), rng.integers(100, 1000, 100)].astype(float)
    got, high, truth = [], [], []
    for _ in range(400):
        noisy = counts + rng.laplace(0, 5.0, counts.size)
        released = np.where(noisy > 10.0, noisy, 0.0)
        got.append(noise_mass(released, 5.0, 10.0, spread=0))
        high.append(noise_mass(released, 5.0, 10.0))
        truth.append(released[:900].sum())
    assert np.mean(got) == pytest.approx(np.mean(truth), rel=0.1)
    assert np.mean(np.array(high) >= np.array(truth)) >= 0.97
    empty = np.where(rng.laplace(0, 5.0, 1000) > 10, 1.0, 0.0)
    assert noise_mass(empty, 5.0, 10.0, spread=0) == pytest.approx(1000 * kept_laplace(5.0, 10.0), rel=0.05)
    assert noise_mass(np.full(1000, 500.0), 5.0, 10.0) == 0.0
    z = rng.normal(0, 3.0, 5000)
    assert noise_mass(np.maximum(z, 0), 3.0, law="normal", spread=0) == pytest.approx(np.maximum(z, 0).sum(), rel=0.05)
    assert share(10, 40) == 0.25 and share(50, 40) == 1.0 and share(1, 0) == 1.0


def test_falling_back_toward_uniform_is_a_mixture_of_the_two_distributions():
    kept, uniform = np.array([0.0, 30.0, 10.0, 0.0]), np.array([1.0, 1.0, 1.0, 0.0])
    out = toward_uniform(kept, uniform, 0.5)
    assert out.sum() == pytest.approx(40) and out.tolist() == pytest.approx([20 / 3, 15 + 20 / 3, 5 + 20 / 3, 0])
    assert toward_uniform(np.zeros(4), uniform, 0.1).tolist() == uniform.tolist()
    assert toward_uniform(kept, uniform, 0.0).tolist() == kept.tolist()
    assert describe_noise({"share": 0.74, "parts": {"where trips go": 0.74, "when trips start": 0.2}}) == \
        "an estimated 74 % of what the release is drawn from is noise (where trips go 74 %, when trips start 20 %)"


# -- the warning ------------------------------------------------------------------------------------

def drives(trips: int, seed: int = 0) -> pd.DataFrame:
    """``trips`` drives across San Francisco, a fix every 30 s (a trip id column each)."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(trips):
        t = pd.Timestamp("2008-05-19 07:00", tz="America/Los_Angeles") + pd.Timedelta(minutes=int(rng.integers(0, 600)))
        lat, lon = 37.72 + rng.random() * 0.06, -122.46 + rng.random() * 0.08
        d = rng.normal(0, 0.002, 2)
        n = int(rng.integers(8, 25))
        rows.append(pd.DataFrame({"trip_id": f"t{k}", "time": t + pd.to_timedelta(np.arange(n) * 30, unit="s"),
                                  "lat": lat + d[0] * np.arange(n), "lon": lon + d[1] * np.arange(n)}))
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def few():
    return trips_from_frame(drives(150), mode="car", cell_m=250)


@pytest.mark.parametrize("name", ["ngram", "privtrace", "adatrace", "dpt", "ldptrace"])
def test_a_fit_on_150_trips_warns_naming_them_and_the_estimate_travels(name, few, tmp_path):
    assert few.n_traces == 150
    with pytest.warns(SmallDataWarning, match=rf"{name} fitted on 150 trajectories at epsilon 1: an estimated "
                                              r"\d+ % of what the release is drawn from is noise") as caught:
        model = registry.get(name)(epsilon=1.0).fit(few)
    assert issubclass(caught[0].category, UserWarning) and "for the data holder" in str(caught[0].message)
    assert model.noise_["share"] >= 0.5 and "when trips start" in model.noise_["parts"]
    model.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["noise"] == model.noise_
    synthetic = locsynth.synth.base.Synthesizer.load(tmp_path / "m").sample(40, seed=1)
    assert synthetic.info["noise"] == model.noise_ and synthetic.summary()["noise"] == model.noise_


def test_without_a_time_model_the_spatial_estimate_is_stated_and_warns_at_half(few):
    """Where the trips go is a third to all noise on 150 trips (PrivTrace's counts, on the grid its
    noisy count of points makes, hold the least); the warning comes exactly when it is half or more."""
    for name in ("ngram", "privtrace", "adatrace", "dpt", "ldptrace"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SmallDataWarning)
            model = registry.get(name)(epsilon=1.0, time_share=0).fit(few)
        assert "when trips start" not in model.noise_["parts"] and model.noise_["share"] >= 0.2
        warned = [w for w in caught if issubclass(w.category, SmallDataWarning)]
        assert len(warned) == (model.noise_["share"] >= 0.5), (name, model.noise_)


def test_a_method_without_dp_estimates_nothing(few):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallDataWarning)
        model = locsynth.Uniform().fit(few)
    assert model.noise_ is None and "noise" not in model.sample(10, seed=0).info


def test_the_card_and_the_report_state_the_estimate(few, tmp_path):
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.release.publish import load_release, release

    train, test = few.split(0.3, seed=0)
    with pytest.warns(SmallDataWarning):
        synthetic = locsynth.NGRAM(epsilon=1.0).fit(train).sample(seed=1)
    card = release(synthetic, tmp_path / "r")
    assert card["noise"] == synthetic.info["noise"] and card["bounds"]["mode"] == "car"
    text = (tmp_path / "r" / "RELEASE.md").read_text()
    assert "- Noise: an estimated" in text and "- Public bounds of the movement: car: speeds 1-150 km/h" in text
    assert load_release(tmp_path / "r").info["noise"] == card["noise"]
    report = evaluate(train, test, synthetic, groups=["trip_times"])
    assert report.meta["noise"] == synthetic.info["noise"] and report.meta["bounds"]["mode"] == "car"
    html = report.to_html() if hasattr(report, "to_html") else None
    if html is None:
        from locsynth.evaluation.report.html import render_html

        html = render_html(report)
    assert "Noise: an estimated" in html and "Public bounds of the movement: car" in html


def test_the_command_line_prints_the_warning_as_one_line(few, tmp_path):
    from typer.testing import CliRunner

    from locsynth.cli import app

    few.save(tmp_path / "few")
    res = CliRunner().invoke(app, ["fit", "ngram", str(tmp_path / "few"), "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(line.startswith("noise: an estimated") for line in lines)
    warned = [line for line in lines if line.startswith("warning: ngram fitted on 150 trajectories at epsilon 1")]
    assert len(warned) == 1 and "SmallDataWarning" not in res.output


# -- on the cabs ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_cabs_warn_on_150_trips_and_not_on_72467(data_dir):
    """The acceptance: a fit on 150 of the cabs' trips at epsilon 1 warns naming 150; one on the
    72,467 training trips (prepare --format cab-trips --cell-m 500 --split test=0.2) does not, for the
    central methods. LDPTrace's local reports are noisier: its estimate is stated, not asserted."""
    from locsynth.data.prepare import prepare_trips

    train = prepare_trips(data_dir / "sf-cabspotting" / "cabs200", "cab-trips", 500.0, split=0.2, seed=0)["train"]
    assert train.n_traces == 72467
    small = train.select_users(np.random.default_rng(0).choice(train.n_traces, 150, replace=False))
    for name in ("ngram", "privtrace", "adatrace", "dpt", "ldptrace"):
        with pytest.warns(SmallDataWarning, match=rf"{name} fitted on 150 trajectories at epsilon 1"):
            registry.get(name)(epsilon=1.0).fit(small)
    for name in ("ngram", "privtrace", "adatrace", "dpt"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", SmallDataWarning)
            model = registry.get(name)(epsilon=1.0).fit(train)
        assert model.noise_["share"] < 0.5


def test_epsilon_beyond_what_oue_draws_at_is_one_clear_error(few):
    with pytest.raises(InputError, match=r"`epsilon` 1e\+09 gives .* outside the 1e-12 to 700 that OUE draws as stated"):
        locsynth.LDPTrace(epsilon=1e9).fit(few)


def test_dptrips_estimate_is_the_gradient_noise_against_the_batches():
    """sigma x clip x sqrt(parameters x steps) against steps x batch x clip: noise of norm 100 beside
    a batch of 100 clipped gradients is half in one step, a tenth of that signal's in 100 (the
    noise adds up as a square root, the gradients as a sum); no noise, none. With the cabs' plan
    (sigma 1.45 over 5,445 steps of 200 trips, 578,150 parameters) 7 %; with 150 trips (sigma 17.4,
    15 steps of all 150) 96 %."""
    pytest.importorskip("torch")
    from locsynth.synth.dptrip.model import gradient_noise

    assert gradient_noise(1.0, 10_000, 100) == pytest.approx(0.5)
    assert gradient_noise(1.0, 10_000, 100, steps=100) == pytest.approx(1 / 11)
    assert gradient_noise(0.0, 10_000, 100, steps=100) == 0.0
    assert gradient_noise(1.448, 578_150, 0.002758 * 72467, 5445) == pytest.approx(0.07, abs=0.01)
    assert gradient_noise(17.36, 578_150, 150, 15) == pytest.approx(0.96, abs=0.01)
