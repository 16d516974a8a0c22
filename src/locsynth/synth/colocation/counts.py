"""The DP release Q' of the co-location count matrix Q (paper 000 §4.3, Proposition 2); Q itself is
counted in metrics/colocation.py (:func:`~locsynth.metrics.colocation.colocation_counts`), each
group of friends at one place as its largest set of disjoint pairs, so that removing one user moves
a cell by at most 1.

Trimming and its knock-on effect. The paper stops reading a user's co-locations once c were read
(Fig. 5). Whether an event is a co-location depends on the friends' traces, so under that reading
removing user w changes other users' trimmed counts: every friend v for whom w was the only friend
at some event stops counting it and reads one more later event in its place. With k such friends
Q moves by c + k, and k is not bounded by c (a star of k friends around w at one place does it;
tests/test_colocation_dp.py shows Lap(c / epsilon) failing on it). Here each user's *events* are
read in time order and only the first c count, co-locations or not; this reading depends on the
user's own trace alone. Removing (or adding) user w, with all its events and friendships, then
changes only the at most c cells (instant, location) of w's first c events, each by at most 1
(the matching argument): the L1 sensitivity of Q is c, with no knock-on. The price is co-locations
later in a trace: on Gowalla's folded day (814 users, 827 co-locations) c = 5 keeps 329 of them,
c = 20 keeps 820.

Noise (Proposition 2): Laplace(c / epsilon) on every cell, or Privelet over the location hierarchy
(the space's ``hierarchy()``, privacy/hierarchy.py; root > category > sub-category > POI for
Foursquare) with the same L1 sensitivity c for the whole matrix (privacy/privelet.py), both
through OpenDP's sampler.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError, unknown
from ...metrics.population import normalise_rows
from ...privacy.laplace import laplace
from ...privacy.ledger import Ledger
from ...privacy.privelet import privelet

MECHANISMS = ("privelet", "laplace")


def noisy_counts(counts: np.ndarray, epsilon: float, trim: int, mechanism: str, hierarchy=None, *,
                 ledger: Ledger | None = None, saw: str = "") -> np.ndarray:
    """Q' = Q + noise of L1 sensitivity ``trim`` (module docstring): ``mechanism`` 'laplace'
    (Lap(c / epsilon) per cell) or 'privelet' (over ``hierarchy``)."""
    if mechanism not in MECHANISMS:
        raise unknown("mechanism", mechanism, MECHANISMS)
    assumptions = "each user's first c events read, co-locations counted as maximum matchings per cell"
    if mechanism == "laplace":
        return laplace(counts, epsilon, trim, ledger=ledger, saw=saw, assumptions=assumptions)
    if hierarchy is None:
        raise InputError("Privelet needs a location hierarchy")
    return privelet(counts, hierarchy, epsilon, trim, ledger=ledger, saw=saw, assumptions=assumptions)


def row_distributions(noisy: np.ndarray) -> np.ndarray:
    """R' (§4.4 step 2): each row of Q' shifted by its minimum when that is negative and divided
    by its sum; a row summing to 0 is uniform."""
    Q = np.asarray(noisy, np.float64)
    return normalise_rows(Q - np.minimum(Q.min(axis=1, keepdims=True), 0.0))


def category_matrix(counts: np.ndarray, categories: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels, Q-bar): the columns of ``counts`` summed per category (§5.2)."""
    labels, index = np.unique(np.asarray(categories).astype(str), return_inverse=True)
    out = np.zeros((counts.shape[0], labels.size))
    np.add.at(out.T, index, np.asarray(counts, np.float64).T)
    return labels, out
