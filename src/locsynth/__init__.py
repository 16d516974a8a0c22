"""locsynth: synthesize privacy-preserving location traces and measure their utility and privacy.

The data model and the spaces are imported on first use, so that ``locsynth --help`` and a
command that needs little start fast.
"""

from .errors import InputError

__version__ = "0.2.0"
_LAZY = {"Grid": "space", "POISpace": "space", "Space": "space", "TimeAxis": "timeaxis", "TraceSet": "traces"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Grid", "InputError", "POISpace", "Space", "TimeAxis", "TraceSet", "__version__"]
