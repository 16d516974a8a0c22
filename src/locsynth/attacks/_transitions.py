"""Per-user transition matrices and per-trace transition counts, sparse over observed pairs.

A transition (i, j) becomes a column of a :class:`PairIndex` holding only the pairs that occur,
so nothing of size users x locations x locations is ever allocated.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class PairIndex:
    """Compact column ids for the transitions (i, j) seen in any of the given (src, dst) arrays."""

    def __init__(self, n_locations: int, *pairs: tuple[np.ndarray, np.ndarray]):
        self.n_locations = n_locations
        keys = [src * n_locations + dst for src, dst in pairs]
        self.keys = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)

    @property
    def size(self) -> int:
        return int(self.keys.size)

    def column(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.keys, src * self.n_locations + dst)


def transition_counts(row: np.ndarray, src: np.ndarray, dst: np.ndarray, index: PairIndex,
                      n_rows: int) -> sp.csr_array:
    """How often each trace makes each transition, sparse of shape (n_rows, index.size)."""
    out = sp.csr_array((np.ones(row.size), (row, index.column(src, dst))), shape=(n_rows, index.size))
    out.sum_duplicates()
    return out


def transition_probabilities(row: np.ndarray, src: np.ndarray, dst: np.ndarray, index: PairIndex,
                             n_rows: int) -> sp.csr_array:
    """Each row's maximum-likelihood transition matrix W_n(i, j) = c_n(i, j) / c_n(i, .),
    flattened over the pair columns, sparse of shape (n_rows, index.size)."""
    n_loc = index.n_locations
    key, count = np.unique((row * n_loc + src) * n_loc + dst, return_counts=True)
    r, s, d = key // (n_loc * n_loc), (key // n_loc) % n_loc, key % n_loc
    origin, inverse = np.unique(r * n_loc + s, return_inverse=True)
    degree = np.bincount(inverse, weights=count, minlength=origin.size)
    values = count / degree[inverse]
    return sp.csr_array((values, (r, index.column(s, d))), shape=(n_rows, index.size))
