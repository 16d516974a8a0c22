"""DPTrip (paper 004; synth/dptrip/): the VAE's heads, the next-hop window, shortest paths
against networkx, the accountant against Opacus', the training sampler, save/load and seeds, the
command line, and fit + sample on the 30 cabs."""

import importlib.util
import os
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import traceset

from locsynth import InputError, registry

if os.environ.get("CI"):
    import opacus  # noqa: F401  CI installs the dp extra: a missing one fails here, never skips
    import torch
else:
    torch = pytest.importorskip("torch")
    pytest.importorskip("opacus")

from locsynth.synth.dptrip import DPTrip                                           # noqa: E402
from locsynth.synth.dptrip.accounting import Run, composed_epsilon, noise_multipliers, opacus_epsilon  # noqa: E402
from locsynth.synth.dptrip.generate import Router                                  # noqa: E402
from locsynth.synth.dptrip.initializer import TripVAE, decode, decoder_arrays, head_probabilities  # noqa: E402
from locsynth.synth.dptrip.nexthop import (NextHop, NextHopTables, nexthop_arrays, window_cells,  # noqa: E402
                                           window_class)
from locsynth.privacy.audit import audit                                         # noqa: E402
from locsynth.synth.dptrip.training import (GhostClipping, NoiseAheadOptimizer, one_gram_per_trip,  # noqa: E402
                                            poisson_trips, sample_rate, steps_for, train_concurrently)
from locsynth.synth.dptrip.records import trip_table                                 # noqa: E402


@pytest.fixture(scope="module")
def cabs(data_dir):
    path = data_dir / "sf-cabspotting" / "cabs"
    if not path.is_dir():
        pytest.skip("Cabspotting cabs not found")
    from locsynth.data.trips import read_trips

    return read_trips(path, cell_m=500)


@pytest.fixture(scope="module")
def fitted(cabs):
    """One epoch on the 30 cabs: enough for the protocol, not for utility (the benchmark's job)."""
    return DPTrip(epsilon=1.0, epochs=1, time_share=0).fit(cabs)      # its own times (the hour's start)


def small_trips(n=60, rows=4, cols=5, seed=0):
    """``n`` trips of 2-5 visits on a rows x cols grid, each with an hour."""
    rng = np.random.default_rng(seed)
    traces = []
    for _ in range(n):
        k = int(rng.integers(2, 6))
        cells = rng.integers(0, rows * cols, k)
        traces.append([(i, int(c)) for i, c in enumerate(cells)])
    ts = traceset(traces, rows=rows, cols=cols)
    return replace(ts, users=ts.users.assign(hour=rng.integers(0, 24, n).astype(np.int8)))


# -- data --------------------------------------------------------------------------------------

def test_trip_table_has_endpoints_hours_and_grams_by_trip():
    ts = traceset([[(0, 1), (1, 2), (2, 5)], [(3, 4), (4, 0)]], rows=2, cols=3)
    ts = replace(ts, users=ts.users.assign(hour=np.array([7, 23], np.int8)))
    t = trip_table(ts)
    assert t.source.tolist() == [1, 4] and t.destination.tolist() == [5, 0] and t.hour.tolist() == [7, 23]
    assert list(zip(t.gram_current.tolist(), t.gram_next.tolist())) == [(1, 2), (2, 5), (4, 0)]
    assert t.gram_start.tolist() == [0, 2] and t.gram_count.tolist() == [2, 1]
    # without an hour column: the hour of the first visit
    assert trip_table(traceset([[(5, 0), (6, 1)]])).hour.tolist() == [5]


def test_sampling_takes_one_gram_of_each_sampled_trip():
    rng = np.random.default_rng(0)
    start, count = np.array([0, 3, 3, 7]), np.array([3, 0, 4, 1])
    for _ in range(50):
        trips = poisson_trips(4, 0.7, rng)
        grams = one_gram_per_trip(trips, start, count, rng)
        owner = np.searchsorted(start + count, grams, side="right")
        assert np.array_equal(owner, trips[count[trips] > 0])       # one gram per trip that has any
    assert sample_rate(200, 100) == 1.0 and sample_rate(200, 1000) == 0.2
    assert steps_for(15, 200, 1000) == 75 and steps_for(2, 200, 10) == 2
    hits = np.mean([poisson_trips(1000, 0.2, rng).size for _ in range(200)])
    assert abs(hits - 200) < 5


# -- the models --------------------------------------------------------------------------------

def test_vae_heads_are_probabilities_and_the_loss_is_per_example():
    vae = TripVAE(12)
    z = np.random.default_rng(0).standard_normal((7, 50))
    heads = head_probabilities(decoder_arrays(vae), z)
    assert [h.shape for h in heads] == [(7, 12), (7, 12), (7, 24)]
    for h in heads:
        assert (h >= 0).all() and np.allclose(h.sum(axis=1), 1, atol=1e-5)
    with torch.no_grad():
        logits = vae.decode_logits(torch.from_numpy(z).float())
    for h, lg in zip(heads, logits):
        assert np.allclose(h, torch.softmax(lg, 1).numpy(), atol=1e-5)
    s, d, hr = (torch.tensor(v) for v in ([0, 3], [5, 11], [0, 23]))
    assert vae(s, d, hr).shape == (2,)
    # the first layer is W x + b on the one-hot x of (source, destination, hour)
    x = torch.zeros(2, 2 * 12 + 24)
    x[[0, 1], s], x[[0, 1], 12 + d], x[[0, 1], 24 + hr] = 1, 1, 1
    w = torch.cat([vae.enc1_source.weight, vae.enc1_destination.weight, vae.enc1_hour.weight]).T
    assert torch.allclose(vae.first_layer(s, d, hr), x @ w.T + vae.enc1_bias.weight[0], atol=1e-5)
    src, dst, hour = decode(decoder_arrays(vae), 100, np.random.default_rng(1), "sample")
    assert src.max() < 12 and dst.max() < 12 and hour.max() < 24


def test_next_hop_window_covers_121_cells_clipped_to_the_grid():
    rows, cols = 9, 14
    cells = window_cells(np.arange(rows * cols), rows, cols)
    assert cells.shape == (rows * cols, 121)
    centre = 4 * cols + 7                                        # 4 rows and 7 columns from the edges
    assert (cells[centre] >= 0).sum() == 9 * 11                  # rows 0-8: 9 of the 11 rows fit
    assert (cells[0] >= 0).sum() == 6 * 6 and cells[0, 60] == 0  # the corner; class 60 is the cell itself
    r, c = np.divmod(cells[centre][cells[centre] >= 0], cols)
    assert np.abs(r - 4).max() <= 5 and np.abs(c - 7).max() <= 5
    k = window_class(np.full(3, centre), np.array([centre + 1, centre + 4 * cols - 5, centre + 6]), cols)
    assert k.tolist() == [61, 9 * 11, -1]                        # (dr + 5) * 11 + dc + 5
    assert cells[centre, 61] == centre + 1 and cells[centre, 99] == centre + 4 * cols - 5
    model = NextHop(rows, cols)
    with torch.no_grad():
        p = torch.softmax(model.logits(torch.tensor([0, centre]), torch.tensor([5, 5]), torch.tensor([8, 8])), 1)
    assert torch.allclose(p.sum(1), torch.ones(2)) and (p[0][torch.from_numpy(cells[0] < 0)] == 0).all()
    # the NumPy tables of generation give the same probabilities for every current cell
    tables = NextHopTables(nexthop_arrays(model), rows, cols)
    logp = tables.log_probabilities(5, 8)
    with torch.no_grad():
        ref = torch.log_softmax(model.logits(torch.arange(rows * cols), torch.full((rows * cols,), 5),
                                             torch.full((rows * cols,), 8)), 1).numpy()
    inside = cells >= 0
    assert np.allclose(logp[inside], ref[inside], atol=1e-4) and np.isneginf(logp[~inside]).all()
    assert np.allclose(np.exp(logp).sum(1), 1, atol=1e-5)


def test_shortest_paths_equal_networkx_on_the_same_weights():
    import networkx as nx

    torch.manual_seed(0)        # test weights only; DPTrip never seeds torch
    rows, cols = 6, 8
    router = Router(NextHopTables(nexthop_arrays(NextHop(rows, cols, radius=2)), rows, cols, radius=2))
    rng = np.random.default_rng(0)
    for destination, hour in ((0, 3), (27, 17), (47, 0)):
        g = router.graph(destination, hour)
        ref = nx.from_scipy_sparse_array(g, create_using=nx.DiGraph)
        sources = rng.integers(0, rows * cols, 12)
        sources = sources[sources != destination]
        loc, length = router.paths(sources, np.full(sources.size, destination), np.full(sources.size, hour))
        for s, path in zip(sources, np.split(loc, np.cumsum(length)[:-1])):
            expected = nx.dijkstra_path(ref, int(s), destination)
            cost = nx.path_weight(ref, path.tolist(), "weight")
            assert cost == pytest.approx(nx.path_weight(ref, expected, "weight"), rel=1e-9)
            assert path.tolist() == expected               # continuous weights: no ties
    assert len(router.cache) == 3


# -- DP-SGD ------------------------------------------------------------------------------------

def hop_batch(n=24, seed=0):
    """A next-hop batch on a 6 x 7 grid: (current, destination, hour, class)."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 42, (n,), generator=g), torch.randint(0, 42, (n,), generator=g),
            torch.randint(0, 24, (n,), generator=g), torch.randint(0, 121, (n,), generator=g))


def clipped_sums_by_loop(model, batch, clip):
    """The reference: each example's gradient alone, clipped, summed."""
    total = [torch.zeros_like(p) for p in model.parameters()]
    for i in range(len(batch[0])):
        grads = torch.autograd.grad(model(*(t[i:i + 1] for t in batch)).sum(), list(model.parameters()),
                                    allow_unused=True)
        grads = [torch.zeros_like(p) if g is None else g for p, g in zip(model.parameters(), grads)]
        norm = torch.sqrt(sum(g.square().sum() for g in grads))
        for t, g in zip(total, grads):
            t += g * min(1.0, clip / (float(norm) + 1e-6))
    return total


def test_ghost_clipping_equals_clipping_each_example_alone():
    torch.manual_seed(0)
    hop, batch = NextHop(6, 7, embedding=8, hidden=16), hop_batch()
    clip = GhostClipping(hop, 0.5)
    norms = clip(batch)
    clip.remove()
    assert (norms > 0.5).sum() >= 5 and (norms < 0.5).sum() >= 2    # some clipped, some not
    for p, want in zip(hop.parameters(), clipped_sums_by_loop(hop, batch, 0.5)):
        assert torch.allclose(p.grad, want, rtol=1e-4, atol=1e-6)


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
def test_ghost_clipping_equals_opacus_two_pass_clipping_on_both_models():
    """Opacus' GradSampleModuleFastGradientClipping (a second backward pass) is the library's own
    clipped sum; the VAE's reparametrization draws the same noise on both sides (same seed)."""
    from opacus.grad_sample import GradSampleModuleFastGradientClipping
    from opacus.optimizers import DPOptimizerFastGradientClipping
    from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping

    g = torch.Generator().manual_seed(1)
    cases = [(NextHop(6, 7, embedding=8, hidden=16), hop_batch(), 3.0),
             (TripVAE(42, hidden=20, latent=6), tuple(torch.randint(0, k, (24,), generator=g) for k in (42, 42, 24)),
              1.0)]
    for model, batch, c in cases:
        torch.manual_seed(2)
        ghost = GhostClipping(model, c)
        ghost(batch)
        ghost.remove()
        ours = [p.grad.clone() for p in model.parameters()]
        module = GradSampleModuleFastGradientClipping(model, batch_first=True, loss_reduction="mean",
                                                      max_grad_norm=c, use_ghost_clipping=True)
        optimizer = DPOptimizerFastGradientClipping(torch.optim.SGD(module.parameters(), lr=0.1), noise_multiplier=0,
                                                    max_grad_norm=c, expected_batch_size=24, loss_reduction="mean")
        optimizer.zero_grad()
        torch.manual_seed(2)
        DPTensorFastGradientClipping(module, optimizer, module(*batch), "mean").backward()
        for p, want in zip(model.parameters(), ours):
            assert torch.allclose(p.grad, want, rtol=1e-4, atol=1e-6)
        module._close()


class Sequence3(torch.nn.Module):
    """A dense layer over a sequence: its per-example gradient is no outer product of two rows."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.layer(x).sum(dim=(1, 2))


def test_ghost_clipping_refuses_layers_it_cannot_norm():
    with pytest.raises(TypeError, match="only nn.Linear and nn.Embedding"):
        GhostClipping(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.LayerNorm(3)), 1.0)
    with pytest.raises(TypeError, match="one row per example"):
        GhostClipping(Sequence3(), 1.0)((torch.ones(4, 5, 3),))
    twice = Sequence3()
    twice.forward = lambda x: twice.layer(twice.layer(x)[:, :1].expand(-1, 3)).sum(1)
    with pytest.raises(TypeError, match="called twice"):
        GhostClipping(twice, 1.0)((torch.ones(4, 3),))


def test_concurrent_runs_return_in_order_and_one_failure_stops_the_other():
    import time

    assert train_concurrently(lambda stop: 1, lambda stop: 2) == [1, 2]
    seen = []

    def long_run(stop):
        for _ in range(2000):                       # 20 s unless told to stop
            if stop.is_set():
                seen.append("stopped")
                return None
            time.sleep(0.01)

    def failing(stop):
        raise ValueError("boom")

    start = time.perf_counter()
    with pytest.raises(ValueError, match="boom"):
        train_concurrently(long_run, failing)
    assert seen == ["stopped"] and time.perf_counter() - start < 5


def gaussian_delta(epsilon, sigma):
    """delta(epsilon) of the Gaussian mechanism with noise sigma times its sensitivity (Balle and
    Wang 2018, Theorem 8)."""
    from scipy.stats import norm

    return norm.cdf(0.5 / sigma - epsilon * sigma) - np.exp(epsilon) * norm.cdf(-0.5 / sigma - epsilon * sigma)


@pytest.mark.slow
def test_a_dp_sgd_step_holds_its_epsilon_and_delta_and_an_unclipped_one_is_caught():
    """One step's released sum (the clipped sum plus the optimizer's noise) on neighbouring batches,
    one with an extra trip whose gradient is far longer than C: the statistic is the output along
    the difference of the two sums. With sigma = 1 and C = 1 the step is (1, delta(1))-DP; without
    clipping, the extra trip moves the output by its whole gradient and the claim fails."""
    from opacus.optimizers.optimizer import _generate_noise

    torch.manual_seed(3)
    hop = NextHop(6, 7, embedding=2, hidden=4)
    with torch.no_grad():
        for p in hop.parameters():
            p.mul_(6.0)                                 # gradients far longer than C = 1
    candidates = hop_batch(200, seed=4)
    probe = GhostClipping(hop, 1e9)
    longest = int(probe(candidates).argmax())           # the extra trip: the longest gradient of 200
    probe.remove()
    small = tuple(t[:24] for t in candidates)
    big = tuple(torch.cat([t[:24], t[longest:longest + 1]]) for t in candidates)
    sigma, c = 1.0, 1.0
    optimizer = NoiseAheadOptimizer(torch.optim.SGD(hop.parameters(), lr=0.1), noise_multiplier=sigma,
                                    max_grad_norm=c, expected_batch_size=25, loss_reduction="mean",
                                    secure_mode=True)
    optimizer.close()

    def released_sum(batch, clip_norm):
        clip = GhostClipping(hop, clip_norm)
        norms = clip(batch)
        clip.remove()
        return torch.cat([p.grad.reshape(-1) for p in hop.parameters()]), norms

    for clip_norm, honest in ((c, True), (1e9, False)):
        sums = {x: released_sum(b, clip_norm) for x, b in (("small", small), ("big", big))}
        assert sums["big"][1][-1] > 10 * c
        gap = sums["big"][0] - sums["small"][0]
        u = gap / gap.norm()

        def mechanism(x, n):
            noise = _generate_noise(optimizer.noise_multiplier * optimizer.max_grad_norm,
                                    torch.empty(n, u.numel()), secure_mode=optimizer.secure_mode)
            return ((sums[x][0] + noise) @ u).numpy() / (sigma * c)

        result = audit(mechanism, "small", "big", 1.0, delta=gaussian_delta(1.0, sigma), samples=20_000,
                       repeats=3, bins=np.linspace(-4, 4 + float(gap.norm()) / (sigma * c), 40))
        print(f"\n  clip {clip_norm:g}: {result}")
        assert result.passed == honest, str(result)


# -- accounting --------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha")
def test_noise_multipliers_spend_the_target_and_agree_with_opacus():
    from opacus.accountants import RDPAccountant
    from opacus.accountants.utils import get_noise_multiplier

    q, steps, delta = 200 / 14_000, 1050, 1 / 14_000
    for eps in (1.0, 2.0):
        sigmas = noise_multipliers(eps, delta, [q, q], [steps, steps], [0.5, 0.5])
        runs = [Run(s, q, steps) for s in sigmas]
        spent = composed_epsilon(runs, delta)
        assert eps * 0.99 <= spent <= eps * (1 + 1e-9)
        accountants = []
        for run in runs:
            a = RDPAccountant()
            a.history = [(run.noise_multiplier, run.sample_rate, run.steps)]
            accountants.append(a)
        assert opacus_epsilon(accountants, delta) == pytest.approx(spent, rel=0.01)
    # one run alone: Opacus' noise for the target gives back the target within 1 %
    sigma = get_noise_multiplier(target_epsilon=1.0, target_delta=delta, sample_rate=q, steps=steps,
                                 epsilon_tolerance=0.001)
    assert composed_epsilon([Run(sigma, q, steps)], delta) == pytest.approx(1.0, rel=0.01)
    # an uneven split gives the initializer more noise when it gets less budget
    low, high = noise_multipliers(1.0, delta, [q, q], [steps, steps], [0.2, 0.8])
    assert low > high


def test_fit_records_a_dp_count_and_one_composed_spend_that_matches_opacus(fitted, cabs):
    """The count of trips spends 5 % of epsilon; delta, q and the steps come from it (issue #21),
    and DP-SGD's composed epsilon fills the rest."""
    count, sgd = fitted.ledger_.spends
    assert (count.mechanism, count.unit, count.relation) == ("discrete-laplace", "trace", "add-remove")
    assert count.epsilon == pytest.approx(0.05) and sgd.mechanism == "dp-sgd" and sgd.unit == "trace"
    info, n = fitted.fit_info_, fitted.training_["dp_count"]
    assert "users" not in fitted.training_ and "traces" not in fitted.training_
    assert sgd.epsilon == pytest.approx(0.95, rel=0.01) and sgd.epsilon <= 0.95 + 1e-9
    assert sgd.delta == pytest.approx(1 / n) and "1 / the DP count of trips" in sgd.assumptions
    assert fitted.ledger_.totals()["person"]["epsilon"] == pytest.approx(1.0, rel=0.01)
    assert info["opacus_epsilon"] == pytest.approx(sgd.epsilon, rel=0.01)
    assert info["steps"] == round(n / 200) and info["sample_rate"] == pytest.approx(200 / n)
    assert abs(n - cabs.n_traces) < 400        # scale 20: off by more than 400 with probability e^-20


# -- generation, seeds, save and load ----------------------------------------------------------

def test_fit_and_sample_on_the_30_cabs(fitted, cabs):
    syn = fitted.sample(500, seed=3)
    assert syn.n_traces == 500 and (syn.users["source"] == -1).all()
    hour = syn.users["hour"].to_numpy()
    assert hour.min() >= 0 and hour.max() < 24
    lengths = syn.counts()
    assert lengths.min() >= 1 and syn.loc.max() < cabs.space.n_locations
    # consecutive visits lie within 5 cells of each other, on consecutive minutes from the hour's start
    off, cols = syn.offsets, cabs.space.cols
    same = np.ones(syn.n_events, bool)
    same[off[1:] - 1] = False
    r, c = np.divmod(syn.loc.astype(np.int64), cols)
    step = np.maximum(np.abs(np.diff(r)), np.abs(np.diff(c)))[same[:-1]]
    assert step.max() <= 5 and step.min() >= 1
    first = syn.t[off[:-1]]
    assert np.array_equal(first % (24 * 60), hour.astype(np.int64) * 60)
    # each trip runs from the VAE's source to its destination
    src, dst, hr = fitted.endpoints(500, 3)
    assert np.array_equal(syn.loc[off[:-1]], src) and np.array_equal(syn.loc[off[1:] - 1], dst)
    assert np.array_equal(hr, hour)


def test_same_seed_same_trips_and_save_load_roundtrip(fitted, tmp_path):
    a, b = fitted.sample(300, seed=7), fitted.sample(300, seed=7)
    assert np.array_equal(a.loc, b.loc) and np.array_equal(a.t, b.t) and a.users.equals(b.users)
    assert not np.array_equal(fitted.endpoints(300, 8)[0], fitted.endpoints(300, 7)[0])
    fitted.save(tmp_path / "m")
    assert not list(tmp_path.glob("m/*.pkl"))
    back = DPTrip.load(tmp_path / "m")
    c = back.sample(300, seed=7)
    assert np.array_equal(c.loc, a.loc) and np.array_equal(c.t, a.t) and c.users.equals(a.users)
    assert back.fit_info_["epsilon"] == fitted.fit_info_["epsilon"]


def test_training_noise_is_not_seeded():
    ts = small_trips(400)
    a = DPTrip(epsilon=1.0, epochs=1, batch_size=4).fit(ts)        # q = 1 / 100: quick to account
    b = DPTrip(epsilon=1.0, epochs=1, batch_size=4).fit(ts)
    assert not np.array_equal(a.nexthop_["out.weight"], b.nexthop_["out.weight"])


def test_bad_parameters_and_inputs():
    ts = small_trips()
    for params, message in ((dict(epsilon=0), "epsilon must be a positive"),
                            (dict(initializer_share=1.0), r"initializer_share must be a number in \(0, 1\)"),
                            (dict(epochs=0), "epochs must be at least 1"),
                            (dict(decoding="mode"), "decoding must be one of 'argmax', 'sample', got 'mode'")):
        with pytest.raises(InputError, match=message):
            DPTrip(**params).fit(ts)
    from locsynth.data.space import POISpace

    pois = replace(ts, space=POISpace(np.linspace(0, 0.1, 20), np.linspace(0, 0.1, 20)))
    with pytest.raises(InputError, match="dptrip needs trips on a grid"):
        DPTrip(epochs=1).fit(pois)


def test_missing_torch_names_the_extra(monkeypatch):
    method = registry.method("dptrip")
    assert method.requires == ("torch", "opacus") and method.extra == "dp"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(InputError, match=r"method 'dptrip' needs torch, which is not installed: "
                                         r"pip install 'locsynth\[dp\]'"):
        registry.get("dptrip")


def test_command_line_fit_and_sample(tmp_path):
    from typer.testing import CliRunner

    from locsynth.cli import app
    from locsynth.data.traces import TraceSet

    small_trips(200).save(tmp_path / "trips")
    runner = CliRunner()
    res = runner.invoke(app, ["fit", "dptrip", str(tmp_path / "trips"), "--epsilon", "1", "--epochs", "1",
                              "--out", str(tmp_path / "model")])
    assert res.exit_code == 0, res.output
    assert "privacy: per person (neighbouring inputs: one person (every trace of theirs) added or removed " \
           "(unbounded DP)): epsilon = " in res.output and "basic composition of 3 spends" in res.output     # count, time model, DP-SGD
    res = runner.invoke(app, ["sample", str(tmp_path / "model"), "--out", str(tmp_path / "syn"), "--users", "50",
                              "--seed", "2"])
    assert res.exit_code == 0, res.output
    syn = TraceSet.load(tmp_path / "syn")
    assert syn.n_traces == 50 and "hour" in syn.users and syn.has_times
    again = DPTrip.load(tmp_path / "model").sample(50, seed=2)
    assert np.array_equal(syn.loc, again.loc) and np.array_equal(syn.t, again.t)
    # its own hours, the time model's days and speeds
    starts = pd.DatetimeIndex(syn.time.start_of(syn.t[syn.offsets[:-1]])).tz_convert(syn.time.timezone)
    assert np.array_equal(starts.hour, syn.users["hour"].to_numpy())


def test_learning_rates_default_to_the_papers():
    """§8.3.3: 0.2 (initializer) and 0.1 (next hop) at epsilon 1, 0.5 and 0.15 at epsilon 2; other
    budgets take the nearer pair; a given rate wins."""
    from locsynth.synth.dptrip import DPTrip

    assert DPTrip(epsilon=1).learning_rates() == (0.2, 0.1)
    assert DPTrip(epsilon=2).learning_rates() == (0.5, 0.15)
    assert DPTrip(epsilon=0.5).learning_rates() == (0.2, 0.1) and DPTrip(epsilon=5).learning_rates() == (0.5, 0.15)
    assert DPTrip(epsilon=1, initializer_lr=0.3).learning_rates() == (0.3, 0.1)
