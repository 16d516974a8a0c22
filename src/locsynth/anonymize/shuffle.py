"""Obfuscations that do not move single events: none (pseudonymization only) and the cheating
anonymization (Kikuchi et al. 2016; paper 003 §1 and §4.1)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..synth.base import Anonymizer, Tags
from ..data.traces import TraceSet
from ..core.validation import check_probability


class NoObfuscation(Anonymizer):
    """Every event as it is: the contest then only pseudonymizes (paper 003 §4.1, No Obfuscation)."""

    name = "none"
    tags = Tags(baseline=True, domain=True)

    def __init__(self):
        pass

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        self._check(traces, seed)
        return self._anonymized(traces, traces.loc)


class Cheat(Anonymizer):
    """Cheat(p): the first floor(n p) traces swap whole traces by a random permutation (seeded),
    the rest stay. Row i then carries the events of input row ``source[i]``: perfect against
    re-identification, useless against trace inference (paper 003 §4.2, Figure 8).

    Parameters
    ----------
    p : float
        The share of users whose traces are shuffled (paper 003: 1).
    """

    name = "cheat"
    checks = {"p": check_probability}
    tags = Tags(baseline=True, domain=True)

    def __init__(self, p: float = 1.0):
        self.p = p

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        self._check(traces, seed)
        k = int(np.floor(traces.n_traces * float(self.p)))
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(32,)))
        source = np.arange(traces.n_traces)
        source[:k] = rng.permutation(k)
        moved = traces.select_users(source)
        out = self._anonymized(traces, traces.loc, source=source)
        # the rows keep their user ids; the events are those of the source rows
        return replace(out, user=moved.user, t=moved.t, loc=moved.loc)
