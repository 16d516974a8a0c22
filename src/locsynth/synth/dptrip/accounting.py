"""The privacy of DPTrip: two DP-SGD runs (the initializer and the next-hop model, paper 004
§8.3.3) composed into one (epsilon, delta) by the Rényi DP accountant (Mironov 2017; the authors'
"moments accountant, orders 1-32, each model tracked on its own and composed at the end",
REFERENCE.md), with the orders and the conversion of Opacus' RDP accountant.

A run is the subsampled Gaussian mechanism repeated ``steps`` times at ``sample_rate``; RDP
adds up over steps and over runs, order by order, and the sum converts to (epsilon, delta) once
(Opacus ``accountants/analysis/rdp.py``). Paper 004 protects trips: one trip is one record of
both runs (training.py says why for the next-hop model), so the composition is per trip.

The budget is split between the runs by ``shares``: the runs' noise multipliers keep the ratio
of those that would spend ``share * epsilon`` each alone, scaled down together until their
composition spends the target (:func:`noise_multipliers`); composition is tighter than adding
the epsilons, so each run alone then spends somewhat more than its share.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from opacus.accountants import RDPAccountant
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
from opacus.accountants.utils import get_noise_multiplier

#: Opacus' RDPAccountant.DEFAULT_ALPHAS
ORDERS = RDPAccountant.DEFAULT_ALPHAS


@dataclass(frozen=True)
class Run:
    """One DP-SGD run: noise multiplier sigma, sampling rate q and number of steps."""

    noise_multiplier: float
    sample_rate: float
    steps: int


def composed_epsilon(runs: list[Run], delta: float) -> float:
    """Epsilon of all ``runs`` together at ``delta`` (RDP composition, then conversion)."""
    rdp = np.zeros(len(ORDERS))
    for run in runs:
        rdp += np.asarray(compute_rdp(q=run.sample_rate, noise_multiplier=run.noise_multiplier,
                                      steps=run.steps, orders=ORDERS))
    with warnings.catch_warnings():               # "optimal order is the largest alpha", while bisecting
        warnings.simplefilter("ignore", UserWarning)
        epsilon, _ = get_privacy_spent(orders=ORDERS, rdp=rdp, delta=delta)
    return float(epsilon)


def opacus_epsilon(accountants: list[RDPAccountant], delta: float) -> float:
    """The same figure from the accountants Opacus kept during training (their step histories
    merged): the check of :func:`composed_epsilon` against what actually ran."""
    merged = RDPAccountant()
    merged.history = [entry for a in accountants for entry in a.history]
    return float(merged.get_epsilon(delta=delta))


def noise_multipliers(epsilon: float, delta: float, sample_rates: list[float], steps: list[int],
                      shares: list[float], rtol: float = 1e-3) -> list[float]:
    """Noise multipliers, one per run, whose composition gives ``epsilon`` within ``rtol`` from below.

    Run i first gets the noise sigma_i that would spend ``shares[i] * epsilon`` alone (Opacus'
    ``get_noise_multiplier``); composition spends less than the sum, so all sigma_i are then
    scaled by one factor c <= 1, found by bisection, until the composition spends ``epsilon``.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        base = [get_noise_multiplier(target_epsilon=share * epsilon, target_delta=delta, sample_rate=q, steps=s,
                                     epsilon_tolerance=share * epsilon * rtol / 4)
                for share, q, s in zip(shares, sample_rates, steps)]

    def spent(c):
        return composed_epsilon([Run(c * b, q, s) for b, q, s in zip(base, sample_rates, steps)], delta)

    low, high = 0.0, 1.0                      # spent(high) <= epsilon; spent(low) is infinite
    at_high = spent(high)
    while at_high < epsilon * (1 - rtol):
        mid = (low + high) / 2
        at_mid = spent(mid)
        if at_mid <= epsilon:
            high, at_high = mid, at_mid
        else:
            low = mid
    return [high * b for b in base]
