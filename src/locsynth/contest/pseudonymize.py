"""Pseudonymization by the organiser (paper 003 §3.4, Contest Flow): the m traces are shuffled at
random and numbered in the new order; the ID table (pseudonym -> user id) stays secret.

Pseudonyms are ``first, first + 1, ...``; the default ``first = m + 1`` gives the paper's 2001..4000
for 2000 users (Figure 6), so that no pseudonym can be read as a user id. The shuffle is seeded.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..data.traces import TraceSet


def pseudonymize(traces: TraceSet, *, seed: int = 0, first: int | None = None) -> tuple[TraceSet, pd.DataFrame]:
    """(the traces shuffled, with user ids replaced by pseudonyms; the ``pse_id,user_id`` table)."""
    if traces.n_traces == 0:
        raise InputError("no traces to pseudonymize")
    if traces.users["user_id"].duplicated().any():
        raise InputError("pseudonymization needs one trace per user id")
    m = traces.n_traces
    first = m + 1 if first is None else int(first)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(41,)))
    order = rng.permutation(m)               # pseudonym k is given to row order[k]
    shuffled = traces.select_users(order)
    pse = np.arange(first, first + m)
    table = pd.DataFrame({"pse_id": pse, "user_id": traces.users["user_id"].to_numpy()[order]})
    users = pd.DataFrame({"user_id": pse})
    info = {**traces.info, "pseudonymized": True}
    return replace(shuffled, users=users, info=info), table
