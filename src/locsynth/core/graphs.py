"""Random graphs drawn without listing every pair: G(n, p) as a binomial number of distinct pair
indices (the co-location synthesizer's friendship graphs, the simulated city's friendships)."""

from __future__ import annotations

import numpy as np


def pair_of_index(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-th pair (a, b), a < b, in the order (0, 1), (0, 2), .., (1, 2), ..; int64."""
    first = np.arange(n, dtype=np.int64)
    offset = first * (2 * n - first - 1) // 2
    a = np.searchsorted(offset, k, side="right") - 1
    return a, k - offset[a] + a + 1


def erdos_renyi(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """(m, 2) edges a < b of G(n, p): m ~ Binomial(n (n - 1) / 2, p) distinct pairs, uniformly."""
    total = n * (n - 1) // 2
    m = int(rng.binomial(total, p)) if total else 0
    if m == 0:
        return np.zeros((0, 2), np.int32)
    if m > total // 2:
        chosen = np.sort(rng.choice(total, m, replace=False))
    else:
        chosen = np.unique(rng.integers(0, total, int(m * 1.1) + 16))
        while chosen.size < m:
            chosen = np.unique(np.concatenate([chosen, rng.integers(0, total, m - chosen.size + 16)]))
        chosen = np.sort(rng.permutation(chosen)[:m])
    a, b = pair_of_index(chosen, n)
    return np.column_stack([a, b]).astype(np.int32)
