"""Dask scale-out (core/parallel.py): a real LocalCluster of 2 worker processes gives the serial results."""

import json
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from locsynth import InputError, TraceSet
from locsynth.attacks import membership_inference, reidentify
from locsynth.cli import app
from locsynth.core.parallel import chunk_bounds, deal, executor, map_chunks, threads
from locsynth.privacy.plausible_deniability import choose_candidates
from locsynth.data.simulate import make_space, simulate
from locsynth.synth.ppmtf import PPMTF, PPMTFPlus

runner = CliRunner()


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def city():
    """A small simulated city split into training and test users, and models fitted briefly."""
    ts = simulate(80, days=2, space=make_space(grid=(8, 8)), seed=1)
    train, test = ts.split(test=0.25, seed=0)
    params = dict(iterations=3, rank=6, rho=50, seed=0)
    return {"train": train, "test": test, "ppmtf": PPMTF(**params).fit(train),
            "plus": PPMTFPlus(**params).fit(train)}


def same_traces(a: TraceSet, b: TraceSet) -> bool:
    return (np.array_equal(a.user, b.user) and np.array_equal(a.t, b.t) and np.array_equal(a.loc, b.loc)
            and a.users.equals(b.users))


def same_pd(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("counts", "passed", "loglik", "candidates"))


def test_map_chunks_keeps_order_reports_progress_and_raises(client):
    assert threads(client) == 2 and threads(None) == 1
    chunks = [np.arange(lo, hi) for lo, hi in chunk_bounds(50, client)]
    assert len(chunks) == 8 and np.array_equal(np.concatenate(chunks), np.arange(50))   # 7 per chunk
    seen = []
    out = map_chunks(client, np.add, chunks, np.full(1, 10), progress=lambda d, t: seen.append((d, t)),
                     sizes=[c.size for c in chunks])
    assert np.array_equal(np.concatenate(out), np.arange(10, 60))
    assert seen[-1] == (50, 50) and len(seen) == 8
    assert map_chunks(None, np.add, chunks, 10)[3].tolist() == (chunks[3] + 10).tolist()
    assert map_chunks(client, np.add, [], 1) == [] and chunk_bounds(0, client) == []
    for where in (None, client):                              # fold: every result once, none kept
        folded = []
        assert map_chunks(where, np.add, chunks, 10, fold=lambda r: folded.extend(r.tolist())) == []
        assert sorted(folded) == list(range(10, 60))
    big = chunk_bounds(100_000, client, multiple=4096)       # whole blocks of 4096 users, ~4 per worker
    assert big[0] == (0, 16384) and big[-1] == (98304, 100000) and all(a[1] == b[0] for a, b in zip(big, big[1:]))
    with pytest.raises(InputError, match="k = 9 is larger than the 3 training users"):   # raised on a worker
        map_chunks(client, choose_candidates, [3], None, 0, 9, 1.0, np.zeros(1))


def test_ppmtf_sampling_on_the_cluster_equals_serial(client, city):
    model = city["ppmtf"]
    serial = model.sample(traces_per_user=3, days=2, seed=4)
    seen = []
    spread = model.sample(traces_per_user=3, days=2, seed=4, client=client, progress=lambda d, t: seen.append(d))
    assert same_traces(serial, spread)
    assert np.array_equal(serial.users["loglik"].to_numpy(), spread.users["loglik"].to_numpy())
    assert len(seen) > 1 and seen[-1] == model.n_users
    some = model.sample(users=[5, 2, 9], seed=4, client=client)
    assert same_traces(some, model.sample(users=[5, 2, 9], seed=4))


def test_ppmtf_plus_sampling_on_the_cluster_equals_serial(client, city):
    model = city["plus"]
    serial = model.sample(70, traces_per_user=2, seed=2, home_regions=True)
    spread = model.sample(70, traces_per_user=2, seed=2, home_regions=True, client=client)
    assert same_traces(serial, spread) and (spread.users["source"] == -1).all()


def test_pd_test_on_the_cluster_equals_serial(client, city):
    model = city["ppmtf"]
    syn = model.sample(traces_per_user=2, seed=7)
    for kwargs in (dict(k=3, candidates=30, seed=1), dict(k=2, early_stop=False)):
        serial = model.pd_test(syn, **kwargs)
        spread = model.pd_test(syn, client=client, **kwargs)
        assert same_pd(serial, spread) and spread.candidates.size == kwargs.get("candidates", model.n_users)
    # own log-likelihoods computed by the test (no loglik column) rather than taken from generation
    bare = replace(syn, users=syn.users.drop(columns="loglik"))
    assert same_pd(model.pd_test(bare, k=3, seed=1), model.pd_test(bare, k=3, seed=1, client=client))
    with pytest.raises(InputError, match="k = 99 is larger"):
        model.pd_test(syn, k=99, client=client)


def test_attacks_on_the_cluster_equal_serial(client, city):
    train, test, model = city["train"], city["test"], city["ppmtf"]
    syn = model.sample(traces_per_user=3, seed=3)
    serial, spread = reidentify(train, syn, chunk=7), reidentify(train, syn, chunk=7, client=client)
    assert np.array_equal(serial.predicted, spread.predicted) and serial.rate == spread.rate
    sampled = reidentify(train, syn, max_traces=50, seed=2, client=client)
    assert np.array_equal(sampled.predicted, reidentify(train, syn, max_traces=50, seed=2).predicted)
    for per_set in (False, True):
        a = membership_inference(train, test, syn, per_trace_number=per_set)
        b = membership_inference(train, test, syn, per_trace_number=per_set, client=client)
        assert np.array_equal(a.scores, b.scores) and (a.advantage, a.accuracy) == (b.advantage, b.accuracy)


def test_deal_gives_every_position_once_and_balances_the_threads():
    rng = np.random.default_rng(2)
    costs = rng.pareto(1.5, 500) * 100
    for threads in (1, 2, 3, 8):
        order, bounds = deal(costs, threads)
        assert sorted(order.tolist()) == list(range(costs.size)) and bounds[0] == 0 and bounds[-1] == costs.size
        loads = [costs[order[bounds[t]:bounds[t + 1]]].sum() for t in range(threads)]
        # longest processing time first: no thread ends later than the mean load plus one item
        assert max(loads) <= costs.sum() / threads + costs.max() + 1e-9
    order, bounds = deal([5.0, 1.0, 1.0, 1.0, 1.0, 1.0], 2)
    assert order[bounds[0]:bounds[1]].tolist() == [0] and order[bounds[1]:].tolist() == [1, 2, 3, 4, 5]


def test_executor_errors():
    with pytest.raises(InputError, match="not both"):
        with executor(workers=2, scheduler="tcp://127.0.0.1:8786"):
            pass
    with pytest.raises(InputError, match="workers must be at least 1, got 0"):
        with executor(workers=0):
            pass
    with executor() as serial:
        assert serial is None
    start = time.perf_counter()
    with pytest.raises(InputError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:1"):
        with executor(scheduler="tcp://127.0.0.1:1", timeout=1):
            pass
    assert time.perf_counter() - start < 10
    with pytest.raises(InputError, match="scheduler 'localhost' is not an address like tcp://HOST:PORT"):
        with executor(scheduler="localhost"):
            pass


def cli(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.slow
def test_cli_workers_and_scheduler_equal_serial(client, city, tmp_path):
    city["ppmtf"].save(tmp_path / "model")
    res = cli("sample", tmp_path / "model", "--out", tmp_path / "serial", "--traces-per-user", 2, "--seed", 3)
    assert res.exit_code == 0, res.output
    res = cli("sample", tmp_path / "model", "--out", tmp_path / "spread", "--traces-per-user", 2, "--seed", 3,
              "--workers", 2)
    assert res.exit_code == 0, res.output
    assert same_traces(TraceSet.load(tmp_path / "serial"), TraceSet.load(tmp_path / "spread"))

    address = client.scheduler.address
    for name, extra in (("pd-serial", []), ("pd-spread", ["--scheduler", address])):
        res = cli("pdtest", tmp_path / "model", tmp_path / "serial", "--out", tmp_path / name, "--k", 3,
                  "--candidates", 40, *extra)
        assert res.exit_code == 0, res.output
    assert pd.read_csv(tmp_path / "pd-serial" / "pdtest.csv").equals(pd.read_csv(tmp_path / "pd-spread" / "pdtest.csv"))

    city["train"].save(tmp_path / "train")
    city["test"].save(tmp_path / "test")
    metrics = []
    for name, extra in (("ev-serial", []), ("ev-spread", ["--scheduler", address])):
        res = cli("evaluate", "--train", tmp_path / "train", "--test", tmp_path / "test", "--synthetic",
                  tmp_path / "serial", "--out", tmp_path / name, *extra)
        assert res.exit_code == 0, res.output
        m = json.loads((tmp_path / name / "metrics.json").read_text())
        m["_meta"].pop("seconds")
        metrics.append(m)
    assert metrics[0] == metrics[1] and metrics[0]["reid_rate"]["synthetic"] is not None

    res = cli("sample", tmp_path / "model", "--out", tmp_path / "x", "--workers", 2, "--scheduler", address)
    assert res.exit_code == 1 and "not both" in res.output and not (tmp_path / "x").exists()


@pytest.mark.slow
def test_sglt_on_the_cluster_equals_serial(client, city):
    from locsynth.synth.sglt import SGLT

    train = city["train"]
    serial = SGLT(clusters=6, periods=2).fit(train)
    spread = SGLT(clusters=6, periods=2).fit(train, client=client)
    assert np.array_equal(serial.semantic_, spread.semantic_) and np.array_equal(serial.labels_, spread.labels_)
    assert (serial.graph_ != spread.graph_).nnz == 0
    assert same_traces(serial.sample(traces_per_user=3, days=2, seed=4),
                       serial.sample(traces_per_user=3, days=2, seed=4, client=client))
