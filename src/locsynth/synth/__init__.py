"""Synthesizers: one module (or package) per method, all following the protocol of base.py.

The method classes are imported on first use (see locsynth.registry), so importing this package
does not compile or load any method's kernels.
"""

from .base import Anonymizer, NotFittedError, Synthesizer, Tags, load_model

_LAZY = {"PPMTF": "ppmtf", "PPMTFPlus": "ppmtf-plus", "SGD": "sgd", "Training": "training", "Uniform": "uniform"}


def __getattr__(name: str):
    if name in _LAZY:
        from .. import registry

        return registry.get(_LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Anonymizer", "NotFittedError", "PPMTF", "PPMTFPlus", "SGD", "Synthesizer", "Tags", "Training", "Uniform",
           "load_model"]
