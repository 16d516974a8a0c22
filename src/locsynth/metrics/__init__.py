"""Utility metrics, grouped by what they measure (paper 001 §4.3; paper 002 §VIII.C; paper 003 §5.5).

The names below load their module on first use (PEP 562), so that a model importing one metric
(PPMTF's tensors use ``transition_matrix``) does not load scipy.sparse and scikit-learn with the rest.
"""

from importlib import import_module

_HOMES = {"cluster_population_tv": "clusters", "clusters_from_factors": "clusters",
          "population_by_slot": "population", "tp_tv": "population", "sglt_features": "sglt",
          "tm_emd": "transitions", "tm_swd": "transitions", "transition_matrix": "transitions",
          "visit_fraction_counts": "visits", "vf_tv": "visits"}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)


def __dir__() -> list[str]:
    return __all__
