"""Utility metrics, grouped by what they measure (paper 001 §4.3; paper 002 §VIII.C; paper 003 §5.5)."""

from .population import population_by_slot, tp_tv
from .transitions import tm_emd, tm_swd, transition_matrix
from .visits import visit_fraction_counts, vf_tv

__all__ = ["population_by_slot", "tm_emd", "tm_swd", "tp_tv", "transition_matrix", "visit_fraction_counts", "vf_tv"]
