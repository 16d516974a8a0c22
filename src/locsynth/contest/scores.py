"""The contest's scores (paper 003 §3.4), all in [0, 1] and higher is better.

* Utility s_U = mean over the original events of g_U(alpha), g_U(a) = 1 - a / lambda_U below
  lambda_U and 0 above (lambda_U = 2 km); alpha is the distance between the original region's
  centre and the released one. A deleted event scores 0. A generalized event scores the mean of
  g_U over its regions: the organisers' scoring script averages the scores, while the paper's
  text averages the distances before g_U; they differ only when some region of the set is
  farther than lambda_U, and the issue and the kit agree on the mean of scores.
* Re-identification privacy s_R = 1 - the share of pseudonyms whose inferred user is right.
* Trace-inference privacy s_T (eq. 2) = sum_ij w_ij g_T(beta_ij) / sum_ij w_ij with
  g_T(b) = b / lambda_T below lambda_T and 1 above (lambda_T = 2 km) and w_ij = 10 where the
  original region is a hospital, 1 elsewhere.

Distances are between region centres, by the space's metric (haversine: 347 m x 343 m cells on
the Osaka grid; the paper quotes 347 m x 341 m).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..data.space import Space
from ..data.traces import DELETED, TraceSet, ranges, generalized_code
from .files import hospitals

LAMBDA_U = 2000.0
LAMBDA_T = 2000.0
S_REQ = 0.7
HOSPITAL_WEIGHT = 10.0


def distance_matrix(space: Space) -> np.ndarray:
    """Metres between the centres of every pair of locations (n_locations x n_locations)."""
    idx = np.arange(space.n_locations)
    return np.asarray(space.distance_m(idx[:, None], idx[None, :]), np.float64)


def g_u(alpha: np.ndarray, lam: float = LAMBDA_U) -> np.ndarray:
    """Utility of an event at distance ``alpha`` (m) from the truth (paper 003, Figure 7 left)."""
    return np.clip(1.0 - np.asarray(alpha, np.float64) / lam, 0.0, 1.0)


def g_t(beta: np.ndarray, lam: float = LAMBDA_T) -> np.ndarray:
    """Privacy of an inferred event at distance ``beta`` (m) from the truth (Figure 7 right)."""
    return np.clip(np.asarray(beta, np.float64) / lam, 0.0, 1.0)


def align(original: TraceSet, other: TraceSet, what: str) -> np.ndarray:
    """For every event of ``original``, the index of ``other``'s event of the same user id and
    instant; an InputError names the first one missing."""
    key_o = pd.MultiIndex.from_arrays([original.users["user_id"].to_numpy()[original.user], original.t])
    key_x = pd.MultiIndex.from_arrays([other.users["user_id"].to_numpy()[other.user], other.t])
    if key_x.has_duplicates:
        raise InputError(f"the {what} has two events of one user at one instant")
    index = key_x.get_indexer(key_o)
    missing = index < 0
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise InputError(f"the {what} lacks {int(missing.sum())} of the original's {original.n_events} events "
                         f"(first: user {key_o[i][0]} at instant {key_o[i][1]})")
    return index


def event_utility(original: TraceSet, anonymized: TraceSet, *, lam: float = LAMBDA_U,
                  distances: np.ndarray | None = None) -> np.ndarray:
    """g_U of every original event against its anonymized counterpart (same user id and instant)."""
    original.require_exact("the utility score (the original traces)")
    d = distance_matrix(original.space) if distances is None else distances
    return event_values(original, anonymized, g_u(d, lam), "anonymized traces")


def event_values(original: TraceSet, released: TraceSet, values: np.ndarray, what: str) -> np.ndarray:
    """``values[truth, region]`` (locations x locations) of every event of ``original`` against its
    counterpart in ``released`` (same user id and instant): a generalized event scores the mean
    over its regions, a deleted one 0."""
    out_loc = released.loc[align(original, released, what)].astype(np.int64)
    truth = original.loc.astype(np.int64)
    score = np.zeros(truth.size)
    exact = out_loc >= 0
    score[exact] = values[truth[exact], out_loc[exact]]
    gen = out_loc < DELETED
    if gen.any():
        sets = released.locsets
        k = generalized_code(out_loc[gen])
        size = sets.sizes[k]
        rows = np.repeat(np.arange(k.size), size)
        members = sets.members[ranges(sets.offsets[k], size.astype(np.int64))]
        per = values[np.repeat(truth[gen], size), members]
        score[np.flatnonzero(gen)] = np.bincount(rows, per, minlength=k.size) / size
    return score


def utility(original: TraceSet, anonymized: TraceSet, **kwargs) -> float:
    """s_U (paper 003 §3.4)."""
    return float(event_utility(original, anonymized, **kwargs).mean())


def reidentification(secret: pd.DataFrame, inferred: pd.DataFrame) -> float:
    """s_R = 1 - re-identification rate, from the ``pse_id,user_id`` tables (paper 003 §3.4)."""
    truth = secret.set_index("pse_id")["user_id"]
    guess = inferred.drop_duplicates("pse_id").set_index("pse_id")["user_id"].reindex(truth.index)
    return float(1.0 - (guess.to_numpy() == truth.to_numpy()).mean())


def trace_inference(original: TraceSet, inferred: TraceSet, *, lam: float = LAMBDA_T,
                    hospital_weight: float = HOSPITAL_WEIGHT, distances: np.ndarray | None = None) -> float:
    """s_T (paper 003 eq. 2): weighted mean of g_T over the original events, hospitals weighted."""
    original.require_exact("the trace-inference score (the original traces)")
    inferred.require_exact("the trace-inference score (the inferred traces)")
    d = distance_matrix(original.space) if distances is None else distances
    guess = inferred.loc[align(original, inferred, "inferred traces")]
    w = np.where(hospitals(original.space)[original.loc], hospital_weight, 1.0)
    return float(np.sum(w * g_t(d[original.loc, guess], lam)) / w.sum())

