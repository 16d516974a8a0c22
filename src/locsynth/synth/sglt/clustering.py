"""Semantic clustering of the location graph (paper 002 §IV-C, Fig. 2's SemanticClustering).

The paper clusters the location semantic graph with "k-means" (its tool: CLUTO's graph
partitioning) into kappa classes and picks the number of classes that "maximizes the ratio of
inter-cluster similarity over intra-cluster similarity" (§VI-A; read as intra over inter: a
clustering is good when locations of one class are more similar to each other than to other
classes). Here the partitioning is scikit-learn's spectral clustering of the graph as a
precomputed affinity (a relaxed normalized cut, the graph version of k-means), with the
discretization of Yu and Shi for labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ...core.errors import InputError
from .similarity import GRAPH_FLOOR


def semantic_clusters(graph: sp.csr_array, k: int, seed: int = 0) -> np.ndarray:
    """Labels 0 .. k - 1 of the locations with an edge, and k for the locations no mapping
    touched (no training user visits them, or only alone: no seed uses them, so they form one
    extra class of their own).

    Every pair of active locations gets weight 1e-8 more (the authors' tool), so the graph is
    connected, which spectral clustering needs.
    """
    from sklearn.cluster import SpectralClustering

    R = graph.shape[0]
    degree = np.asarray(graph.sum(axis=1)).ravel()
    active = np.flatnonzero(degree > 0)
    if k < 1:
        raise InputError(f"the number of clusters must be at least 1, got {k}")
    if active.size < k:
        raise InputError(f"cannot make {k} semantic clusters of the {active.size} locations that training users "
                         f"visit (with another user); use fewer clusters")
    labels = np.full(R, k, np.int64)
    if k == 1:
        labels[active] = 0
        return labels
    a = graph[active][:, active].toarray() + GRAPH_FLOOR
    np.fill_diagonal(a, 0.0)
    model = SpectralClustering(n_clusters=k, affinity="precomputed", assign_labels="discretize",
                               random_state=seed)
    labels[active] = model.fit_predict(a)
    return labels


def cluster_quality(graph: sp.csr_array, labels: np.ndarray) -> float:
    """Mean edge weight between two locations of one class over the mean between two classes
    (pairs of active locations, weights as in :func:`semantic_clusters`); higher is better."""
    degree = np.asarray(graph.sum(axis=1)).ravel()
    active = np.flatnonzero(degree > 0)
    lab = labels[active]
    a = graph[active][:, active].toarray() + GRAPH_FLOOR
    same = lab[:, None] == lab[None, :]
    np.fill_diagonal(same, False)
    other = lab[:, None] != lab[None, :]
    if not same.any() or not other.any():
        return float("nan")
    return float(a[same].mean() / a[other].mean())


def choose_k(graph: sp.csr_array, candidates: Sequence[int], seed: int = 0) -> tuple[int, dict[int, float]]:
    """The candidate k with the best :func:`cluster_quality`, and every candidate's quality."""
    quality = {}
    for k in candidates:
        quality[int(k)] = cluster_quality(graph, semantic_clusters(graph, int(k), seed))
    valid = {k: q for k, q in quality.items() if q == q}
    if not valid:
        raise InputError(f"no candidate number of clusters in {list(candidates)} gives classes to compare")
    return max(valid, key=valid.get), quality
