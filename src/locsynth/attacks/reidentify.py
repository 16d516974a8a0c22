"""Re-identification of synthetic traces (paper 001 §4.3 and Appendix D; Murakami 2017 [47]).

The Bayesian attack trains a transition matrix W_n per known user by maximum likelihood (zeros
floored to phi = 1e-8) and, with a uniform prior, names as input user of a synthetic trace y the
user of highest likelihood:

.. math:: \\hat n(y) = \\arg\\max_n \\sum_{(i, j) \\in y} \\log \\max(W_n(i, j), \\varphi)

The re-identification rate is the fraction of synthetic traces whose input user is named.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..traces import TraceSet
from ._transitions import PairIndex, transition_counts, transition_probabilities, transitions

PHI = 1e-8
METHODS = ("bayes",)


@dataclass(frozen=True)
class Reidentification:
    """predicted : ndarray of shape (n_synthetic_traces,), the known user's row named per trace.
    rate : fraction of synthetic traces from a real user whose source was named."""

    predicted: np.ndarray
    rate: float


def reidentify(knowledge: TraceSet, synthetic: TraceSet, method: str = "bayes",
               consecutive_only: bool = True, chunk: int = 4096) -> Reidentification:
    """Name the input user of every synthetic trace among the users of ``knowledge``.

    ``synthetic.users['source']`` must index rows of ``knowledge`` (the training set the traces
    were generated from).
    """
    if method not in METHODS:
        raise InputError(f"unknown re-identification method {method!r}; expected one of {', '.join(METHODS)}")
    if not synthetic.synthetic:
        raise InputError("re-identification needs a synthetic TraceSet (with source and trace_no)")
    return _reidentify_bayes(knowledge, synthetic, consecutive_only, chunk)


def _reidentify_bayes(knowledge, synthetic, consecutive_only, chunk) -> Reidentification:
    k_row, k_src, k_dst = transitions(knowledge, consecutive_only)
    s_row, s_src, s_dst = transitions(synthetic, consecutive_only)
    index = PairIndex(knowledge.space.n_locations, (k_src, k_dst))
    W = transition_probabilities(k_row, k_src, k_dst, index, knowledge.n_traces)
    # log max(W, phi) = log phi + D with D = log W - log phi > 0 where W > 0
    D = sp.csr_array((np.log(W.data) - np.log(PHI), W.indices, W.indptr), shape=W.shape).T.tocsr()
    known = np.isin(s_src * index.n_locations + s_dst, index.keys)
    T = transition_counts(s_row[known], s_src[known], s_dst[known], index, synthetic.n_traces)
    predicted = np.zeros(synthetic.n_traces, np.int64)
    for lo in range(0, synthetic.n_traces, chunk):
        scores = (T[lo:lo + chunk] @ D).tocsr()
        scores.sort_indices()
        predicted[lo:lo + chunk] = np.asarray(scores.argmax(axis=1)).ravel()
    source = synthetic.users["source"].to_numpy()
    real = source >= 0
    rate = float((predicted[real] == source[real]).mean()) if real.any() else float("nan")
    return Reidentification(predicted, rate)
