"""GeoLife GPS Trajectories 1.3 (Microsoft Research Asia): ``Data/<user>/Trajectory/*.plt``.

A PLT file has 6 header lines, then one fix per line: ``latitude, longitude, 0, altitude_ft,
days_since_1899-12-30, YYYY-MM-DD, HH:MM:SS`` with times in GMT. CRLF and LF line ends are read alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ._common import file_and_row, read_table, require_file, validate_files

PLT_COLUMNS = ("lat", "lon", "zero", "altitude", "days", "date", "clock")
PLT_HEADER_LINES = 6
_USED = {"lat": "float64", "lon": "float64", "date": "str", "clock": "str"}


def read_geolife(path: str | Path, timezone: str | None = None, trajectories: bool = False) -> pd.DataFrame:
    """GeoLife trajectories: a ``Data`` folder of user folders, one user folder, or one ``.plt`` file.

    user = the user folder's name (e.g. ``'000'``; for a ``.plt`` outside a ``<user>/Trajectory``
    folder, the file's stem); with ``trajectories``, the trajectory: user and file stem
    (``'000-20081023025304'``), each PLT file being one trajectory. Times are GMT, so the result is in UTC and ``timezone`` is not needed.
    Points keep file order; files are read in user, then file-name order.
    """
    files = plt_files(Path(path))
    raws = [read_table(f, _USED, names=PLT_COLUMNS, skiprows=PLT_HEADER_LINES) for _, f in files]
    lengths = [len(r) for r in raws]
    raw = pd.concat(raws, ignore_index=True)
    del raws
    times = pd.to_datetime(raw["date"] + " " + raw["clock"], format="%Y-%m-%d %H:%M:%S", utc=True,
                           errors="coerce")
    bad = times.isna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        k, row = file_and_row(lengths, i)
        raise InputError(f"date and time {raw['date'].iloc[i]!r}, {raw['clock'].iloc[i]!r} in {files[k][1]} "
                         f"row {row} are not YYYY-MM-DD, HH:MM:SS")
    frame = pd.DataFrame({
        "user": np.repeat(np.array([f"{u}-{f.stem}" if trajectories else u for u, f in files], dtype=object),
                          lengths),
        "time": times, "lat": raw["lat"], "lon": raw["lon"],
    })
    return validate_files(frame, [str(f) for _, f in files], lengths, timezone)


def plt_files(path: Path) -> list[tuple[str, Path]]:
    """(user, file) of every PLT file under ``path``, sorted by user and file name."""
    if path.is_file() or path.suffix.lower() == ".plt":
        require_file(path)
        user = path.parent.parent.name if path.parent.name.lower() == "trajectory" else path.stem
        return [(user, path)]
    if not path.is_dir():
        raise InputError(f"{path}: no such file or folder")
    if (path / "Data").is_dir():
        path = path / "Data"
    if (path / "Trajectory").is_dir():
        users = [path]
    else:
        users = sorted(p for p in path.iterdir() if (p / "Trajectory").is_dir())
    files = [(u.name, f) for u in users for f in sorted((u / "Trajectory").glob("*.[pP][lL][tT]"))]
    if not files:
        raise InputError(f"{path} has no GeoLife trajectories: expected <user>/Trajectory/*.plt "
                         "(a Data folder), Trajectory/*.plt (a user folder) or a .plt file")
    return files


__all__ = ["read_geolife"]
