"""Partitioned sets and fits by partitions (data/partitioned.py, data/chunks.py; DESIGN.md, Scale): a
trip set split into 4 Parquet partitions gives, method by method, the noiseless counts, the
sensitivities, the ledger and (noise switched to a fixed draw) the model of the fit of the same set
in one file; and the same again when the partitions are counted on a cluster."""

import itertools
from dataclasses import replace
from datetime import date

import numpy as np
import pandas as pd
import pytest

from locsynth import Grid, InputError, TimeAxis, TraceSet
from locsynth.core.parallel import add, tree_sum
from locsynth.data.chunks import Partitions, SparseCounts, first_traces
from locsynth.data.partitioned import PartitionedTraceSet, by_user, load_traces, save_partitioned
from locsynth.privacy import _opendp, oue
from locsynth.privacy.ledger import Ledger
from locsynth.synth import registry, trip_times

GRID = Grid(12, 12, (37.70, 37.77, -122.46, -122.38))         # cells of about 650 m
AXIS = TimeAxis.build(date(2008, 5, 19), "America/Los_Angeles", "1min", "1h")
METHODS = ("ngram", "privtrace", "adatrace", "dpt", "ldptrace")


def trips(n: int = 3000, seed: int = 0, days: int = 21) -> TraceSet:
    """Trips over ``days`` days, mornings and evenings: walks of 2 to 12 touching cells, one to
    three minutes a step, each trip its own user (as prepare makes trips)."""
    rng = np.random.default_rng(seed)
    user, t, loc, hour = [], [], [], []
    for i in range(n):
        start = int(rng.integers(0, days)) * 1440 + int(rng.choice([7, 8, 9, 17, 18])) * 60 + int(rng.integers(0, 60))
        r, c = (int(v) for v in rng.integers(2, 10, 2))
        cells = [r * 12 + c]
        for _ in range(int(rng.integers(1, 12))):
            r, c = (min(max(v + int(rng.integers(-1, 2)), 0), 11) for v in (r, c))
            if r * 12 + c != cells[-1]:
                cells.append(r * 12 + c)
        if len(cells) < 2:
            cells.append(cells[0] + 1)
        step = int(rng.integers(1, 4))
        user += [i] * len(cells)
        t += [start + step * k for k in range(len(cells))]
        loc += cells
        hour.append(int(AXIS.start_of(np.array([start]))[0].tz_convert(AXIS.timezone).hour))
    users = pd.DataFrame({"user_id": [f"t{i}" for i in range(n)], "hour": np.array(hour, np.int8)})
    ts = TraceSet.from_events(user, t, loc, users, GRID, AXIS, info={"min_cells": 2})
    return replace(ts, ledger=Ledger(traces_per_user=1))


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """The trips in 4 partitions, and the same set in one file, in the partitions' order."""
    folder = tmp_path_factory.mktemp("parts")
    save_partitioned(trips(), folder / "parts", 4)
    one = TraceSet.load(folder / "parts")
    one.save(folder / "one")
    return PartitionedTraceSet.open(folder / "parts"), TraceSet.load(folder / "one")


class Drawn:
    """OpenDP's Laplace measurements replaced by a fixed draw (seeded by the order of the calls),
    each call's true values and sensitivity recorded; OUE's tally likewise; k-RR's reports (LDPTrace's
    time reports, randomized where each trajectory is) by a fixed function of the value. In this
    process only: a cluster's workers randomize as they would."""

    def __init__(self, monkeypatch):
        self.calls = []
        monkeypatch.setattr(_opendp, "float_laplace", lambda n, scale: self._measure(scale, float))
        monkeypatch.setattr(_opendp, "integer_laplace", lambda scale: self._measure(scale, int))
        monkeypatch.setattr(_opendp, "randomized_response", self._response)
        monkeypatch.setattr(oue, "tally", self._tally)

    @staticmethod
    def _response(k, keep):
        class Measurement:
            def map(self, sensitivity):
                return 1.0

            def __call__(self, value):
                return (3 * value + 1) % k          # a fixed draw: every value to another, whatever the chunk

        return Measurement()

    def reset(self) -> list:
        calls, self.calls = self.calls, []
        return calls

    def _measure(self, scale, kind):
        seed = len(self.calls)
        calls = self.calls

        class Measurement:
            def map(self, sensitivity):
                calls.append(["laplace", float(sensitivity), scale, None])
                return float(sensitivity) / scale

            def __call__(self, values):
                calls[-1][3] = np.asarray(values, np.float64)
                noise = np.random.default_rng(seed).laplace(0.0, scale, len(values))
                return (np.asarray(values) + (np.round(noise).astype(np.int64) if kind is int else noise)).tolist()

        return Measurement()

    def _tally(self, held, reports, epsilon):
        held = np.asarray(held, np.int64)
        self.calls.append(["tally", int(reports), epsilon, held.astype(np.float64)])
        rng = np.random.default_rng(len(self.calls))
        return rng.binomial(held, 0.5) + rng.binomial(int(reports) - held, oue.flip_probability(epsilon))


def same(a, b, what: str) -> None:
    """Equal arrays; float sums of fractional weights equal up to the order of their additions."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, what
    if a.dtype.kind == "f" and not np.array_equal(a, b):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=what)
    else:
        assert np.array_equal(a, b), what


def fitted(name: str, train, drawn: Drawn, client=None, **params):
    drawn.reset()
    model = registry.get(name)(epsilon=2.0, **params).fit(train, client=client)
    return model, drawn.reset()


def assert_same_fit(one, by_parts) -> None:
    (a, calls_a), (b, calls_b) = one, by_parts
    assert len(calls_a) == len(calls_b) > 2
    for i, (x, y) in enumerate(zip(calls_a, calls_b)):
        assert x[:3] == y[:3], f"noise step {i}: mechanism, sensitivity (or reports) and scale"
        same(x[3], y[3], f"the noiseless counts of noise step {i}")
    assert a.ledger_.to_dict() == b.ledger_.to_dict() and a.training_ == b.training_
    # the noise estimate (privacy/noise.py) and the SmallDataWarning read only what the sums gave
    assert a.noise_ == b.noise_ and a.noise_ is not None
    if getattr(a, "footprint_", None) is not None:
        assert np.array_equal(a.footprint_, b.footprint_)
    arrays_a, arrays_b = a._arrays(), b._arrays()
    if getattr(a, "trip_times_", None) is not None:
        arrays_a.update(a.trip_times_.arrays())
        arrays_b.update(b.trip_times_.arrays())
    assert arrays_a.keys() == arrays_b.keys()
    for key in arrays_a:
        same(arrays_a[key], arrays_b[key], key)


@pytest.mark.parametrize("name", METHODS)
def test_a_fit_by_partitions_counts_noises_and_models_as_the_fit_in_one_file(parts, name, monkeypatch):
    partitioned, one = parts
    drawn = Drawn(monkeypatch)
    assert_same_fit(fitted(name, one, drawn), fitted(name, partitioned, drawn))


def test_the_central_methods_fit_their_dp_footprint_by_partitions(parts, monkeypatch):
    """The footprint's visit weights (privacy/footprint.py, each trip's distinct blocks sharing 1)
    are one of the counting steps above: at 3,000 trips it is spent, its weights summed over the
    partitions, the cells kept the same."""
    partitioned, one = parts
    drawn = Drawn(monkeypatch)
    for name in ("ngram", "privtrace", "adatrace", "dpt"):
        (a, calls_a), (b, calls_b) = fitted(name, one, drawn), fitted(name, partitioned, drawn)
        assert a.footprint_ is not None and not a.footprint_.all() and np.array_equal(a.footprint_, b.footprint_)
        weights = [c[3] for c in calls_a if c[3] is not None and c[3].size == 36]     # 6 x 6 blocks of 2 x 2
        assert any(w.sum() == pytest.approx(one.n_traces) for w in weights)        # the trips' shares of 1


def bike_set_in_a_domain(path, n: int = 2000):
    """:func:`trips` with a bike's public bounds (speed bins log-spaced over 1-40 km/h, not the
    cabs') on a grid whose public domain leaves out its two western columns, in 4 partitions."""
    from locsynth.data.modes import mode_bounds

    ts = trips(n, seed=6)
    allowed = np.ones(GRID.n_locations, bool)
    allowed[(np.arange(GRID.n_locations) % 12) < 2] = False
    space = Grid(12, 12, GRID.bbox, allowed=allowed, domain="all but the two western columns (a test's)")
    ts = replace(ts, space=space, info={**ts.info, "bounds": mode_bounds("bike").to_dict()})
    save_partitioned(ts, path, 4)
    return PartitionedTraceSet.open(path), TraceSet.load(path)


@pytest.mark.parametrize("name", METHODS)
def test_a_fit_by_partitions_keeps_the_sets_bounds_and_domain_as_in_one_file(tmp_path, name, monkeypatch):
    """The time model's speed bins span the set's bounds (a bike's), and a public domain shapes the
    counts (NGRAM's alphabet, the closed states and cells), by partitions as in one file."""
    partitioned, one = bike_set_in_a_domain(tmp_path / "bike")
    drawn = Drawn(monkeypatch)
    a, b = fitted(name, one, drawn), fitted(name, partitioned, drawn)
    assert_same_fit(a, b)
    assert a[0].trip_times_.bound == 40.0 and np.array_equal(a[0].trip_times_.edges, b[0].trip_times_.edges)
    assert getattr(a[0], "footprint_", None) is None                 # a domain needs no footprint


@pytest.mark.parametrize("name, params", [("dpt", {"time_share": 0.0}), ("ngram", {"max_traces_per_user": 1}),
                                          ("adatrace", {"variant": "code"}), ("ldptrace", {"time_share": 0.0})])
def test_the_variants_fit_by_partitions_as_in_one_file(parts, name, params, monkeypatch):
    """DPT's hours (no time model), AdaTrace's code variant (a second density pass), LDPTrace
    without time reports."""
    partitioned, one = parts
    drawn = Drawn(monkeypatch)
    assert_same_fit(fitted(name, one, drawn, **params), fitted(name, partitioned, drawn, **params))


def same_counts(a, b) -> None:
    """Two trip_times.Counts: the same layout (period, open days, day kinds) and histograms."""
    assert (a.layout.period, a.layout.kinds) == (b.layout.period, b.layout.kinds)
    assert np.array_equal(a.layout.open, b.layout.open) and np.array_equal(a.layout.kind, b.layout.kind)
    for part in ("dates", "hours", "speeds", "durations"):
        assert np.array_equal(getattr(a, part), getattr(b, part)), part


def test_the_time_model_counts_by_partitions_its_dates_hours_speeds_and_durations(tmp_path):
    """The time model's counts (issue 55: the period's dates, the hours by day kind, the speeds, the
    durations) summed over 3 partitions, with and without a calendar that closes the weekends."""
    from locsynth.data.trips import WEEKDAYS

    for days, info in ((10, {}), (21, {}), (21, {"calendar": WEEKDAYS})):
        ts = trips(600, seed=2, days=days)
        ts = replace(ts, info={**ts.info, **info})
        path = tmp_path / f"d{days}{len(info)}"
        save_partitioned(ts, path, 3)
        expected = trip_times.counts(TraceSet.load(path))
        same_counts(expected, trip_times.counts(Partitions(PartitionedTraceSet.open(path))))
        assert expected.durations.sum() == ts.n_traces and expected.layout.period <= days
        assert (expected.dates.sum() == ts.n_traces) == (not info)     # a closed weekend's starts count nowhere
    assert expected.dates.size < expected.layout.period             # the calendar closed some days
    # the speed bins of the set's bounds: a bike's slower bins hold these 1-3 minute steps otherwise
    _, bike = bike_set_in_a_domain(tmp_path / "bike", 600)
    expected = trip_times.counts(bike)
    same_counts(expected, trip_times.counts(Partitions(PartitionedTraceSet.open(tmp_path / "bike"))))
    assert not np.array_equal(expected.speeds, trip_times.counts(
        replace(bike, info={k: v for k, v in bike.info.items() if k != "bounds"})).speeds)


def test_a_partitioned_set_reads_whole_and_by_partitions(parts, tmp_path):
    partitioned, one = parts
    assert partitioned.n_partitions == 4 and partitioned.n_traces == one.n_traces == 3000
    assert partitioned.n_events == one.n_events and isinstance(load_traces(partitioned.path), PartitionedTraceSet)
    assert isinstance(load_traces(one_path(partitioned)), TraceSet)
    pieces = [partitioned.partition(i) for i in range(4)]
    assert [p.n_traces for p in pieces] == partitioned.sizes.tolist()
    assert np.array_equal(np.concatenate([p.loc for p in pieces]), one.loc)
    assert pd.concat([p.users for p in pieces], ignore_index=True).equals(one.users)
    assert partitioned.min_cells == one.min_cells == 2 and partitioned.has_times and partitioned.exact
    assert list(partitioned.users.columns) == ["user_id", "hour"] and len(partitioned.users) == 0
    # every user id in one partition, whatever the set: hashed
    ts = trips(200, seed=5)
    ts = replace(ts, users=ts.users.assign(user_id=[f"u{i % 37}" for i in range(200)]))
    rows = by_user(ts, 4)
    ids = [set(ts.users["user_id"].to_numpy()[r]) for r in rows]
    assert sum(len(r) for r in rows) == 200 and all(not (a & b) for a, b in itertools.combinations(ids, 2))
    # a bound on traces per user, partition by partition, as on the whole
    save_partitioned(ts, tmp_path / "users", 4)
    bounded = Partitions(PartitionedTraceSet.open(tmp_path / "users")).bounded(2)
    assert bounded.n_traces == first_traces(ts, 2).n_traces == 74


def test_a_damaged_partitioned_set_is_one_clear_error(parts, tmp_path):
    partitioned, _ = parts
    import json
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(partitioned.path, copy)
    meta = json.loads((copy / "meta.json").read_text())
    meta["partitions"][1]["traces"] += 1
    (copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="meta.json counts .* do not match its partitions"):
        PartitionedTraceSet.open(copy)
    meta["counts"]["traces"] += 1
    (copy / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="part-00001 is damaged"):
        PartitionedTraceSet.open(copy).partition(1)
    with pytest.raises(InputError, match="in one piece, not a partitioned one"):
        PartitionedTraceSet.open(one_path(partitioned))


def one_path(partitioned):
    """Where the fixture wrote the set in one file."""
    return partitioned.path.parent / "one"


def test_methods_that_do_not_count_by_partitions_and_adatraces_defences_refuse_a_partitioned_set(parts):
    partitioned, _ = parts
    with pytest.raises(InputError, match="fits a TraceSet in memory, and .* is partitioned \\(4 partitions\\)"):
        registry.get("uniform")().fit(partitioned)
    with pytest.raises(InputError, match="defences read the real trajectories"):
        registry.get("adatrace")(defences=True).fit(partitioned)


def test_counts_add_up_sparse_and_padded():
    a = SparseCounts.of(np.array([5, 1, 5, 9]), 12)
    b = SparseCounts.of(np.array([9, 0, 5]), 12)
    assert (a + b).dense().tolist() == np.bincount([5, 1, 5, 9, 9, 0, 5], minlength=12).tolist()
    assert add(np.ones((2, 3)), np.ones((4, 3))).tolist() == [[2] * 3, [2] * 3, [1] * 3, [1] * 3]
    assert add({"x": (1, np.arange(2))}, {"x": (2, np.arange(3))})["x"][1].tolist() == [0, 2, 2]
    assert tree_sum(None, np.bincount, [np.array([0, 1]), np.array([3])]).tolist() == [1, 1, 0, 1]


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


def test_counting_by_partitions_on_a_cluster_equals_counting_them_here(parts, client, monkeypatch):
    """NGRAM's levels are summed in a tree on 2 workers: the fit is the one in one file."""
    partitioned, one = parts
    drawn = Drawn(monkeypatch)
    assert_same_fit(fitted("ngram", one, drawn), fitted("ngram", partitioned, drawn, client))
    assert tree_sum(client, np.bincount, [np.array([0, 1]), np.array([3]), np.array([3, 3])]).tolist() == [1, 1, 0, 3]


@pytest.mark.slow
@pytest.mark.parametrize("name", METHODS[1:])
def test_every_method_fits_by_partitions_on_a_cluster_as_in_one_file(parts, client, name, monkeypatch):
    """LDPTrace's time reports are k-RR where the workers randomize them (Drawn fixes this process's
    draws only): it fits here without them, and with them by partitions above."""
    partitioned, one = parts
    drawn = Drawn(monkeypatch)
    params = {"time_share": 0.0} if name == "ldptrace" else {}
    assert_same_fit(fitted(name, one, drawn, **params), fitted(name, partitioned, drawn, client, **params))


def test_a_partitioned_sample_is_the_same_set_whatever_the_workers(parts, client, tmp_path):
    """Each partition from (seed, partition) alone: 2 workers write what one process writes; the
    virtual ids count across partitions."""
    from locsynth.synth.partitioned import partition_seed, sample_partitioned

    model = registry.get("ngram")(epsilon=2.0).fit(parts[1])
    here = sample_partitioned(model, tmp_path / "here", 1000, partition_trips=300, seed=4)
    there = sample_partitioned(model, tmp_path / "there", 1000, partition_trips=300, seed=4, client=client)
    assert here.sizes.tolist() == [300, 300, 300, 100] == there.sizes.tolist()
    a, b = TraceSet.load(here.path), TraceSet.load(there.path)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t) and a.users.equals(b.users)
    assert a.users["user_id"].tolist() == [f"v{q}" for q in range(1000)] and a.ledger.to_dict() == model.ledger_.to_dict()
    first = model.sample(300, seed=partition_seed(4, 0))
    assert np.array_equal(here.partition(0).loc, first.loc)
    assert partition_seed(4, 0) != partition_seed(4, 1) and partition_seed(4, 0) != partition_seed(5, 0)
    with pytest.raises(InputError, match="does not write partitions"):
        sample_partitioned(registry.get("training")().fit(parts[1]), tmp_path / "no", 10)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A ``dask scheduler`` and two ``dask worker`` processes started on their own, as on a real
    cluster (each worker importing this locsynth); their address."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    import locsynth
    from distributed import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    src = str(Path(locsynth.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    logs = tmp_path_factory.mktemp("dask")
    commands = [["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]] + \
        [["worker", address, "--nthreads", "1", "--memory-limit", "1GiB", "--no-dashboard"]] * 2
    procs = [subprocess.Popen([sys.executable, "-m", "dask", *cmd], env=env, stdout=subprocess.DEVNULL,
                              stderr=open(logs / f"{i}.log", "w")) for i, cmd in enumerate(commands)]
    try:
        with Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in procs[::-1]:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.mark.slow
def test_the_command_line_fits_and_samples_by_partitions_on_a_scheduler_started_apart(parts, scheduler, tmp_path,
                                                                                        monkeypatch):
    from typer.testing import CliRunner

    from locsynth.cli import app
    from locsynth.evaluation.evaluate import Report
    from locsynth.synth.base import Synthesizer

    partitioned, one = parts
    runner = CliRunner()
    drawn = Drawn(monkeypatch)
    for name, params in (("ngram", []), ("ldptrace", ["--time-share", "0"])):     # k-RR reports: the workers'
        expected = fitted(name, one, drawn, **({"time_share": 0.0} if params else {}))
        res = runner.invoke(app, ["fit", name, str(partitioned.path), "--out", str(tmp_path / name), "--epsilon", "2",
                                  "--scheduler", scheduler, *params])
        assert res.exit_code == 0, res.output
        model = Synthesizer.load(tmp_path / name)
        assert_same_fit(expected, (model, drawn.reset()))
    runner.invoke(app, ["sample", str(tmp_path / "ngram"), "--out", str(tmp_path / "here"), "--partition-trips", "500"])
    res = runner.invoke(app, ["sample", str(tmp_path / "ngram"), "--out", str(tmp_path / "there"),
                              "--partition-trips", "500", "--scheduler", scheduler])
    assert res.exit_code == 0 and "in 7 partitions" in res.output, res.output
    a, b = TraceSet.load(tmp_path / "here"), TraceSet.load(tmp_path / "there")
    size = Synthesizer.load(tmp_path / "ngram").training_["dp_count"]
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t) and a.n_traces == size
    res = runner.invoke(app, ["evaluate", "--train", str(partitioned.path), "--test", str(partitioned.path),
                              "--synthetic", str(tmp_path / "there"), "--out", str(tmp_path / "ev"), "--attacks", "none",
                              "--sample-trips", "400", "--scheduler", scheduler])
    assert res.exit_code == 0, res.output
    report = Report.load(tmp_path / "ev")
    assert report.meta["by_partitions"]["sample"]["trips"]["synthetic"] == 400 and report.metrics["query_error"]
    (tmp_path / "fixes").mkdir()
    fixes_of(one).to_parquet(tmp_path / "fixes" / "all.parquet")
    res = runner.invoke(app, ["prepare", str(tmp_path / "fixes"), "--format", "trips", "--out", str(tmp_path / "prep"),
                              "--cell-m", "500", "--timezone", AXIS.timezone, "--split", "test=0.2", "--partitions", "3",
                              "--scheduler", scheduler])
    assert res.exit_code == 0 and "of 3000 trips kept" in res.output, res.output
    assert PartitionedTraceSet.open(tmp_path / "prep" / "train").n_partitions == 3
    res = runner.invoke(app, ["fit", "ppmtf", str(partitioned.path), "--out", str(tmp_path / "x"), "--scheduler",
                              scheduler])
    assert res.exit_code == 1 and "do not apply to fitting ppmtf" in res.output
    res = runner.invoke(app, ["fit", "ppmtf", str(partitioned.path), "--out", str(tmp_path / "x")])
    assert res.exit_code == 1 and "is partitioned (4 partitions)" in res.output and not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def evaluated(parts, tmp_path_factory):
    """A synthetic set and a test set, partitioned and in one file."""
    partitioned, one = parts
    folder = tmp_path_factory.mktemp("evaluated")
    save_partitioned(registry.get("ngram")(epsilon=2.0).fit(one).sample(2500, seed=1), folder / "syn", 3)
    save_partitioned(trips(2000, seed=7), folder / "test", 2)
    return ({"train": partitioned, "test": PartitionedTraceSet.open(folder / "test"),
             "synthetic": PartitionedTraceSet.open(folder / "syn")},
            {"train": one, "test": TraceSet.load(folder / "test"), "synthetic": TraceSet.load(folder / "syn")})


@pytest.mark.parametrize("flavour", ["adatrace", "corrected"])
def test_the_standard_suite_summed_over_partitions_is_the_suite_of_the_sets_whole(evaluated, flavour):
    from locsynth.metrics.standard import Settings, standard_metrics
    from locsynth.metrics.standard_counts import standard_by_chunks

    parted, whole = evaluated
    settings = Settings(flavour=flavour)
    values, located = standard_by_chunks(parted["test"], {"s": parted["synthetic"], "t": parted["train"]}, settings)
    assert values["s"] == standard_metrics(whole["test"], whole["synthetic"], settings)
    assert values["t"] == standard_metrics(whole["test"], whole["train"], settings)
    assert located == {"real": 2000, "s": 2500, "t": 3000}
    with pytest.raises(InputError, match="ldptrace flavour .* is not a sum over chunks"):
        standard_by_chunks(parted["test"], {}, Settings(flavour="ldptrace"))


def test_evaluating_partitions_scores_every_trip_of_the_standard_suite_and_a_stated_sample_of_the_rest(evaluated):
    from locsynth.data.chunks import sample_traces
    from locsynth.evaluation.evaluate import evaluate
    from locsynth.evaluation.partitioned import evaluate_partitioned

    parted, whole = evaluated
    groups, options = ["trips", "standard"], {"attacks": "none"}
    exact = evaluate(whole["train"], whole["test"], whole["synthetic"], groups=groups, **options)
    everything = evaluate_partitioned(parted["train"], parted["test"], parted["synthetic"], sample_trips=10_000,
                                      groups=groups, **options)
    assert everything.metrics == exact.metrics and "error" not in everything.meta["by_partitions"]["sample"]
    some = evaluate_partitioned(parted["train"], parted["test"], parted["synthetic"], sample_trips=600,
                                groups=groups, **options)
    seen = some.meta["by_partitions"]
    assert seen["every_trip"] == ["query_error", "density_error", "trip_error", "length_error", "diameter_error",
                                  "pattern_f1", "pattern_support_error", "kendall_tau", "hotspot_error"]
    assert all(some.metrics[k] == exact.metrics[k] for k in seen["every_trip"])
    assert seen["sample"]["trips"] == {"train": 600, "test": 600, "synthetic": 600}
    assert seen["sample"]["of"]["synthetic"] == {"traces": 2500, "events": whole["synthetic"].n_events}
    assert set(seen["sample"]["error"]) == set(seen["sampled"]) and "trip_length_jsd" in seen["sampled"]
    assert some.meta["synthetic"]["traces"] == 2500
    assert any(some.metrics[k] != exact.metrics[k] for k in seen["sampled"])      # a sample, not the whole
    # the sample is the same traces whatever the partitions
    a, b = sample_traces(parted["synthetic"], 600, 3), sample_traces(whole["synthetic"], 600, 3)
    assert a.users.equals(b.users) and np.array_equal(a.loc, b.loc) and a.n_traces == 600


def test_evaluate_samples_the_trips_of_sets_in_one_file_only_when_asked(evaluated, tmp_path):
    """Plain sets: every trip by default; --sample-trips N the partitioned evaluation's stated sample
    (the Porto-size path of issue 53); refused below 1 and on traces of days."""
    import json

    from typer.testing import CliRunner

    from locsynth.cli import app

    _, whole = evaluated
    for name, ts in whole.items():
        ts.save(tmp_path / name)
    runner = CliRunner()

    def run(out, *more):
        return runner.invoke(app, ["--quiet", "evaluate", "--train", str(tmp_path / "train"), "--test",
                                   str(tmp_path / "test"), "--synthetic", str(tmp_path / "synthetic"), "--out",
                                   str(tmp_path / out), "--attacks", "none", *more])

    res = run("sampled", "--sample-trips", "600")
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "sampled" / "metrics.json").read_text())["_meta"]
    assert meta["by_partitions"]["sample"]["trips"] == {"train": 600, "test": 600, "synthetic": 600}
    res = run("whole")
    assert res.exit_code == 0, res.output
    assert "by_partitions" not in json.loads((tmp_path / "whole" / "metrics.json").read_text())["_meta"]
    res = run("none", "--sample-trips", "0")
    assert res.exit_code == 1 and "--sample-trips must be at least 1, got 0" in res.output


def fixes_of(ts: TraceSet, seed: int = 0) -> pd.DataFrame:
    """The trips as GPS fixes (a trip id, UTC times, coordinates near their cells' centres)."""
    rng = np.random.default_rng(seed)
    jitter = rng.normal(0, 0.0005, (2, ts.n_events))
    return pd.DataFrame({"traj_id": ts.users["user_id"].to_numpy()[ts.user],
                         "time": ts.time.start_of(ts.t).tz_convert("UTC"),
                         "lat": np.asarray(ts.space.lat)[ts.loc] + jitter[0],
                         "lon": np.asarray(ts.space.lon)[ts.loc] + jitter[1]})


def test_trips_from_files_of_fixes_by_partitions_are_the_trips_of_the_frame(tmp_path):
    """Fixes in 3 Parquet files, shuffled by trip into 4 partitions: the trips (on the set's grid,
    the data's box, the axis from the earliest trip, later partitions moved onto it) of the frame."""
    from locsynth.data.frames import trips_from_frame
    from locsynth.data.prepare_partitions import held_out, trips_from_files

    ts = trips(400, seed=4)
    later = np.where(ts.user > 0, ts.t + 5 * 1440, ts.t)       # one trip 5 days before the others
    frame = fixes_of(replace(ts, t=later)).sample(frac=1, random_state=0).reset_index(drop=True)
    (tmp_path / "fixes").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[rows].to_parquet(tmp_path / "fixes" / f"part{i}.parquet")
    expected = trips_from_frame(frame, cell_m=500, timezone=AXIS.timezone)
    made = trips_from_files(tmp_path / "fixes", tmp_path / "out", cell_m=500, timezone=AXIS.timezone, partitions=4)[""]
    got = TraceSet.load(made.path)

    def events(t):
        return pd.DataFrame({"id": t.users["user_id"].to_numpy()[t.user], "t": t.t, "loc": t.loc}).sort_values(
            ["id", "t"], ignore_index=True)

    assert made.n_partitions == 4 and got.time.start_date == expected.time.start_date
    assert events(got).equals(events(expected)) and got.info["trips"] == expected.info["trips"]
    assert got.ledger.to_dict() == expected.ledger.to_dict() and got.space.meta() == expected.space.meta()
    # held out by a hash of (seed, id): the same trips whatever the partitions
    split = trips_from_files(str(tmp_path / "fixes" / "*.parquet"), tmp_path / "split", cell_m=500,
                             timezone=AXIS.timezone, split=0.25, seed=3, partitions=2)
    test = set(TraceSet.load(split["test"].path).users["user_id"])
    assert split["train"].n_traces + len(test) == 400 and 70 < len(test) < 130
    assert test == set(held_out(got, 0.25, 3)[1].users["user_id"])
    with pytest.raises(InputError, match="no Parquet or CSV file of fixes"):
        trips_from_files(tmp_path / "nothing-*.csv", tmp_path / "x")


def test_trips_from_files_take_a_mode_as_a_frame_does_and_refuse_a_domain(tmp_path):
    """A mode's bounds (a bike's: 250 m cells, a speed bound of 40 km/h that drops the faster trips,
    its bounds carried by the set) by partitions as for the frame; a public domain is refused."""
    from locsynth.data.frames import trips_from_frame
    from locsynth.data.prepare_partitions import trips_from_files

    frame = fixes_of(trips(300, seed=7))
    (tmp_path / "fixes").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), 2)):
        frame.iloc[rows].to_parquet(tmp_path / "fixes" / f"part{i}.parquet")
    expected = trips_from_frame(frame, mode="bike", timezone=AXIS.timezone)
    made = trips_from_files(tmp_path / "fixes", tmp_path / "out", mode="bike", timezone=AXIS.timezone,
                            partitions=3)[""]
    got = TraceSet.load(made.path)
    assert got.bounds == expected.bounds and got.bounds.mode == "bike" and got.info["trips"] == expected.info["trips"]
    assert got.space.meta() == expected.space.meta() and got.time.instant == expected.time.instant
    assert got.n_traces == expected.n_traces < 300                    # the bike's bound dropped some
    with pytest.raises(InputError, match="public domain is not taken by partitions"):
        trips_from_files(tmp_path / "fixes", tmp_path / "d", domain=tmp_path / "any.gpkg", timezone=AXIS.timezone)
    assert not (tmp_path / "d").exists()
