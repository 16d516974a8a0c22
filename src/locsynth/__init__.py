"""locsynth: synthesize privacy-preserving location traces and measure their utility and privacy.

This is the package's face: the data model's classes, the ways in from a DataFrame
(``locsynth.from_frame``, ``locsynth.trips_from_frame``; ``locsynth.trips_from_files`` for files of
fixes larger than memory), ``locsynth.evaluate`` and every
registered method's class
(``locsynth.TraceSet``, ``locsynth.PPMTF``, ``locsynth.KRR``, ...) are imported on first use, so
that ``locsynth --help`` and a command that needs little start fast. The methods come from
:mod:`locsynth.synth.registry` by class name, so a method registered there is exported here too.
"""

from .synth import registry
from .core.errors import InputError, SmallDataWarning
from .core.version import __version__

#: the data model's classes, the ways in from a DataFrame and evaluate, by the modules they live in
#: (full names, which the layer test reads)
_DATA_MODEL = {"Grid": "locsynth.data.space", "POISpace": "locsynth.data.space", "Space": "locsynth.data.space",
               "TimeAxis": "locsynth.data.timeaxis", "TraceSet": "locsynth.data.traces",
               "from_frame": "locsynth.data.frames", "trips_from_frame": "locsynth.data.frames",
               "trips_from_files": "locsynth.data.prepare_partitions", "evaluate": "locsynth.evaluation.evaluate"}


def __getattr__(name: str):
    if name in _DATA_MODEL:
        import importlib

        return getattr(importlib.import_module(_DATA_MODEL[name]), name)
    method = registry.by_class(name)
    if method is not None:
        return registry.get(method.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = sorted(["InputError", "SmallDataWarning", "__version__", *_DATA_MODEL, *registry.class_names()])
