"""Empirical lower bounds on epsilon from an attack's error rates (Jagielski et al., NeurIPS 2020).

An (epsilon, 0)-DP mechanism bounds every test's rates: TPR <= e^eps FPR and
1 - FPR <= e^eps (1 - TPR). With Clopper-Pearson bounds on the rates, eps is at least
log(TPR_low / FPR_high) and log(TNR_low / FNR_high), at the given confidence.
"""

from __future__ import annotations

import numpy as np


def clopper_pearson(successes: np.ndarray, trials: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper-Pearson interval (low, high) of a binomial proportion: quantiles of
    Beta(k, n - k + 1) and Beta(k + 1, n - k), by the inverse regularized incomplete beta
    function (``scipy.stats.beta.ppf`` computes the same; importing scipy.stats takes 0.6 s)."""
    from scipy.special import betaincinv

    k, n = np.asarray(successes, np.float64), np.asarray(trials, np.float64)
    a = (1 - confidence) / 2
    low = np.where(k > 0, betaincinv(np.maximum(k, 1e-300), n - k + 1, a), 0.0)
    high = np.where(k < n, betaincinv(k + 1, np.maximum(n - k, 1e-300), 1 - a), 1.0)
    return low, high


def epsilon_lower_bound(tp, fn, fp, tn, confidence: float = 0.95) -> float:
    """Largest epsilon lower bound over the given operating points (arrays of counts); 0 if none."""
    tp, fn, fp, tn = (np.asarray(v, np.float64) for v in (tp, fn, fp, tn))
    tpr_low, _ = clopper_pearson(tp, tp + fn, confidence)
    _, fpr_high = clopper_pearson(fp, fp + tn, confidence)
    tnr_low, _ = clopper_pearson(tn, fp + tn, confidence)
    _, fnr_high = clopper_pearson(fn, tp + fn, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.concatenate([np.log(tpr_low / fpr_high), np.log(tnr_low / fnr_high)])
    bounds = bounds[np.isfinite(bounds)]
    return float(max(bounds.max(), 0.0)) if bounds.size else 0.0
