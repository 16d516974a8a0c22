"""Utility metrics, grouped by what they measure (paper 001 §4.3; paper 002 §VIII.C; paper 003 §5.5).

The names below load their module on first use (PEP 562), so that a model importing one metric
(PPMTF's tensors use ``transition_matrix``) does not load scipy.sparse and scikit-learn with the rest.
"""

from importlib import import_module

#: each name and the module it lives in (full names, which the layer test reads as imports)
_HOMES = {"cluster_population_tv": "locsynth.metrics.clusters", "clusters_from_factors": "locsynth.metrics.clusters",
          "population_by_slot": "locsynth.metrics.population", "tp_tv": "locsynth.metrics.population",
          "sglt_features": "locsynth.metrics.sglt", "tm_emd": "locsynth.metrics.transitions",
          "tm_swd": "locsynth.metrics.transitions", "transition_matrix": "locsynth.metrics.transitions",
          "visit_fraction_counts": "locsynth.metrics.visits", "vf_tv": "locsynth.metrics.visits"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)


def __dir__() -> list[str]:
    return __all__
