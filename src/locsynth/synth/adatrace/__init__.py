"""AdaTrace (Gursoy et al., CCS 2018): density-aware two-level grid, DP Markov mobility model, trip
and route-length distributions, Markov bridges (model.py), and the attack-resilience defences
(defences.py)."""

from .model import AdaTrace

__all__ = ["AdaTrace"]
