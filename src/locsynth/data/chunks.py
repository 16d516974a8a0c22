"""Counting over a training set, in one piece or by partitions (DESIGN.md, Scale).

A count-based method fits by counting steps, each a pure function from a chunk of traces (a
TraceSet) to arrays that add up (two chunks' counts sum to the counts of both), and noise steps
between them that see only the sums. :func:`chunks` gives a training set as chunks:

- :class:`Whole`, a TraceSet in this process: one chunk, each step run on it once;
- :class:`Partitions`, a partitioned set (data/partitioned.py): each step runs on every partition
  where ``client`` runs it (serially without one, one partition in memory at a time) and the
  results are summed in a tree (core/parallel.tree_sum), so that only the sums reach the process
  that adds the noise. Nothing is kept between steps: a partition is read again by each one.

Either way the sums are the same counts (up to the order of float additions, where a trace's
weight is a fraction). A view (:meth:`Whole.map`) is computed once for a TraceSet, as a fit in one
process computes it, and on each partition as that partition is counted::

    data = chunks(train, client)
    points = data.map(planar_points, xy)            # (x, y, offsets) of every chunk
    density = points.total(level1_density, grid)    # one pass, one sum
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np
import pandas as pd

from ..core import parallel
from .partitioned import INFO_PROPERTIES, PartitionedTraceSet
from .traces import TraceSet, sorted_unique

#: the user table's columns a counting step may read of a partition (the trips' hours: DPT's histogram)
USER_COLUMNS = ("hour",)
#: what a partitioned set answers for the whole, as a TraceSet would (its frame, its recorded counts)
DATA_ATTRIBUTES = ("space", "time", "info", "ledger", "users", "friends", "locsets", "exact", "require_exact",
                   "has_times", "n_events", "synthetic", "n_partitions") + INFO_PROPERTIES


def first_traces(train: TraceSet, k: int) -> TraceSet:
    """``train`` with at most ``k`` traces of each user id, their first ``k`` rows."""
    codes = pd.factorize(train.users["user_id"].to_numpy())[0]
    rank = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    return train if (rank < k).all() else train.select_users(np.flatnonzero(rank < k))


class Whole:
    """A TraceSet in this process as one chunk (module docstring); ``value`` is the TraceSet or a
    view of it, ``sizes`` its number of traces."""

    n_chunks = 1

    def __init__(self, value, sizes=None):
        self.value = value
        self.sizes = np.array([value.n_traces] if sizes is None else sizes, np.int64)

    @property
    def n_traces(self) -> int:
        return int(self.sizes.sum())

    def map(self, fn: Callable, *args) -> "Whole":
        """The view ``fn(chunk, *args)``, computed now."""
        return Whole(fn(self.value, *args), self.sizes)

    def total(self, fn: Callable, *shared, own=None):
        """``fn(chunk, *shared)`` (with ``own``, the chunk's own argument of :meth:`own_rows`, after the chunk)."""
        return fn(self.value, *shared) if own is None else fn(self.value, own[0], *shared)

    def each(self, fn: Callable, *shared) -> list:
        """``[fn(chunk, *shared)]`` for every chunk."""
        return [fn(self.value, *shared)]

    def own_rows(self, rows: np.ndarray, *arrays) -> list:
        """Per chunk, (its rows among ``rows``, sorted row numbers of the whole set's traces, as
        numbers within the chunk, and the entries of each of ``arrays`` that go with them)."""
        return _split(self.sizes, rows, arrays)


class Partitions:
    """A partitioned set as chunks, counted where ``client`` runs them (module docstring); its
    frame and recorded counts answer as a TraceSet's do (:data:`DATA_ATTRIBUTES`). ``bound``: at
    most so many traces of each user id (:func:`first_traces`, partition by partition: a writer keeps
    a user's traces in one partition); ``steps``: the views to compute on each partition."""

    def __init__(self, parts: PartitionedTraceSet, client=None, bound: int | None = None, steps: tuple = (),
                 progress: Callable | None = None, sizes=None):
        self.parts, self.client, self.bound, self.steps, self.progress = parts, client, bound, steps, progress
        self._sizes = None if sizes is None else np.asarray(sizes, np.int64)

    def __getattr__(self, name: str):
        if name in DATA_ATTRIBUTES:
            return getattr(self.parts, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def n_chunks(self) -> int:
        return self.parts.n_partitions

    @property
    def sizes(self) -> np.ndarray:
        """Traces of every partition (a pass over the user tables when a bound drops some)."""
        if self._sizes is None:
            self._sizes = self.parts.sizes if self.bound is None else \
                np.array(Partitions(self.parts, self.client, self.bound).each(_traces), np.int64)
        return self._sizes

    @property
    def n_traces(self) -> int:
        return int(self.sizes.sum())

    def bounded(self, k: int) -> "Partitions":
        """At most ``k`` traces of each user id (:func:`first_traces`; nothing to do where the writer
        recorded no more a user, as for trips, each its own user)."""
        return Partitions(self.parts, self.client, int(k) if self.parts.most_per_user() > k else None, self.steps,
                          self.progress)

    def map(self, fn: Callable, *args) -> "Partitions":
        """The view ``fn(chunk, *args)`` of every partition, computed as it is counted."""
        return Partitions(self.parts, self.client, self.bound, self.steps + ((fn, args),), self.progress,
                          self._sizes)

    def total(self, fn: Callable, *shared, own=None):
        """``fn(partition, *shared)`` summed over the partitions (``own``: each partition's own
        argument, from :meth:`own_rows`, passed after the partition)."""
        items = range(self.n_chunks) if own is None else list(zip(range(self.n_chunks), own))
        return parallel.tree_sum(self.client, _counted, items, self.parts, self.bound, self.steps, fn, *shared,
                                 progress=self._progress(fn))

    def each(self, fn: Callable, *shared) -> list:
        """``[fn(partition, *shared)]`` for every partition, in order."""
        return parallel.map_chunks(self.client, _counted, range(self.n_chunks), self.parts, self.bound, self.steps,
                                   fn, *shared, progress=self._progress(fn))

    def own_rows(self, rows: np.ndarray, *arrays) -> list:
        return _split(self.sizes, rows, arrays)

    def _progress(self, fn: Callable):
        if self.progress is None:
            return None
        step = fn.args[0] if isinstance(fn, partial) else fn          # spread(step)
        what = f"counting by partitions: {step.__name__.strip('_').replace('_', ' ')}"
        return lambda done, total: self.progress(done, total, what)


def chunks(train, client=None) -> Whole | Partitions:
    """``train`` as chunks: a TraceSet one :class:`Whole`, a partitioned set its :class:`Partitions`
    counted on ``client``; chunks as they are."""
    if isinstance(train, (Whole, Partitions)):
        return train
    if isinstance(train, PartitionedTraceSet):
        return Partitions(train, client)
    return Whole(train)


def bounded(train, k: int):
    """``train`` with at most ``k`` traces of each user id: a TraceSet's first ``k`` rows of each
    (:func:`first_traces`), a partitioned set's partition by partition."""
    return train.bounded(k) if isinstance(train, Partitions) else first_traces(train, k)


def _traces(chunk: TraceSet) -> int:
    return chunk.n_traces


def _counted(item, parts: PartitionedTraceSet, bound, steps, fn: Callable, *shared):
    """``fn`` on partition ``item`` (or ``(partition, own)``), read, bounded and viewed (runs on a worker)."""
    i, own = item if isinstance(item, tuple) else (item, None)
    drops = bound is not None and parts.parts[i]["per_user"] > bound
    # the ids only where the bound drops traces: a count reads the trips' hours at most
    value = parts.partition(i, columns=list(USER_COLUMNS) + (["user_id"] if drops else []))
    if drops:
        value = first_traces(value, bound)
    for step, args in steps:
        value = step(value, *args)
    return fn(value, *shared) if own is None else fn(value, own, *shared)


def _split(sizes: np.ndarray, rows: np.ndarray, arrays) -> list:
    """Per chunk of ``sizes`` traces: (the chunk's rows among the sorted global ``rows``, within the
    chunk, and each of ``arrays``' entries of those rows)."""
    rows = np.asarray(rows, np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    at = np.searchsorted(rows, offsets)
    return [(rows[lo:hi] - offsets[c], *(np.asarray(a)[lo:hi] for a in arrays))
            for c, (lo, hi) in enumerate(zip(at[:-1], at[1:]))]


class SparseCounts:
    """Counts of few of many keys, as a chunk's part of a large histogram: the sorted distinct
    ``keys`` (int64) and their ``counts`` (int64), of ``size`` keys in all. Two add up key by key
    (core/parallel.add); :meth:`dense` is the histogram."""

    def __init__(self, keys: np.ndarray, counts: np.ndarray, size: int):
        self.keys, self.counts, self.size = keys, counts, int(size)

    @classmethod
    def of(cls, keys: np.ndarray, size: int) -> "SparseCounts":
        """How often each key occurs in ``keys`` (values in 0 .. size - 1)."""
        uniq, counts = sorted_unique(np.asarray(keys, np.int64), return_counts=True)
        return cls(uniq, counts.astype(np.int64), size)

    def __add__(self, other: "SparseCounts") -> "SparseCounts":
        keys = np.concatenate([self.keys, other.keys])
        counts = np.concatenate([self.counts, other.counts])
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if keys.size else np.zeros(0, np.int64)
        return SparseCounts(keys[first], np.add.reduceat(counts, first) if keys.size else counts,
                            max(self.size, other.size))

    def dense(self) -> np.ndarray:
        """The histogram of all ``size`` keys (int64)."""
        out = np.zeros(self.size, np.int64)
        out[self.keys] = self.counts
        return out


def spread(fn: Callable) -> Callable:
    """``fn`` on a view that is a tuple: ``spread(fn)(view, *args)`` is ``fn(*view, *args)``
    (picklable, for a worker: ``points.total(spread(first_order), indptr, indices)``)."""
    return partial(_spread, fn)


def _spread(fn: Callable, view: tuple, *args):
    return fn(*view, *args)


#: the seeded stream of :func:`sample_traces`
SAMPLE_STREAM = 5656


def sample_traces(train, n: int, seed: int = 0, client=None, stream: int = 0) -> TraceSet:
    """A uniform sample of ``n`` of the traces of ``train`` (a TraceSet or a partitioned set; all of
    them when it holds no more), without replacement, in the set's order, drawn from ``seed`` and
    ``stream`` alone: the same traces whatever the partitions and the workers. Partition by
    partition, each sends back its own sampled traces only."""
    data = chunks(train, client)
    total = data.n_traces
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(SAMPLE_STREAM, int(stream))))
    rows = np.arange(total) if n >= total else np.sort(rng.choice(total, int(n), replace=False))
    if isinstance(data, Whole):
        return data.value.select_users(rows)
    own = data.own_rows(rows)
    pieces = parallel.map_chunks(client, _selected, list(zip(range(data.n_chunks), own)), data.parts, data.bound)
    return concatenated(pieces, data.parts.info, data.parts.ledger)


def _selected(item, parts: PartitionedTraceSet, bound) -> TraceSet:
    i, (rows,) = item
    value = parts.partition(i)
    if bound is not None:
        value = first_traces(value, bound)
    return value.select_users(rows)


def concatenated(pieces: list, info: dict | None = None, ledger=None) -> TraceSet:
    """Traces of one frame, one set after the other, as one TraceSet (``info`` and ``ledger``: the
    whole's; the first piece's by default)."""
    first = pieces[0]
    before = np.concatenate([[0], np.cumsum([p.n_traces for p in pieces])])
    user = np.concatenate([p.user.astype(np.int64) + b for p, b in zip(pieces, before)])
    users = pd.concat([p.users for p in pieces], ignore_index=True)
    return TraceSet(user, np.concatenate([p.t for p in pieces]), np.concatenate([p.loc for p in pieces]), users,
                    first.space, first.time, dict(first.info if info is None else info), None,
                    first.ledger if ledger is None else ledger)
