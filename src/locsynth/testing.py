"""The common checks every registered method must pass (scikit-learn's ``check_estimator``, for
location methods). A third party who registers a method runs them on it::

    from locsynth.testing import check_method
    check_method(MySynthesizer, params={"iterations": 2})     # raises at the first failed check

or, in a test suite, one test per named check::

    @pytest.mark.parametrize("check", method_checks(MySynthesizer), ids=lambda c: c.__name__)
    def test_my_method(check):
        check(MySynthesizer, check_data(), {})

A method's capability tags (synth/base.py, :class:`~locsynth.synth.base.Tags`) decide what is
expected: virtual users or the training users' own traces, ragged traces or whole days, a DP
ledger whose spends hold, a friend graph or categories in the data.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from .core.errors import InputError
from .synth.base import Anonymizer, NotFittedError, Synthesizer

Check = Callable[[type, object, dict], None]


def check_data(users: int = 80, seed: int = 3):
    """Half of a simulated city of ``users`` users, with a friend graph and location categories,
    so that methods needing either can run."""
    from .data.simulate import simulate
    from .data.space import Grid

    ts = simulate(users, seed=seed).split(0.5, seed=0)[0]
    rng = np.random.default_rng(0)
    edges = np.unique(np.sort(rng.integers(0, ts.n_traces, (60, 2)), axis=1), axis=0)
    g = ts.space
    categories = np.array(["home", "work", "shop", "park"], dtype=object)[np.arange(g.n_locations) % 4]
    return replace(ts, friends=edges[edges[:, 0] < edges[:, 1]], space=Grid(g.rows, g.cols, g.bbox,
                                                                             category=categories))


def _raises(fn, match: str, what: str) -> None:
    import re

    try:
        fn()
    except InputError as exc:
        if not re.search(match, str(exc)):
            raise AssertionError(f"{what}: the error {str(exc)!r} does not say {match!r}") from None
        return
    raise AssertionError(f"{what}: no InputError")


_FITTED: dict = {}


def _fitted(cls, data, params: dict):
    """One fitted model per (class, data, parameters), shared by the checks that only sample from it."""
    key = (cls, id(data), repr(sorted(params.items())))
    if key not in _FITTED:
        _FITTED.clear()
        _FITTED[key] = cls(**params).fit(data)
    return _FITTED[key]


def _per(cls) -> dict:
    return {"traces_per_user": 2} if getattr(cls, "several_traces", False) else {}


# -- synthesizers ------------------------------------------------------------------------------------

def check_fit_returns_self_and_keeps_parameters(cls, data, params) -> None:
    """fit returns the estimator and leaves the constructor's parameters as they were."""
    model = cls(**params)
    before = model.get_params()
    assert model.fit(data) is model, "fit must return self"
    assert model.get_params() == before, "fit changed the constructor's parameters"
    assert repr(model).startswith(type(model).__name__ + "(")


def check_not_fitted(cls, data, params) -> None:
    """A model that is not fitted says so instead of failing somewhere inside."""
    try:
        cls(**params).sample()
    except NotFittedError:
        return
    raise AssertionError("sample before fit must raise NotFittedError")


def check_sample_is_seeded(cls, data, params) -> None:
    """The same seed gives the same set; another seed another one (where the output is random)."""
    model = _fitted(cls, data, params)
    per = _per(cls)
    a, b = model.sample(seed=4, **per), model.sample(seed=4, **per)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t) and a.users.equals(b.users), \
        "the same seed gave different synthetic sets"
    if not cls.tags.baseline or cls.name == "uniform":
        c = model.sample(seed=5, **per)
        if cls.tags.dp and np.array_equal(a.loc, c.loc):
            # a DP fit can leave nothing random to sample (NGRAM's noised tree cut down to one path:
            # 4 of 3,000 fits on check_data); a second fit draws fresh noise
            model = cls(**params).fit(data)
            a, c = model.sample(seed=4, **per), model.sample(seed=5, **per)
        assert not np.array_equal(a.loc, c.loc), "another seed gave the same set"


def check_fit_twice_gives_the_same_model(cls, data, params) -> None:
    """Without DP noise, fitting again with the same seed gives the same samples; with it, the same
    shape of model and a ledger of the same spends."""
    one, two = _fitted(cls, data, params), cls(**params).fit(data)
    a, b = one.sample(seed=1), two.sample(seed=1)
    if cls.tags.dp:
        assert [s.mechanism for s in one.ledger_.spends] == [s.mechanism for s in two.ledger_.spends]
    else:
        assert np.array_equal(a.loc, b.loc), "two fits with the same seed sample differently"


def check_sample_shape(cls, data, params) -> None:
    """n users (a DP method's DP count by default), traces_per_user traces each, locations of the
    space, sources as the tags say, the training set's days unless ragged."""
    model = _fitted(cls, data, params)
    per = _per(cls)
    k = per.get("traces_per_user", 1)
    a = model.sample(seed=4, **per)
    size = model.training_.get("dp_count", model.training_.get("users", data.n_traces))
    assert a.n_traces == k * size and a.synthetic and a.info["source"] == cls.name
    assert a.loc.min() >= 0 and a.loc.max() < data.space.n_locations
    source = a.users["source"].to_numpy()
    if cls.tags.virtual_users:
        assert (source == -1).all(), "virtual users must have no source"
    else:
        assert (np.sort(np.unique(source)) == np.arange(data.n_traces)).all()
    assert set(a.users["trace_no"]) == set(range(k))
    if not cls.tags.ragged and cls.name != "training":
        assert (a.counts() == data.time.instants_per_day).all(), "a day's trace must have every instant"
    few = model.sample(3, seed=4, **per)
    assert few.n_traces == 3 * k
    if cls.tags.virtual_users:
        assert model.sample(2 * data.n_traces, seed=4).n_traces == 2 * data.n_traces
    else:
        assert np.array_equal(few.loc, a.select_users(np.arange(3 * k)).loc), "n = 3 must be the first 3 users"
        _raises(lambda: model.sample(data.n_traces + 1), "too many", "more users than trained on")


def check_days(cls, data, params) -> None:
    """days > 1 makes traces that many days long (a ragged method: at least accepts it)."""
    model = _fitted(cls, data, params)
    two = model.sample(5, days=2, seed=1)
    if not cls.tags.ragged and cls.name != "training":
        assert (two.counts() == 2 * data.time.instants_per_day).all(), "days=2 must give two days"


def check_users(cls, data, params) -> None:
    """users= picks training rows where traces come from training users; a method of virtual users
    refuses it."""
    model = _fitted(cls, data, params)
    if cls.tags.virtual_users:
        _raises(lambda: model.sample(users=[0, 1]), "virtual users", "users= on virtual users")
        return
    picked = model.sample(users=[2, 0], seed=3)
    assert sorted(set(picked.users["source"])) == [0, 2]


def check_options(cls, data, params) -> None:
    """An option the method does not declare is refused, naming the valid ones; traces_per_user is
    refused where every trace is its own user."""
    model = _fitted(cls, data, params)
    _raises(lambda: model.sample(no_such_option=1), "no sample option 'no_such_option'", "an unknown option")
    _raises(lambda: cls(**params).fit(data, no_such_option=1), "no fit option", "an unknown fit option")
    if not cls.several_traces:
        _raises(lambda: model.sample(traces_per_user=2), "traces_per_user must be 1", "traces_per_user")


def check_save_load(cls, data, params) -> None:
    """A saved model loads with the same parameters, ledger and samples; an existing path is refused."""
    model = _fitted(cls, data, params)
    per = _per(cls)
    with tempfile.TemporaryDirectory() as tmp:
        model.save(Path(tmp) / "m")
        back = cls.load(Path(tmp) / "m")
        assert type(back) is type(model) and back.get_params() == model.get_params()
        assert back.ledger_.spends == model.ledger_.spends and back.training_ == model.training_
        assert np.array_equal(back.sample(seed=4, **per).loc, model.sample(seed=4, **per).loc)
        _raises(lambda: model.save(Path(tmp) / "m"), "exists", "saving over a model")


def check_ledger_travels(cls, data, params) -> None:
    """The model's ledger goes with every set it samples; a DP method's spends hold and it keeps no
    exact size of its training data, nor anything per training unit (not even their ids)."""
    model = _fitted(cls, data, params)
    a = model.sample(seed=2)
    assert a.ledger is not None and a.ledger.spends == model.ledger_.spends
    if cls.tags.dp:
        assert any(s.holds for s in a.ledger.spends), "a DP method's spends must hold"
        assert set(model.training_) <= {"dp_count", "unit", "dp_count_epsilon", "users"}, \
            "a DP method keeps exact training sizes"
        assert len(model.users_) == 0, "a DP model keeps its training ids (their number is the exact size)"
        with tempfile.TemporaryDirectory() as tmp:
            import pyarrow.parquet as pq

            model.save(Path(tmp) / "m")
            assert pq.read_metadata(Path(tmp) / "m" / "users.parquet").num_rows == 0, \
                "a saved DP model lists its training ids"


def check_bad_input(cls, data, params) -> None:
    """Bad input is one clear InputError: an empty set, not a TraceSet, bad n, days or seed, data
    the tags need and the set lacks."""
    _raises(lambda: cls(**params).fit(data.select_users([])), "empty", "an empty training set")
    _raises(lambda: cls(**params).fit("train.csv"), "needs a TraceSet", "a path instead of a TraceSet")
    model = _fitted(cls, data, params)
    for kwargs, message in ((dict(n=0), "n must be at least 1"), (dict(days=0), "days must be at least 1"),
                            (dict(n=2.5), "n must be a whole number"), (dict(seed=0, n="x"), "n must be an integer"),
                            (dict(n="10"), r"n must be an integer, got '10'"),
                            (dict(seed=-1), "seed must be a whole number >= 0, got -1"),
                            (dict(seed="abc"), "seed must be a whole number >= 0, got 'abc'"),
                            (dict(n=10 ** 10), "more than the 2,147,483,647 traces a set holds")):
        _raises(lambda: model.sample(**kwargs), message, f"sample({kwargs})")
    if cls.tags.needs_friends:
        _raises(lambda: cls(**params).fit(replace(data, friends=None)), "friend graph", "no friend graph")


def check_dp_sensitivity(cls, data, params) -> None:
    """Every vector a DP method hands to OpenDP moves, between neighbouring inputs, by at most the
    sensitivity its noise assumes (privacy/audit.CoupledNoise: both fits see the same noisy
    values, step by step), for random neighbours of the method's relation. Add/remove one person:
    a person removed (twice, at random), a person with an empty trace added, a person with three
    traces added, a person with a trace of one point, a person with a trace of many steps (the time
    model of trips counts a trace once whatever its length, synth/trip_times.py), and, for a method
    that spends per trace, a trace added to a user before the traces it has (a bound enforced by
    dropping keeps the first ones: the new one displaces one, and the vectors may move only as far
    as the ledger's per-trace line allows, privacy/ledger.py). Replace one person (a method with a replace-one spend): a person's trace
    replaced by another's, or emptied; an add/remove spend then may move by twice its sensitivity.
    A method that spends per trace may move k times as far for a person of k traces, the bound its
    ledger holds (privacy/ledger.py); a method that refuses an empty trace with an InputError passes.
    A method whose own spends are all local DP (LDPTrace's) has no sensitivity to check: each
    unit's report is perturbed on its own, and its audit is of one unit's report (privacy/oue.py,
    tests/test_ldptrace.py)."""
    from .privacy.audit import CoupledNoise

    if not cls.tags.dp:
        return
    model = _fitted(cls, data, params)
    own = model.ledger_.spends[len(data.ledger.spends) if data.ledger else 0:]
    if own and all(s.local for s in own):
        return
    replace_one = any(s.relation == "replace" for s in model.ledger_.spends)
    # a person of k traces may move a per-trace vector by k times its sensitivity, as the ledger counts
    group = (model.ledger_.traces_per_user or 1) if any(s.unit == "trace" for s in model.ledger_.spends) else 1
    per_trace = [s for s in model.ledger_.spends if s.unit == "trace" and s.holds]
    neighbours = _neighbours(data, replace_one, np.random.default_rng(7))
    if per_trace and not replace_one and data.n_traces > 1:
        # the per-trace line's group: its epsilon over its spends' (2 where a kept trace can be displaced)
        trace_group = model.ledger_.totals()["trace"]["epsilon"] / sum(s.epsilon for s in per_trace)
        neighbours.append(("a trace added to a user before theirs", _extra_first(data, 0, 1), trace_group))
    for name, (d1, d2), *limit in neighbours:
        with CoupledNoise() as noise:
            try:
                cls(**params).fit(d1)
                noise.replay()
                cls(**params).fit(d2)
            except InputError:
                if "empt" in name:          # refusing empty traces with a clear error is an answer too
                    continue
                raise
        problems = noise.violations(limit[0] if limit else (2.0 if replace_one else 1.0) * group)
        assert noise.first, "a DP method noised nothing through OpenDP"
        assert not problems, f"{name}: " + "; ".join(problems)


def _neighbours(data, replace_one: bool, rng) -> list[tuple[str, tuple]]:
    """(what differs, (input, neighbour)) pairs around ``data`` (check_dp_sensitivity)."""
    n = data.n_traces
    p, q = (int(v) for v in rng.choice(n, 2, replace=False))
    events = lambda i: list(zip(*data.events_of(i)))  # noqa: E731
    if replace_one:
        return [(f"person {p}'s trace replaced by person {q}'s", (data, _replaced(data, p, events(q)))),
                (f"person {p}'s trace emptied", (data, _replaced(data, p, [])))]
    out = [(f"person {r} removed", (data, _without(data, r))) for r in (p, q)]
    out.append(("a person with an empty trace added", (_with_person(data, [[]], n // 2), data)))
    three = [events(int(i)) for i in rng.choice(n, 3, replace=False)]
    out.append(("a person with three traces added", (_with_person(data, three, n // 3), data)))
    # a trace of one point and one of many steps: a trip's times count once whatever its length
    out.append(("a person with a trace of one point added", (_with_person(data, [events(p)[:1]], n // 4), data)))
    longest = int(np.argmax(data.counts()))
    out.append(("a person with a trace of many steps added", (_with_person(data, [events(longest)], n // 5), data)))
    return out


def _extra_first(data, row: int, other: int) -> tuple:
    """(``data``, ``data`` with a copy of row ``other``'s events added to the user at ``row``, listed
    before that user's traces)."""
    rows = [list(zip(*data.events_of(i))) for i in range(data.n_traces)]
    ids = list(data.users["user_id"].to_numpy())
    first = ids.index(ids[row])
    return data, _rebuilt(data, rows[:first] + [rows[other]] + rows[first:], ids[:first] + [ids[row]] + ids[first:])


def _without(data, row: int):
    """``data`` without every trace of the user id at ``row``."""
    ids = data.users["user_id"].to_numpy()
    return data.select_users(np.flatnonzero(ids != ids[row]))


def _rebuilt(data, rows: list[list], ids: list, friends=None):
    """A set on ``data``'s frame from per-row event lists [(t, loc), ...] and user ids."""
    from .data.traces import TraceSet

    import pandas as pd

    user = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    flat = [e for r in rows for e in r]
    t = np.array([e[0] for e in flat], np.int64)
    loc = np.array([e[1] for e in flat], np.int32)
    return TraceSet.from_events(user, t, loc, pd.DataFrame({"user_id": np.asarray(ids, dtype=object)}),
                                data.space, data.time, dict(data.info), friends, data.ledger)


def _with_person(data, traces: list[list], at: int):
    """``data`` with a new person of ``len(traces)`` traces (rows ``at`` ...), friends renumbered."""
    rows = [list(zip(*data.events_of(i))) for i in range(data.n_traces)]
    ids = list(data.users["user_id"].to_numpy())
    k = len(traces)
    friends = None
    if data.friends is not None:
        friends = np.where(data.friends >= at, data.friends + k, data.friends)
    return _rebuilt(data, rows[:at] + list(traces) + rows[at:], ids[:at] + ["new-person"] * k + ids[at:], friends)


def _replaced(data, row: int, trace: list):
    """``data`` with the trace at ``row`` replaced by ``trace`` (same user id and friends)."""
    rows = [list(zip(*data.events_of(i))) for i in range(data.n_traces)]
    rows[row] = list(trace)
    return _rebuilt(data, rows, list(data.users["user_id"].to_numpy()), data.friends)


def check_min_cells(cls, data, params) -> None:
    """A method of ragged traces (the trip methods) never samples a trace with fewer cells (distinct
    consecutive locations) than its training set's public minimum (``TraceSet.min_cells``: 2 for
    trips): trained on trips of two cells, where a model's noise makes one-cell trips likely, none
    of 300 synthetic trips holds fewer, and the synthetic set states the minimum too."""
    if not cls.tags.ragged:
        return
    trips = short_trips(data)
    syn = cls(**params).fit(trips).sample(300, seed=1)
    cells = cells_per_trace(syn.loc, syn.offsets)
    short = int((cells[np.diff(syn.offsets) > 0] < 2).sum())
    assert short == 0, f"{short} of {syn.n_traces} synthetic trips hold fewer than the public minimum of 2 cells"
    assert syn.min_cells == 2, f"the synthetic set states a minimum of {syn.min_cells} cells, not 2"


def short_trips(data):
    """Trips of ``data``'s first two distinct consecutive locations of each trace, one minute
    apart, with the public minimum of 2 cells (as ``prepare`` makes trips)."""
    rows = []
    for i in range(data.n_traces):
        t, loc = data.events_of(i)
        moved = np.flatnonzero(loc[1:] != loc[:-1])
        if moved.size:
            rows.append([(int(t[0]), int(loc[moved[0]])), (int(t[0]) + 1, int(loc[moved[0] + 1]))])
    ids = [f"trip{i}" for i in range(len(rows))]
    out = _rebuilt(data, rows, ids)
    return replace(out, info={**out.info, "min_cells": 2})


def cells_per_trace(loc: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """How many cells each trace holds: its points less the repeats of the point before."""
    trace = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    repeat = np.r_[False, (loc[1:] == loc[:-1]) & (trace[1:] == trace[:-1])]
    return np.bincount(trace[~repeat], minlength=offsets.size - 1)


def check_hyperparameters_declared(cls, data, params) -> None:
    """Every constructor parameter declares its help (the class docstring's numpydoc Parameters) and
    its check (``checks``), and a bad value of each ('not-a-value') is refused with an InputError
    naming it when fit or transform starts, before any work."""
    declared = cls.declarations()
    for name, hyper in declared.items():
        assert hyper.help, f"{name} has no help (document it in the class docstring's Parameters section)"
        assert hyper.check is not None, f"{name} has no check (declare one in {cls.__name__}.checks)"
    for name in declared:
        model = cls(**{**params, name: "not-a-value"})
        run = (lambda: model.transform(data, seed=0)) if isinstance(model, Anonymizer) else (lambda: model.fit(data))
        _raises(run, name, f"{name}='not-a-value'")
    assert set(cls.checks) <= set(declared), f"checks of no parameter: {sorted(set(cls.checks) - set(declared))}"


def _at_epsilon(cls, data, params, epsilon: float, **extra) -> str:
    """Fit ``cls`` with every epsilon hyperparameter at ``epsilon`` and sample 5 (or transform):
    'refused' when an InputError stops it, else 'ran'; any other error propagates."""
    names = [p for p in cls.hyperparameters() if p.startswith("epsilon")]
    model = cls(**{**params, **{n: epsilon for n in names}, **extra})
    try:
        if isinstance(model, Anonymizer):
            out = model.transform(data, seed=0)
            assert out.n_events == data.n_events, f"at epsilon {epsilon:g} the transform lost events"
        else:
            out = model.fit(data).sample(5, seed=0)
            assert out.n_traces == 5, f"at epsilon {epsilon:g}, sample(5) gave {out.n_traces} traces"
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc), f"at epsilon {epsilon:g} the error is not one line: {exc!r}"
        return "refused"
    return "ran"


def check_tiny_epsilon(cls, data, params) -> None:
    """A DP method at epsilon 1e-300 refuses in one InputError or fits and samples within its public
    bounds: no error inside numpy (array is too big, negative dimensions) and no DP size beyond them.
    A DP count of the training units that sizes the output (``size_share``) is refused there: its
    noise (scale 2e301) says nothing of the size (privacy/count.py); without it the model fits."""
    if not cls.tags.dp or not any(p.startswith("epsilon") for p in cls.hyperparameters()):
        return
    if "size_share" not in cls.hyperparameters():
        _at_epsilon(cls, data, params, 1e-300)
        return
    _raises(lambda: cls(**{**params, "epsilon": 1e-300}).fit(data), "says nothing of the size",
            "a DP count at epsilon 1e-300")
    _at_epsilon(cls, data, params, 1e-300, size_share=0.0)


def check_huge_epsilon(cls, data, params) -> None:
    """A DP method at epsilon 1e9 (no noise to speak of) refuses in one InputError or fits and
    samples: no division by zero (OUE's flip probability underflowed to 0)."""
    if cls.tags.dp and any(p.startswith("epsilon") for p in cls.hyperparameters()):
        _at_epsilon(cls, data, params, 1e9)


SYNTHESIZER_CHECKS: tuple[Check, ...] = (
    check_fit_returns_self_and_keeps_parameters, check_not_fitted, check_sample_is_seeded,
    check_fit_twice_gives_the_same_model, check_sample_shape, check_days, check_users, check_options,
    check_save_load, check_ledger_travels, check_bad_input, check_dp_sensitivity, check_hyperparameters_declared,
    check_min_cells, check_tiny_epsilon, check_huge_epsilon)


# -- anonymizers ---------------------------------------------------------------------------------

def check_transform(cls, data, params) -> None:
    """One output trace per input trace, the same instants, valid codes, ``source`` the input row."""
    anonymizer = cls(**params)
    out = anonymizer.transform(data, seed=1)
    assert out.n_traces == data.n_traces and np.array_equal(out.user, data.user)
    out.check()
    assert out.loc.max() < data.space.n_locations and out.info["source"] == cls.name
    source = out.users["source"].to_numpy()
    assert np.array_equal(np.sort(source), np.arange(data.n_traces))
    assert np.array_equal(out.t, data.select_users(source).t)
    assert repr(anonymizer).startswith(type(anonymizer).__name__ + "(")


def check_anonymizer_ledger(cls, data, params) -> None:
    """A DP anonymizer's spends hold, its noise is not seeded, and spends add up when applied twice."""
    anonymizer = cls(**params)
    out = anonymizer.transform(data, seed=1)
    if not cls.tags.dp:
        assert out.ledger.uncovered, "a method without DP must say what it does not cover"
        return
    assert out.ledger.spends and all(s.holds for s in out.ledger.spends)
    assert not np.array_equal(out.loc, anonymizer.transform(data, seed=1).loc), "DP noise must not be seeded"
    assert len(anonymizer.transform(out).ledger) == 2 * len(out.ledger)


def check_anonymizer_bad_input(cls, data, params) -> None:
    _raises(lambda: cls(**params).transform(data.select_users([])), "empty", "an empty set")
    _raises(lambda: cls(**params).transform(data.loc), "needs a TraceSet", "an array instead of a TraceSet")
    _raises(lambda: cls(**params).transform(data, seed=-1), "seed must be a whole number >= 0", "a negative seed")


ANONYMIZER_CHECKS: tuple[Check, ...] = (check_transform, check_anonymizer_ledger, check_anonymizer_bad_input,
                                        check_hyperparameters_declared, check_tiny_epsilon, check_huge_epsilon)


def method_checks(cls) -> tuple[Check, ...]:
    """The checks that apply to ``cls`` (a Synthesizer or an Anonymizer subclass)."""
    if isinstance(cls, type) and issubclass(cls, Synthesizer):
        return SYNTHESIZER_CHECKS
    if isinstance(cls, type) and issubclass(cls, Anonymizer):
        return ANONYMIZER_CHECKS
    raise InputError(f"check_method takes a Synthesizer or Anonymizer class, got {cls!r}")


def check_method(cls, *, data=None, params: dict | None = None) -> list[str]:
    """Run every check of ``cls`` (a class, or a registered method's name) on ``data`` (default:
    :func:`check_data`) with constructor ``params``; an AssertionError names the first that fails.
    Returns the names of the checks run."""
    if isinstance(cls, str):
        from .synth import registry

        cls = registry.get(cls)
    data = check_data() if data is None else data
    names = []
    for check in method_checks(cls):
        try:
            check(cls, data, dict(params or {}))
        except AssertionError as exc:
            raise AssertionError(f"{cls.__name__} fails {check.__name__}: {exc}") from None
        names.append(check.__name__)
    return names


# -- metric groups ---------------------------------------------------------------------------------

def check_metric_group(group, *, data=None, options: dict | None = None) -> list[str]:
    """Check a metric group (metrics/groups.MetricGroup) against its declaration, as
    :func:`check_method` checks a method: on ``data`` = (train, test, synthetic) (default: half of
    a simulated city each for train and test, and a uniform synthetic set), with ``options`` (the
    group's defaults for the rest), it applies, produces only keys it declares (each a row of
    synthetic, training and uniform values), every declared metric has a label and a goal, its
    figures render as PNG, and a bad value of each option is refused with an InputError. Returns
    the keys it produced; an AssertionError says what failed."""
    from .metrics.groups import Context, GroupResult, MetricGroup

    assert isinstance(group, MetricGroup), f"check_metric_group takes a MetricGroup, got {type(group).__name__}"
    if data is None:
        from .data.simulate import simulate
        from .synth.baselines import Uniform

        train, test = simulate(60, seed=5).split(0.5, seed=0)
        data = (train, test, Uniform().fit(train).sample(seed=1))
    train, test, synthetic = data
    settings = {**group.defaults(), "seed": 0, "attacks": [group.name] if group.kind == "attack" else [],
                **(options or {})}
    ctx = Context(train, test, synthetic, settings)
    reason = group.skip(ctx)
    assert reason is None, f"{group.name} does not apply to the data given ({reason or 'skipped'}): pass data="
    result = group.compute(ctx)
    assert isinstance(result, GroupResult), f"{group.name}.compute must return a GroupResult"
    undeclared = sorted(set(result.metrics) - set(group.keys))
    assert not undeclared, f"{group.name} produces keys it does not declare: {', '.join(undeclared)}"
    for key, row in result.metrics.items():
        assert set(row) == {"synthetic", "training", "uniform"}, f"{key}: a row is synthetic, training, uniform"
    for metric in group.metrics:
        assert metric.label and metric.goal in ("lower", "higher"), f"{metric.key}: needs a label and a goal"
    for figure in group.figures:
        if figure.when(result.details, result.meta):
            png = figure.draw(result.details, result.meta)
            assert isinstance(png, bytes) and png.startswith(b"\x89PNG"), f"{figure.heading}: not a PNG"
            assert figure.text(result.details, result.meta), f"{figure.heading}: no caption"
    for option in group.options:
        bad = _bad_value(option)
        if bad is not None:
            _raises(lambda: option.parse(bad), option.name, f"{group.name}: {option.name}={bad!r}")
    return sorted(result.metrics)


def _bad_value(option):
    """A value the option must refuse (None where its declaration admits anything)."""
    if option.choices is not None:
        return "no-such-choice"
    if isinstance(option.default, bool):
        return "maybe"
    if isinstance(option.default, (int, float)):
        return "many"
    return None
