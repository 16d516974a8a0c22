"""locsynth: synthesize privacy-preserving location traces and measure their utility and privacy."""

from .errors import InputError
from .space import Grid, POISpace, Space
from .timeaxis import TimeAxis
from .traces import TraceSet

__version__ = "0.1.0"
__all__ = ["Grid", "InputError", "POISpace", "Space", "TimeAxis", "TraceSet", "__version__"]
