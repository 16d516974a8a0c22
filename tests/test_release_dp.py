"""End-to-end DP audits of releases (issue #21): every DP method run fit -> sample -> release (or
transform -> release) on two neighbouring training sets, many times, and the release audited as a
whole through projections on its size and on its content (privacy/audit.py, the ratio test),
against the epsilon its ledger claims for its neighbour relation. A release as large as its
training set (the behaviour before #21) is caught by the size projection."""

from dataclasses import replace

import numpy as np
import pytest

from helpers import traceset, trip_set
from locsynth import InputError
from locsynth.privacy.audit import audit
from locsynth.release import make_release

BETA = 0.01


def size(release) -> float:
    """How many traces the release holds (what anyone counting its pseudonyms sees)."""
    return float(release.events["pseudonym"].nunique())


def at_location(loc: int):
    def content(release) -> float:
        return float((release.events["location_id"] == loc).sum())
    return content


def runs(make, x1, x2, samples: int, projections) -> dict:
    """``samples`` releases of ``make(x)`` for each input, projected: {input: (samples, projections)}."""
    return {key: np.array([[p(make_release(make(x, i))) for p in projections] for i in range(samples)])
            for key, x in (("x1", x1), ("x2", x2))}


def audited(outputs: dict, column: int, epsilon: float):
    n = outputs["x1"].shape[0]
    return audit(lambda x, k: outputs[x][:k, column], "x1", "x2", epsilon, samples=n, repeats=1, beta=BETA)


def claimed(synthetic, unit: str) -> tuple[float, str]:
    totals = synthetic.ledger.totals()[unit]
    return totals["epsilon"], totals["relation"]


def users(n: int = 6):
    """n short daily traces on a 1 x 3 grid; the last one is the user the neighbours differ in."""
    base = [[(0, 0), (1, 1), (2, 2)], [(0, 1), (1, 1), (2, 0)], [(0, 2), (1, 0), (2, 1)],
            [(0, 0), (1, 0), (2, 0)], [(0, 1), (1, 2), (2, 2)], [(0, 2), (1, 2), (2, 0)]]
    return traceset((base * 2)[:n])


def without_last(ts):
    return ts.select_users(np.arange(ts.n_traces - 1))


# -- synthesizers under add/remove-one ---------------------------------------------------------

def test_tpm_release_holds_its_epsilon_and_the_exact_size_is_caught():
    from locsynth.synth.tpm import TPM

    x1 = users()
    x2 = without_last(x1)
    eps, relation = claimed(TPM(epsilon=1.0).fit(x1).sample(seed=0), "user")
    assert relation == "add-remove" and eps == pytest.approx(1.0)
    honest = runs(lambda x, i: TPM(epsilon=1.0).fit(x).sample(seed=i), x1, x2, 160, [size, at_location(0)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    exact = runs(lambda x, i: TPM(epsilon=1.0, size_share=0).fit(x).sample(x.n_traces, seed=i), x1, x2, 60, [size])
    result = audited(exact, 0, eps)
    assert not result.passed, str(result)


def test_ngram_release_holds_its_epsilon_and_the_exact_size_is_caught():
    from locsynth.synth.ngram import NGRAM

    x1 = trip_set([[0, 1, 2], [1, 2], [2, 1, 0], [0, 1], [1, 0], [0, 2, 1]], [-1] * 6, cols=3)
    x2 = without_last(x1)
    eps, relation = claimed(NGRAM(epsilon=1.0, n_max=2, l_max=3).fit(x1).sample(seed=0), "trace")
    assert relation == "add-remove" and eps == pytest.approx(1.0)
    make = lambda x, i: NGRAM(epsilon=1.0, n_max=2, l_max=3).fit(x).sample(seed=i)  # noqa: E731
    honest = runs(make, x1, x2, 160, [size, at_location(0)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    exact = runs(lambda x, i: NGRAM(epsilon=1.0, n_max=2, l_max=3, size_share=0).fit(x).sample(x.n_traces, seed=i),
                 x1, x2, 60, [size])
    assert not audited(exact, 0, eps).passed


def test_privtrace_release_holds_its_epsilon_and_the_exact_size_is_caught():
    from locsynth.synth.privtrace import PrivTrace

    x1 = trip_set([[0, 1, 2], [1, 2], [2, 1, 0], [0, 1], [1, 0], [0, 2, 1]], [-1] * 6, cols=3)
    x2 = without_last(x1)
    eps, relation = claimed(PrivTrace(epsilon=1.0).fit(x1).sample(seed=0), "trace")
    assert relation == "add-remove" and eps == pytest.approx(1.0)
    honest = runs(lambda x, i: PrivTrace(epsilon=1.0).fit(x).sample(seed=i), x1, x2, 160, [size, at_location(0)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    exact = runs(lambda x, i: PrivTrace(epsilon=1.0, size_share=0).fit(x).sample(x.n_traces, seed=i), x1, x2, 60,
                 [size])
    assert not audited(exact, 0, eps).passed


def test_dptrip_publishes_a_delta_and_a_plan_from_a_dp_count_and_the_exact_count_is_caught():
    """DP-SGD's noise is audited by Opacus' accountant (tests/test_dptrip.py); what the release adds
    is the ledger's delta, sampling rate and steps, which the paper takes from the exact number of
    trips. Here they come from the DP count: audited on neighbouring trip sets, with the exact
    delta = 1 / |D| caught."""
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from locsynth.synth.dptrip.model import DPTrip

    x1 = trip_set([[0, 1, 2]] * 3000, [8] * 3000, cols=3)    # delta = 1 / count from 1,000 trips on
    x2 = without_last(x1)

    def delta(x, i):
        model = DPTrip(epsilon=1.0)
        model._remember_frame(x)
        plan = model.plan(x.n_traces)
        assert model.training_ == {"dp_count": plan["count"], "unit": "trace", "dp_count_epsilon": 0.05}
        return plan["delta"], model.ledger_

    _, ledger = delta(x1, 0)
    assert [s.mechanism for s in ledger.spends] == ["discrete-laplace"] and ledger.spends[0].epsilon == 0.05
    outputs = {key: np.array([delta(x, i)[0] for i in range(600)]) for key, x in (("x1", x1), ("x2", x2))}
    result = audit(lambda x, k: outputs[x][:k], "x1", "x2", 1.0, samples=600, repeats=1, beta=BETA)
    assert result.passed, str(result)
    exact = {"x1": np.full(600, 1 / x1.n_traces), "x2": np.full(600, 1 / x2.n_traces)}
    assert not audit(lambda x, k: exact[x][:k], "x1", "x2", 1.0, samples=600, repeats=1, beta=BETA).passed


# -- the co-location synthesizer: replace-one with n public ------------------------------------

def friends_of(ts, edges):
    return replace(ts, friends=np.asarray(edges, np.int32))


def test_colocation_release_holds_its_epsilon_for_replace_one_and_is_not_add_remove_dp():
    """Paper 000 takes n public (node DP with n fixed): neighbours have the same n users and differ
    in one user's data and friendships. The ledger states that relation (the counts' add/remove
    spends counted twice) and the audit passes there; on add/remove neighbours the released n
    differs with certainty, which is why the ledger does not claim that relation."""
    from locsynth.synth.colocation.model import CoLocation

    x1 = friends_of(users(), [[0, 1], [1, 2], [2, 3], [4, 5]])
    x2 = friends_of(traceset([[(int(t), int(l)) for t, l in zip(*x1.events_of(i))] for i in range(5)]
                             + [[(0, 2), (1, 2), (2, 2)]]), [[0, 1], [1, 2], [2, 3], [0, 5]])
    make = lambda x, i: CoLocation(0.3, 0.3, 0.3, mechanism="laplace").fit(x).sample(seed=i)  # noqa: E731
    eps, relation = claimed(make(x1, 0), "user")
    assert relation == "replace" and eps == pytest.approx(0.3 + 2 * 0.3 + 2 * 0.3)
    honest = runs(make, x1, x2, 80, [size, at_location(2)])
    for column in (0, 1):
        result = audited(honest, column, eps)
        assert result.passed, str(result)
    add_remove = runs(make, x1, friends_of(without_last(x1), [[0, 1], [1, 2], [2, 3]]), 80, [size])
    assert not audited(add_remove, 0, eps).passed


# -- per-event anonymizers: replace one event's location ---------------------------------------

@pytest.mark.parametrize("kind", ["krr", "planar-laplace"])
def test_per_event_anonymizers_hold_their_epsilon_and_a_weakened_one_is_caught(kind):
    from locsynth.anonymize.obfuscate import KRR, PlanarLaplace

    x1 = traceset([[(0, 0)]], cols=3)
    x2 = traceset([[(0, 1)]], cols=3)             # the neighbour cell: 1.1 km away on this grid
    if kind == "krr":
        honest, weak = KRR(epsilon=1.0), KRR(epsilon=3.0)
    else:
        honest, weak = PlanarLaplace(l=1.0, r=1.2), PlanarLaplace(l=6.0, r=1.2)
    eps, relation = claimed(honest.transform(x1), honest.transform(x1).ledger.spends[0].unit)
    assert relation == "replace" and eps == pytest.approx(1.0)
    outputs = runs(lambda x, i: honest.transform(x, seed=i), x1, x2, 160, [size, at_location(0)])
    assert np.all(outputs["x1"][:, 0] == 1)      # sizes are public under replace-one
    result = audited(outputs, 1, eps)
    assert result.passed, str(result)
    weakened = runs(lambda x, i: weak.transform(x, seed=i), x1, x2, 200, [at_location(0)])
    assert not audited(weakened, 0, eps).passed


# -- what the files say ------------------------------------------------------------------------

def test_a_dp_release_states_no_exact_training_size(tmp_path):
    """TPM on 40 users: release.json and RELEASE.md carry the DP count and its spend, never the
    exact numbers of users, traces or events; a method without DP still states them."""
    import json

    from locsynth.release import release
    from locsynth.synth.baselines import Uniform
    from locsynth.synth.tpm import TPM

    base = users(6)
    # 4 events a user: 160 training events, which no synthetic day of 24 instants a user can total
    train = traceset([[(int(t), int(l)) for t, l in zip(*base.events_of(i % 6))] + [(3, i % 3)] for i in range(40)])
    model = TPM(epsilon=1.0).fit(train)
    assert "users" not in model.training_ and model.training_["unit"] == "user"
    card = release(model.sample(seed=1), tmp_path / "r")
    assert set(card["training"]) == {"dp_count", "unit", "dp_count_epsilon"}
    assert card["traces"] == card["training"]["dp_count"]
    text = (tmp_path / "r" / "RELEASE.md").read_text()
    assert "a DP count, epsilon 0.05" in text and "160 events" not in text
    assert card["training"]["dp_count"] == 40 or "40 users" not in text      # the count may hit 40 by chance
    stored = json.loads((tmp_path / "r" / "release.json").read_text())
    assert "users" not in json.dumps(stored["training"]) and "neighbours" in stored
    spends = [s["mechanism"] for s in stored["ledger"]["spends"]]
    assert spends == ["discrete-laplace", "laplace"]
    assert all("40" not in s["saw"] for s in stored["ledger"]["spends"])
    plain = release(Uniform().fit(train).sample(seed=1), tmp_path / "u")
    assert plain["training"] == {"users": 40, "traces": 40, "events": 160}
    two = {TPM(epsilon=1.0).fit(train).sample().n_traces for _ in range(8)}
    assert len(two) > 1                            # the released size is a DP count, not a constant


def test_prepare_chooses_pois_under_dp_and_its_spend_reaches_every_model(data_dir, tmp_path):
    """prepare --pois K --dp-epsilon E on Gowalla (its POI file is the public candidate list):
    E per user in the prepared sets' ledger and in a model fitted on them; the exact top-K, a
    data's own box and a data-chosen start date are recorded as not covered."""
    from locsynth import TraceSet
    from locsynth.prepare import prepare
    from locsynth.synth.tpm import TPM

    root = data_dir / "gowalla-vldb17" / "Gowalla_3"
    options = dict(instant="1h", fold_days=True, timezone="America/Chicago", split=0.2)
    prepare(root, "gowalla", tmp_path / "dp", pois=50, dp_epsilon=2.0, start="2009-02-01", **options)
    train = TraceSet.load(tmp_path / "dp" / "train")
    [spend] = train.ledger.spends
    assert (spend.mechanism, spend.unit) == ("noisy-top-k", "user") and spend.epsilon == pytest.approx(2.0)
    assert train.ledger.uncovered == [] and train.space.n_locations == 50
    model = TPM(epsilon=1.0).fit(train)
    assert [s.mechanism for s in model.ledger_.spends] == ["noisy-top-k", "discrete-laplace", "laplace"]
    assert model.ledger_.totals()["user"]["epsilon"] == pytest.approx(3.0)
    assert not model.ledger_.uncovered

    plain = prepare(root, "gowalla", tmp_path / "plain", pois=50, **options)["train"]
    assert not plain.ledger.spends
    assert any("50 most visited POIs" in fact for fact in plain.ledger.uncovered)
    assert any("earliest record" in fact for fact in plain.ledger.uncovered)
    fitted = TPM(epsilon=1.0).fit(plain)
    assert fitted.ledger_.uncovered == plain.ledger.uncovered
    assert any("epsilon covers only the steps above" in line for line in fitted.ledger_.describe())
    with pytest.raises(InputError, match="--dp-epsilon chooses the --pois under DP"):
        prepare(root, "gowalla", tmp_path / "x", grid=(4, 4), dp_epsilon=1.0)
