"""PrivTrace (Wang et al., USENIX Security 2023): adaptive two-level grid, first- and second-order
DP Markov counts, random walks (model.py)."""

from .model import PrivTrace

__all__ = ["PrivTrace"]
