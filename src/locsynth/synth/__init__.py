"""Synthesizers: one module (or package) per method, all following the protocol of base.py.

Every registered method's class is exported here by its class name (``locsynth.synth.SGLT``,
``locsynth.synth.KRR``), built from :mod:`locsynth.registry` and imported on first use, so
importing this package does not compile or load any method's kernels.
"""

from .. import registry
from .base import Anonymizer, NotFittedError, Synthesizer, Tags, load_model


def __getattr__(name: str):
    method = registry.by_class(name)
    if method is not None:
        return registry.get(method.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = sorted(["Anonymizer", "NotFittedError", "Synthesizer", "Tags", "load_model", *registry.class_names()])
