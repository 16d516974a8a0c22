"""DP-SGD (Abadi et al. 2016; paper 004 §8.3.3) with Opacus: per-example clipping to norm C,
Gaussian noise of standard deviation sigma C on the sum, plain SGD, and Opacus' RDP accountant
stepping along.

Per-example gradient norms are ghost norms (Goodfellow 2015; Li et al. 2022, the formula of
Opacus' ghost clipping): a dense layer's per-example gradient is the outer product g_i a_i^T of
the gradient at its output and its input, so its squared norm is |g_i|^2 (|a_i|^2 + 1) with the
bias; an embedding's is one row, |g_i|^2. One backward pass gives every layer's g (the sum of the
per-example losses: examples do not mix), and the clipped sum of a dense layer is
(c * G)^T A with c_i = min(1, C / (norm_i + 1e-6)) (Opacus' coefficient): one product per layer
(:class:`GhostClipping`). Opacus' ``GradSampleModuleFastGradientClipping`` computes the same sum
with a second backward pass through the whole graph; the noise, the scaling by the expected batch
and the step stay Opacus' (``DPOptimizerFastGradientClipping``), and tests/test_dptrip.py checks
the sum against Opacus' own. Nothing stores |batch| copies of the (2 |L| + 24) x 100 first layer
of the VAE.

The two models' runs are independent (Algorithm 1 composes them only in the accountant), so they
train at the same time, one thread each (:func:`train_concurrently`), each with its own noise
generator.

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
noise from a torch generator per run that torch seeds from the system's entropy
(``Generator.seed()``, never this code): training is not reproducible, by design. Opacus'
``PrivacyEngine(secure_mode=True)``
would draw from torchcsprng's /dev/urandom generator, but torchcsprng has no build for torch 2.13
(its last release targets torch 1.8, and the package index here has none), so that mode fails
to import it. What we use (``secure_noise=True``, the default) is the optimizer's own
``secure_mode``: each noise coordinate is the sum of 2n = 4 Gaussians over 2 (Holohan and
Braghin 2021, section 5.1), which closes the floating-point attack on Gaussian samples (Jin et
al. 2022, "Are we there yet? Timing and floating-point attacks on differential privacy
systems") that DESIGN.md asks samplers to resist; the generator stays
torch's Mersenne Twister, not a cryptographic one. Cost: four draws instead of one per
parameter and step, about 9 ms against 2.4 ms a step for the VAE's 575,000 parameters on one
core of this machine; :class:`NoiseAheadOptimizer` draws them on a thread of their own, ahead of
the step that adds them (benchmarks/bench_dptrip.py reports the training times).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from opacus.accountants import RDPAccountant
from opacus.optimizers import DPOptimizerFastGradientClipping
from opacus.optimizers.optimizer import _check_processed_flag, _generate_noise, _mark_as_processed
from torch import nn

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
    second core busy), so each of DPTrip's runs steps on 1 thread unless told otherwise; the two
    runs and their noise draws are what keep the cores busy."""

    def __init__(self, n: int):
        self.n = int(n)

    def __enter__(self):
        self.before = torch.get_num_threads()
        torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        torch.set_num_threads(self.before)


class GhostClipping:
    """Sets each parameter's ``.grad`` to the sum of the per-example gradients clipped to norm
    ``max_grad_norm``, from one forward and one backward pass (module docstring).

    The model's parameters must all belong to ``nn.Linear`` layers fed (batch, features) and
    ``nn.Embedding`` layers fed one index per example, each called once a forward pass: the
    layers whose per-example norms have the closed forms used here.
    """

    def __init__(self, model: nn.Module, max_grad_norm: float):
        self.model, self.max_grad_norm = model, float(max_grad_norm)
        self.layers = [m for m in model.modules() if isinstance(m, (nn.Linear, nn.Embedding))]
        covered = {id(p) for m in self.layers for p in m.parameters(recurse=False)}
        if any(id(p) not in covered for p in model.parameters() if p.requires_grad):
            raise TypeError("ghost clipping covers only nn.Linear and nn.Embedding parameters")
        self._seen: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}
        self._hooks = [m.register_forward_hook(self._remember) for m in self.layers]

    def remove(self) -> None:
        """Take the hooks off the model."""
        for hook in self._hooks:
            hook.remove()

    def _remember(self, module, inputs, output) -> None:
        if module in self._seen:          # a shared layer's per-example gradient sums two products
            raise TypeError(f"ghost clipping needs each layer called once per forward pass; "
                            f"{type(module).__name__} was called twice")
        self._seen[module] = (inputs[0], output)

    def norms(self, losses: torch.Tensor) -> tuple[torch.Tensor, list]:
        """Per-example gradient norms of ``losses`` (shape (batch,)) and each layer's output
        gradients (None for a layer the losses do not reach)."""
        used = [m for m in self.layers if m in self._seen]
        grads = dict(zip(used, torch.autograd.grad(losses.sum(), [self._seen[m][1] for m in used],
                                                   allow_unused=True)))
        squared = torch.zeros(losses.shape[0], dtype=losses.dtype)
        for m, g in grads.items():
            if g is None:
                continue
            x = self._seen[m][0]
            if x.dim() != (2 if isinstance(m, nn.Linear) else 1):
                raise TypeError(f"ghost clipping needs one row per example at {type(m).__name__}, got "
                                f"input of shape {tuple(x.shape)}")
            term = g.square().sum(1)
            if isinstance(m, nn.Linear):
                term = term * (x.square().sum(1) + (m.bias is not None))
            squared += term
        return squared.sqrt(), [grads.get(m) for m in self.layers]

    def __call__(self, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """Forward ``batch``, set the clipped sums as ``.grad``; returns the per-example norms."""
        self._seen.clear()
        try:
            norm, grads = self.norms(self.model(*batch))
        finally:
            seen, self._seen = self._seen, {}
        coef = (self.max_grad_norm / (norm + 1e-6)).clamp(max=1.0)      # Opacus' coefficient
        with torch.no_grad():
            for m, g in zip(self.layers, grads):
                if g is None:
                    for p in m.parameters(recurse=False):
                        p.grad = torch.zeros_like(p)
                    continue
                x, weighted = seen[m][0], g * coef[:, None]
                if isinstance(m, nn.Linear):
                    m.weight.grad = weighted.T @ x
                    if m.bias is not None:
                        m.bias.grad = weighted.sum(0)
                else:
                    m.weight.grad = torch.zeros_like(m.weight).index_add_(0, x, weighted)
        return norm


def dp_sgd(model: nn.Module, batches: Iterator[tuple[torch.Tensor, ...]], *, run: Run, max_grad_norm: float,
           batch_size: int, learning_rate: float, secure_noise: bool = True,
           progress: Callable[[int, int], None] | None = None, stop: threading.Event | None = None
           ) -> RDPAccountant:
    """Train ``model`` in place by DP-SGD for ``run.steps`` steps; returns Opacus' accountant.

    ``model(*batch)`` must return the per-example losses (shape (batch,)); ``batches`` yields the
    batches, drawn as the module docstring says (an empty batch: tensors of length 0). When
    ``stop`` is set, training ends after the current step (the caller discards the model).
    """
    clip = GhostClipping(model, max_grad_norm)
    generator = torch.Generator()
    generator.seed()                                    # the system's entropy, never a given seed
    optimizer = NoiseAheadOptimizer(torch.optim.SGD(model.parameters(), lr=learning_rate),
                                    noise_multiplier=run.noise_multiplier, max_grad_norm=max_grad_norm,
                                    expected_batch_size=batch_size, loss_reduction="mean",
                                    generator=generator, secure_mode=secure_noise)
    accountant = RDPAccountant()
    model.train()
    try:
        for step in range(run.steps):
            if stop is not None and stop.is_set():
                break
            batch = next(batches)
            optimizer.zero_grad()
            if len(batch[0]):
                clip(batch)
            else:
                for p in optimizer.params:              # nobody sampled: the step is noise alone
                    p.grad = torch.zeros_like(p)
            optimizer.step()
            accountant.step(noise_multiplier=run.noise_multiplier, sample_rate=run.sample_rate)
            if progress is not None and (step + 1) % 100 == 0:
                progress(step + 1, run.steps)
    finally:
        clip.remove()
        optimizer.close()
        model.eval()
    return accountant


class NoiseAheadOptimizer(DPOptimizerFastGradientClipping):
    """Opacus' optimizer whose noise is drawn a step or two ahead on a thread of its own: the noise
    does not depend on the data, so the draws (Opacus' ``_generate_noise``: same standard
    deviation sigma C, generator and secure mode) overlap the next batch's forward and backward
    passes. ``close`` stops the thread."""

    AHEAD = 2

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._drawer = ThreadPoolExecutor(max_workers=1)
        self._ahead = deque(self._drawer.submit(self._draw) for _ in range(self.AHEAD))

    def _draw(self) -> list[torch.Tensor]:
        std = self.noise_multiplier * self.max_grad_norm
        return [_generate_noise(std=std, reference=p, generator=self.generator, secure_mode=self.secure_mode)
                for p in self.params]

    def add_noise(self) -> None:
        noise = self._ahead.popleft().result()
        self._ahead.append(self._drawer.submit(self._draw))
        for p, z in zip(self.params, noise):
            _check_processed_flag(p.summed_grad)
            p.grad = (p.summed_grad + z).view_as(p)
            _mark_as_processed(p.summed_grad)

    def close(self) -> None:
        self._drawer.shutdown(wait=True, cancel_futures=True)


def train_concurrently(*jobs: Callable[[threading.Event], object]) -> list:
    """Run independent training jobs at the same time (torch releases the GIL in its operations):
    the first on the calling thread, the others on one thread each. Each job gets an event that
    is set when any job fails or is interrupted, and should stop at its next step when it is.
    Returns the results in order; raises the first failure."""
    stop = threading.Event()

    def guarded(job):
        try:
            return job(stop)
        except BaseException:
            stop.set()
            raise

    with ThreadPoolExecutor(max_workers=max(1, len(jobs) - 1)) as pool:
        futures = [pool.submit(guarded, job) for job in jobs[1:]]
        first = guarded(jobs[0])
        return [first] + [f.result() for f in futures]


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
