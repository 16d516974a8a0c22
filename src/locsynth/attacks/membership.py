"""Membership inference by a likelihood ratio (paper 001 §4.3 and Appendix D; [48]).

The attacker knows the traces of every candidate user v_n (members, the training users, and
non-members) and trains their transition matrices W_n. For a synthetic trace y, hypothesis H_1
("v_n is the input user of y") has likelihood z_1 = prod W_n(i, j) over y's transitions and H_0
has z_0 = prod W_0(i, j) with the population matrix W_0 = (1 / (|V| - 1)) sum_{m != n} W_m;
probabilities below phi = 1e-8 are raised to phi. v_n is called a member when
log(z_1 / z_0) >= psi for at least one synthetic trace. Membership advantage is TPR - FPR
(Yeom et al. 2018) and accuracy (TP + TN) / |V|, each maximised over the threshold psi.

The paper decides over all synthetic traces at once (the default). The authors' script decides
once per trace number (each of the 10 PF sets) and pools the decisions
(``per_trace_number=True``).

Scoring a candidate scans every synthetic trace sharing one of its transitions, so the exact
attack grows as candidates x traces. Past ``max_candidates`` a seeded random sample of members
and of non-members (half each, at most) is scored; W_0 still averages over every known user.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numba import njit

from ..core import parallel
from ..core.errors import InputError, unknown
from ..privacy.empirical import epsilon_lower_bound
from ..data.traces import TraceSet
from ..metrics.transitions import PairIndex, trace_transition_counts, trace_transition_probabilities

PHI = 1e-8
METHODS = ("likelihood-ratio",)


@dataclass(frozen=True)
class MembershipInference:
    """scores : ndarray of shape (n_sets, n_candidates), the largest log-likelihood ratio of each
    scored candidate over the synthetic traces of each set. candidates : their rows among
    members followed by non-members; is_member : whether each is a member.
    advantage, accuracy : their maxima over thresholds; threshold : where advantage peaks.
    epsilon_lower_bound : empirical epsilon at 95% confidence (users as independent trials)."""

    scores: np.ndarray
    is_member: np.ndarray
    candidates: np.ndarray
    advantage: float
    accuracy: float
    threshold: float
    tpr: np.ndarray
    fpr: np.ndarray
    epsilon_lower_bound: float


def membership_inference(members: TraceSet, non_members: TraceSet, synthetic: TraceSet,
                         method: str = "likelihood-ratio", per_trace_number: bool = False,
                         consecutive_only: bool = True, max_candidates: int | None = None, seed: int = 0,
                         chunk: int = 4096, client=None) -> MembershipInference:
    """Run the attack of Appendix D with ``members`` (training) and ``non_members`` (test) as candidates.

    With ``client`` (a Dask client, see core/parallel.py) the candidates are scored in chunks on the
    cluster; a candidate's score depends on its own column of the ratios only, so the result is
    the serial one."""
    if method not in METHODS:
        raise unknown("membership-inference method", method, METHODS)
    if members.n_traces + non_members.n_traces < 2:
        raise InputError("membership inference needs at least two candidate users")
    n_mem = members.n_traces
    rows, srcs, dsts = [], [], []
    for offset, ts in ((0, members), (n_mem, non_members)):
        r, s, d = ts.transitions(consecutive_only)
        rows.append(r + offset), srcs.append(s), dsts.append(d)
    row, src, dst = np.concatenate(rows), np.concatenate(srcs), np.concatenate(dsts)
    n_cand = n_mem + non_members.n_traces
    index = PairIndex(members.space.n_locations, (src, dst))
    W = trace_transition_probabilities(row, src, dst, index, n_cand)
    candidates = _sample_candidates(n_mem, n_cand, max_candidates, seed)
    base, corr = _llr_terms(W, n_cand, candidates)

    y_row, y_src, y_dst = synthetic.transitions(consecutive_only)
    known = np.isin(y_src * index.n_locations + y_dst, index.keys)
    T = trace_transition_counts(y_row[known], y_src[known], y_dst[known], index, synthetic.n_traces)
    trace_base = T @ base
    sets = _trace_sets(synthetic, per_trace_number)
    scores = np.vstack([_scores(T[rows_], trace_base[rows_], corr, chunk, client) for rows_ in sets])
    return _summarise(scores, candidates < n_mem, candidates)


def _sample_candidates(n_mem: int, n_cand: int, max_candidates: int | None, seed: int) -> np.ndarray:
    """Rows of the candidates to score: all, or a seeded sample of at most half members, half non-members."""
    if max_candidates is None or n_cand <= max_candidates:
        return np.arange(n_cand)
    rng = np.random.default_rng(seed)
    half = max_candidates // 2
    mem = rng.choice(n_mem, min(half, n_mem), replace=False)
    non = n_mem + rng.choice(n_cand - n_mem, min(max_candidates - mem.size, n_cand - n_mem), replace=False)
    return np.sort(np.r_[mem, non])


def _llr_terms(W: sp.csr_array, n_cand: int, candidates: np.ndarray) -> tuple[np.ndarray, sp.csc_array]:
    """log(z_1 / z_0) per transition = base[p] + corr[n, p]: ``base`` is the term of a candidate
    who never made transition p, ``corr`` (stored where W_n(p) > 0) the difference for one who
    did; columns of ``corr`` are the ``candidates``."""
    S = np.asarray(W.sum(axis=0)).ravel()
    base = np.log(PHI) - np.log(np.maximum(S / (n_cand - 1), PHI))
    coo = W[candidates].tocoo()
    w0 = np.maximum((S[coo.col] - coo.data) / (n_cand - 1), PHI)
    corr = np.log(np.maximum(coo.data, PHI)) - np.log(w0) - base[coo.col]
    return base, sp.csr_array((corr, (coo.row, coo.col)), shape=(candidates.size, W.shape[1])).T.tocsc()


def _trace_sets(synthetic: TraceSet, per_trace_number: bool) -> list[np.ndarray]:
    if not per_trace_number or "trace_no" not in synthetic.users:
        return [np.arange(synthetic.n_traces)]
    groups = pd.Series(np.arange(synthetic.n_traces)).groupby(synthetic.users["trace_no"].to_numpy())
    return [g.to_numpy() for _, g in groups]


def _scores(T: sp.csr_array, trace_base: np.ndarray, corr_t: sp.csc_array, chunk: int, client) -> np.ndarray:
    """_max_llr of every candidate, serially or in chunks of candidates (columns) on the cluster."""
    if client is None:
        return _max_llr(T, trace_base, corr_t, chunk)
    bounds = parallel.chunk_bounds(corr_t.shape[1], client)
    parts = parallel.map_chunks(client, partial(max_llr_columns, chunk=chunk),
                                [corr_t[:, lo:hi] for lo, hi in bounds], T, trace_base)
    return np.concatenate(parts) if parts else np.full(0, -np.inf)


def max_llr_columns(corr_t: sp.csc_array, T: sp.csr_array, trace_base: np.ndarray, chunk: int) -> np.ndarray:
    """_max_llr with the candidates' columns first (the chunk that map_chunks spreads)."""
    return _max_llr(T, trace_base, corr_t, chunk)


def _max_llr(T: sp.csr_array, trace_base: np.ndarray, corr_t: sp.csc_array, chunk: int) -> np.ndarray:
    """max over the traces y of T of base(y) + corr(y, n), for every candidate n."""
    n_cand = corr_t.shape[1]
    best = np.full(n_cand, -np.inf)
    for lo in range(0, T.shape[0], chunk):
        block = sp.csc_array(T[lo:lo + chunk] @ corr_t)
        block.sort_indices()
        b = trace_base[lo:lo + chunk]
        order = np.argsort(-b, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        part = _column_max(block.indptr, block.indices, block.data, b, order, rank)
        best = np.maximum(best, part)
    return best


@njit(cache=True)
def _column_max(indptr, indices, data, base, order, rank):
    n_rows, n_cols = base.size, indptr.size - 1
    out = np.full(n_cols, -np.inf)
    for c in range(n_cols):
        lo, hi = indptr[c], indptr[c + 1]
        best = -np.inf
        ranks = np.sort(rank[indices[lo:hi]])
        free = 0   # best row without a stored entry: the first rank not taken
        for r in ranks:
            if r == free:
                free += 1
            elif r > free:
                break
        if free < n_rows:
            best = base[order[free]]
        for k in range(lo, hi):
            v = base[indices[k]] + data[k]
            if v > best:
                best = v
        out[c] = best
    return out


def _summarise(scores: np.ndarray, is_member: np.ndarray, candidates: np.ndarray) -> MembershipInference:
    """Best advantage and accuracy over all thresholds ("member" when score >= psi)."""
    labels = np.tile(is_member, scores.shape[0])
    flat = scores.ravel()
    order = np.argsort(-flat, kind="stable")
    s, y = flat[order], labels[order]
    last = np.r_[s[1:] != s[:-1], True]            # cut only between distinct scores
    tp = np.cumsum(y)[last]
    fp = np.cumsum(~y)[last]
    pos, neg = int(y.sum()), int((~y).sum())
    tp, fp = np.r_[0, tp], np.r_[0, fp]
    thresholds = np.r_[np.inf, s[last]]
    tpr, fpr = tp / max(pos, 1), fp / max(neg, 1)
    adv = tpr - fpr
    acc = (tp + (neg - fp)) / (pos + neg)
    best = int(np.argmax(adv))
    eps = epsilon_lower_bound(tp, pos - tp, fp, neg - fp) if scores.shape[0] == 1 else \
        _epsilon_per_user(scores, is_member)
    return MembershipInference(scores, is_member, candidates, float(adv[best]), float(acc.max()),
                               float(thresholds[best]), tpr, fpr, eps)


def _epsilon_per_user(scores: np.ndarray, is_member: np.ndarray) -> float:
    """With several sets, users decide once each (the max over sets), so trials stay independent."""
    return _summarise(scores.max(axis=0, keepdims=True), is_member, np.arange(is_member.size)).epsilon_lower_bound
