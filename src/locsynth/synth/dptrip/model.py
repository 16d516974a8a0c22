"""DPTrip: the estimator of paper 004's synthesizer (Lestyan, Acs and Biczok, "Privacy-preserving
release of mobility data: a clean-slate approach"), Algorithm 1:

1. records.py: sources, destinations, hours and 2-grams of the training trips;
2. initializer.py: the VAE over (source, destination, hour), trained by DP-SGD (§7.3.1, §8.3.1);
3. nexthop.py: p(next | current, destination, hour) over the 11 x 11 window, DP-SGD with one
   gram per sampled trip (§7.3.2, §8.3.2; training.py);
4. accounting.py: both runs composed by the RDP accountant into one (epsilon, delta) per trip,
   recorded in the ledger as one spend. The paper takes delta = 1 / the number of trips and plans
   the sampling rate |B| / |D| and the steps from that number (REFERENCE.md); here that number is
   a DP count of the trips (privacy/count.py, ``size_share`` of epsilon, its own spend), since the
   exact one is what one trip added or removed changes and the ledger publishes delta, q and the
   steps. The count also sizes the synthetic set by default; ``delta`` may be given instead.
5. generate.py: shortest paths from the VAE's sources to its destinations (§7.3.3).

Only 2-4 see the data; generation is post-processing of the two models, seeded by ``seed``.

A public domain (data/domain.py) masks the cells it leaves out as the grid's edge masks the cells
beyond it: the next-hop model's softmax never covers them (in training and in generation, so no
shortest path crosses one), and the VAE's sources and destinations are drawn from its heads
conditioned on the allowed cells (post-processing). A (source, destination) pair the allowed cells
do not connect is drawn again, as a pair with source = destination is.
"""

from __future__ import annotations

import time

import numpy as np

from ...core.errors import InputError
from ...core.parallel import one_blas_thread
from ...core.validation import check_epsilon
from ...data.traces import TraceSet
from ..base import SIZE_SHARE, TIME_SHARE, Synthesizer, Tags
from ...core.validation import check_count
from .accounting import Run, composed_epsilon, noise_multipliers, opacus_epsilon
from .generate import Router
from .initializer import TripVAE, decode, decoder_arrays
from .nexthop import NextHop, NextHopTables, nexthop_arrays, window_class
from .training import (dp_sgd, initializer_batches, nexthop_batches, sample_rate, steps_for, torch_threads,
                       train_concurrently)
from .records import TripTable, trip_table
from ...core.validation import check_flag, check_positive, check_seed, check_share, in_range, one_of, optional

#: decoding of the VAE's heads at generation
DECODINGS = ("argmax", "sample")
#: the largest delta taken from the DP count of trips (1 / count on fewer than 1,000 trips would be
#: larger); paper 004's sets have tens of thousands of trips, where 1 / count is far below it
MAX_DELTA = 1e-3
#: draws of (source, destination, hour) before giving up on source != destination
MAX_ROUNDS = 100
#: paper 004 §8.3.3: epsilon -> (initializer, next-hop) learning rates. Choice: another epsilon takes
#: the rates of the nearer of the two (the paper gives no rule).
PAPER_LEARNING_RATES = {1.0: (0.2, 0.1), 2.0: (0.5, 0.15)}


def gradient_noise(sigma: float, parameters: int, batch: float, steps: int = 1) -> float:
    """The share of noise in what DP-SGD's ``steps`` add up (privacy/noise.py's question for
    gradients): the noise's norm over the run, sigma x clip x sqrt(parameters) x sqrt(steps)
    (independent draws), against it plus the largest norm the batches' clipped gradients can sum
    to, steps x batch x clip (an upper bound on the signal: the share is a lower bound when the
    gradients disagree)."""
    noise = float(sigma) * float(np.sqrt(max(int(parameters), 1))) * float(np.sqrt(max(int(steps), 1)))
    signal = max(float(batch), 0.0) * max(int(steps), 1)
    return float(noise / (noise + signal)) if noise > 0 else 0.0


class DPTrip(Synthesizer):
    """DP trip synthesis by a DP-SGD trip initializer, a DP-SGD next-hop model and shortest paths.

    Parameters
    ----------
    epsilon : float
        Total budget per trip, both models together (RDP composition; accounting.py).
    initializer_share : float
        Share of the budget split given to the initializer, the rest to the next-hop model
        (accounting.py: each run's noise spends ``share * E'`` alone). Default 0.5: both runs see
        the same sampling rate and number of steps, so an even split gives both the same noise
        multiplier, as the authors' configurations nearly do (1.9 and 1.7 at epsilon 1,
        REFERENCE.md).
    epochs : int
        Passes over the trips of each model (15, §8.3.3 and Table 4).
    batch_size : int
        Expected batch size |B| (200); sampling rate |B| / |D|.
    initializer_clip, nexthop_clip : float
        Per-example clipping norms C (1.0 and 3.0, the authors' code).
    initializer_lr, nexthop_lr : float or None
        Learning rates of plain SGD; None takes the paper's for this epsilon (§8.3.3: 0.2 and 0.1 at
        epsilon 1, 0.5 and 0.15 at epsilon 2; :data:`PAPER_LEARNING_RATES`).
    latent, hidden, embedding, nexthop_hidden : int
        Sizes: VAE latent 50 and hidden 100; next-hop embedding 50 and hidden 200 (§8.3).
    radius : int
        Next hops lie within ``radius`` cells (5: an 11 x 11 window, §8.3.2).
    decoding : {"argmax", "sample"}
        How a generated z becomes (source, destination, hour): each head's argmax (the authors'
        code) or a draw from it.
    secure_noise : bool
        Noise robust to floating-point attacks (Opacus' optimizer ``secure_mode``; training.py
        says what it costs and why not torchcsprng).
    threads : int
        Torch threads of each of the two runs, which train at the same time (training.py's
        ``torch_threads`` says why 1).
    delta : float or None
        delta of the whole run; None takes 1 / the DP count of trips (the paper's 1 / |D|, with the
        count under DP; module docstring), at most :data:`MAX_DELTA`.
    size_share : float
        Share of epsilon spent on the DP count of trips that plans the sampling rate and steps,
        gives the default delta and sizes the synthetic set (module docstring).
    time_share : float
        Share of epsilon spent on the model of the trips' times (synth/trip_times.py: starts by day
        and hour, speeds); 0 releases trips with their hours only.
    max_traces_per_user : int
        Trips one user id may contribute (the first ones are kept): the ledger's per-person epsilon
        is this many times the per-trip one (privacy/ledger.py). 1, as ``prepare`` makes the trips.
    seed : int
        The seed of :meth:`sample` when it is given none. Training noise is never seeded.
    """

    name = "dptrip"
    checks = {"epsilon": check_epsilon, "initializer_share": in_range(0.0, 1.0, open_low=True, open_high=True),
              **{n: check_count for n in ("epochs", "batch_size", "latent", "hidden", "embedding", "nexthop_hidden",
                                          "radius", "threads", "max_traces_per_user")},
              "initializer_clip": check_positive, "nexthop_clip": check_positive,
              "initializer_lr": optional(check_positive), "nexthop_lr": optional(check_positive),
              "decoding": one_of(*DECODINGS), "secure_noise": check_flag,
              "delta": optional(in_range(0.0, 1.0, open_low=True, open_high=True)),
              "size_share": in_range(0.0, 1.0, open_low=True, open_high=True), "time_share": check_share,
              "seed": check_seed}
    tags = Tags(virtual_users=True, ragged=True, dp=True, trips=True, domain=True)
    several_traces = False

    def __init__(self, epsilon: float = 1.0, initializer_share: float = 0.5, epochs: int = 15, batch_size: int = 200,
                 initializer_clip: float = 1.0, nexthop_clip: float = 3.0, initializer_lr: float | None = None,
                 nexthop_lr: float | None = None, latent: int = 50, hidden: int = 100, embedding: int = 50,
                 nexthop_hidden: int = 200, radius: int = 5, decoding: str = "argmax", secure_noise: bool = True,
                 threads: int = 1, delta: float | None = None, size_share: float = SIZE_SHARE, time_share: float = TIME_SHARE,
                 max_traces_per_user: int = 1, seed: int = 0):
        self.epsilon = epsilon
        self.initializer_share = initializer_share
        self.epochs = epochs
        self.batch_size = batch_size
        self.initializer_clip = initializer_clip
        self.nexthop_clip = nexthop_clip
        self.initializer_lr = initializer_lr
        self.nexthop_lr = nexthop_lr
        self.latent = latent
        self.hidden = hidden
        self.embedding = embedding
        self.nexthop_hidden = nexthop_hidden
        self.radius = radius
        self.decoding = decoding
        self.secure_noise = secure_noise
        self.threads = threads
        self.delta = delta
        self.size_share = size_share
        self.time_share = time_share
        self.max_traces_per_user = max_traces_per_user
        self.seed = seed

    # -- fitting -------------------------------------------------------------------------------
    def learning_rates(self) -> tuple[float, float]:
        """(initializer, next-hop) learning rates: the given ones, else the paper's for the nearer of
        epsilon 1 and 2."""
        paper = PAPER_LEARNING_RATES[min(PAPER_LEARNING_RATES, key=lambda e: abs(e - float(self.epsilon)))]
        return tuple(float(paper[i] if lr is None else lr)
                     for i, lr in enumerate((self.initializer_lr, self.nexthop_lr)))

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "DPTrip":
        self._remember_frame(train)
        train = self._bounded_traces(train, self.max_traces_per_user)
        with torch_threads(self.threads):
            self._train(train, progress)
        return self

    def plan(self, n_trips: int) -> dict:
        """What DP-SGD will publish, from the DP count of the ``n_trips`` training trips (module
        docstring, step 4): the count's spend goes to the ledger; returns the count, delta and its
        source, the sampling rate q, the steps and the epsilon left for training."""
        budget = self._count_units(n_trips, float(self.epsilon), self.size_share, "trace")
        n = int(self.training_["dp_count"])            # the trips as far as DP may tell
        # choice: on a handful of trips 1 / count is no delta at all (1 / 1 = 1): at most MAX_DELTA
        delta = min(1.0 / n, MAX_DELTA) if self.delta is None else float(self.delta)
        return {"count": n, "delta": delta, "q": sample_rate(self.batch_size, n),
                "steps": steps_for(self.epochs, self.batch_size, n), "epsilon": budget,
                "delta_source": ("1 / the DP count of trips" if self.delta is None else "given") + f" ({delta:.3g})"}

    def _train(self, train: TraceSet, progress) -> None:
        table = trip_table(train)
        plan = self.plan(table.n_trips)
        plan["epsilon"] = self._fit_times(train, float(self.epsilon), self.time_share, plan["epsilon"])
        delta, delta_source, q, steps = plan["delta"], plan["delta_source"], plan["q"], plan["steps"]
        share = float(self.initializer_share)
        sigma_init, sigma_hop = noise_multipliers(plan["epsilon"], delta, [q, q], [steps, steps], [share, 1 - share])
        runs = [Run(sigma_init, q, steps), Run(sigma_hop, q, steps)]
        grid = train.space                     # sampling is part of the mechanism: never seeded

        vae = TripVAE(grid.n_locations, self.hidden, self.latent)
        hop = NextHop(grid.rows, grid.cols, int(self.radius), int(self.embedding), int(self.nexthop_hidden),
                      self._allowed())
        grams = _usable_grams(table, grid.cols, int(self.radius))
        batches = [initializer_batches(table.source, table.destination, table.hour, q, np.random.default_rng()),
                   nexthop_batches(*grams, q, np.random.default_rng())]
        clips = [float(self.initializer_clip), float(self.nexthop_clip)]
        seconds, report = {}, _both(progress)

        def train(k: int, model, stop):
            start = time.perf_counter()
            accountant = dp_sgd(model, batches[k], run=runs[k], max_grad_norm=clips[k],
                                batch_size=int(self.batch_size), learning_rate=self.learning_rates()[k],
                                secure_noise=bool(self.secure_noise), progress=report(k), stop=stop)
            seconds[("initializer", "nexthop")[k]] = time.perf_counter() - start
            return accountant

        accountant_init, accountant_hop = train_concurrently(lambda stop: train(0, vae, stop),
                                                             lambda stop: train(1, hop, stop))

        epsilon = composed_epsilon(runs, delta)
        self.ledger_.record(
            "dp-sgd", epsilon, delta, None, "trace",
            saw=f"(source, destination, hour) of the trips (VAE, clip {self.initializer_clip}, sigma "
                f"{sigma_init:.4g}) and one 2-gram per sampled trip (next-hop model, clip {self.nexthop_clip}, "
                f"sigma {sigma_hop:.4g}); {steps} steps each at sampling rate {q:.4g}",
            assumptions=f"Poisson sampling of trips, at most one example per trip and step; RDP composition of "
                        f"the two runs (Opacus' orders and conversion); q and the steps planned from the DP count "
                        f"of trips; delta {delta_source}; the grid and the hours are public; generation is "
                        f"post-processing")
        self.noise_parts_ = {"what the models learn": max(
            gradient_noise(sigma, sum(p.numel() for p in m.parameters()), q * plan["count"], steps)
            for sigma, m in ((sigma_init, vae), (sigma_hop, hop)))}
        self.decoder_ = decoder_arrays(vae)
        self.nexthop_ = nexthop_arrays(hop)
        self.fit_info_ = {"noise_multipliers": [sigma_init, sigma_hop], "sample_rate": q, "steps": steps,
                          "delta": delta, "epsilon": epsilon, "opacus_epsilon": opacus_epsilon(
                              [accountant_init, accountant_hop], delta),
                          "usable_grams": int(grams[0].size), "seconds": seconds}
        self._router = None

    # -- generation ----------------------------------------------------------------------------
    def router(self) -> Router:
        """The shortest-path generator of this model, its trees cached across calls."""
        if getattr(self, "_router", None) is None:
            self._router = Router(NextHopTables(self.nexthop_, self.space_.rows, self.space_.cols, int(self.radius),
                                                self._allowed()))
        return self._router

    def endpoints(self, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``n`` draws of (source, destination, hour) from the VAE with source != destination
        (the authors' code skips the others: the draw conditioned on the trip leaving its cell, which
        the public minimum of cells asks too); after MAX_ROUNDS rounds the rest go to the location
        nearest their source."""
        rng = np.random.default_rng(seed)
        allowed = self._allowed()
        source, destination, hour = decode(self.decoder_, n, rng, self.decoding, allowed)
        redo = np.flatnonzero(self._stuck(source, destination, hour))
        for _ in range(MAX_ROUNDS):
            if not redo.size:
                break
            s, d, h = decode(self.decoder_, redo.size, rng, self.decoding, allowed)
            source[redo], destination[redo], hour[redo] = s, d, h
            redo = redo[self._stuck(s, d, h)]
        if redo.size and self.space_.n_locations > 1:
            from scipy.spatial import cKDTree

            from ...metrics.standard import planar

            xy = np.column_stack(planar(self.space_))
            keep = self.space_.allowed_locations() if allowed is None else np.flatnonzero(allowed)
            destination[redo] = keep[cKDTree(xy[keep]).query(xy[source[redo]], k=2)[1][:, 1]]
        return source, destination, hour

    def _stuck(self, source: np.ndarray, destination: np.ndarray, hour: np.ndarray) -> np.ndarray:
        """Whether each pair cannot make a trip: source = destination, or (with a public domain,
        whose allowed cells need not all connect) a destination its source cannot reach."""
        stuck = source == destination
        if self._allowed() is not None:
            router = self.router()
            for k in np.flatnonzero(~stuck):
                stuck[k] = router.tree(int(destination[k]), int(hour[k]))[source[k]] < 0
        return stuck

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic trips (default: the DP count of training trips), each its own virtual
        user with its ``hour``; visits on consecutive instants from the start of that hour on day 0
        (one-minute instants for data/trips.py's sets). ``days`` is accepted for the common protocol."""
        m = self._size(n)
        # one BLAS thread: the small products gain nothing from more, and it keeps them bit-identical
        with one_blas_thread():
            source, destination, hour = self.endpoints(m, seed)
            loc, length = self.router().paths(source, destination, hour)
        user = np.repeat(np.arange(m, dtype=np.int32), length)
        if getattr(self, "trip_times_", None) is not None:          # its hours, the time model's days and speeds
            from ..trip_times import TIMED, sample_times

            t = sample_times(self.trip_times_, loc, length, self.space_, self.time_, seed, hours=hour)
            times = TIMED
        else:
            t = np.arange(loc.size) - np.repeat(np.cumsum(length) - length, length) + np.repeat(
                _hour_start(self.time_, hour), length)
            times = "hour"
        return self._synthetic(user, t, loc, np.full(m, -1), np.zeros(m, np.int32),
                               extra={"hour": hour.astype(np.int8)}, info={"times": times},
                               user_id=np.array([f"v{q}" for q in range(m)], dtype=object), presorted=True)

    def summary(self) -> dict:
        out = {"epsilon": float(self.epsilon), "epochs": int(self.epochs), "batch_size": int(self.batch_size)}
        if hasattr(self, "fit_info_"):
            out.update({k: v for k, v in self.fit_info_.items() if k != "seconds"})
        return out

    # -- persistence ---------------------------------------------------------------------------
    def _arrays(self):
        return {**{f"decoder/{k}": v for k, v in self.decoder_.items()},
                **{f"nexthop/{k}": v for k, v in self.nexthop_.items()}}

    def _fitted_scalars(self):
        return {"fit_info": self.fit_info_}

    def _restore(self, arrays, fitted):
        self.decoder_ = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("decoder/")}
        self.nexthop_ = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("nexthop/")}
        need = {"decoder": ("dec.weight", "head_source.weight", "head_destination.weight", "head_hour.weight"),
                "nexthop": ("current.weight", "destination.weight", "hidden.weight", "out.weight")}
        for part, keys in need.items():
            for key in keys:
                if key not in getattr(self, f"{part}_"):
                    raise InputError(f"the saved DPTrip model has no {part}/{key} array")
        L = self.space_.n_locations
        if self.decoder_["head_source.weight"].shape[0] != L or self.nexthop_["current.weight"].shape[0] != L:
            raise InputError("the saved DPTrip arrays do not match its space")
        self.fit_info_ = fitted.get("fit_info", {})
        self._router = None


def _usable_grams(table: TripTable, cols: int, radius: int) -> tuple[np.ndarray, ...]:
    """The next-hop model's examples: grams whose next cell lies in the window, as (current,
    destination, hour, class) per gram and (start, count) per trip."""
    target = window_class(table.gram_current, table.gram_next, cols, radius)
    trip = table.gram_trip()
    keep = target >= 0
    count = np.bincount(trip[keep], minlength=table.n_trips)
    return (table.gram_current[keep], table.destination[trip[keep]], table.hour[trip[keep]], target[keep],
            np.cumsum(count) - count, count)


def _hour_start(axis, hour: np.ndarray) -> np.ndarray:
    """The first instant of each hour on day 0, or 0 where the axis cannot place it (a daily
    window, or instants that do not divide an hour)."""
    seconds = axis.instant.total_seconds()
    if axis.windowed or 3600 % seconds:
        return np.zeros(hour.size, np.int64)
    return hour.astype(np.int64) * int(3600 // seconds) % axis.instants_per_day


def _both(progress):
    """Per-run progress callbacks for the two concurrent runs (the same number of steps each):
    the count is the slower run's, so that the time left is the time to the end of both."""
    done = [0, 0]

    def part(k: int):
        if progress is None:
            return None

        def report(steps: int, total: int) -> None:
            done[k] = steps
            progress(min(done), total, "initializer and next hop")
        return report
    return part
