"""DP trip synthesis (paper 004): a DP-SGD trip initializer, a DP-SGD next-hop model and
shortest-path generation; the estimator is :class:`DPTrip` (model.py)."""

from .model import DPTrip

__all__ = ["DPTrip"]
