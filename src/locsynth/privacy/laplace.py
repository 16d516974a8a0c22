"""The Laplace mechanism on vectors of counts, continuous and discrete (Dwork et al., TCC 2006;
the discrete one is Ghosh et al.'s geometric mechanism, STOC 2009).

Sensitivity. The caller states the L1 sensitivity Delta of the whole array: the largest
sum over entries of |f(D) - f(D')| for neighbouring inputs D, D' (one user's data added or
removed, or whatever the spend's unit says). Adding Laplace(Delta / epsilon) to every entry is
then epsilon-DP (Dwork and Roth, Theorem 3.6): the densities of one output under D and D'
differ by at most exp(sum_i |f(D)_i - f(D')_i| / scale) <= exp(epsilon). Where the sensitivity
comes from (trimming, one count per user ...) is the caller's to argue, next to its call.

Noise. OpenDP's measurements (see _opendp.py). A float array is rounded to the 2^K grid first,
which can move two neighbouring inputs apart by n 2^K more; the scale below counts that, so
OpenDP's own privacy map of the measurement, recorded in the ledger, stays within epsilon.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from . import _opendp
from .ledger import Ledger
from ..core.validation import check_epsilon, check_sensitivity


def laplace(values, epsilon: float, sensitivity: float, *, ledger: Ledger | None = None, unit: str = "user",
            saw: str = "", assumptions: str = "", relation: str = "add-remove") -> np.ndarray:
    """``values`` plus Laplace noise of scale (sensitivity + n 2^K) / epsilon on each entry.

    Parameters
    ----------
    values : array_like of float, any shape
        The true answers, e.g. a matrix of counts.
    epsilon : float
        The privacy budget of this release.
    sensitivity : float
        L1 sensitivity of the whole array between neighbouring inputs.
    ledger : Ledger, optional
        Where to record the spend, with ``unit``, ``saw`` and ``assumptions`` (see ledger.Spend).

    Returns
    -------
    ndarray of float64, the shape of ``values``
    """
    eps, delta_1 = check_epsilon(epsilon), check_sensitivity(sensitivity)
    x = np.asarray(values, dtype=np.float64)
    if not np.isfinite(x).all():
        raise InputError("the Laplace mechanism needs finite values")
    n = max(x.size, 1)
    meas = _opendp.float_laplace(n, (delta_1 + n * 2.0 ** _opendp.K) / eps)
    spent = meas.map(delta_1)
    out = np.asarray(meas(x.ravel()), dtype=np.float64).reshape(x.shape) if x.size else x.copy()
    if ledger is not None:
        ledger.record("laplace", spent, 0.0, delta_1, unit, saw, assumptions, relation=relation)
    return out


def discrete_laplace(counts, epsilon: float, sensitivity: int, *, ledger: Ledger | None = None,
                     unit: str = "user", saw: str = "", assumptions: str = "") -> np.ndarray:
    """Integer ``counts`` plus discrete Laplace (two-sided geometric) noise of scale
    sensitivity / epsilon: P(z) proportional to exp(-epsilon |z| / sensitivity).

    ``sensitivity`` is the L1 sensitivity of the whole array, a whole number; returns int64 of
    the shape of ``counts``.
    """
    eps, delta_1 = check_epsilon(epsilon), check_sensitivity(sensitivity)
    if delta_1 != int(delta_1):
        raise InputError(f"discrete Laplace needs a whole-number sensitivity, got {sensitivity!r}")
    x = np.asarray(counts)
    if x.dtype.kind == "f":
        if not (np.isfinite(x).all() and (x == np.round(x)).all()):
            raise InputError("discrete Laplace needs whole-number counts")
    elif x.dtype.kind not in "iub":
        raise InputError(f"discrete Laplace needs integer counts, got {x.dtype}")
    x = x.astype(np.int64)
    meas = _opendp.integer_laplace(delta_1 / eps)
    spent = meas.map(int(delta_1))
    out = np.asarray(meas(x.ravel().tolist()), dtype=np.int64).reshape(x.shape) if x.size else x.copy()
    if ledger is not None:
        ledger.record("discrete-laplace", spent, 0.0, delta_1, unit, saw, assumptions)
    return out
