"""TPM: one differentially private transition matrix for all users (paper 000 §5.3, after
Bindschaedler, Shokri and Gunter, VLDB 2017; the TPM baseline of the PPMTF papers).

1. Transitions: the moves between consecutive events of one trace on the same day. Dense traces
   (PF) move instant by instant; check-ins rarely fall in adjacent hours (892 of 18,760 Gowalla
   events at the 100 most visited POIs), so, as paper 000 §5.1 pairs "temporally-continuous"
   events, a transition does not need adjacent instants.
2. Trimming: each user's transitions, over all of their traces (rows of one user id), are read in
   time order and only the first ``trim`` = c count. A user's count matrix then has L1 norm at
   most c, and whether a transition is read depends on that user's own traces alone, so removing
   a user changes no one else's counts: the L1 sensitivity of the matrix is c. (Trimming each
   trace instead would let a user of 3 traces add 3c.)
3. Laplace(c / epsilon) on every cell (privacy/laplace.py, OpenDP's sampler), epsilon-DP per user.
4. Rows made probabilities (post-processing): negative cells set to 0 and each row divided by its
   sum; a row with nothing left is uniform. The paper leaves this step open.
5. Generation: the first location from the stationary distribution of the matrix, the rest by the
   chain; one day per synthetic user, who is nobody in the training set.
6. Size: by default as many synthetic users as a DP count of the training users, which spends
   ``size_share`` of epsilon (privacy/count.py); the matrix gets the rest. Neighbouring inputs
   differ by one user added or removed, so an exact count would give the user away.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.errors import InputError
from ..metrics.population import normalise_rows
from ..privacy.laplace import laplace
from ..core.validation import check_epsilon
from ..data.traces import TraceSet
from ..metrics.transitions import trimmed_transition_counts
from .base import SIZE_SHARE, Synthesizer, Tags
from ..core.validation import check_count
from ..core.validation import check_seed, check_share


def stochastic_rows(noisy: np.ndarray) -> np.ndarray:
    """Noisy counts -> a row-stochastic matrix: negatives to 0, rows normalised, empty rows uniform."""
    return normalise_rows(np.maximum(np.asarray(noisy, np.float64), 0.0))


def stationary(P: np.ndarray, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """pi with pi P = pi, by power iteration from the uniform vector on the lazy chain (I + P) / 2,
    which has the same stationary distributions and is aperiodic, so the iterates converge even
    where P is periodic (to the Cesaro limit of P's iterates from the uniform vector)."""
    L = P.shape[0]
    pi = np.full(L, 1.0 / L)
    for _ in range(max_iter):
        nxt = 0.5 * (pi + pi @ P)
        nxt /= nxt.sum()
        if np.abs(nxt - pi).sum() < tol:
            return nxt
        pi = nxt
    return pi


@njit(cache=True)
def markov_walks(cdf: np.ndarray, first_cdf: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    """Walks of a time-homogeneous chain: out[k, 0] from ``first_cdf``, then row ``cdf[a]``."""
    n, T = uniforms.shape
    L = first_cdf.size
    for k in range(n):
        a = min(np.searchsorted(first_cdf, uniforms[k, 0] * first_cdf[-1], side="right"), L - 1)
        out[k, 0] = a
        for t in range(1, T):
            row = cdf[a]
            a = min(np.searchsorted(row, uniforms[k, t] * row[-1], side="right"), L - 1)
            out[k, t] = a


def walks(matrix: np.ndarray, first: np.ndarray, n: int, T: int, seed: int) -> np.ndarray:
    """(n, T) locations: n walks of ``matrix`` starting from ``first``, seeded."""
    out = np.empty((n, T), np.int64)
    uniforms = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,))).random((n, T))
    markov_walks(np.cumsum(matrix, axis=1), np.cumsum(first), uniforms, out)
    return out


class TPM(Synthesizer):
    """One DP transition matrix for all users (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget per user (add or remove one user): the transition counts and the count of
        users together.
    trim : int
        c: transitions read per user (the sensitivity of the count matrix).
    size_share : float
        Share of epsilon spent on the DP count of training users that sizes the synthetic set
        (0: none; sample then needs n).
    """

    name = "tpm"
    checks = {"epsilon": check_epsilon, "trim": check_count, "size_share": check_share, "seed": check_seed}
    tags = Tags(virtual_users=True, dp=True)

    def __init__(self, epsilon: float = 1.0, trim: int = 5, size_share: float = SIZE_SHARE, seed: int = 0):
        self.epsilon = epsilon
        self.trim = trim
        self.size_share = size_share
        self.seed = seed

    def _fit(self, train: TraceSet, *, progress=None, client=None) -> "TPM":
        eps = check_epsilon(self.epsilon)
        c = check_count(self.trim, "trim")
        self._remember_frame(train)
        eps = self._count_units(train.n_users, eps, self.size_share, "user")
        counts = trimmed_transition_counts(train, c, per_user=True)
        noisy = laplace(counts, eps, c, ledger=self.ledger_, saw=f"transition counts, the first {c} transitions of "
                        f"each user's traces")
        self.matrix_ = stochastic_rows(noisy)
        self.stationary_ = stationary(self.matrix_)
        return self

    def _sample(self, n: int | None = None, *, days: int = 1, seed: int = 0, traces_per_user: int = 1, users=None,
                progress=None, client=None) -> TraceSet:
        """``n`` synthetic users (default: the DP count of training users), ``traces_per_user``
        traces of ``days`` days each, none of them a training user."""
        m = self._size(n)
        k, T = traces_per_user, days * self.time_.instants_per_day
        locs = self.walks(m * k, T, seed)
        return self._rectangular(locs, np.full(m * k, -1), np.tile(np.arange(k), m), days,
                                 user_id=np.repeat([f"v{q}" for q in range(m)], k))

    def walks(self, n: int, T: int, seed: int) -> np.ndarray:
        """(n, T) locations: n walks of the chain from its stationary distribution."""
        self.check_is_fitted()
        return walks(self.matrix_, self.stationary_, n, T, seed)

    def summary(self) -> dict:
        return {"epsilon": float(self.epsilon), "trim": int(self.trim)}

    def _arrays(self):
        return {"matrix": self.matrix_, "stationary": self.stationary_}

    def _restore(self, arrays, fitted):
        self.matrix_ = arrays["matrix"]
        self.stationary_ = arrays["stationary"]
        if self.matrix_.shape != (self.space_.n_locations,) * 2:
            raise InputError("the saved TPM matrix does not match its space")
