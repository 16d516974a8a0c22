"""k-ary randomized response (Warner 1965; Kairouz, Bonawitz and Ramage, ICML 2016).

Each value in 0 .. k-1 is kept with probability p = e^epsilon / (e^epsilon + k - 1) and otherwise
replaced by one of the other k - 1 values, uniformly. For any two inputs a, b and output o,
P(o | a) / P(o | b) <= p / ((1 - p) / (k - 1)) = e^epsilon: epsilon-DP for one value (local DP:
the unit is one event; a user's m events compose to m epsilon). No sensitivity enters.

Noise: OpenDP's ``make_randomized_response``, one call per value (about 60 microseconds each);
the epsilon recorded is OpenDP's privacy map of the measurement.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import InputError
from . import _opendp
from .ledger import Ledger
from ..core.validation import check_epsilon


def keep_probability(k: int, epsilon: float) -> float:
    """p = e^epsilon / (e^epsilon + k - 1), computed without overflow."""
    return 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))


def randomized_response(values, k: int, epsilon: float, *, ledger: Ledger | None = None, unit: str = "event",
                        saw: str = "") -> np.ndarray:
    """Each of ``values`` (integers in 0 .. k-1, any shape) through k-RR; int64 of the same shape."""
    eps = check_epsilon(epsilon)
    if int(k) != k or k < 2:
        raise InputError(f"randomized response needs k >= 2 categories, got {k!r}")
    k = int(k)
    x = np.asarray(values)
    if x.dtype.kind not in "iu":
        raise InputError(f"randomized response needs integer values, got {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= k):
        raise InputError(f"randomized response values must be in 0..{k - 1}, got {int(x.min())}..{int(x.max())}")
    meas = _opendp.randomized_response(k, keep_probability(k, eps))
    spent = meas.map(1)
    out = np.fromiter((meas(int(v)) for v in x.ravel()), dtype=np.int64, count=x.size).reshape(x.shape)
    if ledger is not None:
        ledger.record("randomized-response", spent, 0.0, None, unit, saw or f"values in {k} categories",
                      assumptions=f"each {unit} perturbed on its own; which {unit}s there are is public",
                      relation="replace")
    return out


def flip_probability(k: int, epsilon: float) -> float:
    """q = (1 - p) / (k - 1), the probability of reporting one given other value."""
    return (1.0 - keep_probability(k, epsilon)) / (k - 1)


def estimate(counts, reports: int, k: int, epsilon: float) -> np.ndarray:
    """Unbiased counts from how many of ``reports`` k-RR reports name each value: (C_v - n q) / (p - q)
    (Wang, Blocki, Li and Jha, USENIX Security 2017, §4.1, direct encoding); negative where noise
    outweighs the value (post-processing is the caller's)."""
    p, q = keep_probability(k, epsilon), flip_probability(k, epsilon)
    return (np.asarray(counts, np.float64) - int(reports) * q) / (p - q)


def noise_sd(reports: int, k: int, epsilon: float) -> float:
    """The standard deviation of :func:`estimate` for a value no report holds: sqrt(n q (1 - q)) / (p - q)."""
    p, q = keep_probability(k, epsilon), flip_probability(k, epsilon)
    return float(math.sqrt(int(reports) * q * (1 - q)) / (p - q))


def beats_unary(k: int, epsilon: float) -> bool:
    """Whether k-RR estimates a value's count with less variance than optimized unary encoding: for
    fewer than 3 e^epsilon + 2 values (Wang et al. 2017, §5: direct encoding's variance
    (e^epsilon + k - 2) / (e^epsilon - 1)^2 a report against OUE's 4 e^epsilon / (e^epsilon - 1)^2)."""
    return int(k) < 3 * math.exp(epsilon) + 2
