"""Re-identification of synthetic traces (paper 001 §4.3 and Appendix D; Murakami 2017 [47]).

The Bayesian attack trains a transition matrix W_n per known user by maximum likelihood (zeros
floored to phi = 1e-8) and, with a uniform prior, names as input user of a synthetic trace y the
user of highest likelihood:

.. math:: \\hat n(y) = \\arg\\max_n \\sum_{(i, j) \\in y} \\log \\max(W_n(i, j), \\varphi)

The re-identification rate is the fraction of synthetic traces whose input user is named. Each
trace costs a pass over the users who share one of its transitions, so the exact attack grows as
traces x users; past ``max_traces`` the rate is estimated on a seeded random sample of traces and
reported with its 95% Clopper-Pearson interval, which keeps the cost linear in users.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from ..core import parallel
from ..core.errors import InputError, unknown
from ..privacy.empirical import clopper_pearson
from ..data.traces import TraceSet
from ..metrics.transitions import PairIndex, trace_transition_counts, trace_transition_probabilities

PHI = 1e-8
METHODS = ("bayes",)


@dataclass(frozen=True)
class Reidentification:
    """rows : the synthetic trace rows attacked (all of them, or a sample).
    predicted : ndarray of shape (rows.size,), the known user's row named for each.
    rate : fraction of attacked traces from a real user whose source was named.
    interval : 95% Clopper-Pearson interval of the rate (width 0 when every trace was attacked)."""

    rows: np.ndarray
    predicted: np.ndarray
    rate: float
    interval: tuple[float, float]


def reidentify(knowledge: TraceSet, synthetic: TraceSet, method: str = "bayes",
               consecutive_only: bool = True, max_traces: int | None = None, seed: int = 0,
               chunk: int = 4096, client=None) -> Reidentification:
    """Name the input user of synthetic traces among the users of ``knowledge``.

    ``synthetic.users['source']`` must index rows of ``knowledge`` (the training set the traces
    were generated from). With more than ``max_traces`` traces from real users, a seeded random
    sample of that many is attacked. With ``client`` (a Dask client, see core/parallel.py) the traces
    are scored in chunks on the cluster; each trace's score is its own, so the result is the same.
    """
    if method not in METHODS:
        raise unknown("re-identification method", method, METHODS)
    if not synthetic.synthetic:
        raise InputError("re-identification needs a synthetic TraceSet (with source and trace_no)")
    source = synthetic.users["source"].to_numpy()
    rows = np.flatnonzero(source >= 0)
    if max_traces is not None and rows.size > max_traces:
        rows = np.sort(np.random.default_rng(seed).choice(rows, max_traces, replace=False))
    sample = synthetic.select_users(rows)
    predicted = _reidentify_bayes(knowledge, sample, consecutive_only, chunk, client)
    hits = int((predicted == source[rows]).sum())
    if rows.size == 0:
        return Reidentification(rows, predicted, float("nan"), (float("nan"), float("nan")))
    rate = hits / rows.size
    if rows.size == int((source >= 0).sum()):
        interval = (rate, rate)
    else:
        low, high = clopper_pearson(np.array([hits]), np.array([rows.size]))
        interval = (float(low[0]), float(high[0]))
    return Reidentification(rows, predicted, rate, interval)


def _reidentify_bayes(knowledge, synthetic, consecutive_only, chunk, client=None) -> np.ndarray:
    k_row, k_src, k_dst = knowledge.transitions(consecutive_only)
    s_row, s_src, s_dst = synthetic.transitions(consecutive_only)
    index = PairIndex(knowledge.space.n_locations, (k_src, k_dst))
    W = trace_transition_probabilities(k_row, k_src, k_dst, index, knowledge.n_traces)
    # log max(W, phi) = log phi + D with D = log W - log phi > 0 where W > 0
    D = sp.csr_array((np.log(W.data) - np.log(PHI), W.indices, W.indptr), shape=W.shape).T.tocsr()
    known = np.isin(s_src * index.n_locations + s_dst, index.keys)
    T = trace_transition_counts(s_row[known], s_src[known], s_dst[known], index, synthetic.n_traces)
    chunks = [T] if client is None else [T[lo:hi] for lo, hi in parallel.chunk_bounds(T.shape[0], client)]
    parts = parallel.map_chunks(client, partial(best_users, chunk=chunk), chunks, D)
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def best_users(T: sp.csr_array, D: sp.csr_array, chunk: int = 4096) -> np.ndarray:
    """Row of the highest score T @ D (transition counts of the traces times the users' log
    probabilities above log phi) of every trace, ``chunk`` traces at a time."""
    predicted = np.zeros(T.shape[0], np.int64)
    for lo in range(0, T.shape[0], chunk):
        scores = (T[lo:lo + chunk] @ D).tocsr()
        scores.sort_indices()
        predicted[lo:lo + chunk] = np.asarray(scores.argmax(axis=1)).ravel()
    return predicted
