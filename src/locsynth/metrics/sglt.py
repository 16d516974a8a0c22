"""The utility features of SGLT's synthetic-data-release evaluation (paper 002 §VIII.C (a)-(f)).

Every feature compares a *reference* set (the paper's seed, day 1, traces; in locsynth usually
the test or training set) with a *synthetic* set. When the synthetic set has several trace
numbers, each trace number is one synthetic dataset (the paper draws 10 datasets of 30 traces
and reports their mean) and the feature is averaged over them.

=====================================  ====================================================
paper 002 §VIII.C                      here
=====================================  ====================================================
(a) distribution of number of visits   :func:`visits_kl`, :func:`visits_relative_error`
(b) the same for the top 50 locations  the same with ``top=50``
(c) top-n coverage of locations        :func:`top_n_coverage`
(d) users' time allocation             :func:`time_allocation_kl`,
                                       :func:`time_allocation_paired_kl`
(e) spatiotemporal mobility features   :func:`mobility_similarity`
(f) semantic mobility features         :func:`seed_semantic_similarity`,
                                       :func:`semantic_qq_correlation`
=====================================  ====================================================

:func:`sglt_features` returns all of them under stable snake_case keys. The paper defines no
distance-travelled or other per-trace geographic feature, so there is none here (TM-EMD and
TM-SWD in :mod:`.transitions` cover the geometry of transitions).

Where the paper leaves a choice open, the docstring of the function says what was chosen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..core.errors import InputError
from ..data.traces import TraceSet, check_same_frame
from .visits import visit_counts
from .groups import GroupResult, Metric, MetricGroup, flag, row

#: Paper 002 footnote 5: zero counts are set to 0.1 before normalising, for the KL divergence.
ZERO_COUNT = 0.1
#: Paper 002 §VIII.C (a), after [9]: the relative error's denominator is at least 0.001 N.
RELATIVE_ERROR_FLOOR = 0.001
#: The n of the top-n coverage (Fig. 11 plots "various values of n" without listing them).
COVERAGE_N = (10, 20, 30, 40, 50)
#: Time periods of the mobility models (paper 002 §IV.A: "morning - afternoon - evening - night").
PERIODS = 4


# -- shared helpers ---------------------------------------------------------------------------
def _averaged(fn, reference: TraceSet, synthetic: TraceSet, **kwargs):
    """``fn(reference, s, **kwargs)`` averaged over the trace-number sets ``s`` of ``synthetic``
    (floats, or dicts of floats averaged key by key)."""
    check_same_frame(reference, synthetic, ("reference", "synthetic"), time=False)
    values = [fn(reference, s, **kwargs) for s in synthetic.by_trace_number()]
    if isinstance(values[0], dict):
        return {k: float(np.mean([v[k] for v in values])) for k in values[0]}
    return float(np.mean(values))


def kl_smoothed(p_counts: np.ndarray, q_counts: np.ndarray, zero: float = ZERO_COUNT) -> float:
    """KL(P || Q) in nats between two count vectors, zero counts set to ``zero`` first.

    .. math:: D_{KL}(P \\| Q) = \\sum_i P_i \\log \\frac{P_i}{Q_i}, \\quad
              P_i = \\frac{\\tilde n^{(1)}_i}{\\sum_j \\tilde n^{(1)}_j}, \\quad
              \\tilde n_i = \\begin{cases} n_i & n_i > 0 \\\\ 0.1 & n_i = 0 \\end{cases}

    This is paper 002's footnote 5 ("We set zero probabilities to 0.1, before normalizing"),
    read as a pseudo-count of 0.1 for every empty cell of *both* vectors, so every term is
    finite. The value depends on the scale of the counts, which is why the callers put both
    vectors on the reference's total first.
    """
    p = np.where(p_counts > 0, p_counts, zero).astype(np.float64)
    q = np.where(q_counts > 0, q_counts, zero).astype(np.float64)
    p /= p.sum()
    q /= q.sum()
    return float(np.sum(p * np.log(p / q)))


def _on_total(counts: np.ndarray, total: float) -> np.ndarray:
    """``counts`` rescaled to sum to ``total`` (all zeros stay zeros)."""
    s = counts.sum()
    return counts * (total / s) if s > 0 else np.zeros_like(counts, dtype=np.float64)


def _top(counts: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest counts, ties broken by the lower location id; only counts > 0."""
    order = np.argsort(-counts, kind="stable")[:n]
    return order[counts[order] > 0]


def _periods(traces: TraceSet, periods: int) -> tuple[np.ndarray, int]:
    """Time period of every event: the day's slots cut into ``periods`` equal consecutive groups."""
    n_slots = traces.time.n_slots
    p = max(1, min(int(periods), n_slots))
    return (traces.time.slot(traces.t).astype(np.int64) * p) // n_slots, p


def _pair_by_user_id(reference: TraceSet, synthetic: TraceSet) -> tuple[np.ndarray, np.ndarray]:
    """(reference rows, synthetic rows) of the synthetic traces whose ``user_id`` is a reference user.

    A synthetic trace generated from training user u carries u's ``user_id``, so paired with
    the training set each trace meets its seed, and paired with a second day of the same users
    (the paper's day 2) each user meets itself. Paired with the test set nothing matches.
    """
    ref_ids = pd.Index(reference.users["user_id"].astype(str))
    if not ref_ids.is_unique:
        raise InputError("the reference set has several traces with the same user_id; pairing by user needs one")
    pos = ref_ids.get_indexer(synthetic.users["user_id"].astype(str))
    hit = pos >= 0
    return pos[hit].astype(np.int64), np.flatnonzero(hit)


# -- (a), (b): distribution of the number of visits ---------------------------------------------
def _aligned_counts(reference: TraceSet, synthetic: TraceSet, top: int | None, align: str):
    if align not in ("location", "rank"):
        raise InputError(f"align must be 'location' or 'rank', got {align!r}")
    n1 = visit_counts(reference)
    n2 = _on_total(visit_counts(synthetic), n1.sum())
    if align == "rank":
        n1, n2 = np.sort(n1)[::-1], np.sort(n2)[::-1]
    if top is not None:
        keep = np.arange(min(top, n1.size)) if align == "rank" else _top(n1, top)
        n1, n2 = n1[keep], n2[keep]
    return n1, n2


def _visits_kl(reference, synthetic, top, align, zero):
    n1, n2 = _aligned_counts(reference, synthetic, top, align)
    return kl_smoothed(n1, n2, zero) if n1.size else float("nan")


def visits_kl(reference: TraceSet, synthetic: TraceSet, top: int | None = None, align: str = "location",
              zero: float = ZERO_COUNT) -> float:
    """KL divergence of the reference's location-visit distribution to the synthetic's
    (paper 002 §VIII.C (a); with ``top=50``, feature (b)).

    Each set's "spatial allocation" is the number of visits (events) :math:`n_x` at every
    location x, normalised into the probability of a random visit being at x; the feature is

    .. math:: D_{KL}(P_{ref} \\| P_{syn}) = \\sum_x P_{ref}(x) \\log \\frac{P_{ref}(x)}{P_{syn}(x)}

    with zero counts set to 0.1 before normalising (footnote 5; see :func:`kl_smoothed`). The
    synthetic counts are first rescaled to the reference's total N (the paper's datasets all
    have the same N), so the 0.1 pseudo-count weighs the same on both sides.

    Parameters
    ----------
    reference, synthetic : TraceSet
        On the same space. A synthetic set with several trace numbers is averaged over them.
    top : int, optional
        Keep only the ``top`` locations most visited in the reference (ties: lower id), each
        vector renormalised over them. Paper 002's feature (b) uses the top 50 but only *plots*
        their distributions (Fig. 10); this KL is our one-number summary of that plot.
    align : {"location", "rank"}
        The paper sorts each dataset's distribution "from least to most popular, for that
        dataset", which can be read as comparing the two rank-frequency curves (``"rank"``:
        the i-th most visited location of one set against the i-th of the other, whatever
        they are) or as sorting for display only (``"location"``: location x against location
        x). Its baselines (uniform, one single location) give the same value either way. The
        default compares locations, which is the stricter reading and the one the other
        features of (a)-(c) use; ``sglt_features`` reports both.
    zero : float
        The pseudo-count of an empty location.

    Returns
    -------
    float
        In nats, >= 0; 0 when the two sets have proportional visit counts.
    """
    return _averaged(_visits_kl, reference, synthetic, top=top, align=align, zero=zero)


def _visits_relative_error(reference, synthetic, top, align, floor):
    n1, n2 = _aligned_counts(reference, synthetic, top, align)
    if not n1.size:
        return float("nan")
    total = visit_counts(reference).sum()
    return float(np.mean(np.abs(n1 - n2) / np.maximum(n1, floor * total)))


def visits_relative_error(reference: TraceSet, synthetic: TraceSet, top: int | None = None,
                          align: str = "location", floor: float = RELATIVE_ERROR_FLOOR) -> float:
    """Average relative error of the location visit counts (paper 002 §VIII.C (a), after its [9]).

    The number of visits to each location is read as the answer to a counting query:

    .. math:: RE = \\frac{1}{|\\mathcal{X}|} \\sum_{x} \\frac{|n_1(x) - n_2(x)|}{\\max(n_1(x), 0.001 N)}

    with :math:`n_1` the reference's counts, :math:`n_2` the synthetic's rescaled to the
    reference's total N (the paper's "N ... the same for all the datasets"), averaged over all
    locations (the paper's choice; locations visited in neither set count as 0). ``top`` and
    ``align`` restrict and align the locations as in :func:`visits_kl` (the paper computes the
    relative error over all locations only).
    """
    return _averaged(_visits_relative_error, reference, synthetic, top=top, align=align, floor=floor)


# -- (c): top-n coverage -------------------------------------------------------------------------
def _coverage(reference, synthetic, n):
    c1, c2 = visit_counts(reference), visit_counts(synthetic)
    out = {}
    for k in n:
        top_ref = _top(c1, k)
        out[k] = float(np.isin(top_ref, _top(c2, k)).sum() / top_ref.size) if top_ref.size else float("nan")
    return out


def top_n_coverage(reference: TraceSet, synthetic: TraceSet, n: Sequence[int] = COVERAGE_N,
                   baseline: TraceSet | None = None) -> dict[int, float]:
    """Top-n coverage of locations (paper 002 §VIII.C (c), Fig. 11).

    .. math:: cov_n = \\frac{|\\mathrm{top}_n(ref) \\cap \\mathrm{top}_n(syn)|}{|\\mathrm{top}_n(ref)|}

    where :math:`\\mathrm{top}_n` is the set of the n most visited locations (ties broken by
    the lower location id; a location never visited is never in a top-n, so the denominator
    is n unless the reference visits fewer locations). With a ``baseline`` (the paper's day-2
    real set; in locsynth the training set when the reference is the test set) the paper's
    *relative* coverage is returned instead:

    .. math:: \\min\\left(\\frac{x}{y}, 1\\right), \\quad x = \\overline{cov_n}(syn), \\; y = cov_n(baseline)

    with x averaged over the synthetic trace numbers (NaN when y = 0).

    The paper does not list its values of n ("various values of n"); the default 10, 20, ...,
    50 stays within the top 50 of feature (b).

    Returns
    -------
    dict
        ``{n: coverage}``, each in [0, 1]; 1 for identical sets.
    """
    x = _averaged(_coverage, reference, synthetic, n=tuple(n))
    x = {int(k): v for k, v in x.items()}
    if baseline is None:
        return x
    y = _averaged(_coverage, reference, baseline, n=tuple(n))
    return {int(k): (min(x[k] / y[k], 1.0) if y[k] > 0 else float("nan")) for k in x}


# -- (d): users' time allocation -----------------------------------------------------------------
def top_location_counts(traces: TraceSet, top: int = 3) -> np.ndarray:
    """Events of each trace at its 1st, 2nd, ... ``top``-th most visited location.

    Returns
    -------
    ndarray of shape (n_traces, top), int64
        0 where the trace visits fewer than k distinct locations. (Ties between locations do
        not matter: tied locations have the same count.)
    """
    n_loc = traces.space.n_locations
    key, count = np.unique(traces.user.astype(np.int64) * n_loc + traces.loc, return_counts=True)
    row = key // n_loc
    order = np.lexsort((-count, row))                      # by trace, then count descending
    row, count = row[order], count[order]
    first = np.searchsorted(row, row)                      # first entry of each row
    rank = np.arange(row.size) - first
    keep = rank < top
    out = np.zeros((traces.n_traces, top), np.int64)
    out[row[keep], rank[keep]] = count[keep]
    return out


def _allocation_histogram(traces: TraceSet, top: int, bins: int) -> np.ndarray:
    """(top, bins + 1) counts of traces by the fraction of their events at their k-th location:
    bin 0 holds the traces with no k-th location, bin b = ceil(f * bins) the others."""
    c = top_location_counts(traces, top)
    n = traces.counts()
    c, n = c[n > 0], n[n > 0]
    b = -(-c * bins // n[:, None])                          # exact ceil(count / n * bins)
    return np.stack([np.bincount(b[:, k], minlength=bins + 1) for k in range(top)]).astype(np.float64)


def _time_allocation_kl(reference, synthetic, top, bins, zero):
    h1 = _allocation_histogram(reference, top, bins)
    h2 = _allocation_histogram(synthetic, top, bins)
    return {k + 1: kl_smoothed(h1[k], _on_total(h2[k], h1[k].sum()), zero) for k in range(top)}


def time_allocation_kl(reference: TraceSet, synthetic: TraceSet, top: int = 3, bins: int = 10,
                       zero: float = ZERO_COUNT) -> dict[int, float]:
    """KL divergence between the distributions of users' time allocation at their top locations
    (paper 002 §VIII.C (d), Fig. 12), for reference and synthetic sets of *different* users.

    For every trace u and k = 1..``top``, :math:`f_k(u)` is the fraction of u's events at u's
    k-th most visited location (0 if it visits fewer than k locations). For each k, the traces
    are counted into ``bins + 1`` bins of :math:`f_k` (bin 0: :math:`f_k = 0`; bin b:
    :math:`f_k \\in ((b-1)/B, b/B]`) and

    .. math:: D_k = D_{KL}(H_k^{ref} \\| H_k^{syn})

    with the synthetic histogram rescaled to the reference's number of traces and zero counts
    set to 0.1 (:func:`kl_smoothed`). Empty traces are left out.

    The paper compares the users' allocations *user by user* (see
    :func:`time_allocation_paired_kl`), which needs the same users on both sides; this
    version compares the distribution of the allocation over users, which is what its Fig. 12
    shows, and works against a test set of other users. The binning is ours (the paper gives
    none).

    Returns
    -------
    dict
        ``{1: D_1, 2: D_2, 3: D_3}`` in nats, each >= 0.
    """
    return _averaged(_time_allocation_kl, reference, synthetic, top=top, bins=bins, zero=zero)


def _time_allocation_paired_kl(reference, synthetic, top, zero):
    ref_rows, syn_rows = _pair_by_user_id(reference, synthetic)
    if not ref_rows.size:
        return {k + 1: float("nan") for k in range(top)}
    n1, n2 = reference.counts()[ref_rows], synthetic.counts()[syn_rows]
    ok = (n1 > 0) & (n2 > 0)
    ref_rows, syn_rows, n1, n2 = ref_rows[ok], syn_rows[ok], n1[ok], n2[ok]
    if not ref_rows.size:
        return {k + 1: float("nan") for k in range(top)}
    c1 = top_location_counts(reference, top)[ref_rows].astype(np.float64)
    c2 = top_location_counts(synthetic, top)[syn_rows].astype(np.float64)
    f1 = np.where(c1 > 0, c1, zero) / n1[:, None]
    f2 = np.where(c2 > 0, c2, zero) / n2[:, None]
    return {k + 1: kl_smoothed(f1[:, k], f2[:, k], zero) for k in range(top)}


def time_allocation_paired_kl(reference: TraceSet, synthetic: TraceSet, top: int = 3,
                              zero: float = ZERO_COUNT) -> dict[int, float]:
    """Users' time allocation compared user by user, as in paper 002 §VIII.C (d), Table III.

    For k = 1..``top`` and every user u present in both sets (paired by ``user_id``: a
    synthetic trace meets the reference trace of the user it was generated from), take the
    proportion :math:`f_k(u)` of u's events at u's k-th most visited location, normalise it
    over users ("We perform this calculation across all 30 users and normalize the result"),
    and compare:

    .. math:: P_k(u) = \\frac{f_k^{ref}(u)}{\\sum_v f_k^{ref}(v)}, \\quad
              D_k = \\sum_u P_k(u) \\log \\frac{P_k(u)}{Q_k(u)}

    with :math:`Q_k` the same from the synthetic traces. This reading (a distribution over
    users rather than a histogram of proportions) is the one under which the paper's
    baselines are meaningful: its "uniform time allocation" gives every user the same
    proportion and scores 0.165, not the large value a one-bin histogram would. A user with
    fewer than k locations has a zero proportion, set to 0.1 event (footnote 5) before
    normalising.

    Returns
    -------
    dict
        ``{1: D_1, 2: D_2, 3: D_3}`` in nats, each >= 0; NaN when no synthetic trace has the
        ``user_id`` of a reference trace (e.g. against a test set of other users).
    """
    return _averaged(_time_allocation_paired_kl, reference, synthetic, top=top, zero=zero)


# -- (e): spatiotemporal mobility features --------------------------------------------------------
def aggregate_visits(traces: TraceSet, periods: int = PERIODS) -> np.ndarray:
    """The aggregate visiting probability :math:`\\bar\\pi` (paper 002 §IV.A eq. (1), §V.B).

    :math:`\\pi_\\tau^r(u) = \\Pr\\{A_u^t = r; \\tau^t = \\tau\\}` is the fraction of u's events
    that are at r in period τ; :math:`\\bar\\pi` is its average over the traces with events.

    Returns
    -------
    ndarray of shape (periods, n_locations)
    """
    tau, p = _periods(traces, periods)
    n_loc = traces.space.n_locations
    n = traces.counts()
    users = max(int((n > 0).sum()), 1)
    w = 1.0 / n[traces.user] / users
    return np.bincount(tau * n_loc + traces.loc, weights=w, minlength=p * n_loc).reshape(p, n_loc)


def aggregate_transitions(traces: TraceSet, periods: int = PERIODS) -> tuple[sp.csr_array, np.ndarray]:
    """The aggregate transition model :math:`\\bar p` and its state weights (paper 002 §IV.A, §V.B).

    A state s = (τ, τ', r) is the current location r in period τ with the next instant in
    period τ'; transitions are successive events of a trace at consecutive instants. User u's
    :math:`p_{r,\\tau,\\tau'}^{r'}(u)` is its empirical next-location distribution from s, and

    .. math:: \\bar p_{s}^{r'} = z_s^{-1} \\sum_u p_s^{r'}(u)

    the average over the users who have state s (the paper's :math:`z_r` normalisation,
    without the ε·d(r, r')⁻² term it adds only to decode traces). The weight
    :math:`w(s) = p^{r,\\tau,\\tau'}` of eq. (6) is the share of state s among u's
    transitions, averaged over the users with transitions.

    Returns
    -------
    pbar : csr_array of shape (periods * periods * n_locations, n_locations)
        Row s = (τ P + τ') R + r; rows of unseen states are empty.
    weight : ndarray of shape (periods * periods * n_locations,)
        Sums to 1 (or is all zero when there is no transition).
    """
    tau, p = _periods(traces, periods)
    n_loc = traces.space.n_locations
    n_states = p * p * n_loc
    i = traces.transition_index()
    user = traces.user[i].astype(np.int64)
    state = (tau[i] * p + tau[i + 1]) * n_loc + traces.loc[i]
    nxt = traces.loc[i + 1].astype(np.int64)
    if not user.size:
        return sp.csr_array((n_states, n_loc)), np.zeros(n_states)
    # c(u, s, r') and c(u, s): counts per user, state and next location
    key, c_usr = np.unique((user * n_states + state) * n_loc + nxt, return_counts=True)
    us = key // n_loc
    us_key, us_inv = np.unique(us, return_inverse=True)
    c_us = np.bincount(us_inv, weights=c_usr)
    cond = c_usr / c_us[us_inv]                                             # p_s^{r'}(u)
    s_of_us = us_key % n_states
    users_with_state = np.bincount(s_of_us, minlength=n_states)             # z_s
    s_row = us % n_states
    pbar = sp.csr_array((cond / users_with_state[s_row], (s_row, key % n_loc)), shape=(n_states, n_loc))
    u_of_us = us_key // n_states
    c_u = np.bincount(u_of_us, weights=c_us)
    n_users = np.unique(u_of_us).size
    weight = np.bincount(s_of_us, weights=c_us / c_u[u_of_us], minlength=n_states) / n_users
    return pbar, weight


def _mobility_similarity(reference, synthetic, periods):
    pi_ref, pi_syn = aggregate_visits(reference, periods), aggregate_visits(synthetic, periods)
    p_ref, w_ref = aggregate_transitions(reference, periods)
    p_syn, _ = aggregate_transitions(synthetic, periods)
    overlap = np.asarray(p_ref.minimum(p_syn).sum(axis=1)).ravel()
    return {"visits": float(np.minimum(pi_ref, pi_syn).sum()),
            "transitions": float(w_ref @ overlap) if w_ref.sum() > 0 else float("nan")}


def mobility_similarity(reference: TraceSet, synthetic: TraceSet, periods: int = PERIODS) -> dict[str, float]:
    """Geographic similarity of the aggregate mobility models (paper 002 §VIII.C (e)).

    The paper computes the aggregate model :math:`\\langle \\bar p_F, \\bar \\pi_F \\rangle` of
    each synthetic dataset and reports its "statistical similarity" to the real one's,
    separately for :math:`\\bar p` and :math:`\\bar \\pi` (0.806 and 0.786 in its Lausanne
    data). With the Hamming distance :math:`d(r, r') = 1_{r \\ne r'}`, for which the Mallows
    distance is :math:`1 - \\sum_i \\min(p_i, q_i)` (§IV.C), the geographic similarity
    (eqs. (5)-(7)) becomes

    .. math:: sim(\\bar\\pi, \\bar\\pi_F) = \\sum_{\\tau, r} \\min(\\bar\\pi_\\tau^r, \\bar\\pi_{F,\\tau}^r)

    .. math:: sim(\\bar p, \\bar p_F) = \\sum_{r,\\tau,\\tau'} \\bar p^{r,\\tau,\\tau'}
              \\sum_{r'} \\min(\\bar p_{r,\\tau,\\tau'}^{r'}, \\bar p_{F, r,\\tau,\\tau'}^{r'})

    The paper does not say which d it used for (e); the Hamming distance is the one it gives
    in closed form and yields values in the range it reports (a Euclidean d normalised by the
    largest distance gives values near 1 for almost any pair of sets). The expectation is
    taken under the reference's model (the measure is asymmetric, eq. (6)); a state the
    synthetic set never leaves from contributes 0. See :func:`aggregate_visits` and
    :func:`aggregate_transitions`.

    Parameters
    ----------
    periods : int
        Number of time periods τ: the day's slots cut into this many equal consecutive groups
        (the paper's example is morning, afternoon, evening, night; 1 ignores time).

    Returns
    -------
    dict
        ``{"visits": sim of π̄, "transitions": sim of p̄}``, each in [0, 1]; 1 for identical
        sets.
    """
    return _averaged(_mobility_similarity, reference, synthetic, periods=periods)


# -- (f): semantic mobility features -------------------------------------------------------------
def semantic_profiles(traces: TraceSet, periods: int = PERIODS) -> tuple[sp.csr_array, np.ndarray]:
    """Each trace's per-period visit distributions, sorted in decreasing order.

    Returns
    -------
    sorted_profile : csr_array of shape (n_traces, periods * n_locations)
        Column τ R + i holds :math:`\\pi_\\tau(u)` 's i-th largest probability (τ's events
        only, conditional on τ).
    period_prob : ndarray of shape (n_traces, periods)
        :math:`\\Pr_u\\{\\tau\\}`: the share of u's events in period τ.
    """
    tau, p = _periods(traces, periods)
    n_loc = traces.space.n_locations
    key, count = np.unique((traces.user.astype(np.int64) * p + tau) * n_loc + traces.loc, return_counts=True)
    ut = key // n_loc                                                        # (trace, period)
    n_ut = np.bincount(ut, weights=count, minlength=traces.n_traces * p)    # its number of events
    order = np.lexsort((-count, ut))
    ut, count = ut[order], count[order]
    rank = np.arange(ut.size) - np.searchsorted(ut, ut)
    prob = count / n_ut[ut]
    profile = sp.csr_array((prob, (ut // p, (ut % p) * n_loc + rank)), shape=(traces.n_traces, p * n_loc))
    n = traces.counts()
    period_prob = n_ut.reshape(traces.n_traces, p) / np.maximum(n, 1)[:, None]
    return profile, period_prob


def semantic_similarity_pairs(profile_u: sp.csr_array, period_u: np.ndarray, profile_v: sp.csr_array,
                              n_locations: int, chunk: int = 20000) -> np.ndarray:
    """Semantic similarity :math:`sim_S(u_i, v_i)` of aligned rows (paper 002 §IV.D eq. (10)).

    .. math:: sim_S(u, v) = \\sum_\\tau \\Pr_u\\{\\tau\\} \\max_\\sigma \\sum_r
              \\min\\{\\pi_\\tau^r(u), \\pi_\\tau^{\\sigma(r)}(v)\\}

    Eq. (10) is printed as "1 - ..." of this sum, which would be a *dis*\\ similarity (it is 0
    for identical profiles); we take the similarity, consistent with eq. (9). The paper finds σ
    with the Hungarian algorithm; it is not needed: min is supermodular, so the sum of
    :math:`\\min(a_r, b_{\\sigma(r)})` is largest when σ pairs the two vectors in the same
    sorted order (rearrangement inequality), i.e. the sum of the minima of the two
    decreasingly sorted profiles. Pr{τ} is taken from u (the measure is asymmetric like
    eq. (6)); a period where v has no event contributes 0.
    """
    out = np.empty(profile_u.shape[0])
    for lo in range(0, profile_u.shape[0], chunk):
        m = sp.coo_array(profile_u[lo:lo + chunk].minimum(profile_v[lo:lo + chunk]))
        w = period_u[lo + m.row, m.col // n_locations]
        out[lo:lo + chunk] = np.bincount(m.row, weights=m.data * w, minlength=min(chunk, out.size - lo))
    return out


def _seed_semantic(reference, synthetic, periods):
    ref_rows, syn_rows = _pair_by_user_id(reference, synthetic)
    ok = (reference.counts()[ref_rows] > 0) & (synthetic.counts()[syn_rows] > 0)
    ref_rows, syn_rows = ref_rows[ok], syn_rows[ok]
    if not ref_rows.size:
        return float("nan")
    a, pa = semantic_profiles(reference, periods)
    b, _ = semantic_profiles(synthetic, periods)
    return float(semantic_similarity_pairs(a[ref_rows], pa[ref_rows], b[syn_rows],
                                           reference.space.n_locations).mean())


def seed_semantic_similarity(reference: TraceSet, synthetic: TraceSet, periods: int = PERIODS) -> float:
    """Mean semantic similarity of each synthetic trace to its own seed (paper 002 §VIII.C (f),
    first step, Fig. 8).

    .. math:: \\frac{1}{|F|} \\sum_{f \\in F} sim_S(seed(f), f)

    with :math:`sim_S` from the visiting probabilities per period (eq. (10); see
    :func:`semantic_similarity_pairs`). The paper also defines a version on the full
    transition profile (eq. (11)), a quadratic assignment problem it approximates by
    Metropolis-Hastings; that one is not computed. Seeds are found by ``user_id`` (see
    :func:`time_allocation_paired_kl`): the reference must be the training set.

    Returns
    -------
    float
        In [0, 1]; NaN when no synthetic trace has a reference user's ``user_id``.
    """
    check_same_frame(reference, synthetic, ("reference", "synthetic"), time=False)
    return _seed_semantic(reference, synthetic, periods)


def _pairwise_semantic(traces: TraceSet, periods: int, max_traces: int, rng: np.random.Generator,
                       block: int = 4_000_000) -> np.ndarray:
    """:math:`sim_S(u, v)` of all pairs u < v among (a sample of) the traces with events.

    The sampled profiles are made dense, cut after the largest rank any of them uses, and
    compared all against all, ``block`` entries at a time."""
    rows = np.flatnonzero(traces.counts() > 0)
    if rows.size > max_traces:
        rows = np.sort(rng.choice(rows, max_traces, replace=False))
    prof, pp = semantic_profiles(traces, periods)
    n, p, n_loc = rows.size, pp.shape[1], traces.space.n_locations
    dense = prof[rows].toarray().reshape(n, p, n_loc)
    used = np.flatnonzero(dense.any(axis=(0, 1)))
    dense = dense[:, :, :used[-1] + 1 if used.size else 0]
    w = pp[rows]
    step = max(1, block // max(n * dense.shape[1] * dense.shape[2], 1))
    sims = np.empty((n, n))
    for lo in range(0, n, step):
        m = np.minimum(dense[lo:lo + step, None], dense[None]).sum(axis=3)      # (step, n, P)
        sims[lo:lo + step] = (m * w[lo:lo + step, None]).sum(axis=2)
    return sims[np.triu_indices(n, k=1)]


def _qq_correlation(real: np.ndarray, fake: np.ndarray, quantiles: int) -> float:
    if real.size < 2 or fake.size < 2:
        return float("nan")
    q = np.linspace(0.0, 1.0, quantiles)
    x, y = np.quantile(real, q), np.quantile(fake, q)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def semantic_qq_correlation(reference: TraceSet, synthetic: TraceSet, periods: int = PERIODS,
                            max_traces: int = 500, quantiles: int = 101, seed: int = 0) -> float:
    """Correlation of the Q-Q plot of pairwise semantic similarities (paper 002 §VIII.C (f),
    second step, Fig. 9).

    The semantic similarities :math:`sim_S(u, v)` of all distinct pairs u < v of reference
    traces and of all distinct pairs of synthetic traces are two samples; the paper shows their
    Q-Q plot and reads "strong correlation" off it. The number here is the Pearson correlation
    of the two samples' quantiles at ``quantiles`` evenly spaced probabilities, i.e. how
    straight the Q-Q plot is (1 when one distribution is an increasing affine function of the
    other).

    Parameters
    ----------
    max_traces : int
        At most this many traces of each set enter the pairs (a seeded sample), keeping the
        cost at max_traces² / 2 pairs.
    seed : int
        Seed of that sample.

    Returns
    -------
    float
        In [-1, 1]; NaN when a set has fewer than 3 traces with events or a sample is constant
        (e.g. one event per period in every trace: all similarities are 1).
    """
    check_same_frame(reference, synthetic, ("reference", "synthetic"), time=False)
    rng = np.random.default_rng(seed)
    real = _pairwise_semantic(reference, periods, max_traces, rng)
    return float(np.mean([_qq_correlation(real, _pairwise_semantic(s, periods, max_traces, rng), quantiles)
                          for s in synthetic.by_trace_number()]))


# -- everything ----------------------------------------------------------------------------------
def sglt_features(reference: TraceSet, synthetic: TraceSet) -> dict[str, float]:
    """All SGLT utility features of paper 002 §VIII.C, with default parameters.

    Keys (each a float; NaN where a feature does not apply, e.g. the paired features against
    a reference of other users):

    - ``visits_kl``, ``visits_kl_rank``: :func:`visits_kl` aligned by location / by rank (a)
    - ``visits_relative_error``: :func:`visits_relative_error` over all locations (a)
    - ``top50_visits_kl``, ``top50_visits_relative_error``: the same over the reference's 50
      most visited locations (b)
    - ``top10_coverage`` ... ``top50_coverage``: :func:`top_n_coverage` (c)
    - ``time_allocation_kl_1`` .. ``_3``: :func:`time_allocation_kl` (d)
    - ``time_allocation_paired_kl_1`` .. ``_3``: :func:`time_allocation_paired_kl` (d)
    - ``mobility_visit_similarity``, ``mobility_transition_similarity``:
      :func:`mobility_similarity` (e)
    - ``seed_semantic_similarity``, ``semantic_qq_correlation``: (f)
    """
    out = {
        "visits_kl": visits_kl(reference, synthetic),
        "visits_kl_rank": visits_kl(reference, synthetic, align="rank"),
        "visits_relative_error": visits_relative_error(reference, synthetic),
        "top50_visits_kl": visits_kl(reference, synthetic, top=50),
        "top50_visits_relative_error": visits_relative_error(reference, synthetic, top=50),
    }
    out.update({f"top{n}_coverage": v for n, v in top_n_coverage(reference, synthetic).items()})
    out.update({f"time_allocation_kl_{k}": v for k, v in time_allocation_kl(reference, synthetic).items()})
    out.update({f"time_allocation_paired_kl_{k}": v
                for k, v in time_allocation_paired_kl(reference, synthetic).items()})
    mob = mobility_similarity(reference, synthetic)
    out["mobility_visit_similarity"] = mob["visits"]
    out["mobility_transition_similarity"] = mob["transitions"]
    out["seed_semantic_similarity"] = seed_semantic_similarity(reference, synthetic)
    out["semantic_qq_correlation"] = semantic_qq_correlation(reference, synthetic)
    return out


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _sglt_group(ctx) -> GroupResult:
    """SGLT's utility features (paper 002 §VIII.C) as ``sglt_*`` rows, against the training traces."""
    syn_f = sglt_features(ctx.test, ctx.synthetic)
    train_f = ctx.reference(("sglt", "training"), lambda: sglt_features(ctx.test, ctx.train))
    return GroupResult({f"sglt_{key}": row(value, train_f.get(key), None) for key, value in syn_f.items()
                        if np.isfinite(value)})


def _sglt_skip(ctx) -> str | None:
    if not ctx.option("sglt", True):
        return ""
    if ctx.trips:
        return ("SGLT's features (paper 002 §VIII.C) describe users' check-ins over days: time allocation and "
                "per-user similarities have no meaning for one trip")
    return None


def _feature(key: str, label: str, description: str, goal: str = "lower", range=(0.0, None)) -> Metric:
    return Metric(f"sglt_{key}", label, description, goal, range, featured=False)


#: paper 002 §VIII.C's features (a)-(f), in its order
FEATURES = (
    _feature("visits_kl", "Visits KL (a)", "KL divergence of the visit distribution over locations"),
    _feature("visits_kl_rank", "Visits KL by rank (a)", "the same with locations sorted by popularity"),
    _feature("visits_relative_error", "Visits relative error (a)", "mean relative error of the visit counts per "
             "location"),
    _feature("top50_visits_kl", "Top-50 visits KL (b)", "visits KL over the 50 most visited locations"),
    _feature("top50_visits_relative_error", "Top-50 relative error (b)", "relative error over the 50 most visited "
             "locations"),
    *(_feature(f"top{n}_coverage", f"Top-{n} coverage (c)", f"share of the reference's {n} most visited locations "
               f"among the set's {n} most visited; higher is better", "higher", (0.0, 1.0)) for n in (10, 20, 30, 40, 50)),
    *(_feature(f"time_allocation_kl_{k}", f"Time allocation KL, #{k} (d)", f"KL divergence of the share of time "
               f"users spend at their #{k} location") for k in (1, 2, 3)),
    *(_feature(f"time_allocation_paired_kl_{k}", f"Paired time allocation KL, #{k} (d)", "the same, each synthetic "
               "trace against its own seed") for k in (1, 2, 3)),
    _feature("mobility_visit_similarity", "Aggregate visit similarity (e)", "geographic similarity of the aggregate "
             "visit distributions; higher is better", "higher", (0.0, 1.0)),
    _feature("mobility_transition_similarity", "Aggregate transition similarity (e)", "geographic similarity of the "
             "aggregate transition models; higher is better", "higher", (0.0, 1.0)),
    _feature("seed_semantic_similarity", "Seed semantic similarity (f)", "mean semantic similarity of a synthetic "
             "trace to its seed; higher is better", "higher", (0.0, 1.0)),
    _feature("semantic_qq_correlation", "Semantic Q-Q correlation (f)", "how straight the Q-Q plot of pairwise "
             "semantic similarities is; higher is better", "higher", (-1.0, 1.0)),
)

GROUP = MetricGroup("sglt", FEATURES, _sglt_group, _sglt_skip, step="SGLT features",
                    options=(flag("sglt", True, "Also compute SGLT's utility features (paper 002 §VIII.C)."),))
