"""Readers: one per source format, each returning a validated points table (see :mod:`locsynth.data.points`).

``read_points(format, path, ...)`` dispatches on the format name; ``READERS`` holds them, and
:func:`locsynth.data.prepare.formats` lists every format, these and prepare's own.
``PRESETS`` holds a format's own discretization (PF comes with its grid and time axis),
``TIME_SHIFTS`` a format's clock correction (the VLDB'17 files are 8 h early).
Every reader returns a points table; formats read straight into TraceSets (trips, the PPMTF
authors' synthetic files) are prepare's (``TRIP_FORMATS``, ``TRACE_FORMATS`` in locsynth.data.prepare).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError, unknown
from ...core.validation import check_time_shift
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


#: formats whose input comes with a list of venues and their coordinates (the VLDB'17 POI files),
#: and where that list comes from. Both are the data's own: Liu et al.'s preprocessing kept the POIs
#: with at least 10 visitors among the data's users, and in the slices here the list is exactly the
#: venues the slice's users visited (Gowalla_3: every one of its venues, 7,101 of them visited by one
#: user alone). A venue one person alone visited is then a candidate only when that person is in the
#: data, so a DP choice among them is not covered by its epsilon (issue #35's audit: a lower bound of
#: 3.49 against a claimed 2); a list the user vouches for comes with ``prepare --candidates FILE``.
VENUE_LISTS = {"foursquare-global": "data-derived", "gowalla": "data-derived"}

#: hours to add to a format's times as read (prepare's ``--time-shift`` default; 0 for a format not
#: listed). The VLDB'17 files (Liu et al.) are 8 h early: their preprocessing turned the sources'
#: UTC clock readings into unix times as if they were UTC+8 local times. Every check-in compared
#: with its source is exactly 8 h early (SNAP Gowalla's published rows; 3,186 TSMC NYC check-ins at
#: the same second and place in the Foursquare file, none at any other offset); docs/data.md.
TIME_SHIFTS = {"foursquare-global": 8.0, "gowalla": 8.0}


def time_shift(format: str, hours: float | None = None) -> dict:
    """The clock correction to apply: ``{"hours": ..., "default": ...}``, ``default`` True when
    ``hours`` is None and the format's own (:data:`TIME_SHIFTS`) is taken."""
    if hours is None:
        return {"hours": TIME_SHIFTS.get(format, 0.0), "default": True}
    return {"hours": check_time_shift(hours), "default": False}


def describe_time_shift(format: str, shift: dict) -> str | None:
    """One line on the shift applied (``time_shift``'s dict), or None when the times are as read
    and the format has no correction."""
    hours, own = shift["hours"], TIME_SHIFTS.get(format, 0.0)
    if hours == 0 and own == 0:
        return None
    if hours == 0:
        return f"times as read (--time-shift 0); {format}'s default correction is {own:+g} h (docs/data.md)"
    if shift["default"]:
        return (f"times moved {hours:+g} h, {format}'s default correction: its files are {own:g} h early "
                f"(docs/data.md; --time-shift 0 reads them as stated)")
    return f"times moved {hours:+g} h (--time-shift)" + (f"; {format}'s default correction is {own:+g} h"
                                                         if own else "")


def read_venues(format: str, path: str | Path, pois_file: str | Path | None = None) -> pd.DataFrame | None:
    """The venue list (venue id -> lat, lon) that comes with ``format``'s input, or None; where it
    comes from is :data:`VENUE_LISTS`'s."""
    if format not in VENUE_LISTS:
        return None
    from ._vldb17 import locate_files, read_poi_coordinates

    return read_poi_coordinates(locate_files(Path(path), pois_file)[1])


#: the columns a candidate list may name its venue id by (the first found is used)
CANDIDATE_ID_COLUMNS = ("venue", "venue_id", "poi", "poi_id", "id")


def read_candidates(path: str | Path) -> pd.DataFrame:
    """A list of candidate venues the user vouches for as public (``prepare --candidates``):
    venue id (str) -> lat, lon. A CSV with a header naming the id (venue, venue_id, poi, poi_id or
    id) and lat, lon (or latitude, longitude); a headerless ``poi lat lon`` file (the VLDB'17 POI
    files' layout) is read as such."""
    from ._common import check_coordinates, read_csv_checked

    path = Path(path)
    head = read_csv_checked(path, (), nrows=1, sep=None, engine="python")
    columns = {str(c).strip().lower(): c for c in head.columns}
    ident = next((columns[c] for c in CANDIDATE_ID_COLUMNS if c in columns), None)
    lat = columns.get("lat", columns.get("latitude"))
    lon = columns.get("lon", columns.get("longitude", columns.get("lng")))
    if ident is None or lat is None or lon is None:
        if len(head.columns) == 3 and not any(c in columns for c in (*CANDIDATE_ID_COLUMNS, "lat", "latitude")):
            from ._vldb17 import read_poi_coordinates

            return read_poi_coordinates(path)
        raise InputError(f"{path}: a candidate list needs a venue id column ({', '.join(CANDIDATE_ID_COLUMNS)}) "
                         f"and lat, lon; found: {', '.join(map(str, head.columns))}")
    frame = read_csv_checked(path, (ident, lat, lon), sep=None, engine="python", dtype={ident: str})
    y = pd.to_numeric(frame[lat], errors="coerce").to_numpy(np.float64)
    x = pd.to_numeric(frame[lon], errors="coerce").to_numpy(np.float64)
    check_coordinates(y, x, str(path))
    out = pd.DataFrame({"lat": y, "lon": x},
                       index=pd.Index(frame[ident].astype(str).str.strip(), name="venue"))
    if out.index.duplicated().any():
        raise InputError(f"{path}: venue {out.index[out.index.duplicated()][0]!r} is listed twice")
    return out


def read_points(format: str, path: str | Path, **options) -> pd.DataFrame:
    """Read ``path`` in ``format``; ``options`` are the reader's keyword arguments."""
    if format not in READERS:
        raise unknown("format", format, sorted(READERS))
    accepted = inspect.signature(READERS[format]).parameters
    extra = sorted(set(options) - set(accepted))
    if extra:
        flags = ", ".join(f"`{name}`" for name in extra)
        raise InputError(f"{flags} does not apply to `format` {format}")
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    return READERS[format](path, **options)


def read_friends(path: str | Path) -> pd.DataFrame:
    """An undirected friendship edge list (columns user_a < user_b), e.g. Gowalla's social graph."""
    from .gowalla import read_friends as _read

    return _read(path)


__all__ = ["PRESETS", "READERS", "TIME_SHIFTS", "describe_time_shift", "read_cabs", "read_csv_points",
           "read_foursquare", "read_foursquare_global", "read_foursquare_mat", "read_geolife", "read_gowalla",
           "read_parquet_points", "read_friends", "read_pf", "read_pf_synthetic_table", "read_points",
           "time_shift"]
