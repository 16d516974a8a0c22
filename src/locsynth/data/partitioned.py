"""Partitioned TraceSets (DESIGN.md, Scale): one set as Parquet partitions, which no process needs to
hold whole.

On disk a partitioned set is a TraceSet directory (``meta.json``, ``locations.parquet``) whose
events and users are in folders, one a partition (``part-00000/events.parquet`` and
``users.parquet``, each partition numbering its traces from 0), listed in ``meta.json``'s
``partitions`` with their counts. :meth:`TraceSet.load` reads such a set whole; this module reads
it partition by partition (:class:`PartitionedTraceSet`) and writes one (:class:`PartitionedWriter`,
:func:`write_partition` on a worker).

A trace is never split across two partitions, and every writer here keeps all the traces of one
user id in one partition (by trips, whose ids are their own; or by hashing the user id), so that a
bound on traces per user (privacy/ledger.py) holds partition by partition.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.errors import InputError
from ..core.files import atomic_output
from ..privacy.ledger import Ledger
from .space import Space
from .timeaxis import TimeAxis
from .traces import FORMAT_NAME, FORMAT_VERSION, UNTIMED, TraceSet, read_json_meta

#: what the properties of a TraceSet that read its ``info`` alone are, on a partitioned set: its own
INFO_PROPERTIES = ("min_cells", "bounds")


def partition_name(i: int) -> str:
    """The folder of partition ``i``."""
    return f"part-{int(i):05d}"


def is_partitioned(path: str | Path) -> bool:
    """Whether ``path`` is a partitioned TraceSet directory (its meta.json lists partitions)."""
    meta = Path(path) / "meta.json"
    try:
        return meta.is_file() and "partitions" in json.loads(meta.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return False


def load_traces(path: str | Path) -> "TraceSet | PartitionedTraceSet":
    """The set at ``path``: a :class:`PartitionedTraceSet` (nothing read but its meta) when it is
    partitioned, else the TraceSet in memory."""
    return PartitionedTraceSet.open(path) if is_partitioned(path) else TraceSet.load(path)


@dataclass(frozen=True, eq=False)
class PartitionedTraceSet:
    """A partitioned set on disk: its frame (space, time axis, info, ledger) and its partitions'
    names and counts; :meth:`partition` reads one as a TraceSet.

    ``exact``: every event has one location; ``timed``: the set's instants are times (what
    :attr:`TraceSet.has_times` says of the whole), both recorded by the writer.
    """

    path: Path
    space: Space
    time: TimeAxis
    info: dict
    ledger: Ledger | None
    parts: tuple
    exact: bool
    timed: bool
    friends = None
    locsets = None

    @classmethod
    def open(cls, path: str | Path) -> "PartitionedTraceSet":
        path = Path(path)
        meta = read_json_meta(path, "meta.json", FORMAT_NAME, FORMAT_VERSION, "TraceSet")
        if "partitions" not in meta:
            raise InputError(f"{path} is a TraceSet in one piece, not a partitioned one: load it with TraceSet.load")
        try:
            locations = pq.read_table(path / "locations.parquet").to_pandas()
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{path / 'locations.parquet'} is missing or damaged: {exc}") from None
        parts = tuple({"name": str(p["name"]), "traces": int(p["traces"]), "events": int(p["events"]),
                       "per_user": int(p.get("per_user", p["traces"]))} for p in meta["partitions"])
        counts = meta.get("counts", {})
        if counts.get("traces") != sum(p["traces"] for p in parts) or \
                counts.get("events") != sum(p["events"] for p in parts):
            raise InputError(f"{path} is damaged: meta.json counts {counts} do not match its partitions")
        return cls(path, Space.from_saved(locations, meta.get("space", {})), TimeAxis.from_meta(meta.get("time", {})),
                   meta.get("info", {}), Ledger.from_dict(meta["ledger"]) if "ledger" in meta else None, parts,
                   bool(meta.get("exact", True)), bool(meta.get("timed", True)))

    # -- shape --------------------------------------------------------------------------------
    @property
    def n_partitions(self) -> int:
        return len(self.parts)

    @property
    def n_traces(self) -> int:
        return sum(p["traces"] for p in self.parts)

    @property
    def n_events(self) -> int:
        return sum(p["events"] for p in self.parts)

    @property
    def sizes(self) -> np.ndarray:
        """Traces of every partition."""
        return np.array([p["traces"] for p in self.parts], np.int64)

    def most_per_user(self) -> int:
        """The most traces one user id has in a partition (so in the set: a writer keeps a user's
        traces in one partition)."""
        return max((p["per_user"] for p in self.parts), default=0)

    @property
    def users(self) -> pd.DataFrame:
        """The user table's columns (no rows: the rows are the partitions')."""
        schema = pq.read_schema(self.path / self.parts[0]["name"] / "users.parquet") if self.parts else pa.schema([])
        return schema.empty_table().to_pandas()

    @property
    def synthetic(self) -> bool:
        return "source" in self.users

    @property
    def has_times(self) -> bool:
        said = self.info.get("times")
        return said not in UNTIMED if said is not None else self.timed

    def frame(self) -> TraceSet:
        """A TraceSet of no traces on this set's frame (space, time axis, info, ledger)."""
        return TraceSet(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int32), self.users, self.space,
                        self.time, dict(self.info), None, self.ledger)

    def __getattr__(self, name: str):
        if name in INFO_PROPERTIES:           # a property of the set's info: the empty frame's
            return getattr(self.frame(), name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def require_exact(self, what: str) -> None:
        """InputError unless every event has one location (TraceSet.require_exact)."""
        if not self.exact:
            raise InputError(f"{what} needs one location per event; this partitioned set has deleted or "
                             f"generalized events (paper 003's obfuscations)")

    # -- reading ------------------------------------------------------------------------------
    def partition(self, i: int, columns: list | None = None) -> TraceSet:
        """Partition ``i`` as a TraceSet on the set's frame (its traces numbered from 0), its user
        table of ``columns`` only where given (those of them it has: a count that reads no id
        reads none)."""
        part = self.parts[int(i)]
        folder = self.path / part["name"]
        try:
            ev = pq.read_table(folder / "events.parquet")
            if columns is not None:
                columns = [c for c in columns if c in pq.read_schema(folder / "users.parquet").names]
            users = pq.read_table(folder / "users.parquet", columns=columns).to_pandas()
        except (OSError, pa.ArrowException) as exc:
            raise InputError(f"{folder} is missing or damaged: {exc}") from None
        if columns == []:                      # no column: as many rows as traces
            users = pd.DataFrame(index=pd.RangeIndex(pq.read_metadata(folder / "users.parquet").num_rows))
        if ev.num_rows != part["events"] or len(users) != part["traces"]:
            raise InputError(f"{folder} is damaged: its files do not hold the {part['traces']} traces and "
                             f"{part['events']} events meta.json lists")
        return TraceSet(ev["user"].to_numpy(), ev["t"].to_numpy(), ev["loc"].to_numpy(), users, self.space, self.time,
                        dict(self.info), None, self.ledger)

    def load(self) -> TraceSet:
        """The whole set in memory."""
        return TraceSet.load(self.path)

    def summary(self) -> dict:
        """Counts for ``locsynth info``."""
        out = {"traces": self.n_traces, "events": self.n_events, "partitions": self.n_partitions,
               "locations": self.space.n_locations, "space": self.space.kind,
               "instants": self.time.instants_per_day, "timezone": self.time.timezone}
        if self.space.kind == "grid":
            out["grid"] = f"{self.space.rows}x{self.space.cols}"
        out.update({k: v for k, v in self.info.items() if k in ("source", "simulated", "dropped")})
        return out

    def __repr__(self) -> str:
        return (f"PartitionedTraceSet({self.path}: {self.n_traces:,} traces, {self.n_events:,} events in "
                f"{self.n_partitions} partitions)")


def write_partition(folder: str | Path, name: str, traces: TraceSet) -> dict:
    """Write ``traces`` as partition ``name`` of the set being written in ``folder`` (a worker may do
    this into the writer's folder, :attr:`PartitionedWriter.tmp`); returns what the writer records
    of it (:meth:`PartitionedWriter.add`)."""
    traces.check()
    out = Path(folder) / name
    out.mkdir(parents=True, exist_ok=False)
    pq.write_table(pa.table({"user": traces.user, "t": traces.t, "loc": traces.loc}), out / "events.parquet")
    pq.write_table(pa.Table.from_pandas(traces.users.reset_index(drop=True), preserve_index=False),
                   out / "users.parquet")
    per_user = int(traces.users["user_id"].value_counts().max()) if traces.n_traces else 0
    return {"name": name, "traces": traces.n_traces, "events": traces.n_events, "per_user": per_user,
            "exact": traces.exact, "timed": traces.has_times}


class PartitionedWriter:
    """Write a partitioned set: partitions appended here (:meth:`append`) or written by workers into
    :attr:`tmp` (:func:`write_partition`, then :meth:`add`). The directory appears (atomically)
    when the writer is closed without error, its partitions in the order of their names::

        with PartitionedWriter(out, space, time, info) as w:
            for part in parts:
                w.append(part)
    """

    def __init__(self, path: str | Path, space: Space, time: TimeAxis, info: dict | None = None,
                 overwrite: bool = False, ledger: Ledger | None = None, inputs=(), mine: bool = False):
        self.space, self.time, self.info, self.ledger = space, time, dict(info or {}), ledger
        self._atomic = atomic_output(Path(path), overwrite, directory=True, inputs=inputs, mine=mine)
        self.written: list[dict] = []

    def __enter__(self) -> "PartitionedWriter":
        self.tmp = self._atomic.__enter__()
        return self

    def append(self, traces: TraceSet) -> None:
        """``traces`` as the next partition (an empty one is left out)."""
        if traces.n_traces:
            self.add(write_partition(self.tmp, partition_name(len(self.written)), traces))

    def add(self, written: dict) -> None:
        self.written.append(dict(written))

    def _finish(self) -> None:
        parts = sorted(self.written, key=lambda p: p["name"])
        if not parts or not sum(p["traces"] for p in parts):
            raise InputError("no traces to write: the TraceSet is empty")
        pq.write_table(pa.Table.from_pandas(self.space.to_frame(), preserve_index=False),
                       self.tmp / "locations.parquet")
        meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "space": self.space.meta(),
                "time": self.time.meta(), "info": self.info,
                "counts": {"traces": sum(p["traces"] for p in parts), "events": sum(p["events"] for p in parts),
                           "locations": self.space.n_locations},
                "partitions": [{k: p[k] for k in ("name", "traces", "events", "per_user")} for p in parts],
                "exact": all(p["exact"] for p in parts), "timed": any(p["timed"] for p in parts)}
        if self.ledger is not None:
            meta["ledger"] = self.ledger.to_dict()
        (self.tmp / "meta.json").write_text(json.dumps(meta, indent=2, default=str))

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self._finish()
            except BaseException as error:
                self._atomic.__exit__(type(error), error, error.__traceback__)
                raise
        return self._atomic.__exit__(exc_type, exc, tb)


def by_user(traces: TraceSet, partitions: int) -> list[np.ndarray]:
    """The user-table rows of each of ``partitions`` parts of ``traces``, every user id's traces in
    one part (the ids hashed, so the same id goes to the same part in every set), rows in order."""
    ids = traces.users["user_id"].astype(str).to_numpy(dtype=object)
    part = pd.util.hash_array(ids) % np.uint64(max(int(partitions), 1))
    return [np.flatnonzero(part == np.uint64(p)) for p in range(max(int(partitions), 1))]


def save_partitioned(traces: TraceSet, path: str | Path, partitions: int, overwrite: bool = False) -> Path:
    """Write ``traces`` as a partitioned set of ``partitions`` parts (:func:`by_user`)."""
    with PartitionedWriter(path, traces.space, traces.time, traces.info, overwrite, traces.ledger) as writer:
        for rows in by_user(traces, partitions):
            writer.append(traces.select_users(rows))
    return Path(path)

