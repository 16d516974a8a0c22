"""TraceSet: the one data model (DESIGN.md).

Events are columnar arrays sorted by (trace, instant): ``user`` (int32, the row of the trace in
the user table), ``t`` (int64 instant, see :mod:`locsynth.data.timeaxis`) and ``loc`` (int32 location
id in the :mod:`locsynth.data.space`), with CSR ``offsets`` so that a trace's events are one slice.

The user table has one row per trace. For real data a trace is a user's whole history
(paper 001 §2.1 concatenates a user's traces) and ``user_id`` is the original id. For a synthetic
set it also has ``source`` (the row of the training user the trace was generated from, -1 for a
virtual user) and ``trace_no`` (the trace number per source user), so that metrics can be
computed per trace number as the papers do.

Obfuscated sets (paper 003 §3.4: the PWS Cup's anonymizations) may also hold *deleted* and
*generalized* events. ``loc`` then codes them below zero: ``DELETED`` (-1) for a deleted event
and ``-2 - k`` for an event generalized to location set ``k`` of the set's :class:`LocationSets`
table (CSR: set ``k`` is ``members[offsets[k]:offsets[k + 1]]``). A set with such events is not
*exact*; code that needs one location per event calls :meth:`TraceSet.require_exact`, which
names the problem instead of letting a negative id index an array.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.errors import InputError
from ..core.files import atomic_output
from ..core.validation import check_seed
from ..privacy.ledger import Ledger
from .modes import TAXI, Bounds
from .space import Space
from .timeaxis import TimeAxis

FORMAT_VERSION = 1
FORMAT_NAME = "locsynth.traceset"
DELETED = -1
#: ``info['times']`` of a set whose instants are not times: 'none' (they count each trace's steps)
#: or 'hour' (each trip's hour is a model's, its steps start on the hour of day 0)
UNTIMED = ("none", "hour")


@dataclass(frozen=True, eq=False)
class LocationSets:
    """The location sets of generalized events: set ``k`` is ``members[offsets[k]:offsets[k + 1]]``."""

    offsets: np.ndarray
    members: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "offsets", np.ascontiguousarray(self.offsets, dtype=np.int64))
        object.__setattr__(self, "members", np.ascontiguousarray(self.members, dtype=np.int32))

    @classmethod
    def from_lists(cls, sets) -> "LocationSets":
        sizes = np.fromiter((len(x) for x in sets), np.int64, count=len(sets))
        members = np.concatenate([np.asarray(x, np.int32) for x in sets]) if len(sets) else np.zeros(0, np.int32)
        return cls(np.r_[0, np.cumsum(sizes)], members)

    @property
    def n_sets(self) -> int:
        return int(self.offsets.shape[0]) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def members_of(self, k: int) -> np.ndarray:
        return self.members[self.offsets[k]:self.offsets[k + 1]]

    def owner(self) -> np.ndarray:
        """The set index of every entry of ``members``."""
        return np.repeat(np.arange(self.n_sets, dtype=np.int64), self.sizes)

    def check(self, n_locations: int) -> None:
        if self.offsets.ndim != 1 or self.offsets.size < 1 or self.offsets[0] != 0 \
                or (np.diff(self.offsets) < 2).any() or self.offsets[-1] != self.members.size:
            raise InputError("location sets must be CSR offsets from 0 over sets of at least 2 locations")
        if self.members.size and (self.members.min() < 0 or self.members.max() >= n_locations):
            raise InputError(f"a generalized event names a location outside 0..{n_locations - 1}")


def generalized_code(k):
    """The ``loc`` code of an event generalized to set ``k`` (and back: the code is its own inverse)."""
    return -2 - np.asarray(k)


@dataclass(frozen=True, eq=False)
class TraceSet:
    """Location traces on a discrete space and time axis.

    Attributes
    ----------
    user : ndarray of shape (n_events,), int32
        Row of each event's trace in ``users``.
    t : ndarray of shape (n_events,), int64
        Instant of each event.
    loc : ndarray of shape (n_events,), int32
        Location id of each event.
    users : DataFrame
        One row per trace: ``user_id`` and, for synthetic sets, ``source`` and ``trace_no``.
    space : Space
    time : TimeAxis
    info : dict
        Provenance (source format, simulated or not, what was dropped), saved with the set.
    friends : ndarray of shape (n_edges, 2), int32, or None
        Undirected friendship edges between user-table rows, ``a < b`` (Gowalla's social graph, or
        the one a synthesizer made).
    ledger : Ledger or None
        The differential-privacy spends behind a synthetic or anonymized set (None for real data).
    locsets : LocationSets or None
        The location sets of generalized events (``loc`` = -2 - set), see the module docstring.
    """

    user: np.ndarray
    t: np.ndarray
    loc: np.ndarray
    users: pd.DataFrame
    space: Space
    time: TimeAxis
    info: dict = field(default_factory=dict)
    friends: np.ndarray | None = None
    ledger: Ledger | None = None
    locsets: LocationSets | None = None

    def __post_init__(self):
        object.__setattr__(self, "user", np.ascontiguousarray(self.user, dtype=np.int32))
        object.__setattr__(self, "t", np.ascontiguousarray(self.t, dtype=np.int64))
        object.__setattr__(self, "loc", np.ascontiguousarray(self.loc, dtype=np.int32))
        object.__setattr__(self, "users", self.users.reset_index(drop=True))
        if self.friends is not None:
            object.__setattr__(self, "friends", np.ascontiguousarray(self.friends, dtype=np.int32).reshape(-1, 2))

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_events(cls, user, t, loc, users: pd.DataFrame, space: Space, time: TimeAxis,
                    info: dict | None = None, friends: np.ndarray | None = None,
                    ledger: Ledger | None = None, locsets: LocationSets | None = None) -> "TraceSet":
        """Build from events in any order, of traces of any length and start: ``user`` is each
        event's row in ``users``; sorts them by (user, instant) and checks the ranges."""
        user, t, loc = np.asarray(user, np.int64), np.asarray(t, np.int64), np.asarray(loc, np.int64)
        if not (user.shape == t.shape == loc.shape):
            raise InputError("user, t and loc must have the same length")
        order = np.lexsort((t, user))
        ts = cls(user[order], t[order], loc[order], users, space, time, dict(info or {}), friends, ledger, locsets)
        ts.check()
        return ts

    def check(self) -> None:
        """Raise InputError unless the arrays are consistent with the tables."""
        n = self.user.shape[0]
        if not (self.t.shape[0] == self.loc.shape[0] == n):
            raise InputError("event arrays user, t and loc differ in length")
        if "user_id" not in self.users:
            raise InputError("the user table has no user_id column")
        if n:
            if self.user.min() < 0 or self.user.max() >= len(self.users):
                raise InputError(f"event user index outside 0..{len(self.users) - 1}")
            if self.loc.max() >= self.space.n_locations:
                raise InputError(f"unknown location id {int(self.loc.max())}: the space has "
                                 f"{self.space.n_locations} locations")
            n_sets = 0 if self.locsets is None else self.locsets.n_sets
            if self.loc.min() < -1 - n_sets:
                raise InputError(f"negative location code {int(self.loc.min())}: only {DELETED} (deleted) and "
                                 f"-2 .. {-1 - n_sets} (the {n_sets} generalized location sets) are allowed")
            if self.t.min() < 0:
                raise InputError(f"negative instant {int(self.t.min())}")
            if self.locsets is not None:
                self.locsets.check(self.space.n_locations)
            if self.friends is not None and self.friends.size and (
                    self.friends.min() < 0 or self.friends.max() >= len(self.users)
                    or (self.friends[:, 0] >= self.friends[:, 1]).any()):
                raise InputError("friendship edges must join two different user rows, written a < b")
            key_user = np.diff(self.user)
            if (key_user < 0).any() or ((key_user == 0) & (np.diff(self.t) < 0)).any():
                raise InputError("events are not sorted by (user, instant)")

    # -- shape --------------------------------------------------------------------------------
    @property
    def n_traces(self) -> int:
        return len(self.users)

    @property
    def n_users(self) -> int:
        """Distinct users (a synthetic user with several traces counts once)."""
        return int(self.users["user_id"].nunique())

    @property
    def n_events(self) -> int:
        return int(self.user.shape[0])

    @property
    def offsets(self) -> np.ndarray:
        """CSR offsets: trace ``i``'s events are ``offsets[i]:offsets[i + 1]``."""
        return np.searchsorted(self.user, np.arange(self.n_traces + 1)).astype(np.int64)

    @property
    def synthetic(self) -> bool:
        return "source" in self.users

    @property
    def min_cells(self) -> int:
        """The fewest cells (distinct consecutive locations) a trace of this set holds by a public
        rule of its preparation (``info['min_cells']``: 2 for trips, which must leave their first
        cell, data/trips.py); 1 where no rule says more."""
        if "min_cells" in self.info:
            return int(self.info["min_cells"])
        made = self.info.get("trips")             # trips prepared before the rule was stated: the same rule
        return 2 if isinstance(made, dict) and "single_visit" in made else 1

    @property
    def bounds(self) -> Bounds:
        """The public bounds of the set's movement (data/modes.py): its mode's speeds, segmentation
        thresholds, cell and instant, as ``info['bounds']`` holds them; a set prepared before modes
        existed, or one that is not trips, gets the cabs' (``taxi``: 150 km/h, paper 004 §8.2)."""
        said = self.info.get("bounds")
        return Bounds.from_dict(said) if isinstance(said, dict) else TAXI

    @property
    def has_times(self) -> bool:
        """Whether the instants are times (recorded, or a model's), so that a surface may show them
        as datetimes: False when the method says it released none (``info['times']``: 'none') or
        only each trip's hour ('hour'), and for trips whose ``hour`` is -1 throughout."""
        said = self.info.get("times")
        if said is not None:
            return said not in UNTIMED
        return not (is_trip_set(self) and self.n_traces > 0 and bool((self.users["hour"] < 0).all()))

    @property
    def exact(self) -> bool:
        """True when every event has one location (no deleted or generalized event)."""
        return not self.n_events or int(self.loc.min()) >= 0

    def require_exact(self, what: str) -> None:
        """InputError unless :attr:`exact`: ``what`` needs one location per event."""
        if not self.exact:
            deleted = int((self.loc == DELETED).sum())
            generalized = int((self.loc < DELETED).sum())
            raise InputError(f"{what} needs one location per event; this set has {deleted} deleted and "
                             f"{generalized} generalized events (paper 003's obfuscations)")

    def events_of(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Instants and locations of trace ``i`` (views, not copies)."""
        lo, hi = np.searchsorted(self.user, [i, i + 1])
        return self.t[lo:hi], self.loc[lo:hi]

    def fingerprint(self) -> str:
        """SHA-256 of the events and of the space's and time axis' sizes: equal for the same traces."""
        h = hashlib.sha256()
        for a in (self.user, self.t, self.loc):
            h.update(np.ascontiguousarray(a).tobytes())
        h.update(f"{self.n_traces}/{self.space.n_locations}/{self.time.n_slots}".encode())
        return h.hexdigest()

    def counts(self) -> np.ndarray:
        """Number of events of each trace."""
        return np.bincount(self.user, minlength=self.n_traces)

    def transition_index(self, consecutive_only: bool = True) -> np.ndarray:
        """Indices i of the events whose next event i + 1 belongs to the same trace and, with
        ``consecutive_only`` (paper 001 §3.2), falls in the next instant: the transitions are
        (loc[i], loc[i + 1])."""
        same = self.user[1:] == self.user[:-1]
        if consecutive_only:
            same &= self.time.consecutive(self.t[:-1], self.t[1:])
        return np.flatnonzero(same)

    def transitions(self, consecutive_only: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(trace row, from, to) of every transition (see :meth:`transition_index`), int64."""
        i = self.transition_index(consecutive_only)
        return self.user[i].astype(np.int64), self.loc[i].astype(np.int64), self.loc[i + 1].astype(np.int64)

    def __repr__(self) -> str:
        from ..core.display import traceset_repr

        return traceset_repr(self)

    def _repr_html_(self) -> str:
        from ..core.display import traceset_html

        return traceset_html(self)

    def plot(self, n: int = 100, ax=None, seed: int = 0, density: bool = True):
        """A map of the set on matplotlib: visits per location faintly, ``n`` random traces as lines
        (locsynth/core/display.py); returns the Axes. ``to_geodataframe().explore()`` gives a web map."""
        from ..core.display import plot_traces

        return plot_traces(self, n, ax, seed, density)

    def summary(self) -> dict:
        """Counts for ``locsynth info``."""
        out = {
            "users": self.n_users,
            "traces": self.n_traces,
            "events": self.n_events,
            "locations": self.space.n_locations,
            "space": self.space.kind,
            "instants": self.time.instants_per_day,
            "instant_seconds": int(self.time.instant.total_seconds()),
            "slots": self.time.n_slots,
            "timezone": self.time.timezone,
        }
        if self.space.kind == "grid":
            out["grid"] = f"{self.space.rows}x{self.space.cols}"
        if self.space.domain is not None:
            out["domain"] = f"{self.space.domain}: {self.space.n_allowed} cells allowed (public)"
        if self.n_events:
            days = self.time.day(self.t)
            first, last = self.time.start_of(np.array([self.t.min(), self.t.max()]))
            out.update({"days": int(days.max() - days.min() + 1), "first": first.isoformat(),
                        "last": last.isoformat()})
            c = self.counts()
            out["events_per_trace"] = {"min": int(c.min()), "median": float(np.median(c)), "max": int(c.max())}
        if self.friends is not None:
            out["friendships"] = int(self.friends.shape[0])
        if self.synthetic:
            out["virtual_traces"] = int((self.users["source"] < 0).sum())
            out["traces_per_user"] = int(self.users["trace_no"].max()) + 1 if len(self.users) else 0
        out.update({k: v for k, v in self.info.items() if k in ("source", "simulated", "dropped")})
        if is_trip_set(self) or "bounds" in self.info:       # daily traces have no mode to state
            out["bounds"] = self.bounds.to_dict()
        if "noise" in self.info:
            out["noise"] = self.info["noise"]
        return out

    # -- selection ----------------------------------------------------------------------------
    def select_users(self, rows) -> "TraceSet":
        """The traces at user-table rows ``rows`` (indices or a boolean mask), renumbered in that order."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            if rows.shape[0] != self.n_traces:
                raise InputError(f"mask has {rows.shape[0]} entries for {self.n_traces} traces")
            rows = np.flatnonzero(rows)
        rows = rows.astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_traces):
            raise InputError(f"user row out of range 0..{self.n_traces - 1}")
        off = self.offsets
        lens = off[rows + 1] - off[rows]
        take = ranges(off[rows], lens)
        new_user = np.repeat(np.arange(rows.size, dtype=np.int32), lens)
        return replace(self, user=new_user, t=self.t[take], loc=self.loc[take],
                       users=self.users.iloc[rows].reset_index(drop=True), friends=self._friends_among(rows))

    def _friends_among(self, rows: np.ndarray) -> np.ndarray | None:
        """The edges whose both ends are in ``rows``, renumbered to positions in ``rows``."""
        if self.friends is None:
            return None
        new = np.full(self.n_traces, -1, np.int64)
        new[rows] = np.arange(rows.size)
        edges = new[self.friends]
        edges = edges[(edges >= 0).all(axis=1)]
        return np.sort(edges, axis=1).astype(np.int32)

    def select_days(self, days) -> "TraceSet":
        """Only the events on the given day indices (day 0 = the axis' start date); every trace kept."""
        keep = np.isin(self.time.day(self.t), np.asarray(days))
        return replace(self, user=self.user[keep], t=self.t[keep], loc=self.loc[keep])

    def by_trace_number(self) -> list["TraceSet"]:
        """One TraceSet per trace number of a synthetic set (the set itself when it has none):
        the papers evaluate each trace number as one set and average."""
        if "trace_no" not in self.users:
            return [self]
        numbers = self.users["trace_no"].to_numpy()
        uniq = np.unique(numbers)
        if uniq.size <= 1:
            return [self]
        return [self.select_users(np.flatnonzero(numbers == k)) for k in uniq]

    def split(self, test: float, seed: int = 0) -> tuple["TraceSet", "TraceSet"]:
        """Seeded split by user into (train, test); ``test`` is the fraction of users held out."""
        if not 0 < test < 1:
            raise InputError(f"test fraction must be between 0 and 1, got {test}")
        ids = self.users["user_id"].to_numpy()
        uniq = pd.unique(ids)
        if uniq.size < 2:
            raise InputError(f"cannot split {uniq.size} user into train and test")
        rng = np.random.default_rng(check_seed(seed))
        n_test = min(max(int(round(test * uniq.size)), 1), uniq.size - 1)
        test_ids = uniq[rng.permutation(uniq.size)[:n_test]]
        is_test = np.isin(ids, test_ids)
        return self.select_users(np.flatnonzero(~is_test)), self.select_users(np.flatnonzero(is_test))

    # -- output -------------------------------------------------------------------------------
    # -- out to the field's libraries (data/export.py: the rules for times and ids) ----------------
    def to_frame(self, internal: bool = False) -> pd.DataFrame:
        """One row per event: ``user_id``, ``datetime`` (aware, on the set's clock), ``lat``, ``lon``,
        ``location_id``. A set without times (:attr:`has_times`) has NaT and a ``step`` column (and
        each trip's ``hour``); a synthetic set's traces are ``s0``, ``s1``, ... unless ``internal``,
        which adds the training user's id, ``source`` and ``trace_no``."""
        from .export import points

        return points(self, internal)

    def to_csv(self, path: str | Path, overwrite: bool = False, internal: bool = False, format: str = "points",
               clock: str | None = None) -> Path:
        """Write :meth:`to_frame` as CSV, times in ISO 8601 with their offset (``clock="naive-local"``:
        local times without one); ``format="skmob"``: :meth:`to_skmob`'s columns with naive local
        times (scikit-mobility, the DP mobility report)."""
        from .export import csv_frame

        path = Path(path)
        frame = csv_frame(self, format, internal, clock)
        with atomic_output(path, overwrite, directory=False) as tmp:
            frame.to_csv(tmp, index=False, float_format="%.6f")
        return path

    def to_geodataframe(self, kind: str = "points", internal: bool = False, crs=None):
        """A GeoDataFrame (WGS 84, or ``crs``) of the events (``kind="points"``) or of one line a
        trace (``"trips"``: id, start, end, points, hour, LineString), times on the clock the data
        came on (a frame of UTC times: UTC); needs ``locsynth[geo]``."""
        from .export import geodataframe

        return geodataframe(self, kind, internal, crs)

    def to_movingpandas(self, internal: bool = False, crs=None):
        """A movingpandas ``TrajectoryCollection``, one trajectory a trace, in WGS 84 or ``crs``;
        times on the clock the data came on (a set made from a frame of UTC times gives UTC back
        with ``to_point_gdf(return_orig_tz=True)``), else naive on the set's clock
        (``time.timezone``); an InputError for a set without times. Needs ``locsynth[geo]``."""
        from .export import movingpandas

        return movingpandas(self, internal, crs)

    def to_trackintel(self, kind: str = "positionfixes", internal: bool = False):
        """trackintel's ``positionfixes`` or ``triplegs`` (its column names, aware times); needs
        ``locsynth[geo]``."""
        from .export import trackintel

        return trackintel(self, kind, internal)

    def to_skmob(self, internal: bool = False) -> pd.DataFrame:
        """scikit-mobility's columns (``uid, tid, datetime, lat, lng``; a trip set's owner, the cab, as
        ``uid`` and the trip as ``tid``), for a file ``skmob.TrajDataFrame`` or the DP mobility report
        reads in an environment of its own (they need pandas < 2 and 2.1)."""
        from .export import skmob

        return skmob(self, internal)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Save as a directory: events/users/locations Parquet files plus ``meta.json``."""
        with TraceSetWriter(path, self.space, self.time, self.info, overwrite, self.ledger) as writer:
            writer.append(self.user, self.t, self.loc, self.users)
            if self.friends is not None:
                pq.write_table(pa.table({"a": self.friends[:, 0], "b": self.friends[:, 1]}),
                               writer.tmp / "friends.parquet")
            if self.locsets is not None:
                pq.write_table(pa.table({"set": self.locsets.owner(), "loc": self.locsets.members}),
                               writer.tmp / "locsets.parquet")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> "TraceSet":
        """Load a directory written by :meth:`save`, or a partitioned set whole (data/partitioned.py); a
        damaged or unknown one is an InputError."""
        path = Path(path)
        meta = read_json_meta(path, "meta.json", FORMAT_NAME, FORMAT_VERSION, "TraceSet")
        tables = {}
        for name in ("events", "users", "locations"):
            try:
                tables[name] = pq.read_table(path / f"{name}.parquet") if name == "locations" or \
                    "partitions" not in meta else _partitions_table(path, meta["partitions"], name)
            except (OSError, pa.ArrowException) as exc:
                raise InputError(f"{path / (name + '.parquet')} is missing or damaged: {exc}") from None
        ev = tables["events"]
        if set(ev.column_names) != {"user", "t", "loc"}:
            raise InputError(f"{path / 'events.parquet'} has columns {ev.column_names}; expected user, t, loc")
        friends = None
        if (path / "friends.parquet").exists():
            try:
                fr = pq.read_table(path / "friends.parquet")
                friends = np.column_stack([fr["a"].to_numpy(), fr["b"].to_numpy()])
            except (OSError, KeyError, pa.ArrowException) as exc:
                raise InputError(f"{path / 'friends.parquet'} is damaged: {exc}") from None
        locsets = None
        if (path / "locsets.parquet").exists():
            try:
                ls = pq.read_table(path / "locsets.parquet")
                owner = ls["set"].to_numpy()
                locsets = LocationSets(np.searchsorted(owner, np.arange(int(owner.max(initial=-1)) + 2)),
                                       ls["loc"].to_numpy())
            except (OSError, KeyError, pa.ArrowException) as exc:
                raise InputError(f"{path / 'locsets.parquet'} is damaged: {exc}") from None
        space = Space.from_saved(tables["locations"].to_pandas(), meta.get("space", {}))
        ledger = Ledger.from_dict(meta["ledger"]) if "ledger" in meta else None
        ts = cls(ev["user"].to_numpy(), ev["t"].to_numpy(), ev["loc"].to_numpy(),
                 tables["users"].to_pandas(), space, TimeAxis.from_meta(meta.get("time", {})),
                 meta.get("info", {}), friends, ledger, locsets)
        counts = meta.get("counts", {})
        if counts.get("events") != ts.n_events or counts.get("traces") != ts.n_traces:
            raise InputError(f"{path} is damaged: meta.json counts {counts} do not match the Parquet files")
        ts.check()
        return ts


def _partitions_table(path: Path, partitions: list, name: str) -> pa.Table:
    """``name``.parquet of every partition of a partitioned set (data/partitioned.py), one after the
    other: a partition numbers its traces from 0, so its events' ``user`` moves by the traces before."""
    tables, before = [], 0
    for part in partitions:
        table = pq.read_table(path / part["name"] / f"{name}.parquet")
        if name == "events":
            at = table.schema.get_field_index("user")
            table = table.set_column(at, "user", pa.array(table["user"].to_numpy() + np.int32(before), pa.int32()))
        tables.append(table)
        before += int(part["traces"])
    return pa.concat_tables(tables, promote_options="default")


class TraceSetWriter:
    """Write a TraceSet directory chunk by chunk, in memory bounded by one chunk.

    Each :meth:`append` adds whole traces: ``users`` rows and their events, with ``user``
    counting from 0 within the chunk and events sorted by (user, instant). The directory appears
    (atomically) when the writer is closed without error::

        with TraceSetWriter(out, space, time, info) as w:
            for chunk in chunks:
                w.append(chunk.user, chunk.t, chunk.loc, chunk.users)
    """

    def __init__(self, path: str | Path, space: Space, time: TimeAxis, info: dict | None = None,
                 overwrite: bool = False, ledger: Ledger | None = None):
        self.space, self.time, self.info, self.ledger = space, time, dict(info or {}), ledger
        self._atomic = atomic_output(Path(path), overwrite, directory=True)
        self._events = self._users = None
        self.n_traces = self.n_events = 0

    def __enter__(self) -> "TraceSetWriter":
        self.tmp = self._atomic.__enter__()
        return self

    def append(self, user, t, loc, users: pd.DataFrame) -> None:
        user = np.asarray(user, np.int64)
        if user.size and (user.min() < 0 or user.max() >= len(users)):
            raise InputError(f"chunk event user index outside 0..{len(users) - 1}")
        events = pa.table({"user": (user + self.n_traces).astype(np.int32),
                           "t": np.asarray(t, np.int64), "loc": np.asarray(loc, np.int32)})
        table = pa.Table.from_pandas(users.reset_index(drop=True), preserve_index=False)
        if self._events is None:
            self._events = pq.ParquetWriter(self.tmp / "events.parquet", events.schema)
            self._users = pq.ParquetWriter(self.tmp / "users.parquet", table.schema)
        self._events.write_table(events)
        self._users.write_table(table.cast(self._users.schema))
        self.n_traces += len(users)
        self.n_events += int(user.size)

    def _finish(self) -> None:
        if self._events is None:
            raise InputError("no traces to write: the TraceSet is empty")
        self._close_writers()
        pq.write_table(pa.Table.from_pandas(self.space.to_frame(), preserve_index=False),
                       self.tmp / "locations.parquet")
        meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "space": self.space.meta(),
                "time": self.time.meta(), "info": self.info,
                "counts": {"traces": self.n_traces, "events": self.n_events, "locations": self.space.n_locations}}
        if self.ledger is not None:
            meta["ledger"] = self.ledger.to_dict()
        (self.tmp / "meta.json").write_text(json.dumps(meta, indent=2, default=str))

    def _close_writers(self) -> None:
        for writer in (self._events, self._users):
            if writer is not None and writer.is_open:
                writer.close()

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self._finish()
            except BaseException as error:
                self._close_writers()
                self._atomic.__exit__(type(error), error, error.__traceback__)
                raise
        self._close_writers()
        return self._atomic.__exit__(exc_type, exc, tb)


def require_traceset(given, what: str) -> None:
    """An InputError unless ``given`` is a TraceSet: ``what`` needs one, and how to make one of what
    was given instead (movingpandas' trajectories, a frame of points, a folder or file)."""
    if isinstance(given, TraceSet):
        return
    how = ""
    if hasattr(given, "to_point_gdf"):
        how = ("; make trips of movingpandas trajectories with locsynth.trips_from_frame(collection, mode=...) "
               "(each trajectory one trip; mode: walk, bike, car, bus, train, ship or taxi, the movement's public "
               "bounds)")
    elif isinstance(given, pd.DataFrame):
        how = "; make one of a frame of points with locsynth.from_frame(frame) (its columns are found by name)"
    elif isinstance(given, (str, Path)):
        how = ("; load a TraceSet folder with locsynth.TraceSet.load(path), or read a file with pandas and make "
               "one with locsynth.from_frame(frame)")
    raise InputError(f"{what} needs a TraceSet, got {'None' if given is None else type(given).__name__}{how}")


def read_json_meta(path: Path, file: str, format_name: str, version: int, what: str) -> dict:
    """The JSON ``file`` of the directory ``path``, checked to be a ``what`` of ``version``; an
    InputError naming the directory otherwise."""
    if not path.is_dir():
        raise InputError(f"{path} is not a {what} directory (no such directory)")
    if not (path / file).is_file():
        raise InputError(f"{path} is not a {what} directory (no {file})")
    try:
        meta = json.loads((path / file).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path / file} is damaged: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != format_name:
        raise InputError(f"{path / file} does not describe a locsynth {what}")
    if meta.get("format_version") != version:
        raise InputError(f"{path} has {what} format version {meta.get('format_version')!r}; this locsynth reads "
                         f"version {version}")
    return meta


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + l) for each (s, l), without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    ends = np.cumsum(lengths)
    idx = np.ones(total, np.int64)
    nz = lengths > 0
    starts, lengths, ends = starts[nz], lengths[nz], ends[nz]
    idx[0] = starts[0]
    idx[ends[:-1]] = starts[1:] - (starts[:-1] + lengths[:-1] - 1)
    return np.cumsum(idx)


def check_same_frame(reference, other, names: tuple[str, str] = ("reference", "other"), *, time: bool = True,
                     exact: bool = False) -> None:
    """One InputError naming how ``other``'s frame differs from ``reference``'s (TraceSets, or fitted
    models with ``space_`` and ``time_``): the number and kind of locations (``exact``: the whole
    space), and with ``time`` the slots and instants of a day (``exact``: their length too)."""
    def frame(x):
        return (x.space, x.time) if hasattr(x, "space") else (x.space_, x.time_)

    (space_a, time_a), (space_b, time_b) = frame(reference), frame(other)
    ref, oth = names
    if space_b.n_locations != space_a.n_locations or space_b.kind != space_a.kind or \
            (exact and space_b.meta() != space_a.meta()):
        raise InputError(f"the {oth} set has {space_b.n_locations} {space_b.kind} locations "
                         f"{'(' + str(space_b.meta()) + ') ' if exact else ''}but the {ref} set has "
                         f"{space_a.n_locations} {space_a.kind}{' (' + str(space_a.meta()) + ')' if exact else ''}; "
                         f"prepare it with `like`")
    if time and (time_b.n_slots != time_a.n_slots or time_b.instants_per_day != time_a.instants_per_day
                 or (exact and time_b.instant != time_a.instant)):
        raise InputError(f"the {oth} set's time axis ({time_b.describe()}) differs from the {ref} set's "
                         f"({time_a.describe()}); prepare it with `like`")


def sorted_unique(values: np.ndarray, return_counts: bool = False):
    """np.unique for integer keys by sorting (numpy 2's hashing unique is several times slower here)."""
    values = np.sort(values)
    first = np.r_[True, values[1:] != values[:-1]] if values.size else np.zeros(0, bool)
    uniq = values[first]
    if not return_counts:
        return uniq
    return uniq, np.diff(np.r_[np.flatnonzero(first), values.size])


def split_keys(key: np.ndarray, n_i: int, n_j: int):
    """(a, i, j, count) of the distinct keys (a * n_i + i) * n_j + j, by sorting."""
    uniq, count = sorted_unique(key, return_counts=True)
    return uniq // (n_i * n_j), (uniq // n_j) % n_i, uniq % n_j, count


def is_trip_set(traces: TraceSet) -> bool:
    """Whether ``traces`` is a set of trips, one trip per trace: its user table has an ``hour``
    column (data/trips.py gives each real trip its majority hour; a trip synthesizer gives its trips
    their hour, or -1 when it releases none, as NGRAM)."""
    return "hour" in traces.users
