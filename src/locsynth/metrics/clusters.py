"""Cluster-specific population distributions (paper 001 §4.3 (d), Fig. 8).

Each column k of PPMTF's user-factor matrix A (paper 001 eq. (2)) is a user cluster: the users
whose value in the column is in its top 10%. A synthesizer preserves cluster-specific features
when the traces it generates from a cluster's users are distributed over the locations like
those users' training traces, rather than like the whole population. The paper shows this in
pictures (Fig. 8); :func:`cluster_population_tv` puts a number on it.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..data.traces import TraceSet
from .groups import GroupResult, Metric, MetricGroup, Option, row


def clusters_from_factors(A: np.ndarray, top: float = 0.1) -> list[np.ndarray]:
    """User clusters from the columns of a user-factor matrix (paper 001 §4.3 (d)).

    For each column k, the users "whose values in the column are the largest", top 10%:

    .. math:: U_k = \\{ n : \\hat A_{nk} > Q_{1 - top}(\\hat A_{\\cdot k}) \\}, \\quad
              \\hat A_{\\cdot k} = A_{\\cdot k} / \\|A_{\\cdot k}\\|_2

    with :math:`Q_{0.9}` = ``np.percentile(..., 90)`` (linear interpolation) and a strict
    inequality, as in the authors' evaluation. The unit-norm scaling does not change the
    selection (it is a positive factor per column); it is kept for fidelity and for columns
    whose norm is 0, which then select nobody. With 500 users and ``top=0.1`` each cluster has
    50 users (fewer when values tie at the cut).

    Parameters
    ----------
    A : ndarray of shape (n_users, z)
        A in paper 001 eq. (2); row n is the training trace at row n of the training set.
    top : float
        Fraction of users per cluster, in (0, 1).

    Returns
    -------
    list of z ndarrays of int64
        The rows of each cluster's users, ascending.
    """
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2:
        raise InputError(f"A must be a (n_users, z) matrix, got shape {A.shape}")
    if not 0 < top < 1:
        raise InputError(f"top must be a fraction in (0, 1), got {top}")
    norm = np.linalg.norm(A, axis=0)
    scaled = np.divide(A, norm, out=np.zeros_like(A), where=norm > 0)
    cut = np.percentile(scaled, 100.0 * (1.0 - top), axis=0)
    return [np.flatnonzero((scaled[:, k] > cut[k]) & (norm[k] > 0)) for k in range(A.shape[1])]


def cluster_population(traces: TraceSet, rows) -> np.ndarray:
    """Location distribution of the events of the traces at ``rows``.

    .. math:: p_U(x) = \\frac{|\\{e : user(e) \\in U, loc(e) = x\\}|}{|\\{e : user(e) \\in U\\}|}

    Returns
    -------
    ndarray of shape (n_locations,)
        Sums to 1; uniform when the traces have no event (or ``rows`` is empty). Deleted or
        generalized events are refused by name.
    """
    traces.require_exact("the cluster population")
    n_loc = traces.space.n_locations
    mask = np.zeros(traces.n_traces, dtype=bool)
    mask[np.asarray(rows, dtype=np.int64)] = True
    counts = np.bincount(traces.loc[mask[traces.user]], minlength=n_loc).astype(np.float64)
    total = counts.sum()
    return counts / total if total > 0 else np.full(n_loc, 1.0 / n_loc)


def cluster_population_tv(train: TraceSet, synthetic: TraceSet, clusters: list[np.ndarray]) -> np.ndarray:
    """Total variation between each cluster's training and synthetic location distributions.

    For cluster :math:`U_k` (rows of the training set),

    .. math:: TV_k = \\frac{1}{2} \\sum_x |p^{train}_{U_k}(x) - p^{syn}_{U_k}(x)|

    where :math:`p^{syn}_{U_k}` is the distribution of the synthetic traces whose ``source``
    is in :math:`U_k` (:func:`cluster_population`; uniform if there is none). When the
    synthetic set has several trace numbers, :math:`p^{syn}` and the TV are computed per trace
    number and the TV is averaged, as the authors evaluate PF's ten traces per user.

    Parameters
    ----------
    train : TraceSet
        The training set the clusters index (and the synthetic ``source`` refers to).
    synthetic : TraceSet
        With ``source`` (and ``trace_no``) columns.
    clusters : list of ndarray
        From :func:`clusters_from_factors`.

    Returns
    -------
    ndarray of shape (len(clusters),)
        Each in [0, 1].
    """
    if "source" not in synthetic.users:
        raise InputError("cluster_population_tv needs a synthetic TraceSet with a source column")
    if synthetic.space.n_locations != train.space.n_locations:
        raise InputError(f"the synthetic set has {synthetic.space.n_locations} locations but the training set "
                         f"has {train.space.n_locations}")
    n_loc = train.space.n_locations
    source = synthetic.users["source"].to_numpy().astype(np.int64)[synthetic.user]
    numbers = synthetic.users["trace_no"].to_numpy() if "trace_no" in synthetic.users else np.zeros(
        synthetic.n_traces, np.int64)
    uniq, number = np.unique(numbers, return_inverse=True)
    number = number[synthetic.user]
    out = np.empty(len(clusters))
    for k, rows in enumerate(clusters):
        p = cluster_population(train, rows)
        mine = np.isin(source, np.asarray(rows, dtype=np.int64))
        counts = np.bincount(number[mine] * n_loc + synthetic.loc[mine],
                             minlength=uniq.size * n_loc).reshape(uniq.size, n_loc).astype(np.float64)
        total = counts.sum(axis=1, keepdims=True)
        q = np.divide(counts, total, out=np.full_like(counts, 1.0 / n_loc), where=total > 0)
        out[k] = 0.5 * np.abs(q - p).sum(axis=1).mean()
    return out


# -- the group evaluate runs (metrics/groups.py) -----------------------------------------------------

def _cluster_group(ctx) -> GroupResult:
    """cluster_tv (paper 001 §4.3 (d)) from the user factors given to evaluate; the uniform
    baseline is the TV to the uniform distribution."""
    n_loc = ctx.test.space.n_locations
    clusters = clusters_from_factors(np.asarray(ctx.option("user_factors")))
    tv = cluster_population_tv(ctx.train, ctx.synthetic, clusters)
    uniform = [0.5 * np.abs(cluster_population(ctx.train, c) - 1.0 / n_loc).sum() for c in clusters]
    return GroupResult({"cluster_tv": row(np.nanmean(tv), None, np.mean(uniform))})


def _cluster_skip(ctx) -> str | None:
    if ctx.option("user_factors") is None:
        return ""
    return "PPMTF's user factors cluster users, not trips" if ctx.trips else None


GROUP = MetricGroup(
    "clusters",
    (Metric("cluster_tv", "Cluster TV", "mean over the user factors' top-10% clusters of the total variation "
            "between the cluster's training and synthetic populations (paper 001 §4.3 (d))", range=(0.0, 1.0),
            short="cluster TV"),),
    _cluster_group, _cluster_skip, step="cluster-specific populations",
    options=(Option("user_factors", None, "A user-factor matrix (PPMTF's A), of shape (training users, z): adds "
                    "cluster_tv.", cli=False),))
