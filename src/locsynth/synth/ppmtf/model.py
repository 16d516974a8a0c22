"""PPMTF and PPMTF+ (paper 001 §3; paper 003 Appendices A and D).

    model = PPMTF(alpha=200, rank=16, iterations=100, seed=0).fit(train)
    synthetic = model.sample(traces_per_user=10, seed=1)      # every training user, 10 traces each
    result = model.pd_test(synthetic, k=10, eta=1.0)          # which traces a release may keep
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import numpy as np

from ...core import parallel
from ...core.errors import InputError
from ...privacy.plausible_deniability import PDResult, choose_candidates
from ...data.traces import TraceSet
from ...core.rng import user_uniforms
from ..base import Synthesizer, Tags
from .generate import PHI, StepIndex, UserModel, reconstruct, sample_users
from . import checkpoint as ckpt
from .pdtest import pd_test_factors
from .gibbs import FACTORS, GibbsState, Prior, gibbs_step, init_state
from .tensors import build_tensors
from ...core.validation import check_count, check_positive, check_seed, one_of, whole

log = logging.getLogger(__name__)
HYPER = ("bpmf", "authors")
#: users per block of generation (memory of the uniforms)
GENERATE_BLOCK = 4096


class PPMTF(Synthesizer):
    """Privacy-preserving multiple tensor factorization (paper 001).

    Parameters
    ----------
    alpha : float
        Precision of the counts around the reconstruction (eq. 3); paper: 200 for PF.
    rank : int
        Number of factors z (16).
    iterations : int
        Gibbs sweeps; the last sample is used (100).
    lam, r_max, rho : int
        Positive cells kept per user and tensor (lambda = 100), count cap (10), zero cells per
        user and tensor (1000) (§3.2-3.3).
    hyper : {'bpmf', 'authors'}
        Hyperparameter conditional: BPMF's centered sample covariance (default) or the authors'
        uncentered second moment X^T X / N, as their C++ does.
    seed : int
        Seed of trimming, zero cells, initialisation and Gibbs sampling.
    """

    name = "ppmtf"
    tags = Tags(pd_test=True)
    fit_options = {"checkpoint": (None, "save each Gibbs sweep in this directory and resume from it", str)}
    sample_options = {"instants": (None, "instants per trace instead of whole days", int)}
    distributed = ("sample",)
    #: command-line spellings of hyperparameters whose names are Python keywords
    cli_aliases = {"lambda": "lam"}
    checks = {"alpha": check_positive, "rank": check_count, "iterations": check_count, "lam": check_count,
              "r_max": check_count, "rho": whole(0), "hyper": one_of(*HYPER), "seed": check_seed}

    def __init__(self, alpha: float = 200.0, rank: int = 16, iterations: int = 100, lam: int = 100,
                 r_max: int = 10, rho: int = 1000, hyper: str = "bpmf", seed: int = 0):
        self.alpha = alpha
        self.rank = rank
        self.iterations = iterations
        self.lam = lam
        self.r_max = r_max
        self.rho = rho
        self.hyper = hyper
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None, checkpoint: str | Path | None = None) -> "PPMTF":
        """Build the tensors of ``train`` and run the Gibbs sampler (§3.2-3.3).

        ``progress(iteration, iterations, status)`` is called after each sweep, ``status`` giving
        the training RMSE. With ``checkpoint``
        (a directory) the state is saved after each sweep and a later fit resumes from it
        (see checkpoint.py); the result equals an uninterrupted run's.
        """
        self._remember_frame(train)
        seeds = np.random.SeedSequence(self.seed).spawn(2)
        tensors = build_tensors(train, self.lam, self.r_max, self.rho, seed=int(seeds[0].generate_state(1)[0]))
        rng = np.random.default_rng(seeds[1])
        prior = Prior.default(self.rank)
        state = init_state(tensors, self.rank, rng)
        self.rmse_ = []
        key = None
        if checkpoint is not None:
            checkpoint = Path(checkpoint)
            params = {k: v for k, v in self.get_params().items() if k != "iterations"}
            key = ckpt.fingerprint(train, {"model": self.name, **params})
            saved = ckpt.load(checkpoint, key, rng)
            if saved is not None:
                state, self.rmse_ = saved
                if state.iteration > self.iterations:
                    raise InputError(f"checkpoint {checkpoint} is at iteration {state.iteration}, past the "
                                     f"{self.iterations} asked for")
                log.info("resuming from iteration %d of %s", state.iteration, checkpoint)
                if progress is not None and self.rmse_:
                    progress(state.iteration, self.iterations, f"training RMSE {self.rmse_[-1]:.4f}")
        with parallel.one_blas_thread():
            while state.iteration < self.iterations:
                state, error = gibbs_step(state, tensors, self.alpha, prior, rng, centered=self.hyper == "bpmf")
                self.rmse_.append(error)
                if checkpoint is not None:
                    ckpt.save(checkpoint, state, self.rmse_, rng, key)
                log.info("Gibbs iteration %d/%d: training RMSE %.5f", state.iteration, self.iterations,
                         self.rmse_[-1])
                if progress is not None:
                    progress(state.iteration, self.iterations, f"training RMSE {self.rmse_[-1]:.4f}")
        self._set_state(state)
        self.n_cells_ = {"transitions": tensors.transitions.size, "visits": tensors.visits.size}
        self._record_appendix_f()
        return self

    def _record_appendix_f(self) -> None:
        """Paper 001's DP bound for the factors into the ledger, as a bound that does not hold
        here (its assumptions are not met), never as a guarantee."""
        eps = self.epsilon()
        saw = (f"transition and visit counts of the {self.training_['users']} training users: at most "
               f"lambda = {self.lam} positive and rho = {self.rho} zero cells per user and tensor, counts "
               f"capped at r_max = {self.r_max}")
        exact = ("Theta drawn exactly from the posterior with every reconstructed count in "
                 "[-kappa, r_max + kappa] (the paper's retry-if-fail); here the Gibbs sampler's last sweep "
                 "is not an exact posterior draw and no retry is made")
        self.ledger_.record("posterior-sampling", eps["trace"], unit="user", saw=saw, holds=False,
                            assumptions=f"paper 001 App. F, eq. (9), with lambda^I = lambda^II, rho^I = rho^II, "
                                        f"r^I_max = r^II_max, alpha = {self.alpha:g}, kappa = 0; {exact}")
        self.ledger_.record("posterior-sampling", eps["location"], unit="location", saw=saw, holds=False,
                            assumptions=f"paper 001 App. F.2-F.3, neighbouring sets differing in one location: "
                                        f"alpha (4 r^I_max + 8 r^II_max - 6), the value for kappa = rho = 0 "
                                        f"(larger here, rho = {self.rho}); {exact}")

    def summary(self) -> dict:
        return {"Gibbs sweeps": int(self.n_iter_),
                "training RMSE": round(float(self.rmse_[-1]), 5) if len(self.rmse_) else None}

    def _set_state(self, state: GibbsState) -> None:
        self.factors_ = state.factors
        self.mu_ = state.mu
        self.Lambda_ = state.Lambda
        self.n_iter_ = state.iteration

    # -- the generative model of one user ------------------------------------------------------
    def user_model(self, n: int, a: np.ndarray | None = None) -> UserModel:
        """(Q*_n, its transpose, pi_n) of training user ``n`` (or of feature row ``a``)."""
        self.check_is_fitted()
        f = self.factors_
        return reconstruct(f["A"][n] if a is None else a, f["B"], f["C"], f["D"], PHI)

    def _generate(self, rows: np.ndarray, traces_per_user: int, T: int, seed: int, stream: int,
                  feature: np.ndarray | None = None, homes: np.ndarray | None = None, boost: float = 0.0,
                  progress=None, client=None) -> tuple[np.ndarray, np.ndarray]:
        """Traces of training rows ``rows`` (or of the rows of ``feature``, keyed 0, 1, ...); the
        uniforms of user n come from (seed, stream, n) only, so chunks of users can be generated
        anywhere (``client``: on a Dask cluster, see core/parallel.py) with the serial result."""
        f = self.factors_
        feature = f["A"][rows] if feature is None else np.asarray(feature, np.float64)
        homes = np.full(rows.size, -1, np.int64) if homes is None else np.asarray(homes, np.int64)
        model = (np.ascontiguousarray(f["B"]), np.ascontiguousarray(f["C"].T), np.ascontiguousarray(f["D"]),
                 f["C"].astype(np.float32), self.time_.slot(np.arange(T)).astype(np.int64))
        job = functools.partial(generate_chunk, traces_per_user=traces_per_user, seed=seed, stream=stream,
                                boost=float(boost))
        if client is None:
            with parallel.one_blas_thread():
                return job((feature, rows, homes), *model, progress=progress)
        bounds = parallel.chunk_bounds(rows.size, client, multiple=GENERATE_BLOCK)
        chunks = [(feature[lo:hi], rows[lo:hi], homes[lo:hi]) for lo, hi in bounds]
        parts = parallel.map_chunks(client, job, chunks, *model, progress=progress,
                                    sizes=[hi - lo for lo, hi in bounds])
        if not parts:
            return np.empty((0, T), np.int32), np.empty(0)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1,
                users=None, instants: int | None = None, progress=None, client=None) -> TraceSet:
        """Synthetic traces of the training users 0 .. n - 1 (all when None; ``users``: these
        rows) (§3.4): ``traces_per_user`` traces of ``days`` days each (or of ``instants``
        instants), one location per instant of the training set's time axis, whose slots fix how
        many instants each slot has.

        The trace of user u is a function of (seed, u) only, whatever the set of users generated
        with it; with ``client`` (a Dask client, see core/parallel.py) users are generated in chunks on
        the cluster, with the same output. ``progress(done, total)`` counts users.
        """
        rows = self._rows(n, users)
        T = _length(self, days, instants)
        locs, loglik = self._generate(rows, traces_per_user, T, seed, stream=0, progress=progress, client=client)
        source = np.repeat(rows, traces_per_user)
        trace_no = np.tile(np.arange(traces_per_user), rows.size)
        return self._rectangular(locs, source, trace_no, days, {"loglik": loglik})

    # -- privacy -------------------------------------------------------------------------------
    def steps(self, locs: np.ndarray, slots: np.ndarray) -> StepIndex:
        return StepIndex(locs, slots, self.space_.n_locations)

    def logliks(self, m: int, steps: StepIndex, rows=None) -> np.ndarray:
        """log p(y = M(m)) of the indexed traces (§3.5)."""
        return steps.logliks(self.user_model(m), rows)

    def pd_test(self, synthetic: TraceSet, k: int = 10, eta: float = 1.0, candidates: int | None = None,
                seed: int = 0, early_stop: bool = True, progress=None, client=None) -> PDResult:
        """Privacy Test 1 (§3.5) of every trace of ``synthetic`` (generated by this model); the
        traces' own log-likelihoods are taken from its ``loglik`` column when present
        (see pdtest.pd_test_factors).

        With ``client`` (a Dask client, see core/parallel.py) the traces are tested in chunks on the
        cluster, each against the same candidates (their draw depends on ``seed`` and the number
        of training users only); a trace's count depends on that trace alone, so the result
        equals the serial one. ``progress`` then counts traces instead of candidates.
        """
        self.check_is_fitted()
        locs, slots, source = _trace_matrix(synthetic)
        if (source >= self.n_users).any():
            raise InputError("the synthetic set names source users this model was not trained on")
        own = synthetic.users["loglik"].to_numpy() if "loglik" in synthetic.users else None
        job = functools.partial(pd_test_chunk, n_slots=self.time_.n_slots, k=k, eta=eta, candidates=candidates,
                                seed=seed, early_stop=early_stop)
        if client is None:
            with parallel.one_blas_thread():
                return job((locs, source, own), self.factors_, slots, progress=progress)
        # bad parameters stop here with the serial message, before anything is sent
        cand = choose_candidates(self.n_users, candidates, seed, k, eta, source)
        # one chunk per worker thread: each chunk builds every candidate's tables (a fixed cost of
        # ~5 ms a candidate), so more chunks would repeat that work without balancing anything
        bounds = parallel.chunk_bounds(source.size, client, per_thread=1)
        chunks = [(locs[lo:hi], source[lo:hi], None if own is None else own[lo:hi]) for lo, hi in bounds]
        parts = parallel.map_chunks(client, job, chunks, self.factors_, slots, progress=progress,
                                    sizes=[hi - lo for lo, hi in bounds])
        counts = np.concatenate([r.counts for r in parts])
        return PDResult(counts, np.concatenate([r.passed for r in parts]),
                        np.concatenate([r.loglik for r in parts]), cand, k, eta)

    def epsilon(self, kappa: float = 0.0) -> dict[str, float]:
        """epsilon of DP for the factors (Appendix F, Proposition 1), for neighbouring sets that
        differ in one trace (eq. 9) and in one location; exact posterior sampling assumed, so
        these are what PPMTF would give at best."""
        lam, rho, r = self.lam, self.rho, self.r_max
        trace = self.alpha * 2 * min(3 * lam, lam + rho) * (r + kappa) ** 2
        location = self.alpha * (4 * r + 8 * r + 12 * kappa - 6)
        return {"trace": float(trace), "location": float(location), "kappa": float(kappa)}

    # -- persistence ---------------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        out = {name: self.factors_[name] for name in FACTORS}
        out.update({f"mu_{n}": self.mu_[n] for n in FACTORS})
        out.update({f"Lambda_{n}": self.Lambda_[n] for n in FACTORS})
        out["rmse"] = np.asarray(self.rmse_)
        return out

    def _restore(self, arrays: dict[str, np.ndarray], fitted: dict) -> None:
        self.factors_ = {n: arrays[n] for n in FACTORS}
        self.mu_ = {n: arrays[f"mu_{n}"] for n in FACTORS}
        self.Lambda_ = {n: arrays[f"Lambda_{n}"] for n in FACTORS}
        self.rmse_ = arrays["rmse"].tolist()
        self.n_iter_ = int(fitted.get("n_iter", len(self.rmse_)))
        self.n_cells_ = fitted.get("n_cells", {})

    def _fitted_scalars(self) -> dict:
        return {"n_iter": self.n_iter_, "n_cells": getattr(self, "n_cells_", {}), "epsilon": self.epsilon()}

    @classmethod
    def from_factors(cls, train: TraceSet, factors: dict[str, np.ndarray], mu=None, Lambda=None,
                     **params) -> "PPMTF":
        """A model with given factors (e.g. the authors' published A, B, C, D) on ``train``'s frame."""
        model = cls(**params)
        model._remember_frame(train)
        model.n_cells_ = {}
        z = factors["A"].shape[1]
        model._set_state(GibbsState({n: np.asarray(factors[n], np.float64) for n in FACTORS},
                                    mu or {n: np.zeros(z) for n in FACTORS},
                                    Lambda or {n: np.eye(z) for n in FACTORS}, 0))
        model.rmse_ = []
        model._record_appendix_f()
        return model


class PPMTFPlus(PPMTF):
    """PPMTF+ (paper 003 Appendix A): virtual users whose feature vectors are drawn from the
    trained N(mu_A, Lambda_A^-1), so no synthetic trace belongs to a training user.

    With ``home_regions`` (Appendix D) each virtual user gets a home drawn from the training
    population of the first slot, and its reconstructed visit count there is raised by
    ``home_boost`` in the first and last slots, so it is home in the morning and evening.
    """

    name = "ppmtf-plus"
    tags = Tags(virtual_users=True)
    sample_options = {"home_regions": (False, "give every virtual user a home region (paper 003 App. D)"),
                      "home_boost": (20.0, "added to the home region's visit count in the first and last slots"),
                      "instants": (None, "instants per trace instead of whole days", int)}

    def _fit(self, train: TraceSet, *, progress=None, client=None, checkpoint: str | Path | None = None
             ) -> "PPMTFPlus":
        super()._fit(train, progress=progress, checkpoint=checkpoint)
        from ...metrics.population import population_by_slot

        self.home_population_ = population_by_slot(train)[0]
        return self

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                home_regions: bool = False, home_boost: float = 20.0, instants: int | None = None,
                progress=None, client=None) -> TraceSet:
        """``n`` virtual users (default: as many as training users), eq. (4) of paper 003, each
        with ``traces_per_user`` traces. ``progress(done, total)`` is called after each block of
        users; ``client``: generate on a Dask cluster (core/parallel.py), with the serial output."""
        m = self.n_users if n is None else check_count(n, "n")
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
        cov = np.linalg.inv(self.Lambda_["A"])
        feature = rng.multivariate_normal(self.mu_["A"], (cov + cov.T) / 2, size=m, method="cholesky")
        homes = rng.choice(self.space_.n_locations, size=m, p=self.home_population_) if home_regions else None
        rows = np.arange(m)
        locs, loglik = self._generate(rows, traces_per_user, _length(self, days, instants), seed, stream=1,
                                      feature=feature, homes=homes, boost=home_boost, progress=progress,
                                      client=client)
        source = np.full(m * traces_per_user, -1)
        trace_no = np.tile(np.arange(traces_per_user), m)
        extra = {"loglik": loglik}
        if homes is not None:
            extra["home"] = np.repeat(homes, traces_per_user).astype(np.int32)
        return self._rectangular(locs, source, trace_no, days, extra,
                                 user_id=np.repeat([f"v{q}" for q in rows], traces_per_user))

    def _arrays(self) -> dict[str, np.ndarray]:
        out = super()._arrays()
        out["home_population"] = self.home_population_
        return out

    def _restore(self, arrays, fitted) -> None:
        super()._restore(arrays, fitted)
        self.home_population_ = arrays["home_population"]


def generate_chunk(users: tuple[np.ndarray, np.ndarray, np.ndarray], B: np.ndarray, CT: np.ndarray,
                   D: np.ndarray, C32: np.ndarray, slots: np.ndarray, *, traces_per_user: int, seed: int,
                   stream: int, boost: float, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """Traces of a chunk of users ``(feature rows, seed keys, homes (-1: none))``, users in blocks of
    GENERATE_BLOCK: locations (users * traces_per_user, len(slots)) and their log-likelihoods."""
    feature, keys, homes = users
    T = slots.size
    locs = np.empty((keys.size * traces_per_user, T), np.int32)
    loglik = np.empty(keys.size * traces_per_user)
    for lo in range(0, keys.size, GENERATE_BLOCK):
        block = keys[lo:lo + GENERATE_BLOCK]
        u = np.stack([user_uniforms(seed, int(n), (traces_per_user, T), stream) for n in block])
        sl = slice(lo * traces_per_user, (lo + block.size) * traces_per_user)
        sample_users(np.ascontiguousarray(feature[lo:lo + GENERATE_BLOCK]), B, CT, D, C32, slots, u,
                     np.ascontiguousarray(homes[lo:lo + GENERATE_BLOCK]), float(boost), PHI, locs[sl], loglik[sl])
        if progress is not None:
            progress(lo + block.size, keys.size)
    return locs, loglik


def pd_test_chunk(traces: tuple[np.ndarray, np.ndarray, np.ndarray | None], factors: dict, slots: np.ndarray, *,
                  n_slots: int, k: int, eta: float, candidates: int | None, seed: int, early_stop: bool,
                  progress=None) -> PDResult:
    """pdtest.pd_test_factors of a chunk of traces ``(locations, source rows, own log-likelihoods
    or None)``; every chunk draws the same candidates (from ``seed`` and the number of users)."""
    locs, source, own = traces
    return pd_test_factors(factors, locs, slots, source, n_slots, k=k, eta=eta, candidates=candidates, seed=seed,
                           own=own, early_stop=early_stop, progress=progress)


def _trace_matrix(synthetic: TraceSet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(locations (n_traces, T), slots (T,), source rows) of equally long traces on instants 0..T-1."""
    if "source" not in synthetic.users:
        raise InputError("the PD test needs a synthetic TraceSet (with source and trace_no)")
    counts = synthetic.counts()
    T = int(counts[0]) if counts.size else 0
    if T == 0 or (counts != T).any():
        raise InputError("the PD test needs traces of equal length, one event per instant")
    t = synthetic.t.reshape(-1, T)
    if (t != t[0]).any() or (np.diff(t[0]) != 1).any():
        raise InputError("the PD test needs every trace on the same consecutive instants")
    return (synthetic.loc.reshape(-1, T).astype(np.int64), synthetic.time.slot(t[0]).astype(np.int64),
            synthetic.users["source"].to_numpy().astype(np.int64))


def _length(model: PPMTF, days: int, instants: int | None) -> int:
    """Instants per trace: ``instants`` when given, else ``days`` whole days."""
    if instants is not None:
        return check_count(instants, "instants")
    return check_count(days, "days") * model.time_.instants_per_day
