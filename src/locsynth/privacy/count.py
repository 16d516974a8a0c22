"""A differentially private count of the training units: the default size of a DP method's output.

A synthetic set as large as its training set publishes the training set's size, and under
add/remove-one neighbours that size is exactly what differs (issue #21; DESIGN.md, privacy
accounting). A DP method instead draws its default size from this count: adding or removing one
unit (a user, a trip) moves the count by 1, so the count plus discrete Laplace noise of scale
1 / epsilon is epsilon-DP (Ghosh, Roughgarden and Sundararajan, STOC 2009; OpenDP's sampler,
privacy/laplace.py). Clamping to 1 .. :data:`MAX_COUNT`, a public bound (the most traces a set
holds), is post-processing: the count stays epsilon-DP.

Its epsilon is public, and so is its noise's scale 1 / epsilon: :func:`check_count_scale` refuses,
before anything is spent, a count whose noise is beyond :data:`MAX_COUNT_SCALE` (at the default
``size_share`` 0.05, an epsilon below 2e-4), which says nothing of the set's size and once sized a
synthetic set of 34,786,780 users from 448 (issue 53).
"""

from __future__ import annotations

from ..core.errors import InputError
from .laplace import discrete_laplace
from .ledger import Ledger
from ..core.validation import check_epsilon


#: the largest count released: a set's trace and user numbers are int32 (data/traces.py)
MAX_COUNT = 2 ** 31 - 1
#: the largest noise scale (1 / epsilon) of a count: beyond, its noise outweighs any training set
#: that fits in memory, and the synthetic set it sizes may not
MAX_COUNT_SCALE = 100_000


def check_count_scale(epsilon: float, what: str) -> float:
    """``epsilon`` when a count at it has noise of scale 1 / epsilon <= :data:`MAX_COUNT_SCALE`,
    else an InputError saying so (``what``: how the caller's parameters made this epsilon). The
    check reads only epsilon, which is public: it spends nothing."""
    eps = check_epsilon(epsilon, "the size count's epsilon")
    if 1.0 / eps > MAX_COUNT_SCALE:
        raise InputError(f"the DP count of the training set's size would get epsilon {eps:.3g} ({what}): its noise, "
                         f"of scale {1 / eps:.3g}, is beyond {MAX_COUNT_SCALE:,} and says nothing of the size; raise "
                         "`epsilon` or `size_share`, or give `size_share` 0 and the number to sample (n)")
    return eps


def noisy_count(count: int, epsilon: float, *, ledger: Ledger | None = None, unit: str = "user") -> int:
    """count + DLap(1 / epsilon) clamped to 1 .. :data:`MAX_COUNT`, recorded in ``ledger`` as a spend
    on ``unit``."""
    eps = check_epsilon(epsilon, "the size count's epsilon")
    noisy = discrete_laplace([int(count)], eps, 1, ledger=ledger, unit=unit,
                             saw=f"the number of training {unit}s (the default size of the synthetic set)",
                             assumptions=f"one {unit} moves the count by 1")
    return int(min(max(1, int(noisy[0])), MAX_COUNT))
