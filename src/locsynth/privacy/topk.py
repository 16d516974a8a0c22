"""Differentially private top-k selection: which k of many candidates score highest, under DP.

Scores here are counts in which one unit (a user) adds at most 1 to each candidate and never
subtracts: two neighbouring inputs (one user added or removed) give score vectors that differ by
at most 1 in every entry, all in the same direction (monotonic L-infinity sensitivity 1).
OpenDP's ``make_noisy_top_k`` under pure DP (``max_divergence``) picks the k candidates one after
the other by report-noisy-max with *exponential* noise of scale k / epsilon, which is the
permute-and-flip mechanism (McKenna and Sheldon, NeurIPS 2020; Ding, Kifer, Saghaian, Steinke,
Wang, Xiao and Zhang, "The permute-and-flip mechanism is identical to report-noisy-max with
exponential noise", 2021), each round (epsilon / k)-DP for monotonic scores, so the whole
selection is epsilon-DP by composition. (Gumbel noise, the one-shot form of k rounds of the
exponential mechanism of Durfee and Rogers, NeurIPS 2019, is what OpenDP draws under zCDP
instead; it is not used here. Measured: with scores 0 and 1 at scale 1, P(the higher one) is
0.8146 over 20,000 draws, permute-and-flip's 0.816 and not Gumbel's 0.731.) OpenDP draws the
noise and states the map, which is recorded.

The candidates must not depend on the data: a candidate only one user brings would be selectable
with that user and impossible without. Pass the public universe of candidates (scores 0 where
nobody visited); where there is none, the caller must say that the candidate set is not covered.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from . import _opendp
from .ledger import Ledger
from ..core.validation import check_epsilon


def noisy_top_k(scores, k: int, epsilon: float, *, ledger: Ledger | None = None, unit: str = "user",
                saw: str = "", assumptions: str = "") -> np.ndarray:
    """Indices of ``k`` of the int ``scores``, chosen by the noisy top-k (module docstring), best first."""
    eps = check_epsilon(epsilon)
    x = np.asarray(scores)
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise InputError("noisy top-k needs a vector of integer scores")
    if int(k) != k or not 1 <= k <= x.size:
        raise InputError(f"noisy top-k selects 1 to {x.size} candidates, got k = {k!r}")
    meas = _opendp.noisy_top_k(int(k), int(k) / eps)
    spent = meas.map(1)
    chosen = np.asarray(meas(x.astype(np.int64).tolist()), dtype=np.int64)
    if ledger is not None:
        ledger.record("noisy-top-k", spent, 0.0, 1.0, unit, saw,
                      assumptions or f"one {unit} adds at most 1 to each score (monotonic)")
    return chosen
