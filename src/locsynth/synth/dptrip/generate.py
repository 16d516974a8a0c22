"""Trace generation (paper 004 §7.3.3, Algorithm 1 lines 4-8): for a sampled (source,
destination, hour), the most probable path from source to destination in the routing graph of
(destination, hour), whose edge x -> y within the 11 x 11 window has weight
-log p(y | x, destination, hour) (self-loops left out: a trip never stays, data/trips.py merges them).

All trips to one (destination, hour) share one graph, so one Dijkstra run from the destination
on the reversed graph (scipy.sparse.csgraph.dijkstra) gives the shortest path from every source
at once: its predecessor array is the tree of paths, cached per (destination, hour). Paths are
deterministic (§7.3.3: "our approach always generates the same trajectory for identical
starting and ending locations at the same time t"), so the cache never changes the output.

Probabilities below 1e-10 count as 1e-10 (the authors' code, REFERENCE.md), which keeps every
cell reachable and the weights finite.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from .nexthop import HOURS, NextHopTables

FLOOR = 1e-10
#: cached trees kept at most (a tree is one int32 per cell)
CACHE_SIZE = 50_000


class Router:
    """Shortest paths to (destination, hour) under the next-hop model's weights, trees cached."""

    def __init__(self, tables: NextHopTables):
        self.tables = tables
        n = tables.rows * tables.cols
        targets = tables.targets
        centre = targets.shape[1] // 2
        edge = (targets >= 0) & (np.arange(targets.shape[1]) != centre)
        self.edge_from, self.edge_class = np.nonzero(edge)          # edge x -> targets[x, k]
        self.edge_to = targets[self.edge_from, self.edge_class]
        # the reversed graph's CSR layout (row = the edge's head), fixed for the grid
        order = np.lexsort((self.edge_from, self.edge_to))
        self.reversed_edges = (self.edge_from * targets.shape[1] + self.edge_class)[order]
        self.reversed_indices = self.edge_from[order].astype(np.int32)
        self.reversed_indptr = np.searchsorted(self.edge_to[order], np.arange(n + 1)).astype(np.int32)
        self.n_cells = n
        self.cache: dict[tuple[int, int], np.ndarray] = {}

    def weights(self, destination: int, hour: int) -> np.ndarray:
        """Edge weights -log max(p, 1e-10), shape (n_edges,), in the order of ``edge_from``."""
        logp = self.tables.log_probabilities(destination, hour)[self.edge_from, self.edge_class]
        return _weight(logp)

    def graph(self, destination: int, hour: int) -> csr_matrix:
        """The routing graph of (destination, hour) as a sparse matrix (row x, column y)."""
        return csr_matrix((self.weights(destination, hour), (self.edge_from, self.edge_to)),
                          shape=(self.n_cells, self.n_cells))

    def tree(self, destination: int, hour: int) -> np.ndarray:
        """Predecessors towards ``destination``: ``tree[x]`` is the next cell on x's shortest path
        (-9999 at the destination), shape (n_cells,)."""
        key = (int(destination), int(hour))
        if key not in self.cache:
            w = _weight(self.tables.log_probabilities(*key).ravel()[self.reversed_edges])
            reversed_graph = csr_matrix((w, self.reversed_indices, self.reversed_indptr),
                                        shape=(self.n_cells, self.n_cells))
            _, pred = dijkstra(reversed_graph, directed=True, indices=key[0], return_predecessors=True)
            if len(self.cache) >= CACHE_SIZE:
                self.cache.clear()
            self.cache[key] = pred.astype(np.int32)
        return self.cache[key]

    def paths(self, source: np.ndarray, destination: np.ndarray, hour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The shortest path of every (source, destination, hour): (cells, lengths), the paths
        concatenated in input order, each from its source to its destination inclusive. All
        paths advance one cell per step together (vectorized over trips)."""
        source, destination, hour = (np.asarray(a, np.int64) for a in (source, destination, hour))
        keys, key_of = np.unique(destination * HOURS + hour, return_inverse=True)
        trees = np.stack([self.tree(k // HOURS, k % HOURS) for k in keys]) if keys.size else None
        steps, current = [source], source
        alive = np.ones(source.size, bool)
        while alive.any():
            nxt = trees[key_of, current]
            alive &= nxt >= 0                             # -9999: the destination is reached
            current = np.where(alive, nxt, current)
            steps.append(np.where(alive, nxt, -1))
        walk = np.stack(steps, axis=1)
        return walk[walk >= 0], (walk >= 0).sum(axis=1)


def _weight(logp: np.ndarray) -> np.ndarray:
    """-log max(p, 1e-10), and at least 1e-30: an exact zero (p = 1) would read as a missing edge
    in a sparse graph."""
    return np.maximum(-np.maximum(logp, np.float32(np.log(FLOOR))), np.float32(1e-30))
