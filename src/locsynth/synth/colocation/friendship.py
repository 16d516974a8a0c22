"""The friendship probability p' under node DP and the synthetic friend graph (paper 000 §4.2,
§4.4 step 1).

p is the share of friend pairs among the n (n - 1) / 2 pairs of users. What is public: n, the
number of users (the synthetic set has n users, so it is released anyway). Neighbouring graphs
are graphs on the same n users that differ in all friendships of one user (node DP with n fixed:
the user's edges removed, added or rewired). That changes at most n - 1 of the edges, so p by at
most (n - 1) / (n (n - 1) / 2) = 2 / n, and p + Lap(2 / (n epsilon_1)) is epsilon_1-node-DP
(Proposition 1; the paper's add/remove-a-node proof reaches the same 2 / n but would need the
noise scale to follow n). Clamping to [0, 1] is post-processing.

Graphs: Erdos-Renyi with p' (the paper), or Barabasi-Albert (its future work) with m = round(p'
(n - 1) / 2) edges per new node, so that the mean degree 2 m matches the DP mean degree p' (n - 1):
a post-processing of p', no further budget.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError, unknown
from ...core.graphs import erdos_renyi
from ...privacy.laplace import laplace
from ...privacy.ledger import Ledger
from ...core.validation import check_epsilon

GRAPHS = ("erdos-renyi", "barabasi-albert")


def friendship_probability(n_edges: int, n: int) -> float:
    """p = n_edges / (n (n - 1) / 2); 0 for n < 2."""
    return 0.0 if n < 2 else float(n_edges) / (n * (n - 1) / 2)


def noisy_friendship_probability(n_edges: int, n: int, epsilon: float, *, ledger: Ledger | None = None,
                                 size: int | None = None):
    """p' = clamp(p + Lap(2 / (n epsilon)), 0, 1) (module docstring); ``size`` independent
    releases as an array (each one spends epsilon)."""
    eps = check_epsilon(epsilon, "epsilon1")
    if n < 2:
        raise InputError(f"a friendship probability needs at least 2 users, got {n}")
    p = friendship_probability(n_edges, n)
    if ledger is not None and size is not None:
        raise InputError("a ledger records one release; size is for repeated trials")
    noisy = np.clip(laplace(np.full(size or 1, p), eps, 2.0 / n, ledger=ledger, unit="user",
                            saw="the friend graph (its share of friend pairs)",
                            assumptions="node DP with n, the number of users, public (paper 000 §4.2): neighbouring "
                                        "graphs differ in one user's friendships", relation="replace"),
                    0.0, 1.0)
    return noisy if size is not None else float(noisy[0])


def barabasi_albert(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """(m, 2) edges a < b of a Barabasi-Albert graph with mean degree about p (n - 1)."""
    import networkx as nx

    m = int(round(p * (n - 1) / 2))
    if m < 1 or n < 2:
        return np.zeros((0, 2), np.int32)
    m = min(m, n - 1)
    g = nx.barabasi_albert_graph(n, m, seed=int(rng.integers(2 ** 31)))
    edges = np.sort(np.asarray(g.edges(), np.int64).reshape(-1, 2), axis=1)
    return np.unique(edges, axis=0).astype(np.int32)


def friend_graph(n: int, p: float, model: str, rng: np.random.Generator) -> np.ndarray:
    """A synthetic friend graph on n users by ``model`` (one of GRAPHS)."""
    if model not in GRAPHS:
        raise unknown("graph model", model, GRAPHS)
    return (erdos_renyi if model == "erdos-renyi" else barabasi_albert)(n, p, rng)
