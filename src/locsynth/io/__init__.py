"""Readers: one per source format, each returning a validated points table (see :mod:`locsynth.points`).

``read_points(format, path, ...)`` dispatches on the format name; ``FORMATS`` lists them.
``PRESETS`` holds a format's own discretization (PF comes with its grid and time axis).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError
from .pf import PF_PRESET, read_pf, read_pf_synthetic

#: format name -> reader(path, timezone=None, **options) -> points table;
#: ``timezone`` is the zone of naive timestamps in the input
READERS = {
    "pf": read_pf,
}
#: formats read straight into a TraceSet on another set's space and time axis (need ``like``)
TRACE_READERS = {"pf-synthetic": read_pf_synthetic}
PRESETS = {"pf": PF_PRESET}


def formats() -> list[str]:
    return sorted([*READERS, *TRACE_READERS])


def read_points(format: str, path: str | Path, **options) -> pd.DataFrame:
    """Read ``path`` in ``format``; ``options`` are the reader's keyword arguments."""
    if format not in READERS:
        raise InputError(f"unknown format {format!r}; expected one of {', '.join(formats())}")
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    return READERS[format](path, **options)


__all__ = ["PRESETS", "READERS", "TRACE_READERS", "formats", "read_points", "read_pf", "read_pf_synthetic"]
