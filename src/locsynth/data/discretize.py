"""From a validated points table to a TraceSet: locations, instants, duplicates (paper 001 §2.1, §4.1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError, unknown
from .space import Grid, POISpace, Space
from .timeaxis import TimeAxis
from .traces import TraceSet

DUPLICATE_POLICIES = ("first", "last", "keep", "error")


def make_space(points: pd.DataFrame, grid: tuple[int, int] | None = None,
               bbox: tuple[float, float, float, float] | None = None, pois: int | None = None) -> Space:
    """A grid (``grid=(rows, cols)``, over ``bbox`` or the points' box) or the ``pois`` most visited venues."""
    if (grid is None) == (pois is None):
        raise InputError("choose one space: `grid` ROWSxCOLS or `pois` N")
    if pois is not None:
        if bbox is not None:
            lat_min, lat_max, lon_min, lon_max = bbox
            inside = points["lat"].between(lat_min, lat_max) & points["lon"].between(lon_min, lon_max)
            points = points.loc[inside]
            if points.empty:
                raise InputError(f"no point lies inside the bounding box {bbox}")
        return POISpace.top_visited(points, pois)
    rows, cols = grid
    if bbox is not None:
        return Grid(rows, cols, bbox)
    return Grid.covering(points["lat"].to_numpy(), points["lon"].to_numpy(), rows, cols)


def make_time_axis(points: pd.DataFrame, instant="1h", slot=None, window=None,
                   timezone: str = "UTC", start=None) -> TimeAxis:
    """An axis starting on ``start`` (a date, public) or else on the local date of the earliest point."""
    if start is not None:
        return TimeAxis.build(pd.Timestamp(start).date(), timezone, instant, slot, window)
    axis = TimeAxis.build(pd.Timestamp("2000-01-01").date(), timezone, instant, slot, window)
    first = points["time"].min().tz_convert(axis.timezone)
    return TimeAxis.build(first.date(), timezone, instant, slot, window)


def user_order(ids: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, unique ids) with ids in natural order: numeric when every id is an integer."""
    values = ids.to_numpy()
    numeric = pd.to_numeric(pd.Series(values), errors="coerce")
    if numeric.notna().all() and (numeric % 1 == 0).all():
        uniq, codes = np.unique(numeric.to_numpy(np.int64), return_inverse=True)
        return codes, uniq
    uniq, codes = np.unique(values.astype(str), return_inverse=True)
    return codes, uniq.astype(object)


def discretize(points: pd.DataFrame, space: Space, time: TimeAxis, duplicates: str = "first",
               info: dict | None = None, fold_days: bool = False) -> TraceSet:
    """Map every point to (user, instant, location) and build the TraceSet.

    Points outside the space or outside the daily window are dropped and counted in
    ``info['dropped']``. ``duplicates`` says what to do with several events of a user in one
    instant: keep the ``first`` or ``last`` (in time order), ``keep`` them all, or raise
    (``error``). PPMTF's trace has one location per instant (paper 001 §3.5, sigma), so
    ``first`` is the default.

    ``fold_days`` keeps only the instant of the day, placing every user's events on day 0: a
    trace is then one nominal day. The PF data need it: each user's 30 events are one per
    20-minute instant of 9:00-19:00, but taken from different dates (paper 001 §4.1; the
    authors' code reads only the hour and minute).
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise unknown("duplicate policy", duplicates, DUPLICATE_POLICIES)
    if len(points) == 0:
        raise InputError("no points to discretize")
    venue = points["venue"].to_numpy() if "venue" in points else None
    loc = space.locate(points["lat"].to_numpy(), points["lon"].to_numpy(), venue)
    t = time.instants(points["time"])
    if fold_days:
        t = np.where(t >= 0, t % time.instants_per_day, t)
    codes, uniq = user_order(points["user"])
    in_space, in_time = loc >= 0, t >= 0
    keep = in_space & in_time
    dropped = {"outside_space": int((~in_space).sum()), "outside_time": int((in_space & ~in_time).sum())}
    user, t, loc = codes[keep], t[keep], loc[keep]
    ns = points["time"].to_numpy()[keep]
    order = np.lexsort((ns, t, user))
    user, t, loc = user[order], t[order], loc[order]
    same = np.zeros(user.shape[0], bool)
    same[1:] = (user[1:] == user[:-1]) & (t[1:] == t[:-1])
    n_dup = int(same.sum())
    if n_dup and duplicates == "error":
        i = int(np.flatnonzero(same)[0])
        raise InputError(f"user {uniq[user[i]]} has several events in instant {int(t[i])}; "
                         "choose `duplicates` first, last or keep")
    if n_dup and duplicates in ("first", "last"):
        if duplicates == "first":
            drop = same
        else:
            drop = np.zeros_like(same)
            drop[:-1] = same[1:]
        user, t, loc = user[~drop], t[~drop], loc[~drop]
        dropped["duplicates"] = n_dup
    if user.size == 0:
        raise InputError("no event is left after discretization: every point lies outside the space "
                         "or the daily window")
    present = np.unique(user)
    remap = np.full(uniq.size, -1, np.int64)
    remap[present] = np.arange(present.size)
    users = pd.DataFrame({"user_id": uniq[present]})
    dropped["users_without_events"] = int(uniq.size - present.size)
    meta = dict(info or {})
    meta["dropped"] = dropped
    if fold_days:
        meta["folded_days"] = True
    return TraceSet.from_events(remap[user], t, loc, users, space, time, meta)


def read_pf_synthetic(path: str | Path, like: TraceSet) -> TraceSet:
    """The PPMTF authors' synthetic traces (io.pf.read_pf_synthetic_table) on ``like``'s space and
    time axis: ``user`` is a training user of ``like``; the traces have no date and are placed on
    day 0, at the ``time_instant``-th instant of slot ``time_slot``."""
    from .io.pf import read_pf_synthetic_table

    path = Path(path)
    table = {c: v.to_numpy(np.int64) for c, v in read_pf_synthetic_table(path).items()}
    n_loc = like.space.n_locations
    bad = table["poi_index"] >= n_loc
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"unknown location id {table['poi_index'][i]} in {path} row {i + 1}: "
                         f"the space has {n_loc} locations")
    slot_of = like.time.slot_of
    first = np.searchsorted(slot_of, np.arange(like.time.n_slots))
    size = np.bincount(slot_of, minlength=like.time.n_slots)
    ok = (table["time_slot"] < like.time.n_slots)
    ok[ok] &= table["time_instant"][ok] < size[table["time_slot"][ok]]
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise InputError(f"time_slot {table['time_slot'][i]}, time_instant {table['time_instant'][i]} in {path} "
                         f"row {i + 1} is not on the time axis ({like.time.describe()})")
    t = first[table["time_slot"]] + table["time_instant"]
    train_ids = pd.Index(like.users["user_id"].astype(str))
    source = train_ids.get_indexer(pd.Index(table["user"].astype(str)))
    if (source < 0).any():
        i = int(np.flatnonzero(source < 0)[0])
        raise InputError(f"user {table['user'][i]} in {path} row {i + 1} is not a user of the training set")
    key = pd.MultiIndex.from_arrays([source, table["trace_no"]])
    codes, uniq = pd.factorize(key, sort=True)
    users = pd.DataFrame({
        "user_id": like.users["user_id"].to_numpy()[uniq.get_level_values(0)],
        "source": uniq.get_level_values(0).astype(np.int32),
        "trace_no": uniq.get_level_values(1).astype(np.int32),
    })
    return TraceSet.from_events(codes, t, table["poi_index"], users, like.space, like.time,
                                {"source": "pf-synthetic", "file": path.name})
