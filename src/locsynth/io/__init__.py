"""Readers: one per source format, each returning a validated points table (see :mod:`locsynth.points`).

``read_points(format, path, ...)`` dispatches on the format name; ``FORMATS`` lists them.
``PRESETS`` holds a format's own discretization (PF comes with its grid and time axis).
Every reader returns a points table; formats read straight into TraceSets (trips, the PPMTF
authors' synthetic files) are prepare's (:data:`locsynth.prepare.SET_FORMATS`).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd

from ..errors import InputError
from .cabs import read_cabs
from .foursquare import read_foursquare, read_foursquare_global, read_foursquare_mat
from .generic import read_csv_points, read_parquet_points
from .geolife import read_geolife
from .gowalla import read_gowalla
from .pf import PF_PRESET, read_pf, read_pf_synthetic_table

#: format name -> reader(path, timezone=None, **options) -> points table;
#: ``timezone`` is the zone of naive timestamps in the input
READERS = {
    "pf": read_pf,
    "foursquare": read_foursquare,
    "foursquare-global": read_foursquare_global,
    "foursquare-mat": read_foursquare_mat,
    "gowalla": read_gowalla,
    "geolife": read_geolife,
    "cabs": read_cabs,
    "csv": read_csv_points,
    "parquet": read_parquet_points,
}
PRESETS = {"pf": PF_PRESET}


def formats() -> list[str]:
    """The formats that read into points tables."""
    return sorted(READERS)


#: formats whose input comes with a list of venues and their coordinates (the VLDB'17 POI files)
VENUE_LISTS = ("foursquare-global", "gowalla")


def read_venues(format: str, path: str | Path, pois_file: str | Path | None = None) -> pd.DataFrame | None:
    """The venue list (venue id -> lat, lon) that comes with ``format``'s input, or None."""
    if format not in VENUE_LISTS:
        return None
    from ._vldb17 import locate_files, read_poi_coordinates

    return read_poi_coordinates(locate_files(Path(path), pois_file)[1])


def read_points(format: str, path: str | Path, **options) -> pd.DataFrame:
    """Read ``path`` in ``format``; ``options`` are the reader's keyword arguments."""
    if format not in READERS:
        raise InputError(f"unknown format {format!r}; expected one of {', '.join(formats())}")
    accepted = inspect.signature(READERS[format]).parameters
    extra = sorted(set(options) - set(accepted))
    if extra:
        flags = ", ".join("--" + name.replace("_", "-") for name in extra)
        raise InputError(f"{flags} does not apply to --format {format}")
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    return READERS[format](path, **options)


def read_friends(path: str | Path) -> pd.DataFrame:
    """An undirected friendship edge list (columns user_a < user_b), e.g. Gowalla's social graph."""
    from .gowalla import read_friends as _read

    return _read(path)


__all__ = ["PRESETS", "READERS", "formats", "read_cabs", "read_csv_points",
           "read_foursquare", "read_foursquare_global", "read_foursquare_mat", "read_geolife", "read_gowalla",
           "read_parquet_points", "read_friends", "read_pf", "read_pf_synthetic_table", "read_points"]
