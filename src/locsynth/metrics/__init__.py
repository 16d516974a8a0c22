"""Utility metrics, grouped by what they measure (paper 001 §4.3; paper 002 §VIII.C; paper 003 §5.5)."""

from .clusters import cluster_population_tv, clusters_from_factors
from .population import population_by_slot, tp_tv
from .sglt import sglt_features
from .transitions import tm_emd, tm_swd, transition_matrix
from .visits import visit_fraction_counts, vf_tv

__all__ = ["cluster_population_tv", "clusters_from_factors", "population_by_slot", "sglt_features", "tm_emd",
           "tm_swd", "tp_tv", "transition_matrix", "visit_fraction_counts", "vf_tv"]
