"""DP-SGD (Abadi et al. 2016; paper 004 §8.3.3) with Opacus: per-example clipping to norm C,
Gaussian noise of standard deviation sigma C on the sum, plain SGD, and Opacus' RDP accountant
stepping along.

Per-example gradient norms come from Opacus' ghost clipping (``GradSampleModuleFastGradientClipping``:
a layer's per-example norm from its activations and backpropagated gradients, then a second
backward pass with the per-example loss weights min(1, C / norm)), which gives the same clipped
sum as materialized per-example gradients without storing |batch| copies of the
(2 |L| + 24) x 100 first layer of the VAE.

Sampling (paper 004 §8.3.3). A record is a trip. Each step takes every trip independently with
probability q = batch / n_trips (Poisson sampling, which Opacus' RDP analysis of the subsampled
Gaussian assumes; the paper and the authors' code draw trips uniformly with replacement):

- the initializer's example of a trip is its (source, destination, hour), one per trip;
- the next-hop model's example of a sampled trip is one of its 2-grams drawn uniformly
  (:func:`one_gram_per_trip`).

Why this is a per-trip guarantee for the next-hop model: a trip enters a step at most once,
through at most one example, whose clipped gradient has norm at most C whichever gram was drawn;
so adding or removing one trip changes the noised sum as adding or removing one record does in
DP-SGD. For a fixed draw of grams the step is exactly the subsampled Gaussian mechanism over
trips; the draws are independent of the other trips, and a mixture (same weights on both sides)
of pairs whose Rényi divergence is bounded keeps the bound (joint convexity of
exp((alpha - 1) D_alpha)), so the accountant's figure for (sigma, q, steps) holds per trip. The
sum is divided by the expected batch size, not the drawn one (Opacus, ``loss_reduction="mean"``),
and an empty draw still adds noise: the update's distribution depends on the data only through
the clipped sum.

Randomness. The sampling draws come from a NumPy generator seeded by the operating system, the
noise from torch's default generator, which torch seeds per process from the system's entropy
(never this code): training is not reproducible, by design. Opacus' ``PrivacyEngine(secure_mode=True)``
would draw from torchcsprng's /dev/urandom generator, but torchcsprng has no build for torch 2.13
(its last release targets torch 1.8, and the package index here has none), so that mode fails
to import it. What we use (``secure_noise=True``, the default) is the optimizer's own
``secure_mode``: each noise coordinate is the sum of 2n = 4 Gaussians over 2 (Holohan and
Braghin 2021, section 5.1), which closes the floating-point attack on Gaussian samples (Jin et
al. 2022, "Are we there yet? Timing and floating-point attacks on differential privacy
systems") that DESIGN.md asks samplers to resist; the generator stays
torch's Mersenne Twister, not a cryptographic one. Cost: four draws instead of one per
parameter and step; measured here on a busy core, 13 ms plain against 28 ms secure for the
VAE's 575,000 parameters, about a third more time per initializer step
(benchmarks/bench_dptrip.py reports the training times).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch
from opacus.accountants import RDPAccountant
from opacus.grad_sample import GradSampleModuleFastGradientClipping
from opacus.optimizers import DPOptimizerFastGradientClipping
from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping

from .accounting import Run


def sample_rate(batch_size: int, n_trips: int) -> float:
    """q = |B| / |D| (§8.3.3), at most 1."""
    return min(1.0, batch_size / n_trips)


def steps_for(epochs: int, batch_size: int, n_trips: int) -> int:
    """Steps of ``epochs`` passes: epochs * |D| / |B|, rounded, at least 1 per epoch."""
    return int(epochs) * max(1, round(n_trips / batch_size))


def poisson_trips(n_trips: int, q: float, rng: np.random.Generator) -> np.ndarray:
    """Rows of the trips in one step's batch: each with probability q, independently."""
    return np.flatnonzero(rng.random(n_trips) < q)


def one_gram_per_trip(trips: np.ndarray, gram_start: np.ndarray, gram_count: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray:
    """One gram, uniformly, of each of ``trips`` that has any: indices into the gram arrays."""
    trips = trips[gram_count[trips] > 0]
    return gram_start[trips] + np.floor(rng.random(trips.size) * gram_count[trips]).astype(np.int64)


class torch_threads:
    """Run torch on ``n`` threads inside the block (restored after). Small layers gain nothing
    from more threads, and on a shared machine threads that wait for a busy core slow every step
    many times over (measured here: 9 ms per plain VAE step on 1 thread, 360 ms on 2 with the
    second core busy), so DPTrip trains on 1 thread unless told otherwise."""

    def __init__(self, n: int):
        self.n = int(n)

    def __enter__(self):
        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        torch.set_num_threads(self.before)


def dp_sgd(model: torch.nn.Module, batches: Iterator[tuple[torch.Tensor, ...]], *, run: Run, max_grad_norm: float,
           batch_size: int, learning_rate: float, secure_noise: bool = True,
           progress: Callable[[int, int], None] | None = None) -> RDPAccountant:
    """Train ``model`` in place by DP-SGD for ``run.steps`` steps; returns Opacus' accountant.

    ``model(*batch)`` must return the per-example losses (shape (batch,)); ``batches`` yields the
    batches, drawn as the module docstring says (an empty batch: tensors of length 0).
    """
    module = GradSampleModuleFastGradientClipping(model, batch_first=True, loss_reduction="mean",
                                                  max_grad_norm=max_grad_norm, use_ghost_clipping=True)
    optimizer = DPOptimizerFastGradientClipping(torch.optim.SGD(module.parameters(), lr=learning_rate),
                                                noise_multiplier=run.noise_multiplier, max_grad_norm=max_grad_norm,
                                                expected_batch_size=batch_size, loss_reduction="mean",
                                                secure_mode=secure_noise)
    accountant = RDPAccountant()
    module.train()
    with warnings.catch_warnings():
        # the inputs are cell indices, so no input needs a gradient: torch says so at every step
        warnings.filterwarnings("ignore", message="Full backward hook is firing", category=UserWarning)
        _steps(module, optimizer, accountant, batches, run, progress)
    module.eval()
    return accountant


def _steps(module, optimizer, accountant, batches, run: Run, progress) -> None:
    for step in range(run.steps):
        batch = next(batches)
        optimizer.zero_grad()
        if len(batch[0]):
            DPTensorFastGradientClipping(module, optimizer, module(*batch), "mean").backward()
        else:
            for p in optimizer.params:                  # nobody sampled: the step is noise alone
                p.grad = torch.zeros_like(p)
        optimizer.step()
        accountant.step(noise_multiplier=run.noise_multiplier, sample_rate=run.sample_rate)
        if progress is not None and (step + 1) % 100 == 0:
            progress(step + 1, run.steps)


def initializer_batches(source: np.ndarray, destination: np.ndarray, hour: np.ndarray, q: float,
                        rng: np.random.Generator) -> Iterator[tuple[torch.Tensor, ...]]:
    """Batches of (source, destination, hour), Poisson-sampled trips."""
    tensors = [torch.from_numpy(np.ascontiguousarray(a, np.int64)) for a in (source, destination, hour)]
    while True:
        rows = torch.from_numpy(poisson_trips(source.size, q, rng))
        yield tuple(t[rows] for t in tensors)


def nexthop_batches(current: np.ndarray, destination: np.ndarray, hour: np.ndarray, target: np.ndarray,
                    gram_start: np.ndarray, gram_count: np.ndarray, q: float, rng: np.random.Generator
                    ) -> Iterator[tuple[torch.Tensor, ...]]:
    """Batches of (current, destination, hour, class): Poisson-sampled trips, one gram each.
    The gram arrays hold only grams with a class (nexthop.py); ``gram_start``, ``gram_count``
    index them per trip."""
    tensors = [torch.from_numpy(np.ascontiguousarray(a, np.int64)) for a in (current, destination, hour, target)]
    while True:
        grams = one_gram_per_trip(poisson_trips(gram_start.size, q, rng), gram_start, gram_count, rng)
        rows = torch.from_numpy(grams)
        yield tuple(t[rows] for t in tensors)
