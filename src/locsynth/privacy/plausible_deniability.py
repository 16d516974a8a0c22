"""The (k, eta)-plausible-deniability test (paper 001 §3.5, Privacy Test 1; Bindschaedler et al. 2017).

A synthetic trace y generated from user n has the bucket i with

.. math:: e^{-(i+1)\\eta} < p(y = \\mathcal{M}(n)) \\le e^{-i\\eta}, \\quad i = \\lfloor -\\log p(y = \\mathcal{M}(n)) / \\eta \\rfloor

(eq. 6). Its count k' starts at 1 for n and adds every candidate user m != n of a random subset
U* of the training users whose p(y = M(m)) falls in the same bucket (eq. 7). y passes when
k' >= k. U* is drawn once (seeded) and shared by all traces, so each candidate's model is built
once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InputError

PD_FORMAT = "locsynth.pdtest"


@dataclass(frozen=True)
class PDResult:
    """counts : ndarray (n_traces,), k' of each trace; passed : counts >= k; candidates : U*."""

    counts: np.ndarray
    passed: np.ndarray
    loglik: np.ndarray
    candidates: np.ndarray
    k: int
    eta: float

    @property
    def pass_rate(self) -> float:
        return float(self.passed.mean()) if self.passed.size else float("nan")

    def summary(self) -> dict:
        return {"k": int(self.k), "eta": float(self.eta), "pass_rate": self.pass_rate,
                "passed": int(self.passed.sum()), "traces": int(self.passed.size),
                "candidates": int(self.candidates.size)}

    def save(self, path: str | Path, synthetic, overwrite: bool = False, seed: int | None = None) -> Path:
        """A directory with ``pdtest.json`` (the summary, and the fingerprint of the tested
        synthetic set, so that a release can check it filters the right traces) and
        ``pdtest.csv`` (per trace, in the set's order: source, trace_no, log-likelihood, count,
        passed). Internal, like the synthetic set: it names source users."""
        import pandas as pd

        from ..core.files import atomic_output

        if synthetic.n_traces != self.passed.size:
            raise InputError(f"the PD result covers {self.passed.size} traces; the synthetic set has "
                             f"{synthetic.n_traces}")
        summary = {"format": PD_FORMAT, **self.summary(), "seed": seed, "synthetic": synthetic.fingerprint()}
        per_trace = pd.DataFrame({"user_id": synthetic.users["user_id"], "source": synthetic.users["source"],
                                  "trace_no": synthetic.users["trace_no"], "loglik": self.loglik,
                                  "count": self.counts, "passed": self.passed})
        with atomic_output(Path(path), overwrite, directory=True) as tmp:
            (tmp / "pdtest.json").write_text(json.dumps(summary, indent=2))
            per_trace.to_csv(tmp / "pdtest.csv", index=False)
        return Path(path)


def load_pd_result(path: str | Path) -> tuple[dict, np.ndarray]:
    """(pdtest.json, passed per trace) of a directory written by :meth:`PDResult.save`."""
    import pandas as pd

    path = Path(path)
    try:
        summary = json.loads((path / "pdtest.json").read_text())
        passed = pd.read_csv(path / "pdtest.csv", usecols=["passed"])["passed"].to_numpy(bool)
    except FileNotFoundError:
        raise InputError(f"{path} is not a PD test directory (no pdtest.json and pdtest.csv); "
                         f"expected the output of 'locsynth pdtest'") from None
    except (ValueError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is damaged: {exc}") from None
    if not isinstance(summary, dict) or "k" not in summary or summary.get("traces") != passed.size:
        raise InputError(f"{path / 'pdtest.json'} does not describe {path / 'pdtest.csv'}")
    return summary, passed


#: above this size of the traces x candidates log-likelihood matrix, each user's model is built
#: twice (once for its own traces, once as a candidate) instead of keeping the matrix
MATRIX_BYTES = 200e6


def _one_pass(model, steps, source, cand, eta, progress):
    """Every user's model built once: all traces' log-likelihoods under the candidates are kept."""
    users = np.union1d(np.unique(source), cand)
    col = {int(m): q for q, m in enumerate(cand)}
    ll = np.empty((source.size, cand.size))
    own = np.empty(source.size)
    for q, m in enumerate(users):
        values = model.logliks(int(m), steps)
        mine = source == m
        own[mine] = values[mine]
        if int(m) in col:
            ll[:, col[int(m)]] = values
        if progress is not None:
            progress(q + 1, users.size)
    same = buckets(ll, eta) == buckets(own, eta)[:, None]
    same &= source[:, None] != cand[None, :]
    return own, same.sum(axis=1)


def _two_passes(model, steps, source, cand, eta, progress):
    """Memory bounded by one user: own log-likelihoods first, then one candidate at a time."""
    own = np.empty(source.size)
    for n in np.unique(source):
        rows = np.flatnonzero(source == n)
        own[rows] = model.logliks(int(n), steps, rows)
    own_bucket = buckets(own, eta)
    hits = np.zeros(source.size, np.int64)
    for q, m in enumerate(cand):
        hits += (buckets(model.logliks(int(m), steps), eta) == own_bucket) & (source != m)
        if progress is not None:
            progress(q + 1, cand.size)
    return own, hits


def buckets(loglik: np.ndarray, eta: float) -> np.ndarray:
    """i of eq. (6): floor(-log p / eta); p = 0 (log p = -inf, or nan) gets a bucket of its own,
    shared with no positive probability (buckets past 2^62 are merged)."""
    x = -np.asarray(loglik, dtype=np.float64) / eta
    out = np.full(x.shape, np.iinfo(np.int64).max)
    finite = np.isfinite(x)
    out[finite] = np.clip(np.floor(x[finite]), -2.0 ** 62, 2.0 ** 62)
    return out


def choose_candidates(n_users: int, candidates: int | None, seed: int, k: int, eta: float,
                      source: np.ndarray) -> np.ndarray:
    """U*: ``candidates`` training rows drawn without replacement with ``seed`` (all when None or
    at least n_users), sorted; checks the test's parameters."""
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if eta <= 0:
        raise InputError(f"eta must be positive, got {eta}")
    if candidates is not None and candidates < 1:
        raise InputError(f"the number of candidates must be at least 1, got {candidates}")
    if k > n_users:
        raise InputError(f"k = {k} is larger than the {n_users} training users")
    if (source < 0).any():
        raise InputError("the PD test needs traces generated from training users (source >= 0)")
    pool = np.arange(n_users)
    if candidates is None or candidates >= n_users:
        return pool
    return np.sort(np.random.default_rng(seed).choice(pool, candidates, replace=False))


def pd_test(model, locs: np.ndarray, slots: np.ndarray, source: np.ndarray, k: int = 10, eta: float = 1.0,
            candidates: int | None = None, seed: int = 0, progress=None) -> PDResult:
    """Privacy Test 1 for traces ``locs`` (n_traces, T) generated from training rows ``source``.

    ``model`` provides ``n_users``, ``steps(locs, slots)`` (an index of the traces' steps, built
    once) and ``logliks(m, steps, rows=None) -> ndarray``: log p(y = M(m)) for every trace (or
    the ``rows``). ``candidates`` is |U*| (None: every training user).
    """
    cand = choose_candidates(model.n_users, candidates, seed, k, eta, source)
    steps = model.steps(locs, slots)
    if source.size * cand.size * 8 <= MATRIX_BYTES:
        own, hits = _one_pass(model, steps, source, cand, eta, progress)
    else:
        own, hits = _two_passes(model, steps, source, cand, eta, progress)
    counts = hits + 1
    return PDResult(counts, counts >= k, own, cand, k, eta)
