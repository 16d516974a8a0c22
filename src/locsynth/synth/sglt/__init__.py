"""SGLT: plausible fake traces from seeds (Bindschaedler and Shokri, IEEE S&P 2016).

``mobility.py`` (day traces, missing events, profiles, aggregate model) -> ``similarity.py``
(geographic and semantic similarity, the location graph) -> ``clustering.py`` (semantic
classes) -> ``generate.py`` (semantic seeds, randomized Viterbi, privacy tests); ``model.py`` is
the estimator around them and ``lbs/scenario.py`` the location-based-service scenario of §VII.
"""

from .model import SGLT

__all__ = ["SGLT"]
