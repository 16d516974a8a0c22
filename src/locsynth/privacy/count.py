"""A differentially private count of the training units: the default size of a DP method's output.

A synthetic set as large as its training set publishes the training set's size, and under
add/remove-one neighbours that size is exactly what differs (issue #21; DESIGN.md, privacy
accounting). A DP method instead draws its default size from this count: adding or removing one
unit (a user, a trip) moves the count by 1, so the count plus discrete Laplace noise of scale
1 / epsilon is epsilon-DP (Ghosh, Roughgarden and Sundararajan, STOC 2009; OpenDP's sampler,
privacy/laplace.py). Clamping to at least 1 is post-processing.
"""

from __future__ import annotations

from .laplace import discrete_laplace
from .ledger import Ledger
from ..core.validation import check_epsilon


def noisy_count(count: int, epsilon: float, *, ledger: Ledger | None = None, unit: str = "user") -> int:
    """max(1, count + DLap(1 / epsilon)), recorded in ``ledger`` as a spend on ``unit``."""
    eps = check_epsilon(epsilon, "the size count's epsilon")
    noisy = discrete_laplace([int(count)], eps, 1, ledger=ledger, unit=unit,
                             saw=f"the number of training {unit}s (the default size of the synthetic set)",
                             assumptions=f"one {unit} moves the count by 1")
    return max(1, int(noisy[0]))
