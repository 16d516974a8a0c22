"""From a validated points table to a TraceSet: locations, instants, duplicates (paper 001 §2.1, §4.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import InputError
from .privacy.ledger import Ledger
from .space import Grid, POISpace, Space
from .timeaxis import TimeAxis
from .traces import TraceSet

DUPLICATE_POLICIES = ("first", "last", "keep", "error")


def make_space(points: pd.DataFrame, grid: tuple[int, int] | None = None,
               bbox: tuple[float, float, float, float] | None = None, pois: int | None = None) -> Space:
    """A grid (``grid=(rows, cols)``, over ``bbox`` or the points' box) or the ``pois`` most visited venues."""
    if (grid is None) == (pois is None):
        raise InputError("choose one space: --grid ROWSxCOLS or --pois N")
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


def dp_top_venues(points: pd.DataFrame, n: int, epsilon: float, ledger: Ledger,
                  venues: pd.DataFrame | None = None) -> POISpace:
    """The ``n`` venues most users visited, chosen under DP (privacy/topk.py): each user counts a
    venue at most once, so one user added or removed moves every count by at most 1, all the same
    way. ``venues`` (venue id -> lat, lon) is the public list of candidates with their
    coordinates; without it the candidates are the venues in the data, which the ledger records
    as not covered."""
    from .privacy.topk import noisy_top_k

    if "venue" not in points:
        raise InputError("--pois needs a venue column in the input (check-in data); use --grid for GPS points")
    visits = points[["user", "venue"]].assign(venue=points["venue"].astype(str)).drop_duplicates()
    visitors = visits["venue"].value_counts()
    if venues is not None:
        candidates = np.sort(venues.index.astype(str).to_numpy())
        public = "the candidates are the venues of the public POI list, with its coordinates"
    else:
        candidates = np.sort(visitors.index.to_numpy().astype(str))
        public = "the candidates are the venues in the data"
        ledger.note_uncovered("which venues were candidates for the DP choice of locations (those in the data: no "
                              "public POI list was given) and their coordinates")
    if n > candidates.size:
        raise InputError(f"--pois {n} is more than the {candidates.size} candidate venues")
    scores = visitors.reindex(candidates, fill_value=0).to_numpy(np.int64)
    chosen = noisy_top_k(scores, n, epsilon, ledger=ledger, unit="user",
                         saw=f"how many users visited each venue, to choose the {n} locations",
                         assumptions=f"each user counts a venue at most once (monotonic, sensitivity 1); {public}")
    return POISpace.of_venues(points, candidates[chosen], known=venues)


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
        raise InputError(f"unknown duplicate policy {duplicates!r}; expected one of {', '.join(DUPLICATE_POLICIES)}")
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
                         "choose --duplicates first, last or keep")
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
