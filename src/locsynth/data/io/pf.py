"""The PF Tokyo data as the PPMTF authors publish it (paper 001 §4.1 and their preprocessing code).

Files: ``traintraces_TK.csv`` and ``testtraces_TK.csv``
(``user_index,poi_index,category,unixtime,dow,hour,min,distance``) and ``POI_TK.csv`` (the 400
cells of a 20 x 20 grid with their centres ``y``, ``x``). 500 training and 500 test users, 30
events each, 20-minute instants from 9:00 to 19:00 Tokyo time, one instant per slot. A user's events come
from different dates (one per instant of the day), so PF is discretized with ``fold_days``: a
trace is one nominal day, as in the authors' code.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ..points import unix_seconds_utc, validate_points
from ._common import read_csv_checked

#: The authors' preprocessing of PF: lat 35.65-35.75, lon 139.68-139.80, a 20 x 20 grid, 30 instants
#: of 20 minutes from 9:00, one instant per slot.
PF_PRESET = {
    "grid": (20, 20),
    "bbox": (35.65, 35.75, 139.68, 139.80),
    "instant": "20min",
    "slot": "20min",
    "window": ("09:00", "19:00"),
    "timezone": "Asia/Tokyo",
    "fold_days": True,
}

TRACE_COLUMNS = ("user_index", "poi_index", "unixtime")
SYNTHETIC_COLUMNS = ("user", "trace_no", "time_slot", "time_instant", "poi_index")


def read_pf(path: str | Path, timezone: str | None = None) -> pd.DataFrame:
    """Both splits of PF as one points table with a ``split`` column; ``path`` is the folder.

    The unix times are absolute, so ``timezone`` is not needed (it is accepted like every reader's).
    """
    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path} is not a folder; the PF format reads a folder with "
                         "traintraces_TK.csv, testtraces_TK.csv and POI_TK.csv")
    cells = read_csv_checked(path / "POI_TK.csv", ("poi_id", "y", "x"))
    lat = pd.Series(cells["y"].to_numpy(np.float64), index=cells["poi_id"].to_numpy(np.int64))
    lon = pd.Series(cells["x"].to_numpy(np.float64), index=cells["poi_id"].to_numpy(np.int64))
    frames = []
    for split, name in (("train", "traintraces_TK.csv"), ("test", "testtraces_TK.csv")):
        raw = read_csv_checked(path / name, TRACE_COLUMNS)
        poi = pd.to_numeric(raw["poi_index"], errors="coerce")
        unknown = ~poi.isin(lat.index)
        if unknown.any():
            i = int(np.flatnonzero(unknown.to_numpy())[0])
            raise InputError(f"unknown poi_index {raw['poi_index'].iloc[i]!r} in {path / name} row {i + 1}; "
                             "POI_TK.csv has no such cell")
        frame = pd.DataFrame({
            "user": raw["user_index"].to_numpy(),
            "time": unix_seconds_utc(raw["unixtime"], str(path / name), "the PF files' times are unix seconds"),
            "lat": lat.loc[poi.to_numpy(np.int64)].to_numpy(),
            "lon": lon.loc[poi.to_numpy(np.int64)].to_numpy(),
            "split": split,
        })
        frames.append(validate_points(frame, str(path / name)))
    return pd.concat(frames, ignore_index=True)


def read_pf_synthetic_table(path: str | Path) -> pd.DataFrame:
    """The authors' synthetic traces as a table of whole numbers: ``user, trace_no, time_slot,
    time_instant, poi_index`` (locsynth.data.discretize.read_pf_synthetic places them on a frame).

    Columns ``user,trace_no,time_slot,time_instant,poi_index[,category,loglikeli]``. ``user`` is
    the training user's id (the authors' user_index), ``poi_index`` a location id. The SGLT
    tool's outputs, as the PPMTF authors stored them, say ``time_period`` where PPMTF's say
    ``time_slot``; both are read.
    """
    path = Path(path)
    raw = read_csv_checked(path, ())
    if "time_slot" not in raw and "time_period" in raw:
        raw = raw.rename(columns={"time_period": "time_slot"})
    missing = [c for c in SYNTHETIC_COLUMNS if c not in raw.columns]
    if missing:
        raise InputError(f"{path} is missing column(s) {', '.join(missing)}; required: {', '.join(SYNTHETIC_COLUMNS)} "
                         f"(time_period may stand for time_slot)")
    vals = {c: pd.to_numeric(raw[c], errors="coerce") for c in SYNTHETIC_COLUMNS}
    for c, v in vals.items():
        bad = v.isna() | (v < 0) | (v % 1 != 0)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{c} {raw[c].iloc[i]!r} is not a non-negative integer in {path} row {i + 1}")
    vals = {c: v.to_numpy(np.int64) for c, v in vals.items()}
    return pd.DataFrame(vals)
