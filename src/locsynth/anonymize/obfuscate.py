"""Per-event obfuscations with a local DP guarantee: k-ary randomized response and planar
Laplace (the PWS Cup's sample anonymizers, paper 003 §4.1 and Appendix E; mechanisms in
locsynth.privacy). Every event is perturbed on its own, so the guarantee is per event; a user
with m events has m epsilon by basic composition, which the ledger's unit says. Neighbouring
inputs differ in one event's location (replace-one): the users, their numbers of events and the
times are released as they are, so they are public under this guarantee, and the release may
state them exactly."""

from __future__ import annotations

import numpy as np

from ..privacy.ledger import Ledger
from ..core.validation import check_epsilon
from ..privacy.planar_laplace import planar_laplace_locations
from ..privacy.randomized_response import randomized_response
from ..synth.base import Anonymizer, Tags
from ..data.traces import TraceSet


class KRR(Anonymizer):
    """k-RR over every location of the space (k = the number of locations; the PWS Cup's k-RR
    uses all 1024 regions, epsilon = 0.1): each event keeps its location with probability
    e^eps / (e^eps + k - 1), else moves to one of the others uniformly.

    Parameters
    ----------
    epsilon : float
        Privacy budget per event (local DP; the PWS Cup's sample: 0.1).
    """

    name = "krr"
    checks = {"epsilon": check_epsilon}
    tags = Tags(dp=True)

    def __init__(self, epsilon: float = 1.0):
        self.epsilon = epsilon

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        """The events through k-RR (``seed`` unused: all randomness is DP noise)."""
        self._check(traces, seed)
        eps = check_epsilon(self.epsilon)
        ledger = Ledger()
        loc = randomized_response(traces.loc, traces.space.n_locations, eps, ledger=ledger,
                                  saw="the location of every event")
        return self._anonymized(traces, loc, ledger)


class PlanarLaplace(Anonymizer):
    """Planar Laplace with l = epsilon r: two places r km apart are l-indistinguishable (the PWS
    Cup's sample: l = 0.1, r = 1 km, i.e. 0.1 per km); each event's location is moved from its
    point (a cell's centre) and snapped back to the space.

    Parameters
    ----------
    l : float
        epsilon over the distance ``r`` (geo-indistinguishability's l; the PWS Cup's sample: 0.1).
    r : float
        The distance in km at which two places are l-indistinguishable (the sample: 1 km).
    """

    name = "planar-laplace"
    checks = {"l": check_epsilon, "r": check_epsilon}
    tags = Tags(dp=True)

    def __init__(self, l: float = 0.1, r: float = 1.0):  # noqa: E741 (the contest's name)
        self.l = l
        self.r = r

    def transform(self, traces: TraceSet, *, seed: int = 0) -> TraceSet:
        """The events through planar Laplace (``seed`` unused: all randomness is DP noise)."""
        self._check(traces, seed)
        l, r = check_epsilon(self.l, "l"), check_epsilon(self.r, "r")
        ledger = Ledger()
        loc = planar_laplace_locations(traces.loc, traces.space, l / (1000.0 * r), radius=1000.0 * r,
                                       ledger=ledger, saw="the location of every event")
        return self._anonymized(traces, np.asarray(loc, np.int32), ledger)
